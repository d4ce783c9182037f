"""Tests for devutils.system: rate arithmetic, dool's filters, CSV/JSON, GPUs, which_dstat."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import stat
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import _sampling
from devutils.system import (
    DISK_FILTER,
    NIC_FILTER,
    DeviceCounters,
    Sample,
    Sampler,
    Snapshot,
    compute_sample,
    gpu_probe,
    gpu_snapshot,
    parse_nvidia_smi_csv,
    sample,
    which_dstat,
)
from tests.test_cli import run

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi"
SAMPLE_FIELD_NAMES = [
    f.name for f in dataclasses.fields(Sample) if f.name not in {"time", "disks", "nics", "missing"}
]

# -- rate arithmetic -------------------------------------------------------------------------


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
    ["sda1", "vdb12", "hda3", "dm-0", "md127", "nvme0n1p2", "mmcblk0p10", "cciss/c0d0p1", "VxVM3"],
)
def test_disk_filter_excludes_what_dool_excludes(name: str) -> None:
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


@given(before=snapshots(), after=snapshots())
def test_rates_are_never_negative_or_infinite(before: Snapshot, after: Snapshot) -> None:
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
    if before.cpu is not None and after.cpu is not None:
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
    if same_devices and before.disks is not None and after.disks is not None:
        after = dataclasses.replace(
            after, disks={name: after.disks.get(name, (0, 0)) for name in before.disks}
        )
    if same_devices and before.nics is not None and after.nics is not None:
        after = dataclasses.replace(
            after, nics={name: after.nics.get(name, (0, 0)) for name in before.nics}
        )
    wanted = {"disks": ["sda", "sda1", "total"], "nics": ["lo", "eth0", "total"]}
    expected = compute_sample(before, after, **wanted)
    fast = compute_sample(
        dataclasses.replace(before, disks=as_counters(before.disks), nics=as_counters(before.nics)),
        dataclasses.replace(after, disks=as_counters(after.disks), nics=as_counters(after.nics)),
        **wanted,
    )
    assert fast == expected


def test_device_counters_is_a_read_only_mapping() -> None:
    counters = DeviceCounters(("sda", "lo"), [1, 2], [3, 4])
    assert counters == {"sda": (1, 3), "lo": (2, 4)}
    assert counters["lo"] == (2, 4)
    assert list(counters) == ["sda", "lo"]
    assert len(counters) == 2
    assert "sda" in counters
    assert "sdb" not in counters
    assert counters.get("sdb") is None
    with pytest.raises(KeyError, match="sdb"):
        counters["sdb"]
    assert repr(counters) == "{'sda': (1, 3), 'lo': (2, 4)}"


def test_sample_fields_are_the_dataclass_fields_in_order() -> None:
    from devutils._sampling import SAMPLE_FIELDS

    assert tuple(f.name for f in dataclasses.fields(Sample)) == SAMPLE_FIELDS


def test_zero_elapsed_gives_zero_rates() -> None:
    snap = Snapshot(5.0, 5.0, cpu=(1, 0, 0, 1, 0, 0, 0, 0), disks={"sda": (0, 0)}, system=(0, 0))
    later = Snapshot(
        5.0, 5.0, cpu=(1, 0, 0, 1, 0, 0, 0, 0), disks={"sda": (100, 100)}, system=(10, 10)
    )
    s = compute_sample(snap, later)
    assert (s.disk_read, s.interrupts, s.idl) == (0.0, 0.0, 100.0)


# -- the Sampler ------------------------------------------------------------------------------


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
    results = [sampler.sample() for _ in range(4)]
    assert results[0] is None
    for s in results[1:]:
        assert s is not None
        assert s.missing == ("disk",)
        assert s.disk_read is None
        assert s.net_recv is not None
        assert s.mem_available == 4
    assert capsys.readouterr().err.count("cannot read disk counters") == 1


def test_run_keeps_an_absolute_schedule() -> None:
    sampler = Sampler(readers=fake_readers())  # type: ignore[arg-type]
    start = time.monotonic()
    stamps = []
    for s in sampler.run(0.05, 4):
        stamps.append(time.monotonic() - start)
        time.sleep(0.01)  # work between samples must not push the schedule
        assert s.elapsed > 0
    assert len(stamps) == 4
    for k, stamp in enumerate(stamps, start=1):
        assert stamp == pytest.approx(0.05 * k, abs=0.03)


@pytest.mark.parametrize(
    ("interval", "count"), [(0, None), (-1, 1), (float("inf"), 1), (1, 0), (1, 1.5), (True, 1)]
)
def test_run_rejects_bad_arguments(interval: float, count: int | None) -> None:
    with pytest.raises(ValueError, match=r"interval|count"):
        Sampler().run(interval, count)


def test_sampler_rejects_bad_options() -> None:
    with pytest.raises(TypeError, match="disks must be a sequence of names"):
        Sampler(disks="sda")
    with pytest.raises(TypeError, match="mem must be a bool"):
        Sampler(mem=1)  # type: ignore[arg-type]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_proc_readers_agree_with_psutil() -> None:
    from devutils import _sampling as system

    proc = system.ProcReaders()
    assert proc.cpu()[2] / system._CLOCK_TICKS == pytest.approx(system._read_cpu()[2], abs=0.5)
    assert set(proc.disks()) == set(system._read_disks())
    assert set(proc.nics()) == set(system._read_nics())
    for read_proc, portable in (
        (proc.system, system._read_system),
        (proc.paging, system._read_paging),
    ):
        first, second = read_proc(), portable()
        assert all(b - a >= 0 for a, b in zip(first, second, strict=True))
        assert all(b - a < 10**6 for a, b in zip(first, second, strict=True))


# -- parsing /proc: the fast (one split) way against the obvious line-by-line way ----------

device_names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_./", min_size=1, max_size=12)
counter_values = st.integers(0, 2**64 - 1)


def diskstats_reference(data: bytes) -> dict[str, tuple[int, int]]:
    result = {}
    for line in data.decode().splitlines():
        fields = line.split()
        result[fields[2]] = (int(fields[5]) * 512, int(fields[9]) * 512)
    return result


@given(
    st.sampled_from([14, 18, 20]),
    st.lists(st.tuples(device_names, st.lists(counter_values, min_size=17, max_size=17))),
    st.booleans(),
)
def test_parse_diskstats_matches_line_by_line(
    width: int, devices: list[tuple[str, list[int]]], mixed: bool
) -> None:
    from devutils._sampling import parse_diskstats

    lines = [
        f"{7:4d} {index:7d} {name} " + " ".join(map(str, numbers[: width - 3]))
        for index, (name, numbers) in enumerate(devices)
    ]
    if mixed and lines:  # one line of another kernel's width: the line-by-line path
        lines[0] += " 0 0"
    data = "".join(line + "\n" for line in lines).encode()
    expected = diskstats_reference(data)
    if not expected:
        with pytest.raises(OSError, match="no disk"):
            parse_diskstats(data)
    else:
        assert parse_diskstats(data) == expected


NET_DEV_HEADER = (
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|"
    "bytes    packets errs drop fifo colls carrier compressed\n"
)


def net_dev_reference(data: bytes) -> dict[str, tuple[int, int]]:
    result = {}
    for line in data.decode().splitlines()[2:]:
        name, _, numbers = line.partition(":")
        fields = numbers.split()
        result[name.strip()] = (int(fields[0]), int(fields[8]))
    return result


@given(
    st.lists(
        st.tuples(
            st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.@", min_size=1, max_size=15),
            st.lists(counter_values, min_size=16, max_size=16),
        ),
        min_size=1,
    ),
    st.booleans(),
)
def test_parse_net_dev_matches_line_by_line(
    nics: list[tuple[str, list[int]]], old_kernel: bool
) -> None:
    from devutils._sampling import parse_net_dev

    # Linux writes "%6s: %7llu ..."; 2.4-era kernels glued the first number to the colon.
    separator = ":" if old_kernel else ": "
    body = "".join(
        f"{name:>6}{separator}" + " ".join(f"{n:7d}" for n in numbers) + "\n"
        for name, numbers in nics
    )
    data = (NET_DEV_HEADER + body).encode()
    assert parse_net_dev(data) == net_dev_reference(data)


def test_parse_stat_and_vmstat_and_loadavg() -> None:
    from devutils import _sampling

    stat_text = (
        b"cpu  100 2 30 4000 5 6 7 8 0 0\ncpu0 50 1 15 2000 2 3 3 4 0 0\n"
        b"intr 123456 0 9 0\nctxt 98765\nbtime 1700000000\n"
    )
    assert _sampling.parse_stat_cpu(stat_text) == [100, 2, 30, 4000, 5, 6, 7, 8]
    assert _sampling.parse_stat_cpu(b"cpu  1 2 3 4\n") == [1, 2, 3, 4, 0, 0, 0, 0]
    assert _sampling.parse_stat_system(stat_text) == (123456, 98765)
    with pytest.raises(OSError, match="no cpu line"):
        _sampling.parse_stat_cpu(b"intr 1\n")
    with pytest.raises(OSError, match="no intr or ctxt"):
        _sampling.parse_stat_system(b"cpu  1 2 3 4\n")
    page = _sampling._PAGE_SIZE
    vmstat = b"nr_free_pages 5\npswpin 3\npswpout 4\npgalloc 9\n"
    assert _sampling.parse_vmstat_paging(vmstat) == (3 * page, 4 * page)
    with pytest.raises(OSError, match="pswpout"):
        _sampling.parse_vmstat_paging(b"nr_free_pages 5\npswpin 3\npswpout 4")  # cut short
    assert _sampling.parse_loadavg(b"0.25 1.50 12.00 2/79 19584\n") == (0.25, 1.5, 12.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_proc_snapshot_reports_a_file_it_cannot_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from devutils import _sampling

    real_read = _sampling._read_proc

    def read(path: str, size: int | None = None) -> bytes:
        if path in {"/proc/vmstat", "/proc/stat"}:
            raise PermissionError(13, "Permission denied", path)
        return real_read(path, size)

    monkeypatch.setattr(_sampling, "_read_proc", read)
    values = _sampling.RawSampler(mem=True).snapshot()
    warned = [line.split()[3] for line in capsys.readouterr().err.splitlines()]
    assert sorted(warned) == ["cpu", "paging", "system"]
    assert (values["cpu"], values["system"], values["paging"]) == (None, None, None)
    assert values["disks"] is not None
    assert values["load"] is not None
    assert values["mem"] is not None
    sampler = _sampling.RawSampler()  # no fast path without those files: the general way
    assert sampler._fast is None
    assert sampler.sample() is None
    second = sampler.sample()
    assert second is not None
    assert set(second["missing"]) == {"cpu", "paging", "system"}


def test_vmstat_is_read_partly_and_fully_again_when_pswpout_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from devutils import _sampling

    files = [b"a 1\npswpin 2\npswpout 3\n" + b"z 0\n" * 400]
    sizes: list[int | None] = []

    def fake_read(path: str, size: int | None = None) -> bytes:
        assert path == "/proc/vmstat"
        sizes.append(size)
        return files[-1] if size is None else files[-1][:size]

    monkeypatch.setattr(_sampling, "_read_proc", fake_read)
    page = _sampling._PAGE_SIZE
    proc = _sampling.ProcReaders()
    assert proc.paging() == (2 * page, 3 * page)
    assert proc.paging() == (2 * page, 3 * page)
    assert sizes[0] is None
    assert sizes[1] is not None
    assert sizes[1] < len(files[0])
    files.append(b"long_line " + b"9" * 2000 + b"\npswpin 5\npswpout 6\n")  # moved far on
    assert proc.paging() == (5 * page, 6 * page)
    assert sizes[-1] is None


# -- the Linux fast path: the same numbers as the general one ----------------------------


def proc_files(  # noqa: PLR0917 - one argument a counter
    cpu: list[int],
    system: tuple[int, int],
    disks: list[tuple[str, int, int]],
    nics: list[tuple[str, int, int]],
    paging: tuple[int, int],
    load: tuple[float, float, float],
    width: int = 20,
) -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """/proc/stat, diskstats, net/dev, vmstat and loadavg, as Linux writes them."""
    stat_text = (
        "cpu  " + " ".join(map(str, cpu)) + " 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
        f"intr {system[0]} 0 9 0\nctxt {system[1]}\nbtime 1700000000\n"
    )
    diskstats = "".join(
        f"{8:4d} {index:7d} {name} 1 2 {read} 4 5 6 {written} "
        + " ".join(["7"] * (width - 10))
        + "\n"
        for index, (name, read, written) in enumerate(disks)
    )
    net_dev = NET_DEV_HEADER + "".join(
        f"{name:>6}: {received} 1 2 3 4 5 6 7 {sent} 1 2 3 4 5 6 7\n"
        for name, received, sent in nics
    )
    vmstat = f"nr_free_pages 5\npswpin {paging[0]}\npswpout {paging[1]}\npgalloc 9\n"
    loadavg = "{:.2f} {:.2f} {:.2f} 2/79 19584\n".format(*load)
    return tuple(text.encode() for text in (stat_text, diskstats, net_dev, vmstat, loadavg))  # type: ignore[return-value]


# Names the dool totals leave out (partitions, device-mapper, md; loopback, bonds, VLANs)
# among any others: the fast path keeps only the counted devices' counters.
proc_device_names = (
    st.sampled_from(["sda", "sda1", "dm-0", "md127", "nvme0n1p2", "lo", "bond0", "eth0.100"])
    | device_names
)
unique_devices = st.lists(proc_device_names, min_size=1, max_size=6, unique=True)
small_counters = st.integers(0, 2**40)
loads = st.tuples(*[st.floats(0, 500).map(lambda x: round(x, 2))] * 3)


@given(
    st.lists(small_counters, min_size=8, max_size=8),
    st.tuples(small_counters, small_counters),
    unique_devices.flatmap(
        lambda names: st.tuples(
            *[st.tuples(st.just(n), small_counters, small_counters) for n in names]
        )
    ),
    st.lists(st.tuples(proc_device_names, small_counters, small_counters), min_size=1, max_size=6),
    st.tuples(small_counters, small_counters),
    loads,
    st.sampled_from([14, 18, 20]),
)
def test_fast_parse_reads_what_the_group_parsers_read(  # noqa: PLR0917
    cpu: list[int],
    system: tuple[int, int],
    disks: tuple[tuple[str, int, int], ...],
    nics: list[tuple[str, int, int]],
    paging: tuple[int, int],
    load: tuple[float, float, float],
    width: int,
) -> None:
    from devutils import _sampling

    files = proc_files(cpu, system, list(disks), nics, paging, load, width)
    stat_text, diskstats, net_dev, vmstat, loadavg = files
    if len({name for name, _, _ in nics}) < len(nics):  # a name twice: the general way
        with pytest.raises(ValueError, match="twice"):
            _sampling.ProcSampler().parse(*files)
        return
    fast = _sampling.ProcSampler().parse(*files)
    assert fast is not None
    snapshot = _sampling.ProcSampler.general(fast)
    assert snapshot["cpu"] == _sampling.parse_stat_cpu(stat_text) == cpu
    assert snapshot["system"] == _sampling.parse_stat_system(stat_text) == system
    # the devices the totals count, each as the general parser reads it
    all_disks = _sampling.parse_diskstats(diskstats)
    all_nics = _sampling.parse_net_dev(net_dev)
    counted_disks = {n: all_disks[n] for n in all_disks if not _sampling.DISK_FILTER.match(n)}
    counted_nics = {n: all_nics[n] for n in all_nics if not _sampling.NIC_FILTER.match(n)}
    assert dict(snapshot["disks"]) == counted_disks
    assert dict(snapshot["nics"]) == counted_nics
    assert snapshot["paging"] == _sampling.parse_vmstat_paging(vmstat)
    assert snapshot["load"] == _sampling.parse_loadavg(loadavg) == load
    assert list(snapshot) == list(_sampling.RawSampler().snapshot())


@pytest.mark.parametrize(
    "broken",
    [
        {0: b"intr 1\nctxt 2\n"},  # no cpu line
        {0: b"cpu  1 2 3 4\nintr 1\nctxt 2\n"},  # an old kernel's short cpu line
        {1: b""},  # no disk
        {1: b"   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n   8       1 sda1 1 2 3\n"},
        {2: NET_DEV_HEADER.encode() + b"  eth0: 1 2 3\n"},
        {3: b"nr_free_pages 5\npswpin 3\npswpout 4"},  # cut short
        {4: b"garbage\n"},
    ],
)
def test_fast_parse_leaves_odd_files_to_the_general_way(broken: dict[int, bytes]) -> None:
    from devutils import _sampling

    files = list(proc_files([1] * 8, (1, 2), [("sda", 1, 2)], [("eth0", 3, 4)], (5, 6), (1, 2, 3)))
    assert _sampling.ProcSampler().parse(*files) is not None
    for index, text in broken.items():
        files[index] = text
    with contextlib.suppress(ValueError):  # ValueError: the general way too
        assert _sampling.ProcSampler().parse(*files) is None


def general_snapshot(files: tuple[bytes, ...], clock: float) -> dict[str, Any]:
    """The general readers' snapshot of *files* (every device), taken at *clock*."""
    from devutils import _sampling

    stat_text, diskstats, net_dev, vmstat, loadavg = files
    return {
        "cpu": _sampling.parse_stat_cpu(stat_text),
        "disks": _sampling.parse_diskstats(diskstats),
        "nics": _sampling.parse_net_dev(net_dev),
        "paging": _sampling.parse_vmstat_paging(vmstat),
        "system": _sampling.parse_stat_system(stat_text),
        "load": _sampling.parse_loadavg(loadavg),
        "mem": None,
        "monotonic": clock,
        "time": 1.7e9 + clock,
        "groups": _sampling.GROUPS[:-1],
    }


Pair = tuple[Any, Any, float, dict[str, Any], dict[str, Any]]


@st.composite
def fast_snapshot_pairs(draw: st.DrawFn) -> Pair:
    """Two snapshots parsed in turn by one `ProcSampler`, *elapsed* apart: usually
    counters that moved on over the same devices; else a reset, devices that changed,
    or no time. With them, the general readers' snapshots of the same files."""
    odd = draw(st.sampled_from([None, None, None, "reset", "devices", "time"]))
    counters = st.lists(small_counters, min_size=12, max_size=12)
    disks = [(n, draw(small_counters), draw(small_counters)) for n in draw(unique_devices)]
    nics = [(n, draw(small_counters), draw(small_counters)) for n in draw(unique_devices)]
    before = draw(counters)
    steps = draw(st.lists(st.integers(0, 2**30), min_size=12 + 2 * len(disks) + 2 * len(nics)))
    after = [v + step for v, step in zip(before, steps, strict=False)]
    moved = iter(steps[12:])
    after_disks = [(n, r + next(moved), w + next(moved)) for n, r, w in disks]
    after_nics = [(n, r + next(moved), s + next(moved)) for n, r, s in nics]
    elapsed = draw(st.sampled_from([0.5, 1.0, 3600.0]))
    if odd == "reset":  # one counter back to near 0
        which = draw(st.integers(0, 13))
        if which < 12:
            after[which] = draw(st.integers(0, 2**20))
        elif which == 12:
            after_disks[0] = (disks[0][0], 0, after_disks[0][2])
        else:
            after_nics[-1] = (nics[-1][0], nics[-1][1], 0)
    elif odd == "devices":
        after_disks = draw(st.sampled_from([after_disks[::-1], after_disks[1:] or [("x", 1, 2)]]))
        after_nics = [*after_nics, ("new0", 1, 2)] if draw(st.booleans()) else after_nics
    elif odd == "time":
        elapsed = draw(st.sampled_from([0.0, 1e-10]))
    load = draw(loads)
    sampler = _sampling.ProcSampler()
    files_before = proc_files(
        before[:8], (before[8], before[9]), disks, nics, (before[10], before[11]), load
    )
    files_after = proc_files(
        after[:8], (after[8], after[9]), after_disks, after_nics, (after[10], after[11]), load
    )
    first = sampler.parse(*files_before)
    second = sampler.parse(*files_after)
    assert first is not None
    assert second is not None
    first = (0.0, 1.7e9, *first[2:])
    second = (elapsed, 1.7e9 + elapsed, *second[2:])
    return (
        first,
        second,
        elapsed,
        general_snapshot(files_before, 0.0),
        general_snapshot(files_after, elapsed),
    )


@given(fast_snapshot_pairs())
def test_fast_rates_are_compute_rates(pair: Pair) -> None:
    """The fast path's rates are `compute_rates`' over the general readers' snapshots
    (every device), or None where those needed mending."""
    from devutils import _sampling

    before, after, elapsed, general_before, general_after = pair
    expected = _sampling.compute_rates(general_before, general_after)
    # the fast snapshots, converted for the general way (the fallback), give them too,
    # and so do one of each (a sample whose snapshot came the other way)
    converted_before = _sampling.ProcSampler.general(before)
    converted_after = _sampling.ProcSampler.general(after)
    for mixed in (
        (converted_before, converted_after),
        (general_before, converted_after),
        (converted_before, general_after),
    ):
        assert _sampling.compute_rates(*mixed) == expected
    fast = _sampling.ProcSampler.rates(before, after)
    if fast is None:  # the general way mends it
        usual = (
            elapsed >= 1e-9
            and after[3] is before[3]
            and after[6] is before[6]
            and min(map(int.__sub__, after[2], before[2])) >= 0
            and sum(map(int.__sub__, after[2], before[2])) > 0
        )
        assert not usual or any(
            new < old
            for index in (4, 5, 7, 8)
            for new, old in zip(after[index], before[index], strict=True)
        )
        return
    assert list(fast) == list(expected) == list(_sampling.SAMPLE_FIELDS)
    assert fast == expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_sampler_takes_the_fast_path_and_the_general_one_when_it_must(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from devutils import _sampling

    assert _sampling.RawSampler()._fast is not None
    for options in ({"mem": True}, {"disks": ["total"]}, {"nics": ["lo"]}):
        assert _sampling.RawSampler(**options)._fast is None
    assert _sampling.RawSampler(readers={"load": lambda: (1.0, 2.0, 3.0)})._fast is None

    sampler = _sampling.RawSampler()
    fast = sampler._fast
    assert fast is not None
    assert sampler.sample() is None
    time.sleep(0.02)
    fast._sizes = [8] * 5  # every file overflows its buffer: the general readers take it
    mixed = sampler.sample()
    assert mixed is not None
    assert list(mixed) == list(_sampling.SAMPLE_FIELDS)
    assert fast._sizes[0] > 8  # and the fast path reads whole files again
    time.sleep(0.02)
    assert type(fast.snapshot()) is tuple
    calls = []
    real_rates = _sampling.ProcSampler.rates

    def rates(before: Any, after: Any) -> Any:
        calls.append(real_rates(before, after))
        return calls[-1]

    monkeypatch.setattr(_sampling.ProcSampler, "rates", staticmethod(rates))
    for _ in range(3):
        time.sleep(0.02)
        result = sampler.sample()
        assert result is not None
        assert sum(result[k] for k in ("usr", "sys", "idl", "wai", "stl")) == pytest.approx(100)
        assert result["missing"] == ()
    assert len(calls) == 2  # not the first: its previous snapshot came the general way
    assert any(call is not None for call in calls)

    # Files that never parse the fast way (an odd kernel, say): after three snapshots in
    # a row the general way, the sampler stops trying.
    monkeypatch.setattr(_sampling.ProcSampler, "parse", lambda self, *files: None)
    for _ in range(3):
        assert sampler._fast is fast
        time.sleep(0.02)
        result = sampler.sample()
        assert result is not None
        assert result["missing"] == ()
    assert fast.misses == 3
    assert sampler._fast is None


def test_snapshot_cpu_is_in_seconds() -> None:
    import psutil

    idle = Sampler().snapshot().cpu
    assert idle is not None
    assert idle[3] == pytest.approx(psutil.cpu_times().idle, abs=1.0)


def test_one_real_sampling_run() -> None:
    s = sample(0.2, mem=True)
    assert s.elapsed == pytest.approx(0.2, abs=0.1)
    assert s.usr is not None
    assert sum(v for v in (s.usr, s.sys, s.idl, s.wai, s.stl) if v is not None) == pytest.approx(
        100
    )
    assert s.interrupts is not None
    assert s.interrupts >= 0
    assert s.mem_available is not None
    assert s.mem_available > 0
    assert abs(s.time - time.time()) < 5


# -- the stat command's CSV and JSON contracts ---------------------------------------------------

DEFAULT_HEADER = (
    "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl,dsk/total:read,dsk/total:writ,"
    "net/total:recv,net/total:send,paging:in,paging:out,system:int,system:csw,"
    "load:1m,load:5m,load:15m"
)


def test_stat_csv_default_header_and_rows() -> None:
    result = run(["stat", "--csv", "0.05", "2"])
    assert result.status == 0
    lines = result.text.splitlines()
    assert lines[0] == DEFAULT_HEADER
    assert len(lines) == 3
    for line in lines[1:]:
        cells = line.split(",")
        assert len(cells) == 17
        assert abs(float(cells[0]) - time.time()) < 10
        assert sum(float(c) for c in cells[1:6]) == pytest.approx(100, abs=0.01)


def test_stat_csv_nics() -> None:
    result = run(["stat", "--csv", "-n", "-N", "lo,total", "0.05", "1"])
    header = result.text.splitlines()[0]
    assert header == "epoch,net/lo:recv,net/lo:send,net/total:recv,net/total:send"


def test_stat_json_lines() -> None:
    result = run(["stat", "--json", "0.05", "2"])
    records = [json.loads(line) for line in result.text.splitlines()]
    assert len(records) == 2
    # every field, in the dataclass's order, null where not measured (no --mem here)
    assert list(records[0]) == [f.name for f in dataclasses.fields(Sample)]
    assert records[0]["mem_used"] is None
    assert {
        "time",
        "elapsed",
        "usr",
        "disk_read",
        "net_send",
        "page_in",
        "interrupts",
        "load1",
        "missing",
    } <= set(records[0])


# -- the stat command's rows: generated code against the obvious loop ---------------------


def reference_cells(columns: list[Any], sample: dict[str, Any]) -> list[float | None]:
    values = []
    for column in columns:
        value = column.get(sample, [])
        values.append(None if value is None else value * column.scale)
    return values


def reference_table_row(columns: list[Any], sample: dict[str, Any]) -> str:
    cells = []
    for column, value in zip(columns, reference_cells(columns, sample), strict=True):
        cells.append(column.separator)
        cells.append(column.render(value))
    return "".join(cells)


def reference_csv_row(columns: list[Any], sample: dict[str, Any]) -> str:
    def raw(value: float | None) -> str:
        if value is None:
            return ""
        if float(value).is_integer():
            return str(int(value))
        return f"{value:.3f}".rstrip("0").rstrip(".")

    cells = [f"{sample['time']:.3f}"]
    for column, value in zip(columns, reference_cells(columns, sample), strict=True):
        if column.kind != "time":
            cells.append(raw(value))
    return ",".join(cells)


stat_values = st.none() | st.floats(0, 1e18, allow_nan=False) | st.integers(0, 2**50)
stat_options = st.fixed_dictionaries(
    {
        name: st.booleans()
        for name in ("cpu", "disk", "net", "page", "sys", "load", "mem", "all", "time", "bits")
    }
)


@given(
    stat_options,
    st.fixed_dictionaries(dict.fromkeys(SAMPLE_FIELD_NAMES, stat_values)),
    st.dictionaries(st.sampled_from(["sda", "lo"]), st.tuples(stat_values, stat_values)),
)
def test_compiled_rows_match_the_obvious_loop(
    options: dict[str, bool], values: dict[str, Any], devices: dict[str, Any]
) -> None:
    import argparse

    from devutils._cli_system import _compile_row, build_columns

    args = argparse.Namespace(**options, disks="sda,total,sdz", nics="lo,total")
    columns = build_columns(args, [])
    pairs = {k: (a, b) for k, (a, b) in devices.items() if a is not None and b is not None}
    sample = {**values, "time": 1795000000.25, "disks": pairs, "nics": pairs, "missing": ()}
    assert _compile_row(columns, "table")(sample, []) == reference_table_row(columns, sample)
    assert _compile_row(columns, "csv")(sample, []) == reference_csv_row(columns, sample)


def test_csv_cells_drop_trailing_zeros_only() -> None:
    import argparse

    from devutils._cli_system import _compile_row, build_columns

    options = dict.fromkeys(("disk", "net", "page", "load", "mem", "all", "time", "bits"), False)
    args = argparse.Namespace(**options, cpu=True, sys=False, disks=None, nics=None)
    row = _compile_row(build_columns(args, []), "csv")
    values: dict[str, float | None] = {"usr": 10.0, "sys": 5.5, "idl": 0.0, "wai": 2.9999}
    values["stl"] = 100.05
    assert row({"time": 1795000000.1, **values}, []) == "1795000000.100,10,5.5,0,3,100.05"
    values["sys"] = None  # an empty cell: cell by cell, same result
    assert row({"time": 1795000000.1, **values}, []) == "1795000000.100,10,,0,3,100.05"
    for usr, cell in [(100.0, "100"), (1000.5, "1000.5"), (200.25, "200.25"), (0.0004, "0")]:
        assert row({"time": 1795000000.1, **values, "usr": usr}, []).split(",")[1] == cell
    values["sys"] = float(2**60)  # beyond 2**53: every digit still exact
    assert row({"time": 1795000000.1, **values}, []).split(",")[2] == str(2**60)


def test_stat_rows_written_to_a_real_descriptor(tmp_path: Path) -> None:
    # In a process of its own, rows go straight to the file descriptors (os.write): the
    # header first, then each row whole, on stdout and in --output alike.
    log = tmp_path / "log.csv"
    completed = subprocess.run(
        [sys.executable, "-m", "devutils", "stat", "--output", str(log), "-c", "0.05", "3"],
        capture_output=True,
        check=True,
        env=dict(os.environ, NO_COLOR="1"),
    )
    table = completed.stdout.decode().splitlines()
    assert table[1] == "usr sys idl wai stl"
    assert len(table) == 5
    assert all(len(line) == len(table[1]) for line in table[2:])
    lines = log.read_text().splitlines()
    assert lines[0] == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl"
    assert len(lines) == 4
    assert all(len(line.split(",")) == 6 for line in lines[1:])


def test_stat_table_is_plain_ascii() -> None:
    result = run(["stat", "-t", "-c", "-m", "0.05", "2"])
    assert result.status == 0
    assert result.out.isascii()
    assert b"\x1b" not in result.out
    lines = result.text.splitlines()
    assert "--total-cpu-usage--" in lines[0]
    assert lines[1].startswith("          time|usr sys idl wai stl|")
    assert len(lines) == 4


def test_stat_output_file(tmp_path: Path) -> None:
    target = tmp_path / "log.csv"
    result = run(["stat", "--output", str(target), "0.05", "1"])
    assert result.status == 0
    assert "usr" in result.text  # the table still goes to stdout
    assert target.read_text().splitlines()[0] == DEFAULT_HEADER


@pytest.mark.parametrize("kind", ["--csv", "--json"])
def test_stat_output_with_csv_or_json_also_goes_to_stdout(tmp_path: Path, kind: str) -> None:
    # --output is "also": stdout keeps what --csv / --json print, the file gets the same
    target = tmp_path / "log"
    result = run(["stat", "-c", kind, "--output", str(target), "0.02", "2"])
    assert result.status == 0
    shown = result.text.splitlines()
    assert len(shown) == (3 if kind == "--csv" else 2)
    assert target.read_text() == result.text
    # a second run continues the file under its one header; stdout gets a header of its own
    again = run(["stat", "-c", kind, "--output", str(target), "0.02", "1"])
    assert again.status == 0
    assert len(again.text.splitlines()) == (2 if kind == "--csv" else 1)
    assert target.read_text() == result.text + again.text.splitlines(keepends=True)[-1]


def test_stat_disk_paths_become_kernel_names(tmp_path: Path) -> None:
    from devutils._cli_system import _disk_names

    link = tmp_path / "by-label-data"
    link.symlink_to("/dev/cciss/c0d0")  # need not exist: resolved as far as it goes
    assert _disk_names(f"/dev/sdz,total,{link},sdz,,/home/x") == "sdz,total,cciss!c0d0,/home/x"
    result = run(["stat", "-d", "--csv", "-D", f"{link},total,total", "0.02", "1"])
    assert result.text.splitlines()[0] == (
        "epoch,dsk/cciss!c0d0:read,dsk/cciss!c0d0:writ,dsk/total:read,dsk/total:writ"
    )


def test_a_device_asked_for_that_is_not_there_is_left_out() -> None:
    sampler = Sampler(disks=["nosuchdisk", "total"], nics=["nosuchnic", "total"])
    assert sampler.sample() is None
    time.sleep(0.02)
    s = sampler.sample()
    assert s is not None
    assert list(s.disks) == ["total"]
    assert list(s.nics) == ["total"]
    assert s.disks.get("nosuchdisk") is None


def test_stat_warns_once_per_device_that_is_not_there() -> None:
    present = _sampling.RawSampler().snapshot()
    nic = next(iter(present["nics"]))
    args = ["-c", "-d", "-n", "-D", "nosuchdisk,total", "-N", f"{nic},nosuchnic"]
    result = run(["stat", *args, "0.02", "2"])
    assert result.status == 0
    warnings = result.err.splitlines()
    assert len(warnings) == 2
    assert warnings[0].startswith("devutils stat: no disk named 'nosuchdisk' now (there are: ")
    assert warnings[1].startswith("devutils stat: no interface named 'nosuchnic' now (there are: ")
    assert f"{nic}" in warnings[1]
    assert all(line.endswith("its columns show '-' until it appears") for line in warnings)
    rows = result.text.splitlines()[2:]
    assert len(rows) == 2
    assert all(row.split("|")[1].split() == ["-", "-"] for row in rows)  # dsk/nosuchdisk
    assert run(["stat", "-N", f"{nic},total", "-c", "0.02", "1"]).err == ""


def test_stat_output_log_grows_under_one_header(tmp_path: Path) -> None:
    # A second run appends its rows under the header already there; an empty file gets it.
    log = tmp_path / "log.csv"
    for _ in range(2):
        assert run(["stat", "-c", "--csv", "--output", str(log), "0.02", "2"]).status == 0
    lines = log.read_text().splitlines()
    assert lines[0] == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl"
    assert len(lines) == 5
    assert all(line[0].isdigit() and len(line.split(",")) == 6 for line in lines[1:])
    records = tmp_path / "log.jsonl"
    records.write_bytes(b"")
    for _ in range(2):
        assert run(["stat", "-c", "--json", "--output", str(records), "0.02", "1"]).status == 0
    lines = records.read_text().splitlines()
    assert len(lines) == 2
    assert all(json.loads(line)["idl"] >= 0 for line in lines)


@pytest.mark.parametrize(
    ("args", "content", "expected"),
    [
        (["--csv"], b"my notes\n", "this command's CSV header"),
        (["-d", "--csv"], b"epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl\n1,2,3,4,5,6\n", "CSV"),
        ([], b"epoch,cpu:usr\n", "CSV"),  # the table on stdout, CSV of other columns to the file
        (["--json"], b"epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl\n", "JSON record"),
        (["--json"], b'{"no": "time"}\n', "JSON record"),
        (["--csv"], b"\xff\xfe binary\x00", "CSV header"),
    ],
)
def test_stat_output_refuses_a_file_holding_something_else(
    tmp_path: Path, args: list[str], content: bytes, expected: str
) -> None:
    target = tmp_path / "notes"
    target.write_bytes(content)
    before = target.stat()
    result = run(["stat", *args, "--output", str(target), "0.02", "1"])
    assert result.status == 2
    assert result.err.startswith(f"devutils stat: error: --output {str(target)!r} already holds")
    assert expected in result.err
    assert "--no-header" in result.err
    assert target.read_bytes() == content  # untouched
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    assert result.out == b""


def test_stat_output_no_header_appends_without_looking(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.write_text("my notes\n")
    assert (
        run(["stat", "-c", "--csv", "--no-header", "--output", str(target), "0.02", "1"]).status
        == 0
    )
    lines = target.read_text().splitlines()
    assert lines[0] == "my notes"
    assert len(lines) == 2
    assert len(lines[1].split(",")) == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0"], "must be a positive number"),
        (["1", "0"], "must be a positive integer"),
        (["--csv", "--json"], "not allowed with"),
        (["--bits", "--csv", "0.01", "1"], "argument --bits"),
        (["--json", "--bits", "-n", "0.01", "1"], "argument --bits"),
    ],
)
def test_stat_usage_errors(args: list[str], message: str) -> None:
    result = run(["stat", *args])
    assert result.status == 2
    assert message in result.err
    assert result.text == ""


def test_stat_bits_set_the_tables_unit_and_the_log_stays_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CSV keys say bytes/s whatever the table shows: --output under --bits keeps bytes.
    sample: dict[str, Any] = dict.fromkeys(_sampling.SAMPLE_FIELDS, 0.0)
    sample.update(time=1795000000.5, net_recv=1000.0, net_send=250.0)
    sample.update(disks={}, nics={}, missing=())

    def fixed_run(self: Any, interval: float, count: int | None) -> Any:
        return iter([sample])

    monkeypatch.setattr(_sampling.RawSampler, "run", fixed_run)
    log = tmp_path / "net.csv"
    result = run(["stat", "-n", "--bits", "--output", str(log), "1", "1"])
    assert result.status == 0
    assert result.text.splitlines()[2] == " 8000  2000"
    assert log.read_text() == "epoch,net/total:recv,net/total:send\n1795000000.500,1000,250\n"
    result = run(["stat", "-n", "1", "1"])
    assert result.text.splitlines()[2] == " 1000   250"


# -- GPUs through a fake nvidia-smi ----------------------------------------------------------------

FAKE_SMI = """#!/bin/sh
case "$*" in
  *--query-compute-apps*) file="$FAKE_SMI_APPS" ;;
  *) file="$FAKE_SMI_GPU" ;;
esac
if [ -n "$FAKE_SMI_SLEEP" ]; then sleep "$FAKE_SMI_SLEEP"; fi
cat "$file"
exit "${FAKE_SMI_EXIT:-0}"
"""


@pytest.fixture
def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "bin" / "nvidia-smi"
    script.parent.mkdir()
    script.write_text(FAKE_SMI)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    for name in ("FAKE_SMI_APPS", "FAKE_SMI_GPU", "FAKE_SMI_SLEEP", "FAKE_SMI_EXIT"):
        monkeypatch.delenv(name, raising=False)
    return script


def serve(
    monkeypatch: pytest.MonkeyPatch, gpu: str, apps: str | None = None, exit_status: int = 0
) -> None:
    monkeypatch.setenv("FAKE_SMI_GPU", str(FIXTURES / gpu))
    monkeypatch.setenv("FAKE_SMI_APPS", str(FIXTURES / (apps or gpu)))
    monkeypatch.setenv("FAKE_SMI_EXIT", str(exit_status))


def test_h200_under_load(fake_smi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve(
        monkeypatch,
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert (gpu.index, gpu.name, gpu.uuid) == (
        0,
        "NVIDIA H200",
        "GPU-00000000-0000-0000-0000-000000000000",
    )
    assert gpu.utilization == 100.0
    assert gpu.memory_used == 32362 * 2**20
    assert gpu.memory_total == 143771 * 2**20
    assert (gpu.temperature, gpu.power_draw, gpu.mig_mode) == (52.0, 627.40, "Disabled")
    assert [p.pid for p in gpu.processes] == [10291, 10293, 10309]
    assert gpu.processes[2].used_memory == 28234 * 2**20
    assert gpu.processes[0].visible is False or gpu.processes[0].name is not None
    assert gpu_probe(backend="nvidia-smi").backend == "nvidia-smi"


def test_mig_utilization_is_none(fake_smi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve(
        monkeypatch,
        "h200-mig__590.48.01__load__query-gpu.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.utilization is None
    assert gpu.mig_mode == "Enabled"
    assert gpu.memory_used == 16959 * 2**20
    assert gpu.processes == ()


def test_windows_process_memory_is_none(fake_smi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve(
        monkeypatch,
        "windows-rtx-2080-super__591.86__load__query-gpu.csv",
        "windows-rtx-2080-super__591.86__load__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.mig_mode is None
    assert gpu.processes
    assert all(p.used_memory is None for p in gpu.processes)


def test_nounits_csv(fake_smi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve(
        monkeypatch,
        "netdata__tesla-p100__csv-nounits.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.name == "Tesla P100-PCIE-16GB"
    assert (gpu.utilization, gpu.memory_used, gpu.temperature, gpu.power_draw) == (
        0.0,
        0,
        37.0,
        28.16,
    )
    assert gpu.memory_total is None  # not in that query


@pytest.mark.parametrize(
    ("fixture", "status", "reason"),
    [
        ("error__no-driver.txt", 9, "no NVIDIA driver loaded"),
        ("error__driver-library-mismatch__exit18.txt", 18, "driver/library version mismatch"),
    ],
)
def test_driver_errors_give_empty_list_and_reason(
    fake_smi: Path, monkeypatch: pytest.MonkeyPatch, fixture: str, status: int, reason: str
) -> None:
    serve(monkeypatch, fixture, exit_status=status)
    assert gpu_snapshot(backend="nvidia-smi") == []
    probe = gpu_probe(backend="nvidia-smi")
    assert probe.backend is None
    assert f"exit status {status}" in probe.reason
    assert reason in probe.reason


def test_garbage_output(fake_smi: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("Segmentation fault\n\x00\x01 random bytes, more, fields\n")
    monkeypatch.setenv("FAKE_SMI_GPU", str(garbage))
    monkeypatch.setenv("FAKE_SMI_APPS", str(garbage))
    assert gpu_snapshot(backend="nvidia-smi") == []
    assert "not the expected CSV" in gpu_probe(backend="nvidia-smi").reason


def test_hung_nvidia_smi_is_killed_at_the_timeout(
    fake_smi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve(monkeypatch, "h200__590.48.01__load__query-gpu.csv")
    monkeypatch.setenv("FAKE_SMI_SLEEP", "30")
    start = time.monotonic()
    assert gpu_snapshot(timeout=0.5, backend="nvidia-smi") == []
    assert time.monotonic() - start < 5
    assert "timed out after 0.3 s" in gpu_probe(timeout=0.3, backend="nvidia-smi").reason


def test_no_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_snapshot(backend="nvidia-smi") == []
    assert "nvidia-smi not found on PATH" in gpu_probe(backend="nvidia-smi").reason
    monkeypatch.setitem(sys.modules, "pynvml", None)  # and no nvidia-ml-py either
    assert gpu_snapshot() == []
    reason = gpu_probe().reason
    assert "NVML: nvidia-ml-py is not installed" in reason
    assert "nvidia-smi not found on PATH" in reason


# NVML through a stand-in for nvidia-ml-py's pynvml module: the calls devutils makes, with
# the real module's types (str names, mW power, [current, pending] MIG modes, None for a
# process's memory that NVML cannot see), answering what the H200 capture above shows.
MIB = 2**20
H200_PROCESSES = [(10291, 2566 * MIB), (10293, 1542 * MIB), (10309, 28234 * MIB)]


class FakeNvmlError(Exception):
    pass


def fake_pynvml(
    *,
    init_error: str | None = None,
    unsupported: frozenset[str] = frozenset(),
    mig: int = 0,
    process_memory: list[int | None] | None = None,
) -> tuple[Any, list[str]]:
    """A pynvml module for one H200, and the list of the calls made to it."""
    import types

    calls: list[str] = []
    module = types.ModuleType("pynvml")

    def answer(name: str, value: Any) -> Any:
        calls.append(name)
        if name in unsupported:
            raise FakeNvmlError("Not Supported")
        return value

    def init() -> None:
        calls.append("nvmlInit")
        if init_error is not None:
            raise FakeNvmlError(init_error)

    memory = types.SimpleNamespace(total=143771 * MIB, used=32362 * MIB, free=110796 * MIB)
    used = process_memory or [m for _, m in H200_PROCESSES]
    processes = [
        types.SimpleNamespace(pid=pid, usedGpuMemory=m)
        for (pid, _), m in zip(H200_PROCESSES, used, strict=True)
    ]
    uuid = "GPU-00000000-0000-0000-0000-000000000000"
    names: dict[str, Any] = {
        "NVMLError": FakeNvmlError,
        "NVML_TEMPERATURE_GPU": 0,
        "nvmlInit": init,
        "nvmlShutdown": lambda: calls.append("nvmlShutdown"),
        "nvmlDeviceGetCount": lambda: answer("nvmlDeviceGetCount", 1),
        "nvmlDeviceGetHandleByIndex": lambda i: answer("nvmlDeviceGetHandleByIndex", ("h", i)),
        "nvmlDeviceGetUUID": lambda h: answer("nvmlDeviceGetUUID", uuid),
        "nvmlDeviceGetName": lambda h: answer("nvmlDeviceGetName", "NVIDIA H200"),
        "nvmlDeviceGetUtilizationRates": lambda h: answer(
            "nvmlDeviceGetUtilizationRates", types.SimpleNamespace(gpu=100, memory=7)
        ),
        "nvmlDeviceGetMemoryInfo": lambda h: answer("nvmlDeviceGetMemoryInfo", memory),
        "nvmlDeviceGetTemperature": lambda h, sensor: answer("nvmlDeviceGetTemperature", 52),
        "nvmlDeviceGetPowerUsage": lambda h: answer("nvmlDeviceGetPowerUsage", 627400),
        "nvmlDeviceGetMigMode": lambda h: answer("nvmlDeviceGetMigMode", [mig, mig]),
        "nvmlDeviceGetComputeRunningProcesses": lambda h: answer(
            "nvmlDeviceGetComputeRunningProcesses", processes
        ),
    }
    for name, value in names.items():
        setattr(module, name, value)
    return module, calls


def test_fake_pynvml_has_the_real_modules_names() -> None:
    real = pytest.importorskip("pynvml")  # nvidia-ml-py, in the test dependency group
    fake, _ = fake_pynvml()
    for name in vars(fake):
        if not name.startswith("__"):
            assert hasattr(real, name), name
    assert real.NVML_TEMPERATURE_GPU == fake.NVML_TEMPERATURE_GPU
    assert issubclass(real.NVMLError_NotSupported, real.NVMLError)


def test_nvml_reads_the_h200(monkeypatch: pytest.MonkeyPatch) -> None:
    module, calls = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backend="nvml")
    assert (gpu.index, gpu.name, gpu.uuid) == (0, "NVIDIA H200", module.nvmlDeviceGetUUID(None))
    assert gpu.utilization == 100.0
    assert (gpu.memory_used, gpu.memory_total) == (32362 * MIB, 143771 * MIB)
    assert gpu.temperature == 52.0
    assert gpu.power_draw == pytest.approx(627.4)
    assert gpu.mig_mode == "Disabled"
    assert [(p.pid, p.used_memory) for p in gpu.processes] == H200_PROCESSES
    assert calls.count("nvmlInit") == calls.count("nvmlShutdown") == 1
    probe = gpu_probe()  # auto: NVML answers first
    assert (probe.backend, probe.gpus, probe.reason) == ("nvml", 1, "")
    result = run(["stat", "--csv", "--gpu", "-c", "0.05", "1"])
    assert result.text.splitlines()[0].endswith(",gpu0:util,gpu0:mem")
    assert result.text.splitlines()[1].endswith(f",100,{32362 * MIB}")


def test_stat_gpu_keeps_nvml_initialized_between_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # NVML counts its initializations: held for the run, each sample's own start and
    # shutdown only move the count, and the library is torn down once, at the end.
    module, calls = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    result = run(["stat", "--csv", "--gpu", "-c", "0.02", "3"])
    assert result.status == 0
    assert len(result.text.splitlines()) == 4
    held, torn_down = 0, 0
    for call in calls:
        if call in ("nvmlInit", "nvmlShutdown"):
            held += 1 if call == "nvmlInit" else -1
            torn_down += held == 0
    assert held == 0
    assert torn_down == 1
    assert calls.count("nvmlInit") == 5  # the hold, the first look and one per sample


def test_nvml_not_supported_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    # MIG: no utilization; Windows (WDDM): no process memory; some boards: no power.
    unsupported = frozenset({"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetPowerUsage"})
    module, calls = fake_pynvml(unsupported=unsupported, mig=1, process_memory=[None] * 3)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backend="nvml")
    assert gpu.utilization is None
    assert gpu.power_draw is None
    assert gpu.mig_mode == "Enabled"
    assert gpu.memory_used == 32362 * MIB
    assert [p.used_memory for p in gpu.processes] == [None] * 3
    assert [p.pid for p in gpu.processes] == [pid for pid, _ in H200_PROCESSES]
    assert calls.count("nvmlShutdown") == 1


def test_nvml_failure_falls_back_to_nvidia_smi(
    fake_smi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, calls = fake_pynvml(init_error="Driver Not Loaded")
    monkeypatch.setitem(sys.modules, "pynvml", module)
    serve(
        monkeypatch,
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    [gpu] = gpu_snapshot()
    assert gpu.memory_used == 32362 * MIB
    assert gpu_probe().backend == "nvidia-smi"
    assert "nvmlShutdown" not in calls  # init failed: nothing to shut down
    assert gpu_snapshot(backend="nvml") == []
    assert gpu_probe(backend="nvml").reason == "NVML: FakeNvmlError: Driver Not Loaded"
    serve(monkeypatch, "error__no-driver.txt", exit_status=9)
    reason = gpu_probe().reason
    assert reason.startswith("NVML: FakeNvmlError: Driver Not Loaded; ")
    assert "nvidia-smi" in reason


def test_parse_rejects_mismatched_rows() -> None:
    with pytest.raises(ValueError, match="line 2 has 1 fields"):
        parse_nvidia_smi_csv("index, name\n0\n")
    with pytest.raises(ValueError, match="not an nvidia-smi CSV header"):
        parse_nvidia_smi_csv((FIXTURES / "error__no-driver.txt").read_text())


def test_gpu_cli(fake_smi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve(
        monkeypatch,
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    monkeypatch.setitem(sys.modules, "pynvml", None)  # force the nvidia-smi path
    result = run(["gpu", "--json"])
    assert result.status == 0
    data = json.loads(result.text)
    assert data["gpus"][0]["memory_used"] == 32362 * 2**20
    table = run(["gpu"])
    assert (
        table.text.splitlines()[0]
        == "GPU 0  NVIDIA H200  util 100%  mem 31.6/140.4 GiB  52C  627W  MIG Disabled"
    )
    assert table.text.splitlines()[1].startswith("  pid 10291  2566 MiB  ")
    csv_result = run(["stat", "--csv", "--gpu", "-c", "0.05", "1"])
    assert (
        csv_result.text.splitlines()[0]
        == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl,gpu0:util,gpu0:mem"
    )
    assert csv_result.text.splitlines()[1].endswith(f",100,{32362 * 2**20}")
    table_result = run(["stat", "--gpu", "-c", "0.05", "1"])
    assert table_result.text.splitlines()[1].endswith("|util   mem")
    assert table_result.text.splitlines()[2].endswith("| 100   32G")


def test_gpu_cli_without_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pynvml", None)
    result = run(["gpu"])
    assert result.status == 1
    assert "no GPU" in result.err


# -- which dstat ------------------------------------------------------------------------------------

ORIGINAL = """#!/usr/bin/python3
### This program is free software; you can redistribute it and/or modify
VERSION = '0.7.4'
import sys
class dstat:
    pass
class dstat_cpu(dstat):
    pass
if '--version' in sys.argv:
    print('Dstat 0.7.4')
"""
PCP = """#!/usr/bin/pmpython
# pcp-dstat: a rewrite of Dstat using Performance Co-Pilot
import sys
raise SystemExit("Traceback (most recent call last):\\n  ImportError: cpmapi")
"""
DOOL = """#!/usr/bin/env python3
# Dool is a Python3 compatible fork of Dstat
VERSION = '1.3.8'
import sys
if '--version' in sys.argv:
    print('Dool 1.3.8')
"""


def install(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(
        text.replace("#!/usr/bin/python3", f"#!{sys.executable}").replace(
            "#!/usr/bin/env python3", f"#!{sys.executable}"
        )
    )
    path.chmod(0o755)
    return path


def test_which_dstat_tells_the_three_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dstat", ORIGINAL)
    install(tmp_path, "dool", DOOL)
    monkeypatch.setenv("PATH", str(tmp_path))
    by_name = {info.command: info for info in which_dstat()}
    assert (by_name["dstat"].flavor, by_name["dstat"].version) == ("dstat", "0.7.4")
    assert (by_name["dool"].flavor, by_name["dool"].version) == ("dool", "1.3.8")
    assert by_name["pcp-dstat"].flavor == "missing"


def test_pcp_dstat_behind_a_symlink_with_crashing_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libexec = tmp_path / "libexec" / "pcp" / "bin"
    libexec.mkdir(parents=True)
    real = libexec / "pcp-dstat"
    real.write_text(PCP)
    real.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dstat").symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))
    info = which_dstat()[0]
    assert info.command == "dstat"
    assert info.flavor == "pcp-dstat"
    assert info.real_path == str(real)


def test_pcp_dstat_by_shebang_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dstat", PCP)
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat()[0]
    assert info.flavor == "pcp-dstat"
    assert any("pmpython" in note for note in info.evidence)


def test_which_dstat_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dool", DOOL)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run(["which-dstat"])
    assert result.status == 0
    assert "dstat: not on PATH" in result.text
    assert "dool: dool 1.3.8" in result.text
    data = json.loads(run(["which-dstat", "--json"]).text)
    assert [d["flavor"] for d in data] == ["missing", "dool", "missing"]


def test_stat_ctrl_c_ends_cleanly() -> None:
    import signal
    import subprocess

    process = subprocess.Popen(
        [sys.executable, "-m", "devutils", "stat", "--csv", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert b"Traceback" not in err
    lines = out.decode().splitlines()
    assert lines[0] == DEFAULT_HEADER
    assert len(lines) >= 3
