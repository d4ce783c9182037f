"""NVIDIA GPUs: NVML (the ``[gpu]`` extra, ``nvidia-ml-py``) and ``nvidia-smi``.

`snapshot_nvml` reads each GPU through NVML; `snapshot_smi` runs ``nvidia-smi
--query-gpu`` (and ``--query-compute-apps`` for the processes) and reads its CSV with
`parse_nvidia_smi_csv`; `nvml_session` keeps NVML started across a loop of snapshots.
`devutils.gpu` asks them, in that order, within its timeout.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from devutils.gpuinfo import (
    MIB,
    GpuInfo,
    GpuProcess,
    NoGpuFound,
    check_flag,
    check_text,
    gpu_process,
    run_tool,
    within,
)
from devutils.limits import check_seconds

__all__ = ["nvml_session", "parse_nvidia_smi_csv", "snapshot_nvml", "snapshot_smi"]

_QUERY_GPU = (
    "index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,"
    "power.draw,mig.mode.current"
)
_QUERY_APPS = "gpu_uuid,pid,used_gpu_memory"
"""(No process_name: nvidia-smi does not quote its CSV, so a name with a comma would
break every row; names come from psutil, by pid.)"""
_NVML_NOT_AVAILABLE = (1 << 63) - 1
_SMI_VERSION_MISMATCH = 18


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
        raise NoGpuFound(msg)
    return float(match.group(1))


def parse_nvidia_smi_csv(text: str) -> list[dict[str, str | None]]:
    """Parse ``nvidia-smi --query-...=... --format=csv[,nounits]`` output by header name.

    Header names lose their ``[unit]``; values keep their text, with ``[N/A]``,
    ``[Not Supported]`` and any other bracketed value turned into None.

    Raises:
        TypeError: If *text* is not a str.
        ValueError: If the text is not such a CSV (an error message, garbage, rows whose
            field count differs from the header's).

    Examples:
        >>> parse_nvidia_smi_csv("index, memory.used [MiB], fan.speed [%]\\n0, 1024 MiB, [N/A]\\n")
        [{'index': '0', 'memory.used': '1024 MiB', 'fan.speed': None}]
    """
    import csv
    import io

    check_text(text)
    try:  # (a BOM, as a file saved on Windows may begin)
        reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")), skipinitialspace=True)
        rows = [row for row in reader if row]
    except csv.Error as exc:  # a stray carriage return, a field past csv's limit
        msg = f"not a CSV: {exc}"
        raise ValueError(msg) from None
    if not rows:
        msg = "empty output"
        raise ValueError(msg)
    header = [re.sub(r"\s*\[[^\]]*\]$", "", name.strip()) for name in rows[0]]
    if not all(re.fullmatch(r"[a-z_][a-z0-9_.]*", h, re.I) for h in header):
        msg = f"not an nvidia-smi CSV header: {rows[0][:3]!r}"
        raise ValueError(msg)
    if len(set(header)) < len(header):
        msg = f"a name given twice in the header: {rows[0]!r:.200}"
        raise ValueError(msg)
    records = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            msg = f"line {number} has {len(row)} fields, the header {len(header)}"
            raise ValueError(msg)
        records.append({name: _value(cell) for name, cell in zip(header, row, strict=True)})
    return records


def snapshot_smi(timeout: float, processes: bool) -> list[GpuInfo]:
    """Every NVIDIA GPU as ``nvidia-smi --query-gpu`` reports it, within *timeout*
    seconds, with each one's processes from ``--query-compute-apps`` (where *processes*;
    a process query that fails lists none, and the GPUs are still reported).

    Raises:
        NoGpuFound: If ``nvidia-smi`` is not on PATH, fails, times out (it is killed
            with its process group) or prints something other than its CSV.
        OSError: If it cannot be started.
        TypeError: If *timeout* is not a number, or *processes* not a bool.
        ValueError: If *timeout* is not above 0 and at most a day.

    Examples:
        Where ``nvidia-smi`` is not on PATH (as on the machines the tests run on):

        >>> import os
        >>> os.environ["PATH"], path = "", os.environ["PATH"]
        >>> try:
        ...     snapshot_smi(5.0, processes=False)
        ... finally:
        ...     os.environ["PATH"] = path
        Traceback (most recent call last):
        ...
        devutils.gpuinfo.NoGpuFound: nvidia-smi not found on PATH
    """
    import shutil

    timeout = check_seconds("timeout", timeout)
    check_flag("processes", processes)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        msg = "nvidia-smi not found on PATH"
        raise NoGpuFound(msg)
    deadline = time.monotonic() + timeout
    query = [smi, f"--query-gpu={_QUERY_GPU}", "--format=csv,nounits"]
    text = run_tool("nvidia-smi", query, timeout, hint=_smi_hint)
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
                    memory_used=None if used is None else int(used * MIB),
                    memory_total=None if total is None else int(total * MIB),
                    temperature=_number(row.get("temperature.gpu")),
                    power_draw=_number(row.get("power.draw")),
                    mig_mode=row.get("mig.mode.current"),
                    backend="nvidia-smi",
                )
            )
    except (ValueError, OverflowError, NoGpuFound) as exc:  # (OverflowError: 1e400 MiB)
        msg = f"nvidia-smi printed output that is not the expected CSV: {exc}"
        raise NoGpuFound(msg) from exc
    if not processes or not gpus:
        return gpus
    remaining = max(0.1, deadline - time.monotonic())
    try:  # the GPUs are read: a process query that fails (as NVML's may) lists none
        by_uuid = _smi_processes(smi, remaining)
    except (NoGpuFound, ValueError, OverflowError, OSError):  # (OverflowError: a 1e400 pid)
        return gpus
    return [replace(gpu, processes=tuple(by_uuid.get(gpu.uuid, ()))) for gpu in gpus]


def _smi_hint(status: int, output: str) -> str:
    """What a failed nvidia-smi's reason adds: the likely cause, where it is known."""
    if status == _SMI_VERSION_MISMATCH or "mismatch" in output:
        return " (driver/library version mismatch: reboot or reload the driver)"
    if "couldn't communicate with the NVIDIA driver" in output:
        return " (no NVIDIA driver loaded)"
    return ""


def _smi_processes(smi: str, timeout: float) -> dict[str, list[GpuProcess]]:
    """Each GPU's processes (uuid -> processes), from ``nvidia-smi --query-compute-apps``."""
    query = [smi, f"--query-compute-apps={_QUERY_APPS}", "--format=csv,nounits"]
    by_uuid: dict[str, list[GpuProcess]] = {}
    for app in parse_nvidia_smi_csv(run_tool("nvidia-smi", query, timeout, hint=_smi_hint)):
        pid = _number(app.get("pid"))
        if pid is None:
            continue
        memory = _number(app.get("used_gpu_memory") or app.get("used_memory"))
        used_bytes = None if memory is None else int(memory * MIB)
        by_uuid.setdefault(app.get("gpu_uuid") or "", []).append(gpu_process(int(pid), used_bytes))
    return by_uuid


def snapshot_nvml(processes: bool) -> list[GpuInfo]:
    """Every NVIDIA GPU NVML can read (a GPU it has lost is left out), with each one's
    compute processes where *processes*. A figure NVML cannot give is None.

    NVML calls cannot be interrupted: `devutils.gpu` runs this in a thread it can give
    up on (`devutils.gpuinfo.within`).

    Raises:
        ImportError: If ``nvidia-ml-py`` is not installed (the ``[gpu]`` extra).
        pynvml.NVMLError: If NVML cannot start (no driver, no GPU).
        TypeError: If *processes* is not a bool.

    Examples:
        On a machine with one H200 (not run by the tests, which have no GPU):

        >>> [(gpu.name, gpu.backend) for gpu in snapshot_nvml(processes=False)]  # doctest: +SKIP
        [('NVIDIA H200', 'nvml')]
    """
    check_flag("processes", processes)
    import pynvml

    pynvml.nvmlInit()
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            try:
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            except pynvml.NVMLError:  # a GPU lost ("Unable to determine the device handle")
                continue  # (the others are still read)

            def get(function: Callable[..., Any], *args: Any, handle: Any = handle) -> Any:
                try:
                    return function(handle, *args)
                except pynvml.NVMLError:
                    return None

            uuid = get(pynvml.nvmlDeviceGetUUID)
            name = get(pynvml.nvmlDeviceGetName)
            rates = get(pynvml.nvmlDeviceGetUtilizationRates)
            # v2's used, as nvidia-smi's memory.used, leaves out what the driver reserves;
            # v1's counts it (a driver without v2: the only figure there is)
            memory = None
            if (version := getattr(pynvml, "nvmlMemory_v2", None)) is not None:
                memory = get(pynvml.nvmlDeviceGetMemoryInfo, version)
            if memory is None:
                memory = get(pynvml.nvmlDeviceGetMemoryInfo)
            temperature = get(pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU)
            power = get(pynvml.nvmlDeviceGetPowerUsage)
            mig = get(pynvml.nvmlDeviceGetMigMode)
            procs: list[GpuProcess] = []
            if processes:
                for proc in get(pynvml.nvmlDeviceGetComputeRunningProcesses) or []:
                    used = getattr(proc, "usedGpuMemory", None)
                    if used is not None and used >= _NVML_NOT_AVAILABLE:
                        used = None
                    procs.append(gpu_process(int(proc.pid), used))
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
                    backend="nvml",
                )
            )
        return gpus
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()


@contextlib.contextmanager
def nvml_session(*, timeout: float = 5.0) -> Iterator[None]:
    """Keep NVML started for the block, for a loop of `devutils.gpu.gpu_snapshot` calls (a no-op
    where NVML cannot start, or does not within *timeout* seconds: each snapshot then
    finds out for itself, within its own timeout).

    NVML counts its initializations, so inside the block each snapshot's own start and
    shutdown only move the count, instead of setting the library up and tearing it down
    every time (slow without persistence mode; gpustat made the same change for its
    loop mode, its issue #54).

    Raises:
        TypeError: If *timeout* is not a number.
        ValueError: If *timeout* is not positive, or more than a day.

    Examples:
        On every machine (without NVML the block runs as it would without the session):

        >>> from devutils.gpu import gpu_snapshot
        >>> with nvml_session():
        ...     samples = [gpu_snapshot(processes=False, timeout=2.0) for _ in range(2)]
        >>> len(samples[0]) == len(samples[1])  # the same GPUs both times (none here)
        True

        On a machine with one H200 (not run by the tests, which have no GPU):

        >>> [[gpu.backend for gpu in gpus] for gpus in samples]  # doctest: +SKIP
        [['nvml'], ['nvml']]
    """
    seconds = check_seconds("timeout", timeout)
    state = {"given_up": False, "started": False}
    lock = threading.Lock()

    def start() -> Any:
        import pynvml

        pynvml.nvmlInit()
        with lock:  # a start that came too late is undone, so NVML's count stays true
            if state["given_up"]:
                pynvml.nvmlShutdown()
            state["started"] = True
        return pynvml

    try:
        pynvml = within(seconds, start, "NVML")
    except Exception:
        with lock:
            state["given_up"] = True
            if state["started"]:  # (it came between the timeout and here)
                with contextlib.suppress(Exception):
                    sys.modules["pynvml"].nvmlShutdown()
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()
