"""``devutils batch``: the command line of `devutils.batch`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from devutils.cli.common import CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="plan per-device batch x gradient accumulation x devices for a target batch",
        description=(
            "Plan the largest per-device batch that fits (<= --max-per-device) and the "
            "gradient accumulation that reaches --target exactly; with --samples, also the "
            "steps per epoch and the schedule, as the Hugging Face Trainer counts them."
        ),
    )
    parser.add_argument("--target", type=int, required=True, help="effective batch size")
    parser.add_argument(
        "--max-per-device", type=int, required=True, help="largest micro-batch that fits"
    )
    parser.add_argument("--devices", type=int, default=1, help="data-parallel devices")
    parser.add_argument("--min-per-device", type=int, default=1, help="smallest useful micro-batch")
    parser.add_argument(
        "--rounding",
        choices=["exact", "down", "up", "nearest"],
        default="exact",
        help="when no exact split exists: fail (exact) or move the target",
    )
    parser.add_argument("--samples", type=int, help="training samples per epoch")
    parser.add_argument("--epochs", type=float, help="epochs (may be fractional)")
    parser.add_argument("--max-steps", type=int, help="optimizer steps, instead of --epochs")
    parser.add_argument(
        "--warmup", type=_warmup, default=0, help="warmup: a ratio in [0, 1) or a step count"
    )
    parser.add_argument("--seq-len", type=int, help="tokens per sample, for tokens per step")
    parser.add_argument("--drop-last", action="store_true", help="drop the last partial batch")
    parser.add_argument(
        "--format",
        choices=["text", "json", "hf", "deepspeed", "lightning"],
        default="text",
        help="text (default), json, or a framework's config snippet",
    )
    parser.set_defaults(handler=run)


def _warmup(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        msg = f"must be a ratio in [0, 1) or a step count, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def run(args: argparse.Namespace) -> int:
    from devutils.batch import BatchError, plan_batch, training_schedule

    try:
        plan = plan_batch(
            args.target,
            args.max_per_device,
            args.devices,
            rounding=args.rounding,
            min_per_device=args.min_per_device,
        )
        schedule = None
        if args.samples is not None:
            if args.epochs is None and args.max_steps is None:
                args.epochs = 1.0
            schedule = training_schedule(
                args.samples,
                plan.per_device,
                plan.accumulation,
                plan.devices,
                epochs=args.epochs,
                max_steps=args.max_steps,
                warmup=args.warmup,
                drop_last=args.drop_last,
                seq_len=args.seq_len,
            )
        elif args.epochs is not None or args.max_steps is not None:
            msg = "--epochs and --max-steps need --samples"
            raise CliError(msg)
    except BatchError as exc:
        raise CliError(str(exc)) from exc

    if args.format == "hf":
        print(json.dumps(plan.to_hf(), indent=2))
    elif args.format == "deepspeed":
        print(json.dumps(plan.to_deepspeed(), indent=2))
    elif args.format == "lightning":
        print(json.dumps(plan.to_lightning(), indent=2))
    elif args.format == "json":
        data: dict[str, Any] = {
            "plan": {
                **asdict(plan),
                "effective": plan.effective,
                "memory_utilization": plan.memory_utilization,
            }
        }
        if schedule is not None:
            data["schedule"] = asdict(schedule)
        print(json.dumps(data, indent=2))
    else:
        note = "" if plan.exact else f"  (target {plan.target} has no exact split: rounded)"
        print(f"{plan}  (per-device batch x accumulation x devices = effective batch){note}")
        print(
            f"per-device batch {plan.per_device} of at most {plan.max_per_device} "
            f"({plan.memory_utilization:.0%} of the memory budget)"
        )
        if schedule is not None:
            print(f"steps per epoch: {schedule.steps_per_epoch}")
            print(f"total steps: {schedule.total_steps} ({schedule.epochs:g} epochs)")
            print(f"warmup steps: {schedule.warmup_steps}")
            print(f"samples per step: {schedule.samples_per_step}")
            if schedule.tokens_per_step is not None:
                print(f"tokens per step: {schedule.tokens_per_step}")
    return 0
