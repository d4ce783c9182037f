"""``devutils batch``: the command line of `devutils.batch`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from devutils.batch import (
    BatchError,
    BatchPlan,
    TrainingSchedule,
    plan_batch,
    tokens_per_step,
    training_schedule,
)
from devutils.cli.common import CliError, positive_float, positive_int, typed_float, typed_int

_FLAGS = {
    "target": "--target",
    "max_per_device": "--max-per-device",
    "min_per_device": "--min-per-device",
    "devices": "--devices",
    "rounding": "--rounding",
    "n_samples": "--samples",
    "epochs": "--epochs",
    "max_steps": "--max-steps",
    "warmup": "--warmup",
    "drop_last": "--drop-last",
    "seq_len": "--seq-len",
    "num_nodes": "--num-nodes",
    "model_parallel": "--model-parallel",
}
"""The flag that gives each argument of the library's functions, by the argument's name."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="plan per-device batch x gradient accumulation x devices for a target batch",
        description=(
            "Plan the largest per-device batch that fits (<= --max-per-device) and the "
            "gradient accumulation that reaches --target exactly; with --samples, also the "
            "steps per epoch and the schedule, as the Hugging Face Trainer counts them "
            "(as Lightning does, with --format lightning)."
        ),
    )
    parser.add_argument("--target", type=positive_int, required=True, help="effective batch size")
    parser.add_argument(
        "--max-per-device", type=positive_int, required=True, help="largest micro-batch that fits"
    )
    parser.add_argument("--devices", type=positive_int, default=1, help="data-parallel devices")
    parser.add_argument(
        "--min-per-device", type=positive_int, default=1, help="smallest useful micro-batch"
    )
    parser.add_argument(
        "--rounding",
        choices=["exact", "down", "up", "nearest"],
        default="exact",
        help="when no exact split exists: fail (exact) or move the target",
    )
    parser.add_argument("--samples", type=positive_int, help="training samples per epoch")
    parser.add_argument("--epochs", type=_epochs, help="epochs (may be fractional; default 1)")
    parser.add_argument(
        "--max-steps", type=positive_int, help="optimizer steps, instead of --epochs"
    )
    parser.add_argument(
        "--warmup", type=_warmup, help="warmup: a ratio in [0, 1) or a step count (default 0)"
    )
    parser.add_argument(
        "--seq-len", type=positive_int, help="tokens per sample, for tokens per step"
    )
    parser.add_argument("--drop-last", action="store_true", help="drop the last partial batch")
    parser.add_argument(
        "--num-nodes",
        type=positive_int,
        help="nodes the devices are on, for --format lightning (its devices are per node)",
    )
    parser.add_argument(
        "--model-parallel",
        type=positive_int,
        help="tensor x pipeline x context parallel size, for --format lightning (it counts GPUs)",
    )
    parser.add_argument(
        "--format",
        choices=["text", "json", "hf", "deepspeed", "lightning"],
        default="text",
        help="text (default), json, or a framework's config snippet",
    )
    parser.set_defaults(handler=run)


def _epochs(text: str) -> int | float:
    """An argparse type: a finite number of epochs > 0; a whole number as an int, which
    `training_schedule` multiplies exactly (a float product rounds past 2**53 steps)."""
    whole = typed_int(text)
    return whole if whole else positive_float(text, "epochs")


def _warmup(text: str) -> int | float:
    """An argparse type: a step count (an int >= 0) or a ratio (a number in [0, 1))."""
    count = typed_int(text)
    if count is not None:
        return count
    ratio = typed_float(text)
    if ratio is not None and ratio < 1:
        return ratio
    msg = f"must be a ratio in [0, 1) or a step count >= 0, got {text!r}"
    raise argparse.ArgumentTypeError(msg)


def run(args: argparse.Namespace) -> int:
    given = [
        flag
        for flag, value in (
            ("--num-nodes", args.num_nodes),
            ("--model-parallel", args.model_parallel),
        )
        if value is not None
    ]
    if given and args.format != "lightning":  # they set Lightning's devices, nothing else
        verb = "sets" if len(given) == 1 else "set"
        msg = f"{' and '.join(given)} {verb} Lightning's devices: give --format lightning"
        raise CliError(msg)
    if args.min_per_device > args.max_per_device:  # two flags: said here, naming both
        msg = (
            f"--min-per-device {args.min_per_device} is larger than "
            f"--max-per-device {args.max_per_device}"
        )
        raise CliError(msg)
    try:
        plan = plan_batch(
            args.target,
            args.max_per_device,
            args.devices,
            rounding=args.rounding,
            min_per_device=args.min_per_device,
        )
        schedule = _schedule(args, plan)
        tokens = None
        if args.seq_len is not None:  # (checked before anything is printed)
            per = (plan.per_device, plan.accumulation, plan.devices)
            tokens = tokens_per_step(*per, seq_len=args.seq_len)
        lightning = plan.to_lightning(
            num_nodes=args.num_nodes or 1, model_parallel=args.model_parallel or 1
        )
    except BatchError as exc:
        raise CliError(_cli_message(exc, args)) from exc
    _print(args, plan, schedule, tokens, lightning)
    return 0


def _cli_message(exc: BatchError, args: argparse.Namespace) -> str:
    """The library's error in the command's words: the flag, then what is wrong with it."""
    if exc.argument not in _FLAGS:  # no flag gives it: a result out of range, a size of the plan
        return str(exc)
    message = f"{_FLAGS[exc.argument]} {exc.reason}"
    no_split = exc.argument == "target" and args.rounding == "exact"
    if no_split and (helping := _roundings_that_help(args)):  # the ways out
        message += f" (or pass --rounding {_either(helping)})"
    return message


def _roundings_that_help(args: argparse.Namespace) -> list[str]:
    """The roundings that find a target near --target with a split: ``down`` where one
    lies below, ``up`` where one lies above (within 2**63 - 1), ``nearest`` where either."""
    helping = []
    for rounding in ("down", "up"):
        try:
            plan_batch(
                args.target,
                args.max_per_device,
                args.devices,
                rounding=rounding,
                min_per_device=args.min_per_device,
            )
        except BatchError:
            continue
        helping.append(rounding)
    return [*helping, "nearest"] if helping else []


def _either(words: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _schedule(args: argparse.Namespace, plan: BatchPlan) -> TrainingSchedule | None:
    if args.samples is None:
        given = [
            flag
            for flag, value in (
                ("--epochs", args.epochs),
                ("--max-steps", args.max_steps),
                ("--warmup", args.warmup),
                ("--drop-last", args.drop_last or None),
            )
            if value is not None
        ]
        if given:
            verb = "needs" if len(given) == 1 else "need"
            msg = f"{' and '.join(given)} {verb} --samples (the schedule is counted from it)"
            raise CliError(msg)
        return None
    if args.epochs is not None and args.max_steps is not None:
        msg = "give one of --epochs and --max-steps"
        raise CliError(msg)
    return training_schedule(
        args.samples,
        plan.per_device,
        plan.accumulation,
        plan.devices,
        epochs=1 if args.epochs is None and args.max_steps is None else args.epochs,
        max_steps=args.max_steps,
        warmup=0 if args.warmup is None else args.warmup,
        drop_last=args.drop_last,
        # (Lightning's DistributedSampler shares out samples, the Trainer's loader batches)
        sharding="samples" if args.format == "lightning" else "batches",
        seq_len=args.seq_len,
    )


def _snippet(
    framework: str,
    plan: BatchPlan,
    schedule: TrainingSchedule | None,
    lightning: dict[str, dict[str, int]],
    *,
    drop_last: bool,
) -> dict[str, Any]:
    """The framework's config for the plan and, with ``--samples``, its schedule, in the
    framework's own keys: the Trainer's ``max_steps`` and ``warmup_steps``, DeepSpeed's
    ``WarmupDecayLR`` scheduler, Lightning's ``max_steps``."""
    if framework == "hf":
        config: dict[str, Any] = dict(plan.to_hf())
        if schedule is not None:
            config["max_steps"] = schedule.total_steps
            config["warmup_steps"] = schedule.warmup_steps
            config["dataloader_drop_last"] = drop_last
        return config
    if framework == "deepspeed":
        config = dict(plan.to_deepspeed())
        if schedule is not None:
            steps = {
                "warmup_num_steps": schedule.warmup_steps,
                "total_num_steps": schedule.total_steps,
            }
            config["scheduler"] = {"type": "WarmupDecayLR", "params": steps}
            config["dataloader_drop_last"] = drop_last  # (DeepSpeed's own loader's)
        return config
    config = {part: dict(keys) for part, keys in lightning.items()}
    if schedule is not None:
        config["trainer"]["max_steps"] = schedule.total_steps
        config["dataloader"]["drop_last"] = drop_last
    return config


def _print(
    args: argparse.Namespace,
    plan: BatchPlan,
    schedule: TrainingSchedule | None,
    tokens: int | None,
    lightning: dict[str, dict[str, int]],
) -> None:
    if args.format in ("hf", "deepspeed", "lightning"):
        snippet = _snippet(args.format, plan, schedule, lightning, drop_last=args.drop_last)
        print(json.dumps(snippet, indent=2))
        return
    if args.format == "json":
        data: dict[str, Any] = {
            "plan": {
                **asdict(plan),
                "effective": plan.effective,
                "memory_utilization": plan.memory_utilization,
            }
        }
        if schedule is not None:
            data["schedule"] = asdict(schedule)
        elif tokens is not None:
            data["tokens_per_step"] = tokens
        print(json.dumps(data, indent=2))
        return
    note = "" if plan.exact else f"  (target {plan.target} has no exact split: rounded)"
    print(f"{plan}  (per-device batch x accumulation x devices = effective batch){note}")
    print(
        f"per-device batch {plan.per_device} of at most {plan.max_per_device} "
        f"({plan.memory_utilization:.0%} of the memory budget)"
    )
    if schedule is None:
        if tokens is not None:
            print(f"tokens per step: {tokens}")
        return
    print(f"steps per epoch: {schedule.steps_per_epoch}")
    epochs = "1 epoch" if schedule.epochs == 1 else f"{schedule.epochs:g} epochs"
    print(f"total steps: {schedule.total_steps} ({epochs})")
    print(f"warmup steps: {schedule.warmup_steps}")
    print(f"samples per step: {schedule.samples_per_step}")
    if schedule.tokens_per_step is not None:
        print(f"tokens per step: {schedule.tokens_per_step}")
