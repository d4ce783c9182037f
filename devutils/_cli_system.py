"""``devutils stat``, ``devutils gpu`` and ``devutils which-dstat``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from devutils.cli import CliError, positive_float, positive_int

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import IO, Any

    from devutils.system import GpuInfo

    Rates = dict[str, Any]  # a sample's fields by name (devutils._sampling.compute_rates)
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
    parser.add_argument("-D", dest="disks", metavar="DISKS", help="disks to show, e.g. sda,total")
    parser.add_argument("-N", dest="nics", metavar="NICS", help="interfaces to show, e.g. lo,total")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV: one header row, raw numbers")
    output.add_argument("--json", action="store_true", help="JSON Lines with the Sample fields")
    parser.add_argument("--bits", action="store_true", help="show network in bits per second")
    parser.add_argument("--no-header", action="store_true", help="no header rows")
    parser.add_argument(
        "--output", metavar="FILE", help="also write CSV (JSON Lines with --json) to FILE"
    )
    parser.add_argument("delay", nargs="?", type=positive_float, default=1.0, help="seconds")
    parser.add_argument("count", nargs="?", type=positive_int, help="number of rows")
    parser.set_defaults(handler=run_stat)

    gpu = subparsers.add_parser(
        "gpu", help="NVIDIA GPU snapshot (NVML or nvidia-smi)", description="Show every GPU now."
    )
    gpu.add_argument("--json", action="store_true", help="print JSON")
    gpu.add_argument("--timeout", type=positive_float, default=5.0, help="nvidia-smi timeout (s)")
    gpu.set_defaults(handler=run_gpu)

    which = subparsers.add_parser(
        "which-dstat",
        help="tell dstat, pcp-dstat and dool on PATH apart",
        description="Show what dstat, dool and pcp-dstat on PATH really are, and why.",
    )
    which.add_argument("--json", action="store_true", help="print JSON")
    which.set_defaults(handler=run_which)


# -- columns ------------------------------------------------------------------------------


class Column:
    """One column of the table and the CSV (a plain class: no dataclasses at startup)."""

    __slots__ = ("get", "group", "kind", "name", "title", "width")

    def __init__(  # noqa: PLR0917 - a record of six fields
        self, group: str, title: str, name: str, width: int, kind: str, get: Getter
    ) -> None:
        self.group = group  # the CSV key's group, e.g. "dsk/total"
        self.title = title  # the table's group title, e.g. "dsk/total"
        self.name = name
        self.width = width
        self.kind = kind  # pct, bytes, net, count, load, time
        self.get = get


def _human(value: float, width: int, base: int) -> str:
    units = ["", "k", "M", "G", "T", "P"]
    index = 0
    while value >= 10 ** (width - 1) - 0.5 and index < len(units) - 1:
        value /= base
        index += 1
    if index and value < 9.95:
        return f"{value:.1f}{units[index]}"
    return f"{value:.0f}{units[index]}"


def _cell(column: Column, value: float | None, bits: bool) -> str:
    if value is None:
        return "-".rjust(column.width)
    if column.kind == "pct":
        text = f"{value:.0f}"
    elif column.kind == "time":
        text = time.strftime("%d-%m %H:%M:%S", time.localtime(value))
    elif column.kind == "load":
        text = f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"
    elif column.kind == "count":
        text = _human(value, column.width, 1000)
    else:
        text = _human(value * 8 if bits and column.kind == "net" else value, column.width, 1024)
    return text.rjust(column.width)


def _gpu_value(index: int, attribute: str) -> Getter:
    def get(_sample: Rates, gpus: list[GpuInfo]) -> float | None:
        for gpu in gpus:
            if gpu.index == index:
                value = getattr(gpu, attribute)
                return None if value is None else float(value)
        return None

    return get


def _field(name: str) -> Getter:
    return lambda s, _g: s.get(name)


def _device(kind: str, device: str, index: int) -> Getter:
    def get(s: Rates, _g: list[GpuInfo]) -> float | None:
        if device == "total":
            keys = ("disk_read", "disk_write") if kind == "disk" else ("net_recv", "net_send")
            value: float | None = s.get(keys[index])
            return value
        pair = s["disks" if kind == "disk" else "nics"].get(device)
        return None if pair is None else float(pair[index])

    return get


def build_columns(args: argparse.Namespace, gpus: list[GpuInfo]) -> list[Column]:
    chosen = {
        name for name in ("cpu", "disk", "net", "page", "sys", "load", "mem") if getattr(args, name)
    }
    if args.all:
        chosen |= {"cpu", "disk", "net", "page", "sys"}
    if not chosen:
        chosen = {"cpu", "disk", "net", "page", "sys", "load"}
    columns: list[Column] = []
    if args.time:
        columns.append(
            Column("time", "----system----", "time", 14, "time", lambda s, _g: s["time"])
        )
    if "cpu" in chosen:
        for name in ("usr", "sys", "idl", "wai", "stl"):
            columns.append(Column("cpu", "--total-cpu-usage--", name, 3, "pct", _field(name)))
    if "disk" in chosen:
        for disk in _split(args.disks) or ["total"]:
            for index, name in enumerate(("read", "writ")):
                columns.append(
                    Column(
                        f"dsk/{disk}", f"dsk/{disk}", name, 5, "bytes", _device("disk", disk, index)
                    )
                )
    if "net" in chosen:
        for nic in _split(args.nics) or ["total"]:
            for index, name in enumerate(("recv", "send")):
                columns.append(
                    Column(f"net/{nic}", f"net/{nic}", name, 5, "net", _device("net", nic, index))
                )
    if "page" in chosen:
        columns.append(Column("paging", "paging", "in", 5, "bytes", _field("page_in")))
        columns.append(Column("paging", "paging", "out", 5, "bytes", _field("page_out")))
    if "sys" in chosen:
        columns.append(Column("system", "system", "int", 5, "count", _field("interrupts")))
        columns.append(Column("system", "system", "csw", 5, "count", _field("ctx_switches")))
    if "load" in chosen:
        for name, attribute in (("1m", "load1"), ("5m", "load5"), ("15m", "load15")):
            columns.append(Column("load", "load-avg", name, 4, "load", _field(attribute)))
    if "mem" in chosen:
        for name, attribute in (
            ("used", "mem_used"),
            ("free", "mem_free"),
            ("cach", "mem_cached"),
            ("avai", "mem_available"),
        ):
            columns.append(Column("mem", "memory-usage", name, 5, "bytes", _field(attribute)))
    for gpu in gpus:
        group = f"gpu{gpu.index}"
        columns.append(Column(group, group, "util", 4, "pct", _gpu_value(gpu.index, "utilization")))
        columns.append(
            Column(group, group, "mem", 5, "bytes", _gpu_value(gpu.index, "memory_used"))
        )
    return columns


def _split(text: str | None) -> list[str]:
    return [part for part in (text or "").split(",") if part]


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


def _table_row(columns: list[Column], sample: Rates, gpus: list[GpuInfo], bits: bool) -> str:
    out: list[str] = []
    previous = None
    for column in columns:
        if previous is not None:
            out.append("|" if previous != column.group else " ")
        out.append(_cell(column, column.get(sample, gpus), bits))
        previous = column.group
    return "".join(out)


def _raw(value: float | None) -> str:
    if value is None:
        return ""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _csv_keys(columns: list[Column]) -> list[str]:
    return ["epoch", *(f"{c.group}:{c.name}" for c in columns if c.kind != "time")]


def _csv_values(columns: list[Column], sample: Rates, gpus: list[GpuInfo], bits: bool) -> list[str]:
    values = [f"{sample['time']:.3f}"]
    for column in columns:
        if column.kind == "time":
            continue
        value = column.get(sample, gpus)
        if value is not None and bits and column.kind == "net":
            value *= 8
        values.append(_raw(value))
    return values


def _json_record(sample: Rates, gpus: list[GpuInfo], with_gpus: bool) -> str:
    """The `Sample` fields, as ``dataclasses.asdict(sample)`` would give them."""
    import json

    record = dict(sample)
    record["disks"] = {k: {"read": r, "write": w} for k, (r, w) in sample["disks"].items()}
    record["nics"] = {k: {"recv": r, "send": s} for k, (r, s) in sample["nics"].items()}
    record["missing"] = list(sample["missing"])
    if with_gpus:
        from dataclasses import asdict

        record["gpus"] = [asdict(gpu) for gpu in gpus]
    return json.dumps(record)


def run_stat(args: argparse.Namespace) -> int:
    from devutils._sampling import RawSampler  # no dataclasses: a fast start

    disks = _split(args.disks)
    nics = _split(args.nics)
    gpus: list[GpuInfo] = []
    snapshot_gpus: Callable[..., list[GpuInfo]] | None = None
    if args.gpu:
        from devutils.system import gpu_probe, gpu_snapshot

        snapshot_gpus = gpu_snapshot
        gpus = gpu_snapshot(processes=False)
        if not gpus:
            print(f"devutils stat: no GPU columns: {gpu_probe().reason}", file=sys.stderr)
    sampler = RawSampler(disks=disks, nics=nics, mem=bool(args.mem))
    columns = build_columns(args, gpus)
    target: IO[str] | None = None
    if args.output:
        try:
            target = open(args.output, "a", encoding="utf-8", newline="")  # noqa: SIM115
        except OSError as exc:
            msg = f"cannot open --output {args.output!r}: {exc.strerror}"
            raise CliError(msg) from exc
    to_stdout = args.csv or args.json
    machine = sys.stdout if to_stdout and target is None else target
    writer = None
    if machine is not None and not args.json:
        import csv

        writer = csv.writer(machine, lineterminator="\n")
    try:
        if not args.no_header:
            if writer is not None:
                writer.writerow(_csv_keys(columns))
            if not to_stdout:
                title, names = _table_header(columns)
                print(title)
                print(names, flush=True)
        for row in sampler.run(args.delay, args.count):
            current = snapshot_gpus(processes=False) if gpus and snapshot_gpus else []
            if writer is not None:
                writer.writerow(_csv_values(columns, row, current, args.bits))
            elif machine is not None:
                machine.write(_json_record(row, current, bool(gpus)) + "\n")
            if machine is not None:
                machine.flush()
            if not to_stdout:
                print(_table_row(columns, row, current, args.bits), flush=True)
    except KeyboardInterrupt:
        return 0
    finally:
        if target is not None:
            target.close()
    return 0


def run_gpu(args: argparse.Namespace) -> int:
    import json

    from devutils.system import gpu_probe, gpu_snapshot

    gpus = gpu_snapshot(timeout=args.timeout)
    if not gpus:
        reason = gpu_probe(timeout=args.timeout).reason
        if args.json:
            print(json.dumps({"gpus": [], "reason": reason}))
        print(f"devutils gpu: no GPU: {reason}", file=sys.stderr)
        return 1
    if args.json:
        from dataclasses import asdict

        print(json.dumps({"gpus": [asdict(gpu) for gpu in gpus]}, indent=2))
        return 0
    for gpu in gpus:
        used = "-" if gpu.memory_used is None else f"{gpu.memory_used / 2**30:.1f}"
        total = "-" if gpu.memory_total is None else f"{gpu.memory_total / 2**30:.1f}"
        util = "-" if gpu.utilization is None else f"{gpu.utilization:.0f}%"
        temp = "-" if gpu.temperature is None else f"{gpu.temperature:.0f}C"
        power = "-" if gpu.power_draw is None else f"{gpu.power_draw:.0f}W"
        mig = f"  MIG {gpu.mig_mode}" if gpu.mig_mode else ""
        memory = f"mem {used}/{total} GiB"
        print(f"GPU {gpu.index}  {gpu.name}  util {util}  {memory}  {temp}  {power}{mig}")
        for proc in gpu.processes:
            held = "-" if proc.used_memory is None else f"{proc.used_memory / 2**20:.0f} MiB"
            name = proc.name if proc.visible else "(not visible in this PID namespace)"
            print(f"  pid {proc.pid}  {held}  {name}")
    return 0


def run_which(args: argparse.Namespace) -> int:
    import json

    from devutils.system import which_dstat

    infos = which_dstat()
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(info) for info in infos], indent=2))
        return 0
    for info in infos:
        if info.flavor == "missing":
            print(f"{info.command}: not on PATH")
            continue
        where = info.path if info.path == info.real_path else f"{info.path} -> {info.real_path}"
        version = f" {info.version}" if info.version else ""
        print(f"{info.command}: {info.flavor}{version} ({where})")
        for note in info.evidence:
            print(f"  {note}")
    return 0
