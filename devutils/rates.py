"""dool's rates between two readings of the kernel's counters, and the records they fill.

The plain layer under `devutils.system`, and the one definition of its records:
`Snapshot` (the counters at one moment), `Sample` (the rates over one interval) and its
`DiskRate` and `NicRate`. They are named tuples, so that ``devutils stat`` starts without
importing `dataclasses` (which imports `inspect`; the cost is in docs/system.md and
`bench/bench_startup.py`). `compute_rates` is the one place the rates are computed;
`CounterSampler` reads and samples on a schedule. The counters are read by
`devutils.kernelcounters` (`/proc` on Linux, psutil elsewhere), whose `ProcReader`,
`psutil_readers` and `DeviceCounters` this module re-exports.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles every string
# annotation into a ForwardRef, which would slow every ``devutils stat`` start.

import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from operator import sub
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from devutils.kernelcounters import DeviceCounters, ProcReader, default_readers, psutil_readers
from devutils.messages import describe, shown

__all__ = [
    "DISK_FILTER",
    "GROUPS",
    "MAX_INTERVAL",
    "NIC_FILTER",
    "CounterSampler",
    "DeviceCounters",
    "DiskRate",
    "NicRate",
    "ProcReader",
    "Sample",
    "Snapshot",
    "compute_rates",
    "psutil_readers",
]

DISK_FILTER = re.compile(
    r"^([hsv]d[a-z]+\d+|xvd[a-z]+\d+|cciss/c\d+d\d+p\d+|dm-\d+|md\d+|mmcblk\d+p\d+|VxVM\d+"
    r"|nvme\d+n\d+p\d+|loop\d+p\d+)$"
)
r"""Devices left out of the disk total: partitions, device-mapper and md devices. dool's
own pattern, but for the partitions it misses (``xvda1``, ``mmcblk0p1`` to ``p9``: its
``mmcblk\d+p\d0`` takes ``p10``, ``p20``, ...; ``loop0p1``), which it counts twice."""
NIC_FILTER = re.compile(r"^(lo\d*|bond\d+|face|.+\.\d+)$")
"""Interfaces dool leaves out of its network total: loopback (``lo``; ``lo0`` on macOS and
the BSDs, which dool does not run on), bonds and VLANs."""
MAX_INTERVAL: Final = 366 * 86_400
"""The longest interval `Sampler.run` takes, in seconds: a year (``time.sleep`` ends
short of 10**300)."""
GROUPS = ("cpu", "disk", "net", "paging", "system", "load", "mem")
"""The groups of counters, in the order they are read."""
FIELDS = {
    "cpu": "cpu",
    "disk": "disks",
    "net": "nics",
    "paging": "paging",
    "system": "system",
    "load": "load",
    "mem": "mem",
}
"""Each group's field in a `Snapshot`."""

_MIN_ELAPSED = 1e-9
"""An interval shorter than a nanosecond counts as no time: every rate over it is 0."""
_CPU_FIELDS = 8
"""user, nice, system, idle, iowait, irq, softirq, steal."""
_PERCENT = 100.0
_SIZES: Final = {"cpu": _CPU_FIELDS, "paging": 2, "system": 2, "load": 3, "mem": 4}
"""How many counters each group of a `Snapshot` but disks and nics holds (cpu: as many
or more)."""
_PAIR = 2
_TICKS = 2**53
"""Ticks of a schedule counted exactly; a run further behind restarts it from now."""


# -- records ------------------------------------------------------------------------------


class Snapshot(NamedTuple):
    """Raw cumulative counters at one moment (None: the group could not be read).

    ``cpu`` holds the cumulative seconds user, nice, system, idle, iowait, irq, softirq
    and steal; ``disks`` name -> (read bytes, written bytes); ``nics`` name -> (received,
    sent bytes); ``paging`` (swapped-in bytes, swapped-out bytes); ``system``
    (interrupts, context switches); ``load`` the 1, 5 and 15 minute averages; ``mem``
    (used, free, cached, available) bytes.

    Examples:
        >>> snapshot = Snapshot(12.5, 1700000000.0, disks={"sda": (4096, 0)}, load=(0.5, 0.3, 0.1))
        >>> snapshot.disks["sda"], snapshot.load[0], snapshot.cpu is None
        ((4096, 0), 0.5, True)
    """

    monotonic: float
    time: float
    cpu: tuple[float, ...] | None = None
    disks: Mapping[str, tuple[int, int]] | None = None
    nics: Mapping[str, tuple[int, int]] | None = None
    paging: tuple[int, int] | None = None
    system: tuple[int, int] | None = None
    load: tuple[float, float, float] | None = None
    mem: tuple[int, int, int, int] | None = None
    groups: tuple[str, ...] = ("cpu", "disk", "net", "paging", "system", "load")
    """The groups this snapshot tried to read."""


class DiskRate(NamedTuple):
    """Bytes per second read and written by one disk.

    Examples:
        >>> before = Snapshot(0.0, 100.0, disks={"sda": (0, 0)})
        >>> after = Snapshot(2.0, 102.0, disks={"sda": (4096, 8192)})
        >>> compute_rates(before, after, disks=["sda"]).disks["sda"]
        DiskRate(read=2048.0, write=4096.0)
    """

    read: float
    write: float


class NicRate(NamedTuple):
    """Bytes per second received and sent by one network interface.

    Examples:
        >>> before = Snapshot(0.0, 100.0, nics={"eth0": (0, 0)})
        >>> after = Snapshot(2.0, 102.0, nics={"eth0": (1000, 500)})
        >>> compute_rates(before, after, nics=["eth0"]).nics["eth0"]
        NicRate(recv=500.0, send=250.0)
    """

    recv: float
    send: float


class Sample(NamedTuple):
    """Rates over one interval, ending at ``time`` (Unix seconds).

    cpu columns are percentages that sum to 100 (None if cpu could not be read, or its
    counters' sum went back: a cpu went offline); byte rates are bytes per second;
    ``missing`` names the groups that could not be read.

    Examples:
        >>> before = Snapshot(0.0, 100.0, disks={"sda": (0, 0)}, nics={"eth0": (0, 0)})
        >>> after = Snapshot(2.0, 102.0, disks={"sda": (4096, 8192)}, nics={"eth0": (1000, 500)})
        >>> sample = compute_rates(before, after)
        >>> sample.time, sample.elapsed, sample.disk_read, sample.net_send, sample.usr
        (102.0, 2.0, 2048.0, 250.0, None)
        >>> sample.missing
        ('cpu', 'paging', 'system', 'load')
    """

    time: float
    elapsed: float
    usr: float | None = None
    sys: float | None = None
    idl: float | None = None
    wai: float | None = None
    stl: float | None = None
    disk_read: float | None = None
    disk_write: float | None = None
    net_recv: float | None = None
    net_send: float | None = None
    page_in: float | None = None
    page_out: float | None = None
    interrupts: float | None = None
    ctx_switches: float | None = None
    load1: float | None = None
    load5: float | None = None
    load15: float | None = None
    mem_used: int | None = None
    mem_free: int | None = None
    mem_cached: int | None = None
    mem_available: int | None = None
    disks: Mapping[str, DiskRate] = MappingProxyType({})
    nics: Mapping[str, NicRate] = MappingProxyType({})
    missing: tuple[str, ...] = ()


# -- rates --------------------------------------------------------------------------------


class _Filter:
    """Which devices a dool total counts: a filter's verdicts, remembered by name."""

    __slots__ = ("_pattern", "_verdicts")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern
        self._verdicts: dict[str, bool] = {}

    def counted(self, name: str) -> bool:
        verdict = self._verdicts.get(name)
        if verdict is None:
            verdict = self._verdicts[name] = self._pattern.match(name) is None
        return verdict


_DISK_TOTAL = _Filter(DISK_FILTER)
_NIC_TOTAL = _Filter(NIC_FILTER)


def _rate(delta: float, elapsed: float) -> float:
    """Never negative, never infinite: a counter that went back, or no time, gives 0."""
    if delta <= 0 or elapsed < _MIN_ELAPSED:
        return 0.0
    return delta / elapsed


def _percent(part: float, total: float) -> float:
    """*part* of *total* in percent, at most 100 (rounding can give 100.00000000000001)."""
    return min(_PERCENT * part / total, _PERCENT)


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
        isinstance(after, DeviceCounters)
        and isinstance(before, DeviceCounters)
        and after.names == before.names
        and after.unit == before.unit
    ):  # the usual case: the same devices in the same order, so subtract lists, in C
        mask = [total_filter.counted(name) for name in after.names]
        firsts = [max(delta, 0) for delta in map(sub, after.first, before.first)]
        seconds = [max(delta, 0) for delta in map(sub, after.second, before.second)]
        first = sum(compress(firsts, mask)) * after.unit
        second = sum(compress(seconds, mask)) * after.unit
    else:
        first = second = 0
        for name, (new_first, new_second) in after.items():
            old = before.get(name)
            if old is not None and total_filter.counted(name):
                first += max(new_first - old[0], 0)
                second += max(new_second - old[1], 0)
    total = (_rate(first, elapsed), _rate(second, elapsed))
    per_device = {}
    for name in wanted:
        new, old = after.get(name), before.get(name)
        if name == "total":
            per_device[name] = total
        elif new is not None and old is not None:
            per_device[name] = (_rate(new[0] - old[0], elapsed), _rate(new[1] - old[1], elapsed))
    return total, per_device


def _cpu_rates(old: Sequence[float], new: Sequence[float]) -> dict[str, float | None]:
    """dool's cpu columns: usr = user + nice + irq + softirq, sys, idl, wai and stl, each
    a percentage of the sum of the five (a counter that went back counting 0, as steal
    does on some hypervisors). None where their sum went back: the sums over every cpu
    drop when one goes offline, and the interval's split is then unknown."""
    if sum(new[:_CPU_FIELDS]) < sum(old[:_CPU_FIELDS]):  # (the sums: psutil's are floats)
        return dict.fromkeys(("usr", "sys", "idl", "wai", "stl"))
    deltas = list(map(sub, new[:_CPU_FIELDS], old[:_CPU_FIELDS]))
    user, nice, system, idle, iowait, irq, softirq, steal = (max(delta, 0) for delta in deltas)
    usr = user + nice + irq + softirq
    total = usr + system + idle + iowait + steal
    if total <= 0:  # no time passed on the cpu clock: call it idle
        return {"usr": 0.0, "sys": 0.0, "idl": _PERCENT, "wai": 0.0, "stl": 0.0}
    parts = {"usr": usr, "sys": system, "idl": idle, "wai": iowait, "stl": steal}
    return {name: _percent(part, total) for name, part in parts.items()}


def _device_names(argument: str, value: object) -> tuple[str, ...]:
    """The devices *value* names, as a tuple (a set or a generator too, read once).

    Raises:
        TypeError: If *value* is a str or bytes (whose characters are no names), is not
            iterable or holds a name that is not a str; *argument* names it.
    """
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        names = tuple(value)
        if all(isinstance(name, str) for name in names):
            return names
    msg = f"{argument} must be a sequence of names, got {shown(value)}"
    raise TypeError(msg)


def _check_snapshot(argument: str, snapshot: object) -> None:
    """Refuse a *snapshot* that is not a `Snapshot`, whose ``monotonic`` or ``time`` is not
    a finite number of seconds, or whose group does not hold its number of counters, each
    a finite number; *argument* names it."""
    if not isinstance(snapshot, Snapshot):
        msg = f"{argument} must be a Snapshot, got {describe(snapshot)}"
        raise TypeError(msg)
    for name in ("monotonic", "time"):
        clock: object = getattr(snapshot, name)
        if isinstance(clock, bool) or not isinstance(clock, int | float):
            msg = f"{argument}.{name} must be a number of seconds, got {describe(clock)}"
            raise TypeError(msg)
        if not -math.inf < clock < math.inf:  # (NaN fails too; no float(): an int may be huge)
            msg = f"{argument}.{name} must be finite, got {shown(clock)}"
            raise ValueError(msg)
    for field, size in _SIZES.items():
        counters: object = getattr(snapshot, field)
        if counters is None:
            continue
        if not isinstance(counters, Sequence):
            msg = (
                f"{argument}.{field} must be a tuple of counters or None, got {describe(counters)}"
            )
            raise TypeError(msg)
        if len(counters) != size and (field != "cpu" or len(counters) < size):
            wanted = f"{size} or more" if field == "cpu" else size
            msg = f"{argument}.{field} must hold {wanted} counters, got {shown(counters)}"
            raise ValueError(msg)
        _check_counters(f"{argument}.{field}", counters)
    _check_devices(f"{argument}.disks", snapshot.disks)
    _check_devices(f"{argument}.nics", snapshot.nics)


def _check_devices(where: str, devices: object) -> None:
    """Refuse *devices* (the field *where*) unless None or a mapping of names to pairs.

    A `DeviceCounters`, what every reader gives, was checked when it was built: only a
    plain mapping's pairs are looked at one by one.
    """
    if devices is None or isinstance(devices, DeviceCounters):
        return
    if not isinstance(devices, Mapping):
        msg = f"{where} must be a mapping of names to pairs or None, got {describe(devices)}"
        raise TypeError(msg)
    for name, pair in devices.items():
        if not isinstance(name, str) or not isinstance(pair, Sequence):
            msg = (
                f"{where} must map names to pairs of counters, got {shown(name)}: {describe(pair)}"
            )
            raise TypeError(msg)
        if len(pair) != _PAIR:
            msg = f"{where} must map names to pairs of counters, got {shown(name)}: {shown(pair)}"
            raise ValueError(msg)
        _check_counters(f"{where}[{name!r}]", pair)


def _check_counters(where: str, counters: Sequence[object]) -> None:
    """Refuse counters (the field *where*) that are not numbers (a bool is not one), or
    not finite as a float: a rate of them would be infinite, NaN or an OverflowError."""
    for value in counters:
        if isinstance(value, bool) or not isinstance(value, int | float):
            msg = f"{where} must hold numbers, got {describe(value)}"
            raise TypeError(msg)
        if not abs(value) <= sys.float_info.max:  # (NaN fails too; an int is compared exactly)
            msg = f"{where} must hold finite numbers, got {shown(value)}"
            raise ValueError(msg)


def compute_rates(
    before: Snapshot,
    after: Snapshot,
    *,
    disks: Sequence[str] = (),
    nics: Sequence[str] = (),
) -> Sample:
    """The rates between two snapshots, as a `Sample` (None where not measured).

    Its ``disks`` and ``nics`` hold the rates of the devices *disks* and *nics* name, by
    name. See `devutils.system.compute_sample`.

    Raises:
        TypeError: If *before* or *after* is not a `Snapshot` (of numbers), or *disks* or
            *nics* is not a sequence of names (a str is one name's letters: ``["sda"]``,
            not ``"sda"``).
        ValueError: If *after* was taken before *before* (its ``monotonic`` is less),
            either's ``monotonic``, ``time`` or a counter is not finite, or a group holds
            too few or too many counters (cpu 8 or more, as many in both).

    Examples:
        >>> before = Snapshot(0.0, 100.0, cpu=(10, 0, 5, 80, 5, 0, 0, 0), system=(1000, 500))
        >>> after = Snapshot(2.0, 102.0, cpu=(12, 0, 6, 81, 5, 1, 0, 0), system=(1400, 900))
        >>> rates = compute_rates(before, after)
        >>> rates.usr, rates.sys, rates.idl, rates.interrupts
        (60.0, 20.0, 20.0, 200.0)
    """
    _check_snapshot("before", before)
    _check_snapshot("after", after)
    if after.monotonic < before.monotonic:
        msg = (
            f"before must be taken no later than after, got before.monotonic "
            f"{shown(before.monotonic)} and after.monotonic {shown(after.monotonic)} (swapped?)"
        )
        raise ValueError(msg)
    if after.cpu is not None and before.cpu is not None and len(after.cpu) != len(before.cpu):
        msg = (
            f"before.cpu and after.cpu must hold as many counters, got {len(before.cpu)} "
            f"and {len(after.cpu)}"
        )
        raise ValueError(msg)
    return _compute_rates(before, after, _device_names("disks", disks), _device_names("nics", nics))


def _compute_rates(
    before: Snapshot, after: Snapshot, disks: Sequence[str], nics: Sequence[str]
) -> Sample:
    """`compute_rates` past its checks, for `CounterSampler`: its snapshots are its own
    and its names were checked when it was built, so a sample costs no check."""
    elapsed = after.monotonic - before.monotonic
    values: dict[str, Any] = {}
    missing = tuple(
        group
        for group in GROUPS
        if group in after.groups
        and (
            getattr(after, FIELDS[group]) is None
            or (group not in ("load", "mem") and getattr(before, FIELDS[group]) is None)
        )
    )
    if after.cpu is not None and before.cpu is not None:
        values.update(_cpu_rates(before.cpu, after.cpu))
    disk_rates: dict[str, DiskRate] = {}
    if after.disks is not None and before.disks is not None:
        total, per_disk = _device_rates(before.disks, after.disks, elapsed, _DISK_TOTAL, disks)
        values["disk_read"], values["disk_write"] = total
        disk_rates = {name: DiskRate(*pair) for name, pair in per_disk.items()}
    nic_rates: dict[str, NicRate] = {}
    if after.nics is not None and before.nics is not None:
        total, per_nic = _device_rates(before.nics, after.nics, elapsed, _NIC_TOTAL, nics)
        values["net_recv"], values["net_send"] = total
        nic_rates = {name: NicRate(*pair) for name, pair in per_nic.items()}
    for new, old, first, second in (
        (after.paging, before.paging, "page_in", "page_out"),
        (after.system, before.system, "interrupts", "ctx_switches"),
    ):
        if new is not None and old is not None:
            values[first] = _rate(new[0] - old[0], elapsed)
            values[second] = _rate(new[1] - old[1], elapsed)
    if after.load is not None:
        values["load1"], values["load5"], values["load15"] = after.load
    if after.mem is not None:
        mem = after.mem
        values["mem_used"], values["mem_free"], values["mem_cached"] = mem[:3]
        values["mem_available"] = mem[3]
    return Sample(after.time, elapsed, disks=disk_rates, nics=nic_rates, missing=missing, **values)


# -- sampling -----------------------------------------------------------------------------


class CounterSampler:
    """`devutils.system.Sampler` without its warnings: `Snapshot` and `Sample` records.

    A group whose reader fails is None in the snapshot and listed in the sample's
    ``missing``; ``errors`` keeps the first failure of each group (group -> message).

    Examples:
        >>> sampler = CounterSampler(readers={"load": lambda: (0.5, 0.25, 0.125)})
        >>> sampler.snapshot().load
        (0.5, 0.25, 0.125)
        >>> sampler.sample() is None  # primes
        True
        >>> [sample.load1 for sample in sampler.run(interval=0.01, count=2)]
        [0.5, 0.5]
    """

    def __init__(
        self,
        *,
        disks: Iterable[str] = (),
        nics: Iterable[str] = (),
        mem: bool = False,
        readers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        chosen_disks, chosen_nics = _device_names("disks", disks), _device_names("nics", nics)
        flag: object = mem
        if not isinstance(flag, bool):
            msg = f"mem must be a bool, got {describe(flag)}"
            raise TypeError(msg)
        self.disks = chosen_disks
        self.nics = chosen_nics
        self.mem = mem
        given: object = {} if readers is None else readers
        if not isinstance(given, Mapping):
            msg = f"readers must be a mapping of group names to functions, got {describe(given)}"
            raise TypeError(msg)
        for group, reader in given.items():
            if not isinstance(group, str):
                msg = f"readers must be keyed by group names, got {describe(group)}"
                raise TypeError(msg)
            if group not in GROUPS:  # (a reader of a group nobody reads would go unused)
                msg = f"readers must name groups of {', '.join(GROUPS)}, got {shown(group)}"
                raise ValueError(msg)
            if not callable(reader):  # (each snapshot would warn that it is not callable)
                msg = (
                    f"readers must map group names to functions, got {describe(reader)} for {group}"
                )
                raise TypeError(msg)
        chosen = default_readers()
        chosen.update(given)
        self.groups = tuple(g for g in GROUPS if g != "mem" or mem)
        self._plan = [(group, FIELDS[group], chosen[group]) for group in self.groups]
        self._previous: Snapshot | None = None
        self.errors: dict[str, str] = {}
        """The first failure of each group that could not be read: group -> message."""

    def snapshot(self) -> Snapshot:
        """Read every group's counters now (a group that fails becomes None).

        Examples:
            >>> def unreadable():
            ...     raise OSError("no loadavg here")
            >>> sampler = CounterSampler(readers={"load": unreadable})
            >>> sampler.snapshot().load, sampler.errors["load"]
            (None, 'no loadavg here')
        """
        values: dict[str, Any] = {}
        for group, name, reader in self._plan:
            try:
                values[name] = reader()
            except Exception as exc:
                self.errors.setdefault(group, str(exc) or type(exc).__name__)
        return Snapshot(time.monotonic(), time.time(), groups=self.groups, **values)

    def sample(self) -> Sample | None:
        """Return the rates since the previous call (None on the first call).

        Examples:
            >>> cpu = iter([(10, 0, 5, 80, 5, 0, 0, 0), (12, 0, 6, 81, 5, 1, 0, 0)])
            >>> sampler = CounterSampler(readers={"cpu": lambda: next(cpu)})
            >>> sampler.sample() is None  # the first call primes
            True
            >>> sample = sampler.sample()
            >>> sample.usr, sample.sys, sample.idl, sample.elapsed >= 0
            (60.0, 20.0, 20.0, True)
        """
        current = self.snapshot()
        previous, self._previous = self._previous, current
        if previous is None:
            return None
        return _compute_rates(previous, current, self.disks, self.nics)

    def run(self, interval: float = 1.0, count: int | None = None) -> Iterator[Sample]:
        """Yield a sample every *interval* seconds, *count* times (forever if None).

        The schedule is absolute (start + k x interval), so it does not drift; a late
        tick is skipped rather than bunched. The first sample comes one interval after
        the call.

        Raises:
            TypeError: If *interval* is not a number or *count* not an int or None.
            ValueError: If *interval* is not positive or above `MAX_INTERVAL`, or *count* < 1.

        Examples:
            >>> sampler = CounterSampler(readers={"load": lambda: (0.5, 0.25, 0.125)})
            >>> [sample.load15 for sample in sampler.run(interval=0.01, count=3)]
            [0.125, 0.125, 0.125]
            >>> sampler.run(interval=0)
            Traceback (most recent call last):
            ...
            ValueError: interval must be a positive number of seconds, at most 31,622,400 ...
        """
        if isinstance(interval, bool) or not isinstance(interval, int | float):
            msg = f"interval must be a number of seconds, got {describe(interval)}"
            raise TypeError(msg)
        if not (interval > 0 and interval <= MAX_INTERVAL):  # (NaN fails both; no float())
            msg = (
                f"interval must be a positive number of seconds, at most {MAX_INTERVAL:,} "
                f"(a year), got {shown(interval, 60)}"
            )
            raise ValueError(msg)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            msg = f"count must be an int or None, got {describe(count)}"
            raise TypeError(msg)
        if count is not None and count < 1:
            msg = f"count must be a positive int or None, got {shown(count)}"
            raise ValueError(msg)
        return self._iter_samples(float(interval), count)

    def _iter_samples(self, interval: float, count: int | None) -> Iterator[Sample]:
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
            if behind > 0:  # late: the ticks that passed are skipped
                ticks = behind / interval  # (inf for an interval of 5e-324 s)
                deadline += math.ceil(ticks) * interval if ticks < _TICKS else behind + interval
