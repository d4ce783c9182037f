"""Time the start-up of commands: the CPU time (user + system) of each run, alternating.

Run from the repository root after ``python3 -m pip install -e .``::

    python3 bench/bench_startup.py 'devutils --version' 'devutils stat 1 1'
    python3 bench/bench_startup.py --runs 25 'devutils --version' '../old/.venv/bin/devutils --version'

Each command runs *runs* times, the commands taking turns (so that the machine's drift
falls on all of them); it prints each one's median and fastest CPU time in ms, and the
median's difference from the first command's.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys


def cpu_ms(command: list[str]) -> float:
    """The CPU time of one run of *command* (and its children), in milliseconds."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        msg = f"{shlex.join(command)} exited with {process.returncode}"
        raise SystemExit(msg)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commands", nargs="+", help="each a shell-quoted command line")
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    commands = [shlex.split(command) for command in args.commands]
    times: list[list[float]] = [[] for _ in commands]
    for command in commands:  # once each first: caches warm for all alike
        cpu_ms(command)
    for _ in range(args.runs):
        for index, command in enumerate(commands):
            times[index].append(cpu_ms(command))
    first = statistics.median(times[0])
    for command, values in zip(args.commands, times, strict=True):
        median = statistics.median(values)
        print(
            f"  {command:60} median {median:6.1f} ms  fastest {min(values):6.1f} ms"
            f"  ({median - first:+.1f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
