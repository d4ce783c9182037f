"""Shared fixtures, and the Hypothesis profiles: deterministic under ``CI=true``, longer
with ``thorough``.

Local runs use ``dev``; ``python -m pytest --hypothesis-profile=thorough tests`` searches
twenty times longer. Test modules import nothing from each other: what two of them need
is a fixture here (``cli``, ``fake_smi``, ``fake_pynvml``) or a plain helper module
(``tests/text_reference.py``, the brute-force reference of the text tests).
"""

from __future__ import annotations

import io
import os
import signal
import stat
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from devutils.cli import main

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None, derandomize=False)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# CI=true (or 1, yes) as CI services set it; CI=false or CI=0 is a developer's machine
settings.load_profile("ci" if os.environ.get("CI", "").lower() in {"true", "1", "yes"} else "dev")

# A suite started as a background job (`... &` in a script, nohup) inherits SIGINT ignored,
# and so would every command it starts: Ctrl-C would not reach them. Its tests signal the
# commands as a user's terminal does, so they start with SIGINT as a terminal gives it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

NVIDIA_SMI_FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi"


# -- the command, in this process ------------------------------------------------------


class Result:
    """What one ``devutils`` command gave: its exit status, stdout bytes and stderr."""

    def __init__(self, status: int, out: bytes, err: str) -> None:
        self.status = status
        self.out = out
        self.err = err

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")


Cli = Callable[..., Result]
"""``cli(args, stdin=b"")``: run ``devutils ARGS`` in this process."""


class _Buffer(io.BytesIO):
    """A BytesIO that survives its TextIOWrapper being closed."""

    def close(self) -> None:
        pass


def _run(args: list[str], stdin: bytes = b"") -> Result:
    """Run ``main(args)`` in-process with byte-level stdin/stdout."""
    stdin_buffer = _Buffer(stdin)
    stdout_buffer = _Buffer()
    stderr = io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(stdin_buffer, encoding="utf-8")
    sys.stdout = io.TextIOWrapper(stdout_buffer, encoding="utf-8", write_through=True)
    sys.stderr = stderr
    try:
        status = main(args)
        sys.stdout.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(status, stdout_buffer.getvalue(), stderr.getvalue())


@pytest.fixture(scope="session")
def cli() -> Cli:
    """Run ``devutils ARGS`` in this process: ``cli(["months", ...], stdin=b"...")``."""
    return _run


# -- GPUs: a fake nvidia-smi and a stand-in pynvml ---------------------------------------

FAKE_SMI = """#!/bin/sh
case "$*" in
  *--query-compute-apps*) file="$FAKE_SMI_APPS" ;;
  *) file="$FAKE_SMI_GPU" ;;
esac
echo "$*" >> "$FAKE_SMI_LOG"
if [ -n "$FAKE_SMI_SLEEP" ]; then sleep "$FAKE_SMI_SLEEP"; fi
cat "$file"
exit "${FAKE_SMI_EXIT:-0}"
"""


class FakeSmi:
    """An ``nvidia-smi`` on PATH that prints captured outputs (tests/fixtures/nvidia-smi)."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = path
        self._monkeypatch = monkeypatch
        self.log = path.parent / "calls.log"
        monkeypatch.setenv("FAKE_SMI_LOG", str(self.log))

    def calls(self) -> list[str]:
        """The arguments of each run so far, one string a run (it logs before sleeping)."""
        return self.log.read_text().splitlines() if self.log.exists() else []

    def serve(self, gpu: str, apps: str | None = None, exit_status: int = 0) -> None:
        """Answer ``--query-gpu`` with fixture *gpu*, ``--query-compute-apps`` with *apps*."""
        self._monkeypatch.setenv("FAKE_SMI_GPU", str(NVIDIA_SMI_FIXTURES / gpu))
        self._monkeypatch.setenv("FAKE_SMI_APPS", str(NVIDIA_SMI_FIXTURES / (apps or gpu)))
        self._monkeypatch.setenv("FAKE_SMI_EXIT", str(exit_status))

    def hang(self, seconds: float) -> None:
        """Sleep *seconds* before answering."""
        self._monkeypatch.setenv("FAKE_SMI_SLEEP", str(seconds))


@pytest.fixture
def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSmi:
    script = tmp_path / "bin" / "nvidia-smi"
    script.parent.mkdir(exist_ok=True)
    script.write_text(FAKE_SMI)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    for name in ("FAKE_SMI_APPS", "FAKE_SMI_GPU", "FAKE_SMI_SLEEP", "FAKE_SMI_EXIT"):
        monkeypatch.delenv(name, raising=False)
    return FakeSmi(script, monkeypatch)


MIB = 2**20
H200_PROCESSES = [(10291, 2566 * MIB), (10293, 1542 * MIB), (10309, 28234 * MIB)]
"""The compute processes of the H200 capture: pid, memory held."""


class FakeNvmlError(Exception):
    pass


def _fake_pynvml(
    *,
    init_error: str | None = None,
    unsupported: frozenset[str] = frozenset(),
    mig: int = 0,
    process_memory: list[int | None] | None = None,
) -> tuple[Any, list[str]]:
    """A pynvml module for one H200, and the list of the calls made to it."""
    calls: list[str] = []
    module = types.ModuleType("pynvml")

    def answer(name: str, value: Any) -> Any:
        calls.append(name)
        if name in unsupported:
            raise FakeNvmlError("Not Supported")
        return value

    def init() -> None:
        calls.append("nvmlInit")
        if init_error is not None:
            raise FakeNvmlError(init_error)

    # The capture's figures as NVML gives them: v1's used is total - free, the driver's
    # reserved 614 MiB included; v2's leaves them out, as nvidia-smi's memory.used does.
    memory = types.SimpleNamespace(total=143771 * MIB, used=32975 * MIB, free=110796 * MIB)
    memory_v2 = types.SimpleNamespace(
        total=143771 * MIB, reserved=614 * MIB, used=32362 * MIB, free=110796 * MIB
    )
    used = process_memory or [m for _, m in H200_PROCESSES]
    processes = [
        types.SimpleNamespace(pid=pid, usedGpuMemory=m)
        for (pid, _), m in zip(H200_PROCESSES, used, strict=True)
    ]
    uuid = "GPU-00000000-0000-0000-0000-000000000000"
    names: dict[str, Any] = {
        "NVMLError": FakeNvmlError,
        "NVML_TEMPERATURE_GPU": 0,
        "nvmlInit": init,
        "nvmlShutdown": lambda: calls.append("nvmlShutdown"),
        "nvmlDeviceGetCount": lambda: answer("nvmlDeviceGetCount", 1),
        "nvmlDeviceGetHandleByIndex": lambda i: answer("nvmlDeviceGetHandleByIndex", ("h", i)),
        "nvmlDeviceGetUUID": lambda h: answer("nvmlDeviceGetUUID", uuid),
        "nvmlDeviceGetName": lambda h: answer("nvmlDeviceGetName", "NVIDIA H200"),
        "nvmlDeviceGetUtilizationRates": lambda h: answer(
            "nvmlDeviceGetUtilizationRates", types.SimpleNamespace(gpu=100, memory=7)
        ),
        "nvmlMemory_v2": 0x02000028,
        "nvmlDeviceGetMemoryInfo": lambda h, version=None: (
            answer("nvmlDeviceGetMemoryInfo_v2", memory_v2)
            if version == 0x02000028
            else answer("nvmlDeviceGetMemoryInfo", memory)
        ),
        "nvmlDeviceGetTemperature": lambda h, sensor: answer("nvmlDeviceGetTemperature", 52),
        "nvmlDeviceGetPowerUsage": lambda h: answer("nvmlDeviceGetPowerUsage", 627400),
        "nvmlDeviceGetMigMode": lambda h: answer("nvmlDeviceGetMigMode", [mig, mig]),
        "nvmlDeviceGetComputeRunningProcesses": lambda h: answer(
            "nvmlDeviceGetComputeRunningProcesses", processes
        ),
    }
    for name, value in names.items():
        setattr(module, name, value)
    return module, calls


FakePynvml = Callable[..., tuple[Any, list[str]]]
"""``fake_pynvml(init_error=..., unsupported=..., mig=..., process_memory=...)`` ->
``(module, calls)``: a pynvml for one H200, and the calls made to it."""


@pytest.fixture(scope="session")
def fake_pynvml() -> FakePynvml:
    return _fake_pynvml
