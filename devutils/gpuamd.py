"""AMD GPUs on Linux: the amdgpu driver's sysfs files, and its clients in ``/proc``.

`snapshot_amd` reads every DRM card of AMD's under ``SYSFS/class/drm/cardN/device``
(busy percent, VRAM, the hwmon temperature and power, the product name) and, for the
processes, each amdgpu client's VRAM in ``PROCFS/PID/fdinfo``, as nvtop counts it. The
trees are arguments, so captured files can stand in for a machine's
(`devutils.gpu.SYSFS_PATH` and `devutils.gpu.PROCFS_PATH` are what `devutils.gpu`
passes).
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import replace

from devutils.gpuinfo import GIB, MIB, GpuInfo, GpuProcess, NoGpuFound, check_flag, gpu_process
from devutils.messages import describe, shown

__all__ = ["snapshot_amd"]

_KIB = 1 << 10
_AMD_VENDOR = "0x1002"
_VENDORS = {"0x1002": "amd", "0x10de": "nvidia", "0x8086": "intel", "0x106b": "apple"}


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


def snapshot_amd(
    *,
    processes: bool = True,
    sysfs: str | os.PathLike[str] = "/sys",
    procfs: str | os.PathLike[str] = "/proc",
    deadline: float | None = None,
) -> list[GpuInfo]:
    """Every DRM card of AMD's, read from ``{sysfs}/class/drm/cardN/device`` (a file a
    card does not have, or cannot answer, is None), and where *processes*, each one's
    clients from ``{procfs}/PID/fdinfo``: their VRAM, each client once however many
    descriptors it has. The search of ``/proc`` stops at *deadline* (`time.monotonic`).

    Raises:
        NoGpuFound: If there is no DRM folder, or no card of AMD's in it (the message
            lists the cards found and their vendors).
        TypeError: If *processes* is not a bool, *sysfs* or *procfs* not a str or a path,
            or *deadline* not a number or None.
        ValueError: If *sysfs* or *procfs* holds a NUL character, or *deadline* is NaN.

    Examples:
        A tree of one card's files, as the amdgpu driver writes them:

        >>> import pathlib, tempfile
        >>> sysfs = pathlib.Path(tempfile.mkdtemp())
        >>> card = sysfs / "class" / "drm" / "card0" / "device"
        >>> card.mkdir(parents=True)
        >>> for name, text in [("vendor", "0x1002"), ("device", "0x744c"),
        ...                    ("gpu_busy_percent", "42"), ("mem_info_vram_used", "1048576")]:
        ...     _ = (card / name).write_text(text + "\\n")
        >>> (gpu,) = snapshot_amd(sysfs=str(sysfs), processes=False)
        >>> gpu.name, gpu.utilization, gpu.memory_used, gpu.memory_total
        ('AMD GPU [1002:744c]', 42.0, 1048576, None)
        >>> snapshot_amd(sysfs=str(sysfs / "nothing"))
        Traceback (most recent call last):
        ...
        devutils.gpuinfo.NoGpuFound: no DRM devices (.../class/drm: No such file or directory)
    """
    check_flag("processes", processes)
    sysfs, procfs = _check_tree("sysfs", sysfs), _check_tree("procfs", procfs)
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, int | float)
    ):
        msg = f"deadline must be a time.monotonic() time or None, got {describe(deadline)}"
        raise TypeError(msg)
    if deadline is not None and math.isnan(deadline):  # (never passed: a search without end)
        msg = "deadline must be a time.monotonic() time or None, got nan"
        raise ValueError(msg)
    drm = os.path.join(sysfs, "class", "drm")
    try:
        cards = sorted(
            (int(name[4:]), name) for name in os.listdir(drm) if re.fullmatch(r"card\d+", name)
        )
    except OSError as exc:
        msg = f"no DRM devices ({drm}: {exc.strerror})"
        raise NoGpuFound(msg) from None
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
        raise NoGpuFound(msg)
    if processes:
        by_slot = _amd_processes(procfs, deadline)
        gpus = [replace(gpu, processes=tuple(by_slot.get(gpu.uuid, ()))) for gpu in gpus]
    return gpus


def _check_tree(name: str, value: object) -> str:
    """*value*, the folder of a tree (a str or a path), as a str."""
    path = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(path, str):
        msg = f"{name} must be a str or a path, got {describe(value)}"
        raise TypeError(msg)
    if "\x00" in path:
        msg = f"{name} must be a path without a NUL character, got {shown(path)}"
        raise ValueError(msg)
    return path


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


def _amd_processes(procfs: str, deadline: float | None) -> dict[str, list[GpuProcess]]:
    """Each process's memory on each card (PCI slot -> processes), from the amdgpu
    clients in ``{procfs}/PID/fdinfo``: their VRAM (``drm-memory-vram``, as nvtop
    counts it, so that it adds up to the card's own figure; GTT is system memory), each
    client once however many descriptors it has."""
    try:
        pids = [name for name in os.listdir(procfs) if name.isdigit()]
    except OSError:
        return {}
    used: dict[tuple[str, int], int] = {}
    seen: set[tuple[str, str]] = set()
    for pid in pids:
        if deadline is not None and time.monotonic() > deadline:
            break
        folder = os.path.join(procfs, pid, "fdinfo")
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
        by_slot.setdefault(slot, []).append(gpu_process(process, memory))
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
