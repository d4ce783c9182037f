"""Find the largest batch size that fits, by running your training step (no torch import).

`find_max_batch_size` calls your ``probe(batch_size)`` at sizes chosen as Lightning's or
accelerate's finders choose them and backs off on out-of-memory errors (`is_oom_error`);
`auto_plan` then plans accumulation for a target effective batch with
`devutils.batch.plan_batch`. This is the part of batch planning with side effects: it
runs the probe, collects garbage and empties the GPU caches of a torch already imported.

Arguments are checked as `devutils.batch` checks them: a `devutils.batch.BatchError` or
`devutils.batch.BatchTypeError` names the argument and the value.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from devutils.batch import (
    BatchError,
    BatchPlan,
    BatchTypeError,
    Rounding,
    check_int,
    check_rounding,
    plan_batch,
)
from devutils.limits import MAX_INT
from devutils.messages import shown

__all__ = ["BatchSearch", "Trial", "auto_plan", "find_max_batch_size", "is_oom_error"]

Mode = Literal["binsearch", "power", "decay"]

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
    "NPU out of memory",  # (these two and the next: accelerate's " out of memory.")
    "MUSA out of memory",
    "MLU out of memory",
    "FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed",  # Habana HPU (accelerate's)
)


def is_oom_error(exc: BaseException) -> bool:
    """Return True if *exc* means "out of memory": try a smaller batch.

    Recognizes ``torch.OutOfMemoryError`` (and any class named ``OutOfMemoryError``),
    Python's `MemoryError`, and the CUDA, cuDNN, CPU-allocator, XPU, MPS, ROCm, XLA, NPU,
    MUSA, MLU and Habana out-of-memory messages (a `RuntimeError` of one message holding
    "CUDA" and "out of memory" too, as Lightning has it), by class name and text, without
    importing torch.

    Raises:
        BatchTypeError: If *exc* is not an exception (a `TypeError` naming ``exc``).

    Examples:
        >>> is_oom_error(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
        True
        >>> is_oom_error(MemoryError()), is_oom_error(ValueError("shape mismatch"))
        (True, False)
    """
    error: object = exc
    if not isinstance(error, BaseException):
        reason = f"must be an exception, got {shown(error)}"
        raise BatchTypeError(reason, argument="exc", value=error)
    if isinstance(exc, MemoryError):
        return True
    if any(cls.__name__ == "OutOfMemoryError" for cls in type(exc).__mro__):
        return True
    text = " ".join(str(arg) for arg in exc.args) if exc.args else str(exc)
    lightning = isinstance(exc, RuntimeError) and len(exc.args) == 1  # (as Lightning asks)
    if lightning and "CUDA" in text and "out of memory" in text:  # "CUDA driver error: ..."
        return True
    return any(message in text for message in _OOM_MESSAGES)


@dataclass(frozen=True)
class Trial:
    """One call of the probe: the batch size and whether it fit (and the error if not).

    ``error`` is the out-of-memory error, as ``"ClassName: message"``; None where it fit.

    Examples:
        >>> fits = lambda n: n <= 3 or (_ for _ in ()).throw(MemoryError("out of memory"))
        >>> [trial for trial in find_max_batch_size(fits).trials if not trial.fits]
        [Trial(batch_size=4, fits=False, error='MemoryError: out of memory')]
    """

    batch_size: int
    fits: bool
    error: str | None = None


@dataclass(frozen=True)
class BatchSearch:
    """The largest batch size that fit, and every trial on the way, in order.

    Examples:
        >>> def step(batch_size):
        ...     if batch_size > 3:
        ...         raise MemoryError("out of memory")
        >>> search = find_max_batch_size(step, max_value=8)
        >>> search.batch_size, [(trial.batch_size, trial.fits) for trial in search.trials]
        (3, [(1, True), (2, True), (4, False), (3, True)])
    """

    batch_size: int
    trials: tuple[Trial, ...] = field(default_factory=tuple)


def _release_memory() -> None:
    """Collect garbage and empty the caches of torch's GPU backends, if torch is imported."""
    gc.collect()
    torch = sys.modules.get("torch")  # only if the caller already imported it
    if torch is None:
        return
    for backend in ("cuda", "xpu", "mps"):
        module = getattr(torch, backend, None)
        with contextlib.suppress(Exception):  # a backend that cannot say is left alone
            if module is not None and module.is_available():
                module.empty_cache()


def _first_size(start: int | None, limit: int, mode: Mode) -> int:
    """The size the search tries first: *start*, else *limit* for decay, 1 for doubling."""
    if start is not None:
        first = check_int("start", start)
    elif mode == "decay":
        first = limit
    else:
        first = 1
    if first > limit:
        reason = f"{first} is larger than the largest size to try, {limit}"
        message = f"start {first} is larger than max_value {limit}"
        raise BatchError(reason, argument="start", value=first, message=message)
    return first


def find_max_batch_size(
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
          (default *max_value*) and multiply by *decay* (0.9) after each failure, down
          to 1 (where accelerate, from 81 with *decay* 0.01, would stop at 0 untried).

    Raises:
        BatchError: If even the smallest size tried (1) does not fit (``argument`` None,
            ``value`` the trials), or an argument is out of range.
        BatchTypeError: If *probe* is not callable or an integer argument is not an int.

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
        reason = f"must be callable, got {type(function).__name__} {shown(function)}"
        raise BatchTypeError(reason, argument="probe", value=function)
    limit = check_int("max_value", max_value)
    _check_mode(mode, decay)
    first = _first_size(start, limit, mode)
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
        tried = ", ".join(str(trial.batch_size) for trial in trials)
        last = trials[-1]
        message = (
            f"no batch size fits: even {last.batch_size} ran out of memory (tried {tried}): "
            f"{last.error}"
        )
        raise BatchError(message, argument=None, value=tuple(trials))
    return BatchSearch(best, tuple(trials))


def _check_mode(mode: object, decay: object) -> None:
    """Refuse a *mode* that is none of the three, or for ``"decay"`` a *decay* that is not
    a number in (0, 1)."""
    if not isinstance(mode, str) or mode not in ("binsearch", "power", "decay"):
        reason = f"must be 'binsearch', 'power' or 'decay', got {shown(mode)}"
        error = BatchError if isinstance(mode, str) else BatchTypeError
        raise error(reason, argument="mode", value=mode)
    if mode != "decay":
        return
    if isinstance(decay, bool) or not isinstance(decay, int | float):
        reason = f"must be a float in (0, 1), got {type(decay).__name__} {shown(decay)}"
        raise BatchTypeError(reason, argument="decay", value=decay)
    if not 0 < decay < 1:
        reason = f"must be a float in (0, 1), got {shown(decay)}"
        raise BatchError(reason, argument="decay", value=decay)


def _decay_search(fits: Callable[[int], bool], size: int, decay: float) -> int:
    """accelerate's way: from *size* down by *decay* until one fits (0: none did). Where
    a step would reach 0 from above 1 (81 * 0.01), 1 is tried last (accelerate stops)."""
    while size >= 1:
        if fits(size):
            return size
        size = 0 if size == 1 else max(1, min(int(size * decay), size - 1))
    return 0


def _doubling_search(fits: Callable[[int], bool], size: int, limit: int, *, bisect: bool) -> int:
    """Lightning's way: double from *size* until a failure (or *limit*), then bisect."""
    low, high = 0, limit + 1  # low fits (0: none yet), high does not (limit + 1: unknown)
    while True:
        if fits(size):
            low = size
            if (not bisect and high <= limit) or size == limit:
                return low
            # no failure yet: keep doubling; else bisect between what fit and what did not
            following = min(size * 2, limit) if high > limit else (low + high) // 2
        else:
            high = size
            if not bisect and low:
                return low
            following = (low + high) // 2
        if not low < following < high:
            return low
        size = following


_FINDER_OPTIONS: Final = frozenset({"start", "max_value", "mode", "decay"})
"""The keyword arguments of `find_max_batch_size` that `auto_plan` passes on."""


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
    *finder_options* go to `find_max_batch_size`; *rounding* and *min_per_device* to
    `devutils.batch.plan_batch`.

    Examples:
        >>> fits = lambda n: n <= 12 or (_ for _ in ()).throw(MemoryError())
        >>> str(auto_plan(64, fits))
        '8 x 8 x 1 = 64'
    """
    target = check_int("target", target)
    devices = check_int("devices", devices)
    # The plan's own arguments are checked before the first probe, which may take minutes.
    rounding = check_rounding(rounding)
    low = check_int("min_per_device", min_per_device)
    most_needed = -(-target // devices)
    if rounding != "exact":  # a plan rounded up to min_per_device per device needs as many
        most_needed = max(most_needed, low)
    options = dict(finder_options)
    unknown = sorted(set(options) - _FINDER_OPTIONS)
    if unknown:
        reason = f"is not an option of find_max_batch_size ({', '.join(sorted(_FINDER_OPTIONS))})"
        raise BatchTypeError(reason, argument=unknown[0], value=options[unknown[0]])
    given_max = check_int("max_value", options.get("max_value", most_needed))
    max_value = min(given_max, most_needed)
    options["max_value"] = max_value
    if options.get("start") is not None:
        # A start past a max_value given is refused, as find_max_batch_size refuses it; one
        # past what the target needs (no max_value given) starts there instead.
        limit = given_max if "max_value" in finder_options else None
        _first_size(options["start"], limit if limit is not None else MAX_INT, "binsearch")
        options["start"] = min(options["start"], max_value)
    if low > max_value:
        reason = f"{low} is larger than the most any probe may try, {max_value}"
        message = f"min_per_device {low} is larger than the most any probe may try, {max_value}"
        raise BatchError(reason, argument="min_per_device", value=low, message=message)
    # No plan with the most a probe may find: none with less (said before probing).
    plan_batch(target, max_value, devices, rounding=rounding, min_per_device=low)
    found = find_max_batch_size(probe, **options)
    if found.batch_size < low:
        reason = f"{low} does not fit: the largest per-device batch that fits is {found.batch_size}"
        message = f"min_per_device {reason}"
        raise BatchError(reason, argument="min_per_device", value=low, message=message)
    return plan_batch(target, found.batch_size, devices, rounding=rounding, min_per_device=low)
