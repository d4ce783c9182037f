"""Tests for devutils stat: the table, CSV and JSON contracts, --output logs, devices."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.cli.stat import build_columns, csv_row, table_row
from devutils.rates import CounterSampler, DiskRate, NicRate, Sample

if TYPE_CHECKING:
    from tests.conftest import Cli, FakePynvml, FakeSmi

SAMPLE_FIELD_NAMES = [
    name for name in Sample._fields if name not in {"time", "disks", "nics", "missing"}
]

DEFAULT_HEADER = (
    "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl,dsk/total:read,dsk/total:writ,"
    "net/total:recv,net/total:send,paging:in,paging:out,system:int,system:csw,"
    "load:1m,load:5m,load:15m"
)


def test_stat_csv_default_header_and_rows(cli: Cli) -> None:
    result = cli(["stat", "--csv", "0.05", "2"])
    assert result.status == 0
    lines = result.text.splitlines()
    assert lines[0] == DEFAULT_HEADER
    assert len(lines) == 3
    for line in lines[1:]:
        cells = line.split(",")
        assert len(cells) == 17
        assert abs(float(cells[0]) - time.time()) < 10
        assert sum(float(c) for c in cells[1:6]) == pytest.approx(100, abs=0.01)


def test_stat_csv_nics(cli: Cli) -> None:
    result = cli(["stat", "--csv", "-n", "-N", "lo,total", "0.05", "1"])
    header = result.text.splitlines()[0]
    assert header == "epoch,net/lo:recv,net/lo:send,net/total:recv,net/total:send"


def test_stat_json_lines(cli: Cli) -> None:
    result = cli(["stat", "--json", "0.05", "2"])
    records = [json.loads(line) for line in result.text.splitlines()]
    assert len(records) == 2
    # every field, in the Sample's order, null where not measured (no --mem here)
    assert list(records[0]) == list(Sample._fields)
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


def reference_cells(columns: list[Any], sample: Sample) -> list[float | None]:
    values = []
    for column in columns:
        value = column.get(sample, [])
        values.append(None if value is None else value * column.scale)
    return values


def reference_table_row(columns: list[Any], sample: Sample) -> str:
    cells = []
    for column, value in zip(columns, reference_cells(columns, sample), strict=True):
        cells.append(column.separator)
        cells.append(column.render(value))
    return "".join(cells)


def reference_csv_row(columns: list[Any], sample: Sample) -> str:
    def raw(value: float | None) -> str:
        if value is None:
            return ""
        if float(value).is_integer():
            return str(int(value))
        return f"{value:.3f}".rstrip("0").rstrip(".")

    cells = [f"{sample.time:.3f}"]
    for column, value in zip(columns, reference_cells(columns, sample), strict=True):
        if column.kind not in ("time", "epoch"):
            cells.append(raw(value))
    return ",".join(cells)


stat_values = st.none() | st.floats(0, 1e18, allow_nan=False) | st.integers(0, 2**50)


stat_options = st.fixed_dictionaries(
    {
        name: st.booleans()
        for name in (
            "cpu",
            "disk",
            "net",
            "page",
            "sys",
            "load",
            "mem",
            "all",
            "time",
            "epoch",
            "bits",
        )
    }
)


@given(
    stat_options,
    st.fixed_dictionaries(dict.fromkeys(SAMPLE_FIELD_NAMES, stat_values)),
    st.dictionaries(st.sampled_from(["sda", "lo"]), st.tuples(stat_values, stat_values)),
)
def test_rows_match_the_obvious_loop(
    options: dict[str, bool], values: dict[str, Any], devices: dict[str, Any]
) -> None:
    import argparse

    args = argparse.Namespace(**options, disks="sda,total,sdz", nics="lo,total")
    columns = build_columns(args, [])
    pairs = {k: (a, b) for k, (a, b) in devices.items() if a is not None and b is not None}
    disks = {k: DiskRate(*pair) for k, pair in pairs.items()}
    nics = {k: NicRate(*pair) for k, pair in pairs.items()}
    sample = Sample(**values, time=1795000000.25, disks=disks, nics=nics, missing=())
    assert table_row(columns, sample, []) == reference_table_row(columns, sample)
    assert csv_row(columns, sample, []) == reference_csv_row(columns, sample)


def test_csv_cells_drop_trailing_zeros_only() -> None:
    import argparse

    options = dict.fromkeys(
        ("disk", "net", "page", "load", "mem", "all", "time", "epoch", "bits"), False
    )
    args = argparse.Namespace(**options, cpu=True, sys=False, disks=None, nics=None)
    columns = build_columns(args, [])

    def row(values: dict[str, Any], gpus: list[Any]) -> str:
        return csv_row(columns, Sample(elapsed=1.0, **values), gpus)

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


def test_stat_starts_without_dataclasses() -> None:
    # dataclasses imports inspect, which start-up cannot afford: the stat path's records
    # are named tuples.
    code = (
        "import sys\nfrom devutils.cli import main\nmain(['stat', '--json', '0.01', '1'])\n"
        "print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.splitlines()[-1] == "[]"


def test_stat_table_is_plain_ascii(cli: Cli) -> None:
    result = cli(["stat", "-t", "-c", "-m", "0.05", "2"])
    assert result.status == 0
    assert result.out.isascii()
    assert b"\x1b" not in result.out
    lines = result.text.splitlines()
    assert "--total-cpu-usage--" in lines[0]
    assert lines[1].startswith("          time|usr sys idl wai stl|")
    assert len(lines) == 4


def test_stat_output_file(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "log.csv"
    result = cli(["stat", "--output", str(target), "0.05", "1"])
    assert result.status == 0
    assert "usr" in result.text  # the table still goes to stdout
    assert target.read_text().splitlines()[0] == DEFAULT_HEADER


@pytest.mark.parametrize("kind", ["--csv", "--json"])
def test_stat_output_with_csv_or_json_also_goes_to_stdout(
    tmp_path: Path, kind: str, cli: Cli
) -> None:
    # --output is "also": stdout keeps what --csv / --json print, the file gets the same
    target = tmp_path / "log"
    result = cli(["stat", "-c", kind, "--output", str(target), "0.02", "2"])
    assert result.status == 0
    shown = result.text.splitlines()
    assert len(shown) == (3 if kind == "--csv" else 2)
    assert target.read_text() == result.text
    # a second run continues the file under its one header; stdout gets a header of its own
    again = cli(["stat", "-c", kind, "--output", str(target), "0.02", "1"])
    assert again.status == 0
    assert len(again.text.splitlines()) == (2 if kind == "--csv" else 1)
    assert target.read_text() == result.text + again.text.splitlines(keepends=True)[-1]


def test_stat_disk_paths_become_kernel_names(tmp_path: Path, cli: Cli) -> None:
    from devutils.cli.stat import _disk_names

    link = tmp_path / "by-label-data"
    link.symlink_to("/dev/cciss/c0d0")  # need not exist: resolved as far as it goes
    # (the name as /proc/diskstats writes it: "cciss!c0d0", sysfs's, never matched)
    assert _disk_names(f"/dev/sdz,total,{link},sdz,,/home/x") == "sdz,total,cciss/c0d0,/home/x"
    result = cli(["stat", "-d", "--csv", "-D", f"{link},total,total", "0.02", "1"])
    assert result.text.splitlines()[0] == (
        "epoch,dsk/cciss/c0d0:read,dsk/cciss/c0d0:writ,dsk/total:read,dsk/total:writ"
    )


def test_stat_headers_never_cut_a_device_name_into_another(cli: Cli) -> None:
    # dsk/nvme0n1p1 in the 11 characters of two columns: "dsk/nvme0n1" names the disk,
    # not the partition, so the group goes and then the start of the name.
    args = ["stat", "-d", "-n", "-D", "nvme0n1p1,dm-cryptroot", "-N", "total", "0.02", "1"]
    titles = cli(args).text.splitlines()[0].split()
    assert titles == ["-nvme0n1p1-", "...ryptroot", "-net/total-"]


def test_stat_warns_once_per_device_that_is_not_there(cli: Cli) -> None:
    present = CounterSampler().snapshot()
    assert present.nics is not None
    nic = next(iter(present.nics))
    args = ["-c", "-d", "-n", "-D", "nosuchdisk,total", "-N", f"{nic},nosuchnic"]
    result = cli(["stat", *args, "0.02", "2"])
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
    assert cli(["stat", "-N", f"{nic},total", "-c", "0.02", "1"]).err == ""


def test_stat_output_log_grows_under_one_header(tmp_path: Path, cli: Cli) -> None:
    # A second run appends its rows under the header already there; an empty file gets it.
    log = tmp_path / "log.csv"
    for _ in range(2):
        assert cli(["stat", "-c", "--csv", "--output", str(log), "0.02", "2"]).status == 0
    lines = log.read_text().splitlines()
    assert lines[0] == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl"
    assert len(lines) == 5
    assert all(line[0].isdigit() and len(line.split(",")) == 6 for line in lines[1:])
    records = tmp_path / "log.jsonl"
    records.write_bytes(b"")
    for _ in range(2):
        assert cli(["stat", "-c", "--json", "--output", str(records), "0.02", "1"]).status == 0
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
    tmp_path: Path, args: list[str], content: bytes, expected: str, cli: Cli
) -> None:
    target = tmp_path / "notes"
    target.write_bytes(content)
    before = target.stat()
    result = cli(["stat", *args, "--output", str(target), "0.02", "1"])
    assert result.status == 2
    assert result.err.startswith(f"devutils stat: error: --output {str(target)!r} already holds")
    assert expected in result.err
    assert "--no-header" in result.err
    assert target.read_bytes() == content  # untouched
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    assert result.out == b""


def test_stat_output_no_header_appends_without_looking(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "notes"
    target.write_text("my notes\n")
    assert (
        cli(["stat", "-c", "--csv", "--no-header", "--output", str(target), "0.02", "1"]).status
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
        (["1e10", "1"], "argument delay: must be at most 86400 seconds (a day), got '1e10'"),
        (["inf", "1"], "argument delay: must be a positive number"),
        (["1", "1e30"], "argument count: must be a positive integer"),
        (["--output", "", "1", "1"], "argument --output: must name a file, got ''"),
        (["--gpu", "--timeout", "0", "1", "1"], "argument --timeout: must be a positive"),
        (["--timeout", "2", "0.01", "1"], "argument --timeout: bounds the GPU backends, so it"),
        (
            ["--top-cpu", "1", "1"],
            "argument --top-cpu: a dool flag devutils stat does not have; use top",
        ),
        (["-f", "1", "1"], "argument -f: a dool flag devutils stat does not have; name"),
        (["--float"], "--csv gives the raw numbers"),
    ],
)
def test_stat_usage_errors(args: list[str], message: str, cli: Cli) -> None:
    result = cli(["stat", *args])
    assert result.status == 2
    assert message in result.err
    assert result.text == ""


def test_stat_bits_set_the_tables_unit_and_the_log_stays_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # CSV keys say bytes/s whatever the table shows: --output under --bits keeps bytes.
    values: dict[str, Any] = dict.fromkeys(SAMPLE_FIELD_NAMES, 0.0)
    values.update(net_recv=1000.0, net_send=250.0)
    sample = Sample(time=1795000000.5, **values)

    def fixed_run(self: Any, interval: float, count: int | None) -> Any:
        return iter([sample])

    monkeypatch.setattr(CounterSampler, "run", fixed_run)
    log = tmp_path / "net.csv"
    result = cli(["stat", "-n", "--bits", "--output", str(log), "1", "1"])
    assert result.status == 0
    assert result.text.splitlines()[2] == " 8000  2000"
    assert log.read_text() == "epoch,net/total:recv,net/total:send\n1795000000.500,1000,250\n"
    result = cli(["stat", "-n", "1", "1"])
    assert result.text.splitlines()[2] == " 1000   250"


def test_stat_gpu_keeps_nvml_initialized_between_samples(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml, cli: Cli
) -> None:
    # NVML counts its initializations: held for the run, each sample's own start and
    # shutdown only move the count, and the library is torn down once, at the end.
    module, calls = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    result = cli(["stat", "--csv", "--gpu", "-c", "0.02", "3"])
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


def test_stat_ctrl_c_ends_cleanly() -> None:
    import subprocess

    process = subprocess.Popen(
        [sys.executable, "-m", "devutils", "stat", "--csv", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    lines = [process.stdout.readline().decode() for _ in range(3)]  # it is sampling
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert b"Traceback" not in err
    lines += out.decode().splitlines(keepends=True)
    assert all(line.endswith("\n") for line in lines)  # no row cut short
    assert lines[0] == DEFAULT_HEADER + "\n"
    assert len(lines) >= 3


def test_dool_users_flags_are_accepted(cli: Cli) -> None:
    result = cli(["stat", "--bytes", "--nocolor", "--noheaders", "-T", "-c", "0.05", "2"])
    assert result.status == 0, result.err
    rows = result.text.splitlines()
    assert len(rows) == 2  # no header rows
    epoch, cpu = rows[0].split("|")
    assert abs(int(epoch) - time.time()) < 5
    assert len(cpu.split()) == 5
    csv = cli(["stat", "-T", "-c", "--csv", "0.05", "1"])
    assert csv.text.splitlines()[0] == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl"


def test_the_epoch_column_heads_the_table(cli: Cli) -> None:
    header = cli(["stat", "-T", "-c", "0.05", "1"]).text.splitlines()[:2]
    assert header == ["--epoch--- --total-cpu-usage--", "     epoch|usr sys idl wai stl"]


def test_a_log_that_cannot_be_written_names_its_path(tmp_path: Path, cli: Cli) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    result = cli(["stat", "-c", "--output", "/dev/full", "--no-header", "0.05", "1"])
    assert result.status == 1
    assert result.err == "devutils stat: error: /dev/full: No space left on device\n"


def test_gpu_columns_wait_for_one_probe_only(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    start = time.monotonic()
    result = cli(["stat", "--gpu", "--timeout", "0.5", "-c", "0.05", "1"])
    assert time.monotonic() - start < 60  # killed at the timeout, not waited for
    assert len(fake_smi.calls()) == 1  # one probe, not one per sample
    assert result.status == 0
    assert "devutils stat: no GPU columns: " in result.err
    # the time left of the timeout after the backends before it
    assert re.search(r"nvidia-smi timed out after 0\.\d+ s and was killed", result.err)


def _one_sample(monkeypatch: pytest.MonkeyPatch, **values: float) -> None:
    fields: dict[str, Any] = dict.fromkeys(SAMPLE_FIELD_NAMES, 0.0)
    fields.update(values)
    sample = Sample(time=1795000000.5, **fields)
    monkeypatch.setattr(CounterSampler, "run", lambda self, interval, count: iter([sample]))


def test_stat_bits_scale_by_1000_as_dool_does(monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    # 2.51 MB/s is 20.08 Mbit/s: dool shows 20M; scaled by 1024 it was 19M, and a
    # 10 Gbit/s link 9537M.
    _one_sample(monkeypatch, net_recv=2_510_411.0, net_send=1.25e9)
    result = cli(["stat", "-n", "--bits", "1", "1"])
    assert result.text.splitlines()[2] == "  20M   10G"
    result = cli(["stat", "-n", "1", "1"])  # bytes: by 1024
    assert result.text.splitlines()[2] == "2452k 1192M"


@pytest.mark.parametrize(
    ("loads", "shown"),
    [((99.96, 100.02, 9999.99), " 100  100 10000"), ((9.996, 0.004, 99.94), "10.0 0.00 99.9")],
)
def test_stat_load_averages_fit_their_columns_once_rounded(
    monkeypatch: pytest.MonkeyPatch, cli: Cli, loads: tuple[float, float, float], shown: str
) -> None:
    # The decimals were chosen before rounding: 99.96 showed as 100.0, five characters.
    _one_sample(monkeypatch, **dict(zip(("load1", "load5", "load15"), loads, strict=True)))
    assert cli(["stat", "-l", "1", "1"]).text.splitlines()[2] == shown


def test_stat_output_to_a_pipe_whose_reader_went_away_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # It ended the run with status 0, as stdout's reader going away does (`| head`).
    _one_sample(monkeypatch)
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that the writer can open it
    try:
        with monkeypatch.context() as patch:
            real_open = open

            def open_then_close_the_reader(*args: Any, **kwargs: Any) -> Any:
                handle = real_open(*args, **kwargs)
                if str(args[0]) == str(fifo):
                    os.close(reader)  # the reader goes away before the first row
                return handle

            patch.setattr("builtins.open", open_then_close_the_reader)
            result = cli(["stat", "-c", "--output", str(fifo), "1", "1"])
    finally:
        with contextlib.suppress(OSError):
            os.close(reader)
    assert result.status == 1
    assert result.err == f"devutils stat: error: {fifo}: Broken pipe (its reader went away)\n"


def test_stat_output_continues_a_log_whose_header_names_a_disk_that_is_not_utf8(
    tmp_path: Path, cli: Cli
) -> None:
    log = tmp_path / "log.csv"
    disk = os.fsdecode(b"\xff")  # a name as argv gives it: its byte, surrogate-escaped
    for _ in range(2):
        assert (
            cli(["stat", "--csv", "-d", "-D", disk, "--output", str(log), "0.02", "1"]).status == 0
        )
    lines = log.read_bytes().splitlines()
    assert lines[0].startswith(b"epoch,dsk/\xff:read,")  # its own byte, in the header once
    assert len(lines) == 3
