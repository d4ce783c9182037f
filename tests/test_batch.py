"""Tests for devutils.batch: the rule's examples, every documented error, brute-force properties."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import pickle
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from devutils.batch import (
    MAX_INT,
    BatchError,
    BatchPlan,
    BatchTypeError,
    TrainingSchedule,
    check_int,
    check_rounding,
    data_parallel_size,
    effective_batch_size,
    micro_batches_per_epoch,
    plan_batch,
    plan_from_deepspeed,
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
    # the error without rounding offers only the roundings that reach a target
    with pytest.raises(BatchError, match=r"12 above \(or pass rounding='up' or 'nearest'\)$"):
        plan_batch(3, 8, 4, min_per_device=3)
    with pytest.raises(BatchError, match=r" below \(or pass rounding='down' or 'nearest'\)$"):
        plan_batch(2**63 - 1, 10, min_per_device=8)


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
        ("world_size", lambda v: plan_from_deepspeed({"train_batch_size": 8}, v)),
        ("train_batch_size", lambda v: plan_from_deepspeed({"train_batch_size": v}, 1)),
        ("n", lambda v: check_int("n", v)),
    ],
)
def test_every_integer_argument_refuses_bad_values(
    name: str, call: Callable[[object], object], bad: object
) -> None:
    if bad is None and name == "train_batch_size":
        return  # None means "not given" there: a missing DeepSpeed key
    expected = BatchError if isinstance(bad, int) and not isinstance(bad, bool) else BatchTypeError
    with pytest.raises(expected, match=name) as info:
        call(bad)
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)
    assert (info.value.argument, info.value.value) == (name, bad)
    assert info.value.value is bad
    assert str(info.value) == f"{name} {info.value.reason}"
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, TypeError) == (expected is BatchTypeError)


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


# -- what an error carries ------------------------------------------------------------

DS_MISMATCH = {
    "train_batch_size": 64,
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 4,
}

# (the call, the function called, the argument and the value the error names)
ERRORS: list[tuple[Callable[[], object], Callable[..., object], str, object]] = [
    (lambda: data_parallel_size(12, tensor_parallel=8), data_parallel_size, "world_size", 12),
    (lambda: plan_batch(64, 4, rounding="sideways"), plan_batch, "rounding", "sideways"),  # type: ignore[arg-type]
    (lambda: plan_batch(64, 4, min_per_device=8), plan_batch, "min_per_device", 8),
    (lambda: plan_batch(97, 8, min_per_device=2), plan_batch, "target", 97),
    (lambda: plan_batch(65, 8, 2), plan_batch, "target", 65),
    (lambda: plan_batch(3, 8, 4, rounding="down"), plan_batch, "target", 3),
    (
        lambda: micro_batches_per_epoch(10, 8, 2, drop_last=True),
        micro_batches_per_epoch,
        "n_samples",
        10,
    ),
    (
        lambda: micro_batches_per_epoch(10, 8, drop_last=1),  # type: ignore[arg-type]
        micro_batches_per_epoch,
        "drop_last",
        1,
    ),
    (lambda: warmup_steps(1000, 1001), warmup_steps, "warmup", 1001),
    (lambda: warmup_steps(1000, 1.5), warmup_steps, "warmup", 1.5),
    (lambda: warmup_steps(1000, "0.1"), warmup_steps, "warmup", "0.1"),  # type: ignore[arg-type]
    (lambda: scale_lr(1e-4, 256, 1024, rule="cubic"), scale_lr, "rule", "cubic"),  # type: ignore[arg-type]
    (lambda: scale_lr(math.inf, 256, 1024), scale_lr, "base_lr", math.inf),
    (lambda: training_schedule(100, 4, epochs=1e308), training_schedule, "epochs", 1e308),
    (lambda: plan_from_deepspeed([64], 2), plan_from_deepspeed, "config", [64]),  # type: ignore[arg-type]
    (
        lambda: plan_from_deepspeed({"train_batch_size": "auto"}, 2),
        plan_from_deepspeed,
        "train_batch_size",
        "auto",
    ),
    (
        lambda: plan_from_deepspeed({"gradient_accumulation_steps": 4}, 2),
        plan_from_deepspeed,
        "config",
        {"gradient_accumulation_steps": 4},
    ),
    (
        lambda: plan_from_deepspeed(
            {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 8}, 2
        ),
        plan_from_deepspeed,
        "train_batch_size",
        60,
    ),
    (
        lambda: plan_from_deepspeed(DS_MISMATCH, 2),
        plan_from_deepspeed,
        "train_batch_size",
        64,
    ),
]


@pytest.mark.parametrize(("call", "function", "argument", "value"), ERRORS)
def test_an_error_carries_its_argument_value_and_reason(
    call: Callable[[], object], function: Callable[..., object], argument: str, value: object
) -> None:
    with pytest.raises(BatchError) as info:
        call()
    error = info.value
    assert (error.argument, error.value) == (argument, value)
    if argument != "config":  # a whole config is named by its type
        assert str(value) in error.reason or repr(value) in error.reason
    # A front end puts its own name for the argument first: no other Python name follows.
    others = set(inspect.signature(function).parameters) - {argument}
    assert [name for name in others if "_" in name and name in error.reason] == []
    assert re.search(r"\w=", error.reason) is None  # no rounding='down', drop_last=True


@pytest.mark.parametrize(
    ("call", "value", "message"),
    [
        (
            lambda: effective_batch_size(2**62, 4),
            2**64,
            "the effective batch is 18446744073709551616",
        ),
        (
            lambda: plan_from_deepspeed({"train_micro_batch_size_per_gpu": 2**62}, 4),
            2**64,
            "train_batch_size is 18446744073709551616",
        ),
        (lambda: training_schedule(100, 4), None, "give exactly one of epochs or max_steps"),
    ],
)
def test_an_error_no_one_argument_causes_has_no_argument(
    call: Callable[[], object], value: object, message: str
) -> None:
    with pytest.raises(BatchError, match=message) as info:
        call()
    assert (info.value.argument, info.value.value) == (None, value)
    assert info.value.reason == str(info.value)


@pytest.mark.parametrize(
    "call",
    [lambda: plan_batch(97, 8, min_per_device=2), lambda: effective_batch_size(4.0)],  # type: ignore[arg-type]
)
def test_an_error_survives_pickling(call: Callable[[], object]) -> None:
    # as a process pool's worker sends it back
    with pytest.raises(BatchError) as info:
        call()
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is type(info.value)
    assert (str(copy), copy.argument, copy.value, copy.reason) == (
        str(info.value),
        info.value.argument,
        info.value.value,
        info.value.reason,
    )


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


# -- DeepSpeed ------------------------------------------------------------------------------


def test_deepspeed_examples() -> None:
    assert (
        str(plan_from_deepspeed({"train_batch_size": 64, "gradient_accumulation_steps": 4}, 2))
        == "8 x 4 x 2 = 64"
    )
    assert str(plan_from_deepspeed({"train_micro_batch_size_per_gpu": 4}, 8)) == "4 x 1 x 8 = 32"
    assert str(plan_from_deepspeed({"train_batch_size": 32}, 8)) == "4 x 1 x 8 = 32"
    assert (
        str(plan_from_deepspeed({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}, 2))
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
        plan_from_deepspeed(config, 2)


def test_a_deepspeed_value_that_is_an_array_is_named() -> None:
    numpy = pytest.importorskip("numpy")
    with pytest.raises(BatchTypeError) as caught:
        plan_from_deepspeed({"train_batch_size": numpy.array([8, 8])}, 1)
    assert caught.value.argument == "train_batch_size"


def test_no_target_at_all_says_so_without_a_rounding_hint() -> None:
    # 2**62 devices of at least 2: every achievable target is over 2**63 - 1
    with pytest.raises(BatchError) as caught:
        plan_batch(5, 4, 2**62, min_per_device=2)
    assert caught.value.argument == "target"
    assert "nearest achievable" not in str(caught.value)
    assert "rounding" not in str(caught.value)
    assert "nor of any target up to 2**63 - 1" in str(caught.value)


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
    plan = plan_from_deepspeed(config, world)
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


def simulate_distributed_sampler(n: int, per: int, acc: int, devices: int, drop_last: bool) -> int:
    """torch's DistributedSampler (drop_last=False: padded with the first samples to a
    multiple of the devices, rank r taking every devices-th), each rank's DataLoader
    batching its share, and Lightning's step every acc batches and at the epoch's end."""
    padded = [*range(n), *list(range(n)) * devices][: -(-n // devices) * devices]
    share = padded[0::devices]  # rank 0's; every rank's is as long
    batches = [share[i : i + per] for i in range(0, len(share), per)]
    if drop_last and batches and len(batches[-1]) < per:
        batches.pop()
    return -(-len(batches) // acc)


@given(
    n=st.integers(1, 3000),
    per=st.integers(1, 64),
    acc=st.integers(1, 32),
    devices=st.integers(1, 8),
    drop_last=st.booleans(),
)
def test_steps_per_epoch_with_samples_sharded_matches_distributed_sampler(
    n: int, per: int, acc: int, devices: int, drop_last: bool
) -> None:
    expected = simulate_distributed_sampler(n, per, acc, devices, drop_last)
    count = functools.partial(steps_per_epoch, drop_last=drop_last, sharding="samples")
    if expected == 0:
        with pytest.raises(BatchError):
            count(n, per, acc, devices)
        return
    assert count(n, per, acc, devices) == expected


def test_samples_sharded_with_drop_last_can_give_more_batches() -> None:
    # 23 samples on 3 devices: 8 each (one padded), so 4 batches of 2 each, not 23 // 6 = 3
    assert micro_batches_per_epoch(23, 2, 3, drop_last=True) == 3
    assert micro_batches_per_epoch(23, 2, 3, drop_last=True, sharding="samples") == 4
    schedule = training_schedule(23, 2, 1, 3, epochs=2, drop_last=True, sharding="samples")
    assert (schedule.steps_per_epoch, schedule.total_steps) == (4, 8)


def test_sharding_must_be_one_of_two() -> None:
    with pytest.raises(BatchError) as caught:
        micro_batches_per_epoch(10, 2, sharding="rows")  # type: ignore[arg-type]
    assert (caught.value.argument, caught.value.value) == ("sharding", "rows")
    with pytest.raises(BatchTypeError) as wrong:
        steps_per_epoch(10, 2, sharding=None)  # type: ignore[arg-type]
    assert wrong.value.argument == "sharding"


@given(total=st.integers(1, 10**6), ratio=st.floats(0, 1, exclude_max=True))
def test_warmup_ratio_is_rounded_up(total: int, ratio: float) -> None:
    steps = warmup_steps(total, ratio)
    assert steps == math.ceil(total * ratio)
    assert 0 <= steps <= total


@pytest.mark.parametrize(
    ("fields", "error", "argument"),
    [
        ((64, 4, 16, 1, 0), BatchError, "max_per_device"),
        ((64, 0, 16, 1, 4), BatchError, "per_device"),
        ((64, 4, 16.0, 1, 4), BatchTypeError, "accumulation"),
        ((64, 4, 16, 1, 4, "yes"), BatchTypeError, "exact"),
        ((64, 8, 8, 1, 4), BatchError, "per_device"),  # (memory_utilization 2.0: no fit)
        ((64, 8, 4, 1, 8), BatchError, "exact"),  # (8 x 4 x 1 = 32 was called exact)
        ((64, 8, 8, 1, 8, False), BatchError, "exact"),  # (64 called rounded)
    ],
)
def test_a_batch_plan_refuses_sizes_no_plan_has(
    fields: tuple[Any, ...], error: type[BatchError], argument: str
) -> None:
    # (memory_utilization divided by a max_per_device of 0)
    with pytest.raises(error) as caught:
        BatchPlan(*fields)
    assert caught.value.argument == argument


def test_a_batch_plan_past_max_int_is_refused() -> None:
    # BatchPlan(2**62, 2**62, 4, 1, 2**62).to_deepspeed() gave a train_batch_size of 2**64
    with pytest.raises(BatchError, match="more than 2\\*\\*63 - 1"):
        BatchPlan(2**62, 2**62, 4, 1, 2**62)


@pytest.mark.parametrize(
    "call",
    [
        lambda value: plan_batch(97, 8, rounding=value),
        lambda value: scale_lr(1e-4, 256, 1024, rule=value),
    ],
)
def test_a_choice_that_is_not_a_str_is_a_type_error_naming_it(
    call: Callable[[object], object],
) -> None:
    numpy = pytest.importorskip("numpy")
    for value in (numpy.array(["down", "up"]), None, ["down"]):  # (an array: numpy's own error)
        with pytest.raises(BatchTypeError) as caught:
            call(value)
        assert caught.value.argument in ("rounding", "rule")


def test_batch_plan_is_a_dataclass() -> None:
    plan = BatchPlan(64, 4, 16, 1, 4)
    assert dataclasses.is_dataclass(plan)
    assert [f.name for f in dataclasses.fields(plan)] == [
        "target",
        "per_device",
        "accumulation",
        "devices",
        "max_per_device",
        "exact",
    ]
    assert dataclasses.asdict(plan) == {
        "target": 64,
        "per_device": 4,
        "accumulation": 16,
        "devices": 1,
        "max_per_device": 4,
        "exact": True,
    }
    assert plan == plan_batch(64, 4)  # compared by value
    assert dataclasses.replace(plan, accumulation=8, target=32).effective == 32
    with pytest.raises(BatchError, match=r"^exact is True, but 4 x 8 x 1 = 32 is not the target"):
        dataclasses.replace(plan, accumulation=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.accumulation = 8  # type: ignore[misc]


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
        lambda: plan_batch(HUGE, 8),
        lambda: plan_batch(64, HUGE),
        lambda: effective_batch_size(2**62, 4),
        lambda: steps_for_tokens(HUGE, 8, seq_len=4096),
        lambda: plan_from_deepspeed({"train_micro_batch_size_per_gpu": 2**62}, 4),
    ],
)
def test_huge_numbers_are_the_modules_error(call: Callable[[], object]) -> None:
    with pytest.raises(BatchError, match=r"2\*\*63 - 1|finite number"):
        call()


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


def test_a_target_near_the_int64_limit_rounds_down_though_none_is_above() -> None:
    from devutils.batch import MAX_INT

    plan = plan_batch(MAX_INT, 10, min_per_device=8, rounding="down")
    assert plan.effective < MAX_INT
    assert plan.effective == max(
        k * per for per in range(8, 11) for k in [MAX_INT // per] if k * per <= MAX_INT
    )
    with pytest.raises(BatchError, match="no achievable target up"):
        plan_batch(MAX_INT, 10, min_per_device=8, rounding="up")


# -- results past what the numbers hold ---------------------------------------------------


def test_tokens_per_step_past_max_int_is_refused() -> None:
    # It returned 2**64: an int no framework stores, where effective_batch_size refuses one.
    with pytest.raises(BatchError, match=r"tokens per step is 18446744073709551616, more") as info:
        tokens_per_step(2**62, 1, 1, seq_len=4)
    assert (info.value.argument, info.value.value) == (None, 2**64)
    with pytest.raises(BatchError, match="tokens per step"):
        training_schedule(10, 2**62, 1, 1, epochs=1, seq_len=4)
    assert tokens_per_step(2**61 - 1, 1, 1, seq_len=4) == 2**63 - 4


@pytest.mark.parametrize(
    ("base_lr", "base_batch", "new_batch"), [(1e308, 1, 10), (1e-320, 2**63 - 1, 1)]
)
def test_a_scaled_learning_rate_past_a_float_is_refused(
    base_lr: float, base_batch: int, new_batch: int
) -> None:
    # scale_lr refuses a base_lr of inf or 0, and returned them.
    with pytest.raises(BatchError, match="past what a float holds"):
        scale_lr(base_lr, base_batch, new_batch)


@given(
    dp=st.integers(1, 64), model=st.integers(1, 16), nodes=st.integers(1, 16), acc=st.integers(1, 8)
)
def test_lightnings_devices_are_gpus_per_node(dp: int, model: int, nodes: int, acc: int) -> None:
    # Lightning's effective batch: batch_size x accumulate x devices x num_nodes over the
    # model-parallel size; its devices are one node's GPUs.
    plan = plan_batch(4 * acc * dp, 4, dp)
    if dp * model % nodes:
        with pytest.raises(BatchError, match=f"num_nodes {nodes} does not divide") as info:
            plan.to_lightning(num_nodes=nodes, model_parallel=model)
        assert info.value.argument == "num_nodes"
        return
    snippet = plan.to_lightning(num_nodes=nodes, model_parallel=model)
    trainer = snippet["trainer"]
    per_node, node_count = trainer["devices"], trainer.get("num_nodes", 1)
    assert node_count == nodes
    lightning = snippet["dataloader"]["batch_size"] * trainer["accumulate_grad_batches"]
    assert lightning * per_node * node_count // model == plan.effective


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class _IntNoRepr(int):
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    "call",
    [
        lambda value: check_int("devices", value),
        lambda value: effective_batch_size(value, 1),
        lambda value: plan_batch(value, 4),
        lambda value: warmup_steps(100, value),
        lambda value: plan_batch(64, 4, rounding=value),
        lambda value: training_schedule(1000, 4, epochs=value),
    ],
)
@pytest.mark.parametrize(
    "value",
    [10**5000, -(10**5000), _NoRepr(), _IntNoRepr(-1)],
    ids=["huge", "huge-negative", "no-repr", "int-no-repr"],
)
def test_a_huge_int_or_a_failing_repr_is_a_batch_error(
    call: Callable[[object], object], value: object
) -> None:
    # int's repr past 4,300 digits raised ValueError, and a failing repr its own error:
    # not a BatchError naming the argument.
    with pytest.raises(BatchError) as caught:
        call(value)
    assert caught.value.value is value
    assert len(str(caught.value)) < 200


# -- properties added for the standard ---

_NOT_INTS = st.booleans() | st.floats() | st.text(max_size=3) | st.none() | st.just(b"8")


@given(
    st.sampled_from(["devices", "n_samples", "seq_len"]),
    st.integers(-3, 3)
    | st.integers(MAX_INT - 3, MAX_INT + 3)
    | st.integers(-(2**70), 2**70)
    | _NOT_INTS,
)
def test_check_int_takes_exactly_the_ints_from_1_to_max_int(name: str, value: object) -> None:
    if not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= MAX_INT:
        assert check_int(name, value) is value
        return
    with pytest.raises(BatchError) as caught:
        check_int(name, value)
    error = caught.value
    if isinstance(value, bool) or not isinstance(value, int):
        assert isinstance(error, BatchTypeError)
        assert error.reason.startswith("must be an int, got ")
    else:
        assert not isinstance(error, TypeError)
        assert error.reason.startswith(("must be >= 1, got ", "must be <= 2**63 - 1, got "))
    assert (error.argument, error.value) == (name, value)
    assert str(error) == f"{name} {error.reason}"


@given(
    st.sampled_from(["exact", "down", "up", "nearest"])
    | st.sampled_from(["Down", "UP", " up", "exact ", "floor", "ceil", ""])
    | st.text(max_size=8)
    | st.integers()
    | _NOT_INTS
)
def test_check_rounding_takes_exactly_the_four_roundings(value: object) -> None:
    if value in ("exact", "down", "up", "nearest") and isinstance(value, str):
        assert check_rounding(value) is value
        return
    expected = BatchError if isinstance(value, str) else BatchTypeError
    with pytest.raises(expected) as caught:
        check_rounding(value)
    assert isinstance(caught.value, TypeError) == (expected is BatchTypeError)
    assert (caught.value.argument, caught.value.value) == ("rounding", value)
    assert caught.value.reason.startswith("must be 'exact', 'down', 'up' or 'nearest', got ")


@given(
    n=st.integers(1, 600),
    per=st.integers(1, 12),
    acc=st.integers(1, 8),
    devices=st.integers(1, 8),
    drop_last=st.booleans(),
    sharding=st.sampled_from(["batches", "samples"]),
    quarters=st.none() | st.integers(1, 20),
    seq_len=st.none() | st.integers(1, 4096),
    data=st.data(),
)
def test_training_schedule_is_a_simulated_run(
    n: int,
    per: int,
    acc: int,
    devices: int,
    drop_last: bool,
    sharding: Any,
    quarters: int | None,
    seq_len: int | None,
    data: st.DataObject,
) -> None:
    # Steps per epoch as the sharded dataloader and the step every acc micro-batches give
    # them (simulated); then the Trainer's arithmetic: epochs (here a number of quarters,
    # exact in a float) or max_steps, ceil(epochs x steps per epoch), warmup_ratio rounded
    # up (here eighths), or a warmup count.
    simulate = simulate_steps if sharding == "batches" else simulate_distributed_sampler
    per_epoch = simulate(n, per, acc, devices, drop_last)
    max_steps = None if quarters is not None else data.draw(st.integers(1, 10_000))
    epochs = None if quarters is None else quarters / 4
    eighths = data.draw(st.none() | st.integers(0, 7))
    options: dict[str, Any] = {"drop_last": drop_last, "sharding": sharding, "seq_len": seq_len}
    if per_epoch == 0:
        with pytest.raises(BatchError):
            training_schedule(n, per, acc, devices, epochs=epochs, max_steps=max_steps, **options)
        return
    if max_steps is not None:
        total, run_epochs = max_steps, max_steps / per_epoch
    else:
        assert quarters is not None
        total, run_epochs = -(-quarters * per_epoch // 4), quarters / 4
    if eighths is None:
        warmup_count = data.draw(st.integers(0, total))
        warmup: int | float = warmup_count
    else:
        warmup, warmup_count = eighths / 8, -(-total * eighths // 8)
    schedule = training_schedule(
        n, per, acc, devices, epochs=epochs, max_steps=max_steps, warmup=warmup, **options
    )
    samples = per * acc * devices
    assert schedule == TrainingSchedule(
        steps_per_epoch=per_epoch,
        total_steps=total,
        epochs=run_epochs,
        warmup_steps=warmup_count,
        samples_per_step=samples,
        tokens_per_step=None if seq_len is None else samples * seq_len,
    )


@given(n=st.integers(1, MAX_INT), per=st.integers(1, 64), epochs=st.integers(1, 8))
@example(n=2**53 + 1, per=1, epochs=1)  # a float product gave 2**53: one epoch short a step
@example(n=2**60 + 1, per=1, epochs=3)
def test_whole_epochs_are_whole_multiples_of_an_epoch(n: int, per: int, epochs: int) -> None:
    per_epoch = steps_per_epoch(n, per)
    if epochs * per_epoch > MAX_INT:
        with pytest.raises(BatchError):
            training_schedule(n, per, epochs=epochs)
        return
    assert training_schedule(n, per, epochs=epochs).total_steps == epochs * per_epoch


@given(
    per_device=st.integers(1, 2**20),
    accumulation=st.integers(1, 2**20),
    devices=st.integers(1, 1024),
    headroom=st.integers(-4, 4) | st.integers(0, 2**20),  # (below 0: a plan that does not fit)
    target=st.none() | st.integers(1, 2**52),
    exact=st.none() | st.booleans(),
)
def test_a_batch_plan_built_directly_exports_its_own_sizes(
    per_device: int,
    accumulation: int,
    devices: int,
    headroom: int,
    target: int | None,
    exact: bool | None,
) -> None:
    # A plan read back from a config (not from plan_batch): kept only if it fits and says
    # rightly whether it is exact; then its memory use is the fraction per / max, and
    # transformers, given the launcher's world size, trains on exactly its effective batch
    # (total_train_batch_size = per_device_train_batch_size x gradient_accumulation_steps
    # x world_size). (None: the target is the effective batch, exact the right flag.)
    max_per_device = max(1, per_device + headroom)
    effective = per_device * accumulation * devices
    target = effective if target is None else target
    exact = effective == target if exact is None else exact
    fields = (target, per_device, accumulation, devices, max_per_device, exact)
    if per_device > max_per_device or exact != (effective == target):
        with pytest.raises(BatchError) as caught:
            BatchPlan(*fields)
        refused = ("per_device", per_device) if per_device > max_per_device else ("exact", exact)
        assert (caught.value.argument, caught.value.value) == refused
        return
    plan = BatchPlan(*fields)
    assert (plan.effective, str(plan)) == (
        effective,
        f"{per_device} x {accumulation} x {devices} = {effective}",
    )
    utilization = plan.memory_utilization
    assert utilization == float(Fraction(per_device, max_per_device))  # correctly rounded
    assert 0 < utilization <= 1
    assert (utilization == 1) == (per_device == max_per_device)
    hf = plan.to_hf()
    assert hf == {
        "per_device_train_batch_size": per_device,
        "gradient_accumulation_steps": accumulation,
    }
    assert hf["per_device_train_batch_size"] * hf["gradient_accumulation_steps"] * devices == (
        plan.effective
    )
    assert plan.to_deepspeed() == {
        "train_batch_size": effective,
        "train_micro_batch_size_per_gpu": per_device,
        "gradient_accumulation_steps": accumulation,
    }
