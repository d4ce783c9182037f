"""Compare ``devutils stat`` with dool under a known load, and measure what a sample costs.

Run from the repository root after ``python3 -m pip install -e . --group bench`` (dool
comes from PyPI)::

    python3 bench/bench_system.py

Part 1 runs ``dool --bytes`` and ``devutils stat --csv`` side by side for about 16 s while
it burns one CPU, writes 300 MiB with fsync and reads it back with O_DIRECT (``dd``), and
sends 300 MiB over loopback TCP. It then compares, second by second (rows matched by
epoch), the cpu columns (within 3 points), the integrated disk and loopback bytes (within
a few percent of dool's and of the bytes actually moved) and interrupts and context
switches (within 15 %).

Part 2 measures the CPU time (user + system) each tool spends per sample at dool's
smallest delay, 1 s, once running: from /proc/PID/schedstat (nanoseconds) and the rows
written, read 3.5 s after the start and again 30 s later. The installed ``devutils stat``
(table and ``--csv``) and ``dool --bytes -cdngyl`` run side by side, started 1/3 s apart,
in 6 rounds with the start order rotated (see bench_stat_ab.py: sequential rounds moved
10-20 % on a noisy VM, and the start slot alone up to 0.03 ms); the figure is the median
of the per-round ratios. Where a C compiler is at hand, a C loop that does only what
any such tool must (sleep to an absolute 1 s schedule, pread the same five /proc files,
write a line) runs alongside: the floor the kernel and the machine set, which the
figures above it are compared over too. Then the startup cost (a 1-sample run, 25 of
each, alternating: the median and the fastest). ``--quick``: 3 rounds.
"""

from __future__ import annotations

import csv
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_stat_ab import rotated

MIB = 1 << 20
PAYLOAD = 300 * MIB


def dool() -> str:
    path = shutil.which("dool")
    if path is None:
        sys.exit("dool is not installed: python3 -m pip install dool")
    return path


def read_dool_csv(path: Path) -> list[dict[str, float]]:
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if '"usr"' in line)
    header = next(csv.reader([lines[start]]))
    rows = []
    for record in csv.reader(lines[start + 1 :]):
        if len(record) == len(header):
            rows.append(
                {name: float(value or 0) for name, value in zip(header, record, strict=True)}
            )
    return rows[1:]  # the first row is dool's since-boot average


def read_devutils_csv(path: Path) -> list[dict[str, float]]:
    with path.open() as handle:
        return [{k: float(v or 0) for k, v in row.items()} for row in csv.DictReader(handle)]


def burn_cpu(seconds: float) -> None:
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass",
        ],
        check=True,
    )


def disk_io(folder: Path) -> None:
    target = folder / "io.bin"
    count = PAYLOAD // MIB
    subprocess.run(
        [
            "dd",
            "if=/dev/zero",
            f"of={target}",
            "bs=1M",
            f"count={count}",
            "conv=fsync",
            "status=none",
        ],
        check=True,
    )
    subprocess.run(
        ["dd", f"if={target}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"], check=True
    )
    target.unlink()


def loopback(payload: int) -> int:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    received = 0

    def serve() -> None:
        nonlocal received
        connection, _ = server.accept()
        with connection:
            while chunk := connection.recv(1 << 20):
                received += len(chunk)

    thread = threading.Thread(target=serve)
    thread.start()
    block = b"x" * MIB
    with socket.create_connection(server.getsockname()) as client:
        for _ in range(payload // MIB):
            client.sendall(block)
    thread.join()
    server.close()
    return received


def by_second(rows: list[dict[str, float]]) -> dict[int, dict[str, float]]:
    return {round(row["epoch"]): row for row in rows}


def check(name: str, ours: float, theirs: float, tolerance: float, relative: bool) -> bool:
    difference = abs(ours - theirs) / max(abs(theirs), 1e-9) if relative else abs(ours - theirs)
    ok = difference <= tolerance
    shown = f"{difference:.1%}" if relative else f"{difference:.2f} points"
    print(
        f"  {name:34} devutils {ours:14,.1f}  dool {theirs:14,.1f}  diff {shown:>12}  {'ok' if ok else 'FAIL'}"
    )
    return ok


def part1(folder: Path) -> bool:
    seconds = 16
    dool_csv, ours_csv = folder / "dool.csv", folder / "devutils.csv"
    env = dict(os.environ, NO_COLOR="1")
    dool_process = subprocess.Popen(
        [
            dool(),
            "--bytes",
            "-T",
            "-cdngyl",
            "-N",
            "lo,total",
            "--output",
            str(dool_csv),
            "1",
            str(seconds + 1),
        ],
        stdout=subprocess.DEVNULL,
        env=env,
    )
    with ours_csv.open("w") as out:
        ours_process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "devutils",
                "stat",
                "--csv",
                "-N",
                "lo,total",
                "1",
                str(seconds),
            ],
            stdout=out,
        )
        time.sleep(1.5)
        burn_cpu(4)
        disk_io(folder)
        sent = loopback(PAYLOAD)
        ours_process.wait()
    dool_process.wait()
    theirs = by_second(read_dool_csv(dool_csv))
    ours = by_second(read_devutils_csv(ours_csv))
    common = sorted(set(theirs) & set(ours))
    print(f"\nPart 1: {len(common)} seconds matched by epoch, under load")
    ok = True
    for column in ("cpu:usr", "cpu:sys", "cpu:idl", "cpu:wai"):
        key = column.split(":")[1]
        ours_mean = statistics.mean(ours[t][column] for t in common)
        theirs_mean = statistics.mean(theirs[t][key] for t in common)
        ok &= check(f"{column} (mean %)", ours_mean, theirs_mean, 3.0, relative=False)
    totals = [
        ("dsk/total:read", "read", PAYLOAD),
        ("dsk/total:writ", "writ", PAYLOAD),
        ("net/lo:recv", "net/lo:recv", sent),
    ]
    for column, theirs_key, moved in totals:
        ours_sum = sum(ours[t][column] for t in ours)  # integrate over every row: bytes/s x ~1 s
        theirs_sum = sum(theirs[t][theirs_key] for t in theirs)
        ok &= check(f"{column} (bytes)", ours_sum, theirs_sum, 0.05, relative=True)
        print(
            f"  {'':34} devutils vs bytes moved ({moved:,}): {abs(ours_sum - moved) / moved:.1%} "
            "(the rest of the machine adds its own I/O)"
        )
    for column, theirs_key in (("system:int", "int"), ("system:csw", "csw")):
        ours_sum = sum(ours[t][column] for t in common)
        theirs_sum = sum(theirs[t][theirs_key] for t in common)
        ok &= check(f"{column} (total)", ours_sum, theirs_sum, 0.15, relative=True)
    return ok


FLOOR_C = r"""
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    const char *paths[5] = {"/proc/stat", "/proc/diskstats", "/proc/net/dev",
                            "/proc/vmstat", "/proc/loadavg"};
    static char buffer[1 << 16];
    int fds[5];
    for (int i = 0; i < 5; i++) fds[i] = open(paths[i], O_RDONLY);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    for (;;) {
        deadline.tv_sec += 1;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        for (int i = 0; i < 5; i++) pread(fds[i], buffer, i == 3 ? 2400 : sizeof buffer, 0);
        if (write(1, "floor\n", 6) != 6) return 1;
    }
}
"""


def build_floor(folder: Path) -> str | None:
    """The C floor loop, compiled into *folder*; None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source, binary = folder / "floor.c", folder / "floor"
    source.write_text(FLOOR_C)
    built = subprocess.run([compiler, "-O2", "-o", str(binary), str(source)], check=False)
    return str(binary) if built.returncode == 0 else None


def cpu_seconds(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=dict(os.environ, NO_COLOR="1"),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def part2(rounds: int, seconds: float, folder: Path) -> None:
    floor = build_floor(folder)
    print(
        f"\nPart 2: CPU time (user + system) per sample at a 1 s delay: {rounds} rounds of "
        f"{seconds:.0f} s, the commands side by side, start order rotated"
        + ("" if floor else " (no C compiler: no floor)")
    )
    # The installed command, as users run it (``python -m`` would add runpy's start-up).
    command = str(Path(sys.executable).with_name("devutils"))
    ours = [command, "stat"]
    theirs = [dool(), "--bytes", "-cdngyl", "--noupdate"]
    commands = [[*ours, "1"], [*ours, "--csv", "1"], [*theirs, "1"]]
    table, csv_cost, theirs_cost, *floor_cost = rotated(
        commands + ([[floor]] if floor else []), rounds, seconds
    )
    for values in zip(table, csv_cost, theirs_cost, strict=True):
        print(
            f"  round: devutils stat {values[0] * 1e3:.3f} ms ({values[0] / values[2]:.2f}x), "
            f"--csv {values[1] * 1e3:.3f} ms ({values[1] / values[2]:.2f}x), "
            f"dool {values[2] * 1e3:.3f} ms"
        )
    ratio = statistics.median(t / d for t, d in zip(table, theirs_cost, strict=True))
    csv_ratio = statistics.median(c / d for c, d in zip(csv_cost, theirs_cost, strict=True))
    print(
        f"  per sample (median): devutils stat {statistics.median(table) * 1e3:.3f} ms "
        f"({ratio:.2f}x of dool's), --csv {statistics.median(csv_cost) * 1e3:.3f} ms "
        f"({csv_ratio:.2f}x), dool {statistics.median(theirs_cost) * 1e3:.3f} ms"
    )
    if floor_cost:
        base = statistics.median(floor_cost[0])
        above = statistics.median(
            (t - f) / (d - f) for t, d, f in zip(table, theirs_cost, floor_cost[0], strict=True)
        )
        csv_above = statistics.median(
            (c - f) / (d - f) for c, d, f in zip(csv_cost, theirs_cost, floor_cost[0], strict=True)
        )
        print(
            f"  the floor (C: the sleep, the five preads, a write): {base * 1e3:.3f} ms; "
            f"above it, devutils stat costs {above:.2f}x of dool's, --csv {csv_above:.2f}x"
        )
    ours_one, theirs_one = [], []
    for _ in range(25):  # alternating, so that both see the same machine
        ours_one.append(cpu_seconds([*ours, "--csv", "0.01", "1"]))
        theirs_one.append(cpu_seconds([*theirs, "1", "1"]))
    # On the project's VM one of the two CPUs runs the same start-up up to 50 % slower,
    # and where a child lands is chance: the fastest run is the cost without that noise.
    print(
        f"  startup (a 1-sample run, 25 each): median devutils "
        f"{statistics.median(ours_one) * 1e3:.0f} ms, dool "
        f"{statistics.median(theirs_one) * 1e3:.0f} ms; fastest devutils "
        f"{min(ours_one) * 1e3:.0f} ms, dool {min(theirs_one) * 1e3:.0f} ms"
    )


def main() -> int:
    # Compile devutils' modules once, as an installed package has them, so that startup
    # is not measured with PYTHONDONTWRITEBYTECODE recompiling them on every run.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(__file__).parent.parent / "devutils")],
        check=True,
    )
    folder = Path(tempfile.mkdtemp(prefix="devutils-bench-system-", dir=os.getcwd()))
    try:
        ok = part1(folder)
        part2(rounds=6 if "--quick" not in sys.argv else 3, seconds=30.0, folder=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
