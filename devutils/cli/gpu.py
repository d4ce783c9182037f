"""``devutils gpu``: the command line of `devutils.gpu`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from devutils.cli.common import positive_float
from devutils.gpu import gpu_probe, gpu_snapshot


def register(subparsers: Any) -> None:
    gpu = subparsers.add_parser(
        "gpu", help="NVIDIA GPU snapshot (NVML or nvidia-smi)", description="Show every GPU now."
    )
    gpu.add_argument("--json", action="store_true", help="print JSON")
    gpu.add_argument("--timeout", type=positive_float, default=5.0, help="nvidia-smi timeout (s)")
    gpu.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    gpus = gpu_snapshot(timeout=args.timeout)
    if not gpus:
        reason = gpu_probe(timeout=args.timeout).reason
        if args.json:
            print(json.dumps({"gpus": [], "reason": reason}))
        print(f"devutils gpu: no GPU: {reason}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"gpus": [asdict(gpu) for gpu in gpus]}, indent=2))
        return 0
    for gpu in gpus:
        used = "-" if gpu.memory_used is None else f"{gpu.memory_used / 2**30:.1f}"
        total = "-" if gpu.memory_total is None else f"{gpu.memory_total / 2**30:.1f}"
        util = "-" if gpu.utilization is None else f"{gpu.utilization:.0f}%"
        temp = "-" if gpu.temperature is None else f"{gpu.temperature:.0f}C"
        power = "-" if gpu.power_draw is None else f"{gpu.power_draw:.0f}W"
        mig = f"  MIG {gpu.mig_mode}" if gpu.mig_mode else ""
        memory = f"mem {used}/{total} GiB"
        print(f"GPU {gpu.index}  {gpu.name}  util {util}  {memory}  {temp}  {power}{mig}")
        for proc in gpu.processes:
            held = "-" if proc.used_memory is None else f"{proc.used_memory / 2**20:.0f} MiB"
            name = proc.name if proc.visible else "(not visible in this PID namespace)"
            print(f"  pid {proc.pid}  {held}  {name}")
    return 0
