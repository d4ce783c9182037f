"""``devutils stat``: the command line of `devutils.counters` (dool-style statistics).

It reads the counters through `devutils.counters` (dicts, no dataclasses) for a fast
start; `devutils.gpu` only with ``--gpu``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import stat
import sys
import time
from collections.abc import Callable

from devutils.cli.common import CliError, positive_float, positive_int

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import IO, Any

    from devutils.counters import CounterSampler
    from devutils.gpu import GpuInfo

    Rates = dict[str, Any]  # a sample's fields by name (devutils.counters.compute_rates)
    Getter = Callable[[Rates, list[GpuInfo]], float | None]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stat",
        help="dool/dstat-style resource statistics (bytes, not bits), with GPUs",
        description=(
            "Print cpu, disk, net, paging, system and load statistics every DELAY seconds "
            "(default 1), COUNT times (default: until Ctrl-C). Rates are per second over "
            "the measured interval; disk and net are in bytes (--bits for net). No "
            "since-boot first row."
        ),
    )
    flags = [
        ("-c", "--cpu", "cpu usage (usr sys idl wai stl)"),
        ("-d", "--disk", "disk read/write bytes per second"),
        ("-n", "--net", "network receive/send bytes per second"),
        ("-g", "--page", "swap paging in/out bytes per second"),
        ("-y", "--sys", "interrupts and context switches per second"),
        ("-l", "--load", "load average"),
        ("-m", "--mem", "memory used/free/cached/available"),
        ("-t", "--time", "a time column"),
    ]
    for short, long, text in flags:
        parser.add_argument(short, long, action="store_true", help=text)
    parser.add_argument("-a", "--all", action="store_true", help="same as -cdngy")
    parser.add_argument("--gpu", action="store_true", help="per-GPU utilization and memory")
    parser.add_argument(
        "-D",
        dest="disks",
        metavar="DISKS",
        type=_disk_names,
        help="disks to show, e.g. sda,total (or /dev/... paths)",
    )
    parser.add_argument("-N", dest="nics", metavar="NICS", help="interfaces to show, e.g. lo,total")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV: one header row, raw numbers")
    output.add_argument("--json", action="store_true", help="JSON Lines with the Sample fields")
    parser.add_argument(
        "--bits",
        action="store_true",
        help="show network in bits per second in the table (CSV and JSON stay bytes/s)",
    )
    parser.add_argument("--no-header", action="store_true", help="no header rows")
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="also write CSV (JSON Lines with --json) to FILE, appending",
    )
    parser.add_argument("delay", nargs="?", type=positive_float, default=1.0, help="seconds")
    parser.add_argument("count", nargs="?", type=positive_int, help="number of rows")
    parser.set_defaults(handler=run_stat)


# -- columns ------------------------------------------------------------------------------


class Column:
    """One column of the table and the CSV (a plain class: no dataclasses at startup).

    Its value is ``sample[field] * scale`` when *field* is given, else ``get(sample, gpus)``.
    """

    __slots__ = ("get", "group", "kind", "name", "render", "scale", "separator", "title", "width")

    def __init__(  # noqa: PLR0917 - a record
        self,
        group: str,
        title: str,
        name: str,
        width: int,
        kind: str,
        get: Getter | None = None,
        *,
        field: str | None = None,
        scale: int = 1,
    ) -> None:
        self.group = group  # the CSV key's group, e.g. "dsk/total"
        self.title = title  # the table's group title, e.g. "dsk/total"
        self.name = name
        self.width = width
        self.kind = kind  # pct, bytes, net, count, load, time
        self.scale = scale
        self.get = get if get is not None else _field(field or name)
        self.render = _renderer(kind, width)
        self.separator = ""  # what goes before it in a table row: "", " " or "|"

    def value(self, sample: Rates, gpus: list[GpuInfo]) -> float | None:
        """This column's value in *sample* (None: not measured)."""
        value = self.get(sample, gpus)
        return value if value is None or self.scale == 1 else value * self.scale


def _human(value: float, width: int, base: int) -> str:
    """*value* in at most *width* characters, with k, M, G, T or P of *base* as needed."""
    units = ("", "k", "M", "G", "T", "P")
    limit = 10 ** (width - 1) - 0.5
    index = 0
    while value >= limit and index < len(units) - 1:
        value /= base
        index += 1
    if index and value < 9.95:
        return f"{value:.1f}{units[index]}"
    return f"{value:.0f}{units[index]}"


def _load(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _renderer(kind: str, width: int) -> Callable[[float | None], str]:
    """How a column of *kind* shows a value in the table: right-aligned to *width*."""
    blank = "-".rjust(width)
    if kind == "pct":
        spec = f"{width}.0f"
        return lambda value: blank if value is None else format(value, spec)
    if kind == "time":
        return lambda value: (
            blank
            if value is None
            else time.strftime("%d-%m %H:%M:%S", time.localtime(value)).rjust(width)
        )
    if kind == "load":
        return lambda value: blank if value is None else _load(value).rjust(width)
    base = 1000 if kind == "count" else 1024
    return lambda value: blank if value is None else _human(value, width, base).rjust(width)


def _gpu_value(index: int, attribute: str) -> Getter:
    def get(_sample: Rates, gpus: list[GpuInfo]) -> float | None:
        for gpu in gpus:
            if gpu.index == index:
                value = getattr(gpu, attribute)
                return None if value is None else float(value)
        return None

    return get


def _field(name: str) -> Getter:
    return lambda s, _g: s[name]


def _device(kind: str, device: str, index: int) -> Getter:
    """One disk's or NIC's rate (read or write, received or sent)."""
    devices = "disks" if kind == "disk" else "nics"

    def one(s: Rates, _g: list[GpuInfo]) -> float | None:
        pair = s[devices].get(device)
        return None if pair is None else float(pair[index])

    return one


def _device_column(kind: str, device: str, index: int, scale: int) -> Column:
    group = f"{'dsk' if kind == 'disk' else 'net'}/{device}"
    name = (("read", "writ") if kind == "disk" else ("recv", "send"))[index]
    column_kind = "bytes" if kind == "disk" else "net"
    if device == "total":
        field = (("disk_read", "disk_write") if kind == "disk" else ("net_recv", "net_send"))[index]
        return Column(group, group, name, 5, column_kind, field=field, scale=scale)
    get = _device(kind, device, index)
    return Column(group, group, name, 5, column_kind, get, scale=scale)


def build_columns(
    args: argparse.Namespace, gpus: list[GpuInfo], *, bits: bool | None = None
) -> list[Column]:
    """The columns *args* ask for; the network's in bits if *bits* (default ``args.bits``)."""
    chosen = {
        name for name in ("cpu", "disk", "net", "page", "sys", "load", "mem") if getattr(args, name)
    }
    if args.all:
        chosen |= {"cpu", "disk", "net", "page", "sys"}
    if not chosen:
        chosen = {"cpu", "disk", "net", "page", "sys", "load"}
    columns: list[Column] = []
    if args.time:
        columns.append(Column("time", "----system----", "time", 14, "time", field="time"))
    if "cpu" in chosen:
        for name in ("usr", "sys", "idl", "wai", "stl"):
            columns.append(Column("cpu", "--total-cpu-usage--", name, 3, "pct", field=name))
    if "disk" in chosen:
        for disk in _split(args.disks) or ["total"]:
            columns.extend(_device_column("disk", disk, index, 1) for index in (0, 1))
    if "net" in chosen:
        scale = 8 if (args.bits if bits is None else bits) else 1
        for nic in _split(args.nics) or ["total"]:
            columns.extend(_device_column("net", nic, index, scale) for index in (0, 1))
    fields = {
        "page": ("paging", "paging", 5, "bytes", (("in", "page_in"), ("out", "page_out"))),
        "sys": ("system", "system", 5, "count", (("int", "interrupts"), ("csw", "ctx_switches"))),
        "load": (
            "load",
            "load-avg",
            4,
            "load",
            (("1m", "load1"), ("5m", "load5"), ("15m", "load15")),
        ),
        "mem": (
            "mem",
            "memory-usage",
            5,
            "bytes",
            (
                ("used", "mem_used"),
                ("free", "mem_free"),
                ("cach", "mem_cached"),
                ("avai", "mem_available"),
            ),
        ),
    }
    for option, (group, title, width, kind, names) in fields.items():
        if option in chosen:
            for name, field in names:
                columns.append(Column(group, title, name, width, kind, field=field))
    for gpu in gpus:
        group = f"gpu{gpu.index}"
        columns.append(Column(group, group, "util", 4, "pct", _gpu_value(gpu.index, "utilization")))
        columns.append(
            Column(group, group, "mem", 5, "bytes", _gpu_value(gpu.index, "memory_used"))
        )
    for previous, column in itertools.pairwise(columns):
        column.separator = " " if previous.group == column.group else "|"
    return columns


def _split(text: str | None) -> list[str]:
    """The names in a comma-separated list, each once, in order."""
    return list(dict.fromkeys(part for part in (text or "").split(",") if part))


def _disk_names(text: str) -> str:
    """An argparse type: ``-D``'s names, a path under /dev (a symlink such as
    /dev/mapper/root or /dev/disk/by-label/data too) as the kernel's name for the disk
    it is (dm-0), with "!" for "/" as /proc/diskstats writes cciss/c0d0."""
    names = []
    for name in _split(text):
        real = os.path.realpath(name) if name.startswith("/") else ""
        names.append(real[5:].replace("/", "!") if real.startswith("/dev/") else name)
    return ",".join(dict.fromkeys(names))


def _warn_absent_devices(sampler: CounterSampler, disks: list[str], nics: list[str]) -> None:
    """One line on stderr for each device asked for that is not there now (a typo, or a
    disk not plugged in yet): its columns show "-" until it appears."""
    present = sampler.snapshot()
    for kind, key, wanted in (("disk", "disks", disks), ("interface", "nics", nics)):
        have = present[key]
        if have is None:  # the group cannot be read: the sampler says so itself
            continue
        for name in wanted:
            if name != "total" and name not in have:
                print(
                    f"devutils stat: no {kind} named {name!r} now (there are: "
                    f"{', '.join(sorted(have)) or 'none'}); its columns show '-' until it "
                    "appears",
                    file=sys.stderr,
                )


def _warn_missing(sampler: CounterSampler, sample: Rates, warned: set[str]) -> None:
    """One line on stderr for each group of counters that cannot be read, the first time."""
    for group in sample["missing"]:
        if group not in warned:
            warned.add(group)
            reason = sampler.errors.get(group, "not measured")
            print(
                f"devutils stat: cannot read {group} counters ({reason}); reporting them as "
                "missing",
                file=sys.stderr,
            )


def _table_header(columns: list[Column]) -> tuple[str, str]:
    groups: list[list[Column]] = []
    for column in columns:
        if groups and groups[-1][0].group == column.group:
            groups[-1].append(column)
        else:
            groups.append([column])
    titles, names = [], []
    for group in groups:
        width = sum(c.width for c in group) + len(group) - 1
        title = group[0].title.strip("-")
        titles.append(title.center(width, "-")[:width])
        names.append(" ".join(c.name.rjust(c.width) for c in group))
    return " ".join(titles), "|".join(names)


def table_row(columns: list[Column], sample: Rates, gpus: list[GpuInfo]) -> str:
    """One row of the table: each column's cell, right-aligned, after its separator."""
    return "".join(
        column.separator + column.render(column.value(sample, gpus)) for column in columns
    )


def _csv_cell(value: float | None) -> str:
    """A plain number: an int without ".0", else up to three decimals; empty if None."""
    if value is None:
        return ""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def csv_row(columns: list[Column], sample: Rates, gpus: list[GpuInfo]) -> str:
    """One CSV row: the epoch, then each column's number (the time column is the epoch)."""
    cells = [f"{sample['time']:.3f}"]
    cells += [_csv_cell(column.value(sample, gpus)) for column in columns if column.kind != "time"]
    return ",".join(cells)


def _csv_quote(text: str) -> str:
    """*text* as one CSV field, quoted as the csv module would quote it."""
    if any(special in text for special in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_header(columns: list[Column]) -> str:
    keys = ["epoch", *(f"{c.group}:{c.name}" for c in columns if c.kind != "time")]
    return ",".join(_csv_quote(key) for key in keys)


def _open_output(path: str, header: str | None, *, check: bool) -> tuple[IO[str], bool]:
    """Open ``--output`` *path* to append to, and say whether it already begins with
    *header* (so the log goes on under it).

    A log grows across runs. A regular file that already holds something must begin with
    this run's CSV *header*, or (JSON Lines: *header* None) with a JSON record that has a
    ``time``; anything else is refused and left as it was, not mixed with rows of other
    columns. *check* False (``--no-header``) appends without looking.
    """
    try:
        target = open(path, "a", encoding="utf-8", newline="")  # noqa: SIM115
    except OSError as exc:
        msg = f"cannot open --output {path!r}: {exc.strerror}"
        raise CliError(msg) from exc
    try:
        status = os.fstat(target.fileno())
        if not check or not stat.S_ISREG(status.st_mode) or status.st_size == 0:
            return target, False
        with open(path, "rb") as existing:
            first = existing.readline(1 << 20)
    except OSError as exc:
        target.close()
        msg = f"cannot read --output {path!r} to see what it holds: {exc.strerror}"
        raise CliError(msg) from exc
    if header is not None:
        if first.rstrip(b"\r\n") == header.encode():
            return target, True
        expected = "this command's CSV header"
    else:
        import json

        try:
            record = json.loads(first)
        except ValueError:
            record = None
        if isinstance(record, dict) and "time" in record:
            return target, True
        expected = "a devutils stat JSON record"
    target.close()
    msg = (
        f"--output {path!r} already holds something else (its first line is not "
        f"{expected}); name a new file, or add --no-header to append anyway"
    )
    raise CliError(msg)


def _json_record(sample: Rates, gpus: list[GpuInfo], with_gpus: bool) -> str:
    """The `Sample` fields in order, as ``dataclasses.asdict(sample)`` gives them."""
    import json

    record = dict(sample)
    record["disks"] = {k: {"read": r, "write": w} for k, (r, w) in sample["disks"].items()}
    record["nics"] = {k: {"recv": r, "send": s} for k, (r, s) in sample["nics"].items()}
    record["missing"] = list(sample["missing"])
    if with_gpus:
        from dataclasses import asdict

        record["gpus"] = [asdict(gpu) for gpu in gpus]
    return json.dumps(record)


def _line_writer(stream: IO[str]) -> Callable[[str], None]:
    """A function that writes a line to *stream* at once: on POSIX straight to its file
    descriptor (rows are ASCII), which skips two layers of buffering per row."""
    try:
        descriptor = stream.fileno() if os.name == "posix" else -1
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        descriptor = -1
    if descriptor < 0:

        def write_stream(line: str) -> None:
            stream.write(line)
            stream.flush()

        return write_stream
    stream.flush()

    def write_descriptor(line: str) -> None:
        data = line.encode()
        while data:
            data = data[os.write(descriptor, data) :]

    return write_descriptor


def run_stat(args: argparse.Namespace) -> int:
    if args.bits and (args.csv or args.json):
        # CSV and JSON carry bytes/s, as their keys and the Sample fields say: a unit
        # their keys do not show would be read as bytes.
        msg = "argument --bits: sets the table's unit; --csv and --json are always bytes/s"
        raise CliError(msg)
    if not args.gpu:
        return _stat(args)
    from devutils.gpu import nvml_session

    with nvml_session():  # one NVML start for the run, not one per sample
        return _stat(args)


def _stat(args: argparse.Namespace) -> int:  # noqa: C901, PLR0912, PLR0915 - the run, step by step
    from devutils.counters import CounterSampler

    disks = _split(args.disks)
    nics = _split(args.nics)
    gpus: list[GpuInfo] = []
    snapshot_gpus: Callable[..., list[GpuInfo]] | None = None
    if args.gpu:
        from devutils.gpu import gpu_probe, gpu_snapshot

        gpus = gpu_snapshot(processes=False)
        if gpus:
            snapshot_gpus = gpu_snapshot
        else:
            print(f"devutils stat: no GPU columns: {gpu_probe().reason}", file=sys.stderr)
    sampler = CounterSampler(disks=disks, nics=nics, mem=bool(args.mem))
    if disks or nics:
        _warn_absent_devices(sampler, disks, nics)
    columns = build_columns(args, gpus)
    # --output's CSV stays bytes/s under --bits, which sets the table's unit only (and
    # --bits comes with the table: never with --csv or --json)
    csv_columns = build_columns(args, gpus, bits=False) if args.bits and args.output else columns
    header = None if args.no_header or args.json else _csv_header(csv_columns)
    target: IO[str] | None = None
    file_header = header
    if args.output:
        target, continued = _open_output(args.output, header, check=not args.no_header)
        if continued:
            file_header = None  # the file has it already
    table = not (args.csv or args.json)
    stdout = sys.stdout
    try:
        if target is not None and file_header is not None:  # None: --no-header, JSON, there
            target.write(file_header + "\n")
            target.flush()
        if table and not args.no_header:
            title, names = _table_header(columns)
            stdout.write(f"{title}\n{names}\n")
        elif not table and header is not None:
            stdout.write(header + "\n")
        stdout.flush()
        # stdout shows the table, or with --csv / --json the lines --output also gets
        to_stdout = _line_writer(stdout)
        to_file = None if target is None else _line_writer(target)
        lines = not table or to_file is not None  # CSV or JSON lines are wanted
        warned: set[str] = set()
        for row in sampler.run(args.delay, args.count):
            _warn_missing(sampler, row, warned)
            current = [] if snapshot_gpus is None else snapshot_gpus(processes=False)
            if lines:
                if args.json:
                    line = _json_record(row, current, bool(gpus)) + "\n"
                else:
                    line = csv_row(csv_columns, row, current) + "\n"
                if to_file is not None:
                    to_file(line)
                if not table:
                    to_stdout(line)
            if table:
                to_stdout(table_row(columns, row, current) + "\n")
    except KeyboardInterrupt:
        return 0
    finally:
        if target is not None:
            target.close()
    return 0
