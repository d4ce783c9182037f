"""A/B the CPU a sampling command spends per sample, all variants at once (Linux).

Each command is started 1/n s after the previous one, so that at a 1 s delay their
wake-ups do not collide; after a warm-up, each one's CPU time (user + system, from
/proc/PID/schedstat, in nanoseconds) and the rows it wrote are read, and read again
SECONDS later. Running the variants side by side, under the same background load,
made differences of 0.03 ms visible on the project's noisy 2-core VM, where sequential
rounds moved 10-20 %. The slot a command starts in matters too (up to 0.03 ms on that
VM), so ``--rounds`` repeats the run with the order rotated and reports the median. Run a
variant twice to see the noise::

    python3 bench/bench_stat_ab.py --seconds 120 --rounds 3 \\
        'devutils stat 1' 'devutils stat --csv 1' 'dool --bytes -cdngyl --noupdate 1'
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def on_cpu_ns(pid: int) -> int:
    """The CPU time process *pid* has used so far, in nanoseconds."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def side_by_side(commands: list[list[str]], seconds: float, warm_up: float = 3.5) -> list[float]:
    """CPU seconds per row written of each of *commands*, run at once, staggered."""
    folder = Path(tempfile.mkdtemp(prefix="devutils-ab-"))
    running: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        for index, command in enumerate(commands):
            output = folder / f"{index}.out"
            with output.open("wb") as out:
                process = subprocess.Popen(
                    command,
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                    env=dict(os.environ, NO_COLOR="1"),
                )
            running.append((process, output))
            time.sleep(1.0 / len(commands))
        time.sleep(warm_up)
        first = [(on_cpu_ns(p.pid), out.read_bytes().count(b"\n")) for p, out in running]
        time.sleep(seconds)
        last = [(on_cpu_ns(p.pid), out.read_bytes().count(b"\n")) for p, out in running]
    finally:
        for process, _ in running:
            process.kill()
            process.wait()
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    return [
        (cpu1 - cpu0) / 1e9 / (rows1 - rows0) if rows1 > rows0 else float("nan")
        for (cpu0, rows0), (cpu1, rows1) in zip(first, last, strict=True)
    ]


def rotated(commands: list[list[str]], rounds: int, seconds: float) -> list[list[float]]:
    """`side_by_side` *rounds* times, the start order rotated by one each round; the
    costs of each command, in the order given."""
    costs: list[list[float]] = [[] for _ in commands]
    for round_ in range(rounds):
        shift = round_ % len(commands)
        order = [*range(shift, len(commands)), *range(shift)]
        results = side_by_side([commands[i] for i in order], seconds)
        for index, cost in zip(order, results, strict=True):
            costs[index].append(cost)
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", help="each a shell-quoted command line")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time (s)")
    parser.add_argument("--rounds", type=int, default=1, help="runs, order rotated")
    args = parser.parse_args()
    costs = rotated([shlex.split(line) for line in args.commands], args.rounds, args.seconds)
    for line, values in zip(args.commands, costs, strict=True):
        rounds = " ".join(f"{value * 1e3:.3f}" for value in values)
        print(f"{statistics.median(values) * 1e3:7.3f} ms/sample (rounds: {rounds})  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
