"""Tests for devutils gpu."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
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
    result = cli(["gpu"])
    assert result.status == 1
    assert "no GPU" in result.err
