"""Batch-size arithmetic and planning for ML training, in pure Python (no torch import).

The rule: effective batch = per-device batch x gradient accumulation x devices. Both
4 x 16 and 1 x 64 give 64, but accumulation costs time, so **first set the per-device
batch as high as memory allows, then set accumulation to reach the effective batch**.
`plan_batch` does exactly that, the schedule helpers count the steps, and the exports
give each framework's own keys. Finding what fits by running a training step is
`devutils.batchfinder` (the one part with side effects).

Every integer argument refuses bool, float (even ``4.0``), str, None, values below 1
and values above `MAX_INT` (2**63 - 1, the int64 every framework stores them in) with a
`BatchError` (a `ValueError`) or `BatchTypeError` (also a `TypeError`) that names the
argument and the value, in its message and as the attributes ``argument`` and
``value``; so does a result beyond `MAX_INT`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from devutils.divisors import divisors, nearest_multiple
from devutils.limits import MAX_INT
from devutils.messages import shown

__all__ = [
    "MAX_INT",
    "BatchError",
    "BatchPlan",
    "BatchTypeError",
    "TrainingSchedule",
    "check_int",
    "check_rounding",
    "data_parallel_size",
    "effective_batch_size",
    "micro_batches_per_epoch",
    "plan_batch",
    "plan_from_deepspeed",
    "scale_lr",
    "steps_for_tokens",
    "steps_per_epoch",
    "tokens_per_step",
    "training_schedule",
    "warmup_steps",
]

Rounding = Literal["exact", "down", "up", "nearest"]
Sharding = Literal["batches", "samples"]
"""How a dataloader shares an epoch among devices: ``"batches"`` deals out whole batches
(accelerate's ``BatchSamplerShard``, under the Hugging Face Trainer); ``"samples"`` deals
out samples first, padded to a multiple of the devices, and each device batches its own
(torch's ``DistributedSampler``, which Lightning and DeepSpeed's own dataloader use)."""


class BatchError(ValueError):
    """A value that makes no sense for batch arithmetic, with the argument it came in.

    Attributes:
        argument: The argument refused, as the function's signature spells it (for
            `plan_from_deepspeed`, the config key); None where no one argument is at
            fault (a result beyond `MAX_INT`, two arguments that exclude each other).
        value: The value refused: the argument's, or the result's.
        reason: What is wrong, worded to follow the argument's name and naming no other
            parameter of the function, so that a front end can name the argument its
            own way: ``f"{flag} {exc.reason}"``. Where *argument* is None, the message.

    The message, ``str(exc)``, is written for a Python caller: the argument's name, then
    *reason*, unless the function words it otherwise.

    Examples:
        >>> try:
        ...     plan_batch(64, 4, min_per_device=8)
        ... except BatchError as exc:
        ...     error = exc
        ...
        >>> str(error)
        'min_per_device 8 is larger than max_per_device 4'
        >>> error.argument, error.value, error.reason
        ('min_per_device', 8, '8 is larger than the maximum per device, 4')
    """

    def __init__(
        self, reason: str, *, argument: str | None, value: object, message: str | None = None
    ) -> None:
        if message is None:
            message = reason if argument is None else f"{argument} {reason}"
        super().__init__(message)
        self.argument = argument
        self.value = value
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle (a worker process sending the error back) calls the class with its keywords
        rebuild = functools.partial(
            type(self), argument=self.argument, value=self.value, message=str(self)
        )
        return rebuild, (self.reason,)


class BatchTypeError(BatchError, TypeError):
    """An argument of the wrong type (a bool, float or str where an int belongs, ...).

    Also a `TypeError`, and a `BatchError` with its ``argument``, ``value`` and ``reason``.

    Examples:
        >>> try:
        ...     effective_batch_size(8, True)
        ... except TypeError as error:
        ...     print(type(error).__name__, error.argument, error.value)
        BatchTypeError accumulation True
    """


def _short_repr(value: object, limit: int = 40) -> str:
    """*value*'s repr, shortened for a number of thousands of digits: an int too long
    for a repr as its size, a repr that fails as that (`devutils.messages.shown`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            text = repr(value)
        except Exception:  # past sys.get_int_max_str_digits(), or an int whose repr fails
            return shown(value)
        if len(text) <= limit:
            return text
        return f"{text[:20]}...{text[-8:]} ({len(text.lstrip('-'))} digits)"
    return shown(value, limit)


def check_int(name: str, value: object) -> int:
    """Return *value* if it is an int from 1 to `MAX_INT`; else raise, naming *name*.

    The check every integer argument of this module and of `devutils.batchfinder` goes
    through: a bool, float (even ``4.0``), str or None is a `BatchTypeError`, an int out
    of range a `BatchError`.

    Examples:
        >>> check_int("devices", 8)
        8
        >>> check_int("devices", 8.0)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchTypeError: devices must be an int, got float 8.0
        >>> check_int("devices", 0)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: devices must be >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int):
        reason = f"must be an int, got {type(value).__name__} {_short_repr(value)}"
        raise BatchTypeError(reason, argument=name, value=value)
    if value < 1:
        reason = f"must be >= 1, got {_short_repr(value)}"
        raise BatchError(reason, argument=name, value=value)
    if value > MAX_INT:
        reason = f"must be <= 2**63 - 1, got {_short_repr(value)}"
        raise BatchError(reason, argument=name, value=value)
    return value


def check_rounding(value: object) -> Rounding:
    """Return *value* if it is one of `plan_batch`'s roundings; else a `BatchError`
    naming ``rounding``.

    Examples:
        >>> check_rounding("down")
        'down'
        >>> check_rounding("floor")
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: rounding must be 'exact', 'down', 'up' or 'nearest', got 'floor'
    """
    if not isinstance(value, str) or value not in ("exact", "down", "up", "nearest"):
        reason = f"must be 'exact', 'down', 'up' or 'nearest', got {_short_repr(value)}"
        error = BatchError if isinstance(value, str) else BatchTypeError
        raise error(reason, argument="rounding", value=value)
    return value  # type: ignore[return-value]


def _check_result(name: str, value: int) -> int:
    """*value*, a result called *name* in the message, if it is at most `MAX_INT`."""
    if value > MAX_INT:
        message = f"{name} is {_short_repr(value)}, more than 2**63 - 1"
        raise BatchError(message, argument=None, value=value)
    return value


def _positive_number(name: str, value: object) -> float:
    """*value* as a float, if it is an int or float, finite and > 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        reason = f"must be a number, got {type(value).__name__} {_short_repr(value)}"
        raise BatchTypeError(reason, argument=name, value=value)
    try:
        number = float(value)
    except OverflowError:  # an int beyond float's range
        number = math.inf
    if not math.isfinite(number) or number <= 0:
        reason = f"must be a finite number > 0, got {_short_repr(value)}"
        raise BatchError(reason, argument=name, value=value)
    return number


def effective_batch_size(per_device: int, accumulation: int = 1, devices: int = 1) -> int:
    """Return the samples per optimizer step: per_device x accumulation x devices.

    Examples:
        >>> effective_batch_size(4, 16), effective_batch_size(64), effective_batch_size(8, 6, 2)
        (64, 64, 96)
        >>> effective_batch_size(4, -1)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: accumulation must be >= 1, got -1
    """
    per_device = check_int("per_device", per_device)
    accumulation = check_int("accumulation", accumulation)
    devices = check_int("devices", devices)
    return _check_result("the effective batch", per_device * accumulation * devices)


def data_parallel_size(
    world_size: int,
    *,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    context_parallel: int = 1,
) -> int:
    """Return how many data-parallel replicas a world of processes has.

    Model-parallel ranks (tensor, pipeline, context) share one batch, so only the
    data-parallel size multiplies it. A world size the model-parallel sizes do not
    divide is an error (Hugging Face floors it silently).

    Examples:
        >>> data_parallel_size(16, tensor_parallel=4)
        4
        >>> data_parallel_size(12, tensor_parallel=8)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: world_size 12 is not divisible by tensor_parallel x ... = 8
    """
    world = check_int("world_size", world_size)
    tensor = check_int("tensor_parallel", tensor_parallel)
    pipeline = check_int("pipeline_parallel", pipeline_parallel)
    context = check_int("context_parallel", context_parallel)
    model = tensor * pipeline * context
    if world % model:
        reason = f"{world} is not divisible by the model-parallel size {model}"
        message = (
            f"world_size {world} is not divisible by "
            f"tensor_parallel x pipeline_parallel x context_parallel = {model}"
        )
        raise BatchError(reason, argument="world_size", value=world, message=message)
    return world // model


# -- planning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchPlan:
    """A split of an effective batch: ``per_device x accumulation x devices = effective``.

    Attributes:
        target: The effective batch that was asked for.
        per_device: Samples per device per forward/backward pass (micro-batch).
        accumulation: Gradient accumulation steps.
        devices: Data-parallel devices (processes).
        max_per_device: The most that fits on one device.
        exact: False when no exact split existed and the plan rounded the target.

    Raises:
        BatchTypeError: If a size is not an int, or *exact* not a bool.
        BatchError: If a size is below 1 or above `MAX_INT`, the effective batch is
            above `MAX_INT`, *per_device* above *max_per_device* (a plan that does
            not fit), or *exact* is not whether the effective batch is the target.

    Examples:
        >>> plan = BatchPlan(target=64, per_device=8, accumulation=4, devices=2, max_per_device=8)
        >>> str(plan), plan.effective, plan.memory_utilization
        ('8 x 4 x 2 = 64', 64, 1.0)
        >>> BatchPlan(64, 8, 8, 1, max_per_device=4)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: per_device 8 is more than max_per_device 4
        >>> BatchPlan(64, 8, 4, 1, max_per_device=8)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: exact is True, but 8 x 4 x 1 = 32 is not the target 64
    """

    target: int
    per_device: int
    accumulation: int
    devices: int
    max_per_device: int
    exact: bool = True

    def __post_init__(self) -> None:
        for name in ("target", "per_device", "accumulation", "devices", "max_per_device"):
            check_int(name, getattr(self, name))
        flag: object = self.exact
        if not isinstance(flag, bool):
            reason = f"must be a bool, got {_short_repr(flag)}"
            raise BatchTypeError(reason, argument="exact", value=flag)
        effective_batch_size(self.per_device, self.accumulation, self.devices)  # <= MAX_INT
        if self.per_device > self.max_per_device:
            given = _short_repr(self.per_device)
            reason = f"{given} is more than the maximum per device, {self.max_per_device}"
            message = f"per_device {given} is more than max_per_device {self.max_per_device}"
            raise BatchError(reason, argument="per_device", value=self.per_device, message=message)
        if self.exact != (self.effective == self.target):
            relation = "is not" if self.exact else "is"
            reason = f"is {self.exact}, but {self} {relation} the target {self.target}"
            raise BatchError(reason, argument="exact", value=self.exact)

    @property
    def effective(self) -> int:
        """per_device x accumulation x devices.

        Examples:
            >>> plan = plan_batch(97, 8, min_per_device=2, rounding="nearest")
            >>> plan.target, plan.effective
            (97, 96)
        """
        return self.per_device * self.accumulation * self.devices

    @property
    def memory_utilization(self) -> float:
        """per_device / max_per_device: how much of the memory budget a micro-batch uses.

        Examples:
            >>> plan = plan_batch(64, 5)
            >>> str(plan), plan.memory_utilization
            ('4 x 16 x 1 = 64', 0.8)
        """
        return self.per_device / self.max_per_device

    def __str__(self) -> str:
        return f"{self.per_device} x {self.accumulation} x {self.devices} = {self.effective}"

    def to_hf(self) -> dict[str, int]:
        """Keys for transformers ``TrainingArguments`` (devices come from the launcher).

        Examples:
            >>> plan_batch(64, 4).to_hf()
            {'per_device_train_batch_size': 4, 'gradient_accumulation_steps': 16}
        """
        return {
            "per_device_train_batch_size": self.per_device,
            "gradient_accumulation_steps": self.accumulation,
        }

    def to_deepspeed(self) -> dict[str, int]:
        """The three batch keys of a DeepSpeed config, consistent with each other.

        Examples:
            >>> plan_batch(96, 8, 2).to_deepspeed()  # doctest: +NORMALIZE_WHITESPACE
            {'train_batch_size': 96, 'train_micro_batch_size_per_gpu': 8,
             'gradient_accumulation_steps': 6}
        """
        return {
            "train_batch_size": self.effective,
            "train_micro_batch_size_per_gpu": self.per_device,
            "gradient_accumulation_steps": self.accumulation,
        }

    def to_lightning(
        self, *, num_nodes: int = 1, model_parallel: int = 1
    ) -> dict[str, dict[str, int]]:
        """Lightning: ``Trainer(**plan["trainer"])`` and ``DataLoader(**plan["dataloader"])``.

        Lightning's ``devices`` counts the GPUs of one node: the plan's data-parallel
        devices, times *model_parallel* (the tensor x pipeline x context parallel size
        that `data_parallel_size` divided out), over *num_nodes* (given to the Trainer
        where it is more than 1).

        Raises:
            BatchError: If *num_nodes* does not divide those GPUs (naming ``num_nodes``).

        Examples:
            >>> plan_batch(64, 4).to_lightning()  # doctest: +NORMALIZE_WHITESPACE
            {'trainer': {'accumulate_grad_batches': 16, 'devices': 1},
             'dataloader': {'batch_size': 4}}
            >>> plan_batch(256, 16, devices=4).to_lightning(num_nodes=2, model_parallel=4)
            ... # doctest: +NORMALIZE_WHITESPACE
            {'trainer': {'accumulate_grad_batches': 4, 'devices': 8, 'num_nodes': 2},
             'dataloader': {'batch_size': 16}}
        """
        nodes = check_int("num_nodes", num_nodes)
        gpus = _check_result("GPUs", self.devices * check_int("model_parallel", model_parallel))
        if gpus % nodes:
            reason = (
                f"{nodes} does not divide the {gpus} GPUs (the devices times the model-parallel"
                " size)"
            )
            message = f"num_nodes {reason}"
            raise BatchError(reason, argument="num_nodes", value=nodes, message=message)
        trainer = {"accumulate_grad_batches": self.accumulation, "devices": gpus // nodes}
        if nodes > 1:
            trainer["num_nodes"] = nodes
        return {"trainer": trainer, "dataloader": {"batch_size": self.per_device}}


def plan_batch(
    target: int,
    max_per_device: int,
    devices: int = 1,
    *,
    rounding: Rounding = "exact",
    min_per_device: int = 1,
) -> BatchPlan:
    """Plan the largest per-device batch <= *max_per_device* that reaches *target* exactly.

    The per-device size is the largest divisor of ``target / devices`` that fits, so
    accumulation is as small as it can be.

    Args:
        target: The effective batch wanted (samples per optimizer step).
        max_per_device: The largest micro-batch that fits on one device.
        devices: Data-parallel devices.
        rounding: ``"exact"`` raises when no exact split exists (naming the nearest
            achievable targets); ``"down"``, ``"up"`` and ``"nearest"`` (ties go down)
            move to one and return a plan with ``exact=False``.
        min_per_device: The smallest per-device size worth running; above 1 it
            refuses splits like 1 x 97 for a prime target.

    Raises:
        BatchError: If no exact split exists with ``rounding="exact"``, nothing is
            achievable in the rounding direction (both with ``argument="target"``), or
            an argument is out of range.
        BatchTypeError: If an integer argument is not an int.

    Examples:
        >>> str(plan_batch(64, 4)), str(plan_batch(64, 6)), str(plan_batch(96, 8, 2))
        ('4 x 16 x 1 = 64', '4 x 16 x 1 = 64', '8 x 6 x 2 = 96')
        >>> plan_batch(97, 8, min_per_device=2)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: no exact split of target 97 with 2..8 per device on 1 device(s);
        nearest achievable targets: 96 below, 98 above (or pass rounding='down', 'up' or 'nearest')
        >>> plan = plan_batch(97, 8, min_per_device=2, rounding="nearest")
        >>> str(plan), plan.exact
        ('8 x 12 x 1 = 96', False)
    """
    target = check_int("target", target)
    high = check_int("max_per_device", max_per_device)
    devices = check_int("devices", devices)
    low = check_int("min_per_device", min_per_device)
    rounding = check_rounding(rounding)
    if low > high:
        reason = f"{low} is larger than the maximum per device, {high}"
        message = f"min_per_device {low} is larger than max_per_device {high}"
        raise BatchError(reason, argument="min_per_device", value=low, message=message)
    if target % devices == 0:
        share = target // devices
        fitting = [size for size in divisors(share) if low <= size <= high]
        if fitting:
            per_device = fitting[-1]
            return BatchPlan(target, per_device, share // per_device, devices, high)
    # Achievable targets are devices x k x per, for k >= 1 and per in low..high.
    below_share = nearest_multiple((target - 1) // devices, low, high, "down")
    above_share = nearest_multiple(target // devices + 1, low, high, "up")
    below = None
    if below_share is not None:
        below = below_share * devices
    above = None
    if above_share is not None and above_share * devices <= MAX_INT:  # past it: none above
        above = above_share * devices
    sizes = f"with {low}..{high} per device on {devices} device(s)"
    if rounding == "exact":
        raise _no_exact_split(target, sizes, below=below, above=above)
    chosen = _rounded_target(target, rounding, below=below, above=above)
    if chosen is None:
        reason = f"{target} has no achievable target {rounding} from it {sizes}"
        message = f"no achievable target {rounding} from {target} {sizes}"
        raise BatchError(reason, argument="target", value=target, message=message)
    exact = plan_batch(chosen, high, devices, min_per_device=low)
    return BatchPlan(target, exact.per_device, exact.accumulation, devices, high, exact=False)


def _no_exact_split(target: int, sizes: str, *, below: int | None, above: int | None) -> BatchError:
    """The error for a *target* that no per-device size splits exactly."""
    nearest = []
    if below is not None:
        nearest.append(f"{below} below")
    if above is not None:
        nearest.append(f"{above} above")
    if not nearest:  # (no rounding helps: every achievable target is past MAX_INT)
        reason = f"{target} has no exact split {sizes}, and no target does (all are over 2**63 - 1)"
        message = f"no exact split of target {target} {sizes}, nor of any target up to 2**63 - 1"
        return BatchError(reason, argument="target", value=target, message=message)
    found = f"nearest achievable targets: {', '.join(nearest)}"
    reason = f"{target} has no exact split {sizes}; {found}"
    helping = [f"'{way}'" for way, near in (("down", below), ("up", above)) if near is not None]
    message = (
        f"no exact split of target {target} {sizes}; {found} "
        f"(or pass rounding={', '.join(helping)} or 'nearest')"
    )
    return BatchError(reason, argument="target", value=target, message=message)


def _rounded_target(
    target: int, rounding: Rounding, *, below: int | None, above: int | None
) -> int | None:
    """The achievable target that *rounding* moves *target* to (None: there is none)."""
    if rounding == "down":
        return below
    if rounding == "up":
        return above
    if below is None:
        return above
    if above is None or target - below <= above - target:  # a tie goes down
        return below
    return above


# -- schedule -------------------------------------------------------------------------------


def micro_batches_per_epoch(
    n_samples: int,
    per_device: int,
    devices: int = 1,
    *,
    drop_last: bool = False,
    sharding: Sharding = "batches",
) -> int:
    """Return the micro-batches each device runs per epoch (the sharded dataloader's length).

    ``ceil(n / (per_device * devices))``. With *drop_last*, the floor of that where whole
    batches are dealt out (*sharding* ``"batches"``, the Hugging Face Trainer's), or
    ``floor(ceil(n / devices) / per_device)`` where samples are (``"samples"``: torch's
    ``DistributedSampler`` pads each device's share to ``ceil(n / devices)`` first, as in
    Lightning). Zero micro-batches is an error, as the Hugging Face Trainer raises.

    Examples:
        >>> micro_batches_per_epoch(1000, 8, 2), micro_batches_per_epoch(1000, 8, 2, drop_last=True)
        (63, 62)
        >>> micro_batches_per_epoch(23, 2, 3, drop_last=True, sharding="samples")
        4
        >>> micro_batches_per_epoch(10, 8, 2, drop_last=True)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: n_samples 10 gives no full micro-batch of 8 x 2 devices ...
    """
    n = check_int("n_samples", n_samples)
    per = check_int("per_device", per_device)
    world = check_int("devices", devices)
    flag: object = drop_last
    if not isinstance(flag, bool):
        reason = f"must be a bool, got {_short_repr(flag)}"
        raise BatchTypeError(reason, argument="drop_last", value=flag)
    how: object = sharding
    if not isinstance(how, str):
        reason = f"must be a str, got {_short_repr(how)}"
        raise BatchTypeError(reason, argument="sharding", value=how)
    if how not in ("batches", "samples"):
        reason = f"must be 'batches' or 'samples', got {_short_repr(how)}"
        raise BatchError(reason, argument="sharding", value=how)
    global_batch = per * world
    if not drop_last:
        count = -(-n // global_batch)
    elif sharding == "batches":
        count = n // global_batch
    else:
        count = -(-n // world) // per
    if count == 0:
        batch = f"{per} x {world} devices"
        reason = f"{n} gives no full micro-batch of {batch} when the last, partial one is dropped"
        message = f"n_samples {n} gives no full micro-batch of {batch} with drop_last=True"
        raise BatchError(reason, argument="n_samples", value=n, message=message)
    return count


def steps_per_epoch(  # noqa: PLR0913 - the batch, then how the loader counts it
    n_samples: int,
    per_device: int,
    accumulation: int = 1,
    devices: int = 1,
    *,
    drop_last: bool = False,
    sharding: Sharding = "batches",
) -> int:
    """Return optimizer steps per epoch, as the Hugging Face Trainer (transformers >= 4.52)
    and Lightning count them.

    ``ceil(micro_batches_per_epoch / accumulation)``: a last, partial accumulation window
    still makes a step. transformers before 4.52 used ``max(micro_batches //
    accumulation, 1)``, dropping that last step (transformers issue #36297). *sharding* is
    `micro_batches_per_epoch`'s: ``"samples"`` for Lightning.

    Examples:
        >>> steps_per_epoch(1000, 8, 4, 2)
        16
        >>> steps_per_epoch(1000, 8, 4, 2, drop_last=True)
        16
    """
    micro = micro_batches_per_epoch(
        n_samples, per_device, devices, drop_last=drop_last, sharding=sharding
    )
    return -(-micro // check_int("accumulation", accumulation))


def warmup_steps(total_steps: int, warmup: int | float) -> int:
    """Return warmup steps: a float in [0, 1) is a ratio of *total_steps* (rounded up, as
    Hugging Face's ``warmup_ratio``); an int is a count, at most *total_steps*.

    Examples:
        >>> warmup_steps(1000, 0.1), warmup_steps(1001, 0.1), warmup_steps(1000, 50)
        (100, 101, 50)
        >>> warmup_steps(1000, 1.5)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: warmup as a ratio must be in [0, 1), got 1.5
    """
    total = check_int("total_steps", total_steps)
    if isinstance(warmup, bool) or not isinstance(warmup, int | float):
        kind = type(warmup).__name__
        reason = f"must be an int count or a float ratio, got {kind} {_short_repr(warmup)}"
        raise BatchTypeError(reason, argument="warmup", value=warmup)
    if isinstance(warmup, float):
        if not 0 <= warmup < 1:
            reason = f"as a ratio must be in [0, 1), got {_short_repr(warmup)}"
            raise BatchError(reason, argument="warmup", value=warmup)
        return math.ceil(total * warmup)
    if warmup < 0 or warmup > total:
        given = _short_repr(warmup)
        reason = f"{given} must be between 0 and the total steps, {total}"
        message = f"warmup {given} must be between 0 and total_steps {total}"
        raise BatchError(reason, argument="warmup", value=warmup, message=message)
    return warmup


def tokens_per_step(
    per_device: int, accumulation: int = 1, devices: int = 1, *, seq_len: int
) -> int:
    """Return tokens per optimizer step: effective batch x sequence length.

    Examples:
        >>> tokens_per_step(8, 4, 8, seq_len=4096)
        1048576
    """
    samples = effective_batch_size(per_device, accumulation, devices)
    return _check_result("tokens per step", samples * check_int("seq_len", seq_len))


def steps_for_tokens(
    total_tokens: int, per_device: int, accumulation: int = 1, devices: int = 1, *, seq_len: int
) -> int:
    """Return the optimizer steps needed to see *total_tokens* (rounded up).

    Examples:
        >>> steps_for_tokens(10**9, 8, 4, 8, seq_len=4096)
        954
    """
    per_step = tokens_per_step(per_device, accumulation, devices, seq_len=seq_len)
    return -(-check_int("total_tokens", total_tokens) // per_step)


def scale_lr(
    base_lr: float,
    base_batch: int,
    new_batch: int,
    rule: Literal["linear", "sqrt"] = "linear",
) -> float:
    """Scale a learning rate tuned at *base_batch* to *new_batch*.

    * ``"linear"``: ``lr * new / base`` (Goyal et al. 2017, "Accurate, Large Minibatch
      SGD: Training ImageNet in 1 Hour", arXiv:1706.02677; use it with warmup).
    * ``"sqrt"``: ``lr * sqrt(new / base)``, the square-root rule for Adam-style
      optimizers (Malladi et al. 2022, "On the SDEs and Scaling Rules for Adaptive
      Gradient Algorithms", arXiv:2205.10287).

    Examples:
        >>> scale_lr(1e-4, 256, 1024), scale_lr(1e-4, 256, 1024, rule="sqrt")
        (0.0004, 0.0002)
    """
    lr = _positive_number("base_lr", base_lr)
    ratio = check_int("new_batch", new_batch) / check_int("base_batch", base_batch)
    name: object = rule
    if not isinstance(name, str) or name not in ("linear", "sqrt"):
        reason = f"must be 'linear' or 'sqrt', got {_short_repr(rule)}"
        error = BatchError if isinstance(name, str) else BatchTypeError
        raise error(reason, argument="rule", value=rule)
    scaled = lr * (ratio if name == "linear" else math.sqrt(ratio))
    if not 0 < scaled < math.inf:  # past what a float holds, or below its least
        message = f"the scaled learning rate, {lr!r} x {ratio!r}, is past what a float holds"
        raise BatchError(message, argument=None, value=scaled)
    return scaled


@dataclass(frozen=True)
class TrainingSchedule:
    """Steps and sizes of a training run (see `training_schedule`).

    ``tokens_per_step`` is None where no ``seq_len`` was given.

    Examples:
        >>> schedule = training_schedule(1000, 8, 2, 2, max_steps=50, warmup=0.1)
        >>> schedule.steps_per_epoch, schedule.epochs, schedule.warmup_steps
        (32, 1.5625, 5)
        >>> schedule.samples_per_step, schedule.tokens_per_step
        (32, None)
    """

    steps_per_epoch: int
    total_steps: int
    epochs: float
    warmup_steps: int
    samples_per_step: int
    tokens_per_step: int | None


def training_schedule(  # noqa: PLR0913 - the Trainer's settings, keyword-only past the batch
    n_samples: int,
    per_device: int,
    accumulation: int = 1,
    devices: int = 1,
    *,
    epochs: float | None = None,
    max_steps: int | None = None,
    warmup: int | float = 0,
    drop_last: bool = False,
    sharding: Sharding = "batches",
    seq_len: int | None = None,
) -> TrainingSchedule:
    """Bundle steps per epoch, total steps, warmup and per-step sizes, as HF's Trainer
    (or Lightning, with ``sharding="samples"``: see `micro_batches_per_epoch`).

    Give exactly one of *epochs* (may be fractional: total = ceil(epochs x steps per
    epoch)) or *max_steps* (then ``epochs`` reports max_steps / steps per epoch).

    Examples:
        >>> s = training_schedule(10_000, 8, 4, 2, epochs=3, warmup=0.05, seq_len=2048)
        >>> s.steps_per_epoch, s.total_steps, s.warmup_steps, s.samples_per_step, s.tokens_per_step
        (157, 471, 24, 64, 131072)
    """
    per_epoch = steps_per_epoch(
        n_samples, per_device, accumulation, devices, drop_last=drop_last, sharding=sharding
    )
    if (epochs is None) == (max_steps is None):
        message = f"give exactly one of epochs or max_steps, got {epochs=}, {max_steps=}"
        raise BatchError(message, argument=None, value=None)
    if max_steps is not None:
        total = check_int("max_steps", max_steps)
        run_epochs = total / per_epoch
    else:
        run_epochs = _positive_number("epochs", epochs)
        # (whole epochs in ints: a float product rounds past 2**53 steps)
        steps = epochs * per_epoch if isinstance(epochs, int) else run_epochs * per_epoch
        if not steps <= MAX_INT:  # also inf
            shown_epochs = _short_repr(run_epochs)
            reason = f"{shown_epochs} x {per_epoch} steps per epoch is over 2**63 - 1 steps"
            raise BatchError(reason, argument="epochs", value=epochs)
        total = math.ceil(steps)
    samples = effective_batch_size(per_device, accumulation, devices)
    tokens = None
    if seq_len is not None:
        tokens = _check_result("tokens per step", samples * check_int("seq_len", seq_len))
    return TrainingSchedule(
        steps_per_epoch=per_epoch,
        total_steps=total,
        epochs=run_epochs,
        warmup_steps=warmup_steps(total, warmup),
        samples_per_step=samples,
        tokens_per_step=tokens,
    )


# -- DeepSpeed ------------------------------------------------------------------------------

_TRAIN = "train_batch_size"
_MICRO = "train_micro_batch_size_per_gpu"
_GAS = "gradient_accumulation_steps"


def _batch_keys_given(config: Mapping[str, Any]) -> dict[str, int]:
    """The batch keys *config* sets (an ``"auto"`` refused), as ints."""
    values: dict[str, int] = {}
    for key in (_TRAIN, _MICRO, _GAS):
        if config.get(key) is None:
            continue
        if isinstance(config[key], str) and config[key] == "auto":
            reason = "is 'auto': resolve it first (the HF integration fills it in)"
            raise BatchError(reason, argument=key, value=config[key])
        values[key] = check_int(key, config[key])
    return values


def _missing_factor(train: int, world: int, *, known_key: str, known: int, missing: str) -> int:
    """The key *missing*, from train_batch_size = *known_key* x *missing* x world_size."""
    product = known * world
    if train % product:
        no_whole = f"= {product}: no whole {missing}"
        reason = f"{train} is not divisible by {known_key} {known} x world size {world} {no_whole}"
        message = (
            f"{_TRAIN} {train} is not divisible by {known_key} {known} x world_size {world} "
            f"{no_whole}"
        )
        raise BatchError(reason, argument=_TRAIN, value=train, message=message)
    return train // product


def plan_from_deepspeed(config: Mapping[str, Any], world_size: int) -> BatchPlan:
    """Resolve DeepSpeed's three batch keys as DeepSpeed does, but exactly.

    ``train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps x
    world_size`` (world_size: the data-parallel size). Any two infer the third; one of
    ``train_batch_size`` or the micro batch alone sets accumulation to 1. Where DeepSpeed
    floors a division and then fails with "train_batch_size is not equal to
    micro_batch_per_gpu * gradient_acc_step * world_size", this names the field and the
    value that would fix it. Unresolved ``"auto"``, floats and bools are refused.

    Examples:
        >>> config = {"train_batch_size": 64, "gradient_accumulation_steps": 4}
        >>> str(plan_from_deepspeed(config, world_size=2))
        '8 x 4 x 2 = 64'
        >>> plan_from_deepspeed({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4,
        ...                         "gradient_accumulation_steps": 4}, 2)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: train_batch_size 64 != train_micro_batch_size_per_gpu 4 x
        gradient_accumulation_steps 4 x world_size 2 = 32: set train_batch_size to 32 or
        gradient_accumulation_steps to 8 or train_micro_batch_size_per_gpu to 8
    """
    given: object = config
    if not isinstance(given, Mapping):
        reason = f"must be a mapping (a DeepSpeed config dict), got {type(given).__name__}"
        raise BatchTypeError(reason, argument="config", value=given)
    world = check_int("world_size", world_size)
    values = _batch_keys_given(config)
    train, micro, gas = values.get(_TRAIN), values.get(_MICRO), values.get(_GAS)
    if micro is None:
        if train is None:
            reason = f"sets neither {_TRAIN} nor {_MICRO} (DeepSpeed needs one of them)"
            message = f"give {_TRAIN} or {_MICRO} (DeepSpeed needs one of them)"
            raise BatchError(reason, argument="config", value=config, message=message)
        gas = gas or 1
        micro = _missing_factor(train, world, known_key=_GAS, known=gas, missing=_MICRO)
    elif train is None:
        gas = gas or 1
        train = _check_result(_TRAIN, micro * gas * world)
    elif gas is None:
        gas = _missing_factor(train, world, known_key=_MICRO, known=micro, missing=_GAS)
    elif micro * gas * world != train:
        raise _inconsistent_keys(train, world, micro=micro, gas=gas)
    return BatchPlan(train, micro, gas, world, micro)


def _inconsistent_keys(train: int, world: int, *, micro: int, gas: int) -> BatchError:
    """The error for three batch keys that do not multiply out, with the fixes that would."""
    product = micro * gas * world
    fixes = [f"{_TRAIN} to {product}"] if product <= MAX_INT else []  # (only what it takes)
    if train % (micro * world) == 0:
        fixes.append(f"{_GAS} to {train // (micro * world)}")
    if train % (gas * world) == 0:
        fixes.append(f"{_MICRO} to {train // (gas * world)}")
    factors = f"{_MICRO} {micro} x {_GAS} {gas}"
    fix = "set " + " or ".join(fixes) if fixes else "no whole value of one key fixes it"
    reason = f"{train} != {factors} x world size {world} = {product}: {fix}"
    message = f"{_TRAIN} {train} != {factors} x world_size {world} = {product}: {fix}"
    return BatchError(reason, argument=_TRAIN, value=train, message=message)
