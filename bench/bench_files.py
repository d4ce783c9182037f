"""Benchmark ``devutils replace --in-place`` against sed and perl, and its peak memory.

Run from the repository root after ``python3 -m pip install -e .``::

    python3 bench/bench_files.py            # large file, tree of small files, 1 GiB RSS
    python3 bench/bench_files.py --no-gib   # skip the 1 GiB file

Each timing is the median of three runs of the whole command (process start included) on a
fresh copy of the input; every tool's output is compared with devutils' and a mismatch is
reported. Peak RSS comes from ``getrusage(RUSAGE_CHILDREN)``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (
    Path(os.environ.get("DEVUTILS_CORPUS", ROOT.parent / "shared" / "corpus"))
    / "tinyshakespeare.txt"
)
SMALL = {"thou": "you", "thee": "you", "thy": "your", "hath": "has", "doth": "does"}


def big_keys(text: str, count: int) -> dict[str, str]:
    """*count* distinct words of the text (no key is a substring of another's value)."""
    words = sorted(set(re.findall(r"[A-Za-z]{4,}", text)))
    random.Random(0).shuffle(words)
    return {word: word.upper() for word in words[:count]}


def devutils_cmd(mapping: dict[str, str], files: list[Path], extra: list[str]) -> list[str]:
    map_file = Path(tempfile.gettempdir()) / "devutils-bench-map.tsv"
    map_file.write_text("".join(f"{k}\t{v}\n" for k, v in mapping.items()), encoding="utf-8")
    return [
        sys.executable,
        "-m",
        "devutils",
        "replace",
        "--whole-words",
        "--map",
        str(map_file),
        "--in-place",
        *extra,
        *map(str, files),
    ]


def sed_cmd(mapping: dict[str, str], files: list[Path]) -> list[str]:
    expressions = [arg for k, v in mapping.items() for arg in ("-e", rf"s/\b{k}\b/{v}/g")]
    return ["sed", "-i", *expressions, *map(str, files)]


def perl_cmd(mapping: dict[str, str], files: list[Path]) -> list[str]:
    pairs = ",".join(f"'{k}'=>'{v}'" for k, v in mapping.items())
    keys = "|".join(sorted(mapping, key=len, reverse=True))
    script = Path(tempfile.gettempdir()) / "devutils-bench.pl"
    script.write_text(f"BEGIN{{%h=({pairs})}} s/\\b({keys})\\b/$h{{$1}}/g;\n", encoding="utf-8")
    return ["perl", "-pi", str(script), *map(str, files)]


def timed(command: list[str], restore: list[tuple[Path, bytes]]) -> float:
    times = []
    for _ in range(3):
        for path, data in restore:
            path.write_bytes(data)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(
    name: str,
    command: list[str],
    restore: list[tuple[Path, bytes]],
    expected: list[bytes],
    megabytes: float,
) -> None:
    seconds = timed(command, restore)
    same = [path.read_bytes() for path, _ in restore] == expected
    verdict = (
        f"{megabytes / seconds:8.1f} MB/s ({seconds:.2f} s)" if same else "mismatch with devutils"
    )
    print(f"  {name:28} {verdict}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-gib", action="store_true", help="skip the 1 GiB peak-memory run")
    args = parser.parse_args()
    text = CORPUS.read_text(encoding="utf-8")
    work = Path(tempfile.mkdtemp(prefix="devutils-bench-"))
    try:
        large = work / "large.txt"
        data = (text * 45).encode()  # about 50 MB
        megabytes = len(data) / 1e6
        for label, mapping in [("5 keys", SMALL), ("10,000 keys", big_keys(text, 10_000))]:
            print(f"\nOne {megabytes:.0f} MB file, {label}, whole words, in place")
            restore = [(large, data)]
            ours = devutils_cmd(mapping, [large], [])
            timed(ours, restore)
            expected = [large.read_bytes()]
            compare("devutils replace", ours, restore, expected, megabytes)
            if len(mapping) <= 100:
                compare(
                    "sed -i -e ... -e ...", sed_cmd(mapping, [large]), restore, expected, megabytes
                )
            else:
                print(f"  {'sed -i -e ... -e ...':28} skipped (one pass per key)")
            compare(
                "perl -pi (hash + alternation)",
                perl_cmd(mapping, [large]),
                restore,
                expected,
                megabytes,
            )

        tree = work / "tree"
        tree.mkdir()
        files = []
        rng = random.Random(1)
        for i in range(2000):
            start = rng.randrange(len(text) - 6000)
            path = tree / f"f{i:04d}.txt"
            files.append((path, text[start : start + 5000].encode()))
        total = sum(len(d) for _, d in files) / 1e6
        paths = [p for p, _ in files]
        print(f"\nA tree of {len(files)} files ({total:.0f} MB), 5 keys, whole words, in place")
        for jobs in ("1", "2"):
            ours = devutils_cmd(SMALL, paths, ["--jobs", jobs])
            timed(ours, files)
            expected = [p.read_bytes() for p in paths]
            compare(f"devutils replace --jobs {jobs}", ours, files, expected, total)
        compare("sed -i -e ... -e ...", sed_cmd(SMALL, paths), files, expected, total)
        compare("perl -pi (hash + alternation)", perl_cmd(SMALL, paths), files, expected, total)

        if not args.no_gib:
            gib = work / "gib.txt"
            block = (text * 10).encode()
            with gib.open("wb") as handle:
                written = 0
                while written < 1 << 30:
                    handle.write(block)
                    written += len(block)
            size = gib.stat().st_size / 2**30
            print(f"\nPeak memory, one {size:.2f} GiB file, 5 keys, in place")
            # A fresh parent, so that earlier children do not count towards the peak.
            probe = (
                "import resource, subprocess, sys, time; t = time.perf_counter(); "
                "subprocess.run(sys.argv[1:], check=True); "
                "print(time.perf_counter() - t, "
                "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
            )
            out = subprocess.run(
                [sys.executable, "-c", probe, *devutils_cmd(SMALL, [gib], [])],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            seconds, peak = float(out[0]), int(out[1]) / 1024
            print(
                f"  devutils replace: peak RSS {peak:.0f} MiB, {gib.stat().st_size / 1e6 / seconds:.1f} MB/s"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    for where in [CORPUS]:
        if not where.is_file():
            sys.exit(
                f"{Path(__file__).name}: no corpus at {where}: put ../shared/corpus/ beside"
                " the checkout or set DEVUTILS_CORPUS to its folder (README.md, Documentation)"
            )
    sys.exit(main())
