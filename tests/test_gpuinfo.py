"""Tests for devutils.gpuinfo (what the GPU backends share) and for the vendor modules'
own arguments; the backends' answers are tested through devutils.gpu in test_gpu.py."""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.gpuamd import snapshot_amd
from devutils.gpuapple import snapshot_apple
from devutils.gpuinfo import (
    NoGpuFound,
    check_flag,
    check_text,
    gpu_process,
    run_tool,
    seconds_shown,
    within,
)
from devutils.gpunvidia import snapshot_nvml, snapshot_smi

AMD_SYSFS = Path(__file__).parent / "fixtures" / "amd-sysfs"
AMD_PROC = Path(__file__).parent / "fixtures" / "amd-proc"


class BadRepr:
    """A value whose repr fails: a message that names it must not raise that."""

    def __repr__(self) -> str:
        raise RuntimeError


FLAG_TAKERS: dict[str, Callable[[Any], object]] = {
    "snapshot_smi": lambda flag: snapshot_smi(5.0, flag),
    "snapshot_nvml": snapshot_nvml,
    "snapshot_amd": lambda flag: snapshot_amd(
        processes=flag, sysfs=str(AMD_SYSFS), procfs=str(AMD_PROC)
    ),
    "snapshot_apple": lambda flag: snapshot_apple(flag, 5.0),
}
"""Each backend's processes flag, its other arguments fine (its tool absent, or not)."""
TIMEOUT_TAKERS: dict[str, tuple[str, Callable[[Any], object]]] = {
    "run_tool": ("timeout", lambda timeout: run_tool("true", ["true"], timeout)),
    "within": ("seconds", lambda seconds: within(seconds, lambda: "", "a call")),
    "seconds_shown": ("value", seconds_shown),
    "snapshot_smi": ("timeout", lambda timeout: snapshot_smi(timeout, False)),
    "snapshot_apple": ("timeout", lambda timeout: snapshot_apple(False, timeout)),
}
"""Each function of a timeout: the argument's name, and a call with the others fine."""


@given(st.floats(min_value=1e-6, max_value=86400.0))
def test_seconds_are_shown_to_three_digits_or_whole(value: float) -> None:
    shown = seconds_shown(value)
    if value < 1000:
        assert abs(float(shown) - value) <= value * 5e-3  # three significant digits
        assert len(shown.split("e")[0].replace(".", "").lstrip("0")) <= 3
    else:
        assert shown == str(round(value))  # whole seconds, never 8.64e+04


@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=40))
def test_run_tool_gives_the_tools_output(text: str) -> None:
    command = [sys.executable, "-c", "import sys; sys.stdout.write(sys.argv[1])", text]
    assert run_tool("python", command, 30.0) == text


@given(st.integers(1, 125), st.sampled_from(["", "not found", "driver/library mismatch"]))
def test_run_tool_names_the_status_first_line_and_hint(status: int, line: str) -> None:
    code = f"print({line!r}); print('second'); raise SystemExit({status})"
    hints: list[tuple[int, str]] = []

    def hint(number: int, output: str) -> str:
        hints.append((number, output))
        return " (a hint)"

    with pytest.raises(NoGpuFound) as caught:
        run_tool("tool", [sys.executable, "-c", code], 30.0, hint=hint)
    first = line or "second"
    assert str(caught.value) == f"tool failed with exit status {status}: {first} (a hint)"
    assert hints == [(status, f"{line}\nsecond\n")]


def test_run_tool_leaves_stderr_out_of_the_answer_but_not_out_of_a_failure() -> None:
    # A warning on stderr would have made nvidia-smi's CSV unreadable.
    assert run_tool("sh", ["sh", "-c", "echo warning >&2; echo 'index, name'"], 30.0) == (
        "index, name\n"
    )
    with pytest.raises(NoGpuFound, match=r"^sh failed with exit status 3: no driver$"):
        run_tool("sh", ["sh", "-c", "echo no driver >&2; exit 3"], 30.0)


def test_run_tool_does_not_wait_for_a_child_that_left_its_group(tmp_path: Path) -> None:
    # The escaped child holds the pipes open: they were read until it ended, up to 1 s.
    pid_file = tmp_path / "pid"
    escape = f'setsid sh -c "echo \\$\\$ > {pid_file}; exec sleep 300" &'
    wait = f"while [ ! -s {pid_file} ]; do :; done; exec sleep 300"
    start = time.monotonic()
    try:
        with pytest.raises(NoGpuFound, match=r"timed out after 0\.5 s and was killed"):
            run_tool("tool", ["sh", "-c", f"{escape} {wait}"], 0.5)
        assert time.monotonic() - start < 1.4  # it took 1.5 s
    finally:
        if pid_file.exists() and pid_file.read_text().strip():
            os.kill(int(pid_file.read_text()), 9)
    assert pid_file.read_text().strip()  # the child did leave the group


@given(st.integers() | st.text(max_size=5) | st.none())
def test_within_gives_the_answer_or_what_was_raised(answer: object) -> None:
    assert within(30.0, lambda: answer, "a call") == answer

    def fail() -> object:
        raise LookupError(answer)

    with pytest.raises(LookupError) as caught:
        within(30.0, fail, "a call")
    assert caught.value.args == (answer,)


def test_within_gives_up_on_a_call_that_does_not_answer() -> None:
    released = threading.Event()
    start = time.monotonic()
    with pytest.raises(NoGpuFound, match=r"^a read did not answer within 0\.2 s$"):
        within(0.2, released.wait, "a read")
    assert time.monotonic() - start < 30
    released.set()


def test_a_process_is_named_where_it_is_seen() -> None:
    me = gpu_process(os.getpid(), 5)
    assert (me.pid, me.used_memory, me.visible) == (os.getpid(), 5, True)
    assert me.name
    unseen = gpu_process(2**22 + 1, None)  # past Linux's highest pid
    assert (unseen.name, unseen.visible) == (None, False)


@pytest.mark.parametrize(
    ("pid", "used", "error", "message"),
    [
        (True, None, TypeError, "pid must be an int, got bool True"),
        ("abc", None, TypeError, "pid must be an int, got str 'abc'"),
        (1.0, None, TypeError, "pid must be an int, got float 1.0"),
        (-1, None, ValueError, "pid must be from 0 to 4294967295, got -1"),
        (2**32, None, ValueError, "pid must be from 0 to 4294967295, got 4294967296"),
        pytest.param(
            10**5000,
            None,
            ValueError,
            "pid must be from 0 to 4294967295, got <an int",
            id="10**5000",
        ),
        (1, "5", TypeError, "used must be an int or None, got str '5'"),
        (1, 5.0, TypeError, "used must be an int or None, got float 5.0"),
        (1, -1, ValueError, "used must be >= 0, got -1"),
    ],
)
def test_a_process_needs_a_pid_and_its_memory(
    pid: object, used: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        gpu_process(pid, used)  # type: ignore[arg-type]


@given(st.integers(-(2**40), 2**40), st.none() | st.integers(-(2**40), 2**40))
def test_a_process_takes_any_pid_a_backend_reports(pid: int, used: int | None) -> None:
    if 0 <= pid < 2**32 and (used is None or used >= 0):
        process = gpu_process(pid, used)
        assert (process.pid, process.used_memory) == (pid, used)
        assert process.visible == (process.name is not None)
    else:
        with pytest.raises(ValueError, match=r"^(pid|used) must be"):
            gpu_process(pid, used)


def test_snapshot_amd_reads_the_trees_it_is_given() -> None:
    first, second = snapshot_amd(sysfs=str(AMD_SYSFS), procfs=str(AMD_PROC))
    assert [gpu.uuid for gpu in (first, second)] == ["0000:08:00.0", "0000:03:00.0"]
    assert [process.pid for process in first.processes] == [2217]
    # processes=False reads no /proc, and a deadline already past stops the search
    assert snapshot_amd(sysfs=str(AMD_SYSFS), processes=False)[0].processes == ()
    late = snapshot_amd(sysfs=str(AMD_SYSFS), procfs=str(AMD_PROC), deadline=0.0)
    assert late[0].processes == ()
    with pytest.raises(NoGpuFound, match="no DRM devices"):
        snapshot_amd(sysfs=str(AMD_PROC))


@given(st.text() | st.binary() | st.integers() | st.none() | st.lists(st.text(), max_size=2))
def test_check_text_takes_a_str_and_names_anything_else(value: object) -> None:
    if isinstance(value, str):
        assert check_text(value) is value
    else:
        with pytest.raises(TypeError, match=f"^text must be a str, got {type(value).__name__} "):
            check_text(value)


@pytest.mark.parametrize("backend", FLAG_TAKERS)
@pytest.mark.parametrize(
    ("flag", "shown"),
    [
        ("no", "str 'no'"),
        (0, "int 0"),
        (1, "int 1"),
        (None, "NoneType None"),
        pytest.param(10**5000, "int <an int of about 5001 digits>", id="10**5000"),
        pytest.param(BadRepr(), "BadRepr <repr failed: RuntimeError>", id="bad-repr"),
    ],
)
def test_every_backends_processes_flag_is_a_bool(backend: str, flag: object, shown: str) -> None:
    # (A flag taken by its truth listed the processes for "no".)
    with pytest.raises(TypeError, match=f"^processes must be a bool, got {re.escape(shown)}$"):
        FLAG_TAKERS[backend](flag)


@given(st.booleans() | st.integers() | st.text(max_size=5) | st.none() | st.floats())
def test_check_flag_takes_a_bool_and_names_anything_else(value: object) -> None:
    if isinstance(value, bool):
        assert check_flag("processes", value) is value
    else:
        with pytest.raises(
            TypeError, match=f"^processes must be a bool, got {type(value).__name__} "
        ):
            check_flag("processes", value)


@pytest.mark.parametrize("taker", TIMEOUT_TAKERS)
@pytest.mark.parametrize(
    ("value", "error", "shown"),
    [
        (float("nan"), ValueError, "nan"),  # "cannot convert float NaN to integer"
        (float("inf"), ValueError, "inf"),  # "timestamp out of range"
        (-1, ValueError, "-1"),  # "timed out after -1 s"
        (0, ValueError, "0"),
        (86401, ValueError, "86401"),
        ("5", TypeError, "str '5'"),  # "unsupported operand type(s)"
        (None, TypeError, "NoneType None"),
        (True, TypeError, "bool True"),
    ],
)
def test_every_timeout_is_checked_as_seconds(
    taker: str, value: object, error: type[Exception], shown: str
) -> None:
    name, call = TIMEOUT_TAKERS[taker]
    wanted = "a number of seconds" if error is TypeError else "a positive number of seconds"
    with pytest.raises(error, match=f"^{name} must be {wanted}.*, got {re.escape(shown)}$"):
        call(value)


@pytest.mark.parametrize("taker", ["run_tool", "within", "seconds_shown"])
@given(
    value=st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(10**30), 10**30)
    | st.booleans()
    | st.text(max_size=3)
    | st.none()
)
def test_a_timeout_is_any_number_of_seconds_up_to_a_day(taker: str, value: object) -> None:
    name, call = TIMEOUT_TAKERS[taker]
    if isinstance(value, bool) or not isinstance(value, int | float):
        with pytest.raises(TypeError, match=f"^{name} must be a number of seconds"):
            call(value)
    elif not 0 < value <= 86400:
        with pytest.raises(ValueError, match=f"^{name} must be a positive number of seconds"):
            call(value)
    else:
        with contextlib.suppress(NoGpuFound):  # (true timed out after 1e-300 s)
            call(value)


@pytest.mark.parametrize(
    ("command", "error", "message"),
    [
        ([], ValueError, "command must name the tool at least, got []"),  # an IndexError
        ("true", TypeError, "command must be a sequence of str, got str 'true'"),
        (b"true", TypeError, "command must be a sequence of str, got bytes b'true'"),
        (["sh", 1], TypeError, "command must be a sequence of str, got list ['sh', 1]"),
        (None, TypeError, "command must be a sequence of str, got NoneType None"),
    ],
)
def test_run_tool_wants_a_command_line(
    command: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        run_tool("tool", command, 5.0)  # type: ignore[arg-type]


def test_run_tool_takes_any_sequence_of_words() -> None:
    assert run_tool("echo", ("echo", "GPU 0"), 5.0) == "GPU 0\n"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sysfs": None}, "sysfs must be a str or a path, got NoneType None"),  # os's TypeError
        ({"sysfs": b"/sys"}, "sysfs must be a str or a path, got bytes b'/sys'"),
        ({"procfs": None}, "procfs must be a str or a path, got NoneType None"),  # read the cwd
        ({"procfs": 5}, "procfs must be a str or a path, got int 5"),
        ({"deadline": "soon"}, "deadline must be a time.monotonic() time or None, got str 'soon'"),
        ({"deadline": True}, "deadline must be a time.monotonic() time or None, got bool True"),
    ],
)
def test_snapshot_amd_wants_folders_and_a_deadline(options: dict[str, Any], message: str) -> None:
    trees = {"sysfs": str(AMD_SYSFS), "procfs": str(AMD_PROC)}
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        snapshot_amd(**(trees | options))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sysfs": "a\x00b"}, "sysfs must be a path without a NUL character"),  # os's error
        ({"procfs": "\x00"}, "procfs must be a path without a NUL character"),
        ({"deadline": math.nan}, "got nan"),  # (never passed: the search of /proc never ended)
    ],
)
def test_snapshot_amd_refuses_a_nul_in_a_tree_and_a_nan_deadline(
    options: dict[str, Any], message: str
) -> None:
    trees = {"sysfs": str(AMD_SYSFS), "procfs": str(AMD_PROC)}
    with pytest.raises(ValueError, match=re.escape(message)):
        snapshot_amd(**(trees | options))


def test_within_and_run_tool_check_their_functions_before_they_start() -> None:
    with pytest.raises(TypeError, match="function must be callable, got NoneType"):
        within(1.0, None, "a call")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hint must be a function or None, got int 5"):
        run_tool("sh", ["sh", "-c", "exit 3"], 5.0, hint=5)  # type: ignore[arg-type]


def test_snapshot_amd_takes_its_trees_as_paths() -> None:
    assert snapshot_amd(sysfs=AMD_SYSFS, procfs=AMD_PROC) == snapshot_amd(
        sysfs=str(AMD_SYSFS), procfs=str(AMD_PROC)
    )
