"""GPU snapshots: every NVIDIA GPU's utilization, memory, temperature, power and processes.

`gpu_snapshot` asks NVML (the ``[gpu]`` extra, ``nvidia-ml-py``) or else ``nvidia-smi``
(parsed by header name, a hung one killed at the timeout), and returns ``[]`` when there
is no GPU; `gpu_probe` says why. `nvml_session` keeps NVML started across a loop of
snapshots.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GpuInfo",
    "GpuProbe",
    "GpuProcess",
    "gpu_probe",
    "gpu_snapshot",
    "nvml_session",
    "parse_nvidia_smi_csv",
]

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
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        msg = f"timeout must be a number of seconds, got {type(timeout).__name__} {timeout!r}"
        raise TypeError(msg)
    if not 0 < timeout < float("inf"):
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


@contextlib.contextmanager
def nvml_session() -> Iterator[None]:
    """Keep NVML started for the block, for a loop of `gpu_snapshot` calls (a no-op
    where NVML cannot start: each snapshot then finds out for itself).

    NVML counts its initializations, so inside the block each snapshot's own start and
    shutdown only move the count, instead of setting the library up and tearing it down
    every time (slow without persistence mode; gpustat made the same change for its
    loop mode, its issue #54).

    Examples:
        >>> with nvml_session():
        ...     gpus = [gpu_snapshot(processes=False) for _ in range(2)]
    """
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - not installed, no driver, ...: nothing to hold
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()


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
