"""Tests for devutils which-dstat."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.conftest import Cli


DOOL = f"""#!{sys.executable}
# Dool is a Python3 compatible fork of Dstat
VERSION = '1.3.8'
import sys
if '--version' in sys.argv:
    print('Dool 1.3.8')
"""


def test_which_dstat_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> None:
    dool = tmp_path / "dool"
    dool.write_text(DOOL)
    dool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = cli(["which-dstat"])
    assert result.status == 0
    assert "dstat: not on PATH" in result.text
    assert "dool: dool 1.3.8" in result.text
    data = json.loads(cli(["which-dstat", "--json"]).text)
    assert [d["flavor"] for d in data] == ["missing", "dool", "missing"]


def test_a_path_that_is_not_utf8_prints_under_a_strict_stdout(tmp_path: Path) -> None:
    # It was a UnicodeEncodeError traceback where stdout's encoding is strict UTF-8.
    folder = os.fsencode(tmp_path) + b"/bad\xff"
    os.mkdir(folder)
    script = folder + b"/dool"
    with open(script, "w") as handle:
        handle.write(DOOL)
    os.chmod(script, 0o755)
    env = {**os.environ, "PATH": os.fsdecode(folder), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "devutils", "which-dstat"], capture_output=True, env=env, check=False
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"bad\\xff/dool" in done.stdout


def test_sigterm_kills_a_version_still_running(tmp_path: Path) -> None:
    # SIGTERM ended which-dstat at once; the --version it ran, in a session of its own,
    # ran on.
    dstat = tmp_path / "dstat"
    dstat.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/pid\nexec sleep 300\n")
    dstat.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}
    process = subprocess.Popen([sys.executable, "-m", "devutils", "which-dstat"], env=env)
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "--version did not start"
        time.sleep(0.01)
    child = int(pid_file.read_text())
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 143
    deadline = time.monotonic() + 60
    while Path(f"/proc/{child}").exists() and "zombie" not in _state(child):
        assert time.monotonic() < deadline, "the --version was not killed"
        time.sleep(0.01)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"  # (gone meanwhile)
