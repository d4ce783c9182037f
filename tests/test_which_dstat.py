"""Tests for devutils.which_dstat: the original dstat, pcp-dstat and dool told apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from devutils.which_dstat import which_dstat

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


def test_pcp_dstat_by_shebang_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "dstat", PCP)
    monkeypatch.setenv("PATH", str(tmp_path))
    info = which_dstat()[0]
    assert info.flavor == "pcp-dstat"
    assert any("pmpython" in note for note in info.evidence)
