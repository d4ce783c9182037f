"""Tests for devutils.gpu: nvidia-smi outputs captured on real machines, an NVML stand-in."""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devutils import gpu
from devutils.gpu import gpu_probe, gpu_snapshot, parse_ioreg, parse_nvidia_smi_csv
from devutils.gpuamd import snapshot_amd
from devutils.gpuinfo import GpuInfo, NoGpuFound
from devutils.gpunvidia import snapshot_smi

if TYPE_CHECKING:
    from tests.conftest import Cli, FakePynvml, FakeSmi


class BadRepr:
    """A value whose repr fails: a message that names it must not raise that."""

    def __repr__(self) -> str:
        raise RuntimeError


FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi"
MIB = 2**20
H200_PROCESSES = [(10291, 2566 * MIB), (10293, 1542 * MIB), (10309, 28234 * MIB)]


def test_h200_under_load(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )

    class Process:  # 10291 runs in another PID namespace; the others are python here
        def __init__(self, pid: int) -> None:
            if pid == 10291:
                raise psutil.NoSuchProcess(pid)

        def name(self) -> str:
            return "python"

    monkeypatch.setattr(psutil, "Process", Process)
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
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
    assert [(p.visible, p.name) for p in gpu.processes] == [
        (False, None),
        (True, "python"),
        (True, "python"),
    ]
    assert gpu_probe(backends=["nvidia-smi"]).backend == "nvidia-smi"


def test_process_names_are_not_asked_of_nvidia_smi(fake_smi: FakeSmi) -> None:
    # nvidia-smi does not quote its CSV: one process named "/opt/run,v2/train" split its
    # row in five, and every GPU's process list was lost (the names come from psutil)
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv", "h200__590.48.01__load__query-compute-apps.csv"
    )
    gpu_snapshot(backends=["nvidia-smi"])
    (apps,) = [call for call in fake_smi.calls() if "--query-compute-apps=" in call]
    fields = apps.split("--query-compute-apps=")[1].split()[0].split(",")
    assert fields == ["gpu_uuid", "pid", "used_gpu_memory"]


@pytest.mark.parametrize("apps", ["error__no-driver.txt", "netdata__tesla-p100__csv-nounits.csv"])
def test_gpus_are_kept_when_the_process_query_fails(fake_smi: FakeSmi, apps: str) -> None:
    # The GPUs were read; an answer to the second query that is not the processes' CSV
    # (or a timeout, or a failed run) lost them all: "no GPU: not a number: ...".
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv", apps)
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
    assert (gpu.name, gpu.memory_used, gpu.processes) == ("NVIDIA H200", 32362 * MIB, ())
    assert len(fake_smi.calls()) == 2


@pytest.mark.parametrize(
    "row",
    [
        f"GPU-x, {'9' * 400}, 5",  # a pid past a float: an OverflowError lost the GPUs
        f"GPU-x, 7, {'9' * 400}",  # the same for its memory
        "GPU-x, -5, 5",  # not a pid: GpuProcess(pid=-5)
        f"GPU-x, {2**32}, 5",
    ],
)
def test_gpus_are_kept_when_a_process_row_is_garbage(
    fake_smi: FakeSmi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: str
) -> None:
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    apps = tmp_path / "apps.csv"
    apps.write_text(f"gpu_uuid, pid, used_gpu_memory [MiB]\n{row}\n")
    monkeypatch.setenv("FAKE_SMI_APPS", str(apps))
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
    assert (gpu.name, gpu.processes) == ("NVIDIA H200", ())


def test_mig_utilization_is_none(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "h200-mig__590.48.01__load__query-gpu.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
    assert gpu.utilization is None
    assert gpu.mig_mode == "Enabled"
    assert gpu.memory_used == 16959 * 2**20
    assert gpu.processes == ()


def test_windows_process_memory_is_none(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "windows-rtx-2080-super__591.86__load__query-gpu.csv",
        "windows-rtx-2080-super__591.86__load__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
    assert gpu.mig_mode is None
    assert gpu.processes
    assert all(p.used_memory is None for p in gpu.processes)


def test_nounits_csv(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi.serve(
        "netdata__tesla-p100__csv-nounits.csv",
        "h200-mig__590.48.01__idle__query-compute-apps.csv",
    )
    (gpu,) = gpu_snapshot(backends=["nvidia-smi"])
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
    assert gpu_snapshot(backends=["nvidia-smi"]) == []
    probe = gpu_probe(backends=["nvidia-smi"])
    assert probe.backend is None
    assert f"exit status {status}" in probe.reason
    assert reason in probe.reason


def test_garbage_output(fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("Segmentation fault\n\x00\x01 random bytes, more, fields\n")
    monkeypatch.setenv("FAKE_SMI_GPU", str(garbage))
    monkeypatch.setenv("FAKE_SMI_APPS", str(garbage))
    assert gpu_snapshot(backends=["nvidia-smi"]) == []
    assert "not the expected CSV" in gpu_probe(backends=["nvidia-smi"]).reason


def test_hung_nvidia_smi_is_killed_at_the_timeout(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    monkeypatch.setenv("FAKE_SMI_SLEEP", "600")
    start = time.monotonic()
    assert gpu_snapshot(timeout=0.5, backends=["nvidia-smi"]) == []
    assert time.monotonic() - start < 60  # killed at the timeout, not waited for
    assert re.search(
        r"timed out after 0\.[23]\d* s", gpu_probe(timeout=0.3, backends=["nvidia-smi"]).reason
    )


def test_no_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_snapshot(backends=["nvidia-smi"]) == []
    assert "nvidia-smi not found on PATH" in gpu_probe(backends=["nvidia-smi"]).reason
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
    [gpu] = gpu_snapshot(backends=["nvml"])
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


def test_nvml_memory_used_leaves_out_what_the_driver_reserves(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # NVML's v1 memory info counts the driver's reserved memory as used: 32975 MiB where
    # nvidia-smi says 32362 (an idle GPU showed hundreds of MiB used).
    module, calls = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backends=["nvml"])
    assert gpu.memory_used == 32362 * MIB
    assert "nvmlDeviceGetMemoryInfo" not in calls
    # a driver without v2: v1's figure, the only one there is
    old, calls = fake_pynvml(unsupported=frozenset({"nvmlDeviceGetMemoryInfo_v2"}))
    monkeypatch.setitem(sys.modules, "pynvml", old)
    [gpu] = gpu_snapshot(backends=["nvml"])
    assert (gpu.memory_used, gpu.memory_total) == (32975 * MIB, 143771 * MIB)


def test_nvml_not_supported_is_none(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # MIG: no utilization; Windows (WDDM): no process memory; some boards: no power.
    unsupported = frozenset({"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetPowerUsage"})
    module, calls = fake_pynvml(unsupported=unsupported, mig=1, process_memory=[None] * 3)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    [gpu] = gpu_snapshot(backends=["nvml"])
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
    assert gpu_snapshot(backends=["nvml"]) == []
    assert gpu_probe(backends=["nvml"]).reason == "NVML: FakeNvmlError: Driver Not Loaded"
    fake_smi.serve("error__no-driver.txt", exit_status=9)
    reason = gpu_probe().reason
    assert reason.startswith("NVML: FakeNvmlError: Driver Not Loaded; ")
    assert "nvidia-smi" in reason


@pytest.mark.parametrize("order", [["nvml", "nvidia-smi"], ["nvidia-smi", "nvml"]])
def test_the_two_nvidia_backends_list_each_gpu_once_in_either_order(
    order: list[str], fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # With nvidia-smi asked first, NVML was asked too: every GPU listed twice.
    module, _ = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv",
        "h200__590.48.01__load__query-compute-apps.csv",
    )
    probe = gpu_probe(backends=order)
    assert (probe.backend, probe.gpus) == (order[0], 1)
    spoken = {"nvml": "NVML", "nvidia-smi": "nvidia-smi"}
    assert probe.reasons[order[1]] == (
        f"{spoken[order[1]]}: skipped, {spoken[order[0]]} answered for the same GPUs"
    )


def test_a_figure_past_what_a_float_holds_is_nvidia_smis_csv_reason(
    fake_smi: FakeSmi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An OverflowError came through as the reason, without naming nvidia-smi.
    query = tmp_path / "query.csv"
    query.write_text(
        "index, uuid, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], "
        "temperature.gpu, power.draw [W], mig.mode.current\n"
        f"0, GPU-1, X, 5 %, {'9' * 400} MiB, 2 MiB, 30, 10 W, [N/A]\n"
    )
    monkeypatch.setenv("FAKE_SMI_GPU", str(query))
    reason = gpu_probe(backends=["nvidia-smi"]).reason
    assert reason.startswith("nvidia-smi printed output that is not the expected CSV: ")


def test_parse_rejects_mismatched_rows() -> None:
    with pytest.raises(ValueError, match="line 2 has 1 fields"):
        parse_nvidia_smi_csv("index, name\n0\n")
    with pytest.raises(ValueError, match="not an nvidia-smi CSV header"):
        parse_nvidia_smi_csv((FIXTURES / "error__no-driver.txt").read_text())


_FIELDS = st.sampled_from(
    ["index", "uuid", "name", "utilization.gpu", "memory.used", "power.draw", "mig.mode.current"]
)
_CELLS = st.one_of(
    st.sampled_from(["[N/A]", "[Not Supported]", "[Unknown Error]"]),
    st.text(st.characters(codec="ascii", exclude_characters=',"\r\n'), min_size=1).map(
        lambda text: text.strip() or "0"
    ),
)


@given(
    st.lists(_FIELDS, min_size=2, max_size=6, unique=True),
    st.sampled_from(["", " [MiB]", " [%]", " [W]"]),
    st.data(),
)
def test_parse_csv_reads_back_what_nvidia_smi_writes(
    fields: list[str], unit: str, data: st.DataObject
) -> None:
    rows = data.draw(st.lists(st.lists(_CELLS, min_size=len(fields), max_size=len(fields))))
    text = "".join(", ".join(row) + "\n" for row in [[field + unit for field in fields], *rows])
    expected = [
        {
            field: None if cell[0] + cell[-1] == "[]" or cell in ("N/A", "Not Supported") else cell
            for field, cell in zip(fields, row, strict=True)
        }
        for row in rows
    ]
    assert parse_nvidia_smi_csv(text) == expected


def test_the_parsers_want_text() -> None:
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        parse_nvidia_smi_csv(b"index, name\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str, got NoneType None"):
        parse_ioreg(None)  # type: ignore[arg-type]


# -- AMD through sysfs, Apple through ioreg, the backends ----------------------------------------

AMD_SYSFS = Path(__file__).parent / "fixtures" / "amd-sysfs"
AMD_PROC = Path(__file__).parent / "fixtures" / "amd-proc"
IOREG = Path(__file__).parent / "fixtures" / "ioreg"


@pytest.fixture
def amd_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(AMD_SYSFS))
    monkeypatch.setattr(gpu, "PROCFS_PATH", str(AMD_PROC))


def test_amd_cards_from_sysfs(amd_tree: None) -> None:
    first, second = gpu_snapshot(backends=["amd"])
    assert (first.vendor, first.backend, first.index, first.uuid) == (
        "amd",
        "amd",
        0,
        "0000:08:00.0",
    )
    assert first.name == "AMD GPU [1002:744c]"  # no product_name file: the PCI ids
    assert (first.utilization, first.memory_used, first.memory_total) == (
        0.0,
        27856896,
        21458059264,
    )
    assert (first.temperature, first.power_draw, first.mig_mode) == (None, None, None)
    (process,) = first.processes  # one client, through two descriptors: counted once
    assert (process.pid, process.used_memory) == (2217, 2068 * 1024)  # VRAM, as nvtop
    assert (second.utilization, second.memory_used) == (None, 6812925952)  # EOPNOTSUPP: None
    assert second.processes == ()
    probe = gpu_probe(backends=["amd"])
    assert (probe.backend, probe.gpus, probe.reason) == ("amd", 2, "")


def test_amd_process_memory_in_each_fdinfo_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key sets each kernel writes (synthetic values): amdgpu before Linux 5.19 ("pdev",
    # "vram mem" in kB, no client id), the generic DRM keys, and another driver's client.
    formats = {
        "300": "pdev:\t0000:08:00.0\npasid:\t32770\nvram mem:\t4096 kB\ngtt mem:\t512 kB\n",
        "301": "drm-driver:\tamdgpu\ndrm-pdev:\t0000:08:00.0\ndrm-client-id:\t9\n"
        "drm-resident-vram:\t3 MiB\ndrm-total-gtt:\t9 MiB\n",
        "302": "drm-driver:\ti915\ndrm-pdev:\t0000:00:02.0\ndrm-client-id:\t4\n",
    }
    for pid, text in formats.items():
        (tmp_path / pid / "fdinfo").mkdir(parents=True)
        (tmp_path / pid / "fdinfo" / "5").write_text(text)
    # one client of the old kernels through two descriptors: its pasid names it, once
    # (each descriptor counted, it was 8 MiB)
    (tmp_path / "300" / "fdinfo" / "6").write_text(formats["300"])
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(AMD_SYSFS))
    monkeypatch.setattr(gpu, "PROCFS_PATH", str(tmp_path))
    first, second = gpu_snapshot(backends=["amd"])
    assert [(p.pid, p.used_memory) for p in first.processes] == [(300, 4 * MIB), (301, 3 * MIB)]
    assert second.processes == ()


def test_amd_hwmon_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Synthetic values, for the units the kernel documents: millidegrees, microwatts.
    device = tmp_path / "class" / "drm" / "card0" / "device"
    (device / "hwmon" / "hwmon3").mkdir(parents=True)
    (device / "vendor").write_text("0x1002\n")
    (device / "product_name").write_text("AMD Radeon RX 7900 XT\n")
    (device / "hwmon" / "hwmon3" / "temp1_input").write_text("65500\n")
    (device / "hwmon" / "hwmon3" / "power1_average").write_text("85000000\n")
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(tmp_path))
    (card,) = gpu_snapshot(backends=["amd"], processes=False)
    assert (card.name, card.temperature, card.power_draw) == ("AMD Radeon RX 7900 XT", 65.5, 85.0)
    assert (card.memory_used, card.uuid) == (None, "card0")


def test_amd_garbage_and_absence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = tmp_path / "class" / "drm" / "card0" / "device"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x1002\n")
    (device / "gpu_busy_percent").write_text("busy\n")
    (device / "mem_info_vram_used").write_bytes(b"\xff\xfe")
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(tmp_path))
    (card,) = gpu_snapshot(backends=["amd"])
    assert (card.utilization, card.memory_used) == (None, None)
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(tmp_path / "nothing"))
    probe = gpu_probe(backends=["amd"])
    assert probe.snapshot == ()
    assert probe.reason.startswith("AMD (sysfs): no DRM devices")


def test_other_vendors_are_named_in_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intel = AMD_SYSFS / "class" / "drm" / "card2"
    drm = tmp_path / "class" / "drm"
    drm.mkdir(parents=True)
    (drm / "card2").symlink_to(intel)
    monkeypatch.setattr(gpu, "SYSFS_PATH", str(tmp_path))
    assert gpu_probe(backends=["amd"]).reason == (
        "AMD (sysfs): no AMD GPU among the DRM cards (found: card2 is intel (0x8086:0x46a6))"
    )


FAKE_IOREG = """#!/bin/sh
if [ -n "$FAKE_IOREG_SLEEP" ]; then sleep "$FAKE_IOREG_SLEEP"; fi
cat "$FAKE_IOREG_OUTPUT"
"""


class FakeIoreg:
    """An ``ioreg`` on PATH that prints the M1 capture, or the text given to `serve`."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        self.monkeypatch = monkeypatch

    def serve(self, text: str) -> None:
        output = self.folder / "ioreg-output.txt"
        output.write_text(text)
        self.monkeypatch.setenv("FAKE_IOREG_OUTPUT", str(output))


@pytest.fixture
def fake_ioreg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeIoreg:
    script = tmp_path / "bin" / "ioreg"
    script.parent.mkdir(exist_ok=True)
    script.write_text(FAKE_IOREG)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_IOREG_OUTPUT", str(IOREG / "m1-pro__exelban-stats-1094.txt"))
    monkeypatch.delenv("FAKE_IOREG_SLEEP", raising=False)
    return FakeIoreg(tmp_path, monkeypatch)


def test_apple_silicon_through_ioreg(fake_ioreg: FakeIoreg) -> None:
    (m1,) = gpu_snapshot(backends=["apple"])
    assert (m1.vendor, m1.backend, m1.name) == ("apple", "apple", "AGXAcceleratorG13X")
    assert (m1.utilization, m1.memory_used, m1.memory_total) == (2.0, 340983808, None)
    assert m1.unified_memory
    assert (m1.temperature, m1.power_draw) == (None, None)


def test_apple_clients_are_its_processes(fake_ioreg: FakeIoreg) -> None:
    # The registry's shape for a client (`ioreg -r -d 2`): an AGXDeviceUserClient under
    # the accelerator, with "IOUserClientCreator" = "pid N, name" (synthetic values).
    capture = (IOREG / "m1-pro__exelban-stats-1094.txt").read_text()
    client = (
        "    +-o AGXDeviceUserClient  <class AGXDeviceUserClient, id 0x1000008a1>\n"
        '        {\n          "IOUserClientCreator" = "pid 4242, python3.11"\n        }\n'
    )
    fake_ioreg.serve(capture + client)
    (m1,) = gpu_snapshot(backends=["apple"])
    assert [(p.pid, p.name, p.used_memory) for p in m1.processes] == [(4242, "python3.11", None)]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("garbage\n", "Apple (ioreg): ioreg: no accelerator with PerformanceStatistics"),
        ('+-o AGXAcceleratorG13X  <class>\n    {\n      "model" = "x"\n', "no accelerator"),
    ],
)
def test_apple_garbage_and_missing_keys(
    fake_ioreg: FakeIoreg,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    content: str,
    reason: str,
) -> None:
    fake_ioreg.serve(content)
    probe = gpu_probe(backends=["apple"])
    assert probe.snapshot == ()
    assert reason in probe.reason


def test_apple_later_chips_by_their_model(fake_ioreg: FakeIoreg) -> None:
    # No full public capture of an M2- or M3-class Mac was found (tests/fixtures/ioreg/
    # SOURCES.md): a synthetic listing in the shape of the M1 capture, with the class names
    # later chips register (AGXAcceleratorG14G, G15X), their "model" and the tree-drawing
    # "|" that `ioreg -d 2` puts before nested lines.
    fake_ioreg.serve(
        "+-o AGXAcceleratorG14G  <class AGXAcceleratorG14G, id 0x1000002d5, registered>\n"
        '    {\n      "model" = "Apple M2"\n'
        '      "PerformanceStatistics" = {"In use system memory"=2684354560,'
        '"Device Utilization %"=12}\n    }\n'
        "+-o AGXAcceleratorG15X  <class AGXAcceleratorG15X, id 0x100000301, registered>\n"
        '  | {\n  |   "model" = "Apple M3 Max"\n'
        '  |   "PerformanceStatistics" = {"Device Utilization %"=97,"In use system memory"=1}\n'
        "  | }\n"
    )
    found = gpu_snapshot(backends=["apple"])
    assert [(g.index, g.name, g.utilization, g.memory_used) for g in found] == [
        (0, "Apple M2", 12.0, 2684354560),
        (1, "Apple M3 Max", 97.0, 1),
    ]


_KEYS = st.one_of(
    st.sampled_from(["Device Utilization %", "In use system memory", "recoveryCount"]),
    st.text(st.characters(codec="ascii", exclude_characters='"{}\r\n'), min_size=1),
)
_ACCELERATORS = st.lists(
    st.tuples(
        st.sampled_from(["AGXAcceleratorG13X", "AGXAcceleratorG14G", "AGXAcceleratorG15X"]),
        st.none() | st.text(st.characters(codec="ascii", exclude_characters='"\r\n')),
        st.dictionaries(_KEYS, st.integers(-(2**40), 2**40), max_size=6),
        st.lists(
            st.tuples(
                st.integers(1, 99999),
                st.text(st.characters(codec="ascii", exclude_characters='"\r\n')),
            ),
            max_size=3,
        ),
    ),
    min_size=1,
    max_size=3,
)


@given(_ACCELERATORS, st.sampled_from(["    ", "  | "]))
def test_parse_ioreg_reads_back_each_accelerator_and_its_clients(
    accelerators: list[tuple[str, str | None, dict[str, int], list[tuple[int, str]]]],
    margin: str,
) -> None:
    # The shape `ioreg -r -d 2 -w 0 -c IOAccelerator` prints: each accelerator's
    # properties, then its user clients one level down, each naming its creator.
    listing = ""
    for name, model, statistics, clients in accelerators:
        numbers = ",".join(f'"{key}"={value}' for key, value in statistics.items())
        listing += f"+-o {name}  <class {name}, id 0x1000002d5, registered>\n{margin}{{\n"
        listing += "" if model is None else f'{margin}  "model" = "{model}"\n'
        listing += f'{margin}  "PerformanceStatistics" = {{{numbers}}}\n{margin}}}\n'
        for pid, creator in clients:
            listing += "  +-o AGXDeviceUserClient  <class AGXDeviceUserClient, id 0x1>\n"
            listing += f'      {{\n        "IOUserClientCreator" = "pid {pid}, {creator}"\n'
            listing += "      }\n"
    found = parse_ioreg(listing)
    assert found == [
        {"class": name, "model": model, "statistics": statistics, "clients": clients}
        for name, model, statistics, clients in accelerators
    ]


_IOREG_TEXT = st.text(st.characters(codec="ascii", exclude_characters='"\r\n'))


@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.dictionaries(_KEYS, st.integers(-(2**40), 2**40), max_size=4),
            st.dictionaries(_KEYS, _IOREG_TEXT, max_size=3),
            st.lists(st.integers(1, 99999), max_size=2),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_parse_ioreg_reads_numbers_past_any_string_and_clients_by_their_accelerator(
    entries: list[tuple[bool, dict[str, int], dict[str, str], list[int]]],
) -> None:
    # Strings in the statistics may hold `}`, `,` and `=`; an accelerator without
    # statistics is left out with its clients (they are not the one's above it).
    listing = ""
    expected: list[dict[str, Any]] = []
    for number, (listed, statistics, strings, pids) in enumerate(entries):
        name = f"AGXAccelerator{number}"
        listing += f"+-o {name}  <class {name}>\n  {{\n"
        numbers = {key: value for key, value in statistics.items() if key not in strings}
        if listed:
            pairs = [f'"{key}"="{value}"' for key, value in strings.items()]
            pairs[len(pairs) // 2 : len(pairs) // 2] = [f'"{k}"={v}' for k, v in numbers.items()]
            listing += f'    "PerformanceStatistics" = {{{",".join(pairs)}}}\n'
            expected.append({"class": name, "model": None, "statistics": numbers, "clients": []})
        listing += "  }\n"
        for pid in pids:
            listing += "  | +-o AGXDeviceUserClient  <class AGXDeviceUserClient>\n"
            listing += f'  |     "IOUserClientCreator" = "pid {pid}, app"\n'
            if listed:
                expected[-1]["clients"].append((pid, "app"))
    if not expected:
        with pytest.raises(ValueError, match="no accelerator"):
            parse_ioreg(listing)
        return
    assert parse_ioreg(listing) == expected


def test_an_intel_macs_gpus_are_named_by_their_driver(fake_ioreg: FakeIoreg) -> None:
    # The class names and header lines of an Intel Mac's iGPU and Radeon as pasted in
    # exelban/stats#649 and #173; the statistics are synthetic, under the keys the AMD
    # driver reports (inUseVidMemoryBytes, Temperature(C), Total Power(W)), which
    # ur-grue/toptop#90 reads on a Radeon Pro 5700 XT.
    fake_ioreg.serve(
        "+-o IntelAccelerator  <class IntelAccelerator, id 0x100000412, registered>\n"
        '    {\n      "PerformanceStatistics" = {"Device Utilization %"=4,'
        '"In use system memory"=536870912}\n    }\n'
        "+-o AMDRadeonX6000_AMDNavi14GraphicsAccelerator  <class AMDRadeonX6000_AMDNavi14"
        "GraphicsAccelerator, id 0x100000727, registered>\n"
        '    {\n      "PerformanceStatistics" = {"Device Utilization %"=31,'
        '"inUseVidMemoryBytes"=2469606195,"Temperature(C)"=65,"Total Power(W)"=15}\n    }\n'
    )
    intel, radeon = gpu_snapshot(backends=["apple"])
    assert (intel.vendor, intel.unified_memory, intel.memory_used) == ("intel", True, 2**29)
    assert (radeon.vendor, radeon.unified_memory, radeon.memory_used) == ("amd", False, 2469606195)
    assert (radeon.utilization, radeon.temperature, radeon.power_draw) == (31.0, 65.0, 15.0)
    assert (intel.temperature, intel.power_draw, radeon.memory_total) == (None, None, None)


def test_apple_missing_statistics_are_none(fake_ioreg: FakeIoreg) -> None:
    fake_ioreg.serve('+-o AGXAcceleratorG13G  <class>\n  "PerformanceStatistics" = {"x"=1}\n')
    (gpu_,) = gpu_snapshot(backends=["apple"])
    assert (gpu_.utilization, gpu_.memory_used) == (None, None)


@pytest.mark.parametrize("backend", ["apple", "nvidia-smi"])
def test_a_hung_tool_is_killed_at_the_timeout(
    backend: str, fake_ioreg: FakeIoreg, fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_IOREG_SLEEP", "600")
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    start = time.monotonic()
    probe = gpu_probe(timeout=0.5, backends=[backend])
    assert time.monotonic() - start < 60  # killed at the timeout, not waited for
    assert re.search(r"timed out after 0\.[45]\d* s and was killed", probe.reason)


def test_a_backend_is_not_asked_once_the_timeout_is_used_up(
    fake_ioreg: FakeIoreg, fake_smi: FakeSmi
) -> None:
    # Each backend after the deadline was given a tenth of a second more: ioreg answered.
    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    probe = gpu_probe(timeout=0.3, backends=["nvidia-smi", "apple"])
    assert probe.gpus == 0
    assert probe.reasons["apple"] == (
        "Apple (ioreg): not asked: the timeout (0.3 s) was used up before it"
    )
    assert "nvidia-smi timed out after 0.3 s" in probe.reasons["nvidia-smi"]


def test_a_hung_nvml_or_sysfs_read_is_given_up_on(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    module, _ = fake_pynvml()
    release = threading.Event()

    def hang() -> int:
        release.wait(600)  # until the test has its answer
        return 1

    monkeypatch.setattr(module, "nvmlDeviceGetCount", hang)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    start = time.monotonic()
    try:
        probe = gpu_probe(timeout=0.3, backends=["nvml"])
    finally:
        release.set()
    assert time.monotonic() - start < 60  # given up on, not waited for
    assert probe.reason == "NVML: NVML did not answer within 0.3 s"


def test_backends_are_checked(fake_smi: FakeSmi) -> None:
    with pytest.raises(ValueError, match="unknown backend 'cuda': the backends are nvml"):
        gpu_snapshot(backends=["cuda"])
    with pytest.raises(TypeError, match="backends must be a sequence"):
        gpu_snapshot(backends="amd")
    with pytest.raises(TypeError, match="timeout must be a number"):
        gpu_snapshot(timeout="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        gpu_snapshot(timeout=0)
    with pytest.raises(TypeError, match="processes must be a bool, got str 'yes'"):
        gpu_probe(processes="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="processes must be a bool, got NoneType None"):
        gpu_snapshot(processes=None)  # type: ignore[arg-type]


def test_every_vendor_has_the_same_fields(
    fake_ioreg: FakeIoreg, amd_tree: None, fake_smi: FakeSmi
) -> None:
    fake_smi.serve(
        "h200__590.48.01__load__query-gpu.csv", "h200__590.48.01__load__query-compute-apps.csv"
    )
    everyone = gpu_snapshot(backends=["nvidia-smi", "amd", "apple"])
    assert [g.vendor for g in everyone] == ["nvidia", "amd", "amd", "apple"]
    assert len({tuple(sorted(dataclasses.asdict(g))) for g in everyone}) == 1


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_ctrl_c_while_the_tool_starts_still_kills_it(
    fake_smi: FakeSmi, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    fake_smi.serve("h200__590.48.01__load__query-gpu.csv")
    fake_smi.hang(600)
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process = real_popen(*args, **kwargs)
        started.append(process)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C before Popen has returned
        return process

    monkeypatch.setattr(subprocess, "Popen", popen)
    release = threading.Event()
    bystander = threading.Thread(target=release.wait)  # another thread may take the signal
    bystander.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            gpu_probe(timeout=60, backends=["nvidia-smi"])
    finally:
        release.set()
        bystander.join()
    (process,) = started
    assert process.returncode is not None  # killed and reaped, not left running


# -- what the backends meet now and then ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("index, name\r0, X\r", "not a CSV"),  # csv.Error escaped: a stray carriage return
        ("index, index\n0, 1\n", "a name given twice"),
        ("NVIDIA-SMI has failed because it couldn't communicate\n", "not an nvidia-smi CSV"),
    ],
)
def test_csv_that_is_not_nvidia_smis_is_a_value_error(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_nvidia_smi_csv(text)


def test_a_one_column_query_and_a_bom_parse() -> None:
    # `nvidia-smi --query-gpu=name --format=csv` was refused as no header.
    assert parse_nvidia_smi_csv("name\nNVIDIA H200\n") == [{"name": "NVIDIA H200"}]
    assert parse_nvidia_smi_csv("\ufeffindex, name\n0, X\n") == [{"index": "0", "name": "X"}]


def test_one_lost_gpu_leaves_the_others(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # NVML's "Unable to determine the device handle" for one GPU lost them all.
    module, _ = fake_pynvml()
    module.nvmlDeviceGetCount = lambda: 2

    def handle(index: int) -> Any:
        if index == 1:
            raise module.NVMLError("GPU is lost")
        return ("h", index)

    module.nvmlDeviceGetHandleByIndex = handle
    monkeypatch.setitem(sys.modules, "pynvml", module)
    assert [gpu.name for gpu in gpu_snapshot(backends=["nvml"])] == ["NVIDIA H200"]


def test_an_nvml_start_that_hangs_is_given_up_on(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # nvml_session() started NVML in the main thread, with no time limit.
    module, _ = fake_pynvml()
    release = threading.Event()
    module.nvmlInit = lambda: release.wait(60)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    try:
        started = time.monotonic()
        with gpu.nvml_session(timeout=0.2):
            pass
        assert time.monotonic() - started < 30
    finally:
        release.set()


def test_an_nvml_start_that_comes_too_late_is_undone(
    monkeypatch: pytest.MonkeyPatch, fake_pynvml: FakePynvml
) -> None:
    # The session gave up on it, and NVML stayed started once more than it was shut down.
    module, calls = fake_pynvml()
    release, done = threading.Event(), threading.Event()

    def slow_init() -> None:
        release.wait(60)
        calls.append("nvmlInit")

    def shutdown() -> None:
        calls.append("nvmlShutdown")
        done.set()

    module.nvmlInit, module.nvmlShutdown = slow_init, shutdown
    monkeypatch.setitem(sys.modules, "pynvml", module)
    with gpu.nvml_session(timeout=0.1):
        release.set()  # it starts now, after the session gave up on it
    assert done.wait(60)
    assert calls.count("nvmlInit") == calls.count("nvmlShutdown") == 1


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"timeout": 2.2e6}, ValueError),  # past what a wait on a tool takes: []
        ({"timeout": 10**400}, ValueError),  # an OverflowError
        ({"backends": b"nvml"}, TypeError),  # "unknown backend 110"
        ({"backends": [1]}, TypeError),
        ({"backends": ()}, ValueError),  # found nothing, and said nothing why
        ({"processes": 10**5000}, TypeError),  # "Exceeds the limit (4300 digits)"
        ({"backends": [10**5000]}, TypeError),  # the same
        ({"backends": [BadRepr()]}, TypeError),  # the repr's own error
        ({"backends": BadRepr()}, TypeError),
    ],
)
def test_bad_probe_arguments_are_refused(options: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        gpu_probe(**options)


def test_a_tool_killed_by_a_signal_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\nkill -9 $$\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    probe = gpu_probe(backends=["nvidia-smi"])
    assert probe.reason == "nvidia-smi was killed by signal 9"  # (was "exit status -9")


# -- properties added for the standard ---

_AMD_CARDS = st.dictionaries(
    st.integers(0, 11),
    st.fixed_dictionaries(
        {
            "vendor": st.sampled_from(["0x1002"] * 5 + ["0x10de", "0x8086", "garbage"]),
            "device": st.sampled_from(["0x744c", "0x73bf", "0x46a6"]),
            "slot": st.sampled_from([True, True, True, False]),
            "product": st.none() | st.text("AMD Radeon RX7900XT ", max_size=12),
            "busy": st.none() | st.integers(0, 100) | st.just("busy"),
            "used": st.none() | st.integers(0, 2**40),
            "total": st.none() | st.integers(0, 2**40),
            "sensor": st.none()
            | st.tuples(*[st.none() | st.integers(0, 10**9)] * 3),  # temp, average, input
        }
    ),
    max_size=4,
)
_VRAM_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "": 1}
"""The units a client's VRAM comes in (none: bytes)."""
_VRAM_KEYS = ["drm-memory-vram", "drm-resident-vram", "vram mem", "i915"]
"""How a client says its VRAM: amdgpu's key, the generic DRM key, the old kernels' key
(in kB), or a client of another driver's (not counted)."""


def _amd_clients(cards: list[int]) -> st.SearchStrategy[dict[int, list[Any]]]:
    """Pids, each with its clients, each through one or more descriptors."""
    client = st.tuples(
        st.sampled_from([*cards, *cards, 99]),  # the card whose slot it names (99: none's)
        st.sampled_from(_VRAM_KEYS),
        st.integers(0, 5000),
        st.sampled_from(sorted(_VRAM_UNITS)),
        st.integers(1, 3),
    )
    pids = st.integers(100, 140)
    return st.dictionaries(pids, st.lists(client, min_size=1, max_size=3), min_size=1, max_size=4)


def _slot(number: int) -> str:
    return f"0000:{number + 3:02x}:00.0"


def _write_amd_card(device: Path, number: int, card: dict[str, Any]) -> None:
    """One card's files, as the amdgpu driver writes them."""
    device.mkdir(parents=True)
    files = {"vendor": card["vendor"], "device": card["device"]}
    files |= {"product_name": card["product"], "gpu_busy_percent": card["busy"]}
    files |= {"mem_info_vram_used": card["used"], "mem_info_vram_total": card["total"]}
    if card["slot"]:
        files["uevent"] = f"DRIVER=amdgpu\nPCI_SLOT_NAME={_slot(number)}\nMODALIAS=pci:v1002"
    if card["sensor"] is not None:
        (device / "hwmon" / "hwmon3").mkdir(parents=True)
        names = ["temp1_input", "power1_average", "power1_input"]
        files |= {f"hwmon/hwmon3/{name}": v for name, v in zip(names, card["sensor"], strict=True)}
    for name, value in files.items():
        if value is not None:
            (device / name).write_text(f"{value}\n")


def _write_amd_clients(proc: Path, clients: dict[int, list[Any]]) -> None:
    """Each pid's clients as the files of its ``fdinfo``, one a descriptor."""
    (proc / "self").mkdir(parents=True)  # (not a pid: not searched)
    for pid, listed in clients.items():
        fdinfo = proc / str(pid) / "fdinfo"
        fdinfo.mkdir(parents=True)
        descriptors = itertools.count(3)
        for client, (number, key, amount, unit, copies) in enumerate(listed):
            if key == "vram mem":  # before Linux 5.19: no driver, no client id (its pasid)
                text = f"pdev:\t{_slot(number)}\npasid:\t{pid * 10 + client}\n"
                text += f"vram mem:\t{amount} kB\ngtt mem:\t9 kB\n"
            else:
                driver, vram = ("i915", "drm-memory-vram") if key == "i915" else ("amdgpu", key)
                text = f"drm-driver:\t{driver}\ndrm-pdev:\t{_slot(number)}\n"
                text += f"drm-client-id:\t{pid * 10 + client}\n{vram}:\t{amount} {unit}\n"
            for descriptor in itertools.islice(descriptors, copies):
                (fdinfo / str(descriptor)).write_text(text)


@given(cards=_AMD_CARDS, processes=st.sampled_from([True, True, True, False]), data=st.data())
def test_snapshot_amd_reads_back_a_generated_tree(
    cards: dict[int, dict[str, Any]], processes: bool, data: st.DataObject
) -> None:
    clients = data.draw(_amd_clients(sorted(cards)))
    with tempfile.TemporaryDirectory() as folder:
        sysfs, procfs = Path(folder) / "sys", Path(folder) / "proc"
        drm = sysfs / "class" / "drm"
        for number, card in cards.items():
            _write_amd_card(drm / f"card{number}" / "device", number, card)
            (drm / f"card{number}-DP-1").mkdir()  # (a connector: no card)
        drm.mkdir(parents=True, exist_ok=True)
        (drm / "renderD128").mkdir()
        _write_amd_clients(procfs, clients)
        amd = sorted(number for number, card in cards.items() if card["vendor"] == "0x1002")
        if not amd:
            with pytest.raises(NoGpuFound, match=r"^no AMD GPU among the DRM cards"):
                snapshot_amd(sysfs=str(sysfs), procfs=str(procfs))
            return
        found = snapshot_amd(processes=processes, sysfs=str(sysfs), procfs=str(procfs))
    assert [info.index for info in found] == amd  # by card number, AMD's alone
    for info in found:
        card = cards[info.index]
        temperature, average, power = card["sensor"] or (None, None, None)
        power = average if average is not None else power
        busy = card["busy"] if isinstance(card["busy"], int) else None
        ids = f"{card['vendor']}:{card['device']}".replace("0x", "")
        assert info == GpuInfo(
            index=info.index,
            uuid=_slot(info.index) if card["slot"] else f"card{info.index}",
            name=(card["product"] or "").strip() or f"AMD GPU [{ids}]",
            utilization=None if busy is None else float(busy),
            memory_used=card["used"],
            memory_total=card["total"],
            temperature=None if temperature is None else temperature / 1000,
            power_draw=None if power is None else power / 1e6,
            mig_mode=None,
            processes=info.processes,
            vendor="amd",
            backend="amd",
        )
        # each amdgpu client of the card's slot once, its VRAM summed by process
        used: dict[int, int] = {}
        for pid, listed in clients.items():
            for number, key, amount, unit, _ in listed:
                if key != "i915" and card["slot"] and number == info.index:
                    scale = _VRAM_UNITS["KiB" if key == "vram mem" else unit]
                    used[pid] = used.get(pid, 0) + amount * scale
        shown = [(process.pid, process.used_memory or 0) for process in info.processes]
        assert sorted(shown) == (sorted(used.items()) if processes else [])
        assert [memory for _, memory in shown] == sorted((m for _, m in shown), reverse=True)


_NOT_REPORTED = st.sampled_from(["[N/A]", "[Not Supported]", "N/A", "[Unknown Error]"])
"""What nvidia-smi prints for a figure the driver does not report."""
_SMI_GPUS = st.lists(
    st.fixed_dictionaries(
        {
            "uuid": st.uuids().map(lambda uuid: f"GPU-{uuid}"),
            "name": st.text("NVIDIA GeForce RTX H200-", min_size=1, max_size=16),
            "utilization.gpu": st.none() | st.integers(0, 100),
            "memory.used": st.none() | st.integers(0, 200_000),
            "memory.total": st.none() | st.integers(0, 200_000),
            "temperature.gpu": st.none() | st.integers(0, 110),
            "power.draw": st.none() | st.integers(0, 100_000).map(lambda cents: cents / 100),
            "mig.mode.current": st.none() | st.sampled_from(["Enabled", "Disabled"]),
        }
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda row: row["uuid"],
)
"""nvidia-smi's GPUs: the figures of each (None: not reported)."""
_SMI_UNITS = {"utilization.gpu": "%", "memory.used": "MiB", "memory.total": "MiB"}
_SMI_UNITS |= {"power.draw": "W", "used_gpu_memory": "MiB"}


def _smi_cell(field: str, value: object, units: bool, missing: str) -> str:
    """*value* as nvidia-smi prints it in *field*'s column (with its unit unless nounits)."""
    if value is None:
        return missing
    text = f"{value:.2f}" if field == "power.draw" else str(value)
    return f"{text} {_SMI_UNITS[field]}" if units and field in _SMI_UNITS else text


def _smi_csv(header: list[str], rows: list[list[str]], units: bool) -> str:
    """nvidia-smi's CSV: the header (each name with its unit unless nounits), the rows."""
    named = [
        f"{name} [{_SMI_UNITS[name]}]" if units and name in _SMI_UNITS else name for name in header
    ]
    return "".join(", ".join(row) + "\n" for row in [named, *rows])


def _smi_gpu(number: int, row: dict[str, Any]) -> GpuInfo:
    """The GpuInfo of nvidia-smi's *row*, the GPU numbered *number*, without processes."""

    def mib(value: int | None) -> int | None:
        return None if value is None else value * MIB

    def number_or_none(value: float | None) -> float | None:
        return None if value is None else float(value)

    return GpuInfo(
        index=number,
        uuid=row["uuid"],
        name=row["name"].strip(),
        utilization=number_or_none(row["utilization.gpu"]),
        memory_used=mib(row["memory.used"]),
        memory_total=mib(row["memory.total"]),
        temperature=number_or_none(row["temperature.gpu"]),
        power_draw=number_or_none(row["power.draw"]),  # (in hundredths: as printed)
        mig_mode=row["mig.mode.current"],
        backend="nvidia-smi",
    )


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gpus=_SMI_GPUS, units=st.booleans(), processes=st.booleans(), data=st.data())
def test_snapshot_smi_reads_back_what_nvidia_smi_prints(
    fake_smi: FakeSmi, gpus: list[dict[str, Any]], units: bool, processes: bool, data: st.DataObject
) -> None:
    fields = data.draw(st.permutations(["index", *gpus[0]]))  # (read by name, in any order)
    numbers = sorted(data.draw(st.sets(st.integers(0, 15), min_size=len(gpus), max_size=len(gpus))))
    rows = [
        [
            str(number)
            if field == "index"
            else _smi_cell(field, row[field], units, data.draw(_NOT_REPORTED))
            for field in fields
        ]
        for number, row in zip(numbers, gpus, strict=True)
    ]
    apps = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from([*(row["uuid"] for row in gpus), "GPU-of-none"]),
                st.none() | st.integers(1, 2**31),
                st.none() | st.integers(0, 200_000),
            ),
            max_size=6,
        )
    )
    app_rows = [
        [
            uuid,
            _smi_cell("pid", pid, units, "[N/A]"),
            _smi_cell("used_gpu_memory", used, units, "[N/A]"),
        ]
        for uuid, pid, used in apps
    ]
    with tempfile.TemporaryDirectory() as folder:
        gpu_csv, apps_csv = Path(folder) / "gpus.csv", Path(folder) / "apps.csv"
        gpu_csv.write_text(_smi_csv(fields, rows, units))
        apps_csv.write_text(_smi_csv(["gpu_uuid", "pid", "used_gpu_memory"], app_rows, units))
        fake_smi.serve(str(gpu_csv), str(apps_csv))
        found = snapshot_smi(5.0, processes=processes)
    assert [dataclasses.replace(info, processes=()) for info in found] == [
        _smi_gpu(number, row) for number, row in zip(numbers, gpus, strict=True)
    ]
    for info in found:  # each GPU's processes with a pid, in nvidia-smi's order
        listed = [
            (pid, None if used is None else used * MIB)
            for uuid, pid, used in apps
            if uuid == info.uuid and pid is not None
        ]
        assert [(process.pid, process.used_memory) for process in info.processes] == (
            listed if processes else []
        )
