"""dool/dstat-style resource sampling: cpu, disk, net, paging, system, load and memory.

`Sampler` reads the counters dool reads and turns two snapshots into rates: cpu
percentages exactly as dool computes them, disk and network bytes per second over the
devices dool's totals count, swap paging, interrupts, context switches and load. Rates
divide by the measured interval, counters that go backwards or devices that come and go
never give a negative or infinite rate, and a group that cannot be read is reported in
``Sample.missing`` (with one `SamplingWarning`) instead of failing the others.

The readings, the arithmetic and the records (`Snapshot`, `Sample`, `DiskRate`,
`NicRate`: named tuples) are `devutils.rates`'; this module adds the warnings and is
their public face. GPUs are `devutils.gpu`'s, and telling dstat, pcp-dstat and dool apart
`devutils.which_dstat`'s.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from devutils.rates import (
    DISK_FILTER,
    NIC_FILTER,
    CounterSampler,
    DeviceCounters,
    DiskRate,
    NicRate,
    Sample,
    Snapshot,
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
    """A group of counters could not be read; its fields are None and it is in ``missing``.
    ``group`` names it and ``reason`` says why.

    Each `Sampler` warns once per group, the first time it fails.

    Examples:
        >>> import warnings
        >>> def unreadable():
        ...     raise OSError("no loadavg here")
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     load = Sampler(readers={"load": unreadable}).snapshot().load
        >>> load, [str(w.message) for w in caught if "load" in str(w.message)]
        (None, ['cannot read load counters (no loadavg here); reporting them as missing'])
        >>> [(w.message.group, w.message.reason) for w in caught if "load" in str(w.message)]
        [('load', 'no loadavg here')]
    """

    def __init__(self, group: str, reason: str) -> None:
        super().__init__(f"cannot read {group} counters ({reason}); reporting them as missing")
        self.group = group
        self.reason = reason

    def __reduce__(self) -> tuple[type[SamplingWarning], tuple[str, str]]:
        return type(self), (self.group, self.reason)


# -- rates --------------------------------------------------------------------------------


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

    Raises:
        TypeError: If *before* or *after* is not a `Snapshot` (of numbers), or *disks* or
            *nics* is not a sequence of names (a str is one name's letters: ``["sda"]``,
            not ``"sda"``), as `Sampler` refuses it.
        ValueError: If *after* was taken before *before* (its ``monotonic`` is less: the
            two swapped), either's ``monotonic``, ``time`` or a counter is not finite, or a
            group holds too few or too many counters (cpu 8 or more, as many in both).

    Examples:
        >>> a = Snapshot(0.0, 100.0, cpu=(10, 0, 5, 80, 5, 0, 0, 0), system=(1000, 500))
        >>> b = Snapshot(2.0, 102.0, cpu=(12, 0, 6, 81, 5, 1, 0, 0), system=(1400, 900))
        >>> s = compute_sample(a, b)
        >>> s.usr, s.sys, s.idl, s.interrupts, s.ctx_switches
        (60.0, 20.0, 20.0, 200.0, 200.0)
    """
    return compute_rates(before, after, disks=disks, nics=nics)


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
        disks: Iterable[str] = (),
        nics: Iterable[str] = (),
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
        snapshot = self._counters.snapshot()
        self._warn()
        return snapshot

    def sample(self) -> Sample | None:
        """Return the rates since the previous call (None on the first call).

        Examples:
            >>> cpu = iter([(10, 0, 5, 80, 5, 0, 0, 0), (12, 0, 6, 81, 5, 1, 0, 0)])
            >>> sampler = Sampler(readers={"cpu": lambda: next(cpu)})
            >>> sampler.sample() is None  # the first call primes
            True
            >>> sampler.sample().usr  # user + nice + irq + softirq: 3 of 5 seconds
            60.0
        """
        result = self._counters.sample()
        self._warn()
        return result

    def run(self, interval: float = 1.0, count: int | None = None) -> Iterator[Sample]:
        """Yield a sample every *interval* seconds, *count* times (forever if None).

        The schedule is absolute (start + k x interval), so it does not drift; a late
        tick is skipped rather than bunched. The first sample comes one interval after
        the call.

        Raises:
            TypeError: If *interval* is not a number or *count* not an int or None.
            ValueError: If *interval* is not positive or is past a year
                (`devutils.rates.MAX_INTERVAL`), or *count* < 1.

        Examples:
            >>> samples = list(Sampler().run(interval=0.05, count=2))
            >>> len(samples), all(sample.elapsed > 0 for sample in samples)
            (2, True)
        """
        samples = self._counters.run(interval, count)
        return (self._warned_sample(sample) for sample in samples)

    def _warned_sample(self, sample: Sample) -> Sample:
        self._warn()
        return sample

    def _warn(self) -> None:
        """One `SamplingWarning` for each group that could not be read, the first time."""
        for group, reason in self._counters.errors.items():
            if group not in self._warned:
                self._warned.add(group)
                warnings.warn(SamplingWarning(group, reason), stacklevel=3)


def sample(interval: float = 1.0, *, mem: bool = False) -> Sample:
    """Block for *interval* seconds and return the rates over it.

    Examples:
        >>> s = sample(0.05)
        >>> s.elapsed >= 0.05
        True
    """
    sampler = Sampler(mem=mem)
    return next(sampler.run(interval, 1))
