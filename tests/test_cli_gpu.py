"""Tests for devutils gpu."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import Cli, FakeSmi


def test_gpu_cli(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    monkeypatch.setitem(sys.modules, "pynvml", None)  # force the nvidia-smi path
    result = cli(["gpu", "--json"])
    assert result.status == 0
    data = json.loads(result.text)
    assert data["gpus"][0]["memory_used"] == 32362 * 2**20
    table = cli(["gpu"])
    assert (
        table.text.splitlines()[0]
        == "GPU 0  NVIDIA H200  util 100%  mem 31.6/140.4 GiB  52C  627W  MIG Disabled"
    )
    assert table.text.splitlines()[1].startswith("  pid 10291  2566 MiB  ")
    csv_result = cli(["stat", "--csv", "--gpu", "-c", "0.05", "1"])
    assert (
        csv_result.text.splitlines()[0]
        == "epoch,cpu:usr,cpu:sys,cpu:idl,cpu:wai,cpu:stl,gpu0:util,gpu0:mem"
    )
    assert csv_result.text.splitlines()[1].endswith(f",100,{32362 * 2**20}")
    table_result = cli(["stat", "--gpu", "-c", "0.05", "1"])
    assert table_result.text.splitlines()[1].endswith("|util   mem")
    assert table_result.text.splitlines()[2].endswith("| 100   32G")


def test_gpu_cli_without_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli: Cli) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pynvml", None)
    result = cli(["gpu", "--backend", "nvml", "--backend", "nvidia-smi"])
    assert result.status == 1
    assert result.err == (
        "devutils gpu: no GPU: NVML: nvidia-ml-py is not installed (pip install "
        "nvidia-ml-py, what the [gpu] extra installs); nvidia-smi not found on PATH\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--count", "2"], "--count needs --watch"),
        (["--watch", "--json"], "--json and --watch"),
        (["--watch", "0"], "argument --watch: must be a positive number of seconds, got '0'"),
    ],
)
def test_gpu_flags_that_do_not_go_together_are_usage_errors(
    args: list[str], message: str, cli: Cli
) -> None:
    result = cli(["gpu", *args])
    assert result.status == 2
    assert result.err.startswith("devutils gpu: error: ")
    assert message in result.err


AMD_SYSFS = Path(__file__).parent / "fixtures" / "amd-sysfs"
AMD_PROC = Path(__file__).parent / "fixtures" / "amd-proc"


def test_the_same_columns_whatever_the_vendor(monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    from devutils import gpu

    monkeypatch.setattr(gpu, "SYSFS_PATH", str(AMD_SYSFS))
    monkeypatch.setattr(gpu, "PROCFS_PATH", str(AMD_PROC))
    table = cli(["gpu", "--backend", "amd"])
    assert table.status == 0
    assert (
        table.text.splitlines()[0] == "GPU 0  AMD GPU [1002:744c]  util 0%  mem 0.0/20.0 GiB  -  -"
    )
    assert table.text.splitlines()[2] == "GPU 1  AMD GPU [1002:67df]  util -  mem 6.3/8.0 GiB  -  -"
    data = json.loads(cli(["gpu", "--backend", "amd", "--json"]).text)
    first = data["gpus"][0]
    assert (first["vendor"], first["temperature"], first["unified_memory"]) == ("amd", None, False)
    assert set(first) >= {"index", "uuid", "name", "utilization", "memory_used", "memory_total"}
    stat = cli(["stat", "--gpu", "--csv", "-c", "0.05", "1"])
    assert stat.text.splitlines()[0].endswith(",gpu0:util,gpu0:mem,gpu1:util,gpu1:mem")
    assert stat.text.splitlines()[1].endswith(",0,27856896,,6812925952")


def run_gpu(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    completed: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, "-m", "devutils", "gpu", *args],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )
    return completed


def test_the_timeout_bounds_the_whole_wait(fake_smi: FakeSmi) -> None:
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    start = time.monotonic()
    result = run_gpu(["--timeout", "2", "--backend", "nvidia-smi"], env=dict(os.environ))
    took = time.monotonic() - start
    assert result.returncode == 1
    # after the time it was given: the timeout, less what starting took on a busy machine
    assert re.search(r"timed out after (2|1\.\d+) s and was killed", result.stderr)
    assert len(fake_smi.calls()) == 1  # one probe, not one per query
    assert 2 <= took < 60, f"{took:.1f} s"  # killed, not waited for


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll *condition* until it holds; fail naming *what* after *seconds*."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {seconds} s"
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)],
)
@pytest.mark.parametrize(
    "command", [["gpu", "--backend", "nvidia-smi"], ["stat", "--gpu", "--timeout", "600", "1", "1"]]
)
def test_a_signal_kills_the_hung_tool(
    fake_smi: FakeSmi, command: list[str], signum: int, status: int
) -> None:
    # SIGTERM and SIGHUP ended devutils at once, and the hung tool ran on (only the live
    # view on a terminal turned them into an unwinding, as Ctrl-C is).
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    process = subprocess.Popen(
        [sys.executable, "-m", "devutils", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for(lambda: bool(fake_smi.calls()), "nvidia-smi started")  # it logs, then sleeps
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    assert children  # nvidia-smi (the fake: a shell, sleeping) is running
    os.kill(process.pid, signum)  # only devutils: the tool is in a group of its own
    process.wait(timeout=60)
    # (stat ends with 0 on Ctrl-C, as documented, also while it probes the GPUs: it was 130)
    assert process.returncode == (0 if command[0] == "stat" and signum == signal.SIGINT else status)
    wait_for(lambda: not any(Path(f"/proc/{c}").exists() for c in children), "the tool killed")


def test_the_watch_prints_a_line_per_sample_when_not_a_terminal(fake_smi: FakeSmi) -> None:
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv", "h200__590.48.01__load__query-compute-apps.csv"
    )
    result = run_gpu(["--watch", "0.1", "--count", "3", "--backend", "nvidia-smi"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert all(
        line.endswith("GPU 0  NVIDIA H200  util 100%  mem 31.6/140.4 GiB  52C  627W  MIG Disabled")
        for line in lines
    )


def pane_when(tmux: list[str], session: str, done: Callable[[str], bool], *capture: str) -> str:
    """The tmux pane's text once *done* holds for it, polled (the test fails after a
    minute); *capture* adds options of ``tmux capture-pane``."""
    deadline = time.monotonic() + 60
    while True:
        screen = subprocess.run(
            [*tmux, "capture-pane", "-p", *capture, "-t", session],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if done(screen):
            return screen
        assert time.monotonic() < deadline, f"the pane after a minute:\n{screen}"
        time.sleep(0.05)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")
@pytest.mark.parametrize(("stop", "status"), [("q", 0), ("C-c", 0), ("SIGTERM", 143)])
def test_the_watch_redraws_in_a_real_terminal_and_restores_it(
    fake_smi: FakeSmi, tmp_path: Path, stop: str, status: int
) -> None:
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv", "h200__590.48.01__load__query-compute-apps.csv"
    )
    session = f"devutils-test-{os.getpid()}"
    socket = str(tmp_path / "tmux.sock")
    tmux = ["tmux", "-S", socket]
    # An interactive shell, as a user has: it gives the command a process group of its
    # own, so Ctrl-C reaches devutils alone and the shell is there to print the status.
    shell = "env PS1='$ ' bash --norc --noprofile -i"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", session, "-x", "100", "-y", "30", shell],
        check=True,
        env=dict(os.environ),
    )
    command = f"{sys.executable} -m devutils gpu --watch 0.2 --backend nvidia-smi; echo EXITED $?"
    subprocess.run([*tmux, "send-keys", "-t", session, command, "Enter"], check=True)

    try:
        screen = pane_when(
            tmux, session, lambda screen: "pid   10309" in screen and "q: quit" in screen
        )
        lines = screen.splitlines()
        assert lines[0].startswith("devutils gpu --watch 0.2")
        assert "GPU 0  NVIDIA H200  (nvidia, nvidia-smi)" in lines
        assert any(line.startswith("  util [") and line.endswith("] 100%") for line in lines)
        assert any(line.startswith("  mem  [") and "31.6/140.4 GiB" in line for line in lines)
        assert any(line.startswith("  hist |") and "█" in line for line in lines)
        assert any("pid   10309" in line and "28234 MiB" in line for line in lines)
        assert lines[-1].startswith("q: quit") or "q: quit" in screen
        if stop == "SIGTERM":  # as `kill` or `timeout` would: the shell's child
            import psutil

            pane = subprocess.run(
                [*tmux, "display-message", "-p", "-t", session, "#{pane_pid}"],
                capture_output=True,
                text=True,
                check=True,
            )
            for child in psutil.Process(int(pane.stdout)).children():
                child.send_signal(signal.SIGTERM)
        else:
            subprocess.run([*tmux, "send-keys", "-t", session, stop], check=True)
        # the typed command holds "EXITED $?" too: wait for the line the shell prints
        screen = pane_when(
            tmux, session, lambda screen: any(ln.startswith("EXITED ") for ln in screen.split("\n"))
        )
        assert f"EXITED {status}" in screen
        assert "hist |" not in screen  # the alternate screen is gone: the terminal is back
        stty = [*tmux, "send-keys", "-t", session, "stty -a; echo STTY", "Enter"]
        subprocess.run(stty, check=True)
        settings = pane_when(tmux, session, lambda screen: "\nSTTY" in screen)
        assert " echo " in settings.replace("\n", " ")  # echo and line editing are back
        assert " icanon " in settings.replace("\n", " ")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")
@pytest.mark.parametrize("term", ["tmux-256color", "dumb", "no-such-terminal"])
def test_the_watch_ends_after_its_count_in_any_terminal(
    fake_smi: FakeSmi, tmp_path: Path, term: str
) -> None:
    # --count ran out and the view waited for a key for ever; TERM=dumb or an unknown
    # TERM was a curses traceback. Now: the last view printed, or plain lines.
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    tmux = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    session = f"devutils-count-{os.getpid()}"
    shell = "env PS1='$ ' bash --norc --noprofile -i"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", session, "-x", "120", "-y", "30", shell],
        check=True,
        env=dict(os.environ),
    )
    command = (
        f"TERM={term} {sys.executable} -m devutils gpu --watch 0.1 --count 2"
        " --backend nvidia-smi; echo EXITED $?"
    )
    try:
        subprocess.run([*tmux, "send-keys", "-t", session, command, "Enter"], check=True)
        screen = pane_when(
            tmux,
            session,
            lambda screen: any(line.startswith("EXITED ") for line in screen.split("\n")),
            "-J",
            "-S",
            "-100",  # (the lines scrolled off the pane too, joined where they wrapped)
        )
        assert "EXITED 0" in screen
        assert "Traceback" not in screen
        if term == "tmux-256color":  # the last view, as plain lines
            assert "GPU 0  NVIDIA H200  (nvidia, nvidia-smi)" in screen
        else:  # a line per sample
            assert screen.count("GPU 0  NVIDIA H200  util 100%") == 2
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


# -- the live view's lines -------------------------------------------------------------------


@given(st.lists(st.none() | st.floats(-10, 110, allow_nan=False), max_size=50))
def test_the_sparkline_has_a_level_per_sample_and_a_space_where_unknown(
    values: list[float | None],
) -> None:
    from devutils.cli.gpu import SPARKS, sparkline

    line = sparkline(values)
    assert len(line) == len(values)
    for value, char in zip(values, line, strict=True):
        if value is None:
            assert char == " "
            continue
        share = max(0.0, min(100.0, value)) / 100
        assert char == SPARKS[round(share * (len(SPARKS) - 1))]
    # Higher is never drawn lower.
    known = sorted((v, SPARKS.index(c)) for v, c in zip(values, line, strict=True) if v is not None)
    assert [level for _, level in known] == sorted(level for _, level in known)


def test_the_view_of_an_idle_gpu_and_of_unified_memory() -> None:
    from devutils.cli.gpu import _view
    from devutils.gpu import GpuInfo

    nvidia = GpuInfo(0, "GPU-0", "NVIDIA H200", 0.0, 2**30, 4 * 2**30, 30.0, 70.0, None)
    apple = GpuInfo(
        0,
        "AGX",
        "Apple M2",
        None,
        3 * 2**29,
        None,
        None,
        None,
        None,
        vendor="apple",
        backend="apple",
        unified_memory=True,
    )
    history: dict[tuple[str, int], Any] = {}
    for _ in range(3):
        lines = _view([nvidia, apple], history, 80, 1.0)
    assert "  util [----------------------------------------]   0%" in lines
    assert "  mem  [##########------------------------------] 1.0/4.0 GiB" in lines
    assert lines.count("  hist |▁▁▁") == 1  # idle is the lowest level, not blank
    assert "  mem  1.5 GiB in use of the unified memory" in lines
    assert "  util [????????????????????????????????????????]    -" in lines
    assert lines.count("  hist |   ") == 1  # unknown utilization: blank
    # A narrower terminal keeps the latest samples that fit; a wider one keeps them all.
    narrow = _view([nvidia], history, 12, 1.0)
    assert "  hist |▁▁" in narrow
    wide = _view([nvidia], history, 80, 1.0)
    assert "  hist |▁▁▁" in wide
    assert len(history["nvidia", 0]) == 3


def test_json_has_the_same_keys_whatever_the_outcome(fake_smi: FakeSmi, cli: Cli) -> None:
    # With GPUs it was {"gpus": [...]} alone; without, "reason" and "reasons" too.
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    found = json.loads(cli(["gpu", "--backend", "nvidia-smi", "--json"]).text)
    assert (sorted(found), len(found["gpus"]), found["reason"]) == (
        ["gpus", "reason", "reasons"],
        1,
        "",
    )
    assert found["reasons"] == {"nvidia-smi": ""}
    fake_smi.serve("error__no-driver.txt", exit_status=9)
    none = json.loads(cli(["gpu", "--backend", "nvidia-smi", "--json"]).text)
    assert (sorted(none), none["gpus"]) == (["gpus", "reason", "reasons"], [])
    assert none["reason"].startswith("nvidia-smi failed with exit status 9")


def test_a_name_stdout_cannot_encode_is_escaped(fake_smi: FakeSmi, tmp_path: Path) -> None:
    # U+FFFD (a byte of the name that is not UTF-8) under EUC-JP: a UnicodeEncodeError.
    query = tmp_path / "query.csv"
    query.write_bytes(
        b"index, uuid, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], "
        b"temperature.gpu, power.draw [W], mig.mode.current\n"
        b"0, GPU-1, Caf\xff, 5 %, 1 MiB, 2 MiB, 30, 10 W, [N/A]\n"
    )
    env = {**os.environ, "FAKE_SMI_GPU": str(query), "PYTHONIOENCODING": "euc_jp"}
    completed = subprocess.run(
        [sys.executable, "-m", "devutils", "gpu", "--backend", "nvidia-smi"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, b"")
    assert completed.stdout.startswith(b"GPU 0  Caf\\ufffd  util 5%")


def test_stat_keeps_apart_an_nvidia_gpu_and_an_amd_card_of_the_same_number(
    monkeypatch: pytest.MonkeyPatch, fake_smi: FakeSmi, cli: Cli
) -> None:
    # Both are GPU 0: the AMD card's columns showed the H200's figures, under the same key
    from devutils import gpu

    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(AMD_SYSFS))
    monkeypatch.setattr(gpu, "PROCFS_PATH", str(AMD_PROC))
    stat = cli(["stat", "--gpu", "--csv", "-c", "0.05", "1"])
    header, row = stat.text.splitlines()[:2]
    keys = header.split(",")
    assert len(keys) == len(set(keys))
    assert header.endswith(",nvidia0:util,nvidia0:mem,amd0:util,amd0:mem,amd1:util,amd1:mem")
    assert row.split(",")[-4:] == ["0", "27856896", "", "6812925952"]  # the AMD cards' own
    assert row.split(",")[-6] == "100"  # the H200's
