"""How fast the commands stop when asked: the tight figures the tests leave to this script.

Run from the repository root after ``python3 -m pip install -e .``::

    python3 bench/bench_signals.py            # 7 repeats of each case
    python3 bench/bench_signals.py --repeats 3

- ``replace``: ``devutils replace --in-place`` over six files of a few MB each, signalled
  once a rewrite's temporary file exists; the time from the signal to the exit.
- ``gpu --timeout``: ``devutils gpu --timeout 1`` with an ``nvidia-smi`` that never
  answers; the time past the timeout to the exit.
- ``stat``: ``devutils stat 0.1`` after its third line, Ctrl-C; the time to the exit.

Each figure is the median and the largest of the repeats. The tests bound the same
waits by seconds (a slow, loaded machine); docs/cli.md gives the figures measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [f"w{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcdefgh"]


def inputs(folder: Path) -> tuple[list[Path], Path]:
    rng = random.Random(0)
    text = " ".join(rng.choice(WORDS) for _ in range(600_000))
    paths = []
    for number in range(6):
        path = folder / f"f{number}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    table = folder.parent / "map.json"
    table.write_text(json.dumps({word: word.upper() for word in WORDS}), encoding="utf-8")
    return paths, table


def replace_stop(signum: int, jobs: int) -> float:
    """Seconds from *signum* (sent mid-rewrite) to the exit of ``replace --in-place``."""
    with tempfile.TemporaryDirectory() as top:
        folder = Path(top) / "files"
        folder.mkdir()
        paths, table = inputs(folder)
        command = [sys.executable, "-m", "devutils", "replace", "-w", "--chunk-size", "4096"]
        process = subprocess.Popen(
            [*command, "--map", str(table), "--in-place", "-j", str(jobs), *map(str, paths)],
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while not list(folder.glob(".*.devutils-tmp")):
            if process.poll() is not None:
                msg = "the run ended before a rewrite was seen"
                raise SystemExit(msg)
            time.sleep(0.001)
        sent = time.perf_counter()
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        process.wait()
        return time.perf_counter() - sent


FAKE_SMI = "#!/bin/sh\nexec sleep 600\n"


def gpu_timeout_overshoot() -> float:
    """Seconds past ``--timeout 1`` until ``devutils gpu`` exits, a hung nvidia-smi."""
    with tempfile.TemporaryDirectory() as top:
        script = Path(top) / "nvidia-smi"
        script.write_text(FAKE_SMI)
        script.chmod(0o755)
        env = {**os.environ, "PATH": f"{top}{os.pathsep}{os.environ['PATH']}"}
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "devutils", "gpu", "--timeout", "1", "--backend", "nvidia-smi"],
            capture_output=True,
            env=env,
            check=False,
        )
        return time.perf_counter() - start - 1.0


def stat_stop() -> float:
    """Seconds from Ctrl-C to the exit of a sampling ``devutils stat 0.1``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "devutils", "stat", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    for _ in range(3):
        process.stdout.readline()
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    process.communicate()
    return time.perf_counter() - sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    cases = {
        "replace -j 1, SIGINT": lambda: replace_stop(signal.SIGINT, 1),
        "replace -j 2, SIGINT": lambda: replace_stop(signal.SIGINT, 2),
        "replace -j 1, SIGTERM": lambda: replace_stop(signal.SIGTERM, 1),
        "replace -j 2, SIGTERM": lambda: replace_stop(signal.SIGTERM, 2),
        "gpu --timeout 1, past the timeout": gpu_timeout_overshoot,
        "stat 0.1, Ctrl-C": stat_stop,
    }
    print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {repeats} repeats")
    print(f"| {'case':<36} | median (s) | largest (s) |")
    print(f"|{'-' * 38}|-----------:|------------:|")
    for name, case in cases.items():
        times = [case() for _ in range(repeats)]
        print(f"| {name:<36} | {statistics.median(times):10.3f} | {max(times):11.3f} |")


if __name__ == "__main__":
    main()
