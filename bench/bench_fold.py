"""Benchmark what a few ``ß`` cost ``Replacer(mapping, ignore_case=True)`` (issue #31).

Run from the repository root after ``python3 -m pip install -e . --group dev``::

    python3 bench/bench_fold.py                    # this tree against HEAD
    python3 bench/bench_fold.py --against main~3 --rounds 7
    python3 bench/bench_fold.py --quick            # one round: a smoke test
    python3 bench/bench_fold.py --revision HEAD    # HEAD against HEAD: the noise

The text is the English corpus (``../shared/corpus/tinyshakespeare.txt``) three times,
about 3.3 MB; "with ß" is the same text with one character in every 100,000 replaced by
``ß`` (``--char`` places another, ``ﬁ`` or ``İ``; ``--every`` sets how often, 100 for a
German-like text), so both have the same length. The keys are words of the corpus, drawn at random
(seeded) and distinct under case folding, a quarter of them with an ``ss`` that a ``ß``
can match, each mapped to ``<i>``: 3, 16, 100, 1,000 and 10,000 of them.

Two versions of devutils are measured in one run: this tree, and ``--against``, a git
revision (default ``HEAD``) whose ``devutils/`` is extracted with ``git archive`` into a
temporary folder, removed at exit; ``--revision`` measures another revision instead of
this tree. Every measurement is a fresh interpreter that imports one version
(``PYTHONPATH``), builds the Replacer, replaces a short text with ``ß`` once (so that
whatever a Replacer builds when it first meets one is not counted), then:

* peak memory: the growth of the resident set (RSS) during one ``replace(text)``: its
  peak (``VmHWM``, reset just before through ``/proc/self/clear_refs``) less its size
  before. RSS sees the Rust automaton's memory, which tracemalloc would not; and each
  text has its own process, so the peak of one cannot hide the other's.
* time: the best of ``--repeats`` calls of ``replace(text)``.

The versions take turns, *rounds* times, and each cell is the median over the rounds.
The outputs of the two versions are compared (by hash) too. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CORPUS = (
    Path(os.environ.get("DEVUTILS_CORPUS", ROOT.parent / "shared" / "corpus"))
    / "tinyshakespeare.txt"
)
KEY_COUNTS = [3, 16, 100, 1_000, 10_000]
EVERY = 100_000
"""One character in this many becomes ``ß``."""

WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bench_fold import work
print(json.dumps(work(**json.loads(sys.argv[2]))))
"""
"""A measurement's interpreter: `work` from this file, with its devutils from PYTHONPATH."""


# -- the inputs -----------------------------------------------------------------------------


def glossary(corpus: str, count: int) -> dict[str, str]:
    """*count* words of *corpus*, distinct under case folding, each mapped to ``<i>``:
    a quarter (at least one) with an ``ss``, in the spelling the text last gives them
    (``less``, ``Messenger``, ``KING``)."""
    spelling = {word.casefold(): word for word in re.findall(r"[^\W\d_]+", corpus)}
    words = sorted(spelling.values())
    random.Random(31).shuffle(words)
    with_ss = [word for word in words if "ss" in word.casefold()]
    others = [word for word in words if "ss" not in word.casefold()]
    take = min(len(with_ss), max(1, count // 4))
    keys = with_ss[:take] + others[: count - take]
    return {key: f"<{i}>" for i, key in enumerate(keys)}


def text_of(corpus: str, char: str = "", every: int = EVERY) -> str:
    """The corpus three times; with *char*, one character in every *every* is *char*."""
    text = corpus * 3
    if not char:
        return text
    chars = list(text)
    for position in range(every // 2, len(chars), every):
        chars[position] = char
    return "".join(chars)


# -- one measurement, in its own interpreter --------------------------------------------------


def resident(field: str) -> int:
    """This process's ``VmRSS`` or ``VmHWM`` (its peak) in bytes, from /proc/self/status."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    msg = f"no {field} in /proc/self/status"
    raise OSError(msg)


class Result(NamedTuple):
    """What one measurement gives."""

    seconds: float
    peak_bytes: int
    sha: str
    """The start of the output's SHA-256, to compare the versions' outputs."""
    module: str
    """Where the devutils.text measured was imported from."""


def work(keys: int, char: str, every: int, repeats: int) -> dict[str, object]:
    """Build the Replacer of *keys* keys and measure it on the text (see the docstring)."""
    import devutils.text
    from devutils.text import Replacer

    corpus = CORPUS.read_text(encoding="utf-8")
    mapping = glossary(corpus, keys)
    text = text_of(corpus, char, every)
    del corpus
    replacer = Replacer(mapping, ignore_case=True)
    replacer.replace("Warm up in the Straße.")
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")  # VmHWM := VmRSS
    before = resident("VmRSS")
    out = replacer.replace(text)
    peak = resident("VmHWM") - before
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        replacer.replace(text)
        seconds.append(time.perf_counter() - start)
    sha = hashlib.sha256(out.encode()).hexdigest()[:12]
    return Result(min(seconds), peak, sha, devutils.text.__file__)._asdict()


# -- the versions ---------------------------------------------------------------------------


class Version(NamedTuple):
    """A devutils to measure: its name in the table, and the folder that holds it."""

    label: str
    folder: Path


def extracted(revision: str) -> Version:
    """*revision*'s ``devutils/``, extracted with ``git archive`` into a temporary folder
    that is removed at exit."""

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True).stdout

    commit = git("rev-parse", "--short", f"{revision}^{{commit}}").decode().strip()
    folder = Path(tempfile.mkdtemp(prefix="devutils-bench-fold-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(git("archive", revision, "devutils"))) as archive:
        archive.extractall(folder, filter="data")
    return Version(revision if commit.startswith(revision) else f"{revision} ({commit})", folder)


def measure(version: Version, keys: int, char: str, every: int, repeats: int) -> Result:
    """Run `work` in a fresh interpreter that imports *version*'s devutils."""
    case = json.dumps({"keys": keys, "char": char, "every": every, "repeats": repeats})
    # -P and a neutral working directory: only PYTHONPATH says which devutils is imported.
    done = subprocess.run(
        [sys.executable, "-P", "-c", WORKER, str(BENCH), case],
        capture_output=True,
        text=True,
        check=False,
        cwd=tempfile.gettempdir(),
        env=os.environ | {"PYTHONPATH": str(version.folder)},
    )
    if done.returncode != 0:
        sys.exit(f"{version.label}, {keys} keys, char={char!r}:\n{done.stderr}")
    return Result(**json.loads(done.stdout))


# -- the tables -----------------------------------------------------------------------------


def table(
    title: str,
    versions: list[Version],
    cells: dict[tuple[int, int, str], float],
    unit: str,
    char: str,
) -> None:
    """Print one markdown table: per key count, each version's without, with and ratio."""

    def shown(value: float) -> str:
        return f"{value * 1e3:.1f} ms" if unit == "s" else f"{value / 2**20:.1f} MiB"

    print(f"\n{title}\n")
    header = "| keys |"
    for version in versions:
        header += f" {version.label}: without {char} | with {char} | ratio |"
    print(header)
    print("|---:|" + "---:|---:|---:|" * len(versions))
    for keys in KEY_COUNTS:
        row = f"| {keys:,} |"
        for index in range(len(versions)):
            without, with_ = cells[index, keys, ""], cells[index, keys, char]
            ratio = f"{with_ / without:.2f}x" if without > 0 else "-"
            row += f" {shown(without)} | {shown(with_)} | {ratio} |"
        print(row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", default="HEAD", help="the git revision to compare with (default: HEAD)"
    )
    parser.add_argument(
        "--revision", help="measure this git revision instead of the tree (--revision HEAD: noise)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="turns of each version")
    parser.add_argument("--repeats", type=int, default=5, help="timed replaces per turn")
    parser.add_argument("--quick", action="store_true", help="one round, one timed replace")
    parser.add_argument(
        "--char", default="ß", help="the character placed in the text (default: ß; try ﬁ, İ)"
    )
    parser.add_argument(
        "--every", type=int, default=EVERY, help=f"place it every N characters (default: {EVERY})"
    )
    args = parser.parse_args()
    rounds, repeats = (1, 1) if args.quick else (args.rounds, args.repeats)
    ours = Version("this tree", ROOT) if args.revision is None else extracted(args.revision)
    versions = [ours, extracted(args.against)]

    corpus = CORPUS.read_text(encoding="utf-8")
    char = args.char
    print(f"{len(text_of(corpus)):,} characters, one {char} in every {args.every:,}")
    print("keys:", ", ".join(glossary(corpus, 16)), "...")
    runs: dict[tuple[int, int, str], list[Result]] = {}
    for round_ in range(rounds):
        order = list(range(len(versions)))
        if round_ % 2:  # taking turns: ABBA
            order.reverse()
        for keys in KEY_COUNTS:
            for placed in ("", char):
                for index in order:
                    result = measure(versions[index], keys, placed, args.every, repeats)
                    runs.setdefault((index, keys, placed), []).append(result)
        print(f"round {round_ + 1} of {rounds} done", file=sys.stderr, flush=True)

    for index, version in enumerate(versions):
        print(f"{version.label}: {runs[index, KEY_COUNTS[0], ''][0].module}")

    seconds = {
        case: statistics.median(r.seconds for r in results) for case, results in runs.items()
    }
    peaks = {
        case: statistics.median(r.peak_bytes for r in results) for case, results in runs.items()
    }
    title = f"Time: best of {repeats} replaces, median of {rounds} rounds"
    table(title, versions, seconds, "s", char)
    title = f"Peak memory: RSS growth during one replace, median of {rounds} rounds"
    table(title, versions, peaks, "bytes", char)
    differ = [
        f"{keys:,} keys {'with' if placed else 'without'} {char}"
        for keys in KEY_COUNTS
        for placed in ("", char)
        if len({r.sha for i in range(len(versions)) for r in runs[i, keys, placed]}) > 1
    ]
    print("\noutputs:", "differ for " + ", ".join(differ) if differ else "the same")
    return 1 if differ else 0


if __name__ == "__main__":
    for where in [CORPUS]:
        if not where.is_file():
            sys.exit(
                f"{Path(__file__).name}: no corpus at {where}: put ../shared/corpus/ beside"
                " the checkout or set DEVUTILS_CORPUS to its folder (README.md, Documentation)"
            )
    sys.exit(main())
