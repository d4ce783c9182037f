"""GPU snapshots: utilization, memory, temperature, power and processes, any vendor.

`gpu_snapshot` asks each backend that applies here, in this order: NVIDIA through NVML
(the ``[gpu]`` extra, ``nvidia-ml-py``) or else ``nvidia-smi``; AMD through the amdgpu
driver's sysfs files (Linux); Apple Silicon through the I/O Registry (``ioreg``, macOS,
no sudo). It returns ``[]`` when there is no GPU; `gpu_probe` says why, backend by
backend. Every backend has a time limit: a hung ``nvidia-smi`` or ``ioreg`` is killed
with its process group, a hung NVML or sysfs read is given up on.

Every `GpuInfo` has the same fields whatever the vendor; a figure a vendor does not
report is None. Apple's GPU shares the machine's memory: ``unified_memory`` is True and
``memory_total`` None (no invented VRAM size).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple, TypeVar

from devutils.limits import check_seconds

__all__ = [
    "BACKENDS",
    "GIB",
    "MIB",
    "PROCFS_PATH",
    "SYSFS_PATH",
    "GpuInfo",
    "GpuProbe",
    "GpuProcess",
    "gpu_probe",
    "gpu_snapshot",
    "nvml_session",
    "parse_ioreg",
    "parse_nvidia_smi_csv",
]

SYSFS_PATH = "/sys"
"""Where the amd backend reads sysfs (as psutil's ``PROCFS_PATH``): set it to a tree of
captured files to read those instead."""
PROCFS_PATH = "/proc"
"""Where the amd backend reads each process's DRM file descriptors (``PID/fdinfo``)."""

MIB: Final = 1 << 20
"""A mebibyte in bytes: nvidia-smi and NVML's process figures count memory in MiB."""
GIB: Final = 1 << 30
"""A gibibyte in bytes."""
_KIB = 1 << 10
_QUERY_GPU = (
    "index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,"
    "power.draw,mig.mode.current"
)
_QUERY_APPS = "gpu_uuid,pid,process_name,used_gpu_memory"
_NVML_NOT_AVAILABLE = (1 << 63) - 1
_SMI_VERSION_MISMATCH = 18
_T = TypeVar("_T")
_AMD_VENDOR = "0x1002"
_VENDORS = {"0x1002": "amd", "0x10de": "nvidia", "0x8086": "intel", "0x106b": "apple"}


@dataclass(frozen=True)
class GpuProcess:
    """A process using a GPU. ``name`` is None when the pid is not ``visible`` in this
    PID namespace (a container, say); ``used_memory`` None when not reported (Windows
    WDDM, Apple)."""

    pid: int
    used_memory: int | None
    name: str | None
    visible: bool


@dataclass(frozen=True)
class GpuInfo:
    """One GPU now. None means the driver did not report that value (``[N/A]``).

    ``index`` is the GPU's number on its vendor's side (CUDA's, the DRM card's);
    ``vendor`` is ``"nvidia"``, ``"amd"`` or ``"apple"`` (``"intel"`` or ``"other"`` for
    the other GPUs an Intel Mac's I/O Registry lists); ``backend`` the backend that read
    it; ``unified_memory`` True where the GPU uses the machine's memory (Apple, an Intel
    iGPU), so ``memory_used`` is what it holds of it and ``memory_total`` None.
    ``processes`` is empty where the driver lists none, also where asking for them failed
    (NVML's call, or nvidia-smi's second query timing out): the GPU is still reported.
    """

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
    vendor: str = "nvidia"
    backend: str = ""
    unified_memory: bool = False


@dataclass(frozen=True)
class GpuProbe:
    """How `gpu_snapshot` got its answer.

    ``backend`` is the first backend that found a GPU (None if none did), ``gpus`` how
    many were found, ``reason`` why none were (every backend's reason, joined),
    ``reasons`` each backend's (backend -> why it found nothing; "" if it found some),
    and ``snapshot`` the GPUs themselves.
    """

    backend: str | None
    gpus: int
    reason: str
    reasons: Mapping[str, str] = field(default_factory=dict)
    snapshot: tuple[GpuInfo, ...] = ()


class _NotFound(Exception):
    """A backend found no GPU, and says why."""


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
        raise _NotFound(msg)
    return float(match.group(1))


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        msg = f"text must be a str, got {type(text).__name__} {text!r:.40}"
        raise TypeError(msg)


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

    _check_text(text)
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


def _defer_handlers(deferred: list[int]) -> dict[int, Callable[[int, Any], Any]]:
    """Replace Python's handlers of SIGINT, SIGTERM and SIGHUP by one that notes the
    signal in *deferred*; return the handlers replaced (none outside the main thread,
    where no handler runs)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, Callable[[int, Any], Any]] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if not hasattr(signal, name):  # no SIGHUP on Windows
            continue
        signum = int(getattr(signal, name))
        handler = signal.getsignal(signum)
        if callable(handler):  # a Python handler: KeyboardInterrupt, the CLI's Terminated
            replaced[signum] = handler
            signal.signal(signum, lambda number, _frame: deferred.append(number))
    return replaced


def _run_tool(tool: str, command: list[str], timeout: float) -> str:
    """Run *command* in its own process group; kill the group at the timeout, or when
    this process is interrupted (Ctrl-C), so that no hung tool is left running."""
    import signal
    import subprocess

    # A Ctrl-C inside Popen, after the tool started but before Popen returned, would
    # leave the tool running: Python's handlers wait until the try below can kill it.
    deferred: list[int] = []
    handlers = _defer_handlers(deferred)
    try:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    try:
        for signum in deferred:  # a Ctrl-C that came meanwhile is raised here
            handlers[signum](signum, None)
        out, _ = process.communicate(timeout=timeout)
    except BaseException as exc:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=1.0)
        if isinstance(exc, subprocess.TimeoutExpired):
            msg = f"{tool} timed out after {_seconds(timeout)} s and was killed"
            raise _NotFound(msg) from None
        raise
    text = out.decode("utf-8", "replace")
    if process.returncode < 0:
        msg = f"{tool} was killed by signal {-process.returncode}"
        raise _NotFound(msg)
    if process.returncode != 0:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        hint = ""
        if process.returncode == _SMI_VERSION_MISMATCH or "mismatch" in text:
            hint = " (driver/library version mismatch: reboot or reload the driver)"
        elif "couldn't communicate with the NVIDIA driver" in text:
            hint = " (no NVIDIA driver loaded)"
        msg = f"{tool} failed with exit status {process.returncode}: {first}{hint}"
        raise _NotFound(msg)
    return text


def _gpu_process(pid: int, used: int | None) -> GpuProcess:
    try:
        import psutil

        name: str | None = psutil.Process(pid).name()
        visible = True
    except Exception:
        name, visible = None, False
    return GpuProcess(pid, used, name, visible)


# -- NVIDIA: nvidia-smi and NVML -----------------------------------------------------------


def _snapshot_smi(timeout: float, processes: bool) -> list[GpuInfo]:
    import shutil

    smi = shutil.which("nvidia-smi")
    if smi is None:
        msg = "nvidia-smi not found on PATH"
        raise _NotFound(msg)
    deadline = time.monotonic() + timeout
    text = _run_tool(
        "nvidia-smi", [smi, f"--query-gpu={_QUERY_GPU}", "--format=csv,nounits"], timeout
    )
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
    except (ValueError, _NotFound) as exc:
        msg = f"nvidia-smi printed output that is not the expected CSV: {exc}"
        raise _NotFound(msg) from exc
    if not processes or not gpus:
        return gpus
    remaining = max(0.1, deadline - time.monotonic())
    try:  # the GPUs are read: a process query that fails (as NVML's may) lists none
        by_uuid = _smi_processes(smi, remaining)
    except (_NotFound, ValueError, OSError):
        return gpus
    return [replace(gpu, processes=tuple(by_uuid.get(gpu.uuid, ()))) for gpu in gpus]


def _smi_processes(smi: str, timeout: float) -> dict[str, list[GpuProcess]]:
    """Each GPU's processes (uuid -> processes), from ``nvidia-smi --query-compute-apps``."""
    query = [smi, f"--query-compute-apps={_QUERY_APPS}", "--format=csv,nounits"]
    by_uuid: dict[str, list[GpuProcess]] = {}
    for app in parse_nvidia_smi_csv(_run_tool("nvidia-smi", query, timeout)):
        pid = _number(app.get("pid"))
        if pid is None:
            continue
        memory = _number(app.get("used_gpu_memory") or app.get("used_memory"))
        used_bytes = None if memory is None else int(memory * MIB)
        by_uuid.setdefault(app.get("gpu_uuid") or "", []).append(_gpu_process(int(pid), used_bytes))
    return by_uuid


def _snapshot_nvml(processes: bool) -> list[GpuInfo]:
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
                    procs.append(_gpu_process(int(proc.pid), used))
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


# -- AMD: the amdgpu driver's sysfs files -------------------------------------------------


def _read(path: str) -> str | None:
    """A sysfs file's text, stripped; None if it is missing or the driver cannot say
    (some cards answer gpu_busy_percent with EOPNOTSUPP)."""
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _read_int(path: str) -> int | None:
    text = _read(path)
    try:
        return None if text is None else int(text, 0)
    except ValueError:
        return None


def _snapshot_amd(processes: bool, deadline: float) -> list[GpuInfo]:
    """Every DRM card of AMD's, read from ``SYSFS_PATH/class/drm/cardN/device``."""
    drm = os.path.join(SYSFS_PATH, "class", "drm")
    try:
        cards = sorted(
            (int(name[4:]), name) for name in os.listdir(drm) if re.fullmatch(r"card\d+", name)
        )
    except OSError as exc:
        msg = f"no DRM devices ({drm}: {exc.strerror})"
        raise _NotFound(msg) from None
    gpus, others = [], []
    for number, name in cards:
        device = os.path.join(drm, name, "device")
        vendor = _read(os.path.join(device, "vendor"))
        if vendor != _AMD_VENDOR:
            label = _VENDORS.get(vendor or "", "unknown")
            others.append(f"{name} is {label} ({vendor}:{_read(os.path.join(device, 'device'))})")
            continue
        gpus.append(_amd_card(number, device))
    if not gpus:
        found = "; ".join(others) or "none"
        msg = f"no AMD GPU among the DRM cards (found: {found})"
        raise _NotFound(msg)
    if processes:
        by_slot = _amd_processes(deadline)
        gpus = [replace(gpu, processes=tuple(by_slot.get(gpu.uuid, ()))) for gpu in gpus]
    return gpus


def _amd_card(number: int, device: str) -> GpuInfo:
    """One AMD card's figures (None for each file it does not have)."""
    hwmon = os.path.join(device, "hwmon")
    sensors = sorted(os.listdir(hwmon)) if os.path.isdir(hwmon) else []
    sensor = os.path.join(hwmon, sensors[0]) if sensors else ""
    temperature = _read_int(os.path.join(sensor, "temp1_input")) if sensor else None
    power = None
    for power_file in ("power1_average", "power1_input"):
        if power is None and sensor:
            power = _read_int(os.path.join(sensor, power_file))
    slot = ""
    for line in (_read(os.path.join(device, "uevent")) or "").splitlines():
        if line.startswith("PCI_SLOT_NAME="):
            slot = line.partition("=")[2]
    pci_id = f"{_read(os.path.join(device, 'vendor'))}:{_read(os.path.join(device, 'device'))}"
    name = _read(os.path.join(device, "product_name")) or f"AMD GPU [{pci_id.replace('0x', '')}]"
    busy = _read_int(os.path.join(device, "gpu_busy_percent"))
    return GpuInfo(
        index=number,
        uuid=slot or f"card{number}",
        name=name,
        utilization=None if busy is None else float(busy),
        memory_used=_read_int(os.path.join(device, "mem_info_vram_used")),
        memory_total=_read_int(os.path.join(device, "mem_info_vram_total")),
        temperature=None if temperature is None else temperature / 1000.0,  # millidegrees
        power_draw=None if power is None else power / 1e6,  # microwatts
        mig_mode=None,
        vendor="amd",
        backend="amd",
    )


def _amd_processes(deadline: float) -> dict[str, list[GpuProcess]]:
    """Each process's memory on each card (PCI slot -> processes), from the amdgpu
    clients in ``PROCFS_PATH/PID/fdinfo``: their VRAM (``drm-memory-vram``, as nvtop
    counts it, so that it adds up to the card's own figure; GTT is system memory), each
    client once however many descriptors it has."""
    try:
        pids = [name for name in os.listdir(PROCFS_PATH) if name.isdigit()]
    except OSError:
        return {}
    used: dict[tuple[str, int], int] = {}
    seen: set[tuple[str, str]] = set()
    for pid in pids:
        if time.monotonic() > deadline:
            break
        folder = os.path.join(PROCFS_PATH, pid, "fdinfo")
        try:
            descriptors = os.listdir(folder)
        except OSError:  # gone, or not ours to read
            continue
        for descriptor in descriptors:
            client = _drm_client(os.path.join(folder, descriptor))
            if client is None or (client[0], client[1]) in seen:
                continue
            slot, client_id, memory = client
            seen.add((slot, client_id))
            used[slot, int(pid)] = used.get((slot, int(pid)), 0) + memory
    by_slot: dict[str, list[GpuProcess]] = {}
    for (slot, process), memory in sorted(used.items(), key=lambda item: -item[1]):
        by_slot.setdefault(slot, []).append(_gpu_process(process, memory))
    return by_slot


def _drm_client(path: str) -> tuple[str, str, int] | None:
    """An amdgpu client's (PCI slot, client id, bytes of VRAM), or None."""
    keys = {}
    for line in (_read(path) or "").splitlines():
        key, _, value = line.partition(":")
        keys[key.strip()] = value.strip()
    # Linux 5.19 on: drm-driver, drm-pdev, drm-client-id, drm-memory-vram (or the generic
    # drm-resident-vram). Before, amdgpu alone wrote fdinfo: pdev and "vram mem" (as nvtop
    # reads both), and no client id: its pasid (the client's GPU address space) names it.
    pdev = keys.get("drm-pdev") if keys.get("drm-driver") == "amdgpu" else None
    if pdev is None and "drm-driver" not in keys and "vram mem" in keys:
        pdev = keys.get("pdev")
    if pdev is None:
        return None
    vram = keys.get("drm-memory-vram") or keys.get("drm-resident-vram") or keys.get("vram mem")
    number, _, unit = (vram or "0").partition(" ")
    scale = {"KiB": _KIB, "kB": _KIB, "MiB": MIB, "GiB": GIB}.get(unit.strip(), 1)
    memory = int(number) * scale if number.isdigit() else 0  # bare: bytes
    pasid = f"pasid {keys['pasid']}" if keys.get("pasid") else None
    return pdev, keys.get("drm-client-id") or pasid or path, memory


# -- Apple Silicon: the I/O Registry ---------------------------------------------------------

_IOREG_ENTRY = re.compile(r"^([ |]*)\+-o (\S+)", re.M)
_IOREG_STATISTICS = re.compile(r'"PerformanceStatistics" = \{')
# One `"key"=value` of an ioreg dictionary, the number (if it is one) in group 2. A value
# is read whole (a quoted string, a list, a dictionary one level deep, a bare word), so
# that a `,` or `}` inside it is never taken for the dictionary's own.
_IOREG_PAIR = re.compile(
    r'"([^"]*)"=(?:(-?\d+)(?=[,}])|"[^"]*"|\((?:[^()"]|"[^"]*")*\)'
    r'|\{(?:[^{}"]|"[^"]*")*\}|[^,}]*)'
)


def parse_ioreg(text: str) -> list[dict[str, Any]]:
    """The accelerators in ``ioreg -r -d 2 -w 0 -c IOAccelerator`` output: each one's
    class, ``model``, ``PerformanceStatistics`` numbers and the pids of its clients.

    An accelerator is an entry at the listing's top level (``+-o`` at its least indent);
    its clients are the entries below it that name their creator. An accelerator without
    ``PerformanceStatistics`` is left out, and so are its clients.

    Raises:
        TypeError: If *text* is not a str.
        ValueError: If *text* lists no accelerator with performance statistics.

    Examples:
        >>> found = parse_ioreg('+-o AGXAcceleratorG13X  <class AGXAcceleratorG13X>\\n'
        ...                     '  "PerformanceStatistics" = {"Device Utilization %"=7}\\n')
        >>> found[0]["class"], found[0]["statistics"]
        ('AGXAcceleratorG13X', {'Device Utilization %': 7})
    """
    _check_text(text)
    starts = list(_IOREG_ENTRY.finditer(text))
    top = min((len(match.group(1)) for match in starts), default=0)
    accelerators: list[dict[str, Any]] = []
    owner: dict[str, Any] | None = None  # the accelerator the entries below belong to
    for index, match in enumerate(starts):
        body = text[match.end() : starts[index + 1].start() if index + 1 < len(starts) else None]
        if len(match.group(1)) > top:  # below an accelerator: one of its clients, or not
            creator = re.search(r'"IOUserClientCreator" = "pid (\d+), ([^"]*)"', body)
            if creator and owner is not None:
                owner["clients"].append((int(creator.group(1)), creator.group(2)))
            continue
        statistics = _ioreg_statistics(body)
        owner = None
        if statistics is None:
            continue
        model = re.search(r'"model" = "([^"]*)"', body)
        owner = {
            "class": match.group(2),
            "model": model.group(1) if model else None,
            "statistics": statistics,
            "clients": [],
        }
        accelerators.append(owner)
    if not accelerators:
        msg = "no accelerator with PerformanceStatistics in the ioreg output"
        raise ValueError(msg)
    return accelerators


def _ioreg_statistics(body: str) -> dict[str, int] | None:
    """The numbers of an entry's ``PerformanceStatistics`` (None where it has none)."""
    found = _IOREG_STATISTICS.search(body)
    if found is None:
        return None
    numbers: dict[str, int] = {}
    position = found.end()
    while (pair := _IOREG_PAIR.match(body, position)) is not None:
        if pair.group(2) is not None:
            numbers[pair.group(1)] = int(pair.group(2))
        position = pair.end()
        if body.startswith(",", position):
            position += 1
    return numbers


def _snapshot_apple(processes: bool, timeout: float) -> list[GpuInfo]:
    """The Apple GPU's utilization and memory in use, from the I/O Registry (no sudo),
    as Activity Monitor, asitop and macmon read them; on an Intel Mac, what the registry
    says of its Intel, AMD or NVIDIA GPUs."""
    import shutil

    ioreg = shutil.which("ioreg")
    if ioreg is None:
        msg = "ioreg not found on PATH (not macOS)"
        raise _NotFound(msg)
    text = _run_tool("ioreg", [ioreg, "-r", "-d", "2", "-w", "0", "-c", "IOAccelerator"], timeout)
    try:
        accelerators = parse_ioreg(text)
    except ValueError as exc:
        msg = f"ioreg: {exc}"
        raise _NotFound(msg) from exc
    gpus = []
    for index, accelerator in enumerate(accelerators):
        numbers = accelerator["statistics"]
        busy = numbers.get("Device Utilization %")
        clients = [] if not processes else sorted(set(accelerator["clients"]))
        vendor = _mac_vendor(accelerator["class"])
        # Apple's GPU and an Intel Mac's iGPU use the machine's memory; an Intel Mac's
        # AMD or NVIDIA card has its own, which its driver reports as inUseVidMemoryBytes.
        unified = vendor in ("apple", "intel")
        memory = "In use system memory" if unified else "inUseVidMemoryBytes"
        temperature, power = numbers.get("Temperature(C)"), numbers.get("Total Power(W)")
        gpus.append(
            GpuInfo(
                index=index,
                uuid=accelerator["class"],
                name=accelerator["model"] or accelerator["class"],
                utilization=None if busy is None else float(min(busy, 100)),
                memory_used=numbers.get(memory),
                memory_total=None,
                temperature=None if temperature is None else float(temperature),
                power_draw=None if power is None else float(power),
                mig_mode=None,
                processes=tuple(GpuProcess(pid, None, name, True) for pid, name in clients),
                vendor=vendor,
                backend="apple",
                unified_memory=unified,
            )
        )
    return gpus


def _mac_vendor(driver_class: str) -> str:
    """The vendor of a macOS accelerator, from its driver's class name."""
    for prefix, vendor in (("AGX", "apple"), ("Intel", "intel"), ("AMD", "amd")):
        if driver_class.startswith(prefix):
            return vendor
    if driver_class.startswith(("nv", "NV", "GeForce")):
        return "nvidia"
    return "other"


# -- asking the backends ---------------------------------------------------------------------


def _timeout_and_backends(timeout: object, backends: object) -> tuple[float, tuple[str, ...]]:
    seconds = check_seconds("timeout", timeout)
    if backends is None:
        chosen = [
            name for name, backend in _BACKENDS.items() if sys.platform.startswith(backend.platform)
        ]
        return seconds, tuple(chosen)
    if (
        isinstance(backends, str | bytes)
        or not isinstance(backends, Sequence)
        or not all(isinstance(name, str) for name in backends)
    ):
        msg = f"backends must be a sequence of backend names, got {backends!r}"
        raise TypeError(msg)
    if not backends:
        msg = f"backends must name one backend at least: {', '.join(BACKENDS)}"
        raise ValueError(msg)
    unknown = [name for name in backends if name not in BACKENDS]
    if unknown:
        msg = f"unknown backend {unknown[0]!r}: the backends are {', '.join(BACKENDS)}"
        raise ValueError(msg)
    return seconds, tuple(dict.fromkeys(backends))


def _within(seconds: float, function: Callable[[], _T], what: str) -> _T:
    """*function*'s answer, or `_NotFound` if it takes longer than *seconds* (it runs in
    a thread of its own, left to finish: an NVML call or a sysfs read cannot be killed)."""
    result: list[_T] = []
    error: list[BaseException] = []

    def call() -> None:
        try:
            result.append(function())
        except BaseException as exc:
            error.append(exc)

    worker = threading.Thread(target=call, daemon=True, name=f"devutils {what}")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        msg = f"{what} did not answer within {_seconds(seconds)} s"
        raise _NotFound(msg)
    if error:
        raise error[0]
    return result[0]


def _seconds(value: float) -> str:
    """Seconds as a message shows them: 0.3, 12.5, 150, 86400."""
    return f"{value:.3g}" if value < 1000 else f"{value:.0f}"  # noqa: PLR2004 - past 3 digits


def _left(deadline: float) -> float:
    """The seconds a backend has left (a tenth of one at least)."""
    return max(deadline - time.monotonic(), 0.1)


def _ask_nvml(processes: bool, deadline: float) -> list[GpuInfo]:
    return _within(_left(deadline), lambda: _snapshot_nvml(processes), "NVML")


def _ask_smi(processes: bool, deadline: float) -> list[GpuInfo]:
    return _snapshot_smi(_left(deadline), processes)


def _ask_amd(processes: bool, deadline: float) -> list[GpuInfo]:
    return _within(_left(deadline), lambda: _snapshot_amd(processes, deadline), "sysfs")


def _ask_apple(processes: bool, deadline: float) -> list[GpuInfo]:
    return _snapshot_apple(processes, _left(deadline))


class _Backend(NamedTuple):
    """How `_probe` asks one backend, and how it words the answer."""

    ask: Callable[[bool, float], list[GpuInfo]]
    """``ask(processes, deadline)``: the GPUs; raises `_NotFound` (or ImportError, for
    NVML) with the reason there are none."""
    label: str
    """What goes before the backend's reason (nvidia-smi's name their tool already)."""
    none_found: str
    """The reason where the backend answered with no GPU."""
    platform: str = ""
    """The start of `sys.platform` where it is asked by default ("": everywhere)."""


_BACKENDS: Final = {
    "nvml": _Backend(_ask_nvml, "NVML: ", "NVML: no GPU found"),
    "nvidia-smi": _Backend(_ask_smi, "", "nvidia-smi reported no GPU"),
    "amd": _Backend(_ask_amd, "AMD (sysfs): ", "AMD (sysfs): no GPU found", "linux"),
    "apple": _Backend(_ask_apple, "Apple (ioreg): ", "Apple (ioreg): no GPU found", "darwin"),
}
"""Each backend, in the order the default tries them: how it is asked and how its answer
is worded."""
BACKENDS: Final = tuple(_BACKENDS)
"""Every backend's name, in the order the default tries them."""


def _probe(timeout: float, processes: bool, backends: object) -> GpuProbe:
    seconds, names = _timeout_and_backends(timeout, backends)
    flag: object = processes
    if not isinstance(flag, bool):
        msg = f"processes must be a bool, got {type(flag).__name__} {flag!r}"
        raise TypeError(msg)
    deadline = time.monotonic() + seconds
    reasons: dict[str, str] = {}
    gpus: list[GpuInfo] = []
    for name in names:
        if name == "nvidia-smi" and reasons.get("nvml") == "":
            reasons[name] = "nvidia-smi: skipped, NVML answered for the same GPUs"
            continue
        backend = _BACKENDS[name]
        label = backend.label
        try:
            found = backend.ask(processes, deadline)
        except ImportError:
            hint = "pip install 'devutils-exact[gpu]'"
            reasons[name] = f"{label}nvidia-ml-py is not installed ({hint})"
        except _NotFound as exc:
            reasons[name] = f"{label}{exc}"
        except OSError as exc:
            reasons[name] = f"{label or name + ' '}could not be run: {exc}"
        except Exception as exc:
            reasons[name] = f"{label}{type(exc).__name__}: {exc}"
        else:
            reasons[name] = "" if found else backend.none_found
            gpus += found
    reason = "" if gpus else "; ".join(reasons.values())
    first = next((name for name in names if reasons.get(name) == ""), None)
    return GpuProbe(first, len(gpus), reason, reasons, tuple(gpus))


@contextlib.contextmanager
def nvml_session(*, timeout: float = 5.0) -> Iterator[None]:
    """Keep NVML started for the block, for a loop of `gpu_snapshot` calls (a no-op
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

        >>> with nvml_session():
        ...     samples = [gpu_snapshot(processes=False, timeout=2.0) for _ in range(2)]
        >>> len(samples[0]) == len(samples[1])  # the same GPUs both times (none here)
        True

        On a machine with one H200 (not run by the tests, which have no GPU):

        >>> [[gpu.backend for gpu in gpus] for gpus in samples]  # doctest: +SKIP
        [['nvml'], ['nvml']]
    """
    seconds, _ = _timeout_and_backends(timeout, None)
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
        pynvml = _within(seconds, start, "NVML")
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


def gpu_snapshot(
    *, timeout: float = 5.0, processes: bool = True, backends: Sequence[str] | None = None
) -> list[GpuInfo]:
    """Return every GPU's state now, or ``[]`` when there is none.

    Never raises for "no GPU"; `gpu_probe` says why the list is empty.

    Args:
        timeout: Seconds all the backends together may take; a hung tool is killed.
        processes: Also list the processes of each GPU.
        backends: Backend names to ask, in order (see `BACKENDS`); default every one
            that applies here. nvidia-smi is skipped when NVML answered.

    Raises:
        TypeError: If *timeout* is not a number, *processes* not a bool or *backends* not
            a sequence of names.
        ValueError: If *timeout* is not positive or more than a day (86400 s), or
            *backends* is empty or names an unknown backend.

    Examples:
        >>> gpu_snapshot(timeout=0)
        Traceback (most recent call last):
        ...
        ValueError: timeout must be a positive number of seconds up to 86400, got 0

        On a machine with one H200 under load (not run by the tests, which have no GPU;
        there the list is ``[]``):

        >>> gpus = gpu_snapshot(timeout=2.0)  # doctest: +SKIP
        >>> [(gpu.name, gpu.utilization, gpu.memory_used >> 20) for gpu in gpus]  # doctest: +SKIP
        [('NVIDIA H200', 100.0, 32362)]
        >>> [process.pid for process in gpus[0].processes]  # doctest: +SKIP
        [10291, 10293, 10309]
    """
    return list(_probe(timeout, processes, backends).snapshot)


def gpu_probe(
    *, timeout: float = 5.0, backends: Sequence[str] | None = None, processes: bool = False
) -> GpuProbe:
    """Say which backend answers and, when no GPU is reported, why not (per backend).

    The probe carries the snapshot too (``GpuProbe.snapshot``), so one call both lists
    the GPUs and explains an empty list.

    Examples:
        >>> gpu_probe(backends=["cuda"])
        Traceback (most recent call last):
        ...
        ValueError: unknown backend 'cuda': the backends are nvml, nvidia-smi, amd, apple

        Asking only for ``nvidia-smi`` on a machine without it (not run by the tests: the
        answer depends on the machine):

        >>> probe = gpu_probe(backends=["nvidia-smi"])  # doctest: +SKIP
        >>> probe.backend, probe.gpus, probe.reason  # doctest: +SKIP
        (None, 0, 'nvidia-smi not found on PATH')
    """
    return _probe(timeout, processes, backends)
