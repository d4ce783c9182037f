"""dool/dstat-style resource sampling: cpu, disk, net, paging, system, load and memory.

`Sampler` reads the counters dool reads and turns two snapshots into rates: cpu
percentages exactly as dool computes them, disk and network bytes per second over the
devices dool's totals count, swap paging, interrupts, context switches and load. Rates
divide by the measured interval, counters that go backwards or devices that come and go
never give a negative or infinite rate, and a group that cannot be read is reported in
``Sample.missing`` (with one `SamplingWarning`) instead of failing the others.

The readings and the arithmetic are `devutils.rates`'; this module gives them types.
GPUs are `devutils.gpu`'s, and telling dstat, pcp-dstat and dool apart `devutils.which_dstat`'s.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from devutils.rates import (
    DISK_FILTER,
    NIC_FILTER,
    CounterSampler,
    DeviceCounters,
    compute_rates,
)

__all__ = [
    "DISK_FILTER",
    "NIC_FILTER",
    "DeviceCounters",
    "DiskRate",
    "NicRate",
    "Sample",
    "Sampler",
    "SamplingWarning",
    "Snapshot",
    "compute_sample",
    "sample",
]


class SamplingWarning(UserWarning):
    """A group of counters could not be read; its fields are None and it is in ``missing``."""


# -- snapshots and rates ------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """Raw cumulative counters at one moment (None: the group could not be read).

    ``cpu`` holds the cumulative seconds user, nice, system, idle, iowait, irq, softirq
    and steal; ``disks`` name -> (read bytes, written bytes); ``nics`` name -> (received,
    sent bytes); ``paging`` (swapped-in bytes, swapped-out bytes); ``system``
    (interrupts, context switches); ``load`` the 1, 5 and 15 minute averages; ``mem``
    (used, free, cached, available) bytes.
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


@dataclass(frozen=True)
class DiskRate:
    """Bytes per second read and written by one disk."""

    read: float
    write: float


@dataclass(frozen=True)
class NicRate:
    """Bytes per second received and sent by one network interface."""

    recv: float
    send: float


@dataclass(frozen=True)
class Sample:
    """Rates over one interval, ending at ``time`` (Unix seconds).

    cpu columns are percentages that sum to 100 (None if cpu could not be read); byte
    rates are bytes per second; ``missing`` names the groups that could not be read.
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
    disks: Mapping[str, DiskRate] = field(default_factory=dict)
    nics: Mapping[str, NicRate] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


def compute_sample(
    before: Snapshot,
    after: Snapshot,
    *,
    disks: Sequence[str] = (),
    nics: Sequence[str] = (),
) -> Sample:
    """Turn two snapshots into a `Sample` of rates, dool's way, but safely.

    cpu: usr = user + nice + irq + softirq, sys, idl, wai and stl, each as a percentage of
    the sum of the five deltas (negative deltas count as 0, as a counter that went back
    means nothing was measured). Disk and network totals sum the devices dool counts
    (see `DISK_FILTER`, `NIC_FILTER`) that exist in both snapshots. Rates divide by the
    measured elapsed time; none is negative or infinite.

    Examples:
        >>> a = Snapshot(0.0, 100.0, cpu=(10, 0, 5, 80, 5, 0, 0, 0), system=(1000, 500))
        >>> b = Snapshot(2.0, 102.0, cpu=(12, 0, 6, 81, 5, 1, 0, 0), system=(1400, 900))
        >>> s = compute_sample(a, b)
        >>> s.usr, s.sys, s.idl, s.interrupts, s.ctx_switches
        (60.0, 20.0, 20.0, 200.0, 200.0)
    """
    rates = compute_rates(vars(before), vars(after), disks=disks, nics=nics)
    return _sample(rates)


def _sample(rates: dict[str, Any]) -> Sample:
    rates["disks"] = {name: DiskRate(*pair) for name, pair in rates["disks"].items()}
    rates["nics"] = {name: NicRate(*pair) for name, pair in rates["nics"].items()}
    return Sample(**rates)


class Sampler:
    """Sample cpu, disk, net, paging, system and load rates, dool's way.

    ``sample()`` returns the rates since the previous call; the first call only primes
    the counters and returns None. ``run()`` yields samples on an absolute schedule.

    Args:
        disks: Disks to report one by one in ``Sample.disks`` (``"total"`` allowed). A
            name that is not there at both ends of an interval is left out of that
            sample's mapping: read it with ``.get()``.
        nics: Interfaces to report one by one in ``Sample.nics`` (``"lo"`` and
            ``"total"`` allowed; left out the same way).
        mem: Also read memory (used, free, cached, available).
        readers: Replacement counter readers by group name, for tests.

    Examples:
        >>> sampler = Sampler()
        >>> sampler.sample() is None           # primes
        True
        >>> s = sampler.sample()
        >>> round(s.usr + s.sys + s.idl + s.wai + s.stl) if s.usr is not None else 100
        100
    """

    def __init__(
        self,
        *,
        disks: Sequence[str] = (),
        nics: Sequence[str] = (),
        mem: bool = False,
        readers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self._counters = CounterSampler(disks=disks, nics=nics, mem=mem, readers=readers)
        self.disks = self._counters.disks
        self.nics = self._counters.nics
        self.mem = self._counters.mem
        self._warned: set[str] = set()

    def snapshot(self) -> Snapshot:
        """Read every group's counters now (a group that fails becomes None).

        Examples:
            >>> snapshot = Sampler(readers={"load": lambda: (0.5, 0.25, 0.125)}).snapshot()
            >>> snapshot.load
            (0.5, 0.25, 0.125)
        """
        snapshot = Snapshot(**self._counters.snapshot())
        self._warn()
        return snapshot

    def sample(self) -> Sample | None:
        """Return the rates since the previous call (None on the first call)."""
        rates = self._counters.sample()
        self._warn()
        return None if rates is None else _sample(rates)

    def run(self, interval: float = 1.0, count: int | None = None) -> Iterator[Sample]:
        """Yield a sample every *interval* seconds, *count* times (forever if None).

        The schedule is absolute (start + k x interval), so it does not drift; a late
        tick is skipped rather than bunched. The first sample comes one interval after
        the call.

        Raises:
            TypeError: If *interval* is not a number or *count* not an int or None.
            ValueError: If *interval* is not positive and finite, or *count* < 1.

        Examples:
            >>> samples = list(Sampler().run(interval=0.05, count=2))
            >>> len(samples), all(sample.elapsed > 0 for sample in samples)
            (2, True)
        """
        rates = self._counters.run(interval, count)
        return (self._warned_sample(r) for r in rates)

    def _warned_sample(self, rates: dict[str, Any]) -> Sample:
        self._warn()
        return _sample(rates)

    def _warn(self) -> None:
        """One `SamplingWarning` for each group that could not be read, the first time."""
        for group, reason in self._counters.errors.items():
            if group not in self._warned:
                self._warned.add(group)
                message = f"cannot read {group} counters ({reason}); reporting them as missing"
                warnings.warn(message, SamplingWarning, stacklevel=3)


def sample(interval: float = 1.0, *, mem: bool = False) -> Sample:
    """Block for *interval* seconds and return the rates over it.

    Examples:
        >>> s = sample(0.05)
        >>> s.elapsed >= 0.05
        True
    """
    sampler = Sampler(mem=mem)
    return next(sampler.run(interval, 1))
