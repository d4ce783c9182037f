"""The counters and rate arithmetic behind `devutils.system`, without dataclasses.

Kept apart so that ``devutils stat`` starts fast: importing `dataclasses` (which imports
`inspect`) costs more than all the sampling a short run does. `devutils.system` wraps
these dicts in its frozen dataclasses.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import Any

DISK_FILTER = re.compile(
    r"^([hsv]d[a-z]+\d+|cciss/c\d+d\d+p\d+|dm-\d+|md\d+|mmcblk\d+p\d0|VxVM\d+|nvme\d+n\d+p\d+)$"
)
"""Devices dool leaves out of its disk total: partitions, device-mapper and md devices."""
NIC_FILTER = re.compile(r"^(lo|bond\d+|face|.+\.\d+)$")
"""Interfaces dool leaves out of its network total: loopback, bonds and VLANs."""

GROUPS = ("cpu", "disk", "net", "paging", "system", "load", "mem")
GROUPS = ("cpu", "disk", "net", "paging", "system", "load", "mem")


def _rate(delta: float, elapsed: float) -> float:
    """Never negative, never infinite: a counter that went back, or no time, gives 0."""
    if delta <= 0 or elapsed <= 0:
        return 0.0
    return delta / elapsed


def _pair_rates(
    before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]], elapsed: float
) -> dict[str, tuple[float, float]]:
    """Per-device rates for devices present in both snapshots."""
    rates = {}
    for name, (a1, b1) in after.items():
        old = before.get(name)
        if old is not None:
            rates[name] = (_rate(a1 - old[0], elapsed), _rate(b1 - old[1], elapsed))
    return rates


def _device_rates(
    before: Mapping[str, tuple[int, int]],
    after: Mapping[str, tuple[int, int]],
    elapsed: float,
    excluded: re.Pattern[str],
    wanted: Sequence[str],
) -> tuple[tuple[float, float], dict[str, tuple[float, float]]]:
    """dool's total over the devices *excluded* does not match, and the *wanted* ones."""
    rates = _pair_rates(before, after, elapsed)
    counted = [r for name, r in rates.items() if not excluded.match(name)]
    total = (sum(r[0] for r in counted), sum(r[1] for r in counted))
    per_device = {}
    for name in wanted:
        if name == "total":
            per_device[name] = total
        elif name in rates:
            per_device[name] = rates[name]
    return total, per_device


def compute_rates(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    disks: Sequence[str] = (),
    nics: Sequence[str] = (),
) -> dict[str, Any]:
    """The arithmetic of `devutils.system.compute_sample`, on raw snapshot dicts.

    Returns the `Sample` fields by name (``disks`` and ``nics`` as name -> pair).
    """
    elapsed = after["monotonic"] - before["monotonic"]
    values: dict[str, Any] = {}
    missing = [
        group
        for group in after["groups"]
        if after[FIELDS[group]] is None
        or (group not in ("load", "mem") and before[FIELDS[group]] is None)
    ]

    if after["cpu"] is not None and before["cpu"] is not None:
        user, nice, system, idle, iowait, irq, softirq, steal = (
            max(0.0, new - old)
            for new, old in zip(after["cpu"][:8], before["cpu"][:8], strict=True)
        )
        parts = (user + nice + irq + softirq, system, idle, iowait, steal)
        total = sum(parts)
        if total > 0:
            values.update(
                zip(
                    ("usr", "sys", "idl", "wai", "stl"),
                    (min(100.0, 100.0 * p / total) for p in parts),
                    strict=True,
                )
            )
        else:  # no time passed on the cpu clock: call it idle
            values.update(usr=0.0, sys=0.0, idl=100.0, wai=0.0, stl=0.0)

    per_disk: dict[str, tuple[float, float]] = {}
    if after["disks"] is not None and before["disks"] is not None:
        total, per_disk = _device_rates(
            before["disks"], after["disks"], elapsed, DISK_FILTER, disks
        )
        values["disk_read"], values["disk_write"] = total

    per_nic: dict[str, tuple[float, float]] = {}
    if after["nics"] is not None and before["nics"] is not None:
        total, per_nic = _device_rates(before["nics"], after["nics"], elapsed, NIC_FILTER, nics)
        values["net_recv"], values["net_send"] = total

    if after["paging"] is not None and before["paging"] is not None:
        values["page_in"] = _rate(after["paging"][0] - before["paging"][0], elapsed)
        values["page_out"] = _rate(after["paging"][1] - before["paging"][1], elapsed)

    if after["system"] is not None and before["system"] is not None:
        values["interrupts"] = _rate(after["system"][0] - before["system"][0], elapsed)
        values["ctx_switches"] = _rate(after["system"][1] - before["system"][1], elapsed)

    if after["load"] is not None:
        values["load1"], values["load5"], values["load15"] = after["load"]
    if after["mem"] is not None:
        keys = ("mem_used", "mem_free", "mem_cached", "mem_available")
        values.update(zip(keys, after["mem"], strict=True))

    values.update(
        time=after["time"],
        elapsed=elapsed,
        disks=per_disk,
        nics=per_nic,
        missing=tuple(name for name in GROUPS if name in missing),
    )
    return values


# -- reading the counters -------------------------------------------------------------------


def _read_cpu() -> tuple[float, ...]:
    import psutil

    t = psutil.cpu_times()
    return (
        t.user,
        t.nice if hasattr(t, "nice") else 0.0,
        t.system,
        t.idle,
        getattr(t, "iowait", 0.0),
        getattr(t, "irq", 0.0),
        getattr(t, "softirq", 0.0),
        getattr(t, "steal", 0.0),
    )


def _read_disks() -> dict[str, tuple[int, int]]:
    import psutil

    counters = psutil.disk_io_counters(perdisk=True, nowrap=True)
    if not counters:
        msg = "no disk counters (no /proc/diskstats?)"
        raise OSError(msg)
    return {name: (c.read_bytes, c.write_bytes) for name, c in counters.items()}


def _read_nics() -> dict[str, tuple[int, int]]:
    import psutil

    counters = psutil.net_io_counters(pernic=True, nowrap=True)
    if not counters:
        msg = "no network interfaces"
        raise OSError(msg)
    return {name: (c.bytes_recv, c.bytes_sent) for name, c in counters.items()}


def _read_paging() -> tuple[int, int]:
    import psutil

    swap = psutil.swap_memory()
    return (swap.sin, swap.sout)


def _read_system() -> tuple[int, int]:
    import psutil

    stats = psutil.cpu_stats()
    return (stats.interrupts, stats.ctx_switches)


def _read_load() -> tuple[float, float, float]:
    return os.getloadavg()


def _read_mem() -> tuple[int, int, int, int]:
    import psutil

    vm = psutil.virtual_memory()
    return (vm.used, vm.free, getattr(vm, "cached", 0), vm.available)


# On Linux the counters come straight from /proc: the same files, fields and units psutil
# reads (so the same numbers), at a fraction of the cost per sample and at startup. psutil
# reads them elsewhere, and on Linux when /proc cannot be read.
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


_FDS: dict[str, int] = {}


def _read_proc(path: str) -> bytes:
    """Read a /proc file through a descriptor kept open (as dool does): pread, no reopen."""
    descriptor = _FDS.get(path)
    if descriptor is None:
        descriptor = _FDS.setdefault(path, os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(descriptor, 1 << 16, offset)
        chunks.append(chunk)
        offset += len(chunk)
        if len(chunk) < 1 << 16:
            return b"".join(chunks)


def _field_after(data: bytes, label: bytes) -> int:
    """The integer right after ``label`` at the start of a line of *data*."""
    start = data.find(b"\n" + label)
    if start < 0:
        if not data.startswith(label):
            msg = f"no {label.decode().strip()!r} line"
            raise OSError(msg)
        start = -1
    start += 1 + len(label)
    end = start
    while data[end : end + 1].isdigit():
        end += 1
    return int(data[start:end])


def _proc_cpu() -> tuple[float, ...]:
    data = _read_proc("/proc/stat")
    if not data.startswith(b"cpu "):
        msg = "no cpu line in /proc/stat"
        raise OSError(msg)
    ticks = [int(value) for value in data[: data.index(b"\n")].split()[1:9]]
    ticks += [0] * (8 - len(ticks))
    return tuple(tick / _CLOCK_TICKS for tick in ticks)


def _proc_system() -> tuple[int, int]:
    data = _read_proc("/proc/stat")
    return (_field_after(data, b"intr "), _field_after(data, b"ctxt "))


def _proc_disks() -> dict[str, tuple[int, int]]:
    disks = {}
    for line in _read_proc("/proc/diskstats").splitlines():
        fields = line.split()
        if len(fields) >= 10:
            disks[fields[2].decode()] = (int(fields[5]) * _SECTOR, int(fields[9]) * _SECTOR)
    if not disks:
        msg = "/proc/diskstats lists no disk"
        raise OSError(msg)
    return disks


def _proc_nics() -> dict[str, tuple[int, int]]:
    nics = {}
    for line in _read_proc("/proc/net/dev").splitlines()[2:]:
        name, _, data = line.partition(b":")
        fields = data.split()
        if len(fields) >= 9:
            nics[name.strip().decode()] = (int(fields[0]), int(fields[8]))
    if not nics:
        msg = "/proc/net/dev lists no interface"
        raise OSError(msg)
    return nics


def _proc_paging() -> tuple[int, int]:
    data = _read_proc("/proc/vmstat")
    return (
        _field_after(data, b"pswpin ") * _PAGE_SIZE,
        _field_after(data, b"pswpout ") * _PAGE_SIZE,
    )


def _proc_readable() -> bool:
    return sys.platform.startswith("linux") and all(
        os.access(path, os.R_OK) for path in ("/proc/stat", "/proc/diskstats", "/proc/net/dev")
    )


READERS: dict[str, Callable[[], Any]] = {
    "cpu": _read_cpu,
    "disk": _read_disks,
    "net": _read_nics,
    "paging": _read_paging,
    "system": _read_system,
    "load": _read_load,
    "mem": _read_mem,
}
PROC_READERS: dict[str, Callable[[], Any]] = {
    "cpu": _proc_cpu,
    "disk": _proc_disks,
    "net": _proc_nics,
    "paging": _proc_paging,
    "system": _proc_system,
    "load": _read_load,
    "mem": _read_mem,
}
FIELDS = {
    "cpu": "cpu",
    "disk": "disks",
    "net": "nics",
    "paging": "paging",
    "system": "system",
    "load": "load",
    "mem": "mem",
}


class RawSampler:
    """`devutils.system.Sampler` without the dataclasses: snapshots and samples as dicts."""

    def __init__(
        self,
        *,
        disks: Sequence[str] = (),
        nics: Sequence[str] = (),
        mem: bool = False,
        readers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        for name, value in (("disks", disks), ("nics", nics)):
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                msg = f"{name} must be a sequence of names, got {value!r}"
                raise TypeError(msg)
        flag: object = mem
        if not isinstance(flag, bool):
            msg = f"mem must be a bool, got {flag!r}"
            raise TypeError(msg)
        self.disks = tuple(disks)
        self.nics = tuple(nics)
        self.mem = mem
        self._readers = dict(PROC_READERS if _proc_readable() else READERS)
        if readers:
            self._readers.update(readers)
        self._groups = [g for g in GROUPS if g != "mem" or mem]
        self._previous: dict[str, Any] | None = None
        self._warned: set[str] = set()

    def snapshot(self) -> dict[str, Any]:
        """Read every group's counters now (a group that fails becomes None)."""
        values: dict[str, Any] = dict.fromkeys(FIELDS.values())
        for group in self._groups:
            try:
                values[FIELDS[group]] = self._readers[group]()
            except Exception as exc:
                if group not in self._warned:
                    self._warned.add(group)
                    print(
                        f"devutils.system: cannot read {group} counters ({exc}); "
                        "reporting them as missing",
                        file=sys.stderr,
                    )
        values.update(monotonic=time.monotonic(), time=time.time(), groups=tuple(self._groups))
        return values

    def sample(self) -> dict[str, Any] | None:
        """Return the rates since the previous call (None on the first call)."""
        current = self.snapshot()
        previous, self._previous = self._previous, current
        if previous is None:
            return None
        return compute_rates(previous, current, disks=self.disks, nics=self.nics)

    def run(self, interval: float = 1.0, count: int | None = None) -> Iterator[dict[str, Any]]:
        """Yield a sample every *interval* seconds, *count* times (forever if None).

        The schedule is absolute (start + k x interval), so it does not drift; a late
        tick is skipped rather than bunched. The first sample comes one interval after
        the call.
        """
        if (
            isinstance(interval, bool)
            or not isinstance(interval, int | float)
            or not (math.isfinite(interval) and interval > 0)
        ):
            msg = f"interval must be a positive number of seconds, got {interval!r}"
            raise ValueError(msg)
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 1
        ):
            msg = f"count must be a positive int or None, got {count!r}"
            raise ValueError(msg)
        return self._run(float(interval), count)

    def _run(self, interval: float, count: int | None) -> Iterator[dict[str, Any]]:
        if self._previous is None:
            self.sample()
        deadline = time.monotonic() + interval
        produced = 0
        while count is None or produced < count:
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            result = self.sample()
            assert result is not None
            yield result
            produced += 1
            deadline += interval
            behind = time.monotonic() - deadline
            if behind > 0:
                deadline += math.ceil(behind / interval) * interval
