"""GPU snapshots: utilization, memory, temperature, power and processes, any vendor.

`gpu_snapshot` asks each backend that applies here, in this order: NVIDIA through NVML
(the ``[gpu]`` extra, ``nvidia-ml-py``) or else ``nvidia-smi``; AMD through the amdgpu
driver's sysfs files (Linux); Apple Silicon through the I/O Registry (``ioreg``, macOS,
no sudo). It returns ``[]`` when there is no GPU; `gpu_probe` says why, backend by
backend. Every backend has a time limit: a hung ``nvidia-smi`` or ``ioreg`` is killed
with its process group, a hung NVML or sysfs read is given up on.

Each vendor's backend is a module of its own (`devutils.gpunvidia`, `devutils.gpuamd`,
`devutils.gpuapple`); the records they share are `devutils.gpuinfo`'s, and this module
re-exports them.

Every `GpuInfo` has the same fields whatever the vendor; a figure a vendor does not
report is None. Apple's GPU shares the machine's memory: ``unified_memory`` is True and
``memory_total`` None (no invented VRAM size).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from devutils.gpuamd import snapshot_amd
from devutils.gpuapple import parse_ioreg, snapshot_apple
from devutils.gpuinfo import (
    GIB,
    MIB,
    GpuInfo,
    GpuProcess,
    NoGpuFound,
    check_flag,
    seconds_shown,
    within,
)
from devutils.gpunvidia import nvml_session, parse_nvidia_smi_csv, snapshot_nvml, snapshot_smi
from devutils.limits import check_seconds
from devutils.messages import describe, shown

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


@dataclass(frozen=True)
class GpuProbe:
    """How `gpu_snapshot` got its answer.

    ``backend`` is the first backend that found a GPU (None if none did), ``gpus`` how
    many were found, ``reason`` why none were (every backend's reason, joined),
    ``reasons`` each backend's (backend -> why it found nothing; "" if it found some),
    and ``snapshot`` the GPUs themselves.

    Examples:
        >>> probe = GpuProbe(backend=None, gpus=0, reason="nvidia-smi not found on PATH",
        ...                  reasons={"nvidia-smi": "nvidia-smi not found on PATH"})
        >>> probe.snapshot if probe.backend else probe.reason
        'nvidia-smi not found on PATH'
    """

    backend: str | None
    gpus: int
    reason: str
    reasons: Mapping[str, str] = field(default_factory=dict)
    snapshot: tuple[GpuInfo, ...] = ()


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
        msg = f"backends must be a sequence of backend names, got {describe(backends)}"
        raise TypeError(msg)
    if not backends:
        msg = f"backends must name one backend at least: {', '.join(BACKENDS)}"
        raise ValueError(msg)
    unknown = [name for name in backends if name not in BACKENDS]
    if unknown:
        msg = f"unknown backend {shown(unknown[0])}: the backends are {', '.join(BACKENDS)}"
        raise ValueError(msg)
    return seconds, tuple(dict.fromkeys(backends))


def _left(deadline: float) -> float:
    """The seconds a backend has left (a millisecond at least: `_probe` asks none after the
    deadline)."""
    return max(deadline - time.monotonic(), 0.001)


def _ask_nvml(processes: bool, deadline: float) -> list[GpuInfo]:
    return within(_left(deadline), lambda: snapshot_nvml(processes), "NVML")


def _ask_smi(processes: bool, deadline: float) -> list[GpuInfo]:
    return snapshot_smi(_left(deadline), processes)


def _ask_amd(processes: bool, deadline: float) -> list[GpuInfo]:
    def read() -> list[GpuInfo]:
        return snapshot_amd(
            processes=processes, sysfs=SYSFS_PATH, procfs=PROCFS_PATH, deadline=deadline
        )

    return within(_left(deadline), read, "sysfs")


def _ask_apple(processes: bool, deadline: float) -> list[GpuInfo]:
    return snapshot_apple(processes, _left(deadline))


class _Backend(NamedTuple):
    """How `_probe` asks one backend, and how it words the answer."""

    ask: Callable[[bool, float], list[GpuInfo]]
    """``ask(processes, deadline)``: the GPUs; raises `NoGpuFound` (or ImportError, for
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
_SAME_GPUS: Final = {"nvml": "nvidia-smi", "nvidia-smi": "nvml"}
"""Backends that read the same GPUs: the one asked second is skipped where the first
answered (in either order: ``--backend nvidia-smi --backend nvml`` lists each GPU once)."""
_SPOKEN: Final = {"nvml": "NVML", "nvidia-smi": "nvidia-smi"}
"""How a reason names each of them."""


def _probe(timeout: float, processes: bool, backends: object) -> GpuProbe:
    seconds, names = _timeout_and_backends(timeout, backends)
    check_flag("processes", processes)
    deadline = time.monotonic() + seconds
    reasons: dict[str, str] = {}
    gpus: list[GpuInfo] = []
    for name in names:
        other = _SAME_GPUS.get(name)
        if other is not None and reasons.get(other) == "":  # whichever was asked first
            reasons[name] = f"{_SPOKEN[name]}: skipped, {_SPOKEN[other]} answered for the same GPUs"
            continue
        backend = _BACKENDS[name]
        label = backend.label
        if time.monotonic() >= deadline:
            used_up = f"the timeout ({seconds_shown(seconds)} s) was used up before it"
            reasons[name] = f"{label or name + ': '}not asked: {used_up}"
            continue
        try:
            found = backend.ask(processes, deadline)
        except ImportError:
            hint = "pip install nvidia-ml-py, what the [gpu] extra installs"
            reasons[name] = f"{label}nvidia-ml-py is not installed ({hint})"
        except NoGpuFound as exc:
            reasons[name] = f"{label}{exc}"
        except OSError as exc:
            reasons[name] = f"{label or name + ' '}could not be run: {exc}"
        except Exception as exc:
            reasons[name] = f"{label or name + ': '}{type(exc).__name__}: {exc}"
        else:
            reasons[name] = "" if found else backend.none_found
            gpus += found
    reason = "" if gpus else "; ".join(reasons.values())
    first = next((name for name in names if reasons.get(name) == ""), None)
    return GpuProbe(first, len(gpus), reason, reasons, tuple(gpus))


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
