"""Benchmark devutils.text where it is hardest: many keys, case folding, whole words, memory.

Run from the repository root after ``python3 -m pip install -e . --group bench``::

    python3 bench/bench_text_edges.py
    python3 bench/bench_text_edges.py --against HEAD --rounds 5
    python3 bench/bench_text_edges.py --against ../old-checkout/.venv/bin/python

Every measurement runs in a fresh interpreter, so that its peak RSS (VmHWM) is its own.
``--against`` names another devutils: a git revision of this repository (its package is
copied with ``git show`` into a temporary folder and imported from there, by this
interpreter) or a second interpreter with another devutils installed. Each case then
runs on both, taking turns, *rounds* times, and the table shows the medians' ratio.
Only public names are used, so any devutils version with ``Replacer`` can be compared.

Four parts:

1. Throughput in MB/s (median of 5) with default options, ``ignore_case`` and
   ``whole_words``, at 100, 10,000 and 100,000 keys, on English and Japanese text.
2. The cost of a few length-changing case foldings: 1 MB of English, 10,000 keys,
   ``ignore_case``, as it is and with one ``ß`` and one ``ﬁ`` in every 100 kB.
3. Peak memory: 10 MB of English with 100,000 keys, default options.
4. Per call on a short string: the two-key Japanese sentence, through a built
   ``Replacer`` and through ``multi_replace``.

Parts 2 and 3 run with two key sets (`KEYSETS`).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CORPUS = Path(os.environ.get("DEVUTILS_CORPUS", BENCH.parent.parent / "shared" / "corpus"))
CORPORA = {
    "English": CORPUS / "tinyshakespeare.txt",
    "Japanese": CORPUS / "wagahai_wa_neko_de_aru.txt",
}

KEYSETS = ["drawn", "words"]
"""``drawn``: words, phrases and prefixes drawn from the text (bench_text.py's keys);
``words``: the text's words, most frequent first (then drawn phrases): a glossary, a
match every few characters."""

CHILD = r"""
import collections, hashlib, json, re, statistics, sys, time, timeit
if PACKAGE:
    sys.path.insert(0, PACKAGE)
sys.path.insert(0, BENCH)
from bench_text import draw_keys
import devutils.text
from devutils.text import Replacer, multi_replace

if CASE.get("per_call"):  # part 4: seconds per call, the median of 7 bests of 5
    small = {"ストロベリー": "strawberry", "パイナップル": "pineapple"}
    sentence = "ストロベリーパフェとパイナップルジュース"
    replacer = Replacer(small)
    call = {
        "Replacer": lambda: replacer.replace(sentence),
        "multi_replace": lambda: multi_replace(sentence, small),
    }[CASE["per_call"]]
    loops = 20_000
    bests = [min(timeit.repeat(call, number=loops, repeat=5)) / loops for _ in range(7)]
    print(json.dumps({
        "seconds": statistics.median(bests),
        "module": devutils.text.__file__,
        "sha": hashlib.sha256(call().encode()).hexdigest()[:12],
    }))
    sys.exit()

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0

corpus = open(CASE["corpus"], encoding="utf-8").read()
mapping = draw_keys(corpus, CASE["keys"])
if CASE["keyset"] == "words":  # every word of the text first, most frequent first
    counts = collections.Counter(re.findall(r"\w+", corpus))
    words = [word for word, _ in counts.most_common(CASE["keys"])]
    words += [key for key in mapping if key not in counts][: CASE["keys"] - len(words)]
    mapping = {word: f"<{i}>" for i, word in enumerate(words)}
if CASE["options"].get("ignore_case"):  # keys equal under folding would conflict
    folded = {key.casefold(): key for key in reversed(list(mapping))}
    mapping = {key: mapping[key] for key in folded.values()}
text = (corpus * (CASE["chars"] // len(corpus) + 1))[: CASE["chars"]]
if CASE["special_every"]:
    step = CASE["special_every"]
    text = "".join(
        text[i : i + step] + " Stra\u00dfe \ufb01nd" for i in range(0, len(text), step)
    )
del corpus
setup = hwm()
replacer = Replacer(mapping, **CASE["options"])
replacer("warm up")
times = []
for _ in range(CASE["repeats"]):
    start = time.perf_counter()
    out = replacer.replace(text)
    times.append(time.perf_counter() - start)
print(json.dumps({
    "seconds": statistics.median(times),
    "mb": len(text.encode()) / 1e6,
    "setup_mib": setup / 2**20,
    "peak_mib": hwm() / 2**20,
    "module": devutils.text.__file__,
    "sha": hashlib.sha256(out.encode("utf-8", "surrogatepass")).hexdigest()[:12],
}))
"""


class Version(NamedTuple):
    """A devutils to measure: *python* imports it, from *package* (a folder) if given."""

    python: str
    package: str | None = None

    def __str__(self) -> str:
        return self.python if self.package is None else f"{self.python} with {self.package}"


def version_of(against: str) -> Version:
    """*against* as a `Version`: an interpreter, or a git revision of this repository,
    whose ``devutils/*.py`` are copied into a temporary folder (``git show``)."""
    if os.access(against, os.X_OK) and Path(against).is_file():
        return Version(against)
    folder = Path(tempfile.mkdtemp(prefix="devutils-bench-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "devutils").mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout

    for name in git("ls-tree", "--name-only", f"{against}:devutils").split():
        if name.endswith(".py"):
            source = git("show", f"{against}:devutils/{name}")
            (folder / "devutils" / name).write_text(source, encoding="utf-8")
    return Version(sys.executable, str(folder))


def run_case(version: Version, case: dict[str, object]) -> dict[str, object]:
    code = (
        f"import json\nBENCH = {str(BENCH)!r}\nPACKAGE = {version.package!r}\n"
        f"CASE = json.loads({json.dumps(case)!r})\n" + CHILD
    )
    # -P and a neutral working directory: the devutils imported is the one installed
    # for the interpreter (or the copied package), never a checkout that happens to be
    # the current directory.
    done = subprocess.run(
        [version.python, "-P", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
        cwd=tempfile.gettempdir(),
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return dict(json.loads(done.stdout))


def measure(
    versions: list[Version], case: dict[str, object], rounds: int
) -> list[dict[str, object]]:
    """Run *case* on every version, *rounds* times, taking turns; keep each one's median."""
    runs: list[list[dict[str, object]]] = [[] for _ in versions]
    for round_ in range(rounds):
        order = range(len(versions)) if round_ % 2 == 0 else reversed(range(len(versions)))
        for index in order:
            runs[index].append(run_case(versions[index], case))
    best = []
    for results in runs:
        good = [r for r in results if "error" not in r]
        if not good:
            best.append(results[0])
            continue
        seconds = statistics.median(float(r["seconds"]) for r in good)  # type: ignore[arg-type]
        best.append(good[0] | {"seconds": seconds})
    return best


def show(label: str, results: list[dict[str, object]], unit: str = "speed") -> str:
    cells = []
    for result in results:
        if "error" in result:
            cells.append(f"{'error':>22}")
        elif unit == "speed":
            speed = float(result["mb"]) / float(result["seconds"])  # type: ignore[arg-type]
            cells.append(f"{speed:8.2f} MB/s {result['sha']}")
        elif unit == "ns":
            nanoseconds = float(result["seconds"]) * 1e9  # type: ignore[arg-type]
            cells.append(f"{nanoseconds:8.0f} ns   {result['sha']}")
        else:
            cells.append(
                f"{float(result['seconds']):6.3f} s {float(result['peak_mib']):6.0f} MiB"  # type: ignore[arg-type]
            )
    line = f"  {label:34}" + "  ".join(cells)
    if len(results) == 2 and all("error" not in r for r in results):
        ratio = float(results[1]["seconds"]) / float(results[0]["seconds"])  # type: ignore[arg-type]
        same = "same output" if results[0]["sha"] == results[1]["sha"] else "outputs differ"
        line += f"   {ratio:5.2f}x the other's speed, {same}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", help="another devutils: a git revision (HEAD) or a Python with one installed"
    )
    parser.add_argument("--rounds", type=int, default=2, help="runs per case and version")
    parser.add_argument("--parts", default="1234", help="the parts to run (default: 1234)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    versions = [Version(sys.executable)] + ([version_of(args.against)] if args.against else [])
    print(f"median of 5 replaces, {args.rounds} runs each; devutils.text from:")
    probe = {"corpus": str(CORPORA["English"]), "keys": 10, "options": {}, "chars": 10}
    probe |= {"special_every": 0, "keyset": "drawn", "repeats": 1}
    for version in versions:
        print(f"  {version}: {run_case(version, probe).get('module', 'error')}")
    report: list[dict[str, object]] = []
    if "1" in args.parts:
        throughput(versions, args.rounds, report)
    if "2" in args.parts:
        foldings(versions, args.rounds, report)
    if "3" in args.parts:
        peak_memory(versions, args.rounds, report)
    if "4" in args.parts:
        print("\n4. Per call: the two-key Japanese sentence (median of 7 bests of 5)")
        for name in ["Replacer", "multi_replace"]:
            case: dict[str, object] = {"per_call": name}
            results = measure(versions, case, args.rounds)
            print(show(name, results, unit="ns"), flush=True)
            report.append({"case": case, "results": results})
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


def throughput(versions: list[Version], rounds: int, report: list[dict[str, object]]) -> None:

    print("\n1. Throughput, whole corpus (about 1 MB)")
    for corpus, path in CORPORA.items():
        for option in ["", "ignore_case", "whole_words"]:
            for keys in [100, 10_000, 100_000]:
                case = {
                    "corpus": str(path),
                    "keys": keys,
                    "options": {option: True} if option else {},
                    "chars": len(path.read_text(encoding="utf-8")),
                    "special_every": 0,
                    "keyset": "drawn",
                    "repeats": 5,
                }
                results = measure(versions, case, rounds)
                label = f"{corpus}, {keys:,} keys{', ' + option if option else ''}"
                print(show(label, results), flush=True)
                report.append({"case": case, "results": results})


def foldings(versions: list[Version], rounds: int, report: list[dict[str, object]]) -> None:
    print("\n2. One length-changing folding (ß, ﬁ) per 100 kB: 1 MB English, 10,000 keys")
    english = str(CORPORA["English"])
    for keyset in KEYSETS:
        for every in [0, 100_000]:
            case = {
                "corpus": english,
                "keys": 10_000,
                "options": {"ignore_case": True},
                "chars": 1_000_000,
                "special_every": every,
                "keyset": keyset,
                "repeats": 5,
            }
            results = measure(versions, case, rounds)
            label = f"{keyset} keys, {'with ß and ﬁ' if every else 'without'}"
            print(show(f"ignore_case, {label}", results, unit="memory"), flush=True)
            report.append({"case": case, "results": results})


def peak_memory(versions: list[Version], rounds: int, report: list[dict[str, object]]) -> None:
    print("\n3. Peak memory: 10 MB English, 100,000 keys, default options")
    english = str(CORPORA["English"])
    for keyset in KEYSETS:
        case = {
            "corpus": english,
            "keys": 100_000,
            "options": {},
            "chars": 10_000_000,
            "special_every": 0,
            "keyset": keyset,
            "repeats": 1,
        }
        results = measure(versions, case, rounds)
        print(show(f"{keyset} keys", results, unit="memory"))
        for version, result in zip(versions, results, strict=True):
            if "error" not in result:
                setup = float(result["setup_mib"])  # type: ignore[arg-type]
                print(f"    {version}: {setup:.0f} MiB before Replacer")
        report.append({"case": case, "results": results})


if __name__ == "__main__":
    for where in CORPORA.values():
        if not where.is_file():
            sys.exit(
                f"{Path(__file__).name}: no corpus at {where}: put ../shared/corpus/ beside"
                " the checkout or set DEVUTILS_CORPUS to its folder (README.md, Documentation)"
            )
    sys.exit(main())
