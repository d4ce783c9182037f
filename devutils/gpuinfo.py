"""What every GPU backend of `devutils.gpu` shares: the records and running a tool.

`GpuInfo` (one GPU now) and `GpuProcess` (a process using it) have the same fields
whatever the vendor, None where a vendor does not report a figure. A backend that finds
no GPU raises `NoGpuFound` with the reason; `run_tool` runs a vendor's command line tool
and kills it with its process group at a timeout or a Ctrl-C, and `within` gives up on
a call that cannot be killed (an NVML call, a sysfs read).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

from devutils.limits import check_seconds
from devutils.messages import describe, shown
from devutils.signals import deferred

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "GIB",
    "MIB",
    "GpuInfo",
    "GpuProcess",
    "NoGpuFound",
    "check_flag",
    "check_text",
    "gpu_process",
    "run_tool",
    "seconds_shown",
    "within",
]

MIB: Final = 1 << 20
"""A mebibyte in bytes: nvidia-smi and NVML's process figures count memory in MiB."""
GIB: Final = 1 << 30
"""A gibibyte in bytes."""
_PID_MAX: Final = 2**32 - 1
"""The largest pid `gpu_process` takes: what a 32-bit unsigned int holds (NVML's pids,
Windows' process ids; a POSIX pid_t is smaller)."""
_T = TypeVar("_T")


@dataclass(frozen=True)
class GpuProcess:
    """A process using a GPU. ``name`` is None when the pid is not ``visible`` in this
    PID namespace (a container, say); ``used_memory`` None when not reported (Windows
    WDDM, Apple).

    Examples:
        >>> process = GpuProcess(pid=10291, used_memory=30 * GIB, name="python", visible=True)
        >>> process.used_memory // MIB, process.name
        (30720, 'python')
    """

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

    Examples:
        >>> gpu = GpuInfo(index=0, uuid="GPU-5b1f", name="NVIDIA H200", utilization=100.0,
        ...               memory_used=32362 * MIB, memory_total=143771 * MIB, temperature=61.0,
        ...               power_draw=None, mig_mode="Disabled")
        >>> gpu.memory_used // MIB, gpu.power_draw, gpu.processes, gpu.vendor
        (32362, None, (), 'nvidia')
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


class NoGpuFound(Exception):
    """A backend found no GPU; the message says why (`devutils.gpu.gpu_probe` shows it).

    Examples:
        >>> import threading
        >>> hung = threading.Event()  # a driver call that does not return
        >>> try:
        ...     within(0.01, hung.wait, "NVML")
        ... except NoGpuFound as exc:
        ...     print(exc)
        NVML did not answer within 0.01 s
        >>> hung.set()  # (lets the abandoned thread end)
    """


def check_flag(name: str, value: object) -> bool:
    """*value*, a backend's switch (as *processes*), if it is a bool.

    Raises:
        TypeError: If it is not (the message names *name* and the value).

    Examples:
        >>> check_flag("processes", False)
        False
        >>> check_flag("processes", "no")
        Traceback (most recent call last):
        ...
        TypeError: processes must be a bool, got str 'no'
    """
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {describe(value)}"
        raise TypeError(msg)
    return value


def check_text(text: object) -> str:
    """*text*, which a tool's output parser is given, if it is a str.

    Raises:
        TypeError: If it is not (the message names it and its type).

    Examples:
        >>> check_text("index, name\\n")
        'index, name\\n'
        >>> check_text(b"index")
        Traceback (most recent call last):
        ...
        TypeError: text must be a str, got bytes b'index'
    """
    if not isinstance(text, str):
        msg = f"text must be a str, got {describe(text)}"
        raise TypeError(msg)
    return text


def gpu_process(pid: int, used: int | None) -> GpuProcess:
    """The `GpuProcess` of *pid*, named by psutil where this PID namespace shows it.

    Args:
        pid: The process id, from 0 (as psutil takes it) to 2**32 - 1.
        used: The bytes of GPU memory it uses (None: not reported).

    Raises:
        TypeError: If *pid* is not an int or *used* not an int or None.
        ValueError: If *pid* is outside 0 to 2**32 - 1, or *used* is negative.

    Examples:
        >>> import os
        >>> me = gpu_process(os.getpid(), 1 << 20)
        >>> me.visible, me.used_memory, isinstance(me.name, str)
        (True, 1048576, True)
        >>> gpu_process(2**22 + 1, None)  # beyond Linux's pid_max: a pid not seen here
        GpuProcess(pid=4194305, used_memory=None, name=None, visible=False)
        >>> gpu_process(-1, None)
        Traceback (most recent call last):
        ...
        ValueError: pid must be from 0 to 4294967295, got -1
    """
    if isinstance(pid, bool) or not isinstance(pid, int):
        msg = f"pid must be an int, got {describe(pid)}"
        raise TypeError(msg)
    if not 0 <= pid <= _PID_MAX:
        msg = f"pid must be from 0 to {_PID_MAX}, got {shown(pid)}"
        raise ValueError(msg)
    if used is not None and (isinstance(used, bool) or not isinstance(used, int)):
        msg = f"used must be an int or None, got {describe(used)}"
        raise TypeError(msg)
    if used is not None and used < 0:
        msg = f"used must be >= 0, got {shown(used)}"
        raise ValueError(msg)
    try:
        import psutil

        name: str | None = psutil.Process(pid).name()
        visible = True
    except Exception:
        name, visible = None, False
    return GpuProcess(pid, used, name, visible)


def run_tool(
    tool: str,
    command: Sequence[str],
    timeout: float,
    *,
    hint: Callable[[int, str], str] | None = None,
) -> str:
    """What *command* printed on stdout, decoded as UTF-8.

    The command runs in its own process group, which is killed at the timeout, or when
    this process is interrupted (Ctrl-C), so that no hung tool is left running. What it
    prints on stderr (a warning) is left out of the answer, but a failure's reason reads
    both.

    Args:
        tool: The tool's name, as the reasons show it.
        command: The command line (its first word a path, or a name on PATH).
        timeout: Seconds the tool may take: above 0, at most a day
            (`devutils.limits.check_seconds`).
        hint: A function of the exit status and the output that returns what the
            reason adds for a failure (``""`` for nothing).

    Raises:
        NoGpuFound: If the tool timed out, was killed by a signal or exited non-zero:
            the message says which, with the first line of its output.
        OSError: If the command cannot be started.
        TypeError: If *command* is not a sequence of str, *timeout* not a number, or
            *hint* not a function.
        ValueError: If *command* is empty, or *timeout* not above 0 and at most a day.

    Examples:
        >>> run_tool("echo", ["echo", "GPU 0"], 5.0)
        'GPU 0\\n'
        >>> run_tool("sh", ["sh", "-c", "echo no driver; exit 9"], 5.0)
        Traceback (most recent call last):
        ...
        devutils.gpuinfo.NoGpuFound: sh failed with exit status 9: no driver
    """
    import subprocess

    if (
        isinstance(command, str | bytes)
        or not isinstance(command, Sequence)
        or not all(isinstance(word, str) for word in command)
    ):
        msg = f"command must be a sequence of str, got {describe(command)}"
        raise TypeError(msg)
    if not command:
        msg = f"command must name the tool at least, got {shown(command)}"
        raise ValueError(msg)
    timeout = check_seconds("timeout", timeout)
    told: object = hint
    if told is not None and not callable(told):  # (before the tool runs)
        msg = f"hint must be a function or None, got {describe(told)}"
        raise TypeError(msg)
    process = None
    try:
        # A Ctrl-C inside Popen, after the tool started but before Popen returned, would
        # leave the tool running: Python's handlers wait until `process` is known.
        with deferred():
            process = subprocess.Popen(
                list(command),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        out, err = process.communicate(timeout=timeout)
    except BaseException as exc:
        if process is None:  # (not started)
            raise
        _kill_group(process)
        if isinstance(exc, subprocess.TimeoutExpired):
            msg = f"{tool} timed out after {seconds_shown(timeout)} s and was killed"
            raise NoGpuFound(msg) from None
        raise
    text = out.decode("utf-8", "replace")
    if process.returncode < 0:
        msg = f"{tool} was killed by signal {-process.returncode}"
        raise NoGpuFound(msg)
    if process.returncode != 0:
        text += err.decode("utf-8", "replace")
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        added = "" if hint is None else hint(process.returncode, text)
        msg = f"{tool} failed with exit status {process.returncode}: {first}{added}"
        raise NoGpuFound(msg)
    return text


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill *process* and its process group, and close its pipes.

    The pipes are closed unread: a child that left the group may hold them open for as
    long as it runs. A process in an uninterruptible sleep (a driver call) dies when the
    call returns; it is waited for a tenth of a second, then left to Python to reap.
    """
    import signal
    import subprocess

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)


def within(seconds: float, function: Callable[[], _T], what: str) -> _T:
    """*function*'s answer, or `NoGpuFound` if it takes longer than *seconds*.

    The function runs in a thread of its own, left to finish when it is given up on:
    an NVML call or a sysfs read cannot be killed. What it raises is raised here.

    Raises:
        NoGpuFound: If *function* did not answer within *seconds*.
        TypeError: If *seconds* is not a number, or *function* not callable.
        ValueError: If *seconds* is not above 0 and at most a day
            (`devutils.limits.check_seconds`).

    Examples:
        >>> within(5.0, lambda: 42, "the answer")
        42
        >>> import threading
        >>> within(0.05, threading.Event().wait, "a wait")
        Traceback (most recent call last):
        ...
        devutils.gpuinfo.NoGpuFound: a wait did not answer within 0.05 s
    """
    seconds = check_seconds("seconds", seconds)
    given: object = function
    if not callable(given):  # (before a thread is started, where it would fail)
        msg = f"function must be callable, got {describe(given)}"
        raise TypeError(msg)
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
        msg = f"{what} did not answer within {seconds_shown(seconds)} s"
        raise NoGpuFound(msg)
    if error:
        raise error[0]
    return result[0]


def seconds_shown(value: float) -> str:
    """Seconds as a reason shows them: three digits, or whole seconds past 999.

    Raises:
        TypeError: If *value* is not a number.
        ValueError: If it is not above 0 and at most a day (`devutils.limits.check_seconds`).

    Examples:
        >>> [seconds_shown(value) for value in (0.3, 12.5, 150.0, 86400.0)]
        ['0.3', '12.5', '150', '86400']
    """
    value = check_seconds("value", value)
    return f"{value:.3g}" if value < 1000 else f"{value:.0f}"  # noqa: PLR2004 - past 3 digits
