"""Benchmark devutils.text against the alternatives, on real English and Japanese text.

Run from the repository root after ``python3 -m pip install -e . --group bench``::

    python3 bench/bench_text.py                 # everything (several minutes on 2 cores)
    python3 bench/bench_text.py --quick         # fewer key counts and repeats

For each corpus and key count it draws keys from the text (words and phrases, many of
them prefixes of others), checks every engine's output against a simple leftmost-longest
reference (a mismatch is reported instead of a time), then reports the median throughput
of several repeats in MB/s of UTF-8 input. Engines too slow to run on the whole corpus are
timed on a prefix of it (marked with ``*``). It also reports build time and memory for
100,000 keys and the two-key Japanese example against a precompiled ``re.sub``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from devutils.text import Replacer, is_word_char, multi_replace

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("DEVUTILS_CORPUS", ROOT.parent / "shared" / "corpus"))
CORPORA = {
    "English": CORPUS / "tinyshakespeare.txt",
    "Japanese": CORPUS / "wagahai_wa_neko_de_aru.txt",
}
Engine = Callable[[str], str]


# -- keys ---------------------------------------------------------------------------------


def draw_keys(text: str, count: int, seed: int = 0) -> dict[str, str]:
    """Draw *count* distinct keys from *text*: words, phrases and their prefixes."""
    rng = random.Random(seed)
    keys: set[str] = set()
    if text.isascii() or sum(c.isascii() for c in text[:10000]) > 5000:
        spans = [m.span() for m in re.finditer(r"\w+", text)]
        while len(keys) < count:
            i = rng.randrange(len(spans) - 3)
            kind = rng.random()
            if kind < 0.4:
                start, end = spans[i]
            elif kind < 0.8:
                start, end = spans[i][0], spans[i + rng.randint(1, 3)][1]
            else:  # a prefix of a word or phrase, so many keys are prefixes of others
                start, end = spans[i][0], spans[i + rng.randint(0, 2)][1]
                end = rng.randint(start + 1, end)
            keys.add(text[start:end])
    else:
        while len(keys) < count:
            start = rng.randrange(len(text) - 8)
            key = text[start : start + rng.randint(1, 6)]
            if "\n" not in key:
                keys.add(key)
    ordered = sorted(keys)
    rng.shuffle(ordered)
    return {key: f"<{i}>" for i, key in enumerate(ordered)}


# -- the reference --------------------------------------------------------------------------


def reference(
    text: str, mapping: dict[str, str], *, ignore_case: bool = False, whole_words: bool = False
) -> str:
    """Leftmost-longest by walking a dict trie at each position (simple, slow)."""
    trie: dict[str, dict] = {}
    for key, value in mapping.items():
        node = trie
        for char in key.casefold() if ignore_case else key:
            node = node.setdefault(char, {})
        node[""] = value  # type: ignore[assignment]
    haystack = text.casefold() if ignore_case else text
    assert len(haystack) == len(text), "the reference needs one-to-one case folding"
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        node, j, best = trie, i, None
        while j < n and haystack[j] in node:
            node = node[haystack[j]]
            j += 1
            if "" in node and not (
                whole_words
                and ((i > 0 and is_word_char(text[i - 1])) or (j < n and is_word_char(text[j])))
            ):
                best = (j, node[""])
        if best is None:
            out.append(text[i])
            i += 1
        else:
            out.append(best[1])  # type: ignore[arg-type]
            i = best[0]
    return "".join(out)


# -- the alternatives ------------------------------------------------------------------------


def trie_pattern(keys: list[str]) -> str:
    """A trie-shaped regular expression: greedy, so it matches the longest key."""
    trie: dict[str, dict] = {}
    for key in keys:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        terminal = "" in node
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if terminal:
            return ("(?:" + body + ")?") if len(branches) > 1 or len(body) > 1 else body + "?"
        return body

    return build(trie)


def sub_engine(pattern: re.Pattern[str], table: dict[str, str], fold: bool = False) -> Engine:
    if fold:
        return lambda text: pattern.sub(lambda m: table[m.group().casefold()], text)
    return lambda text: pattern.sub(lambda m: table[m.group()], text)


def warm(engine: Engine) -> Engine:
    """Call once so that multi_replace's cache holds the compiled mapping (its build)."""
    engine("warm up")
    return engine


def regex_trie(pattern: str, table: dict[str, str], *, fold: bool) -> Engine:
    import regex

    flags = regex.IGNORECASE | regex.FULLCASE if fold else 0
    return sub_engine(regex.compile(pattern, flags), table, fold)


def engines(mapping: dict[str, str], option: str) -> dict[str, Callable[[], Engine]]:
    """Builders for every engine that supports *option* ('', 'ignore_case', 'whole_words')."""
    flags = re.IGNORECASE if option == "ignore_case" else 0
    table = {k.casefold(): v for k, v in mapping.items()} if option == "ignore_case" else mapping
    keys = list(table)  # case-folded for ignore_case: trie siblings must differ after folding
    longest_first = sorted(keys, key=len, reverse=True)
    wrap = (lambda p: rf"(?<!\w)(?:{p})(?!\w)") if option == "whole_words" else (lambda p: p)
    fold = option == "ignore_case"
    kwargs = {option: True} if option else {}
    builders: dict[str, Callable[[], Engine]] = {
        "devutils Replacer": lambda: Replacer(mapping, **kwargs).replace,
        "devutils multi_replace": lambda: warm(lambda text: multi_replace(text, mapping, **kwargs)),
        "re trie-built": lambda: sub_engine(
            re.compile(wrap(trie_pattern(keys)), flags), table, fold
        ),
        "re longest-first": lambda: sub_engine(
            re.compile(wrap("|".join(map(re.escape, longest_first))), flags), table, fold
        ),
    }
    if option:
        # The regex package: full case folding (FULLCASE) and Unicode's \w, which
        # devutils.text matches with str.casefold and its own word-gap markers
        builders["regex trie-built"] = lambda: regex_trie(
            wrap(trie_pattern(keys)), table, fold=fold
        )
        return builders

    def chained() -> Engine:
        def run(text: str) -> str:
            for key, value in mapping.items():
                text = text.replace(key, value)
            return text

        return run

    def regex_engine() -> Engine:
        import regex

        pattern = regex.compile("|".join(map(regex.escape, longest_first)))
        return lambda text: pattern.sub(lambda m: mapping[m.group()], text)

    def trieregex_engine() -> Engine:
        from trieregex import TrieRegEx

        return sub_engine(re.compile(TrieRegEx(*keys).regex()), mapping)

    def boltons_engine() -> Engine:
        from boltons.strutils import MultiReplace

        return MultiReplace(mapping).sub

    def flashtext_engine() -> Engine:
        from flashtext import KeywordProcessor

        processor = KeywordProcessor(case_sensitive=True)
        for key, value in mapping.items():
            processor.add_keyword(key, value)
        return processor.replace_keywords

    def pyahocorasick_engine() -> Engine:
        import ahocorasick

        automaton = ahocorasick.Automaton()
        for key, value in mapping.items():
            automaton.add_word(key, (len(key), value))
        automaton.make_automaton()

        def run(text: str) -> str:
            out: list[str] = []
            position = 0
            for end, (length, value) in automaton.iter_long(text):
                start = end - length + 1
                out.append(text[position:start])
                out.append(value)
                position = end + 1
            out.append(text[position:])
            return "".join(out)

        return run

    def ahocorasick_rs_engine() -> Engine:
        import ahocorasick_rs

        automaton = ahocorasick_rs.AhoCorasick(
            keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest
        )
        values = list(mapping.values())

        def run(text: str) -> str:
            out: list[str] = []
            position = 0
            for index, start, end in automaton.find_matches_as_indexes(text):
                out.append(text[position:start])
                out.append(values[index])
                position = end
            out.append(text[position:])
            return "".join(out)

        return run

    builders |= {
        "chained str.replace": chained,
        "re unsorted": lambda: sub_engine(re.compile("|".join(map(re.escape, keys))), mapping),
        "regex longest-first": regex_engine,
        "trieregex": trieregex_engine,
        "boltons MultiReplace": boltons_engine,
        "flashtext": flashtext_engine,
        "pyahocorasick iter_long": pyahocorasick_engine,
        "ahocorasick_rs LeftmostLongest": ahocorasick_rs_engine,
    }
    return builders


# -- timing ------------------------------------------------------------------------------------


def median_time(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def prepare(
    engine: Engine, text: str, expected_for: Callable[[str], str], budget: float
) -> tuple[str, str]:
    """Check *engine* against the reference; return (status, the text to time it on).

    status is 'ok', 'mismatch' or 'error: ...'. An engine too slow for the whole corpus
    within *budget* seconds is timed on a prefix.
    """
    probe = text[:2000]
    try:
        start = time.perf_counter()
        probe_out = engine(probe)
        probe_time = time.perf_counter() - start
    except Exception as exc:
        return f"error: {type(exc).__name__}", ""
    estimate = probe_time * len(text) / len(probe)
    sample = text
    if estimate > budget:
        sample = text[: max(len(probe), int(len(text) * budget / estimate))]
    output = probe_out if sample is probe else engine(sample)
    if output != expected_for(sample):
        return "mismatch", sample
    return "ok", sample


def round_robin(engines: dict[str, tuple[Engine, str]], repeats: int) -> dict[str, float]:
    """Time every engine once per round, *repeats* rounds; MB/s from each median.

    Interleaving the engines spreads the machine's drift over all of them, so the
    ratios between engines in one run are fair.
    """
    times: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(repeats):
        for name, (engine, sample) in engines.items():
            start = time.perf_counter()
            engine(sample)
            times[name].append(time.perf_counter() - start)
    return {
        name: len(engines[name][1].encode()) / statistics.median(values) / 1e6
        for name, values in times.items()
    }


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, help="rounds per engine (default: 5, quick 3)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--skip-throughput", action="store_true", help="only the build and two-key parts"
    )
    args = parser.parse_args()
    counts = [10, 1000, 100_000] if args.quick else [10, 100, 1000, 10_000, 100_000]
    repeats = args.repeats or (3 if args.quick else 5)
    budget = 1.0 if args.quick else 2.0
    results: list[dict[str, object]] = []
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; MB/s of UTF-8 input, median of {repeats}"
    )
    for corpus, path in CORPORA.items():
        if args.skip_throughput:
            break
        text = path.read_text(encoding="utf-8")
        for count in counts:
            drawn = draw_keys(text, count)
            for option in ["", "ignore_case", "whole_words"]:
                if option and count not in (100, 10_000) and not args.quick:
                    continue
                if option and args.quick and count != 1000:
                    continue
                mapping = drawn
                if option == "ignore_case":  # keys equal under folding would conflict
                    folded = {key.casefold(): key for key in reversed(list(mapping))}
                    mapping = {key: mapping[key] for key in folded.values()}
                cache: dict[int, str] = {}
                full = reference(
                    text,
                    mapping,
                    ignore_case=option == "ignore_case",
                    whole_words=option == "whole_words",
                )

                def expected_for(sample: str, full: str = full, option: str = option) -> str:
                    if len(sample) == len(text):
                        return full
                    if len(sample) not in cache:
                        cache[len(sample)] = reference(
                            sample,
                            mapping,
                            ignore_case=option == "ignore_case",
                            whole_words=option == "whole_words",
                        )
                    return cache[len(sample)]

                print(f"\n{corpus}, {count} keys{', ' + option if option else ''}")
                ready: dict[str, tuple[Engine, str]] = {}
                notes: dict[str, str] = {}
                builds: dict[str, float] = {}
                for name, build in engines(mapping, option).items():
                    if name == "chained str.replace" and count > 1000:
                        notes[name] = "skipped (one pass per key)"
                        continue
                    if name == "boltons MultiReplace" and count > 10_000:
                        notes[name] = "skipped (each match scans every key's group)"
                        continue
                    gc.collect()
                    start = time.perf_counter()
                    try:
                        engine = build()
                    except Exception as exc:
                        notes[name] = f"build error: {type(exc).__name__}: {str(exc)[:60]}"
                        continue
                    builds[name] = time.perf_counter() - start
                    status, sample = prepare(engine, text, expected_for, budget)
                    if status == "ok":
                        ready[name] = (engine, sample)
                    else:
                        notes[name] = status
                speeds = round_robin(ready, repeats)
                for name in engines(mapping, option):
                    on_prefix = name in speeds and len(ready[name][1]) < len(text)
                    if name in speeds:
                        shown = f"{speeds[name]:8.2f}{'*' if on_prefix else ''} MB/s"
                    else:
                        shown = f"{notes[name]:>9}" + (" MB/s" if name in builds else "")
                    build_note = f"   build {builds[name]:7.3f} s" if name in builds else ""
                    print(f"  {name:32} {shown}{build_note}", flush=True)
                    results.append(
                        {
                            "corpus": corpus,
                            "keys": count,
                            "option": option,
                            "engine": name,
                            "status": "ok" if name in speeds else notes[name],
                            "mbps": speeds.get(name),
                            "on_prefix": on_prefix,
                            "build_s": builds.get(name),
                        }
                    )
                del ready

    # Build time and memory for 100,000 keys.
    text = CORPORA["English"].read_text(encoding="utf-8")
    mapping = draw_keys(text, 100_000)
    print("\nBuild, 100,000 English keys")
    folded = {key.casefold(): key for key in reversed(list(mapping))}
    unfolded = {key: mapping[key] for key in folded.values()}  # no keys equal under folding
    for options in [{}, {"ignore_case": True}, {"whole_words": True}]:
        gc.collect()
        before = rss_bytes()
        start = time.perf_counter()
        replacer = Replacer(unfolded if options else mapping, **options)
        replacer("warm up the lazily built automaton")
        built = time.perf_counter() - start
        grown = rss_bytes() - before
        print(f"  Replacer({options or ''}) build {built:.3f} s, memory {grown / 2**20:.1f} MiB")
        results.append({"build": options, "seconds": built, "mib": grown / 2**20})
        del replacer

    # The two-key Japanese example, against a precompiled re.sub with a dict lookup.
    small = {"ストロベリー": "strawberry", "パイナップル": "pineapple"}
    sentence = "ストロベリーパフェとパイナップルジュース"
    pattern = re.compile("|".join(map(re.escape, sorted(small, key=len, reverse=True))))
    replacer = Replacer(small)
    loops = 200_000

    def per_call(function: Callable[[], object]) -> float:
        return median_time(lambda: [function() for _ in range(loops)], 7) / loops * 1e9

    baseline = per_call(lambda: pattern.sub(lambda m: small[m.group()], sentence))
    ours = per_call(lambda: replacer.replace(sentence))
    convenient = per_call(lambda: multi_replace(sentence, small))
    print("\nTwo keys, one Japanese sentence (ns per call)")
    print(f"  precompiled re.sub + dict   {baseline:7.0f}")
    print(f"  Replacer.replace            {ours:7.0f}  ({ours / baseline:.2f}x)")
    print(f"  multi_replace (same dict)   {convenient:7.0f}  ({convenient / baseline:.2f}x)")
    results.append(
        {"small": {"re_sub_ns": baseline, "replacer_ns": ours, "multi_replace_ns": convenient}}
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    for where in CORPORA.values():
        if not where.is_file():
            sys.exit(
                f"{Path(__file__).name}: no corpus at {where}: put ../shared/corpus/ beside"
                " the checkout or set DEVUTILS_CORPUS to its folder (README.md, Documentation)"
            )
    sys.exit(main())
