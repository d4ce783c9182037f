"""Tests for devutils.batch: the rule's examples, every documented error, brute-force properties."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from devutils.batch import (
    BatchError,
    BatchPlan,
    BatchTypeError,
    auto_plan,
    check_deepspeed_config,
    data_parallel_size,
    effective_batch_size,
    find_max_batch_size,
    is_oom_error,
    micro_batches_per_epoch,
    plan_batch,
    scale_lr,
    steps_for_tokens,
    steps_per_epoch,
    tokens_per_step,
    training_schedule,
    warmup_steps,
)

# -- the rule's examples -----------------------------------------------------------------


def test_effective_batch_examples() -> None:
    assert effective_batch_size(4, 16) == 64
    assert effective_batch_size(64, 1) == 64
    assert effective_batch_size(8, 6, 2) == 96


@pytest.mark.parametrize(
    ("target", "max_per_device", "devices", "expected"),
    [
        (64, 4, 1, "4 x 16 x 1 = 64"),
        (64, 6, 1, "4 x 16 x 1 = 64"),
        (96, 8, 2, "8 x 6 x 2 = 96"),
        (64, 64, 1, "64 x 1 x 1 = 64"),
        (64, 1000, 1, "64 x 1 x 1 = 64"),
        (97, 8, 1, "1 x 97 x 1 = 97"),
    ],
)
def test_plan_examples(target: int, max_per_device: int, devices: int, expected: str) -> None:
    plan = plan_batch(target, max_per_device, devices)
    assert str(plan) == expected
    assert plan.exact
    assert plan.effective == target


def test_plan_fields_and_exports() -> None:
    plan = plan_batch(64, 6)
    assert (plan.target, plan.per_device, plan.accumulation, plan.devices, plan.max_per_device) == (
        64,
        4,
        16,
        1,
        6,
    )
    assert plan.memory_utilization == pytest.approx(4 / 6)
    assert plan.to_hf() == {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 16}
    assert plan.to_deepspeed() == {
        "train_batch_size": 64,
        "train_micro_batch_size_per_gpu": 4,
        "gradient_accumulation_steps": 16,
    }
    assert plan.to_lightning() == {
        "trainer": {"accumulate_grad_batches": 16, "devices": 1},
        "dataloader": {"batch_size": 4},
    }
    with pytest.raises(AttributeError):
        plan.per_device = 8  # type: ignore[misc]


def test_prime_target_with_min_per_device_is_refused_with_suggestions() -> None:
    with pytest.raises(BatchError, match="nearest achievable targets: 96 below, 98 above"):
        plan_batch(97, 8, min_per_device=2)


@pytest.mark.parametrize(
    ("rounding", "expected"),
    [("down", "8 x 12 x 1 = 96"), ("up", "7 x 14 x 1 = 98"), ("nearest", "8 x 12 x 1 = 96")],
)
def test_rounding(rounding: Any, expected: str) -> None:
    plan = plan_batch(97, 8, min_per_device=2, rounding=rounding)
    assert str(plan) == expected
    assert not plan.exact
    assert plan.target == 97


def test_target_not_divisible_by_devices() -> None:
    with pytest.raises(
        BatchError,
        match=r"no exact split of target 65 .* on 2 device\(s\); nearest achievable targets: 64 below, 66 above",
    ):
        plan_batch(65, 8, 2)
    assert str(plan_batch(65, 8, 2, rounding="up")) == "3 x 11 x 2 = 66"


def test_rounding_down_with_nothing_below() -> None:
    with pytest.raises(BatchError, match="no achievable target down from 3"):
        plan_batch(3, 8, 4, rounding="down")


# -- errors -----------------------------------------------------------------------------

BAD_INTS = [True, 4.0, "4", None, 0, -1]


@pytest.mark.parametrize("bad", BAD_INTS, ids=repr)
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("per_device", lambda v: effective_batch_size(v, 1, 1)),
        ("accumulation", lambda v: effective_batch_size(4, v, 1)),
        ("devices", lambda v: effective_batch_size(4, 1, v)),
        ("target", lambda v: plan_batch(v, 4)),
        ("max_per_device", lambda v: plan_batch(64, v)),
        ("min_per_device", lambda v: plan_batch(64, 4, min_per_device=v)),
        ("world_size", data_parallel_size),
        ("tensor_parallel", lambda v: data_parallel_size(8, tensor_parallel=v)),
        ("n_samples", lambda v: steps_per_epoch(v, 4)),
        ("total_steps", lambda v: warmup_steps(v, 10)),
        ("seq_len", lambda v: tokens_per_step(4, seq_len=v)),
        ("total_tokens", lambda v: steps_for_tokens(v, 4, seq_len=128)),
        ("base_batch", lambda v: scale_lr(1e-3, v, 64)),
        ("max_value", lambda v: find_max_batch_size(lambda n: None, max_value=v)),
        ("start", lambda v: find_max_batch_size(lambda n: None, start=v)),
        ("world_size", lambda v: check_deepspeed_config({"train_batch_size": 8}, v)),
        ("train_batch_size", lambda v: check_deepspeed_config({"train_batch_size": v}, 1)),
    ],
)
def test_every_integer_argument_refuses_bad_values(
    name: str, call: Callable[[object], object], bad: object
) -> None:
    if bad is None and name in ("start", "train_batch_size"):
        return  # None means "not given" there: the default start, a missing DeepSpeed key
    expected = BatchError if isinstance(bad, int) and not isinstance(bad, bool) else BatchTypeError
    with pytest.raises(expected, match=name) as info:
        call(bad)
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)
    assert isinstance(info.value, ValueError)
    if expected is BatchTypeError:
        assert isinstance(info.value, TypeError)


def test_data_parallel_size() -> None:
    assert data_parallel_size(16, tensor_parallel=2, pipeline_parallel=2) == 4
    assert data_parallel_size(8) == 8
    with pytest.raises(BatchError, match="world_size 12 is not divisible"):
        data_parallel_size(12, tensor_parallel=8)


def test_plan_argument_errors() -> None:
    with pytest.raises(BatchError, match="rounding must be"):
        plan_batch(64, 4, rounding="sideways")  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="min_per_device 8 is larger than max_per_device 4"):
        plan_batch(64, 4, min_per_device=8)


# -- schedule ---------------------------------------------------------------------------


def test_steps_examples() -> None:
    assert micro_batches_per_epoch(1000, 8, 2) == 63
    assert micro_batches_per_epoch(1000, 8, 2, drop_last=True) == 62
    assert steps_per_epoch(1000, 8, 4, 2) == 16
    assert steps_per_epoch(100, 4, 8) == 4  # 25 micro-batches: 3 full windows + 1 partial
    with pytest.raises(BatchError, match="no full micro-batch"):
        steps_per_epoch(10, 8, 1, 2, drop_last=True)
    with pytest.raises(BatchTypeError, match="drop_last must be a bool"):
        steps_per_epoch(10, 8, drop_last=1)  # type: ignore[arg-type]


def test_warmup() -> None:
    assert warmup_steps(1000, 0.1) == 100
    assert warmup_steps(1001, 0.1) == 101
    assert warmup_steps(1000, 0.0) == 0
    assert warmup_steps(1000, 1000) == 1000
    for bad in (1.0, 1.5, -0.1):
        with pytest.raises(BatchError, match="ratio must be in"):
            warmup_steps(1000, bad)
    with pytest.raises(BatchError, match="warmup 1001 must be between 0 and total_steps 1000"):
        warmup_steps(1000, 1001)
    for wrong in (True, "0.1", None):
        with pytest.raises(BatchTypeError, match="warmup must be an int count or a float ratio"):
            warmup_steps(1000, wrong)  # type: ignore[arg-type]


def test_training_schedule() -> None:
    schedule = training_schedule(10_000, 8, 4, 2, epochs=3, warmup=0.05, seq_len=2048)
    assert (schedule.steps_per_epoch, schedule.total_steps, schedule.warmup_steps) == (157, 471, 24)
    assert (schedule.samples_per_step, schedule.tokens_per_step) == (64, 131072)
    half = training_schedule(10_000, 8, 4, 2, epochs=0.5)
    assert half.total_steps == 79
    capped = training_schedule(10_000, 8, 4, 2, max_steps=200)
    assert (capped.total_steps, capped.epochs) == (200, 200 / 157)
    with pytest.raises(BatchError, match="exactly one of epochs or max_steps"):
        training_schedule(10_000, 8)
    with pytest.raises(BatchError, match="exactly one of epochs or max_steps"):
        training_schedule(10_000, 8, epochs=1, max_steps=5)


def test_lr_and_tokens() -> None:
    assert scale_lr(1e-4, 256, 1024) == pytest.approx(4e-4)
    assert scale_lr(1e-4, 256, 1024, rule="sqrt") == pytest.approx(2e-4)
    with pytest.raises(BatchError, match="rule must be 'linear' or 'sqrt'"):
        scale_lr(1e-4, 256, 1024, rule="cubic")  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="base_lr must be a finite number > 0"):
        scale_lr(float("nan"), 256, 1024)
    with pytest.raises(BatchTypeError, match="base_lr must be a number"):
        scale_lr(True, 256, 1024)
    assert tokens_per_step(8, 4, 8, seq_len=4096) == 1_048_576
    assert steps_for_tokens(10**9, 8, 4, 8, seq_len=4096) == 954


# -- finding what fits --------------------------------------------------------------------


class FakeOOM(RuntimeError):
    pass


def probe_below(
    threshold: int,
    calls: list[int] | None = None,
    message: str = "CUDA out of memory. Tried to allocate 2 GiB",
) -> Callable[[int], None]:
    def probe(size: int) -> None:
        if calls is not None:
            calls.append(size)
        if size > threshold:
            raise FakeOOM(message)

    return probe


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"),
        RuntimeError(
            "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."
        ),
        RuntimeError(
            "[enforce fail at alloc_cpu.cpp:114] DefaultCPUAllocator: can't allocate memory: you tried to allocate 1234"
        ),
        RuntimeError("XPU out of memory. Tried to allocate"),
        RuntimeError("MPS backend out of memory (MPS allocated: 1.2 GB)"),
        MemoryError(),
        type("OutOfMemoryError", (RuntimeError,), {})("whatever"),
    ],
)
def test_is_oom_error(exc: BaseException) -> None:
    assert is_oom_error(exc)


@pytest.mark.parametrize(
    "exc", [RuntimeError("shape mismatch"), ValueError("CUDA"), KeyError("memory")]
)
def test_is_not_oom_error(exc: BaseException) -> None:
    assert not is_oom_error(exc)


def test_finder_lets_other_errors_through() -> None:
    def probe(size: int) -> None:
        if size > 4:
            raise ValueError("bad input shape")

    with pytest.raises(ValueError, match="bad input shape"):
        find_max_batch_size(probe)


def test_finder_nothing_fits() -> None:
    with pytest.raises(BatchError, match="no batch size fits: even 1 ran out of memory"):
        find_max_batch_size(probe_below(0))
    with pytest.raises(BatchError, match="no batch size fits"):
        find_max_batch_size(probe_below(0), mode="decay", max_value=64)


def test_finder_decay_reproduces_accelerate() -> None:
    calls: list[int] = []
    result = find_max_batch_size(probe_below(100, calls), mode="decay", start=128)
    assert calls == [128, 115, 103, 92]  # x0.9 per failure, as accelerate
    assert result.batch_size == 92
    assert [t.fits for t in result.trials] == [False, False, False, True]


def test_finder_reports_trials_and_keeps_no_state() -> None:
    first = find_max_batch_size(probe_below(48))
    second = find_max_batch_size(probe_below(48))
    assert first == second
    assert first.trials[0].batch_size == 1
    assert all(t.error and "CUDA out of memory" in t.error for t in first.trials if not t.fits)


def test_finder_probe_must_be_callable() -> None:
    with pytest.raises(BatchTypeError, match="probe must be callable"):
        find_max_batch_size(42)  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="mode must be"):
        find_max_batch_size(lambda n: None, mode="linear")  # type: ignore[arg-type]


@given(
    threshold=st.integers(0, 5000),
    max_value=st.integers(1, 4096),
    start=st.none() | st.integers(1, 4096),
)
def test_binsearch_finds_exactly_the_largest_fitting_size(
    threshold: int, max_value: int, start: int | None
) -> None:
    assume(start is None or start <= max_value)
    calls: list[int] = []
    probe = probe_below(threshold, calls)
    if threshold == 0:
        with pytest.raises(BatchError):
            find_max_batch_size(probe, start=start, max_value=max_value)
        return
    result = find_max_batch_size(probe, start=start, max_value=max_value)
    assert result.batch_size == min(threshold, max_value)
    assert max(calls) <= max_value
    assert [t.batch_size for t in result.trials] == calls
    assert all(t.fits == (t.batch_size <= threshold) for t in result.trials)


@given(
    threshold=st.integers(1, 5000),
    max_value=st.integers(1, 4096),
    mode=st.sampled_from(["power", "decay"]),
)
def test_other_modes_return_only_sizes_that_fit(threshold: int, max_value: int, mode: Any) -> None:
    calls: list[int] = []
    result = find_max_batch_size(probe_below(threshold, calls), max_value=max_value, mode=mode)
    assert result.batch_size <= min(threshold, max_value)
    assert trial_fits(result.trials, result.batch_size)
    assert max(calls) <= max_value


def trial_fits(trials: tuple[Any, ...], size: int) -> bool:
    return any(t.batch_size == size and t.fits for t in trials)


@given(
    devices_and_target=st.integers(1, 8).flatmap(
        lambda d: st.tuples(st.just(d), st.integers(1, 2000 // d).map(lambda k: k * d))
    ),
    threshold=st.integers(1, 600),
)
def test_auto_plan_keeps_the_effective_batch(
    devices_and_target: tuple[int, int], threshold: int
) -> None:
    devices, target = devices_and_target  # target in 1..2000, a multiple of devices
    plan = auto_plan(target, probe_below(threshold), devices)
    assert plan.effective == target
    assert plan.per_device <= threshold
    assert plan.per_device == max(
        p for p in range(1, min(threshold, target // devices) + 1) if (target // devices) % p == 0
    )


# -- DeepSpeed ------------------------------------------------------------------------------


def test_deepspeed_examples() -> None:
    assert (
        str(check_deepspeed_config({"train_batch_size": 64, "gradient_accumulation_steps": 4}, 2))
        == "8 x 4 x 2 = 64"
    )
    assert str(check_deepspeed_config({"train_micro_batch_size_per_gpu": 4}, 8)) == "4 x 1 x 8 = 32"
    assert str(check_deepspeed_config({"train_batch_size": 32}, 8)) == "4 x 1 x 8 = 32"
    assert (
        str(
            check_deepspeed_config({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}, 2)
        )
        == "4 x 8 x 2 = 64"
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {
                "train_batch_size": 64,
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 4,
            },
            "set train_batch_size to 32 or gradient_accumulation_steps to 8",
        ),
        (
            {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 8},
            "no whole gradient_accumulation_steps",
        ),
        (
            {"train_batch_size": 30, "gradient_accumulation_steps": 4},
            "no whole train_micro_batch_size_per_gpu",
        ),
        (
            {"gradient_accumulation_steps": 4},
            "give train_batch_size or train_micro_batch_size_per_gpu",
        ),
        ({"train_batch_size": "auto"}, "train_batch_size is 'auto'"),
        (
            {"train_micro_batch_size_per_gpu": 4.0},
            "train_micro_batch_size_per_gpu must be an int, got float 4.0",
        ),
        (
            {"gradient_accumulation_steps": True, "train_batch_size": 8},
            "gradient_accumulation_steps must be an int, got bool True",
        ),
    ],
)
def test_deepspeed_errors_name_the_field(config: dict[str, object], message: str) -> None:
    with pytest.raises(BatchError, match=message.replace("(", r"\(")):
        check_deepspeed_config(config, 2)


@given(
    micro=st.integers(1, 64),
    gas=st.integers(1, 64),
    world=st.integers(1, 64),
    drop=st.sampled_from(
        ["train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", None]
    ),
)
def test_deepspeed_any_two_infer_the_third(
    micro: int, gas: int, world: int, drop: str | None
) -> None:
    full = {
        "train_batch_size": micro * gas * world,
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": gas,
    }
    config = {k: v for k, v in full.items() if k != drop}
    plan = check_deepspeed_config(config, world)
    assert plan.to_deepspeed() == full
    assert plan.devices == world


# -- properties against brute force -----------------------------------------------------------


@given(
    target=st.integers(1, 3000),
    max_per_device=st.integers(1, 300),
    devices=st.integers(1, 16),
    min_per_device=st.integers(1, 8),
)
def test_plan_is_exact_and_maximal(
    target: int, max_per_device: int, devices: int, min_per_device: int
) -> None:
    assume(min_per_device <= max_per_device)
    candidates = [
        p
        for p in range(min_per_device, max_per_device + 1)
        if target % devices == 0 and (target // devices) % p == 0
    ]
    if not candidates:
        with pytest.raises(BatchError, match="no exact split"):
            plan_batch(target, max_per_device, devices, min_per_device=min_per_device)
        return
    plan = plan_batch(target, max_per_device, devices, min_per_device=min_per_device)
    assert plan.exact
    assert plan.effective == target
    assert plan.per_device == max(candidates)


@given(
    target=st.integers(1, 1500),
    max_per_device=st.integers(1, 64),
    devices=st.integers(1, 8),
    min_per_device=st.integers(1, 8),
    rounding=st.sampled_from(["down", "up", "nearest"]),
)
def test_rounding_moves_to_the_nearest_achievable(
    target: int, max_per_device: int, devices: int, min_per_device: int, rounding: Any
) -> None:
    assume(min_per_device <= max_per_device)
    achievable = {
        p * a * devices
        for p in range(min_per_device, max_per_device + 1)
        for a in range(1, 2 * target // (p * devices) + 3)
    }
    try:
        plan = plan_batch(
            target, max_per_device, devices, rounding=rounding, min_per_device=min_per_device
        )
    except BatchError:
        assert rounding == "down"
        assert not [t for t in achievable if t <= target]
        return
    assert plan.effective in achievable
    if target in achievable:
        assert plan.exact
        assert plan.effective == target
        return
    below = max((t for t in achievable if t < target), default=None)
    above = min(t for t in achievable if t > target)
    if rounding == "down":
        assert plan.effective == below
    elif rounding == "up":
        assert plan.effective == above
    else:
        assert abs(plan.effective - target) == min(
            abs(t - target) for t in (below, above) if t is not None
        )
    assert not plan.exact


def simulate_steps(n: int, per: int, acc: int, devices: int, drop_last: bool) -> int:
    """Shard n samples into global batches, run micro-batches, step every acc (and at the end)."""
    samples = list(range(n))
    global_batch = per * devices
    batches = [samples[i : i + global_batch] for i in range(0, n, global_batch)]
    if drop_last and batches and len(batches[-1]) < global_batch:
        batches.pop()
    steps = 0
    for index in range(len(batches)):
        if (index + 1) % acc == 0 or index == len(batches) - 1:
            steps += 1
    return steps


@given(
    n=st.integers(1, 5000),
    per=st.integers(1, 64),
    acc=st.integers(1, 32),
    devices=st.integers(1, 8),
    drop_last=st.booleans(),
)
def test_steps_per_epoch_matches_simulation(
    n: int, per: int, acc: int, devices: int, drop_last: bool
) -> None:
    expected = simulate_steps(n, per, acc, devices, drop_last)
    if expected == 0:
        with pytest.raises(BatchError):
            steps_per_epoch(n, per, acc, devices, drop_last=drop_last)
        return
    assert steps_per_epoch(n, per, acc, devices, drop_last=drop_last) == expected
    assert micro_batches_per_epoch(n, per, devices, drop_last=drop_last) == (
        n // (per * devices) if drop_last else math.ceil(n / (per * devices))
    )


@given(total=st.integers(1, 10**6), ratio=st.floats(0, 1, exclude_max=True))
def test_warmup_ratio_is_rounded_up(total: int, ratio: float) -> None:
    steps = warmup_steps(total, ratio)
    assert steps == math.ceil(total * ratio)
    assert 0 <= steps <= total


def test_batch_plan_is_a_dataclass() -> None:
    assert BatchPlan(64, 4, 16, 1, 4).effective == 64


# -- huge numbers and huge caps --------------------------------------------------------------


@given(
    target=st.integers(1, 400),
    devices=st.integers(1, 6),
    min_per_device=st.integers(1, 6),
    cap=st.sampled_from([10**6, 10**9, 2**63 - 1]),
    rounding=st.sampled_from(["exact", "down", "up", "nearest"]),
)
def test_a_huge_cap_plans_as_a_cap_of_the_target(
    target: int, devices: int, min_per_device: int, cap: int, rounding: Any
) -> None:
    # No per-device size above target / devices + 1 can matter: the same plan, or error.
    small = max(min_per_device, target // devices + 1)

    def plan(maximum: int) -> tuple[int, int, bool] | str:
        try:
            found = plan_batch(
                target, maximum, devices, rounding=rounding, min_per_device=min_per_device
            )
        except BatchError as exc:
            return str(exc).replace(f"..{maximum} ", "..CAP ")
        return (found.per_device, found.accumulation, found.exact)

    assert plan(cap) == plan(small)


def test_planning_against_a_cap_of_10_to_the_9_is_instant() -> None:
    plan = plan_batch(97, 10**9, devices=2, rounding="nearest")
    assert (str(plan), plan.exact) == ("48 x 1 x 2 = 96", False)
    prime = 2**61 - 1  # a Mersenne prime: no divisor but 1 and itself
    assert str(plan_batch(prime, 10**9)) == f"1 x {prime} x 1 = {prime}"
    with pytest.raises(BatchError, match=r"nearest achievable targets: \d+ below, \d+ above"):
        plan_batch(prime, 10**9, min_per_device=2)


HUGE = 10**400


@pytest.mark.parametrize(
    "call",
    [
        lambda: warmup_steps(HUGE, 0.1),
        lambda: scale_lr(HUGE, 1, 2),
        lambda: scale_lr(1e-4, HUGE, 2),
        lambda: training_schedule(100, 4, epochs=HUGE),
        lambda: training_schedule(100, 4, epochs=1e308),
        lambda: training_schedule(HUGE, 4, epochs=1),
        lambda: find_max_batch_size(lambda n: None, mode="decay", max_value=HUGE),
        lambda: plan_batch(HUGE, 8),
        lambda: plan_batch(64, HUGE),
        lambda: effective_batch_size(2**62, 4),
        lambda: steps_for_tokens(HUGE, 8, seq_len=4096),
        lambda: check_deepspeed_config({"train_micro_batch_size_per_gpu": 2**62}, 4),
    ],
)
def test_huge_numbers_are_the_modules_error(call: Callable[[], object]) -> None:
    with pytest.raises(BatchError, match=r"2\*\*63 - 1|finite number"):
        call()


@pytest.mark.parametrize(
    ("start", "error"),
    [
        ("8", BatchTypeError),
        (100.5, BatchTypeError),
        (float("inf"), BatchTypeError),
        (0, BatchError),
    ],
)
def test_auto_plan_checks_start_like_every_int(start: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="start"):
        auto_plan(64, lambda n: None, start=start)


# -- the small functions against their formulas ------------------------------------------

_SIZES = st.integers(1, 2**21)


@given(_SIZES, _SIZES, _SIZES, st.integers(1, 2**20))
def test_sizes_and_tokens_are_plain_products(
    per_device: int, accumulation: int, devices: int, seq_len: int
) -> None:
    samples = per_device * accumulation * devices
    if samples > 2**63 - 1:
        with pytest.raises(BatchError, match=r"2\*\*63 - 1"):
            effective_batch_size(per_device, accumulation, devices)
        return
    assert effective_batch_size(per_device, accumulation, devices) == samples
    if samples * seq_len > 2**63 - 1:
        return
    assert tokens_per_step(per_device, accumulation, devices, seq_len=seq_len) == samples * seq_len


@given(st.integers(1, 10**6), st.integers(1, 64), st.integers(1, 64), st.integers(1, 512))
def test_steps_for_tokens_is_the_fewest_steps_that_see_them_all(
    total_tokens: int, per_device: int, accumulation: int, seq_len: int
) -> None:
    per_step = per_device * accumulation * seq_len
    steps = steps_for_tokens(total_tokens, per_device, accumulation, seq_len=seq_len)
    assert steps * per_step >= total_tokens
    assert (steps - 1) * per_step < total_tokens


@given(st.integers(1, 4096), st.integers(1, 8), st.integers(1, 8), st.integers(1, 4))
def test_data_parallel_size_divides_out_the_model_parallel_ranks(
    world: int, tensor: int, pipeline: int, context: int
) -> None:
    model = tensor * pipeline * context
    sizes = {"tensor_parallel": tensor, "pipeline_parallel": pipeline}
    if world % model:
        with pytest.raises(BatchError, match="is not divisible"):
            data_parallel_size(world, **sizes, context_parallel=context)
        return
    assert data_parallel_size(world, **sizes, context_parallel=context) == world // model


@given(
    st.floats(1e-8, 10.0),
    st.integers(1, 2**20),
    st.integers(1, 2**20),
    st.sampled_from(["linear", "sqrt"]),
)
def test_scale_lr_follows_its_rule(lr: float, base: int, new: int, rule: str) -> None:
    scaled = scale_lr(lr, base, new, rule=rule)  # type: ignore[arg-type]
    expected = lr * new / base if rule == "linear" else lr * math.sqrt(new / base)
    assert scaled == pytest.approx(expected, rel=1e-12)
    assert scale_lr(lr, base, base, rule=rule) == pytest.approx(lr)  # type: ignore[arg-type]


@given(st.text("abcdefghijklmnopqrstuvwxyz .:0123456789", max_size=40))
def test_is_oom_error_knows_the_messages_not_the_exception_type(text: str) -> None:
    # Lower-case text holds none of the messages (each has a capital: CUDA, HIP, ...).
    assert not is_oom_error(RuntimeError(text))
    assert is_oom_error(RuntimeError(f"{text}CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_oom_error(MemoryError(text))
