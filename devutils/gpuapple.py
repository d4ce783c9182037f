"""Apple GPUs (and an Intel Mac's): the I/O Registry, read with ``ioreg``, no sudo.

`snapshot_apple` runs ``ioreg -r -d 2 -w 0 -c IOAccelerator`` and reads each
accelerator's ``PerformanceStatistics`` (utilization, memory in use) and its user
clients (`parse_ioreg`), as Activity Monitor does. Apple's GPU and an Intel iGPU use the
machine's memory (``unified_memory``); an Intel Mac's AMD or NVIDIA card has its own.
"""

from __future__ import annotations

import re
from typing import Any

from devutils.gpuinfo import GpuInfo, GpuProcess, NoGpuFound, check_flag, check_text, run_tool
from devutils.limits import check_seconds

__all__ = ["parse_ioreg", "snapshot_apple"]

_IOREG_ENTRY = re.compile(r"^([ |]*)\+-o (\S+)", re.M)
_IOREG_STATISTICS = re.compile(r'"PerformanceStatistics" = \{')
# One `"key"=value` of an ioreg dictionary, the number (if it is one) in group 2. A value
# is read whole (a quoted string, a list, a dictionary one level deep, a bare word), so
# that a `,` or `}` inside it is never taken for the dictionary's own.
_IOREG_PAIR = re.compile(
    r'"([^"]*)"=(?:(-?\d+)(?=[,}])|"[^"]*"|\((?:[^()"]|"[^"]*")*\)'
    r'|\{(?:[^{}"]|"[^"]*")*\}|[^,}]*)'
)


def parse_ioreg(text: str) -> list[dict[str, Any]]:
    """The accelerators in ``ioreg -r -d 2 -w 0 -c IOAccelerator`` output: each one's
    class, ``model``, ``PerformanceStatistics`` numbers and the pids of its clients.

    An accelerator is an entry at the listing's top level (``+-o`` at its least indent);
    its clients are the entries below it that name their creator. An accelerator without
    ``PerformanceStatistics`` is left out, and so are its clients.

    Raises:
        TypeError: If *text* is not a str.
        ValueError: If *text* lists no accelerator with performance statistics.

    Examples:
        >>> found = parse_ioreg('+-o AGXAcceleratorG13X  <class AGXAcceleratorG13X>\\n'
        ...                     '  "PerformanceStatistics" = {"Device Utilization %"=7}\\n')
        >>> found[0]["class"], found[0]["statistics"]
        ('AGXAcceleratorG13X', {'Device Utilization %': 7})
    """
    check_text(text)
    starts = list(_IOREG_ENTRY.finditer(text))
    top = min((len(match.group(1)) for match in starts), default=0)
    accelerators: list[dict[str, Any]] = []
    owner: dict[str, Any] | None = None  # the accelerator the entries below belong to
    for index, match in enumerate(starts):
        body = text[match.end() : starts[index + 1].start() if index + 1 < len(starts) else None]
        if len(match.group(1)) > top:  # below an accelerator: one of its clients, or not
            creator = re.search(r'"IOUserClientCreator" = "pid (\d+), ([^"]*)"', body)
            if creator and owner is not None:
                owner["clients"].append((int(creator.group(1)), creator.group(2)))
            continue
        statistics = _ioreg_statistics(body)
        owner = None
        if statistics is None:
            continue
        model = re.search(r'"model" = "([^"]*)"', body)
        owner = {
            "class": match.group(2),
            "model": model.group(1) if model else None,
            "statistics": statistics,
            "clients": [],
        }
        accelerators.append(owner)
    if not accelerators:
        msg = "no accelerator with PerformanceStatistics in the ioreg output"
        raise ValueError(msg)
    return accelerators


def _ioreg_statistics(body: str) -> dict[str, int] | None:
    """The numbers of an entry's ``PerformanceStatistics`` (None where it has none)."""
    found = _IOREG_STATISTICS.search(body)
    if found is None:
        return None
    numbers: dict[str, int] = {}
    position = found.end()
    while (pair := _IOREG_PAIR.match(body, position)) is not None:
        if pair.group(2) is not None:
            numbers[pair.group(1)] = int(pair.group(2))
        position = pair.end()
        if body.startswith(",", position):
            position += 1
    return numbers


def snapshot_apple(processes: bool, timeout: float) -> list[GpuInfo]:
    """The Apple GPU's utilization and memory in use, from the I/O Registry (no sudo),
    with its clients where *processes*; on an Intel Mac, what the registry says of its
    Intel, AMD or NVIDIA GPUs. ``ioreg`` is killed with its process group past *timeout*
    seconds.

    Raises:
        NoGpuFound: If ``ioreg`` is not on PATH (not macOS), fails, times out, or lists
            no accelerator with performance statistics.
        OSError: If it cannot be started.
        TypeError: If *processes* is not a bool, or *timeout* not a number.
        ValueError: If *timeout* is not above 0 and at most a day.

    Examples:
        Where ``ioreg`` is not on PATH (as on Linux, where the tests run):

        >>> import os
        >>> os.environ["PATH"], path = "", os.environ["PATH"]
        >>> try:
        ...     snapshot_apple(processes=False, timeout=5.0)
        ... finally:
        ...     os.environ["PATH"] = path
        Traceback (most recent call last):
        ...
        devutils.gpuinfo.NoGpuFound: ioreg not found on PATH (not macOS)
    """
    import shutil

    check_flag("processes", processes)
    timeout = check_seconds("timeout", timeout)
    ioreg = shutil.which("ioreg")
    if ioreg is None:
        msg = "ioreg not found on PATH (not macOS)"
        raise NoGpuFound(msg)
    text = run_tool("ioreg", [ioreg, "-r", "-d", "2", "-w", "0", "-c", "IOAccelerator"], timeout)
    try:
        accelerators = parse_ioreg(text)
    except ValueError as exc:
        msg = f"ioreg: {exc}"
        raise NoGpuFound(msg) from exc
    gpus = []
    for index, accelerator in enumerate(accelerators):
        numbers = accelerator["statistics"]
        busy = numbers.get("Device Utilization %")
        clients = [] if not processes else sorted(set(accelerator["clients"]))
        vendor = _mac_vendor(accelerator["class"])
        # Apple's GPU and an Intel Mac's iGPU use the machine's memory; an Intel Mac's
        # AMD or NVIDIA card has its own, which its driver reports as inUseVidMemoryBytes.
        unified = vendor in ("apple", "intel")
        memory = "In use system memory" if unified else "inUseVidMemoryBytes"
        temperature, power = numbers.get("Temperature(C)"), numbers.get("Total Power(W)")
        gpus.append(
            GpuInfo(
                index=index,
                uuid=accelerator["class"],
                name=accelerator["model"] or accelerator["class"],
                utilization=None if busy is None else float(min(busy, 100)),
                memory_used=numbers.get(memory),
                memory_total=None,
                temperature=None if temperature is None else float(temperature),
                power_draw=None if power is None else float(power),
                mig_mode=None,
                processes=tuple(GpuProcess(pid, None, name, True) for pid, name in clients),
                vendor=vendor,
                backend="apple",
                unified_memory=unified,
            )
        )
    return gpus


def _mac_vendor(driver_class: str) -> str:
    """The vendor of a macOS accelerator, from its driver's class name."""
    for prefix, vendor in (("AGX", "apple"), ("Intel", "intel"), ("AMD", "amd")):
        if driver_class.startswith(prefix):
            return vendor
    if driver_class.startswith(("nv", "NV", "GeForce")):
        return "nvidia"
    return "other"
