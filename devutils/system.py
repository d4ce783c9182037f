"""dool/dstat-style resource sampling, GPU snapshots, and "which dstat is this?".

`Sampler` reads the same counters dool reads (through `psutil`) and turns two snapshots
into rates: cpu percentages exactly as dool computes them, disk and network bytes per
second over the devices dool's totals count, swap paging, interrupts, context switches
and load. Rates divide by the measured interval, counters that go backwards or devices
that come and go never give a negative or infinite rate, and a group that cannot be read
is reported in ``Sample.missing`` instead of failing the others.

`gpu_snapshot` asks NVML (the ``[gpu]`` extra, ``nvidia-ml-py``) or else ``nvidia-smi``,
and returns ``[]`` when there is no GPU; `gpu_probe` says why. `which_dstat` tells the
original dstat, Performance Co-Pilot's ``pcp-dstat`` and dool apart.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from devutils._sampling import (
    DISK_FILTER,
    NIC_FILTER,
    DeviceCounters,
    RawSampler,
    compute_rates,
)

__all__ = [
    "DISK_FILTER",
    "NIC_FILTER",
    "DeviceCounters",
    "DiskRate",
    "DstatInfo",
    "GpuInfo",
    "GpuProbe",
    "GpuProcess",
    "NicRate",
    "Sample",
    "Sampler",
    "Snapshot",
    "compute_sample",
    "gpu_probe",
    "gpu_snapshot",
    "parse_nvidia_smi_csv",
    "sample",
    "which_dstat",
]


# -- snapshots and rates ------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """Raw cumulative counters at one moment (None: the group could not be read).

    ``cpu`` holds the cumulative seconds user, nice, system, idle, iowait, irq, softirq
    and steal; ``disks`` name -> (read bytes, written bytes); ``nics`` name -> (received,
    sent bytes); ``paging`` (swapped-in bytes, swapped-out bytes); ``system``
    (interrupts, context switches); ``load`` the 1, 5 and 15 minute averages; ``mem``
    (used, free, cached, available) bytes.
    """

    monotonic: float
    time: float
    cpu: tuple[float, ...] | None = None
    disks: Mapping[str, tuple[int, int]] | None = None
    nics: Mapping[str, tuple[int, int]] | None = None
    paging: tuple[int, int] | None = None
    system: tuple[int, int] | None = None
    load: tuple[float, float, float] | None = None
    mem: tuple[int, int, int, int] | None = None
    groups: tuple[str, ...] = ("cpu", "disk", "net", "paging", "system", "load")
    """The groups this snapshot tried to read."""


@dataclass(frozen=True)
class DiskRate:
    """Bytes per second read and written by one disk."""

    read: float
    write: float


@dataclass(frozen=True)
class NicRate:
    """Bytes per second received and sent by one network interface."""

    recv: float
    send: float


@dataclass(frozen=True)
class Sample:
    """Rates over one interval, ending at ``time`` (Unix seconds).

    cpu columns are percentages that sum to 100 (None if cpu could not be read); byte
    rates are bytes per second; ``missing`` names the groups that could not be read.
    """

    time: float
    elapsed: float
    usr: float | None = None
    sys: float | None = None
    idl: float | None = None
    wai: float | None = None
    stl: float | None = None
    disk_read: float | None = None
    disk_write: float | None = None
    net_recv: float | None = None
    net_send: float | None = None
    page_in: float | None = None
    page_out: float | None = None
    interrupts: float | None = None
    ctx_switches: float | None = None
    load1: float | None = None
    load5: float | None = None
    load15: float | None = None
    mem_used: int | None = None
    mem_free: int | None = None
    mem_cached: int | None = None
    mem_available: int | None = None
    disks: Mapping[str, DiskRate] = field(default_factory=dict)
    nics: Mapping[str, NicRate] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


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

    Examples:
        >>> a = Snapshot(0.0, 100.0, cpu=(10, 0, 5, 80, 5, 0, 0, 0), system=(1000, 500))
        >>> b = Snapshot(2.0, 102.0, cpu=(12, 0, 6, 81, 5, 1, 0, 0), system=(1400, 900))
        >>> s = compute_sample(a, b)
        >>> s.usr, s.sys, s.idl, s.interrupts, s.ctx_switches
        (60.0, 20.0, 20.0, 200.0, 200.0)
    """
    rates = compute_rates(vars(before), vars(after), disks=disks, nics=nics)
    return _sample(rates)


def _sample(rates: dict[str, Any]) -> Sample:
    rates["disks"] = {name: DiskRate(*pair) for name, pair in rates["disks"].items()}
    rates["nics"] = {name: NicRate(*pair) for name, pair in rates["nics"].items()}
    return Sample(**rates)


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
        disks: Sequence[str] = (),
        nics: Sequence[str] = (),
        mem: bool = False,
        readers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self._raw = RawSampler(disks=disks, nics=nics, mem=mem, readers=readers)
        self.disks = self._raw.disks
        self.nics = self._raw.nics
        self.mem = self._raw.mem

    def snapshot(self) -> Snapshot:
        """Read every group's counters now (a group that fails becomes None)."""
        raw = self._raw.snapshot()
        ticks = self._raw.cpu_ticks
        if ticks and raw["cpu"] is not None:
            raw["cpu"] = tuple([tick / ticks for tick in raw["cpu"]])
        return Snapshot(**raw)

    def sample(self) -> Sample | None:
        """Return the rates since the previous call (None on the first call)."""
        rates = self._raw.sample()
        return None if rates is None else _sample(rates)

    def run(self, interval: float = 1.0, count: int | None = None) -> Iterator[Sample]:
        """Yield a sample every *interval* seconds, *count* times (forever if None).

        The schedule is absolute (start + k x interval), so it does not drift; a late
        tick is skipped rather than bunched. The first sample comes one interval after
        the call.
        """
        return map(_sample, self._raw.run(interval, count))


def sample(interval: float = 1.0, *, mem: bool = False) -> Sample:
    """Block for *interval* seconds and return the rates over it.

    Examples:
        >>> s = sample(0.05)
        >>> s.elapsed >= 0.05
        True
    """
    sampler = Sampler(mem=mem)
    return next(sampler.run(interval, 1))


# -- GPUs ---------------------------------------------------------------------------------

_MIB = 1 << 20
_QUERY_GPU = (
    "index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,"
    "power.draw,mig.mode.current"
)
_QUERY_APPS = "gpu_uuid,pid,process_name,used_gpu_memory"


@dataclass(frozen=True)
class GpuProcess:
    """A compute process on a GPU. ``name`` is None when the pid is not ``visible`` in
    this PID namespace (a container, say); ``used_memory`` None when not reported
    (Windows WDDM)."""

    pid: int
    used_memory: int | None
    name: str | None
    visible: bool


@dataclass(frozen=True)
class GpuInfo:
    """One GPU now. None means the driver did not report that value (``[N/A]``)."""

    index: int
    uuid: str
    name: str
    utilization: float | None
    memory_used: int | None
    memory_total: int | None
    temperature: float | None
    power_draw: float | None
    mig_mode: str | None
    processes: tuple[GpuProcess, ...] = ()


@dataclass(frozen=True)
class GpuProbe:
    """How `gpu_snapshot` got its answer: ``backend`` ("nvml", "nvidia-smi" or None)
    and, when no GPU was reported, ``reason``."""

    backend: str | None
    gpus: int
    reason: str


class _SmiError(Exception):
    pass


def _value(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    if (
        not text
        or (text.startswith("[") and text.endswith("]"))
        or text in {"N/A", "Not Supported"}
    ):
        return None
    return text


_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(%|MiB|W|MHz|C)?$")


def _number(text: str | None) -> float | None:
    value = _value(text)
    if value is None:
        return None
    match = _UNIT.match(value)
    if match is None:
        msg = f"not a number: {value!r}"
        raise _SmiError(msg)
    return float(match.group(1))


def parse_nvidia_smi_csv(text: str) -> list[dict[str, str | None]]:
    """Parse ``nvidia-smi --query-...=... --format=csv[,nounits]`` output by header name.

    Header names lose their ``[unit]``; values keep their text, with ``[N/A]``,
    ``[Not Supported]`` and any other bracketed value turned into None.

    Raises:
        ValueError: If the text is not such a CSV (an error message, garbage, rows whose
            field count differs from the header's).

    Examples:
        >>> parse_nvidia_smi_csv("index, memory.used [MiB], fan.speed [%]\\n0, 1024 MiB, [N/A]\\n")
        [{'index': '0', 'memory.used': '1024 MiB', 'fan.speed': None}]
    """
    import csv
    import io

    rows = [row for row in csv.reader(io.StringIO(text), skipinitialspace=True) if row]
    if not rows:
        msg = "empty output"
        raise ValueError(msg)
    header = [re.sub(r"\s*\[[^\]]*\]$", "", name.strip()) for name in rows[0]]
    if len(header) < 2 or not all(re.fullmatch(r"[a-z_][a-z0-9_.]*", h, re.I) for h in header):
        msg = f"not an nvidia-smi CSV header: {rows[0][:3]!r}"
        raise ValueError(msg)
    records = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            msg = f"line {number} has {len(row)} fields, the header {len(header)}"
            raise ValueError(msg)
        records.append({name: _value(cell) for name, cell in zip(header, row, strict=True)})
    return records


def _run_smi(smi: str, args: list[str], timeout: float) -> str:
    """Run nvidia-smi in its own process group; kill the group at the timeout."""
    import signal
    import subprocess

    process = subprocess.Popen(
        [smi, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=1.0)
        msg = f"nvidia-smi timed out after {timeout:g} s and was killed"
        raise _SmiError(msg) from None
    text = out.decode("utf-8", "replace")
    if process.returncode != 0:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        hint = ""
        if process.returncode == 18 or "mismatch" in text:
            hint = " (driver/library version mismatch: reboot or reload the driver)"
        elif "couldn't communicate with the NVIDIA driver" in text:
            hint = " (no NVIDIA driver loaded)"
        msg = f"nvidia-smi failed with exit status {process.returncode}: {first}{hint}"
        raise _SmiError(msg)
    return text


def _process(pid: int, used: int | None) -> GpuProcess:
    try:
        import psutil

        name: str | None = psutil.Process(pid).name()
        visible = True
    except Exception:
        name, visible = None, False
    return GpuProcess(pid, used, name, visible)


def _snapshot_smi(timeout: float, processes: bool) -> list[GpuInfo]:
    import shutil

    smi = shutil.which("nvidia-smi")
    if smi is None:
        msg = "nvidia-smi not found on PATH"
        raise _SmiError(msg)
    deadline = time.monotonic() + timeout
    text = _run_smi(smi, [f"--query-gpu={_QUERY_GPU}", "--format=csv,nounits"], timeout)
    try:
        rows = parse_nvidia_smi_csv(text)
        gpus = []
        for row in rows:
            total = _number(row.get("memory.total"))
            used = _number(row.get("memory.used"))
            gpus.append(
                GpuInfo(
                    index=int(_number(row.get("index")) or 0),
                    uuid=row.get("uuid") or "",
                    name=row.get("name") or "",
                    utilization=_number(row.get("utilization.gpu")),
                    memory_used=None if used is None else int(used * _MIB),
                    memory_total=None if total is None else int(total * _MIB),
                    temperature=_number(row.get("temperature.gpu")),
                    power_draw=_number(row.get("power.draw")),
                    mig_mode=row.get("mig.mode.current"),
                )
            )
    except (ValueError, _SmiError) as exc:
        msg = f"nvidia-smi printed output that is not the expected CSV: {exc}"
        raise _SmiError(msg) from exc
    if not processes or not gpus:
        return gpus
    remaining = max(0.1, deadline - time.monotonic())
    text = _run_smi(smi, [f"--query-compute-apps={_QUERY_APPS}", "--format=csv,nounits"], remaining)
    try:
        apps = parse_nvidia_smi_csv(text)
    except ValueError as exc:
        msg = f"nvidia-smi printed output that is not the expected CSV: {exc}"
        raise _SmiError(msg) from exc
    by_uuid: dict[str, list[GpuProcess]] = {}
    for app in apps:
        pid = _number(app.get("pid"))
        if pid is None:
            continue
        memory = _number(app.get("used_gpu_memory") or app.get("used_memory"))
        used_bytes = None if memory is None else int(memory * _MIB)
        by_uuid.setdefault(app.get("gpu_uuid") or "", []).append(_process(int(pid), used_bytes))
    return [
        GpuInfo(**{**gpu.__dict__, "processes": tuple(by_uuid.get(gpu.uuid, ()))}) for gpu in gpus
    ]


def _snapshot_nvml(processes: bool) -> list[GpuInfo]:
    import pynvml

    pynvml.nvmlInit()
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)

            def get(function: Callable[..., Any], *args: Any, handle: Any = handle) -> Any:
                try:
                    return function(handle, *args)
                except pynvml.NVMLError:
                    return None

            uuid = get(pynvml.nvmlDeviceGetUUID)
            name = get(pynvml.nvmlDeviceGetName)
            rates = get(pynvml.nvmlDeviceGetUtilizationRates)
            memory = get(pynvml.nvmlDeviceGetMemoryInfo)
            temperature = get(pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU)
            power = get(pynvml.nvmlDeviceGetPowerUsage)
            mig = get(pynvml.nvmlDeviceGetMigMode)
            procs: list[GpuProcess] = []
            if processes:
                for proc in get(pynvml.nvmlDeviceGetComputeRunningProcesses) or []:
                    used = getattr(proc, "usedGpuMemory", None)
                    if used is not None and used >= (1 << 63) - 1:  # NVML_VALUE_NOT_AVAILABLE
                        used = None
                    procs.append(_process(int(proc.pid), used))
            gpus.append(
                GpuInfo(
                    index=index,
                    uuid=uuid.decode() if isinstance(uuid, bytes) else (uuid or ""),
                    name=name.decode() if isinstance(name, bytes) else (name or ""),
                    utilization=None if rates is None else float(rates.gpu),
                    memory_used=None if memory is None else int(memory.used),
                    memory_total=None if memory is None else int(memory.total),
                    temperature=None if temperature is None else float(temperature),
                    power_draw=None if power is None else power / 1000.0,
                    mig_mode=None if mig is None else ("Enabled" if mig[0] else "Disabled"),
                    processes=tuple(procs),
                )
            )
        return gpus
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()


def _gpus(timeout: float, processes: bool, backend: str) -> tuple[list[GpuInfo], GpuProbe]:
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        msg = f"timeout must be a positive number of seconds, got {timeout!r}"
        raise ValueError(msg)
    if backend not in ("auto", "nvml", "nvidia-smi"):
        msg = f"backend must be 'auto', 'nvml' or 'nvidia-smi', got {backend!r}"
        raise ValueError(msg)
    reasons = []
    if backend in ("auto", "nvml"):
        try:
            gpus = _snapshot_nvml(processes)
        except ImportError:
            reasons.append("NVML: nvidia-ml-py is not installed (pip install 'devutils[gpu]')")
        except Exception as exc:
            reasons.append(f"NVML: {type(exc).__name__}: {exc}")
        else:
            if gpus:
                return gpus, GpuProbe("nvml", len(gpus), "")
            reasons.append("NVML: no GPU found")
    if backend in ("auto", "nvidia-smi"):
        try:
            gpus = _snapshot_smi(timeout, processes)
        except _SmiError as exc:
            reasons.append(str(exc))
        except OSError as exc:
            reasons.append(f"nvidia-smi could not be run: {exc}")
        else:
            if gpus:
                return gpus, GpuProbe("nvidia-smi", len(gpus), "")
            reasons.append("nvidia-smi reported no GPU")
    return [], GpuProbe(None, 0, "; ".join(reasons))


def _hold_nvml() -> Callable[[], None]:
    """Keep NVML initialized until the returned function is called (a no-op where NVML
    cannot start), for a loop of `gpu_snapshot` calls.

    NVML counts its initializations, so while it is held each snapshot's own
    ``nvmlInit``/``nvmlShutdown`` only moves the count, instead of setting the library up
    and tearing it down every sample (slow without persistence mode; gpustat made the
    same change for its loop mode, its issue #54).
    """
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # not installed, no driver, ...: each snapshot finds out itself
        return lambda: None

    def release() -> None:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()

    return release


def gpu_snapshot(
    *, timeout: float = 5.0, processes: bool = True, backend: str = "auto"
) -> list[GpuInfo]:
    """Return every NVIDIA GPU's state now, or ``[]`` when there is none.

    NVML first (``nvidia-ml-py``, imported lazily), else ``nvidia-smi`` parsed by header
    name. Never raises for "no GPU"; `gpu_probe` says why the list is empty. A hung
    ``nvidia-smi`` is killed after *timeout* seconds.

    Args:
        timeout: Seconds nvidia-smi may take (both of its calls together).
        processes: Also list the compute processes of each GPU.
        backend: ``"auto"``, ``"nvml"`` or ``"nvidia-smi"``.
    """
    return _gpus(timeout, processes, backend)[0]


def gpu_probe(*, timeout: float = 5.0, backend: str = "auto") -> GpuProbe:
    """Say which backend answers and, when no GPU is reported, why not.

    Examples:
        >>> probe = gpu_probe(timeout=2.0)
        >>> probe.gpus > 0 or bool(probe.reason)
        True
    """
    return _gpus(timeout, False, backend)[1]


# -- which dstat ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DstatInfo:
    """What a ``dstat``-like command on PATH really is.

    ``flavor`` is ``"dstat"`` (the original), ``"pcp-dstat"`` (Performance Co-Pilot's
    rewrite), ``"dool"`` (the original's maintained successor), ``"missing"`` or
    ``"unknown"``; ``evidence`` lists what the decision rests on.
    """

    command: str
    path: str | None
    real_path: str | None
    flavor: str
    version: str | None
    evidence: tuple[str, ...]


_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)*)")


def _flavor_from_file(real: str) -> tuple[str | None, str | None, list[str]]:
    evidence: list[str] = []
    base = os.path.basename(real)
    if base == "pcp-dstat" or "/pcp/" in real:
        evidence.append(f"resolves to {real}")
        return "pcp-dstat", None, evidence
    if base.startswith("dool"):
        evidence.append(f"resolves to {real}")
    try:
        with open(real, "rb") as handle:
            head = handle.read(256 * 1024)
    except OSError as exc:
        evidence.append(f"cannot read {real}: {exc.strerror}")
        return None, None, evidence
    if b"\0" in head[:4096]:
        evidence.append("a binary, not a Python script")
        return None, None, evidence
    text = head.decode("utf-8", "replace")
    first = text.splitlines()[0] if text else ""
    version_match = re.search(r"""^VERSION\s*=\s*['"]([^'"]+)['"]""", text, re.M)
    version = version_match.group(1) if version_match else None
    if first.startswith("#!") and "pmpython" in first:
        evidence.append(f"shebang {first!r}")
        return "pcp-dstat", version, evidence
    if re.search(r"^\s*(from|import)\s+(pcp|cpmapi)\b", text, re.M):
        evidence.append("imports the pcp Python modules")
        return "pcp-dstat", version, evidence
    if re.search(r"\bdool\b", text, re.I):
        evidence.append("the script names dool")
        return "dool", version, evidence
    if re.search(r"\bDstat\b|\bdstat_\w+", text):
        evidence.append("the script has the original dstat's markers")
        return "dstat", version, evidence
    return None, version, evidence


def _flavor_from_version(path: str, timeout: float) -> tuple[str | None, str | None, str]:
    import subprocess

    try:
        completed = subprocess.run(
            [path, "--version"],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, None, f"--version timed out after {timeout:g} s"
    except OSError as exc:
        return None, None, f"--version could not run: {exc.strerror}"
    out = (completed.stdout + completed.stderr).decode("utf-8", "replace")
    first = out.strip().splitlines()[0] if out.strip() else ""
    if completed.returncode != 0 and "Traceback" in out:
        return None, None, f"--version crashed (exit status {completed.returncode})"
    match = _VERSION.search(first)
    version = match.group(1) if match else None
    lowered = out.lower()
    if "pcp" in lowered:
        return "pcp-dstat", version, f"--version says {first!r}"
    if first.lower().startswith("dool"):
        return "dool", version, f"--version says {first!r}"
    if first.lower().startswith("dstat"):
        return "dstat", version, f"--version says {first!r}"
    return None, version, f"--version says {first!r}"


def which_dstat(*, timeout: float = 5.0) -> list[DstatInfo]:
    """Tell what ``dstat``, ``dool`` and ``pcp-dstat`` on PATH really are.

    Decides from the file first (a symlink to ``pcp-dstat``, a ``pmpython`` shebang, the
    script's own markers), then from ``--version`` (with a *timeout*), so pcp-dstat is
    recognized even when its ``--version`` crashes.

    Examples:
        >>> [info.command for info in which_dstat()]
        ['dstat', 'dool', 'pcp-dstat']
    """
    import shutil

    results = []
    for command in ("dstat", "dool", "pcp-dstat"):
        path = shutil.which(command)
        if path is None:
            results.append(DstatInfo(command, None, None, "missing", None, ("not on PATH",)))
            continue
        real = os.path.realpath(path)
        flavor, version, evidence = _flavor_from_file(real)
        by_version, reported, note = _flavor_from_version(path, timeout)
        evidence.append(note)
        if flavor is None:
            flavor = by_version
        version = reported or version
        results.append(
            DstatInfo(command, path, real, flavor or "unknown", version, tuple(evidence))
        )
    return results
