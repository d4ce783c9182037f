"""A/B the CPU a sampling command spends per sample, all variants at once (Linux).

Each command is started 1/n s after the previous one, so that at a 1 s delay their
wake-ups do not collide; after a warm-up, each one's CPU time (user + system, from
/proc/PID/schedstat, in nanoseconds) and the rows it wrote are read, and read again
SECONDS later. Running the variants side by side, under the same background load,
made differences of 0.03 ms visible on the project's noisy 2-core VM, where sequential
rounds moved 10-20 %. Run a variant twice to see the noise::

    python3 bench/bench_stat_ab.py --seconds 120 \\
        'devutils stat 1' 'devutils stat --csv 1' 'dool --bytes -cdngyl --noupdate 1'
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def on_cpu_ns(pid: int) -> int:
    """The CPU time process *pid* has used so far, in nanoseconds."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", help="each a shell-quoted command line")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time (s)")
    parser.add_argument("--warm-up", type=float, default=3.5, help="time before (s)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="devutils-ab-"))
    running: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    try:
        for index, line in enumerate(args.commands):
            output = folder / f"{index}.out"
            with output.open("wb") as out:
                process = subprocess.Popen(
                    shlex.split(line),
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                    env=dict(os.environ, NO_COLOR="1"),
                )
            running.append((line, process, output))
            time.sleep(1.0 / len(args.commands))
        time.sleep(args.warm_up)
        first = [(on_cpu_ns(p.pid), out.read_bytes().count(b"\n")) for _, p, out in running]
        time.sleep(args.seconds)
        last = [(on_cpu_ns(p.pid), out.read_bytes().count(b"\n")) for _, p, out in running]
    finally:
        for _, process, _ in running:
            process.kill()
            process.wait()
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    for (line, _, _), (cpu0, rows0), (cpu1, rows1) in zip(running, first, last, strict=True):
        rows = rows1 - rows0
        per_sample = (cpu1 - cpu0) / rows / 1e6 if rows else float("nan")
        print(f"{per_sample:7.3f} ms/sample over {rows:4d} rows  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
