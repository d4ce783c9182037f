"""Tests for devutils.system: dool's rate arithmetic and filters, the Sampler."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from itertools import pairwise
from operator import sub
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from devutils.rates import FIELDS, GROUPS
from devutils.system import (
    DISK_FILTER,
    NIC_FILTER,
    DeviceCounters,
    Sample,
    Sampler,
    SamplingWarning,
    Snapshot,
    compute_sample,
    sample,
)

SAMPLE_FIELD_NAMES = [
    name for name in Sample._fields if name not in {"time", "disks", "nics", "missing"}
]


def test_cpu_columns_as_dool() -> None:
    # user nice system idle iowait irq softirq steal
    before = Snapshot(0.0, 0.0, cpu=(100, 10, 50, 800, 20, 5, 5, 10))
    after = Snapshot(1.0, 1.0, cpu=(130, 20, 60, 840, 30, 10, 15, 20))
    s = compute_sample(before, after)
    # usr = (30 + 10 + 5 + 10) = 55, sys 10, idl 40, wai 10, stl 10: total 125
    assert s.usr == pytest.approx(100 * 55 / 125)
    assert s.sys == pytest.approx(100 * 10 / 125)
    assert s.idl == pytest.approx(100 * 40 / 125)
    assert s.wai == pytest.approx(100 * 10 / 125)
    assert s.stl == pytest.approx(100 * 10 / 125)


def test_rates_divide_by_the_measured_interval() -> None:
    before = Snapshot(
        10.0, 0.0, disks={"sda": (0, 0)}, nics={"eth0": (0, 0)}, paging=(0, 0), system=(0, 0)
    )
    after = Snapshot(
        12.5,
        2.5,
        disks={"sda": (5000, 2500)},
        nics={"eth0": (250, 500)},
        paging=(4096, 8192),
        system=(100, 50),
    )
    s = compute_sample(before, after)
    assert s.elapsed == 2.5
    assert (s.disk_read, s.disk_write) == (2000.0, 1000.0)
    assert (s.net_recv, s.net_send) == (100.0, 200.0)
    assert (s.page_in, s.page_out) == (4096 / 2.5, 8192 / 2.5)
    assert (s.interrupts, s.ctx_switches) == (40.0, 20.0)


@pytest.mark.parametrize(
    "name",
    [
        *("sda1", "vdb12", "hda3", "dm-0", "md127", "nvme0n1p2", "mmcblk0p10", "cciss/c0d0p1"),
        "VxVM3",
        # partitions dool's pattern misses, and so counts twice in its total
        *("xvda1", "mmcblk0p1", "mmcblk1p9", "loop0p1"),
    ],
)
def test_disk_filter_excludes_partitions_and_virtual_devices(name: str) -> None:
    assert DISK_FILTER.match(name)


@pytest.mark.parametrize("name", ["sda", "vda", "nvme0n1", "loop0", "xvda", "mmcblk0", "zram0"])
def test_disk_filter_keeps_whole_disks(name: str) -> None:
    assert not DISK_FILTER.match(name)


@pytest.mark.parametrize(
    ("name", "excluded"),
    [
        ("lo", True),
        ("bond0", True),
        ("eth0.100", True),
        ("face", True),
        ("eth0", False),
        ("wlp2s0", False),
        ("docker0", False),
    ],
)
def test_nic_filter(name: str, excluded: bool) -> None:
    assert bool(NIC_FILTER.match(name)) == excluded


def test_totals_use_the_filters_and_per_device_dicts() -> None:
    disks0 = {"sda": (0, 0), "sda1": (0, 0), "dm-0": (0, 0), "nvme0n1": (0, 0)}
    disks1 = {"sda": (1000, 0), "sda1": (1000, 0), "dm-0": (500, 0), "nvme0n1": (24, 8)}
    nics0 = {"lo": (0, 0), "eth0": (0, 0), "bond0": (0, 0), "eth0.5": (0, 0)}
    nics1 = {"lo": (700, 700), "eth0": (10, 20), "bond0": (10, 20), "eth0.5": (1, 1)}
    s = compute_sample(
        Snapshot(0.0, 0.0, disks=disks0, nics=nics0),
        Snapshot(1.0, 1.0, disks=disks1, nics=nics1),
        disks=["sda1", "total"],
        nics=["lo", "total"],
    )
    assert (s.disk_read, s.disk_write) == (1024.0, 8.0)
    assert (s.net_recv, s.net_send) == (10.0, 20.0)
    assert s.disks["sda1"].read == 1000.0
    assert s.disks["total"].read == 1024.0
    assert (s.nics["lo"].recv, s.nics["total"].send) == (700.0, 20.0)


BEFORE = Snapshot(0.0, 0.0, disks={"sda": (0, 0), "sdb": (0, 0)}, nics={"eth0": (0, 0)})
AFTER = Snapshot(1.0, 1.0, disks={"sda": (10, 20), "sdb": (30, 40)}, nics={"eth0": (5, 6)})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"disks": "sda"}, "disks must be a sequence of names, got 'sda'"),
        ({"disks": b"sda"}, "disks must be a sequence of names, got b'sda'"),
        ({"disks": [1]}, r"disks must be a sequence of names, got \[1\]"),
        ({"disks": ["sda", None]}, r"disks must be a sequence of names, got \['sda', None\]"),
        ({"disks": None}, "disks must be a sequence of names, got None"),
        ({"nics": "eth0"}, "nics must be a sequence of names, got 'eth0'"),
        ({"nics": 5}, "nics must be a sequence of names, got 5"),
    ],
)
def test_compute_sample_refuses_names_that_are_not_a_sequence_of_str(
    options: dict[str, object], message: str
) -> None:
    # "sda" was read as the names 's', 'd' and 'a', and [1] as a name: disks was {}, silently
    with pytest.raises(TypeError, match=message):
        compute_sample(BEFORE, AFTER, **options)  # type: ignore[arg-type]


@given(
    names=st.lists(st.sampled_from(["sda", "sdb", "sdz", "total", "eth0"]), max_size=6),
    kind=st.sampled_from([list, tuple, set, iter, dict.fromkeys]),
)
def test_compute_sample_takes_any_iterable_of_names(names: list[str], kind: Any) -> None:
    # The names the Sampler takes (a set or a generator too), and only those in both snapshots
    s = compute_sample(BEFORE, AFTER, disks=kind(names), nics=kind(names))
    assert set(s.disks) == set(names) & {"sda", "sdb", "total"}
    assert set(s.nics) == set(names) & {"eth0", "total"}
    if "sdb" in names:
        assert s.disks["sdb"] == (30.0, 40.0)


@given(name=st.text(max_size=8))
def test_compute_sample_refuses_any_str_of_names(name: str) -> None:
    with pytest.raises(TypeError, match="disks must be a sequence of names"):
        compute_sample(BEFORE, AFTER, disks=name)


def test_disappearing_and_appearing_devices_and_resets() -> None:
    before = Snapshot(
        0.0, 0.0, disks={"sda": (1000, 1000), "sdb": (5, 5)}, nics={"eth0": (900, 900)}
    )
    after = Snapshot(1.0, 1.0, disks={"sda": (10, 10), "sdc": (99, 99)}, nics={"eth1": (5, 5)})
    s = compute_sample(before, after)
    assert (s.disk_read, s.disk_write, s.net_recv, s.net_send) == (0.0, 0.0, 0.0, 0.0)


counters = st.integers(0, 2**40)


cpu_tuple = st.tuples(*[st.floats(0, 1e7, allow_nan=False)] * 8)


devices = st.dictionaries(
    st.sampled_from(["sda", "sdb", "sda1", "nvme0n1", "dm-1"]),
    st.tuples(counters, counters),
    max_size=5,
)


nic_devices = st.dictionaries(
    st.sampled_from(["lo", "eth0", "eth1", "bond0", "eth0.7"]),
    st.tuples(counters, counters),
    max_size=5,
)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.none() | strategy

    return Snapshot(
        monotonic=draw(st.floats(0, 100, allow_nan=False)),
        time=draw(st.floats(0, 2e9, allow_nan=False)),
        cpu=draw(maybe(cpu_tuple)),
        disks=draw(maybe(devices)),
        nics=draw(maybe(nic_devices)),
        paging=draw(maybe(st.tuples(counters, counters))),
        system=draw(maybe(st.tuples(counters, counters))),
        load=draw(maybe(st.tuples(*[st.floats(0, 100)] * 3))),
    )


def in_order(before: Snapshot, after: Snapshot) -> tuple[Snapshot, Snapshot]:
    """*before* and *after* with their clocks in order (swapped, they are refused)."""
    first, last = sorted((before.monotonic, after.monotonic))
    return before._replace(monotonic=first), after._replace(monotonic=last)


@given(before=snapshots(), after=snapshots())
@example(  # the sums equal as floats, the deltas' sum below 0: the split was called unknown
    before=Snapshot(0.0, 0.0, cpu=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.175494351e-38)),
    after=Snapshot(0.0, 0.0, cpu=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)),
)
def test_rates_are_never_negative_or_infinite(before: Snapshot, after: Snapshot) -> None:
    before, after = in_order(before, after)
    s = compute_sample(before, after, disks=["sda", "total"], nics=["lo", "total"])
    rates = [
        s.disk_read,
        s.disk_write,
        s.net_recv,
        s.net_send,
        s.page_in,
        s.page_out,
        s.interrupts,
        s.ctx_switches,
    ]
    rates += [r for d in s.disks.values() for r in (d.read, d.write)]
    rates += [r for n in s.nics.values() for r in (n.recv, n.send)]
    for rate in rates:
        assert rate is None or (rate >= 0 and math.isfinite(rate))
    cpu = [s.usr, s.sys, s.idl, s.wai, s.stl]
    if before.cpu is not None and after.cpu is not None and sum(after.cpu) < sum(before.cpu):
        assert cpu == [None] * 5  # a cpu went offline: the split is unknown
    elif before.cpu is not None and after.cpu is not None:
        assert all(c is not None and 0 <= c <= 100 for c in cpu)
        assert sum(c for c in cpu if c is not None) == pytest.approx(100)
    else:
        assert cpu == [None] * 5
        assert "cpu" in s.missing
    for group, present in [
        ("disk", after.disks is not None and before.disks is not None),
        ("net", after.nics is not None and before.nics is not None),
    ]:
        assert (group in s.missing) != present


@pytest.mark.parametrize(
    ("before", "after", "error", "message"),
    [
        (None, None, TypeError, "before must be a Snapshot, got NoneType None"),
        (BEFORE, None, TypeError, "after must be a Snapshot, got NoneType None"),
        (BEFORE, (1.0, 1.0), TypeError, r"after must be a Snapshot, got tuple \(1.0, 1.0\)"),
        (
            AFTER,
            BEFORE,
            ValueError,
            r"before must be taken no later than after, got before.monotonic 1.0 and "
            r"after.monotonic 0.0 \(swapped\?\)",
        ),
        (
            BEFORE,
            AFTER._replace(monotonic=math.nan),
            ValueError,
            "after.monotonic must be finite, got nan",
        ),
        (
            BEFORE,
            AFTER._replace(monotonic=math.inf),
            ValueError,
            "after.monotonic must be finite, got inf",
        ),
        (
            BEFORE._replace(monotonic=-math.inf),
            AFTER,
            ValueError,
            "before.monotonic must be finite",
        ),
        (BEFORE._replace(monotonic=math.nan), AFTER, ValueError, "before.monotonic must be finite"),
        (
            BEFORE._replace(monotonic="0"),  # type: ignore[arg-type]
            AFTER,
            TypeError,
            "before.monotonic must be a number of seconds, got str '0'",
        ),
        (BEFORE, AFTER._replace(monotonic=True), TypeError, "after.monotonic must be a number"),
    ],
)
def test_compute_sample_refuses_snapshots_it_cannot_subtract(
    before: object, after: object, error: type[Exception], message: str
) -> None:
    # Swapped snapshots gave elapsed -2.0 and every rate 0, a NaN clock NaN rates, and
    # None an AttributeError
    with pytest.raises(error, match=message):
        compute_sample(before, after)  # type: ignore[arg-type]


FULL = Snapshot(
    0.0,
    0.0,
    cpu=(0,) * 8,
    disks={"sda": (0, 0)},
    nics={"eth0": (0, 0)},
    paging=(0, 0),
    system=(0, 0),
    load=(0.0, 0.0, 0.0),
    mem=(0, 0, 0, 0),
    groups=("cpu", "disk", "net", "paging", "system", "load", "mem"),
)


@pytest.mark.parametrize(
    ("before", "after", "error", "message"),
    [
        (FULL, {"system": (1,)}, ValueError, r"after.system must hold 2 counters, got \(1,\)"),
        ({"paging": (1, 2, 3)}, FULL, ValueError, "before.paging must hold 2 counters"),
        (FULL, {"load": (1.0,)}, ValueError, "after.load must hold 3 counters"),
        (FULL, {"mem": (1, 2, 3)}, ValueError, "after.mem must hold 4 counters"),
        (
            FULL,
            {"cpu": (8, 2)},
            ValueError,
            r"after.cpu must hold 8 or more counters, got \(8, 2\)",
        ),
        ({"cpu": (0,) * 7}, FULL, ValueError, "before.cpu must hold 8 or more counters"),
        (
            FULL,
            {"cpu": (0,) * 9},
            ValueError,
            "before.cpu and after.cpu must hold as many counters, got 8 and 9",
        ),
        (
            FULL,
            {"system": 5},
            TypeError,
            "after.system must be a tuple of counters or None, got int 5",
        ),
        (
            {"cpu": 0.5},
            FULL,
            TypeError,
            "before.cpu must be a tuple of counters or None, got float",
        ),
        (
            {"disks": {"sda": 0}},
            FULL,
            TypeError,
            "before.disks must map names to pairs of counters, got 'sda': int 0",
        ),
        (
            FULL,
            {"nics": {"eth0": (1, 2, 3)}},
            ValueError,
            r"after.nics must map names to pairs of counters, got 'eth0': \(1, 2, 3\)",
        ),
        (
            FULL,
            {"disks": {1: (0, 0)}},
            TypeError,
            r"after.disks must map names to pairs of counters, got 1:",
        ),
        (
            FULL,
            {"disks": [("sda", (0, 0))]},
            TypeError,
            "after.disks must be a mapping of names to pairs or None, got list",
        ),
        # counters that are not finite numbers gave inf, NaN or Python's own TypeError
        (FULL, {"disks": {"sda": (math.inf, 0)}}, ValueError, r"after.disks\['sda'\] must hold"),
        (FULL, {"system": (math.inf, 5)}, ValueError, "after.system must hold finite numbers"),
        ({"cpu": (math.nan,) + (0,) * 7}, FULL, ValueError, "before.cpu must hold finite"),
        (FULL, {"paging": (10**400, 0)}, ValueError, "after.paging must hold finite numbers"),
        (FULL, {"load": ("a", "b", "c")}, TypeError, "after.load must hold numbers, got str"),
        (FULL, {"mem": (1, 2, True, 4)}, TypeError, "after.mem must hold numbers, got bool"),
        (FULL, {"time": "y"}, TypeError, "after.time must be a number of seconds, got str 'y'"),
    ],
)
def test_compute_sample_refuses_a_group_of_the_wrong_shape(
    before: Snapshot | dict[str, Any],
    after: Snapshot | dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    # system=(1,) raised IndexError, disks={"sda": 0} "cannot unpack non-iterable int
    # object", and a cpu too short "cpu counters must be 8 or more ..., got 8, 2"
    # without saying which snapshot
    if isinstance(before, dict):
        before = FULL._replace(**before)
    if isinstance(after, dict):
        after = FULL._replace(monotonic=1.0, **after)
    with pytest.raises(error, match=message):
        compute_sample(before, after)


@given(
    field=st.sampled_from(["cpu", "paging", "system", "load", "mem"]),
    size=st.integers(0, 12),
    which=st.sampled_from(["before", "after"]),
)
def test_a_group_of_another_size_is_refused_by_name(field: str, size: int, which: str) -> None:
    sizes = {"cpu": 8, "paging": 2, "system": 2, "load": 3, "mem": 4}
    counters: dict[str, Any] = {field: (1,) * size}
    unread: dict[str, Any] = {field: None}  # (the other's group: cpu's lengths differ)
    before = FULL._replace(**(counters if which == "before" else unread))
    after = FULL._replace(monotonic=1.0, **(counters if which == "after" else unread))
    if size == sizes[field] or (field == "cpu" and size > sizes[field]):
        assert compute_sample(before, after).elapsed == 1.0
    else:
        with pytest.raises(ValueError, match=rf"^{which}\.{field} must hold {sizes[field]} "):
            compute_sample(before, after)


@given(before=snapshots(), after=snapshots())
def test_snapshots_out_of_order_are_refused(before: Snapshot, after: Snapshot) -> None:
    if after.monotonic < before.monotonic:
        with pytest.raises(ValueError, match="before must be taken no later than after"):
            compute_sample(before, after)
    else:
        assert compute_sample(before, after).elapsed == after.monotonic - before.monotonic


def test_zero_elapsed_gives_zero_rates() -> None:
    snap = Snapshot(5.0, 5.0, cpu=(1, 0, 0, 1, 0, 0, 0, 0), disks={"sda": (0, 0)}, system=(0, 0))
    later = Snapshot(
        5.0, 5.0, cpu=(1, 0, 0, 1, 0, 0, 0, 0), disks={"sda": (100, 100)}, system=(10, 10)
    )
    s = compute_sample(snap, later)
    assert (s.disk_read, s.interrupts, s.idl) == (0.0, 0.0, 100.0)


def fake_readers(fail: set[str] | None = None) -> dict[str, object]:
    state = {"n": 0}

    def tick() -> int:
        state["n"] += 1
        return state["n"]

    def failing(name: str) -> object:
        def read() -> object:
            raise OSError(f"no {name} here")

        return read

    readers: dict[str, object] = {
        "cpu": lambda: (tick() * 3.0, 0, tick() * 1.0, tick() * 6.0, 0, 0, 0, 0),
        "disk": lambda: {"sda": (tick() * 1000, 0)},
        "net": lambda: {"eth0": (tick() * 10, 0), "lo": (0, 0)},
        "paging": lambda: (0, 0),
        "system": lambda: (tick(), tick()),
        "load": lambda: (0.5, 0.25, 0.125),
        "mem": lambda: (1, 2, 3, 4),
    }
    for name in fail or set():
        readers[name] = failing(name)
    return readers


def test_first_sample_primes(capsys: pytest.CaptureFixture[str]) -> None:
    sampler = Sampler(readers=fake_readers())  # type: ignore[arg-type]
    assert sampler.sample() is None
    s = sampler.sample()
    assert isinstance(s, Sample)
    assert s.load1 == 0.5
    assert s.mem_used is None  # mem not asked for
    assert s.missing == ()


def test_unreadable_group_is_missing_and_warns_once(capsys: pytest.CaptureFixture[str]) -> None:
    sampler = Sampler(readers=fake_readers({"disk"}), mem=True)  # type: ignore[arg-type]
    with pytest.warns(SamplingWarning, match="cannot read disk counters") as warned:
        results = [sampler.sample() for _ in range(4)]
    assert len(warned) == 1
    assert capsys.readouterr().err == ""  # the library never prints
    assert results[0] is None
    for s in results[1:]:
        assert s is not None
        assert s.missing == ("disk",)
        assert s.disk_read is None
        assert s.net_recv is not None
        assert s.mem_available == 4


class FakeClock:
    """``time`` for `devutils.rates`: sleeping moves the clock, nothing else does."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """A `FakeClock` that `devutils.rates` (and so every `Sampler`) reads and sleeps on."""
    from devutils import rates

    fake = FakeClock()
    monkeypatch.setattr(rates, "time", fake)
    return fake


def test_run_keeps_an_absolute_schedule(clock: FakeClock) -> None:
    sampler = Sampler(readers=fake_readers())  # type: ignore[arg-type]
    start = clock.now
    stamps = []
    for s in sampler.run(0.05, 4):
        stamps.append(clock.now - start)
        clock.now += 0.01  # work between samples must not push the schedule
        assert s.elapsed > 0
    assert stamps == pytest.approx([0.05, 0.1, 0.15, 0.2])


def test_run_skips_a_late_tick_rather_than_bunching(clock: FakeClock) -> None:
    sampler = Sampler(readers=fake_readers())  # type: ignore[arg-type]
    start = clock.now
    stamps = []
    for _ in sampler.run(1.0, 3):
        stamps.append(clock.now - start)
        clock.now += 1.5 if len(stamps) == 1 else 0.0  # the first sample's work is slow
    assert stamps == pytest.approx([1.0, 3.0, 4.0])  # the tick due at 2.0 is skipped


@pytest.mark.parametrize(
    ("interval", "count", "error"),
    [
        (0, None, ValueError),
        (-1, 1, ValueError),
        (float("inf"), 1, ValueError),
        (1, 0, ValueError),
        (1, 1.5, TypeError),
        (True, 1, TypeError),
        ("1", 1, TypeError),
    ],
)
def test_run_rejects_bad_arguments(
    interval: float, count: int | None, error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"interval|count"):
        Sampler().run(interval, count)


@pytest.mark.parametrize(
    ("interval", "count", "message"),
    [
        (10**5000, 1, r"interval must be .* \(a year\), got <an int of about 5001 digits>"),
        (1, -(10**5000), "count must be a positive int or None, got -<an int of about 5001"),
        (-(10**5000), 1, "interval must be a positive number .* got -<an int of about 5001"),
    ],
    ids=["interval", "count", "negative interval"],  # (pytest's own ids are the reprs)
)
def test_run_names_an_int_too_long_for_a_repr(interval: float, count: int, message: str) -> None:
    # The message was built with repr(): "Exceeds the limit (4300 digits) for integer string
    # conversion" in its place
    with pytest.raises(ValueError, match=message):
        Sampler().run(interval, count)


def test_sampler_names_a_name_too_long_for_a_repr() -> None:
    with pytest.raises(TypeError, match="disks must be a sequence of names, got <repr failed"):
        Sampler(disks=[10**5000])  # type: ignore[list-item]


def test_sampler_rejects_bad_options() -> None:
    with pytest.raises(TypeError, match="disks must be a sequence of names"):
        Sampler(disks="sda")
    with pytest.raises(TypeError, match="mem must be a bool"):
        Sampler(mem=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="readers must be keyed by group names, got int 1"):
        Sampler(readers={1: tuple})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="readers must map group names to functions, got int 5"):
        Sampler(readers={"load": 5})  # type: ignore[dict-item]


def test_snapshot_cpu_is_in_seconds() -> None:
    import psutil

    idle = Sampler().snapshot().cpu
    assert idle is not None
    assert idle[3] == pytest.approx(psutil.cpu_times().idle, abs=1.0)


def test_one_real_sampling_run() -> None:
    s = sample(0.2, mem=True)
    assert 0.19 < s.elapsed < 60  # at least the interval; a loaded machine oversleeps
    assert s.usr is not None
    assert sum(v for v in (s.usr, s.sys, s.idl, s.wai, s.stl) if v is not None) == pytest.approx(
        100
    )
    assert s.interrupts is not None
    assert s.interrupts >= 0
    assert s.mem_available is not None
    assert s.mem_available > 0
    assert abs(s.time - time.time()) < 5


def as_counters(devices: Mapping[str, tuple[int, int]] | None) -> DeviceCounters | None:
    if devices is None:
        return None
    return DeviceCounters(
        tuple(devices), [p[0] for p in devices.values()], [p[1] for p in devices.values()]
    )


@given(before=snapshots(), after=snapshots(), same_devices=st.booleans())
def test_device_lists_give_the_same_rates_as_dicts(
    before: Snapshot, after: Snapshot, same_devices: bool
) -> None:
    # The list arithmetic (DeviceCounters, what /proc gives) against the plain dict loop.
    before, after = in_order(before, after)
    if same_devices and before.disks is not None and after.disks is not None:
        after = after._replace(disks={name: after.disks.get(name, (0, 0)) for name in before.disks})
    if same_devices and before.nics is not None and after.nics is not None:
        after = after._replace(nics={name: after.nics.get(name, (0, 0)) for name in before.nics})
    wanted = {"disks": ["sda", "sda1", "total"], "nics": ["lo", "eth0", "total"]}
    expected = compute_sample(before, after, **wanted)
    fast = compute_sample(
        before._replace(disks=as_counters(before.disks), nics=as_counters(before.nics)),
        after._replace(disks=as_counters(after.disks), nics=as_counters(after.nics)),
        **wanted,
    )
    assert fast == expected


def test_a_device_asked_for_that_is_not_there_is_left_out() -> None:
    sampler = Sampler(disks=["nosuchdisk", "total"], nics=["nosuchnic", "total"])
    assert sampler.sample() is None
    time.sleep(0.02)
    s = sampler.sample()
    assert s is not None
    assert list(s.disks) == ["total"]
    assert list(s.nics) == ["total"]
    assert s.disks.get("nosuchdisk") is None


def test_a_tiny_interval_runs_without_overflow() -> None:
    # 5e-324 s: the ticks a late sample skipped were infinitely many (OverflowError).
    samples = list(Sampler().run(5e-324, 3))
    assert len(samples) == 3


def test_a_cpu_going_offline_leaves_the_split_unknown() -> None:
    # The sums over every cpu drop; clamping each counter at 0 showed usr=100.
    before = Snapshot(0.0, 0.0, cpu=(1000.1, 0, 0, 1010, 0, 0, 0, 0))
    after = Snapshot(1.0, 1.0, cpu=(1000.8, 0, 0, 10.2, 0, 0, 0, 0))
    s = compute_sample(before, after)
    assert [s.usr, s.sys, s.idl, s.wai, s.stl] == [None] * 5
    steal_back = Snapshot(1.0, 1.0, cpu=(1010.1, 0, 0, 1020, 0, 0, 0, -1))  # steal's glitch
    assert compute_sample(before, steal_back).usr == pytest.approx(50)


# -- properties added for the standard ---

_DELTA = st.integers(0, 10**9) | st.integers(-1000, -1)  # (now and then one goes back: a reset)


@st.composite
def cumulative_readings(draw: st.DrawFn) -> list[Snapshot]:
    """Two to five readings of every group, as the kernel keeps them: counters that grow
    from one reading to the next (but for a reset now and then), 1 ms to 3 h apart."""
    now = 1000.0
    cpu = [0] * 8  # whole seconds: their sums are exact
    counters = dict.fromkeys(("sda", "sda1", "eth0", "lo", "paging", "system"), (10**6, 10**6))
    readings = []
    for _ in range(draw(st.integers(2, 5))):
        now += draw(st.floats(1e-3, 1e4))
        cpu = [seconds + draw(st.integers(0, 10**6)) for seconds in cpu]
        counters = {
            name: (first + draw(_DELTA), second + draw(_DELTA))
            for name, (first, second) in counters.items()
        }
        readings.append(
            Snapshot(
                now,
                now,
                cpu=tuple(cpu),
                disks={name: counters[name] for name in ("sda", "sda1")},
                nics={name: counters[name] for name in ("eth0", "lo")},
                paging=counters["paging"],
                system=counters["system"],
                load=draw(st.tuples(*[st.floats(0, 100)] * 3)),
                mem=draw(st.tuples(*[st.integers(0, 2**40)] * 4)),
                groups=GROUPS,
            )
        )
    return readings


def reading_readers(readings: list[Snapshot]) -> dict[str, Any]:
    """A `Sampler`'s readers that give one reading after another, each group read once
    per snapshot."""
    return {
        group: iter([getattr(reading, field) for reading in readings]).__next__
        for group, field in FIELDS.items()
    }


def hand_rates(before: Snapshot, after: Snapshot, elapsed: float) -> dict[str, float]:
    """The sample over *elapsed* seconds between two full readings, by hand: each rate is
    its counter's delta / elapsed (0 for one that went back), the disk total sda's (sda1 is
    a partition of it), the net total eth0's (lo is loopback); the cpu columns the deltas'
    shares of their sum in percent, usr = user + nice + irq + softirq; load and memory as
    read last."""

    def rates(field: str, name: str | None = None) -> list[float]:
        new, old = getattr(after, field), getattr(before, field)
        if name is not None:
            new, old = new[name], old[name]
        return [max(new[0] - old[0], 0) / elapsed, max(new[1] - old[1], 0) / elapsed]

    assert before.cpu is not None
    assert after.cpu is not None
    user, nice, system, idle, iowait, irq, softirq, steal = map(sub, after.cpu, before.cpu)
    columns = [user + nice + irq + softirq, system, idle, iowait, steal]
    total = sum(columns)
    cpu = [100 * part / total for part in columns] if total else [0, 0, 100, 0, 0]
    values = [elapsed, *cpu, *rates("disks", "sda"), *rates("nics", "eth0")]
    values += [*rates("paging"), *rates("system"), *(after.load or ()), *(after.mem or ())]
    expected = dict(zip(SAMPLE_FIELD_NAMES, values, strict=True))
    for device, pair in [
        ("disk sda1", rates("disks", "sda1")),
        ("disk total", rates("disks", "sda")),
        ("net lo", rates("nics", "lo")),
        ("net total", rates("nics", "eth0")),
    ]:
        expected[f"{device} 0"], expected[f"{device} 1"] = pair
    return expected


def sample_rates(s: Sample) -> dict[str, float]:
    """*s*'s numbers by name, as `hand_rates` gives them."""
    values = {name: getattr(s, name) for name in SAMPLE_FIELD_NAMES}
    for group, rates in [("disk", s.disks), ("net", s.nics)]:
        for name, pair in rates.items():
            values[f"{group} {name} 0"], values[f"{group} {name} 1"] = pair
    return values


SAMPLED: dict[str, Any] = {"disks": ["sda1", "total"], "nics": ["lo", "total"], "mem": True}
"""What the properties ask a `Sampler` for: a partition, loopback, both totals, memory."""


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # (the clock is set)
@given(readings=cumulative_readings())
def test_a_sampler_gives_the_deltas_over_the_time_between_readings(
    clock: FakeClock, readings: list[Snapshot]
) -> None:
    # snapshot() is the readers' counters at the clock's time; sample() primes, then gives
    # the rates since the previous call, as a user would work them out by hand.
    twice = [reading for reading in readings for _ in range(2)]  # for snapshot(), sample()
    sampler = Sampler(**SAMPLED, readers=reading_readers(twice))
    for previous, reading in zip([None, *readings], readings, strict=False):
        clock.now = reading.monotonic
        assert sampler.snapshot() == reading
        s = sampler.sample()
        if previous is None:
            assert s is None
            continue
        assert s is not None
        assert (s.time, s.missing) == (reading.time, ())
        elapsed = reading.monotonic - previous.monotonic
        assert sample_rates(s) == pytest.approx(hand_rates(previous, reading, elapsed), rel=1e-12)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # (read as it moves)
@given(readings=cumulative_readings(), interval=st.floats(1e-6, 1e-3))
def test_run_gives_count_samples_an_interval_apart(
    clock: FakeClock, readings: list[Snapshot], interval: float
) -> None:
    # run(interval, count) primes, then yields count samples, each one interval after the
    # one before (the clock moves only as run sleeps), with the readings' rates over it.
    count = len(readings) - 1
    sampler = Sampler(**SAMPLED, readers=reading_readers(readings))
    started = clock.now
    samples = list(sampler.run(interval, count))
    assert len(samples) == count
    assert clock.now - started == pytest.approx(count * interval, rel=1e-6)
    for (before, after), s in zip(pairwise(readings), samples, strict=True):
        assert s.elapsed == pytest.approx(interval, rel=1e-6)
        assert s.missing == ()
        assert sample_rates(s) == pytest.approx(hand_rates(before, after, s.elapsed), rel=1e-12)
