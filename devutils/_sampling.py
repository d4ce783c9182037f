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
from itertools import compress
from operator import sub

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import Any

DISK_FILTER = re.compile(
    r"^([hsv]d[a-z]+\d+|cciss/c\d+d\d+p\d+|dm-\d+|md\d+|mmcblk\d+p\d0|VxVM\d+|nvme\d+n\d+p\d+)$"
)
"""Devices dool leaves out of its disk total: partitions, device-mapper and md devices."""
NIC_FILTER = re.compile(r"^(lo|bond\d+|face|.+\.\d+)$")
"""Interfaces dool leaves out of its network total: loopback, bonds and VLANs."""

SAMPLE_FIELDS = (
    *("time", "elapsed", "usr", "sys", "idl", "wai", "stl", "disk_read", "disk_write"),
    *("net_recv", "net_send", "page_in", "page_out", "interrupts", "ctx_switches"),
    *("load1", "load5", "load15", "mem_used", "mem_free", "mem_cached", "mem_available"),
    *("disks", "nics", "missing"),
)
"""`devutils.system.Sample`'s fields in order: the keys of every `compute_rates` result."""
GROUPS = ("cpu", "disk", "net", "paging", "system", "load", "mem")


_MIN_ELAPSED = 1e-9
"""An interval shorter than a nanosecond counts as no time: every rate over it is 0."""


class DeviceCounters(Mapping[str, tuple[int, int]]):
    """Two counters per device, as /proc lists them: names and two parallel lists.

    A read-only mapping of name -> (first, second) x *unit*, for `Snapshot.disks` and
    `Snapshot.nics`; kept as lists so that `compute_rates` subtracts whole lists in C.
    """

    __slots__ = ("first", "names", "second", "unit")

    def __init__(
        self, names: tuple[str, ...], first: list[int], second: list[int], unit: int = 1
    ) -> None:
        self.names = names
        self.first = first  # in *unit*s: /proc/diskstats counts 512-byte sectors
        self.second = second
        self.unit = unit

    def __getitem__(self, name: str) -> tuple[int, int]:
        try:
            index = self.names.index(name)
        except ValueError:
            raise KeyError(name) from None
        return (self.first[index] * self.unit, self.second[index] * self.unit)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __repr__(self) -> str:
        return repr(dict(self.items()))


class _Filter:
    """Which devices a dool total counts: a filter's verdicts, remembered by name, and the
    mask for the last list of names (the same list comes every time)."""

    __slots__ = ("_names", "_pattern", "_verdicts", "mask")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern
        self._verdicts: dict[str, bool] = {}
        self._names: tuple[str, ...] = ()
        self.mask: list[bool] = []

    def counted(self, name: str) -> bool:
        verdict = self._verdicts.get(name)
        if verdict is None:
            verdict = self._verdicts[name] = self._pattern.match(name) is None
        return verdict

    def mask_for(self, names: tuple[str, ...]) -> list[bool]:
        if names is not self._names and names != self._names:
            self.mask = [self.counted(name) for name in names]
            self._names = names
        return self.mask


_DISK_TOTAL = _Filter(DISK_FILTER)
_NIC_TOTAL = _Filter(NIC_FILTER)


def _rate(delta: float, elapsed: float) -> float:
    """Never negative, never infinite: a counter that went back, or no time, gives 0."""
    if delta <= 0 or elapsed < _MIN_ELAPSED:
        return 0.0
    return delta / elapsed


def _device_rates(
    before: Mapping[str, tuple[int, int]],
    after: Mapping[str, tuple[int, int]],
    elapsed: float,
    total_filter: _Filter,
    wanted: Sequence[str],
) -> tuple[tuple[float, float], dict[str, tuple[float, float]]]:
    """dool's total over the devices in both snapshots that *total_filter* counts (a
    counter that went back counting 0), and the *wanted* devices one by one."""
    if (
        type(after) is DeviceCounters
        and type(before) is DeviceCounters
        and (after.names is before.names or after.names == before.names)
        and after.unit == before.unit
    ):  # the usual case: the same devices in the same order, so subtract lists, in C
        mask = total_filter.mask_for(after.names)
        firsts = list(map(sub, after.first, before.first))
        seconds = list(map(sub, after.second, before.second))
        if min(firsts, default=0) < 0:
            firsts = [delta if delta > 0 else 0 for delta in firsts]
        if min(seconds, default=0) < 0:
            seconds = [delta if delta > 0 else 0 for delta in seconds]
        first = sum(compress(firsts, mask)) * after.unit
        second = sum(compress(seconds, mask)) * after.unit
    else:
        first = second = 0
        for name, (new_first, new_second) in after.items():
            old = before.get(name)
            if old is not None and total_filter.counted(name):
                if new_first > old[0]:
                    first += new_first - old[0]
                if new_second > old[1]:
                    second += new_second - old[1]
    total = (_rate(first, elapsed), _rate(second, elapsed))
    per_device = {}
    for name in wanted:
        if name == "total":
            per_device[name] = total
        else:
            new = after.get(name)
            old = before.get(name)
            if new is not None and old is not None:
                per_device[name] = (
                    _rate(new[0] - old[0], elapsed),
                    _rate(new[1] - old[1], elapsed),
                )
    return total, per_device


def compute_rates(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    disks: Sequence[str] = (),
    nics: Sequence[str] = (),
) -> dict[str, Any]:
    """The arithmetic of `devutils.system.compute_sample`, on raw snapshot dicts.

    Returns every `Sample` field by name (None where not measured; ``disks`` and ``nics``
    as name -> pair).
    """
    elapsed = after["monotonic"] - before["monotonic"]
    values: dict[str, Any] = _EMPTY_SAMPLE.copy()
    values["time"] = after["time"]
    values["elapsed"] = elapsed
    missing = [
        group
        for group in GROUPS
        if group in after["groups"]
        and (
            after[FIELDS[group]] is None
            or (group not in ("load", "mem") and before[FIELDS[group]] is None)
        )
    ]

    new_cpu, old_cpu = after["cpu"], before["cpu"]
    if new_cpu is not None and old_cpu is not None:
        if len(new_cpu) != len(old_cpu):
            msg = f"cpu counters of different lengths: {len(old_cpu)} then {len(new_cpu)}"
            raise ValueError(msg)
        deltas = list(map(sub, new_cpu[:8], old_cpu[:8]))
        if min(deltas) < 0:
            deltas = [delta if delta > 0 else 0.0 for delta in deltas]
        user, nice, system, idle, iowait, irq, softirq, steal = deltas
        usr = user + nice + irq + softirq
        total = usr + system + idle + iowait + steal
        if total > 0:
            # each at most 100: float rounding can give 100.00000000000001
            values["usr"] = p if (p := 100.0 * usr / total) < 100.0 else 100.0
            values["sys"] = p if (p := 100.0 * system / total) < 100.0 else 100.0
            values["idl"] = p if (p := 100.0 * idle / total) < 100.0 else 100.0
            values["wai"] = p if (p := 100.0 * iowait / total) < 100.0 else 100.0
            values["stl"] = p if (p := 100.0 * steal / total) < 100.0 else 100.0
        else:  # no time passed on the cpu clock: call it idle
            values.update(usr=0.0, sys=0.0, idl=100.0, wai=0.0, stl=0.0)

    per_disk: dict[str, tuple[float, float]] = {}
    if after["disks"] is not None and before["disks"] is not None:
        total_disk, per_disk = _device_rates(
            before["disks"], after["disks"], elapsed, _DISK_TOTAL, disks
        )
        values["disk_read"], values["disk_write"] = total_disk

    per_nic: dict[str, tuple[float, float]] = {}
    if after["nics"] is not None and before["nics"] is not None:
        total_nic, per_nic = _device_rates(before["nics"], after["nics"], elapsed, _NIC_TOTAL, nics)
        values["net_recv"], values["net_send"] = total_nic

    for group, first_key, second_key in (
        ("paging", "page_in", "page_out"),
        ("system", "interrupts", "ctx_switches"),
    ):
        new, old = after[group], before[group]
        if new is not None and old is not None:
            values[first_key] = _rate(new[0] - old[0], elapsed)
            values[second_key] = _rate(new[1] - old[1], elapsed)

    if after["load"] is not None:
        values["load1"], values["load5"], values["load15"] = after["load"]
    if after["mem"] is not None:
        (
            values["mem_used"],
            values["mem_free"],
            values["mem_cached"],
            values["mem_available"],
        ) = after["mem"]

    values["disks"] = per_disk
    values["nics"] = per_nic
    values["missing"] = tuple(missing)
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

# The line-by-line fallbacks (compiled on first use: `re` caches them; not at every start).
# "   8       0 sda 1 2 3 4 5 6 7 ...": the name, sectors read (6th) and written (10th).
_DISKSTATS_LINE = (
    rb"(?m)^[ \t]*\d+[ \t]+\d+[ \t]+(\S+)[ \t]+\d+[ \t]+\d+[ \t]+(\d+)[ \t]+\d+[ \t]+\d+"
    rb"[ \t]+\d+[ \t]+(\d+)"
)
# "  eth0: 1 2 3 4 5 6 7 8 9 ...": the name, bytes received (1st) and sent (9th).
_NET_DEV_LINE = rb"(?m)^[ \t]*([^:\s]+):[ \t]*(\d+)(?:[ \t]+\d+){7}[ \t]+(\d+)"


def parse_stat_cpu(data: bytes) -> list[int]:
    """The cumulative clock ticks of /proc/stat's first line: user, nice, system, idle,
    iowait, irq, softirq, steal (0 for the fields an old kernel lacks).

    Ticks, as dool reads them: the percentages are ratios, so their unit does not matter
    (`Sampler.snapshot` turns them into seconds), and integer arithmetic is dool's.
    """
    if not data.startswith(b"cpu "):
        msg = "no cpu line in /proc/stat"
        raise OSError(msg)
    ticks = list(map(int, data[: data.find(b"\n")].split()[1:9]))
    if len(ticks) < 8:
        ticks += [0] * (8 - len(ticks))
    return ticks


def parse_stat_system(data: bytes) -> tuple[int, int]:
    """/proc/stat's interrupts (the first number of ``intr``) and context switches."""
    intr = data.find(b"\nintr ") + 6
    ctxt = data.find(b"\nctxt ") + 6
    if intr < 6 or ctxt < 6:
        msg = "no intr or ctxt line in /proc/stat"
        raise OSError(msg)
    return (
        int(data[intr : data.find(b"\n", intr)].split(None, 1)[0]),
        int(data[ctxt : data.find(b"\n", ctxt)]),
    )


_NAMES: dict[str, tuple[list[bytes], tuple[str, ...]]] = {}


def _names(kind: str, raw: list[bytes]) -> tuple[str, ...] | None:
    """*raw* decoded (the same tuple as last time when the names did not change), or None
    if a name comes twice."""
    last = _NAMES.get(kind)
    if last is not None and last[0] == raw:
        return last[1]
    if len(set(raw)) != len(raw):
        return None
    names = tuple(map(bytes.decode, raw))
    _NAMES[kind] = (raw, names)
    return names


def _counters(pairs: dict[str, tuple[int, int]]) -> DeviceCounters:
    return DeviceCounters(
        tuple(pairs), [p[0] for p in pairs.values()], [p[1] for p in pairs.values()]
    )


def parse_diskstats(data: bytes) -> DeviceCounters:
    """/proc/diskstats as device -> (bytes read, bytes written)."""
    # Every line has the same number of fields (14, 18 or 20 by kernel version) and a
    # name without blanks, so the fields of all lines come from one split, in C.
    fields = data.split()
    width = len(data[: data.find(b"\n")].split()) if data.endswith(b"\n") else 0
    names = None
    if width >= 10 and len(fields) == width * data.count(b"\n"):
        names = _names("disk", fields[2::width])
    if names:
        disks = DeviceCounters(
            names, list(map(int, fields[5::width])), list(map(int, fields[9::width])), _SECTOR
        )
    else:  # lines of different lengths, or a name twice: one by one
        disks = _counters(
            {
                name.decode(): (int(read) * _SECTOR, int(written) * _SECTOR)
                for name, read, written in re.findall(_DISKSTATS_LINE, data)
            }
        )
    if not disks.names:
        msg = "/proc/diskstats lists no disk"
        raise OSError(msg)
    return disks


def parse_net_dev(data: bytes) -> DeviceCounters:
    """/proc/net/dev as interface -> (bytes received, bytes sent)."""
    # Past the two header lines, each line is "name: " and 16 numbers; a name holds no
    # blank and no colon, so one split (in C) gives 17 fields a line.
    body = data[data.find(b"\n", data.find(b"\n") + 1) + 1 :]
    fields = body.replace(b":", b" ").split()
    names = None
    if len(fields) == 17 * body.count(b"\n") == 17 * body.count(b":"):
        names = _names("net", fields[::17])
    if names:
        nics = DeviceCounters(names, list(map(int, fields[1::17])), list(map(int, fields[9::17])))
    else:  # an odd line somewhere, or a name twice: one by one
        nics = _counters(
            {
                name.decode(): (int(received), int(sent))
                for name, received, sent in re.findall(_NET_DEV_LINE, data)
            }
        )
    if not nics.names:
        msg = "/proc/net/dev lists no interface"
        raise OSError(msg)
    return nics


def parse_vmstat_paging(data: bytes) -> tuple[int, int]:
    """/proc/vmstat's pages swapped in and out, in bytes."""
    swapped_in = data.find(b"\npswpin ") + 8
    swapped_out = data.find(b"\npswpout ") + 9
    if swapped_in < 8 or swapped_out < 9 or data.find(b"\n", swapped_out) < 0:
        msg = "no pswpin or pswpout line in /proc/vmstat"
        raise OSError(msg)
    return (
        int(data[swapped_in : data.find(b"\n", swapped_in)]) * _PAGE_SIZE,
        int(data[swapped_out : data.find(b"\n", swapped_out)]) * _PAGE_SIZE,
    )


def _vmstat_size(pswpout_end: int) -> int:
    """How much of /proc/vmstat to read from now on: through the pswpout line, whose
    newline is at *pswpout_end*, and a little past (the lines before it may grow)."""
    return pswpout_end + 1 + 512


def parse_loadavg(data: bytes) -> tuple[float, float, float]:
    """/proc/loadavg's 1, 5 and 15 minute load averages."""
    one, five, fifteen = map(float, data.split(None, 3)[:3])
    return (one, five, fifteen)


_FDS: dict[str, int] = {}  # shared by every reader: pread has no file position to share
_SIZES: dict[str, int] = {}


def _read_proc(path: str, size: int | None = None) -> bytes:
    """The /proc file *path* through a descriptor kept open, as dool keeps its files open:
    its first *size* bytes, or all of it in one pread at offset 0 (one consistent read)."""
    descriptor = _FDS.get(path)
    if descriptor is None:
        descriptor = _FDS.setdefault(path, os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    if size is not None:
        return os.pread(descriptor, size, 0)
    size = _SIZES.get(path, 1 << 14)
    data = os.pread(descriptor, size, 0)
    while len(data) >= size:  # filled the buffer: there may be more, so read it all again
        size *= 4
        data = os.pread(descriptor, size, 0)
    _SIZES[path] = len(data) + 4096  # room to grow, and no larger a buffer than that
    return data


class ProcReaders:
    """Linux's counters read from /proc through descriptors kept open (as dool does).

    One pread per file per snapshot, at offset 0 into a buffer big enough for the whole
    file, so each file is one consistent read; one method per group.
    """

    def __init__(self) -> None:
        self._vmstat_size: int | None = None
        self._stat: bytes | None = None  # /proc/stat as `cpu` read it, for `system`

    def cpu(self) -> list[int]:
        """Clock ticks (see `parse_stat_cpu`). Keeps the read for `system`, which comes
        next in a snapshot: /proc/stat is read once per sample (dool reads it twice)."""
        self._stat = None
        self._stat = _read_proc("/proc/stat")
        return parse_stat_cpu(self._stat)

    def system(self) -> tuple[int, int]:
        data, self._stat = self._stat, None
        return parse_stat_system(data if data is not None else _read_proc("/proc/stat"))

    def disks(self) -> DeviceCounters:
        return parse_diskstats(_read_proc("/proc/diskstats"))

    def nics(self) -> DeviceCounters:
        return parse_net_dev(_read_proc("/proc/net/dev"))

    def paging(self) -> tuple[int, int]:
        # /proc/vmstat is written line by line as it is read, and pswpin/pswpout come in
        # its first half: read up to a little past where pswpout was last time.
        data = _read_proc("/proc/vmstat", self._vmstat_size)
        try:
            result = parse_vmstat_paging(data)
        except OSError:
            if self._vmstat_size is None:
                raise
            self._vmstat_size = None  # moved, or not there: read the whole file from now on
            data = _read_proc("/proc/vmstat")
            result = parse_vmstat_paging(data)
        if self._vmstat_size is None:
            self._vmstat_size = _vmstat_size(data.find(b"\n", data.find(b"\npswpout ") + 9))
        return result

    def load(self) -> tuple[float, float, float]:
        return parse_loadavg(_read_proc("/proc/loadavg"))

    def readers(self) -> dict[str, Callable[[], Any]]:
        """The group readers, by group name."""
        return {
            "cpu": self.cpu,
            "disk": self.disks,
            "net": self.nics,
            "paging": self.paging,
            "system": self.system,
            "load": self.load,
            "mem": _read_mem,
        }


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
FIELDS = {
    "cpu": "cpu",
    "disk": "disks",
    "net": "nics",
    "paging": "paging",
    "system": "system",
    "load": "load",
    "mem": "mem",
}


_EMPTY_SNAPSHOT: dict[str, Any] = dict.fromkeys(FIELDS.values())
_EMPTY_SAMPLE: dict[str, Any] = dict.fromkeys(SAMPLE_FIELDS)


_PROC_FILES = ("/proc/stat", "/proc/diskstats", "/proc/net/dev", "/proc/vmstat", "/proc/loadavg")


def _devices(
    kind: str, raw: list[bytes], total: _Filter
) -> tuple[list[bytes], tuple[str, ...], list[bool]]:
    """Raw device names; the names, decoded, of the devices the dool total counts; and
    which of the raw ones those are."""
    names = _names(kind, raw)
    if not names:  # none, or a name twice: the general parsers mend it
        msg = f"no {kind}, or a name twice: {raw!r}"
        raise ValueError(msg)
    mask = total.mask_for(names)
    return raw, tuple(compress(names, mask)), mask


class ProcSampler:
    """`RawSampler.sample`'s fast path on Linux, for the default groups (no memory, no
    device asked for by name): the five files read and parsed in `snapshot`, the rates
    in `rates`, with no reader per group, no `DeviceCounters` and no `compute_rates`.

    At a 1 s delay a sample costs mostly the code and data it touches, cold after the
    sleep (one parse takes 4 us warm and 50 us after 10 ms asleep), so the fewer, the
    cheaper: measured in the running command (thread CPU time, 1 s delay), a sample took
    277 us here against 331 us the general way, and a whole loop 394 us against 450. Anything
    unusual (a file that does not parse as expected, devices that changed, a counter that
    went back, no time elapsed) gives None, and `RawSampler` takes the general way; the
    results are `compute_rates`' either way (tests hold them equal).

    A snapshot is a tuple: monotonic and wall time, the 8 cpu tick counters, the disks
    (names, see `_devices`), the sectors read and written of those the total counts, the
    interfaces, the bytes received and sent of those the total counts, pages swapped in
    and out, interrupts, context switches, and the load averages. Only the counted
    devices' counters are converted and kept: the fast path serves the totals alone (no
    device asked for by name), and a partition or loop device costs nothing.
    """

    def __init__(self) -> None:
        for path in _PROC_FILES:
            _read_proc(path)  # opens it, and learns its size
        self._fds = [_FDS[path] for path in _PROC_FILES]
        self._sizes = [_SIZES[path] for path in _PROC_FILES]
        self._disks: tuple[list[bytes], tuple[str, ...], list[bool]] = ([], (), [])
        self._nics: tuple[list[bytes], tuple[str, ...], list[bool]] = ([], (), [])
        self.misses = 0
        """Snapshots in a row that went the general way."""

    def snapshot(self) -> tuple[Any, ...] | None:
        """Read and parse the five files (None if one is not as expected)."""
        fds, sizes, pread = self._fds, self._sizes, os.pread
        try:
            stat = pread(fds[0], sizes[0], 0)
            diskstats = pread(fds[1], sizes[1], 0)
            net_dev = pread(fds[2], sizes[2], 0)
            vmstat = pread(fds[3], sizes[3], 0)  # partly: see parse
            loadavg = pread(fds[4], sizes[4], 0)
            snapshot = (
                self.parse(stat, diskstats, net_dev, vmstat, loadavg)
                if len(stat) < sizes[0]
                and len(diskstats) < sizes[1]
                and len(net_dev) < sizes[2]
                and len(loadavg) < sizes[4]
                else None  # a file no longer fits its buffer
            )
        except (OSError, ValueError):
            snapshot = None
        if snapshot is not None and self.misses:
            self.misses = 0
        return snapshot

    def resize(self) -> None:
        """Take the buffer sizes the general readers found (after a None snapshot), and
        count the miss."""
        self._sizes = [_SIZES.get(path, 1 << 14) for path in _PROC_FILES]
        self.misses += 1

    def parse(
        self, stat: bytes, diskstats: bytes, net_dev: bytes, vmstat: bytes, loadavg: bytes
    ) -> tuple[Any, ...] | None:
        """A snapshot from the five files' contents, as `parse_stat_cpu`,
        `parse_diskstats` (...) read them; None, or ValueError, if one is not as usual
        (a device name twice, say, which the general parsers mend)."""
        cpu = stat[: stat.find(b"\n")].split()
        intr = stat.find(b"\nintr ") + 6
        ctxt = stat.find(b"\nctxt ") + 6
        disk = diskstats.split()
        width = len(diskstats[: diskstats.find(b"\n")].split())
        net_body = net_dev[net_dev.find(b"\n", net_dev.find(b"\n") + 1) + 1 :]
        net = net_body.replace(b":", b" ").split()
        swapped_in = vmstat.find(b"\npswpin ") + 8
        swapped_out = vmstat.find(b"\npswpout ") + 9
        vmstat_end = vmstat.find(b"\n", swapped_out)
        if (
            len(cpu) < 9
            or cpu[0] != b"cpu"
            or intr < 6
            or ctxt < 6
            or width < 10
            or len(disk) != width * diskstats.count(b"\n")
            or not diskstats.endswith(b"\n")
            or len(net) != 17 * net_body.count(b"\n")
            or len(net) != 17 * net_body.count(b":")
            or swapped_in < 8
            or swapped_out < 9
            or vmstat_end < 0
        ):
            return None
        self._sizes[3] = _vmstat_size(vmstat_end)
        if (disks := self._disks)[0] != (names := disk[2::width]):
            disks = self._disks = _devices("disk", names, _DISK_TOTAL)
        if (nics := self._nics)[0] != (names := net[::17]):
            nics = self._nics = _devices("net", names, _NIC_TOTAL)
        one, five, fifteen = loadavg.split(None, 3)[:3]
        counted_disks, counted_nics = disks[2], nics[2]
        return (
            time.monotonic(),
            time.time(),
            [*map(int, cpu[1:9])],
            disks,
            [*map(int, compress(disk[5::width], counted_disks))],
            [*map(int, compress(disk[9::width], counted_disks))],
            nics,
            [*map(int, compress(net[1::17], counted_nics))],
            [*map(int, compress(net[9::17], counted_nics))],
            int(vmstat[swapped_in : vmstat.find(b"\n", swapped_in)]),
            int(vmstat[swapped_out:vmstat_end]),
            int(stat[intr : stat.find(b"\n", intr)].split(None, 1)[0]),
            int(stat[ctxt : stat.find(b"\n", ctxt)]),
            (float(one), float(five), float(fifteen)),
        )

    @staticmethod
    def rates(before: tuple[Any, ...], after: tuple[Any, ...]) -> dict[str, Any] | None:
        """`compute_rates` of two snapshots, or None where it would have to mend one."""
        (now_clock, now, cpu, disks, reads, writes, nics, received, sent, *counters) = after
        elapsed = now_clock - before[0]
        ticks = [*map(sub, cpu, before[2])]
        if elapsed < _MIN_ELAPSED or disks is not before[3] or nics is not before[6]:
            return None
        user, nice, system, idle, iowait, irq, softirq, steal = ticks
        usr = user + nice + irq + softirq
        total = usr + system + idle + iowait + steal
        reads = [*map(sub, reads, before[4])]
        writes = [*map(sub, writes, before[5])]
        received = [*map(sub, received, before[7])]
        sent = [*map(sub, sent, before[8])]
        if total <= 0 or min([*ticks, *reads, *writes, *received, *sent]) < 0:
            return None
        read, written = sum(reads) * _SECTOR, sum(writes) * _SECTOR
        received, sent = sum(received), sum(sent)
        swapped_in, swapped_out, interrupts, switches = map(sub, counters, before[9:13])
        swapped_in *= _PAGE_SIZE
        swapped_out *= _PAGE_SIZE
        load = counters[4]
        # each percentage at most 100, and each rate `_rate`'s, inline (elapsed is checked)
        return {
            "time": now,
            "elapsed": elapsed,
            "usr": p if (p := 100.0 * usr / total) < 100.0 else 100.0,
            "sys": p if (p := 100.0 * system / total) < 100.0 else 100.0,
            "idl": p if (p := 100.0 * idle / total) < 100.0 else 100.0,
            "wai": p if (p := 100.0 * iowait / total) < 100.0 else 100.0,
            "stl": p if (p := 100.0 * steal / total) < 100.0 else 100.0,
            "disk_read": read / elapsed if read > 0 else 0.0,
            "disk_write": written / elapsed if written > 0 else 0.0,
            "net_recv": received / elapsed if received > 0 else 0.0,
            "net_send": sent / elapsed if sent > 0 else 0.0,
            "page_in": swapped_in / elapsed if swapped_in > 0 else 0.0,
            "page_out": swapped_out / elapsed if swapped_out > 0 else 0.0,
            "interrupts": interrupts / elapsed if interrupts > 0 else 0.0,
            "ctx_switches": switches / elapsed if switches > 0 else 0.0,
            "load1": load[0],
            "load5": load[1],
            "load15": load[2],
            "mem_used": None,
            "mem_free": None,
            "mem_cached": None,
            "mem_available": None,
            "disks": {},
            "nics": {},
            "missing": (),
        }

    @staticmethod
    def general(snapshot: tuple[Any, ...]) -> dict[str, Any]:
        """*snapshot* as `RawSampler.snapshot` gives it, for `compute_rates` (with the
        counted devices only: all its totals need)."""
        (now_clock, now, cpu, disks, reads, writes, nics, received, sent, *counters) = snapshot
        swapped_in, swapped_out, interrupts, switches, load = counters
        return {
            "cpu": cpu,
            "disks": DeviceCounters(disks[1], reads, writes, _SECTOR),
            "nics": DeviceCounters(nics[1], received, sent),
            "paging": (swapped_in * _PAGE_SIZE, swapped_out * _PAGE_SIZE),
            "system": (interrupts, switches),
            "load": load,
            "mem": None,
            "monotonic": now_clock,
            "time": now,
            "groups": GROUPS[:-1],
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
        proc = ProcReaders() if _proc_readable() else None
        chosen = dict(READERS if proc is None else proc.readers())
        if readers:
            chosen.update(readers)
        self.cpu_ticks = _CLOCK_TICKS if proc is not None and chosen["cpu"] == proc.cpu else 0
        """What ``snapshot()["cpu"]`` counts per second: clock ticks (/proc), or 0 for
        seconds already (psutil, or a replaced reader)."""
        self._groups = tuple(g for g in GROUPS if g != "mem" or mem)
        self._plan = [(group, FIELDS[group], chosen[group]) for group in self._groups]
        self._previous: dict[str, Any] | tuple[Any, ...] | None = None
        self._fast: ProcSampler | None = None
        if proc is not None and not readers and not (mem or self.disks or self.nics):
            try:
                self._fast = ProcSampler()
            except OSError:  # /proc/vmstat or /proc/loadavg unreadable: the general way
                self._fast = None
        self._warned: set[str] = set()

    def snapshot(self) -> dict[str, Any]:
        """Read every group's counters now (a group that fails becomes None)."""
        values: dict[str, Any] = _EMPTY_SNAPSHOT.copy()
        for group, name, reader in self._plan:
            try:
                values[name] = reader()
            except Exception as exc:
                self._warn(group, exc)
        values["monotonic"] = time.monotonic()
        values["time"] = time.time()
        values["groups"] = self._groups
        return values

    def _warn(self, group: str, exc: Exception) -> None:
        if group not in self._warned:
            self._warned.add(group)
            print(
                f"devutils.system: cannot read {group} counters ({exc}); reporting them as missing",
                file=sys.stderr,
            )

    def sample(self) -> dict[str, Any] | None:
        """Return the rates since the previous call (None on the first call)."""
        fast = self._fast
        current: dict[str, Any] | tuple[Any, ...] | None = None
        if fast is not None:
            current = fast.snapshot()
        if current is None:
            current = self.snapshot()
            if fast is not None:
                fast.resize()
                if fast.misses >= 3:  # not a passing oddity: the general way from now on
                    self._fast = None
        previous, self._previous = self._previous, current
        if previous is None:
            return None
        if type(previous) is tuple:
            if type(current) is tuple and (rates := ProcSampler.rates(previous, current)):
                return rates
            previous = ProcSampler.general(previous)
        if type(current) is tuple:
            current = ProcSampler.general(current)
        assert isinstance(previous, dict)
        assert isinstance(current, dict)
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
