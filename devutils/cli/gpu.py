"""``devutils gpu``: the command line of `devutils.gpu`, and its live view (``--watch``).

The live view redraws in place on a terminal (standard-library `curses`): per GPU a
utilization bar and a memory bar, a sparkline of the utilization over the last samples,
and the processes by memory; ``q`` or Ctrl-C quits and restores the terminal. When
stdout is not a terminal, or one that cannot move its cursor (``TERM=dumb``), it prints
one plain line per sample instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import deque
from dataclasses import asdict
from typing import Any

from devutils.cli.common import CliError, catch_signals, positive_int, positive_seconds
from devutils.gpu import BACKENDS, GIB, MIB, GpuInfo, gpu_probe, gpu_snapshot, nvml_session

SPARKS = "▁▂▃▄▅▆▇█"
"""The sparkline's levels, from 0 % to 100 % (an unknown figure is a space)."""


def register(subparsers: Any) -> None:
    gpu = subparsers.add_parser(
        "gpu",
        help="GPU snapshot or live view: NVIDIA (NVML, nvidia-smi), AMD (sysfs), Apple (ioreg)",
        description="Show every GPU now, or watch them (--watch).",
    )
    gpu.add_argument("--json", action="store_true", help="print JSON")
    gpu.add_argument(
        "--timeout",
        type=positive_seconds,
        default=5.0,
        help="seconds all the backends together may take (default 5)",
    )
    gpu.add_argument(
        "--backend",
        action="append",
        choices=BACKENDS,
        metavar="NAME",
        help=f"ask only this backend (repeatable): {', '.join(BACKENDS)}",
    )
    gpu.add_argument(
        "--watch",
        nargs="?",
        const=1.0,
        type=positive_seconds,
        metavar="DELAY",
        help="a live view, redrawn every DELAY seconds (default 1)",
    )
    gpu.add_argument("--count", type=positive_int, help="with --watch: stop after COUNT samples")
    gpu.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # SIGTERM, SIGHUP...: unwind as Ctrl-C does, so that a running nvidia-smi is killed
    # (status 128 + N), and in the live view curses restores the terminal (not ncurses'
    # exit(1)).
    catch_signals()
    if args.count is not None and args.watch is None:
        msg = "--count needs --watch (devutils gpu --watch 1 --count N)"
        raise CliError(msg)
    if args.watch is not None:
        if args.json:
            msg = "--json and --watch: use devutils stat --gpu --json for a log"
            raise CliError(msg)
        return _watch(args)
    probe = gpu_probe(timeout=args.timeout, backends=args.backend, processes=True)
    gpus = list(probe.snapshot)
    if args.json:  # the same three keys whatever the outcome
        records = [asdict(gpu) for gpu in gpus]
        found = {"gpus": records, "reason": probe.reason, "reasons": dict(probe.reasons)}
        print(json.dumps(found, indent=2))
    if not gpus:
        print(f"devutils gpu: no GPU: {probe.reason}", file=sys.stderr)
        return 1
    if args.json:
        return 0
    for gpu in gpus:
        print(describe(gpu))
        for proc in gpu.processes:
            held = "-" if proc.used_memory is None else f"{proc.used_memory / MIB:.0f} MiB"
            name = proc.name if proc.visible else "(not visible in this PID namespace)"
            print(f"  pid {proc.pid}  {held}  {name}")
    return 0


def _gib(value: int | None) -> str:
    return "-" if value is None else f"{value / GIB:.1f}"


def describe(gpu: GpuInfo) -> str:
    """One GPU as a line: the same columns whatever the vendor, ``-`` where unknown."""
    util = "-" if gpu.utilization is None else f"{gpu.utilization:.0f}%"
    temp = "-" if gpu.temperature is None else f"{gpu.temperature:.0f}C"
    power = "-" if gpu.power_draw is None else f"{gpu.power_draw:.0f}W"
    mig = f"  MIG {gpu.mig_mode}" if gpu.mig_mode else ""
    unified = "  unified memory" if gpu.unified_memory else ""
    memory = f"mem {_gib(gpu.memory_used)}/{_gib(gpu.memory_total)} GiB"
    return f"GPU {gpu.index}  {gpu.name}  util {util}  {memory}  {temp}  {power}{mig}{unified}"


def bar(fraction: float | None, width: int) -> str:
    """A bar of *width* characters filled to *fraction* (``?`` for unknown)."""
    if fraction is None:
        return "?" * width
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "#" * filled + "-" * (width - filled)


def sparkline(values: list[float | None]) -> str:
    """*values* (percentages) as one character each; a space where unknown."""
    top = len(SPARKS) - 1
    return "".join(
        " " if v is None else SPARKS[round(max(0.0, min(100.0, v)) / 100 * top)] for v in values
    )


def _memory_fraction(gpu: GpuInfo) -> float | None:
    if gpu.memory_used is None or not gpu.memory_total:
        return None
    return gpu.memory_used / gpu.memory_total


def _samples(args: argparse.Namespace) -> Any:
    """GPU snapshots on an absolute schedule of ``--watch`` seconds (``--count`` of them)."""
    deadline = time.monotonic()
    taken = 0
    while args.count is None or taken < args.count:
        yield gpu_snapshot(timeout=args.timeout, backends=args.backend)
        taken += 1
        deadline += args.watch
        delay = deadline - time.monotonic()
        if delay > 0 and (args.count is None or taken < args.count):
            time.sleep(delay)
        elif delay <= 0:
            deadline = time.monotonic()


def _watch(args: argparse.Namespace) -> int:
    with nvml_session(timeout=args.timeout):
        try:
            if sys.stdout.isatty() and _can_draw():
                import curses

                last = curses.wrapper(_screen, args)
                if last:  # --count ran out: the last view stays on the screen
                    sys.stdout.write("\n".join(last) + "\n")
            else:
                _print_sample_lines(args)
        except KeyboardInterrupt:
            pass
    return 0


def _can_draw() -> bool:
    """Whether the terminal (``TERM``) can show the live view: known, and able to move
    the cursor. Elsewhere (``TERM=dumb``, an Emacs shell) the view is plain lines."""
    import curses

    try:
        curses.setupterm(fd=sys.stdout.fileno())
    except curses.error:  # an unknown or unset TERM
        return False
    return bool(curses.tigetstr("cup"))


def _print_sample_lines(args: argparse.Namespace) -> None:
    """One line per sample: the time, then each GPU's figures."""
    for gpus in _samples(args):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        parts = [describe(gpu) for gpu in gpus] or ["no GPU"]
        sys.stdout.write(f"{stamp}  " + "; ".join(parts) + "\n")
        sys.stdout.flush()


def _screen(window: Any, args: argparse.Namespace) -> list[str]:
    """The curses view: redraw each sample; ``q`` quits. Returns the last view's lines
    where ``--count`` ran out (none where ``q`` ended it)."""
    import curses

    with contextlib.suppress(curses.error):  # a terminal that cannot hide its cursor
        curses.curs_set(0)
    window.nodelay(True)
    history: dict[tuple[str, int], deque[float | None]] = {}
    lines: list[str] = []
    for gpus in _samples(args):
        height, width = window.getmaxyx()
        lines = _view(gpus, history, max(width - 1, 20), args.watch)
        window.erase()
        for row, line in enumerate(lines[: height - 1]):
            window.addnstr(row, 0, line, width - 1)
        window.addnstr(height - 1, 0, "q: quit", width - 1)
        window.refresh()
        if window.getch() in (ord("q"), ord("Q")):
            return []
    return lines


def _view(
    gpus: list[GpuInfo],
    history: dict[tuple[str, int], deque[float | None]],
    width: int,
    delay: float,
) -> list[str]:
    """The lines of the view (pure text, so that it can be checked as it is drawn)."""
    lines = [f"devutils gpu --watch {delay:g}   {time.strftime('%H:%M:%S')}", ""]
    if not gpus:
        lines.append("no GPU (devutils gpu says why)")
    bar_width = max(10, min(40, width - 40))
    for gpu in gpus:
        seen = history.get((gpu.vendor, gpu.index), deque())
        if seen.maxlen != width - 10:  # first seen, or the terminal was resized
            seen = history[gpu.vendor, gpu.index] = deque(seen, maxlen=width - 10)
        seen.append(gpu.utilization)
        util = "   -" if gpu.utilization is None else f"{gpu.utilization:3.0f}%"
        memory = f"{_gib(gpu.memory_used)}/{_gib(gpu.memory_total)} GiB"
        lines.append(f"GPU {gpu.index}  {gpu.name}  ({gpu.vendor}, {gpu.backend})")
        busy = None if gpu.utilization is None else gpu.utilization / 100
        lines.append(f"  util [{bar(busy, bar_width)}] {util}")
        if gpu.unified_memory:  # the machine's memory: no total of the GPU's own to fill
            lines.append(f"  mem  {_gib(gpu.memory_used)} GiB in use of the unified memory")
        else:
            lines.append(f"  mem  [{bar(_memory_fraction(gpu), bar_width)}] {memory}")
        lines.append(f"  hist |{sparkline(list(seen))}")
        by_memory = sorted(gpu.processes, key=lambda p: -(p.used_memory or 0))
        for proc in by_memory[:5]:
            held = "-" if proc.used_memory is None else f"{proc.used_memory / MIB:.0f} MiB"
            lines.append(f"    pid {proc.pid:>7}  {held:>10}  {proc.name or '(other namespace)'}")
        lines.append("")
    return lines
