"""``devutils stat``: the command line of `devutils.rates` (dool-style statistics).

It reads the counters through `devutils.rates` (named tuples, no dataclasses) for a
fast start; `devutils.gpu` only with ``--gpu``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import stat
import sys
import time
from collections.abc import Callable

from devutils.cli.common import CliError, catch_signals, positive_int, positive_seconds

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import IO, Any

    from devutils.gpu import GpuInfo
    from devutils.rates import CounterSampler, Sample

    Getter = Callable[[Sample, list[GpuInfo]], float | None]


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
        ("-T", "--epoch", "an epoch column (seconds since 1970, as dool's -T)"),
    ]
    for short, long, text in flags:
        parser.add_argument(short, long, action="store_true", help=text)
    for flag, text in (("--bytes", "bytes, the default"), ("--nocolor", "no colour: never any")):
        parser.add_argument(flag, action="store_true", help=f"accepted for dool users ({text})")
    for flag, hint in _DOOL_ONLY.items():
        parser.add_argument(
            *flag.split(), nargs=0, action=_DoolOnly, hint=hint, help=argparse.SUPPRESS
        )
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
        help="show network in bits per second in the table (not with --csv or --json: bytes/s)",
    )
    parser.add_argument(
        "--no-header",
        "--noheaders",
        action="store_true",
        help="no header rows (dool's --noheaders)",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        type=_output_path,
        help="also write CSV (JSON Lines with --json) to FILE, appending",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        help="with --gpu: seconds the GPU backends may take each sample (default 5)",
    )
    parser.add_argument(
        "delay", nargs="?", type=positive_seconds, default=1.0, help="seconds (at most a day)"
    )
    parser.add_argument("count", nargs="?", type=positive_int, help="number of rows")
    parser.set_defaults(handler=run)


_DOOL_ONLY = {
    "-f --full": "name the devices instead: -D sda,sdb -N eth0,lo",
    "--color": "devutils stat writes no colour, ever",
    "--float": "--csv gives the raw numbers",
    "--integer": "--csv gives the raw numbers",
    "--noupdate": "devutils stat never redraws a row, so there is nothing to turn off",
    "-s --swap": "-m shows memory; swap paging is -g",
    "-p --proc": "see devutils stat --help for the groups there are",
    "-r --io": "-d shows disk bytes per second",
    "-i --int": "-y shows interrupts per second",
    "--top-cpu": "use top or htop for processes",
    "--top-mem": "use top or htop for processes",
    "--top-io": "use iotop for processes",
    "--fs": "see devutils stat --help for the groups there are",
    "--socket": "see devutils stat --help for the groups there are",
    "--tcp": "see devutils stat --help for the groups there are",
    "--vm": "-m shows memory, -g swap paging",
}
"""dool's flags that devutils stat does not have, and what to use instead."""


class _DoolOnly(argparse.Action):
    """A dool flag devutils stat does not have: a usage error that says what to use."""

    def __init__(self, *args: Any, hint: str, **kwargs: Any) -> None:
        self.hint = hint
        super().__init__(*args, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: str | None = None) -> None:
        parser.error(f"argument {option}: a dool flag devutils stat does not have; {self.hint}")


def _output_path(text: str) -> str:
    """An argparse type: a file name, not empty."""
    if not text:
        msg = "must name a file, got ''"
        raise argparse.ArgumentTypeError(msg)
    return text


# -- columns ------------------------------------------------------------------------------


class Column:
    """One column of the table and the CSV (a plain class: no dataclasses at startup).

    Its value is ``getattr(sample, field) * scale`` when *field* is given, else
    ``get(sample, gpus)``.
    """

    __slots__ = ("get", "group", "kind", "name", "render", "scale", "separator", "title", "width")

    def __init__(  # noqa: PLR0913, PLR0917 - a record: every field given at the call
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
        self.kind = kind  # pct, bytes, net, bits, count, load, time
        self.scale = scale
        self.get = get if get is not None else _field(field or name)
        self.render = _renderer(kind, width)
        self.separator = ""  # what goes before it in a table row: "", " " or "|"

    def value(self, sample: Sample, gpus: list[GpuInfo]) -> float | None:
        """This column's value in *sample* (None: not measured)."""
        value = self.get(sample, gpus)
        return value if value is None or self.scale == 1 else value * self.scale


_ONE_DECIMAL = 9.95
"""Scaled values below this keep one decimal (9.9k); from it on, none (10k)."""
_LOAD_WIDTH = 4
"""The characters of a load average's column."""
_BITS = 8
"""The scale of a network column shown in bits (``--bits``)."""


def _human(value: float, width: int, base: int) -> str:
    """*value* in at most *width* characters, with k, M, G, T or P of *base* as needed."""
    units = ("", "k", "M", "G", "T", "P")
    limit = 10 ** (width - 1) - 0.5
    index = 0
    while value >= limit and index < len(units) - 1:
        value /= base
        index += 1
    if index and value < _ONE_DECIMAL:
        return f"{value:.1f}{units[index]}"
    return f"{value:.0f}{units[index]}"


def _load(value: float) -> str:
    """A load average in four characters at most: 0.25, 12.5, 123 (the decimals chosen
    for the value as rounded: 9.996 is 10.0, 99.96 is 100)."""
    for decimals in (2, 1):
        text = f"{value:.{decimals}f}"
        if len(text) <= _LOAD_WIDTH:
            return text
    return f"{value:.0f}"


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
    if kind == "epoch":
        return lambda value: blank if value is None else f"{int(value)}".rjust(width)
    base = 1000 if kind in ("count", "bits") else 1024  # (bits in SI units, as dool's)
    return lambda value: blank if value is None else _human(value, width, base).rjust(width)


def _gpu_value(vendor: str, index: int, attribute: str) -> Getter:
    def get(_sample: Sample, gpus: list[GpuInfo]) -> float | None:
        for gpu in gpus:  # (an NVIDIA GPU and an AMD card may both be number 0)
            if (gpu.vendor, gpu.index) == (vendor, index):
                value = getattr(gpu, attribute)
                return None if value is None else float(value)
        return None

    return get


def _field(name: str) -> Getter:
    return lambda s, _g: getattr(s, name)


def _device(kind: str, device: str, index: int) -> Getter:
    """One disk's or NIC's rate (read or write, received or sent)."""
    devices = "disks" if kind == "disk" else "nics"

    def one(s: Sample, _g: list[GpuInfo]) -> float | None:
        pair = getattr(s, devices).get(device)
        return None if pair is None else float(pair[index])

    return one


def _device_column(kind: str, device: str, index: int, scale: int) -> Column:
    group = f"{'dsk' if kind == 'disk' else 'net'}/{device}"
    name = (("read", "writ") if kind == "disk" else ("recv", "send"))[index]
    column_kind = "bytes" if kind == "disk" else "bits" if scale == _BITS else "net"
    if device == "total":
        field = (("disk_read", "disk_write") if kind == "disk" else ("net_recv", "net_send"))[index]
        return Column(group, group, name, 5, column_kind, field=field, scale=scale)
    get = _device(kind, device, index)
    return Column(group, group, name, 5, column_kind, get, scale=scale)


_FIXED = {
    "page": ("paging", "paging", 5, "bytes", (("in", "page_in"), ("out", "page_out"))),
    "sys": ("system", "system", 5, "count", (("int", "interrupts"), ("csw", "ctx_switches"))),
    "load": ("load", "load-avg", 4, "load", (("1m", "load1"), ("5m", "load5"), ("15m", "load15"))),
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
"""The groups of plain fields: group, title, width, kind, and (column, field) pairs."""


def _groups(args: argparse.Namespace) -> set[str]:
    """The groups *args* ask for (dool's default -cdngy, and the load)."""
    chosen = {
        name for name in ("cpu", "disk", "net", "page", "sys", "load", "mem") if getattr(args, name)
    }
    if args.all:
        chosen |= {"cpu", "disk", "net", "page", "sys"}
    return chosen or {"cpu", "disk", "net", "page", "sys", "load"}


def _device_columns(args: argparse.Namespace, chosen: set[str], bits: bool) -> list[Column]:
    """The disks' and the interfaces' columns (the totals, or those -D and -N name)."""
    columns: list[Column] = []
    if "disk" in chosen:
        for disk in _comma_separated_names(args.disks) or ["total"]:
            columns.extend(_device_column("disk", disk, index, 1) for index in (0, 1))
    if "net" in chosen:
        for nic in _comma_separated_names(args.nics) or ["total"]:
            scale = _BITS if bits else 1
            columns.extend(_device_column("net", nic, index, scale) for index in (0, 1))
    return columns


def build_columns(
    args: argparse.Namespace, gpus: list[GpuInfo], *, bits: bool | None = None
) -> list[Column]:
    """The columns *args* ask for; the network's in bits if *bits* (default ``args.bits``)."""
    chosen = _groups(args)
    columns: list[Column] = []
    if args.epoch:
        columns.append(Column("epoch", "--epoch---", "epoch", 10, "epoch", field="time"))
    if args.time:
        columns.append(Column("time", "----system----", "time", 14, "time", field="time"))
    if "cpu" in chosen:
        for name in ("usr", "sys", "idl", "wai", "stl"):
            columns.append(Column("cpu", "--total-cpu-usage--", name, 3, "pct", field=name))
    columns += _device_columns(args, chosen, args.bits if bits is None else bits)
    for option, (group, title, width, kind, names) in _FIXED.items():
        if option in chosen:
            columns.extend(
                Column(group, title, name, width, kind, field=field) for name, field in names
            )
    vendors = {gpu.vendor for gpu in gpus}
    for gpu in gpus:
        # gpu0, gpu1 ...; beside another vendor's GPUs, nvidia0, amd0 (each has its own 0)
        group = f"{'gpu' if len(vendors) == 1 else gpu.vendor}{gpu.index}"
        for name, attribute, width, kind in (
            ("util", "utilization", 4, "pct"),
            ("mem", "memory_used", 5, "bytes"),
        ):
            getter = _gpu_value(gpu.vendor, gpu.index, attribute)
            columns.append(Column(group, group, name, width, kind, getter))
    for previous, column in itertools.pairwise(columns):
        column.separator = " " if previous.group == column.group else "|"
    return columns


def _comma_separated_names(text: str | None) -> list[str]:
    """The names in a comma-separated list, each once, in order."""
    return list(dict.fromkeys(part for part in (text or "").split(",") if part))


def _disk_names(text: str) -> str:
    """An argparse type: ``-D``'s names, a path under /dev (a symlink such as
    /dev/mapper/root or /dev/disk/by-label/data too) as the kernel's name for the disk
    it is (dm-0); /dev/cciss/c0d0 as /proc/diskstats writes it, cciss/c0d0 (sysfs, not
    read here, writes cciss!c0d0)."""
    names = []
    for name in _comma_separated_names(text):
        real = os.path.realpath(name) if name.startswith("/") else ""
        names.append(real.removeprefix("/dev/") if real.startswith("/dev/") else name)
    return ",".join(dict.fromkeys(names))


def _warn_absent_devices(sampler: CounterSampler, disks: list[str], nics: list[str]) -> None:
    """One line on stderr for each device asked for that is not there now (a typo, or a
    disk not plugged in yet): its columns show "-" until it appears."""
    present = sampler.snapshot()
    for kind, have, wanted in (("disk", present.disks, disks), ("interface", present.nics, nics)):
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


def _warn_missing(sampler: CounterSampler, sample: Sample, warned: set[str]) -> None:
    """One line on stderr for each group of counters that cannot be read, the first time."""
    for group in sample.missing:
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
        titles.append(_fitted(group[0].title.strip("-"), width).center(width, "-"))
        names.append(" ".join(c.name.rjust(c.width) for c in group))
    return " ".join(titles), "|".join(names)


def _fitted(title: str, width: int) -> str:
    """*title* in *width* characters: whole if it fits; else a device's name without its
    group (``nvme0n1p1`` for ``dsk/nvme0n1p1``), or its end after ``...`` as
    ``git diff --stat`` shortens a path, never a cut that reads as another device."""
    if len(title) <= width or width <= len("..."):
        return title[:width]
    name = title.partition("/")[2]
    if name and len(name) <= width:
        return name
    return "..." + (name or title)[3 - width :]


def table_row(columns: list[Column], sample: Sample, gpus: list[GpuInfo]) -> str:
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


def csv_row(columns: list[Column], sample: Sample, gpus: list[GpuInfo]) -> str:
    """One CSV row: the epoch, then each column's number (the time column is the epoch)."""
    cells = [f"{sample.time:.3f}"]
    cells += [
        _csv_cell(column.value(sample, gpus))
        for column in columns
        if column.kind not in ("time", "epoch")
    ]
    return ",".join(cells)


def _csv_quote(text: str) -> str:
    """*text* as one CSV field, quoted as the csv module would quote it."""
    if any(special in text for special in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_header(columns: list[Column]) -> str:
    keys = ["epoch", *(f"{c.group}:{c.name}" for c in columns if c.kind not in ("time", "epoch"))]
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
        # (surrogateescape: a device name that is not UTF-8 is written as its own bytes)
        target = open(path, "a", encoding="utf-8", errors="surrogateescape", newline="")  # noqa: SIM115 - the run's log
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
        if first.rstrip(b"\r\n") == header.encode("utf-8", "surrogateescape"):
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


def _json_record(sample: Sample, gpus: list[GpuInfo], with_gpus: bool) -> str:
    """The `Sample` fields in order; each disk's and interface's rates an object by field."""
    import json

    record = sample._asdict()
    record["disks"] = {name: rate._asdict() for name, rate in sample.disks.items()}
    record["nics"] = {name: rate._asdict() for name, rate in sample.nics.items()}
    record["missing"] = list(sample.missing)
    if with_gpus:
        from dataclasses import asdict

        record["gpus"] = [asdict(gpu) for gpu in gpus]
    return json.dumps(record)


class _Lines:
    """Where the lines go: written whole and flushed one by one; a failed write names
    its destination (``stdout``, or the ``--output`` path)."""

    def __init__(self, stream: IO[str], name: str) -> None:
        self.stream = stream
        self.name = name

    def write(self, line: str) -> None:
        try:
            self.stream.write(line)
            self.stream.flush()
        except BrokenPipeError as exc:
            if self.name == "stdout":  # its reader went away: not an error (`| head`)
                raise
            msg = f"{self.name}: {exc.strerror or exc} (its reader went away)"
            raise CliError(msg, status=1) from exc
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), self.name) from exc


def run(args: argparse.Namespace) -> int:
    if args.bits and (args.csv or args.json):
        # CSV and JSON carry bytes/s, as their keys and the Sample fields say: a unit
        # their keys do not show would be read as bytes.
        msg = "argument --bits: sets the table's unit; --csv and --json are always bytes/s"
        raise CliError(msg)
    if not args.gpu and args.timeout is not None:
        msg = "argument --timeout: bounds the GPU backends, so it needs --gpu"
        raise CliError(msg)
    try:  # Ctrl-C ends a run with status 0, at any point (the GPUs' probe may take seconds)
        if not args.gpu:
            return _stat(args, [])
        return _stat_with_gpus(args)
    except KeyboardInterrupt:
        return 0


def _stat_with_gpus(args: argparse.Namespace) -> int:
    if args.timeout is None:
        args.timeout = 5.0
    from devutils.gpu import gpu_probe, nvml_session

    catch_signals()  # SIGTERM, SIGHUP...: a running nvidia-smi is killed, as on Ctrl-C
    with nvml_session(timeout=args.timeout):  # one NVML start for the run, not one per sample
        probe = gpu_probe(timeout=args.timeout, processes=False)
        if not probe.snapshot:
            print(f"devutils stat: no GPU columns: {probe.reason}", file=sys.stderr)
        return _stat(args, list(probe.snapshot))


def _stat(args: argparse.Namespace, gpus: list[GpuInfo]) -> int:
    from devutils.rates import CounterSampler

    disks, nics = _comma_separated_names(args.disks), _comma_separated_names(args.nics)
    sampler = CounterSampler(disks=disks, nics=nics, mem=bool(args.mem))
    if disks or nics:
        _warn_absent_devices(sampler, disks, nics)
    columns = build_columns(args, gpus)
    # --output's CSV stays bytes/s under --bits, which sets the table's unit only (and
    # --bits comes with the table: never with --csv or --json)
    csv_columns = build_columns(args, gpus, bits=False) if args.bits and args.output else columns
    header = None if args.no_header or args.json else _csv_header(csv_columns)
    table = not (args.csv or args.json)
    with _Output(args, header) as output:
        if table and not args.no_header:
            output.stdout.write("\n".join(_table_header(columns)) + "\n")
        elif not table and header is not None:
            output.stdout.write(header + "\n")
        warned: set[str] = set()
        for row in sampler.run(args.delay, args.count):
            _warn_missing(sampler, row, warned)
            current = _gpus_now(args) if gpus else []
            line = ""
            if not table or output.log is not None:  # CSV or JSON lines are wanted
                line = _line(args, csv_columns, row, current, with_gpus=bool(gpus))
                output.to_log(line)
            output.stdout.write((table_row(columns, row, current) if table else line) + "\n")
    return 0


class _Output:
    """stdout, and the ``--output`` log (continued under its header, or begun with one)."""

    def __init__(self, args: argparse.Namespace, header: str | None) -> None:
        self.stdout = _Lines(sys.stdout, "stdout")
        self.log: _Lines | None = None
        self._target: IO[str] | None = None
        if args.output:
            self._target, continued = _open_output(args.output, header, check=not args.no_header)
            self.log = _Lines(self._target, args.output)
            if header is not None and not continued:  # None: --no-header, JSON
                self.log.write(header + "\n")

    def to_log(self, line: str) -> None:
        if self.log is not None:
            self.log.write(line + "\n")

    def __enter__(self) -> _Output:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._target is not None:
            # every line was flushed: what is left after a failed write fails again
            with contextlib.suppress(OSError):
                self._target.close()


def _line(
    args: argparse.Namespace,
    columns: list[Column],
    sample: Sample,
    gpus: list[GpuInfo],
    *,
    with_gpus: bool,
) -> str:
    """The sample as a JSON record (--json) or a CSV row."""
    return _json_record(sample, gpus, with_gpus) if args.json else csv_row(columns, sample, gpus)


def _gpus_now(args: argparse.Namespace) -> list[GpuInfo]:
    from devutils.gpu import gpu_snapshot

    return gpu_snapshot(timeout=args.timeout, processes=False)
