"""Tests for devutils.gpu: nvidia-smi outputs captured on real machines, an NVML stand-in."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from devutils.gpu import gpu_probe, gpu_snapshot, parse_nvidia_smi_csv

if TYPE_CHECKING:
    from tests.conftest import Cli, FakePynvml, FakeSmi

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi"
MIB = 2**20
H200_PROCESSES = [(10291, 2566 * MIB), (10293, 1542 * MIB), (10309, 28234 * MIB)]


def test_h200_under_load(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert (gpu.index, gpu.name, gpu.uuid) == (
        0,
        "NVIDIA H200",
        "GPU-00000000-0000-0000-0000-000000000000",
    )
    assert gpu.utilization == 100.0
    assert gpu.memory_used == 32362 * 2**20
    assert gpu.memory_total == 143771 * 2**20
    assert (gpu.temperature, gpu.power_draw, gpu.mig_mode) == (52.0, 627.40, "Disabled")
    assert [p.pid for p in gpu.processes] == [10291, 10293, 10309]
    assert gpu.processes[2].used_memory == 28234 * 2**20
    assert gpu.processes[0].visible is False or gpu.processes[0].name is not None
    assert gpu_probe(backend="nvidia-smi").backend == "nvidia-smi"


def test_mig_utilization_is_none(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "h200-mig__590.48.01__load__query-gpu.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.utilization is None
    assert gpu.mig_mode == "Enabled"
    assert gpu.memory_used == 16959 * 2**20
    assert gpu.processes == ()


def test_windows_process_memory_is_none(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "windows-rtx-2080-super__591.86__load__query-gpu.csv",
        "windows-rtx-2080-super__591.86__load__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.mig_mode is None
    assert gpu.processes
    assert all(p.used_memory is None for p in gpu.processes)


def test_nounits_csv(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "netdata__tesla-p100__csv-nounits.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backend="nvidia-smi")
    assert gpu.name == "Tesla P100-PCIE-16GB"
    assert (gpu.utilization, gpu.memory_used, gpu.temperature, gpu.power_draw) == (
        0.0,
        0,
        37.0,
        28.16,
    )
    assert gpu.memory_total is None  # not in that query


@pytest.mark.parametrize(
    ("fixture", "status", "reason"),
    [
        ("error__no-driver.txt", 9, "no NVIDIA driver loaded"),
        ("error__driver-library-mismatch__exit18.txt", 18, "driver/library version mismatch"),
    ],
)
def test_driver_errors_give_empty_list_and_reason(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, fixture: str, status: int, reason: str
) -> None:
    fake_smi.serve(fixture, exit_status=status)
    assert gpu_snapshot(backend="nvidia-smi") == []
    probe = gpu_probe(backend="nvidia-smi")
    assert probe.backend is None
    assert f"exit status {status}" in probe.reason
    assert reason in probe.reason


def test_garbage_output(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("Segmentation fault\n\x00\x01 random bytes, more, fields\n")
    monkeypatch.setenv("FAKE_SMI_GPU", str(garbage))
    monkeypatch.setenv("FAKE_SMI_APPS", str(garbage))
    assert gpu_snapshot(backend="nvidia-smi") == []
    assert "not the expected CSV" in gpu_probe(backend="nvidia-smi").reason


def test_hung_nvidia_smi_is_killed_at_the_timeout(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    monkeypatch.setenv("FAKE_SMI_SLEEP", "30")
    start = time.monotonic()
    assert gpu_snapshot(timeout=0.5, backend="nvidia-smi") == []
    assert time.monotonic() - start < 5
    assert "timed out after 0.3 s" in gpu_probe(timeout=0.3, backend="nvidia-smi").reason


def test_no_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_snapshot(backend="nvidia-smi") == []
    assert "nvidia-smi not found on PATH" in gpu_probe(backend="nvidia-smi").reason
    monkeypatch.setitem(sys.modules, "pynvml", None)  # and no nvidia-ml-py either
    assert gpu_snapshot() == []
    reason = gpu_probe().reason
    assert "NVML: nvidia-ml-py is not installed" in reason
    assert "nvidia-smi not found on PATH" in reason


def test_fake_pynvml_has_the_real_modules_names(fake_pynvml: FakePynvml) -> None:
    real = pytest.importorskip("pynvml")  # nvidia-ml-py, in the test dependency group
    fake, _ = fake_pynvml()
    for name in vars(fake):
        if not name.startswith("__"):
            assert hasattr(real, name), name
    assert real.NVML_TEMPERATURE_GPU == fake.NVML_TEMPERATURE_GPU
    assert issubclass(real.NVMLError_NotSupported, real.NVMLError)


def test_nvml_reads_the_h200(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml, cli: Cli
) -> None:
    module, calls = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backend="nvml")
    assert (gpu.index, gpu.name, gpu.uuid) == (0, "NVIDIA H200", module.nvmlDeviceGetUUID(None))
    assert gpu.utilization == 100.0
    assert (gpu.memory_used, gpu.memory_total) == (32362 * MIB, 143771 * MIB)
    assert gpu.temperature == 52.0
    assert gpu.power_draw == pytest.approx(627.4)
    assert gpu.mig_mode == "Disabled"
    assert [(p.pid, p.used_memory) for p in gpu.processes] == H200_PROCESSES
    assert calls.count("nvmlInit") == calls.count("nvmlShutdown") == 1
    probe = gpu_probe()  # auto: NVML answers first
    assert (probe.backend, probe.gpus, probe.reason) == ("nvml", 1, "")
    result = cli(["stat", "--csv", "--gpu", "-c", "0.05", "1"])
    assert result.text.splitlines()[0].endswith(",gpu0:util,gpu0:mem")
    assert result.text.splitlines()[1].endswith(f",100,{32362 * MIB}")


def test_nvml_not_supported_is_none(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # MIG: no utilization; Windows (WDDM): no process memory; some boards: no power.
    unsupported = frozenset({"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetPowerUsage"})
    module, calls = fake_pynvml(unsupported=unsupported, mig=1, process_memory=[None] * 3)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backend="nvml")
    assert gpu.utilization is None
    assert gpu.power_draw is None
    assert gpu.mig_mode == "Enabled"
    assert gpu.memory_used == 32362 * MIB
    assert [p.used_memory for p in gpu.processes] == [None] * 3
    assert [p.pid for p in gpu.processes] == [pid for pid, _ in H200_PROCESSES]
    assert calls.count("nvmlShutdown") == 1


def test_nvml_failure_falls_back_to_nvidia_smi(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    module, calls = fake_pynvml(init_error="Driver Not Loaded")
    monkeypatch.setitem(sys.modules, "pynvml", module)
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    [gpu] = gpu_snapshot()
    assert gpu.memory_used == 32362 * MIB
    assert gpu_probe().backend == "nvidia-smi"
    assert "nvmlShutdown" not in calls  # init failed: nothing to shut down
    assert gpu_snapshot(backend="nvml") == []
    assert gpu_probe(backend="nvml").reason == "NVML: FakeNvmlError: Driver Not Loaded"
    fake_smi.serve("error__no-driver.txt", exit_status=9)
    reason = gpu_probe().reason
    assert reason.startswith("NVML: FakeNvmlError: Driver Not Loaded; ")
    assert "nvidia-smi" in reason


def test_parse_rejects_mismatched_rows() -> None:
    with pytest.raises(ValueError, match="line 2 has 1 fields"):
        parse_nvidia_smi_csv("index, name\n0\n")
    with pytest.raises(ValueError, match="not an nvidia-smi CSV header"):
        parse_nvidia_smi_csv((FIXTURES / "error__no-driver.txt").read_text())
