"""Tests for devutils.which_dstat: the original dstat, pcp-dstat and dool told apart."""

from __future__ import annotations

import math
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.which_dstat import DstatInfo, which_dstat

ORIGINAL = """#!/usr/bin/python3
### This program is free software; you can redistribute it and/or modify
VERSION = '0.7.4'
import sys
class dstat:
    pass
class dstat_cpu(dstat):
    pass
if '--version' in sys.argv:
    print('Dstat 0.7.4')
"""


PCP = """#!/usr/bin/pmpython
# pcp-dstat: a rewrite of Dstat using Performance Co-Pilot
import sys
raise SystemExit("Traceback (most recent call last):\\n  ImportError: cpmapi")
"""


DOOL = """#!/usr/bin/env python3
# Dool is a Python3 compatible fork of Dstat
VERSION = '1.3.8'
import sys
if '--version' in sys.argv:
    print('Dool 1.3.8')
"""


def install(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(
        text.replace("#!/usr/bin/python3", f"#!{sys.executable}").replace(
            "#!/usr/bin/env python3", f"#!{sys.executable}"
        )
    )
    path.chmod(0o755)
    return path


def test_which_dstat_tells_the_three_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dstat", ORIGINAL)
    install(tmp_path, "dool", DOOL)
    monkeypatch.setenv("PATH", str(tmp_path))
    by_name = {info.command: info for info in which_dstat()}
    assert (by_name["dstat"].flavor, by_name["dstat"].version) == ("dstat", "0.7.4")
    assert (by_name["dool"].flavor, by_name["dool"].version) == ("dool", "1.3.8")
    assert by_name["pcp-dstat"].flavor == "missing"


def test_pcp_dstat_behind_a_symlink_with_crashing_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libexec = tmp_path / "libexec" / "pcp" / "bin"
    libexec.mkdir(parents=True)
    real = libexec / "pcp-dstat"
    real.write_text(PCP)
    real.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dstat").symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))
    info = which_dstat()[0]
    assert info.command == "dstat"
    assert info.flavor == "pcp-dstat"
    assert info.real_path == str(real)


def test_a_file_named_pcp_dstat_gives_its_own_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its --version crashes; the script's VERSION is still read.
    install(tmp_path, "pcp-dstat", PCP.replace("import sys", "VERSION = '6.2.0'\nimport sys"))
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat()[2]
    assert (info.command, info.flavor, info.version) == ("pcp-dstat", "pcp-dstat", "6.2.0")


def test_a_folder_named_pcp_does_not_outweigh_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any file under a folder named pcp (a checkout, ~/pcp/.venv/bin/dool) was pcp-dstat.
    folder = tmp_path / "pcp" / "bin"
    folder.mkdir(parents=True)
    install(folder, "dool", DOOL)
    plain = install(folder, "dstat", "#!/bin/sh\necho 'no such option'\n")
    monkeypatch.setenv("PATH", str(folder))
    by_name = {info.command: info for info in which_dstat()}
    assert (by_name["dool"].flavor, by_name["dool"].version) == ("dool", "1.3.8")
    # ...which still says pcp-dstat where the file says nothing else
    assert (by_name["dstat"].real_path, by_name["dstat"].flavor) == (str(plain), "pcp-dstat")


def test_a_failed_version_gives_no_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pcp-dstat that cannot reach pmcd was version 10.0.0.5, its host's address.
    failing = (
        'VERSION="6.2.0"\necho "pcp-dstat: cannot connect to pmcd on host 10.0.0.5" >&2\nexit 1'
    )
    install(tmp_path, "pcp-dstat", f"#!/bin/sh\n{failing}\n")
    install(tmp_path, "dstat", f"#!/bin/sh\n{failing.replace('pcp-', '')}\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    by_name = {info.command: info for info in which_dstat()}
    assert (by_name["pcp-dstat"].flavor, by_name["pcp-dstat"].version) == ("pcp-dstat", "6.2.0")
    assert by_name["dstat"].version == "6.2.0"


def test_pcp_dstat_by_shebang_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dstat", PCP)
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat()[0]
    assert info.flavor == "pcp-dstat"
    assert any("pmpython" in note for note in info.evidence)


HANGS = """#!/bin/sh
sleep 300 &
echo $! > "$CHILD_PID"
wait
"""


def test_a_version_that_hangs_is_killed_with_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The timeout killed the script only: the "sleep 300" it started ran on.
    psutil = pytest.importorskip("psutil")
    install(tmp_path, "dstat", HANGS)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("CHILD_PID", str(tmp_path / "child.pid"))
    (info,) = [info for info in which_dstat(timeout=2.0) if info.command == "dstat"]
    assert "--version timed out after 2 s" in info.evidence
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 10  # killed at once; its reaping may take a moment
    while True:
        try:
            if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        assert time.monotonic() < deadline, f"the script's child {child} still runs"
        time.sleep(0.01)


def test_a_version_is_not_read_from_an_error_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "/usr/bin/env: 'python2.7': No such file or directory" gave dstat "2.7".
    script = ORIGINAL.replace("VERSION = '0.7.4'", "VERSION = '0.7.3'")
    path = tmp_path / "dstat"
    path.write_text(script.replace("#!/usr/bin/python3", "#!/usr/bin/env python2.7-nowhere"))
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    (info,) = [info for info in which_dstat() if info.command == "dstat"]
    assert (info.flavor, info.version) == ("dstat", "0.7.3")


ESCAPES = """#!/bin/sh
setsid sh -c 'echo $$ > "$CHILD_PID"; exec sleep 300' &
while [ ! -s "$CHILD_PID" ]; do :; done
exec sleep 300
"""


def test_a_version_whose_child_left_the_session_is_still_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After the kill, waiting for the pipes to close waited for the escaped child: first
    # its 300 s, then 1 s more.
    install(tmp_path, "dstat", ESCAPES)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    child = tmp_path / "child.pid"
    monkeypatch.setenv("CHILD_PID", str(child))
    started = time.monotonic()
    try:
        which_dstat(timeout=1.0)
        assert time.monotonic() - started < 1.9
    finally:  # the child that left the session is this test's to end
        if child.exists() and child.read_text().strip():
            os.kill(int(child.read_text()), signal.SIGKILL)
    assert child.read_text().strip()  # it did start, and leave


def test_a_fifo_named_dstat_on_path_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "dstat"
    os.mkfifo(fifo)
    fifo.chmod(0o755)  # (which PATH lookups take for a command)
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat(timeout=60)[0]  # (opened for reading, it waited for a writer forever)
    assert (info.path, info.flavor) == (str(fifo), "unknown")
    assert f"{fifo} is not a regular file" in info.evidence


def test_a_version_that_prints_without_end_is_killed_once_its_first_line_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, "dstat", f"#!/bin/sh\nexec {shutil.which('yes')} 'Dstat 0.7.4'\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat(timeout=600)[0]  # (all of it was held, until the timeout)
    assert info.flavor == "dstat"
    assert info.version is None  # killed: no answer as a dstat gives one
    assert info.evidence[-1] == "--version says 'Dstat 0.7.4'"


@pytest.mark.parametrize(
    ("timeout", "error"),
    [
        ("5", TypeError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        (-1, ValueError),
        (None, TypeError),
    ],
)
def test_a_bad_timeout_is_refused(timeout: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="timeout must be"):
        which_dstat(timeout=timeout)  # type: ignore[arg-type]


# -- properties added for the standard ---

_BANNERS = {"dstat": "Dstat", "dool": "Dool", "pcp-dstat": "pcp-dstat"}
"""The first word each flavor's ``--version`` prints."""
_VERSIONS = st.lists(st.integers(0, 99), min_size=2, max_size=4).map(
    lambda parts: ".".join(map(str, parts))
)
_INSTALLED = st.none() | st.tuples(
    st.sampled_from(sorted(_BANNERS)), st.none() | _VERSIONS, st.none() | _VERSIONS
)
"""Nothing on PATH, or a script of a flavor that announces a version (or none) and may
hold a ``VERSION`` of its own."""


@given(st.fixed_dictionaries(dict.fromkeys(("dstat", "dool", "pcp-dstat"), _INSTALLED)))
def test_which_dstat_names_what_each_script_on_path_says_it_is(
    installed: dict[str, tuple[str, str | None, str | None] | None],
) -> None:
    with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"PATH": folder}):
        for command, script in installed.items():
            if script is not None:
                flavor, announced, own = script
                lines = ["#!/bin/sh"] + ([f"VERSION='{own}'"] if own else [])
                banner = " ".join([_BANNERS[flavor], *([announced] if announced else [])])
                install(Path(folder), command, "\n".join([*lines, f"echo '{banner}'", ""]))
        found = which_dstat()
        assert [info.command for info in found] == ["dstat", "dool", "pcp-dstat"]
        for info in found:
            script = installed[info.command]
            if script is None:
                assert (info.path, info.flavor, info.version) == (None, "missing", None)
                continue
            flavor, announced, own = script
            path = os.path.join(folder, info.command)
            assert (info.path, info.real_path) == (path, os.path.realpath(path))
            # The file decides first: a file named pcp-dstat is pcp-dstat; else the
            # script's markers (its banner's words), then its --version. The version is
            # the one --version reports, else the script's own VERSION.
            expected = "pcp-dstat" if info.command == "pcp-dstat" else flavor
            assert (info.flavor, info.version) == (expected, announced or own)


def banner(flavor: str, announced: str | None) -> str:
    """What a script of *flavor* prints for ``--version``: its name, and its version."""
    return " ".join([_BANNERS[flavor], *([announced] if announced else [])])


_FOLDERS = ["bin", "opt/dstat", "pcp/bin", "libexec/pcp/bin"]
"""Where a link on PATH may lead: plain folders, and folders named pcp."""
_TARGETS = st.none() | st.tuples(
    st.sampled_from(_FOLDERS),
    st.sampled_from(["dstat", "dool", "pcp-dstat", "dstat.py", "dool-1.3"]),
    st.sampled_from(sorted(_BANNERS)),
    st.none() | _VERSIONS,
)
"""Nothing on PATH, or a link to a script: its folder, its name, the flavor it announces
and the version it announces (or none)."""


@given(st.fixed_dictionaries(dict.fromkeys(("dstat", "dool", "pcp-dstat"), _TARGETS)))
def test_which_dstat_reports_the_file_a_link_on_path_resolves_to(
    linked: dict[str, tuple[str, str, str, str | None] | None],
) -> None:
    with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, {"PATH": root}):
        for command, target in linked.items():
            if target is not None:
                folder, name, flavor, announced = target
                where = Path(root, "files", command, folder)
                where.mkdir(parents=True)
                script = install(where, name, f"#!/bin/sh\necho '{banner(flavor, announced)}'\n")
                Path(root, command).symlink_to(script)
        for info in which_dstat():
            target = linked[info.command]
            if target is None:
                missing = DstatInfo(info.command, None, None, "missing", None, ("not on PATH",))
                assert info == missing
                continue
            folder, name, flavor, announced = target
            real = os.path.join(os.path.realpath(root), "files", info.command, folder, name)
            # The file the link resolves to decides: one named pcp-dstat is pcp-dstat,
            # else what the script says it is, wherever it lies (a folder named pcp too).
            # The version is the one its --version announces.
            expected = "pcp-dstat" if name == "pcp-dstat" else flavor
            path = os.path.join(root, info.command)
            assert info == DstatInfo(info.command, path, real, expected, announced, info.evidence)
            assert info.evidence[-1] == f"--version says {banner(flavor, announced)!r}"
