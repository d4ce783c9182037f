"""Batch-size arithmetic and planning for ML training, in pure Python (no torch import).

The rule: effective batch = per-device batch x gradient accumulation x devices. Both
4 x 16 and 1 x 64 give 64, but accumulation costs time, so **first set the per-device
batch as high as memory allows, then set accumulation to reach the effective batch**.
`plan_batch` does exactly that; `find_max_batch_size` finds what fits by probing;
`auto_plan` does both; the exports give each framework's own keys.

Every integer argument refuses bool, float (even ``4.0``), str, None, values below its
minimum and values above `MAX_INT` (2**63 - 1, the int64 every framework stores them in)
with a `BatchError` (a `ValueError`) or `BatchTypeError` (also a `TypeError`) that names
the argument and the value; so does a result beyond `MAX_INT`.
"""

from __future__ import annotations

import contextlib
import gc
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from devutils.divisors import divisors, nearest_multiple

__all__ = [
    "MAX_INT",
    "BatchError",
    "BatchPlan",
    "BatchSearch",
    "BatchTypeError",
    "TrainingSchedule",
    "Trial",
    "auto_plan",
    "check_deepspeed_config",
    "data_parallel_size",
    "effective_batch_size",
    "find_max_batch_size",
    "is_oom_error",
    "micro_batches_per_epoch",
    "plan_batch",
    "scale_lr",
    "steps_for_tokens",
    "steps_per_epoch",
    "tokens_per_step",
    "training_schedule",
    "warmup_steps",
]

Rounding = Literal["exact", "down", "up", "nearest"]
Mode = Literal["binsearch", "power", "decay"]


class BatchError(ValueError):
    """A value that makes no sense for batch arithmetic (names the argument and value)."""


class BatchTypeError(BatchError, TypeError):
    """An argument of the wrong type (a bool, float or str where an int belongs, ...)."""


MAX_INT: Final = 2**63 - 1
"""The largest integer argument or result: int64's, what the frameworks store sizes in."""


def _show(value: object, limit: int = 40) -> str:
    """*value*'s repr, shortened for a number of thousands of digits."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:20]}...{text[-8:]} ({len(text)} digits)"


def _int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{name} must be an int, got {type(value).__name__} {_show(value)}"
        raise BatchTypeError(msg)
    if value < minimum:
        msg = f"{name} must be >= {minimum}, got {_show(value)}"
        raise BatchError(msg)
    if value > MAX_INT:
        msg = f"{name} must be <= 2**63 - 1, got {_show(value)}"
        raise BatchError(msg)
    return value


def _result(name: str, value: int) -> int:
    if value > MAX_INT:
        msg = f"{name} is {_show(value)}, more than 2**63 - 1"
        raise BatchError(msg)
    return value


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{name} must be a number, got {type(value).__name__} {_show(value)}"
        raise BatchTypeError(msg)
    try:
        number = float(value)
    except OverflowError:  # an int beyond float's range
        number = math.inf
    if not math.isfinite(number) or number <= 0:
        msg = f"{name} must be a finite number > 0, got {_show(value)}"
        raise BatchError(msg)
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
    sizes = _int("per_device", per_device), _int("accumulation", accumulation)
    return _result("the effective batch", math.prod(sizes) * _int("devices", devices))


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
    world = _int("world_size", world_size)
    model = (
        _int("tensor_parallel", tensor_parallel)
        * _int("pipeline_parallel", pipeline_parallel)
        * _int("context_parallel", context_parallel)
    )
    if world % model:
        sizes = "tensor_parallel x pipeline_parallel x context_parallel"
        msg = f"world_size {world} is not divisible by {sizes} = {model}"
        raise BatchError(msg)
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
    """

    target: int
    per_device: int
    accumulation: int
    devices: int
    max_per_device: int
    exact: bool = True

    @property
    def effective(self) -> int:
        """per_device x accumulation x devices."""
        return self.per_device * self.accumulation * self.devices

    @property
    def memory_utilization(self) -> float:
        """per_device / max_per_device: how much of the memory budget a micro-batch uses."""
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

    def to_lightning(self) -> dict[str, dict[str, int]]:
        """Lightning: ``Trainer(**plan["trainer"])`` and ``DataLoader(**plan["dataloader"])``.

        Examples:
            >>> plan_batch(64, 4).to_lightning()  # doctest: +NORMALIZE_WHITESPACE
            {'trainer': {'accumulate_grad_batches': 16, 'devices': 1},
             'dataloader': {'batch_size': 4}}
        """
        return {
            "trainer": {"accumulate_grad_batches": self.accumulation, "devices": self.devices},
            "dataloader": {"batch_size": self.per_device},
        }


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
            achievable in the rounding direction, or an argument is out of range.
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
    target = _int("target", target)
    high = _int("max_per_device", max_per_device)
    devices = _int("devices", devices)
    low = _int("min_per_device", min_per_device)
    if rounding not in ("exact", "down", "up", "nearest"):
        msg = f"rounding must be 'exact', 'down', 'up' or 'nearest', got {rounding!r}"
        raise BatchError(msg)
    if low > high:
        msg = f"min_per_device {low} is larger than max_per_device {high}"
        raise BatchError(msg)
    if target % devices == 0:
        share = target // devices
        fitting = [d for d in divisors(share) if low <= d <= high]
        if fitting:
            return BatchPlan(target, fitting[-1], share // fitting[-1], devices, high)
    # Achievable targets are devices x k x per, for k >= 1 and per in low..high.
    below_share = nearest_multiple((target - 1) // devices, low, high, "down")
    above_share = nearest_multiple(target // devices + 1, low, high, "up")
    below = None if below_share is None else below_share * devices
    above = None if above_share is None else _result("the target above", above_share * devices)
    if rounding == "exact":
        options = ", ".join(
            f"{value} {side}" for value, side in ((below, "below"), (above, "above")) if value
        )
        msg = (
            f"no exact split of target {target} with {low}..{high} per device on {devices} "
            f"device(s); nearest achievable targets: {options} "
            "(or pass rounding='down', 'up' or 'nearest')"
        )
        raise BatchError(msg)
    if rounding == "down":
        chosen = below
    elif rounding == "up":
        chosen = above
    else:
        closer_below = below is not None and (above is None or target - below <= above - target)
        chosen = below if closer_below else above
    if chosen is None:
        where = f"with {low}..{high} per device on {devices} device(s)"
        msg = f"no achievable target {rounding} from {target} {where}"
        raise BatchError(msg)
    exact = plan_batch(chosen, high, devices, min_per_device=low)
    return BatchPlan(target, exact.per_device, exact.accumulation, devices, high, exact=False)


# -- schedule -------------------------------------------------------------------------------


def micro_batches_per_epoch(
    n_samples: int, per_device: int, devices: int = 1, *, drop_last: bool = False
) -> int:
    """Return the micro-batches each device runs per epoch (the sharded dataloader's length).

    ``ceil(n / (per_device * devices))``, or the floor with *drop_last*. Zero micro-batches
    is an error, as the Hugging Face Trainer raises.

    Examples:
        >>> micro_batches_per_epoch(1000, 8, 2), micro_batches_per_epoch(1000, 8, 2, drop_last=True)
        (63, 62)
        >>> micro_batches_per_epoch(10, 8, 2, drop_last=True)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: n_samples 10 gives no full micro-batch of 8 x 2 devices ...
    """
    n = _int("n_samples", n_samples)
    per = _int("per_device", per_device)
    world = _int("devices", devices)
    flag: object = drop_last
    if not isinstance(flag, bool):
        msg = f"drop_last must be a bool, got {flag!r}"
        raise BatchTypeError(msg)
    global_batch = per * world
    count = n // global_batch if drop_last else -(-n // global_batch)
    if count == 0:
        batch = f"{per} x {world} devices"
        msg = f"n_samples {n} gives no full micro-batch of {batch} with drop_last=True"
        raise BatchError(msg)
    return count


def steps_per_epoch(
    n_samples: int,
    per_device: int,
    accumulation: int = 1,
    devices: int = 1,
    *,
    drop_last: bool = False,
) -> int:
    """Return optimizer steps per epoch, as the Hugging Face Trainer (transformers >= 4.52).

    ``ceil(micro_batches_per_epoch / accumulation)``: a last, partial accumulation window
    still makes a step. transformers before 4.52 used ``max(micro_batches //
    accumulation, 1)``, dropping that last step (transformers issue #36297).

    Examples:
        >>> steps_per_epoch(1000, 8, 4, 2)
        16
        >>> steps_per_epoch(1000, 8, 4, 2, drop_last=True)
        16
    """
    micro = micro_batches_per_epoch(n_samples, per_device, devices, drop_last=drop_last)
    return -(-micro // _int("accumulation", accumulation))


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
    total = _int("total_steps", total_steps)
    if isinstance(warmup, bool) or not isinstance(warmup, int | float):
        kind = type(warmup).__name__
        msg = f"warmup must be an int count or a float ratio, got {kind} {warmup!r}"
        raise BatchTypeError(msg)
    if isinstance(warmup, float):
        if not 0 <= warmup < 1:
            msg = f"warmup as a ratio must be in [0, 1), got {warmup!r}"
            raise BatchError(msg)
        return math.ceil(total * warmup)
    if warmup < 0 or warmup > total:
        msg = f"warmup {warmup} must be between 0 and total_steps {total}"
        raise BatchError(msg)
    return warmup


def tokens_per_step(
    per_device: int, accumulation: int = 1, devices: int = 1, *, seq_len: int
) -> int:
    """Return tokens per optimizer step: effective batch x sequence length.

    Examples:
        >>> tokens_per_step(8, 4, 8, seq_len=4096)
        1048576
    """
    return effective_batch_size(per_device, accumulation, devices) * _int("seq_len", seq_len)


def steps_for_tokens(
    total_tokens: int, per_device: int, accumulation: int = 1, devices: int = 1, *, seq_len: int
) -> int:
    """Return the optimizer steps needed to see *total_tokens* (rounded up).

    Examples:
        >>> steps_for_tokens(10**9, 8, 4, 8, seq_len=4096)
        954
    """
    per_step = tokens_per_step(per_device, accumulation, devices, seq_len=seq_len)
    return -(-_int("total_tokens", total_tokens) // per_step)


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
    lr = _number("base_lr", base_lr)
    ratio = _int("new_batch", new_batch) / _int("base_batch", base_batch)
    name: object = rule
    if name == "linear":
        return lr * ratio
    if name == "sqrt":
        return lr * math.sqrt(ratio)
    msg = f"rule must be 'linear' or 'sqrt', got {rule!r}"
    raise BatchError(msg)


@dataclass(frozen=True)
class TrainingSchedule:
    """Steps and sizes of a training run (see `training_schedule`)."""

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
    seq_len: int | None = None,
) -> TrainingSchedule:
    """Bundle steps per epoch, total steps, warmup and per-step sizes, as HF's Trainer.

    Give exactly one of *epochs* (may be fractional: total = ceil(epochs x steps per
    epoch)) or *max_steps* (then ``epochs`` reports max_steps / steps per epoch).

    Examples:
        >>> s = training_schedule(10_000, 8, 4, 2, epochs=3, warmup=0.05, seq_len=2048)
        >>> s.steps_per_epoch, s.total_steps, s.warmup_steps, s.samples_per_step, s.tokens_per_step
        (157, 471, 24, 64, 131072)
    """
    per_epoch = steps_per_epoch(n_samples, per_device, accumulation, devices, drop_last=drop_last)
    if (epochs is None) == (max_steps is None):
        msg = f"give exactly one of epochs or max_steps, got {epochs=}, {max_steps=}"
        raise BatchError(msg)
    if max_steps is not None:
        total = _int("max_steps", max_steps)
        run_epochs = total / per_epoch
    else:
        run_epochs = _number("epochs", epochs)
        steps = run_epochs * per_epoch
        if not steps <= MAX_INT:  # also inf
            msg = f"epochs {run_epochs!r} x {per_epoch} steps per epoch is over 2**63 - 1 steps"
            raise BatchError(msg)
        total = math.ceil(steps)
    samples = effective_batch_size(per_device, accumulation, devices)
    tokens = None if seq_len is None else samples * _int("seq_len", seq_len)
    return TrainingSchedule(
        per_epoch, total, run_epochs, warmup_steps(total, warmup), samples, tokens
    )


# -- finding what fits ----------------------------------------------------------------------

_OOM_MESSAGES = (
    "CUDA out of memory",
    "CUDA error: out of memory",
    "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "DefaultCPUAllocator: can't allocate memory",
    "XPU out of memory",
    "MPS backend out of memory",
    "HIP out of memory",
    "RESOURCE_EXHAUSTED: Out of memory",
)


def is_oom_error(exc: BaseException) -> bool:
    """Return True if *exc* means "out of memory": try a smaller batch.

    Recognizes ``torch.OutOfMemoryError`` (and any class named ``OutOfMemoryError``),
    Python's `MemoryError`, and the CUDA, cuDNN, CPU-allocator, XPU, MPS, ROCm and XLA
    out-of-memory messages, by class name and text, without importing torch.

    Examples:
        >>> is_oom_error(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
        True
        >>> is_oom_error(MemoryError()), is_oom_error(ValueError("shape mismatch"))
        (True, False)
    """
    if isinstance(exc, MemoryError):
        return True
    if any(cls.__name__ == "OutOfMemoryError" for cls in type(exc).__mro__):
        return True
    text = " ".join(str(arg) for arg in exc.args) if exc.args else str(exc)
    return any(message in text for message in _OOM_MESSAGES)


@dataclass(frozen=True)
class Trial:
    """One call of the probe: the batch size and whether it fit (and the error if not)."""

    batch_size: int
    fits: bool
    error: str | None = None


@dataclass(frozen=True)
class BatchSearch:
    """The largest batch size that fit, and every trial on the way, in order."""

    batch_size: int
    trials: tuple[Trial, ...] = field(default_factory=tuple)


def _release_memory() -> None:
    gc.collect()
    torch = sys.modules.get("torch")  # only if the caller already imported it
    for backend in ("cuda", "xpu", "mps") if torch is not None else ():
        module = getattr(torch, backend, None)
        with contextlib.suppress(Exception):  # a backend that cannot say is left alone
            if module is not None and module.is_available():
                module.empty_cache()


def find_max_batch_size(  # noqa: C901 - its arguments checked, then one of two searches
    probe: Callable[[int], object],
    *,
    start: int | None = None,
    max_value: int = 8192,
    mode: Mode = "binsearch",
    decay: float = 0.9,
) -> BatchSearch:
    """Find the largest batch size for which ``probe(batch_size)`` runs without running out
    of memory.

    *probe* should run one representative step (forward and backward) at that size.
    Out-of-memory errors (see `is_oom_error`) mean "too big"; any other exception
    propagates. The search keeps no state between calls, never tries more than
    *max_value*, and never returns a size that was not probed successfully.

    Modes:
        * ``"binsearch"`` (Lightning's ``scale_batch_size(mode="binsearch")``): double from
          *start* until a failure, then bisect; exact when fitting is monotone.
        * ``"power"`` (Lightning's ``mode="power"``): double until a failure; return the
          last size that fit.
        * ``"decay"`` (accelerate's ``find_executable_batch_size``): start at *start*
          (default *max_value*) and multiply by *decay* (0.9) after each failure.

    Raises:
        BatchError: If even the smallest size tried (1) does not fit, or an argument is
            out of range.

    Examples:
        >>> fits = lambda n: n <= 48 or (_ for _ in ()).throw(RuntimeError("CUDA out of memory."))
        >>> search = find_max_batch_size(fits)
        >>> search.batch_size, [t.batch_size for t in search.trials]
        (48, [1, 2, 4, 8, 16, 32, 64, 48, 56, 52, 50, 49])
        >>> find_max_batch_size(fits, mode="power").batch_size
        32
    """
    function: object = probe
    if not callable(function):
        msg = f"probe must be callable, got {type(function).__name__} {function!r}"
        raise BatchTypeError(msg)
    limit = _int("max_value", max_value)
    if mode not in ("binsearch", "power", "decay"):
        msg = f"mode must be 'binsearch', 'power' or 'decay', got {mode!r}"
        raise BatchError(msg)
    first = _int("start", start) if start is not None else (limit if mode == "decay" else 1)
    if first > limit:
        msg = f"start {first} is larger than max_value {limit}"
        raise BatchError(msg)
    if mode == "decay" and not (isinstance(decay, float) and 0 < decay < 1):
        msg = f"decay must be a float in (0, 1), got {decay!r}"
        raise BatchError(msg)
    trials: list[Trial] = []

    def fits(size: int) -> bool:
        try:
            probe(size)
        except Exception as exc:
            if not is_oom_error(exc):
                raise
            trials.append(Trial(size, False, f"{type(exc).__name__}: {exc}"))
        else:
            trials.append(Trial(size, True))
            return True
        # Outside the except block, so the traceback (and the tensors its frames hold)
        # is gone before the caches are emptied.
        _release_memory()
        return False

    if mode == "decay":
        best = _decay_search(fits, first, decay)
    else:
        best = _doubling_search(fits, first, limit, bisect=mode == "binsearch")
    if best == 0:
        tried = ", ".join(str(t.batch_size) for t in trials)
        last = trials[-1]
        trying = f"even {last.batch_size} ran out of memory (tried {tried})"
        msg = f"no batch size fits: {trying}: {last.error}"
        raise BatchError(msg)
    return BatchSearch(best, tuple(trials))


def _decay_search(fits: Callable[[int], bool], size: int, decay: float) -> int:
    """accelerate's way: from *size* down by *decay* until one fits (0: none did)."""
    while size >= 1:
        if fits(size):
            return size
        size = min(int(size * decay), size - 1)
    return 0


def _doubling_search(fits: Callable[[int], bool], size: int, limit: int, *, bisect: bool) -> int:
    """Lightning's way: double from *size* until a failure (or *limit*), then bisect."""
    low, high = 0, limit + 1  # low fits (0: none yet), high does not (limit + 1: unknown)
    while True:
        if fits(size):
            low = size
            if (not bisect and high <= limit) or size == limit:
                return low
            following = min(size * 2, limit) if high > limit else (low + high) // 2
        else:
            high = size
            if not bisect and low:
                return low
            following = (low + high) // 2
        if not low < following < high:
            return low
        size = following


def auto_plan(
    target: int,
    probe: Callable[[int], object],
    devices: int = 1,
    *,
    rounding: Rounding = "exact",
    min_per_device: int = 1,
    **finder_options: Any,
) -> BatchPlan:
    """Find the largest per-device batch that fits, then plan accumulation for *target*.

    Unlike an auto batch-size finder that only shrinks the batch (and so silently changes
    the effective batch), the effective batch stays at *target*. The search never
    probes more than ``target / devices`` (rounded up), the most one device needs.

    Examples:
        >>> fits = lambda n: n <= 12 or (_ for _ in ()).throw(MemoryError())
        >>> str(auto_plan(64, fits))
        '8 x 8 x 1 = 64'
    """
    target = _int("target", target)
    devices = _int("devices", devices)
    share = -(-target // devices)
    options = dict(finder_options)
    options["max_value"] = min(_int("max_value", options.get("max_value", share)), share)
    if options.get("start") is not None:
        options["start"] = min(_int("start", options["start"]), options["max_value"])
    found = find_max_batch_size(probe, **options)
    return plan_batch(
        target, found.batch_size, devices, rounding=rounding, min_per_device=min_per_device
    )


# -- DeepSpeed ------------------------------------------------------------------------------

_TRAIN = "train_batch_size"
_MICRO = "train_micro_batch_size_per_gpu"
_GAS = "gradient_accumulation_steps"


def _deepspeed_values(config: Mapping[str, Any]) -> dict[str, int]:
    """The batch keys *config* sets (an ``"auto"`` refused), as ints."""
    values: dict[str, int] = {}
    for key in (_TRAIN, _MICRO, _GAS):
        if config.get(key) is not None:
            if config[key] == "auto":
                msg = f"{key} is 'auto': resolve it first (the HF integration fills it in)"
                raise BatchError(msg)
            values[key] = _int(key, config[key])
    return values


def _whole(train: int, given: str, value: int, world: int, wanted: str) -> int:
    """*wanted*, from train_batch_size = *given* (*value*) x *wanted* x world_size."""
    if train % (value * world):
        msg = (
            f"{_TRAIN} {train} is not divisible by {given} {value} x world_size {world} = "
            f"{value * world}: no whole {wanted}"
        )
        raise BatchError(msg)
    return train // (value * world)


def check_deepspeed_config(config: Mapping[str, Any], world_size: int) -> BatchPlan:
    """Resolve DeepSpeed's three batch keys as DeepSpeed does, but exactly.

    ``train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps x
    world_size`` (world_size: the data-parallel size). Any two infer the third; one of
    ``train_batch_size`` or the micro batch alone sets accumulation to 1. Where DeepSpeed
    floors a division and then fails with "train_batch_size is not equal to
    micro_batch_per_gpu * gradient_acc_step * world_size", this names the field and the
    value that would fix it. Unresolved ``"auto"``, floats and bools are refused.

    Examples:
        >>> config = {"train_batch_size": 64, "gradient_accumulation_steps": 4}
        >>> str(check_deepspeed_config(config, world_size=2))
        '8 x 4 x 2 = 64'
        >>> check_deepspeed_config({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4,
        ...                         "gradient_accumulation_steps": 4}, 2)
        Traceback (most recent call last):
        ...
        devutils.batch.BatchError: train_batch_size 64 != train_micro_batch_size_per_gpu 4 x
        gradient_accumulation_steps 4 x world_size 2 = 32: set train_batch_size to 32 or
        gradient_accumulation_steps to 8 or train_micro_batch_size_per_gpu to 8
    """
    given: object = config
    if not isinstance(given, Mapping):
        msg = f"config must be a mapping (a DeepSpeed config dict), got {type(given).__name__}"
        raise BatchTypeError(msg)
    world = _int("world_size", world_size)
    values = _deepspeed_values(config)
    train, micro, gas = values.get(_TRAIN), values.get(_MICRO), values.get(_GAS)
    if micro is None:
        if train is None:
            msg = f"give {_TRAIN} or {_MICRO} (DeepSpeed needs one of them)"
            raise BatchError(msg)
        gas = gas or 1
        micro = _whole(train, _GAS, gas, world, _MICRO)
    elif train is None:
        gas = gas or 1
        train = _result(_TRAIN, micro * gas * world)
    elif gas is None:
        gas = _whole(train, _MICRO, micro, world, _GAS)
    elif micro * gas * world != train:
        product = micro * gas * world
        fixes = [f"set {_TRAIN} to {product}"]
        if train % (micro * world) == 0:
            fixes.append(f"{_GAS} to {train // (micro * world)}")
        if train % (gas * world) == 0:
            fixes.append(f"{_MICRO} to {train // (gas * world)}")
        msg = (
            f"{_TRAIN} {train} != {_MICRO} {micro} x {_GAS} {gas} x world_size {world} = "
            f"{product}: " + " or ".join(fixes)
        )
        raise BatchError(msg)
    return BatchPlan(train, micro, gas, world, micro)
