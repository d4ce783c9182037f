"""The kernel's cumulative counters, read: from /proc on Linux, through psutil elsewhere.

Each reader returns one group's counters (cpu, disk, net, paging, system, load, mem), in
seconds and bytes since boot; `devutils.rates` turns two readings into dool's rates.
`ProcReader` reads the files under `/proc` that psutil reads, through descriptors kept
open (as dool keeps its files), read whole by preads; `psutil_readers` are the same groups
through psutil (imported on first use); `default_readers` picks this system's.
`DeviceCounters` holds the two counters of each disk or network interface.
"""

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Self

from devutils.messages import describe

__all__ = [
    "DeviceCounters",
    "ProcReader",
    "default_readers",
    "parse_diskstats",
    "parse_loadavg",
    "parse_meminfo",
    "parse_net_dev",
    "parse_stat_cpu",
    "parse_stat_system",
    "parse_vmstat_paging",
    "psutil_readers",
]

_CPU_FIELDS = 8
"""user, nice, system, idle, iowait, irq, softirq, steal."""


# -- the counters of each device -----------------------------------------------------------


class DeviceCounters(Mapping[str, tuple[int, int]]):
    """Two counters per device, as /proc lists them: names and two parallel lists.

    A read-only mapping of name -> (first, second) x *unit*, for `devutils.rates.Snapshot`'s
    ``disks`` and ``nics``; kept as lists so that `devutils.rates.compute_rates` subtracts
    whole lists in C.

    Raises:
        TypeError: If *names* is not a tuple of str, or *unit* not an int.
        ValueError: If *first* or *second* does not hold one counter per name, or *unit*
            is below 1.

    Examples:
        >>> disks = DeviceCounters(("sda", "sdb"), [30, 0], [70, 1], unit=512)  # sectors
        >>> disks["sda"], list(disks), "sdc" in disks
        ((15360, 35840), ['sda', 'sdb'], False)
    """

    __slots__ = ("first", "names", "second", "unit")

    def __init__(
        self, names: tuple[str, ...], first: list[int], second: list[int], unit: int = 1
    ) -> None:
        if not isinstance(names, tuple) or not all(isinstance(name, str) for name in names):
            msg = f"names must be a tuple of str, got {describe(names)}"
            raise TypeError(msg)
        if isinstance(unit, bool) or not isinstance(unit, int):
            msg = f"unit must be an int, got {describe(unit)}"
            raise TypeError(msg)
        if unit < 1:
            msg = f"unit must be at least 1, got {unit}"
            raise ValueError(msg)
        if len(first) != len(names) or len(second) != len(names):
            msg = (
                f"first and second must hold one counter per name, got {len(names)} names, "
                f"{len(first)} and {len(second)} counters"
            )
            raise ValueError(msg)
        self.names = names
        self.first = first  # in *unit*s: /proc/diskstats counts 512-byte sectors
        self.second = second
        self.unit = unit

    def __getitem__(self, name: str) -> tuple[int, int]:
        try:
            index = self.names.index(name)
        except ValueError:
            raise KeyError(name) from None
        return (self.first[index] * self.unit, self.second[index] * self.unit)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def _counters(pairs: dict[str, tuple[int, int]], unit: int = 1) -> DeviceCounters:
    """*pairs* (name -> counters in *unit*s) as `DeviceCounters`."""
    return DeviceCounters(
        tuple(pairs), [p[0] for p in pairs.values()], [p[1] for p in pairs.values()], unit
    )


# -- Linux: /proc -------------------------------------------------------------------------

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size
_KIB = 1024  # /proc/meminfo counts kB
_DISKSTATS_FIELDS = 10  # major, minor, name, reads, merged, sectors read, ms, writes, ...
_NET_DEV_FIELDS = 16  # after "name:": 8 receive counters, then 8 transmit counters


def _check_data(data: object) -> None:
    if not isinstance(data, bytes | bytearray):
        msg = f"data must be a file's bytes, got {describe(data)}"
        raise TypeError(msg)


def parse_stat_cpu(data: bytes) -> tuple[float, ...]:
    """The cumulative seconds of /proc/stat's first line: user, nice, system, idle,
    iowait, irq, softirq, steal (0 for the fields an old kernel lacks).

    Each parser of this module takes a file's bytes, and raises TypeError for anything
    else, and OSError where they list nothing of what it reads (as `ProcReader` says).

    Examples:
        >>> [round(s * os.sysconf("SC_CLK_TCK")) for s in parse_stat_cpu(b"cpu  10 0 5 80\\n")]
        [10, 0, 5, 80, 0, 0, 0, 0]
    """
    _check_data(data)
    if not data.startswith(b"cpu "):
        msg = "no cpu line in /proc/stat"
        raise OSError(msg)
    ticks = data.split(b"\n", 1)[0].split()[1 : _CPU_FIELDS + 1]
    seconds = [int(tick) / _CLOCK_TICKS for tick in ticks]
    return (*seconds, *[0.0] * (_CPU_FIELDS - len(seconds)))


def parse_stat_system(data: bytes) -> tuple[int, int]:
    """/proc/stat's interrupts (the first number of ``intr``) and context switches.

    Examples:
        >>> parse_stat_system(b"cpu  1 2 3 4\\nintr 1200 7 8\\nctxt 5000\\n")
        (1200, 5000)
    """
    _check_data(data)
    fields = {}
    for line in data.splitlines():
        if line[:4] in (b"intr", b"ctxt"):
            words = line.split(None, 2)  # (intr goes on with a count per interrupt)
            if len(words) > 1 and words[0] == line[:4]:
                fields[words[0]] = words[1]
    if len(fields) != 2:  # noqa: PLR2004 - the two lines
        msg = "no intr or ctxt line in /proc/stat"
        raise OSError(msg)
    return (int(fields[b"intr"]), int(fields[b"ctxt"]))


def parse_diskstats(data: bytes) -> DeviceCounters:
    """/proc/diskstats as device -> (bytes read, bytes written); a name listed twice
    counts as its last line.

    Examples:
        >>> dict(parse_diskstats(b"   8       0 sda 1 2 30 4 5 6 70 8 9 10 11\\n"))
        {'sda': (15360, 35840)}
    """
    _check_data(data)
    disks: dict[str, tuple[int, int]] = {}
    for line in data.splitlines():
        fields = line.split()
        if len(fields) >= _DISKSTATS_FIELDS:
            disks[os.fsdecode(fields[2])] = (int(fields[5]), int(fields[9]))
    if not disks:
        msg = "/proc/diskstats lists no disk"
        raise OSError(msg)
    return _counters(disks, _SECTOR)


def parse_net_dev(data: bytes) -> DeviceCounters:
    """/proc/net/dev as interface -> (bytes received, bytes sent).

    Examples:
        >>> header = b"Inter-|   Receive\\n face |bytes packets\\n"
        >>> dict(parse_net_dev(header + b"  eth0: 100 1 0 0 0 0 0 0 200 1 0 0 0 0 0 0\\n"))
        {'eth0': (100, 200)}
    """
    _check_data(data)
    nics: dict[str, tuple[int, int]] = {}
    for line in data.splitlines()[2:]:  # past the two header lines
        name, colon, counters = line.partition(b":")
        fields = counters.split()
        if colon and len(fields) >= _NET_DEV_FIELDS:
            # (a name may be any bytes: read as a file name is, so that -N's matches it)
            nics[os.fsdecode(name.strip())] = (int(fields[0]), int(fields[8]))
    if not nics:
        msg = "/proc/net/dev lists no interface"
        raise OSError(msg)
    return _counters(nics)


def parse_vmstat_paging(data: bytes) -> tuple[int, int]:
    """/proc/vmstat's pages swapped in and out, in bytes.

    Examples:
        >>> swapped = parse_vmstat_paging(b"pswpin 3\\npswpout 4\\n")
        >>> [count // os.sysconf("SC_PAGE_SIZE") for count in swapped]
        [3, 4]
    """
    _check_data(data)
    values = {}
    for line in data.splitlines():
        name, _, value = line.partition(b" ")
        if name in (b"pswpin", b"pswpout"):
            values[name] = int(value) * _PAGE_SIZE
    if len(values) != 2:  # noqa: PLR2004 - the two lines
        msg = "no pswpin or pswpout line in /proc/vmstat"
        raise OSError(msg)
    return (values[b"pswpin"], values[b"pswpout"])


def parse_loadavg(data: bytes) -> tuple[float, float, float]:
    """/proc/loadavg's 1, 5 and 15 minute load averages.

    Examples:
        >>> parse_loadavg(b"0.25 1.50 12.00 2/79 19584\\n")
        (0.25, 1.5, 12.0)
    """
    _check_data(data)
    averages = data.split(None, 3)[:3]
    if len(averages) != 3:  # noqa: PLR2004 - the three averages
        msg = "no load averages in /proc/loadavg"
        raise OSError(msg)
    one, five, fifteen = map(float, averages)
    return (one, five, fifteen)


def parse_meminfo(data: bytes) -> tuple[int, int, int, int]:
    """Memory used, free, cached and available in bytes, as psutil and ``free`` count
    them: cached = Cached + SReclaimable, used = MemTotal - MemAvailable.

    Examples:
        >>> parse_meminfo(b"MemTotal: 8 kB\\nMemFree: 2 kB\\nCached: 3 kB\\nMemAvailable: 5 kB\\n")
        (3072, 2048, 3072, 5120)
    """
    _check_data(data)
    kib = {}
    for line in data.splitlines():
        name, _, rest = line.partition(b":")
        if value := rest.split()[:1]:
            kib[name] = int(value[0]) * _KIB
    if b"MemTotal" not in kib or b"MemFree" not in kib:
        msg = "no MemTotal or MemFree line in /proc/meminfo"
        raise OSError(msg)
    total, free = kib[b"MemTotal"], kib[b"MemFree"]
    cached = kib.get(b"Cached", 0) + kib.get(b"SReclaimable", 0)
    available = kib.get(b"MemAvailable") or free + kib.get(b"Buffers", 0) + cached
    if available > total:  # a container's host figure (LXC): free, as procps and psutil
        available = free
    return (total - available, free, cached, available)


class ProcReader:
    """Linux's counters, read from /proc (or *root*) through descriptors kept open, as
    dool keeps its files.

    Each snapshot reads each file whole, with preads from its start to its end into a
    buffer sized by the last read; /proc/stat is read once for both cpu and system.
    Every method returns one group's counters, and raises OSError where its file cannot
    be read (or lists nothing of what it needs).

    Examples:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())  # files laid out as /proc lays them out
        >>> _ = (root / "loadavg").write_bytes(b"0.25 1.50 12.00 2/79 19584\\n")
        >>> proc = ProcReader(root)
        >>> proc.load()
        (0.25, 1.5, 12.0)
        >>> proc.cpu()
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '...stat'
    """

    def __init__(self, root: str | os.PathLike[str] = "/proc") -> None:
        self._descriptors: dict[str, int] = {}
        folder: object = os.fspath(root) if isinstance(root, str | os.PathLike) else root
        if not isinstance(folder, str):
            msg = f"root must be a path (a str or os.PathLike of one), got {describe(root)}"
            raise TypeError(msg)
        self.root = folder
        """Where the files are: ``/proc``, or a folder of captured files, for tests."""
        self._sizes: dict[str, int] = {}
        self._stat: bytes | None = None

    def close(self) -> None:
        """Close the descriptors this reader keeps open; a later read opens them again.

        A ProcReader is also a context manager that closes them on leaving, and one that
        is garbage-collected closes them too.

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "loadavg").write_bytes(b"0.25 1.50 12.00 2/79 19584\\n")
            >>> with ProcReader(root) as proc:
            ...     proc.load()
            (0.25, 1.5, 12.0)
        """
        descriptors, self._descriptors = self._descriptors, {}
        for descriptor in descriptors.values():
            os.close(descriptor)

    def __del__(self) -> None:  # (a reader dropped unclosed gives its descriptors back)
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self, path: str) -> bytes:
        descriptor = self._descriptors.get(path)
        if descriptor is None:
            where = os.path.join(self.root, path)
            descriptor = self._descriptors[path] = os.open(where, os.O_RDONLY | os.O_CLOEXEC)
        size = self._sizes.get(path, 1 << 14)
        chunks: list[bytes] = []
        offset = 0
        # (read on to the end: the kernel gives a file it generates a line at a time, as
        # net/dev and diskstats, a page or so per read, however big the buffer)
        while chunk := os.pread(descriptor, size, offset):
            chunks.append(chunk)
            offset += len(chunk)
        self._sizes[path] = offset + 4096  # room to grow
        return b"".join(chunks)

    def cpu(self) -> tuple[float, ...]:
        """The cumulative seconds user, nice, system, idle, iowait, irq, softirq and steal,
        from ``stat`` (in clock ticks there). Keeps the read for `system`, which comes next
        in a snapshot.

        Examples:
            >>> import os, pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "stat").write_bytes(b"cpu  100 2 30 4000 5 6 7 8\\n")
            >>> [round(seconds * os.sysconf("SC_CLK_TCK")) for seconds in ProcReader(root).cpu()]
            [100, 2, 30, 4000, 5, 6, 7, 8]
        """
        self._stat = None
        self._stat = self._read("stat")
        return parse_stat_cpu(self._stat)

    def system(self) -> tuple[int, int]:
        """Interrupts and context switches since boot, from ``stat`` (the read `cpu` kept,
        where it came just before).

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "stat").write_bytes(b"cpu  1 2 3 4\\nintr 123456 7 8\\nctxt 98765\\n")
            >>> ProcReader(root).system()
            (123456, 98765)
        """
        data, self._stat = self._stat, None
        return parse_stat_system(data if data is not None else self._read("stat"))

    def disks(self) -> DeviceCounters:
        """Bytes read and written by each block device, from ``diskstats`` (which counts
        512-byte sectors).

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "diskstats").write_bytes(b"   8  0 sda 1 2 30 4 5 6 70 8 9 10 11\\n")
            >>> ProcReader(root).disks()
            {'sda': (15360, 35840)}
        """
        return parse_diskstats(self._read("diskstats"))

    def nics(self) -> DeviceCounters:
        """Bytes received and sent by each network interface, from ``net/dev``.

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> (root / "net").mkdir()
            >>> line = b"  eth0: 1000 0 0 0 0 0 0 0 500 0 0 0 0 0 0 0\\n"  # past two header lines
            >>> _ = (root / "net" / "dev").write_bytes(b"Inter-|\\n face |\\n" + line)
            >>> ProcReader(root).nics()
            {'eth0': (1000, 500)}
        """
        return parse_net_dev(self._read("net/dev"))

    def paging(self) -> tuple[int, int]:
        """Bytes swapped in and out since boot, from ``vmstat`` (which counts pages).

        Examples:
            >>> import os, pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "vmstat").write_bytes(b"nr_free_pages 5\\npswpin 3\\npswpout 4\\n")
            >>> [count // os.sysconf("SC_PAGE_SIZE") for count in ProcReader(root).paging()]
            [3, 4]
        """
        return parse_vmstat_paging(self._read("vmstat"))

    def load(self) -> tuple[float, float, float]:
        """The 1, 5 and 15 minute load averages, from ``loadavg``.

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "loadavg").write_bytes(b"0.25 1.50 12.00 2/79 19584\\n")
            >>> ProcReader(root).load()
            (0.25, 1.5, 12.0)
        """
        return parse_loadavg(self._read("loadavg"))

    def mem(self) -> tuple[int, int, int, int]:
        """Memory used, free, cached and available in bytes, from ``meminfo``, counted as
        psutil and ``free`` count them (cached = Cached + SReclaimable, used = MemTotal -
        MemAvailable).

        Examples:
            >>> import pathlib, tempfile
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (root / "meminfo").write_bytes(
            ...     b"MemTotal: 8 kB\\nMemFree: 2 kB\\nCached: 3 kB\\nMemAvailable: 5 kB\\n"
            ... )
            >>> ProcReader(root).mem()
            (3072, 2048, 3072, 5120)
        """
        return parse_meminfo(self._read("meminfo"))

    def readers(self) -> dict[str, Callable[[], Any]]:
        """The group readers, by group name (for `devutils.rates.CounterSampler`'s *readers*).

        Examples:
            >>> sorted(ProcReader().readers())  # nothing is read until a reader is called
            ['cpu', 'disk', 'load', 'mem', 'net', 'paging', 'system']
        """
        return {
            "cpu": self.cpu,
            "disk": self.disks,
            "net": self.nics,
            "paging": self.paging,
            "system": self.system,
            "load": self.load,
            "mem": self.mem,
        }


# -- elsewhere: psutil --------------------------------------------------------------------


def psutil_readers() -> dict[str, Callable[[], Any]]:
    """The group readers through psutil (imported on first use), by group name.

    Examples:
        >>> readers = psutil_readers()
        >>> sorted(readers)
        ['cpu', 'disk', 'load', 'mem', 'net', 'paging', 'system']
        >>> len(readers["load"]())  # the 1, 5 and 15 minute load averages
        3
    """

    def cpu() -> tuple[float, ...]:
        import psutil

        t = psutil.cpu_times()
        names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
        return tuple(float(getattr(t, name, 0.0)) for name in names)

    def disks() -> DeviceCounters:
        import psutil

        counters = psutil.disk_io_counters(perdisk=True, nowrap=True)
        if not counters:
            msg = "no disk counters"
            raise OSError(msg)
        return _counters({name: (c.read_bytes, c.write_bytes) for name, c in counters.items()})

    def nics() -> DeviceCounters:
        import psutil

        counters = psutil.net_io_counters(pernic=True, nowrap=True)
        if not counters:
            msg = "no network interfaces"
            raise OSError(msg)
        return _counters({name: (c.bytes_recv, c.bytes_sent) for name, c in counters.items()})

    def paging() -> tuple[int, int]:
        import psutil

        swap = psutil.swap_memory()
        return (swap.sin, swap.sout)

    def system() -> tuple[int, int]:
        import psutil

        stats = psutil.cpu_stats()
        return (stats.interrupts, stats.ctx_switches)

    def load() -> tuple[float, float, float]:
        import psutil

        return psutil.getloadavg()

    def mem() -> tuple[int, int, int, int]:
        import psutil

        vm = psutil.virtual_memory()
        # used as /proc is read (total - available): psutil's own `used` is that only
        # from psutil 7.1 on Linux, and counts otherwise on other systems
        used = max(0, vm.total - vm.available)
        return (used, vm.free, getattr(vm, "cached", 0), vm.available)

    return {
        "cpu": cpu,
        "disk": disks,
        "net": nics,
        "paging": paging,
        "system": system,
        "load": getattr(os, "getloadavg", load),  # (not on Windows: psutil's stands in)
        "mem": mem,
    }


def default_readers() -> dict[str, Callable[[], Any]]:
    """This system's group readers, by group name: `ProcReader`'s on Linux (where
    ``/proc/stat`` can be read), else `psutil_readers`.

    Examples:
        >>> sorted(default_readers())
        ['cpu', 'disk', 'load', 'mem', 'net', 'paging', 'system']
    """
    if sys.platform.startswith("linux") and os.access("/proc/stat", os.R_OK):
        return ProcReader().readers()
    return psutil_readers()
