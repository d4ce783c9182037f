"""Tests for devutils which-dstat."""

from __future__ import annotations

import json
import sys
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
