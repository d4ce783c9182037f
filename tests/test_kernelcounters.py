"""Tests for devutils.kernelcounters: reading /proc and psutil, the counters mapping."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import kernelcounters
from devutils.kernelcounters import (
    DeviceCounters,
    ProcReader,
    parse_diskstats,
    parse_net_dev,
    psutil_readers,
)
from devutils.rates import GROUPS, CounterSampler

_TICKS = st.integers(0, 10**9)
_PAIRS = st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
_DISK_NAMES = ["sda", "sda1", "nvme0n1", "dm-0"]
_NIC_NAMES = ["eth0", "lo", "wlan0", "eth0.100"]


def test_device_counters_is_a_read_only_mapping() -> None:
    pairs = DeviceCounters(("sda", "lo"), [1, 2], [3, 4])
    assert pairs == {"sda": (1, 3), "lo": (2, 4)}
    assert pairs["lo"] == (2, 4)
    assert list(pairs) == ["sda", "lo"]
    assert len(pairs) == 2
    assert "sda" in pairs
    assert "sdb" not in pairs
    assert pairs.get("sdb") is None
    with pytest.raises(KeyError, match="sdb"):
        pairs["sdb"]
    assert repr(pairs) == "{'sda': (1, 3), 'lo': (2, 4)}"


@pytest.mark.parametrize(
    ("names", "first", "second"),
    [(("a", "b"), [1], [2, 3]), (("a", "b"), [1, 2], [3]), (("a",), [1, 2], [3, 4]), ((), [1], [])],
)
def test_device_counters_hold_one_counter_per_name(
    names: tuple[str, ...], first: list[int], second: list[int]
) -> None:
    # DeviceCounters(("a", "b"), [1], [2])["b"] raised IndexError, on reading
    with pytest.raises(ValueError, match="first and second must hold one counter per name"):
        DeviceCounters(names, first, second)


@given(
    st.lists(st.text(max_size=4), unique=True, max_size=6),
    st.integers(-1, 1),
    st.integers(-1, 1),
    st.data(),
)
def test_device_counters_are_built_of_one_pair_per_name(
    names: list[str], first_extra: int, second_extra: int, data: st.DataObject
) -> None:
    def counters(extra: int) -> list[int]:
        size = max(len(names) + extra, 0)
        return data.draw(st.lists(st.integers(0, 2**64), min_size=size, max_size=size))

    first, second = counters(first_extra), counters(second_extra)
    if len(first) == len(second) == len(names):
        pairs = DeviceCounters(tuple(names), first, second, 512)
        assert pairs == {
            n: (a * 512, b * 512) for n, a, b in zip(names, first, second, strict=True)
        }
    else:
        with pytest.raises(ValueError, match="first and second must hold one counter per name"):
            DeviceCounters(tuple(names), first, second)


LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


@LINUX
def test_proc_reader_agrees_with_psutil() -> None:
    proc = ProcReader()
    portable = psutil_readers()
    assert proc.cpu()[3] == pytest.approx(portable["cpu"]()[3], abs=1.0)
    assert set(proc.disks()) == set(portable["disk"]())
    assert set(proc.nics()) == set(portable["net"]())
    for group, read in (("system", proc.system), ("paging", proc.paging)):
        first, second = read(), portable[group]()
        assert all(b - a >= 0 for a, b in zip(first, second, strict=True))
        assert all(b - a < 10**6 for a, b in zip(first, second, strict=True))
    used, _, _, available = proc.mem()
    memory = portable["mem"]()
    assert available == pytest.approx(memory[3], rel=0.05)
    assert used == pytest.approx(memory[0], rel=0.05)


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
def test_parse_diskstats(width: int, devices: list[tuple[str, list[int]]], mixed: bool) -> None:
    lines = [
        f"{7:4d} {index:7d} {name} " + " ".join(map(str, numbers[: width - 3]))
        for index, (name, numbers) in enumerate(devices)
    ]
    if mixed and lines:  # one line of another kernel's width
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
def test_parse_net_dev(nics: list[tuple[str, list[int]]], old_kernel: bool) -> None:
    # Linux writes "%6s: %7llu ..."; 2.4-era kernels glued the first number to the colon.
    separator = ":" if old_kernel else ": "
    body = "".join(
        f"{name:>6}{separator}" + " ".join(f"{n:7d}" for n in numbers) + "\n"
        for name, numbers in nics
    )
    data = (NET_DEV_HEADER + body).encode()
    assert parse_net_dev(data) == net_dev_reference(data)


STAT = (
    b"cpu  100 2 30 4000 5 6 7 8 0 0\ncpu0 50 1 15 2000 2 3 3 4 0 0\n"
    b"intr 123456 0 9 0\nctxt 98765\nbtime 1700000000\n"
)
MEMINFO = (
    b"MemTotal:       16000000 kB\nMemFree:         2000000 kB\nMemAvailable:    9000000 kB\n"
    b"Buffers:          100000 kB\nCached:          5000000 kB\nSReclaimable:     500000 kB\n"
)


def test_parse_stat_vmstat_loadavg_and_meminfo() -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    assert kernelcounters.parse_stat_cpu(STAT) == tuple(
        t / ticks for t in (100, 2, 30, 4000, 5, 6, 7, 8)
    )
    assert kernelcounters.parse_stat_cpu(b"cpu  1 2 3 4\n")[4:] == (0.0, 0.0, 0.0, 0.0)
    # a capture without its final line break: the last digit was cut (steal 80 read as 8)
    assert kernelcounters.parse_stat_cpu(b"cpu  1 2 3 4 5 6 7 80")[7] == 80 / ticks
    assert kernelcounters.parse_stat_system(STAT) == (123456, 98765)
    with pytest.raises(OSError, match="no cpu line"):
        kernelcounters.parse_stat_cpu(b"intr 1\n")
    with pytest.raises(OSError, match="no intr or ctxt"):
        kernelcounters.parse_stat_system(b"cpu  1 2 3 4\n")
    page = os.sysconf("SC_PAGE_SIZE")
    vmstat = b"nr_free_pages 5\npswpin 3\npswpout 4\npgalloc 9\n"
    assert kernelcounters.parse_vmstat_paging(vmstat) == (3 * page, 4 * page)
    with pytest.raises(OSError, match="pswpout"):
        kernelcounters.parse_vmstat_paging(b"nr_free_pages 5\npswpin 3\n")
    assert kernelcounters.parse_loadavg(b"0.25 1.50 12.00 2/79 19584\n") == (0.25, 1.5, 12.0)
    kib = 1024
    used, free, cached, available = kernelcounters.parse_meminfo(MEMINFO)
    assert (free, cached, available) == (2000000 * kib, 5500000 * kib, 9000000 * kib)
    assert used == (16000000 - 9000000) * kib


@pytest.mark.parametrize(
    ("group", "name", "data", "message"),
    [
        ("mem", "meminfo", b"MemFree: 2 kB\n", "no MemTotal or MemFree line"),  # KeyError
        ("load", "loadavg", b"", "no load averages"),  # ValueError
        ("load", "loadavg", b"0.25 1.50\n", "no load averages"),
        ("system", "stat", b"cpu  1 2 3 4\nintr\nctxt 5\n", "no intr or ctxt line"),  # IndexError
    ],
)
def test_a_file_cut_short_is_an_os_error_naming_what_it_lacks(
    tmp_path: Path, group: str, name: str, data: bytes, message: str
) -> None:
    # As ProcReader says: its file lists nothing of what the group needs.
    (tmp_path / name).write_bytes(data)
    with pytest.raises(OSError, match=message):
        getattr(ProcReader(tmp_path), group)()


def test_a_blank_line_in_meminfo_is_no_field() -> None:
    data = b"MemTotal: 8 kB\nMemFree: 2 kB\n\n"  # (an IndexError)
    assert kernelcounters.parse_meminfo(data) == (6 * 1024, 2 * 1024, 0, 2 * 1024)


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9))
def test_memory_available_past_the_total_is_the_free_memory(
    total: int, free: int, available: int
) -> None:
    # In an LXC container MemAvailable can be the host's, past MemTotal: capped at the
    # total it showed 0 used; procps and psutil take MemFree then.
    data = f"MemTotal: {total} kB\nMemFree: {free} kB\nMemAvailable: {available} kB\n"
    used, _, _, shown = kernelcounters.parse_meminfo(data.encode())
    expected = free if available > total or available == 0 else available  # (0: a kernel
    # bug, estimated from the other fields: here MemFree alone)
    assert (used, shown) == ((total - expected) * 1024, expected * 1024)


def proc_tree(root: Path, **files: bytes) -> Path:
    """A folder laid out as /proc, with the files given (names with / as __)."""
    defaults = {
        "stat": STAT,
        "diskstats": b"   8       0 sda 1 2 30 4 5 6 70 8 9 10 11\n",
        "net/dev": (NET_DEV_HEADER + "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n").encode(),
        "vmstat": b"pswpin 3\npswpout 4\n",
        "loadavg": b"0.25 1.50 12.00 2/79 19584\n",
        "meminfo": MEMINFO,
    }
    defaults |= {name.replace("__", "/"): data for name, data in files.items()}
    for name, data in defaults.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_proc_reader_reads_a_tree(tmp_path: Path) -> None:
    proc = ProcReader(proc_tree(tmp_path))
    assert dict(proc.disks()) == {"sda": (30 * 512, 70 * 512)}
    assert dict(proc.nics()) == {"eth0": (1, 9)}
    assert proc.system() == (123456, 98765)
    assert proc.load() == (0.25, 1.5, 12.0)


def test_a_group_that_cannot_be_read_is_missing_and_named(tmp_path: Path) -> None:
    root = proc_tree(tmp_path, stat=b"garbage\n")
    (root / "vmstat").unlink()
    sampler = CounterSampler(mem=True, readers=ProcReader(root).readers())
    assert sampler.sample() is None
    rates = sampler.sample()
    assert rates is not None
    assert rates.missing == ("cpu", "paging", "system")
    assert (rates.usr, rates.page_in, rates.interrupts) == (None, None, None)
    assert rates.disk_read == 0.0
    assert rates.load1 == 0.25
    assert rates.mem_available == 9000000 * 1024
    assert sampler.errors["cpu"] == "no cpu line in /proc/stat"
    assert "No such file or directory" in sampler.errors["paging"]


def test_a_file_that_grows_past_its_buffer_is_read_whole(tmp_path: Path) -> None:
    root = proc_tree(tmp_path)
    proc = ProcReader(root)
    assert proc.paging() == (3 * os.sysconf("SC_PAGE_SIZE"), 4 * os.sysconf("SC_PAGE_SIZE"))
    (root / "vmstat").write_bytes(b"filler 1\n" * 10_000 + b"pswpin 5\npswpout 6\n")
    assert proc.paging() == (5 * os.sysconf("SC_PAGE_SIZE"), 6 * os.sysconf("SC_PAGE_SIZE"))


def test_a_file_the_kernel_gives_a_page_per_read_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/net/dev and /proc/diskstats give a page or so per read, however big the
    # buffer: on a host with many veth interfaces, those past the first page were lost.
    lines = "".join(f"  veth{i}: {i} 0 0 0 0 0 0 0 {2 * i} 0 0 0 0 0 0 0\n" for i in range(200))
    disks = "".join(f"   7 {i} loop{i} 1 2 {i} 4 5 6 {3 * i} 8 9 10 11\n" for i in range(200))
    root = proc_tree(tmp_path, net__dev=(NET_DEV_HEADER + lines).encode(), diskstats=disks.encode())
    page = os.pread

    def a_page_at_most(descriptor: int, size: int, offset: int) -> bytes:
        return page(descriptor, min(size, 4000), offset)

    monkeypatch.setattr(os, "pread", a_page_at_most)
    proc = ProcReader(root)
    for _ in range(2):  # (the second read with the buffer the first one sized)
        assert dict(proc.nics()) == {f"veth{i}": (i, 2 * i) for i in range(200)}
        assert dict(proc.disks()) == {f"loop{i}": (i * 512, 3 * i * 512) for i in range(200)}


def test_a_device_name_that_is_not_utf8_keeps_its_group() -> None:
    # Linux names may be any bytes: one gave a UnicodeDecodeError, and every net column "-"
    header = b"Inter-|   Receive\n face |bytes packets\n"
    data = header + b"  caf\xe9: 100 1 0 0 0 0 0 0 200 1 0 0 0 0 0 0\n"
    # read as file names are (and so as -N's names): the bytes come back with os.fsencode
    assert dict(parse_net_dev(data)) == {os.fsdecode(b"caf\xe9"): (100, 200)}
    disks = parse_diskstats(b"   8       0 sd\xff 1 0 2 0 3 0 4 0 0 0 0\n")
    assert [os.fsencode(name) for name in disks] == [b"sd\xff"]


def test_psutil_readers_have_a_load_where_os_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    # os.getloadavg is Unix's: on Windows the readers could not even be built
    pytest.importorskip("psutil")
    monkeypatch.delattr("os.getloadavg")
    load = psutil_readers()["load"]()
    assert len(load) == 3
    assert all(value >= 0 for value in load)


@LINUX
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "ticks": st.lists(_TICKS, min_size=8, max_size=10),
                "system": _PAIRS,
                "disks": st.dictionaries(st.sampled_from(_DISK_NAMES), _PAIRS, min_size=1),
                "nics": st.dictionaries(st.sampled_from(_NIC_NAMES), _PAIRS, min_size=1),
                "paging": st.tuples(_TICKS, _TICKS),
                "load": st.tuples(*[st.integers(0, 99_999)] * 3),
                "memory": st.tuples(_TICKS, _TICKS, st.integers(1, 10**9), _TICKS, _TICKS),
                "filler": st.integers(0, 2500),
            }
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_proc_reader_reads_each_file_whole_as_it_is_now(rounds: list[dict[str, Any]]) -> None:
    # Files rewritten between snapshots, growing past the buffer the last read sized or
    # shrinking: each snapshot's readings are the numbers now written, whole.
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "net").mkdir()
        with ProcReader(root) as proc:
            _read_rounds(proc, rounds)


def _read_rounds(proc: ProcReader, rounds: list[dict[str, Any]]) -> None:
    """Write each round's numbers as /proc's files under ``proc.root``, then read a
    snapshot's groups with *proc*: each must give the numbers just written."""
    tick, page, kib = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE"), 1024
    root, reader = Path(proc.root), proc.readers()
    for numbers in rounds:
        filler = numbers["filler"]
        intr, ctxt = numbers["system"]
        (root / "stat").write_text(
            "cpu  "
            + " ".join(map(str, numbers["ticks"]))
            + "\n"
            + "".join(f"cpu{i} 1 2 3 4 5 6 7 8\n" for i in range(filler // 4))
            + f"intr {intr} 0 1 2\nctxt {ctxt}\nbtime 1700000000\n"
        )
        (root / "diskstats").write_text(
            "".join(
                f"   8 {i:7d} {name} 1 2 {read} 4 5 6 {written} 8 9 10 11\n"
                for i, (name, (read, written)) in enumerate(numbers["disks"].items())
            )
        )
        (root / "net" / "dev").write_text(
            NET_DEV_HEADER
            + "".join(
                f"{name:>6}: {received} 2 3 4 5 6 7 8 {sent} 10 11 12 13 14 15 16\n"
                for name, (received, sent) in numbers["nics"].items()
            )
        )
        swapped_in, swapped_out = numbers["paging"]
        (root / "vmstat").write_text(
            "".join(f"nr_filler_{i} {i}\n" for i in range(filler))
            + f"pswpin {swapped_in}\npswpout {swapped_out}\n"
        )
        one, five, fifteen = (hundredths / 100 for hundredths in numbers["load"])
        (root / "loadavg").write_text(f"{one:.2f} {five:.2f} {fifteen:.2f} 2/79 19584\n")
        used, free, available, buffers, cached = numbers["memory"]
        (root / "meminfo").write_text(
            f"MemTotal: {used + available} kB\nMemFree: {free} kB\n"
            f"MemAvailable: {available} kB\n"
            + "".join(f"Filler{i}: {i} kB\n" for i in range(filler))
            + f"Buffers: {buffers} kB\nCached: {cached} kB\nSReclaimable: 7 kB\n"
        )
        readings = {group: read() for group, read in reader.items()}  # (a snapshot's order)
        assert readings == {
            "cpu": tuple(ticks / tick for ticks in numbers["ticks"][:8]),
            "disk": {name: (r * 512, w * 512) for name, (r, w) in numbers["disks"].items()},
            "net": numbers["nics"],
            "paging": (swapped_in * page, swapped_out * page),
            "system": (intr, ctxt),
            "load": (one, five, fifteen),
            "mem": (used * kib, free * kib, (cached + 7) * kib, available * kib),
        }


_CPU_TIMES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@given(
    cpu=st.dictionaries(
        st.sampled_from([*_CPU_TIMES, "guest", "interrupt", "dpc"]), st.floats(0, 10**6)
    ),
    disks=st.dictionaries(st.sampled_from(_DISK_NAMES), st.tuples(*[counter_values] * 3)),
    nics=st.dictionaries(st.sampled_from(_NIC_NAMES), st.tuples(*[counter_values] * 3)),
    swap=_PAIRS,
    stats=st.tuples(*[counter_values] * 3),
    memory=st.tuples(*[counter_values] * 4),
    cached=st.none() | counter_values,
    loads=st.tuples(*[st.tuples(*[st.floats(0, 1000)] * 3)] * 2),
    os_load=st.booleans(),
)
def test_psutil_readers_give_psutils_figures_in_a_snapshots_layout(
    cpu: dict[str, float],
    disks: dict[str, tuple[int, int, int]],
    nics: dict[str, tuple[int, int, int]],
    swap: tuple[int, int],
    stats: tuple[int, int, int],
    memory: tuple[int, int, int, int],
    cached: int | None,
    loads: tuple[tuple[float, float, float], tuple[float, float, float]],
    os_load: bool,
) -> None:
    # psutil's records as each system fills them (macOS has no iowait, Windows no nice
    # and no cached memory), faked; the readers' answers are a Snapshot's fields.
    psutil = pytest.importorskip("psutil")
    used, free, available, total = memory
    extra = {} if cached is None else {"cached": cached}
    fakes: dict[str, Any] = {
        "cpu_times": lambda: SimpleNamespace(**cpu),
        "disk_io_counters": lambda **_: {
            name: SimpleNamespace(read_count=count, read_bytes=read, write_bytes=written)
            for name, (count, read, written) in disks.items()
        },
        "net_io_counters": lambda **_: {
            name: SimpleNamespace(bytes_sent=sent, bytes_recv=received, packets_sent=packets)
            for name, (sent, received, packets) in nics.items()
        },
        "swap_memory": lambda: SimpleNamespace(total=0, sin=swap[0], sout=swap[1]),
        "cpu_stats": lambda: SimpleNamespace(
            ctx_switches=stats[0], interrupts=stats[1], soft_interrupts=stats[2]
        ),
        "virtual_memory": lambda: SimpleNamespace(
            total=total, available=available, used=used, free=free, **extra
        ),
        "getloadavg": lambda: loads[1],
    }
    with mock.patch.multiple(psutil, **fakes), mock.patch.dict(os.__dict__):
        if os_load:
            os.__dict__["getloadavg"] = lambda: loads[0]
        else:
            os.__dict__.pop("getloadavg", None)
        readers = psutil_readers()
        assert sorted(readers) == sorted(GROUPS)
        assert readers["cpu"]() == tuple(float(cpu.get(name, 0.0)) for name in _CPU_TIMES)
        for group, counters, expected in (
            ("disk", disks, {name: (read, written) for name, (_, read, written) in disks.items()}),
            ("net", nics, {name: (received, sent) for name, (sent, received, _) in nics.items()}),
        ):
            if counters:
                assert readers[group]() == expected
            else:
                with pytest.raises(OSError, match=r"^no "):
                    readers[group]()
        assert readers["paging"]() == swap
        assert readers["system"]() == (stats[1], stats[0])
        assert readers["mem"]() == (max(0, total - available), free, cached or 0, available)
        assert readers["load"]() == loads[0 if os_load else 1]


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc/self/fd")
@given(st.lists(st.sampled_from(["load", "close"]), max_size=8))
def test_a_closed_proc_reader_holds_no_descriptor_and_still_reads(steps: list[str]) -> None:
    # Any mix of reads and closes: after close, no descriptor of it stays open, and a read
    # after a close opens its file again and reads what is there.
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "loadavg").write_bytes(b"0.25 1.50 12.00 2/79 19584\n")
        before = _open_descriptors()
        with ProcReader(root) as proc:
            for step in steps:
                if step == "load":
                    assert proc.load() == (0.25, 1.5, 12.0)
                    assert _open_descriptors() == before + 1
                else:
                    proc.close()
                    assert _open_descriptors() == before
        assert _open_descriptors() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc/self/fd")
def test_a_sampler_dropped_unclosed_gives_its_descriptors_back(tmp_path: Path) -> None:
    # A loop that builds a sampler per pass must not run out of descriptors (EMFILE).
    (tmp_path / "loadavg").write_bytes(b"0.25 1.50 12.00 2/79 19584\n")
    before = _open_descriptors()
    for _ in range(50):
        sampler = CounterSampler(readers=ProcReader(tmp_path).readers())
        assert sampler.snapshot().load == (0.25, 1.5, 12.0)
        del sampler
    assert _open_descriptors() == before


@LINUX
def test_default_readers_read_proc_on_linux_and_psutil_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = kernelcounters.default_readers()
    assert set(chosen) == set(GROUPS)
    assert chosen["cpu"].__self__.__class__ is ProcReader  # type: ignore[attr-defined]
    proc = ProcReader()
    for group, read in proc.readers().items():  # the same shape as a ProcReader's own
        assert type(chosen[group]()) is type(read())
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    fallback = kernelcounters.default_readers()
    assert set(fallback) == set(GROUPS)
    assert not hasattr(fallback["cpu"], "__self__")  # psutil's functions, not a ProcReader
    assert len(fallback["mem"]()) == len(proc.mem())


@given(
    st.lists(st.integers(0, 2**64 - 1), min_size=4, max_size=10),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.tuples(*[st.floats(0, 10**6, allow_nan=False).map(lambda x: round(x, 2))] * 3),
)
def test_the_stat_vmstat_and_loadavg_parsers_read_what_linux_writes(
    ticks: list[int], interrupts: int, switches: int, loads: tuple[float, float, float]
) -> None:
    # The reference: the fields as documented in proc(5), read by hand.
    stat = f"cpu  {' '.join(map(str, ticks))}\ncpu0 1 2 3 4\nintr {interrupts} 0 1\n"
    stat += f"ctxt {switches}\nbtime 1\n"
    data = stat.encode()
    clock = os.sysconf("SC_CLK_TCK")
    expected = [t / clock for t in ticks[:8]] + [0.0] * (8 - min(8, len(ticks)))
    assert kernelcounters.parse_stat_cpu(data) == tuple(expected)
    assert kernelcounters.parse_stat_system(data) == (interrupts, switches)
    page = os.sysconf("SC_PAGE_SIZE")
    vmstat = f"nr_free_pages 1\npswpin {interrupts}\npswpout {switches}\n".encode()
    assert kernelcounters.parse_vmstat_paging(vmstat) == (interrupts * page, switches * page)
    loadavg = f"{loads[0]:.2f} {loads[1]:.2f} {loads[2]:.2f} 1/99 1234\n".encode()
    assert kernelcounters.parse_loadavg(loadavg) == loads


@pytest.mark.parametrize(
    "parse",
    [
        kernelcounters.parse_stat_cpu,
        kernelcounters.parse_stat_system,
        kernelcounters.parse_diskstats,
        kernelcounters.parse_net_dev,
        kernelcounters.parse_vmstat_paging,
        kernelcounters.parse_loadavg,
        kernelcounters.parse_meminfo,
    ],
)
@pytest.mark.parametrize("data", [None, "0.25 1.50 12.00 2/79 19584\n", 5])
def test_a_parser_takes_bytes_only(parse: Callable[[bytes], object], data: object) -> None:
    # None was an AttributeError, and a str parsed as if it were the bytes
    with pytest.raises(TypeError, match="data must be a file's bytes, got"):
        parse(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"names": "ab"}, TypeError, "names must be a tuple of str"),  # was two devices
        ({"names": None}, TypeError, "names must be a tuple of str"),
        ({"unit": "x"}, TypeError, "unit must be an int, got str"),  # was "xxx..."
        ({"unit": True}, TypeError, "unit must be an int, got bool"),
        ({"unit": -1}, ValueError, "unit must be at least 1, got -1"),  # was (-30, -70)
    ],
)
def test_device_counters_refuse_what_would_give_wrong_counts(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"names": ("a", "b"), "first": [1, 2], "second": [3, 4]}
    with pytest.raises(error, match=message):
        DeviceCounters(**(arguments | kwargs))


@pytest.mark.parametrize("root", [None, b"/proc", 5])
def test_a_proc_reader_s_root_is_a_path(root: object) -> None:
    with pytest.raises(TypeError, match="root must be a path"):
        ProcReader(root)  # type: ignore[arg-type]
