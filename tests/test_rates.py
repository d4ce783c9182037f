"""Tests for devutils.rates: the records, dool's rate arithmetic, the sampler."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import rates
from devutils.kernelcounters import DeviceCounters
from devutils.rates import (
    CounterSampler,
    DiskRate,
    Sample,
    Snapshot,
    compute_rates,
)

counter_values = st.integers(0, 2**64 - 1)


_COUNTS = st.integers(0, 10**12)


@given(
    st.lists(_COUNTS, min_size=8, max_size=8),
    st.lists(_COUNTS, min_size=8, max_size=8),
    st.lists(_COUNTS, min_size=4, max_size=4),
    st.floats(0.01, 3600),
)
def test_compute_rates_is_dools_arithmetic(
    cpu_before: list[int], cpu_after: list[int], counts: list[int], elapsed: float
) -> None:
    # dool's cpu columns: usr = user + nice + irq + softirq, then sys, idl, wai, stl,
    # each a share of their sum (a counter that went back counts 0; where the sum of them
    # all went back, a cpu went offline: unknown); the other groups are per-second
    # differences, never negative.
    groups = ("cpu", "paging", "system", "load")
    before = Snapshot(5.0, 100.0, groups=groups, disks=None, nics=None, mem=None)
    before = before._replace(cpu=tuple(cpu_before), paging=(counts[0], counts[1]))
    before = before._replace(system=(counts[2], counts[3]), load=(0.5, 0.25, 0.125))
    after = before._replace(monotonic=5.0 + elapsed, time=100.0 + elapsed)
    after = after._replace(cpu=tuple(cpu_after), paging=(counts[1], counts[0]))
    after = after._replace(system=(counts[3], counts[2]), load=(1.0, 2.0, 3.0))
    rates = compute_rates(before, after)

    d = [max(new - old, 0) for new, old in zip(cpu_after, cpu_before, strict=True)]
    parts = {"usr": d[0] + d[1] + d[5] + d[6], "sys": d[2], "idl": d[3], "wai": d[4]}
    parts["stl"] = d[7]
    total = sum(parts.values())
    if sum(cpu_after) < sum(cpu_before):
        assert [getattr(rates, name) for name in parts] == [None] * 5
    else:
        for name, part in parts.items():
            expected = (100.0 if name == "idl" else 0.0) if total == 0 else 100 * part / total
            assert getattr(rates, name) == pytest.approx(expected)
        assert sum(getattr(rates, name) for name in parts) == pytest.approx(100.0)
    per_second = [max(counts[1] - counts[0], 0) / elapsed, max(counts[0] - counts[1], 0) / elapsed]
    assert [rates.page_in, rates.page_out] == pytest.approx(per_second)
    per_second = [max(counts[3] - counts[2], 0) / elapsed, max(counts[2] - counts[3], 0) / elapsed]
    assert [rates.interrupts, rates.ctx_switches] == pytest.approx(per_second)
    assert (rates.load1, rates.load5, rates.load15) == (1.0, 2.0, 3.0)
    assert rates.elapsed == pytest.approx(elapsed)
    assert (rates.time, rates.missing) == (100.0 + elapsed, ())
    assert (rates.disk_read, rates.mem_used) == (None, None)


def test_compute_rates_is_sample_s_arithmetic() -> None:
    before = Snapshot(0.0, 100.0, groups=("cpu", "system"))
    before = before._replace(cpu=(10, 0, 5, 80, 5, 0, 0, 0), system=(1000, 500))
    after = before._replace(monotonic=2.0, time=102.0)
    after = after._replace(cpu=(12, 0, 6, 81, 5, 1, 0, 0), system=(1400, 900))
    rates = compute_rates(before, after)
    assert (rates.usr, rates.sys, rates.idl) == (60.0, 20.0, 20.0)
    assert (rates.interrupts, rates.ctx_switches) == (200.0, 200.0)
    assert rates.missing == ()


def test_records_are_read_only_named_tuples() -> None:
    # One definition of each record, immutable as the frozen dataclasses were; the
    # empty disks and nics of a default Sample are no shared dict that one could fill.
    sample = Sample(100.0, 1.0)
    assert (sample.disks, sample.nics, sample.missing) == ({}, {}, ())
    with pytest.raises(TypeError):
        sample.disks["sda"] = DiskRate(1.0, 2.0)  # type: ignore[index]
    with pytest.raises(AttributeError):
        sample.usr = 5.0  # type: ignore[misc]
    assert sample._replace(usr=5.0).usr == 5.0
    assert Snapshot(1.0, 2.0)._fields[:2] == ("monotonic", "time")


def test_loopback_is_left_out_of_the_total_by_any_of_its_names() -> None:
    # macOS and the BSDs call it lo0: its traffic was counted in net/total
    from devutils.rates import NIC_FILTER

    for name in ("lo", "lo0", "bond0", "eth0.100"):
        assert NIC_FILTER.match(name), name
    for name in ("eth0", "en0", "wlan0", "lowpan0"):
        assert not NIC_FILTER.match(name), name


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"disks": None}, TypeError, "disks must be a sequence of names, got None"),
        ({"nics": 5}, TypeError, "nics must be a sequence of names, got 5"),
        ({"readers": [1]}, TypeError, "readers must be a mapping"),
        ({"readers": {"bogus": tuple}}, ValueError, "readers must name groups of cpu, .*'bogus'"),
        # a key not a str was a ValueError; a reader not callable was taken, then every
        # snapshot warned that it could not read the group
        ({"readers": {1: tuple}}, TypeError, "readers must be keyed by group names, got int 1"),
        ({"readers": {b"load": tuple}}, TypeError, "keyed by group names, got bytes b'load'"),
        (
            {"readers": {"load": 5}},
            TypeError,
            "readers must map group names to functions, got int 5 for load",
        ),
        ({"readers": {"cpu": None}}, TypeError, "got NoneType None for cpu"),
    ],
)
def test_bad_sampler_arguments_are_named(
    options: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        CounterSampler(**options)  # type: ignore[arg-type]


@given(
    group=st.sampled_from(rates.GROUPS),
    reader=st.none() | st.integers() | st.text() | st.tuples(st.floats()),
)
def test_a_reader_that_is_not_callable_is_refused_by_group(group: str, reader: object) -> None:
    with pytest.raises(TypeError, match=f"readers must map group names to functions, .* {group}$"):
        CounterSampler(readers={group: reader})  # type: ignore[dict-item]


@pytest.mark.parametrize("interval", [1e300, 10**400])
def test_an_interval_past_a_year_is_refused_before_sleeping(interval: float) -> None:
    # 1e300 was taken, then time.sleep raised OverflowError; 10**400 raised it at once
    with pytest.raises(ValueError, match="interval must be a positive number of seconds, at most"):
        CounterSampler(readers={"load": lambda: (0.0, 0.0, 0.0)}).run(interval, 1)


def test_disks_and_nics_may_be_any_iterable_of_names_read_once() -> None:
    sampler = CounterSampler(disks={"sda"}, nics=(name for name in ["eth0", "lo"]))
    assert (sampler.disks, sampler.nics) == (("sda",), ("eth0", "lo"))


def test_a_samplers_samples_are_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its snapshots are its own and its names were checked when it was built: compute_rates'
    # checks, once more per sample, would make every sample of `devutils stat` dearer
    sampler = CounterSampler(disks=["sda"], readers={"load": lambda: (0.5, 0.25, 0.125)})

    def checked(*args: object) -> None:
        raise AssertionError(args)

    monkeypatch.setattr(rates, "_check_snapshot", checked)
    monkeypatch.setattr(rates, "_device_names", checked)
    assert sampler.sample() is None
    sample = sampler.sample()
    assert sample is not None
    assert sample.load1 == 0.5


# -- properties added for the standard ---

_TICKS = st.integers(0, 10**9)
_PAIRS = st.tuples(counter_values, counter_values)


def _device_counters(names: list[str]) -> st.SearchStrategy[DeviceCounters]:
    return st.dictionaries(st.sampled_from(names), _PAIRS, max_size=len(names)).map(
        lambda pairs: DeviceCounters(
            tuple(pairs), [pair[0] for pair in pairs.values()], [pair[1] for pair in pairs.values()]
        )
    )


_DISK_NAMES = ["sda", "sda1", "nvme0n1", "dm-0"]
_NIC_NAMES = ["eth0", "lo", "wlan0", "eth0.100"]
_READINGS: dict[str, st.SearchStrategy[Any]] = {
    "cpu": st.tuples(*[_TICKS.map(lambda ticks: ticks / 100)] * 8),
    "disk": _device_counters(_DISK_NAMES),
    "net": _device_counters(_NIC_NAMES),
    "paging": _PAIRS,
    "system": _PAIRS,
    "load": st.tuples(*[st.floats(0, 1000)] * 3),
    "mem": st.tuples(*[counter_values] * 4),
}
"""What each group's reader gives: a snapshot's field."""
_FAILURES = st.builds(OSError, st.sampled_from(["", "no cpu line", "gone"])) | st.builds(
    RuntimeError, st.text(max_size=3)
)


class _Reader:
    """A group's reader: gives (or raises) each of its readings in turn."""

    def __init__(self, readings: list[Any]) -> None:
        self.readings = list(readings)

    def __call__(self) -> Any:
        reading = self.readings.pop(0)
        if isinstance(reading, Exception):
            raise reading
        return reading


@given(
    readings=st.fixed_dictionaries(
        {
            group: st.lists(values | _FAILURES, min_size=2, max_size=2)
            for group, values in _READINGS.items()
        }
    ),
    mem=st.booleans(),
    disks=st.lists(st.sampled_from([*_DISK_NAMES, "total"]), unique=True, max_size=3),
    nics=st.lists(st.sampled_from([*_NIC_NAMES, "total"]), unique=True, max_size=3),
    clock=st.tuples(st.floats(0, 10**6), st.floats(0, 3600), st.floats(0, 2 * 10**9)),
)
def test_a_counter_samplers_sample_is_compute_rates_of_what_its_readers_gave(
    readings: dict[str, list[Any]],
    mem: bool,
    disks: list[str],
    nics: list[str],
    clock: tuple[float, float, float],
) -> None:
    start, elapsed, wall = clock
    sampler = CounterSampler(
        disks=disks,
        nics=nics,
        mem=mem,
        readers={group: _Reader(values) for group, values in readings.items()},
    )
    groups = tuple(group for group in rates.GROUPS if group != "mem" or mem)
    assert sampler.groups == groups
    clocks = mock.Mock(
        monotonic=mock.Mock(side_effect=[start, start + elapsed]),
        time=mock.Mock(side_effect=[wall, wall + elapsed]),
    )
    with mock.patch.object(rates, "time", clocks):
        assert sampler.sample() is None  # (primes)
        sample = sampler.sample()
    fields = {"cpu": "cpu", "disk": "disks", "net": "nics", "paging": "paging"}
    fields |= {"system": "system", "load": "load", "mem": "mem"}

    def snapshot(i: int, monotonic: float, wall: float) -> Snapshot:
        """The snapshot of the readers' *i*-th readings: None where one raised."""
        values = {fields[group]: readings[group][i] for group in groups}
        values = {field: None if isinstance(v, Exception) else v for field, v in values.items()}
        return Snapshot(monotonic, wall, groups=groups, **values)

    before, after = snapshot(0, start, wall), snapshot(1, start + elapsed, wall + elapsed)
    assert sample == compute_rates(before, after, disks=disks, nics=nics)
    failures = {group: [r for r in readings[group] if isinstance(r, Exception)] for group in groups}
    failed = {
        group: str(raised[0]) or type(raised[0]).__name__
        for group, raised in failures.items()
        if raised
    }
    assert sampler.errors == failed  # the first failure of each group
