"""Benchmark the two ways devutils.kernelcounters can read the kernel's counters on Linux.

Run from the repository root after ``python3 -m pip install -e .``::

    python3 bench/bench_rates.py

``ProcReader`` reads ``/proc`` itself; ``psutil_readers()`` asks psutil (the reader used
off Linux). Both read the default groups of ``devutils stat`` (cpu, disk, net, paging,
system, load). For each it reports the CPU time of one snapshot, hot (back to back, median
of 200) and cold (one snapshot every 0.2 s, as a sampler at a long delay sees it, median
of 25), and the CPU time of importing what it needs in a fresh interpreter (median of 9).
Both readers' figures are checked to agree first (same devices; counters that only grow).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from devutils.kernelcounters import ProcReader, psutil_readers

GROUPS = ("cpu", "disk", "net", "paging", "system", "load")


def snapshot_of(readers: dict[str, Callable[[], Any]]) -> Callable[[], dict[str, Any]]:
    chosen = [(group, readers[group]) for group in GROUPS]
    return lambda: {group: read() for group, read in chosen}


def cpu_per_call(function: Callable[[], object], repeats: int, pause: float) -> float:
    times = []
    for _ in range(repeats):
        if pause:
            time.sleep(pause)
        start = time.thread_time()
        function()
        times.append(time.thread_time() - start)
    return statistics.median(times)


def import_cost(code: str, repeats: int = 9) -> float:
    """CPU seconds of ``python -c code`` less those of ``python -c pass``."""

    def run(source: str) -> float:
        script = f"import sys, time\n{source}\nsys.stdout.write(repr(time.process_time()))"
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        return float(done.stdout)

    pairs = [(run(code), run("pass")) for _ in range(repeats)]
    return statistics.median(with_ - without for with_, without in pairs)


def main() -> int:
    proc, ps = snapshot_of(ProcReader().readers()), snapshot_of(psutil_readers())
    a, b = proc(), ps()
    assert set(a["disk"]) == set(b["disk"]), (sorted(a["disk"]), sorted(b["disk"]))
    assert set(a["net"]) == set(b["net"]), (sorted(a["net"]), sorted(b["net"]))
    assert all(x <= y + 1 for x, y in zip(a["system"], b["system"], strict=True))
    print(f"Python {sys.version.split()[0]}; CPU time per snapshot of {', '.join(GROUPS)}")
    rows = [
        ("/proc (ProcReader)", proc, "import devutils.kernelcounters"),
        ("psutil", ps, "import devutils.kernelcounters, psutil"),
    ]
    results = {}
    for name, function, imports in rows:
        hot = cpu_per_call(function, 200, 0)
        cold = cpu_per_call(function, 25, 0.2)
        results[name] = (hot, cold, import_cost(imports))
    base = results["/proc (ProcReader)"]
    for name, (hot, cold, imported) in results.items():
        print(
            f"  {name:20} hot {hot * 1e3:6.3f} ms ({hot / base[0]:4.2f}x)"
            f"  cold {cold * 1e3:6.3f} ms ({cold / base[1]:4.2f}x)"
            f"  import {imported * 1e3:5.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
