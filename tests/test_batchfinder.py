"""Tests for devutils.batchfinder: the probe's errors, the searches against brute force, auto_plan."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from devutils.batch import BatchError, BatchTypeError
from devutils.batchfinder import BatchSearch, Trial, auto_plan, find_max_batch_size, is_oom_error


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
    with pytest.raises(BatchError, match="no batch size fits: even 1 ran out of memory") as info:
        find_max_batch_size(probe_below(0))
    assert info.value.argument is None
    assert info.value.value == (
        Trial(1, False, "FakeOOM: CUDA out of memory. Tried to allocate 2 GiB"),
    )
    with pytest.raises(BatchError, match="no batch size fits"):
        find_max_batch_size(probe_below(0), mode="decay", max_value=64)


def test_finder_decay_reproduces_accelerate() -> None:
    calls: list[int] = []
    result = find_max_batch_size(probe_below(100, calls), mode="decay", start=128)
    assert calls == [128, 115, 103, 92]  # x0.9 per failure, as accelerate
    assert result.batch_size == 92
    assert [t.fits for t in result.trials] == [False, False, False, True]


def test_finder_reports_trials_and_keeps_no_state() -> None:
    first_calls: list[int] = []
    second_calls: list[int] = []
    first = find_max_batch_size(probe_below(48, first_calls))
    second = find_max_batch_size(probe_below(48, second_calls))
    assert [t.batch_size for t in first.trials] == first_calls  # every call, in order
    assert second_calls == first_calls  # the second search starts afresh, not from 48
    assert first == second
    assert first.trials[0] == Trial(1, True)
    failed = [t for t in first.trials if not t.fits]
    assert [t.batch_size for t in failed] == [64, 56, 52, 50, 49]
    assert all(t.error == "FakeOOM: CUDA out of memory. Tried to allocate 2 GiB" for t in failed)


def test_finder_probe_must_be_callable() -> None:
    with pytest.raises(BatchTypeError, match="probe must be callable") as info:
        find_max_batch_size(42)  # type: ignore[arg-type]
    assert (info.value.argument, info.value.value) == ("probe", 42)


def test_finder_mode_must_be_known() -> None:
    with pytest.raises(BatchError, match="mode must be") as info:
        find_max_batch_size(lambda n: None, mode="linear")  # type: ignore[arg-type]
    assert (info.value.argument, info.value.value) == ("mode", "linear")


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


@given(st.text("abcdefghijklmnopqrstuvwxyz .:0123456789", max_size=40))
def test_is_oom_error_knows_the_messages_not_the_exception_type(text: str) -> None:
    # Lower-case text holds none of the messages (each has a capital: CUDA, HIP, ...).
    assert not is_oom_error(RuntimeError(text))
    assert is_oom_error(RuntimeError(f"{text}CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_oom_error(MemoryError(text))


@pytest.mark.parametrize("bad", [True, 4.0, "4", None, 0, -1], ids=repr)
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("max_value", lambda v: find_max_batch_size(lambda n: None, max_value=v)),
        ("start", lambda v: find_max_batch_size(lambda n: None, start=v)),
        ("target", lambda v: auto_plan(v, lambda n: None)),
        ("devices", lambda v: auto_plan(64, lambda n: None, v)),
        ("max_value", lambda v: auto_plan(64, lambda n: None, max_value=v)),
    ],
)
def test_every_integer_argument_refuses_bad_values(
    name: str, call: Callable[[object], object], bad: object
) -> None:
    if bad is None and name == "start":
        return  # None means "not given" there: the default start
    expected = BatchError if isinstance(bad, int) and not isinstance(bad, bool) else BatchTypeError
    with pytest.raises(expected, match=name) as info:
        call(bad)
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)
    assert (info.value.argument, info.value.value) == (name, bad)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, TypeError) == (expected is BatchTypeError)


def test_finder_start_and_decay_are_checked() -> None:
    with pytest.raises(BatchError, match="start 9 is larger than max_value 8") as info:
        find_max_batch_size(lambda n: None, start=9, max_value=8)
    assert (info.value.argument, info.value.value) == ("start", 9)
    assert info.value.reason == "9 is larger than the largest size to try, 8"
    for decay in (1.5, 0.0, 1, True):
        with pytest.raises(BatchError, match=r"decay must be a float in \(0, 1\)"):
            find_max_batch_size(lambda n: None, mode="decay", decay=decay)


def test_huge_numbers_are_the_modules_error() -> None:
    with pytest.raises(BatchError, match=r"max_value must be <= 2\*\*63 - 1"):
        find_max_batch_size(lambda n: None, mode="decay", max_value=10**400)


def test_a_search_result_is_a_frozen_record_of_its_trials() -> None:
    search = find_max_batch_size(probe_below(3), max_value=4)
    too_big = Trial(4, False, "FakeOOM: CUDA out of memory. Tried to allocate 2 GiB")
    assert search == BatchSearch(3, (Trial(1, True), Trial(2, True), too_big, Trial(3, True)))
    with pytest.raises(AttributeError):
        search.batch_size = 4  # type: ignore[misc]


def test_a_failed_size_empties_the_caches_of_an_imported_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emptied: list[str] = []

    def backend(name: str, available: bool) -> types.SimpleNamespace:
        return types.SimpleNamespace(
            is_available=lambda: available, empty_cache=lambda: emptied.append(name)
        )

    torch = types.SimpleNamespace(cuda=backend("cuda", True), mps=backend("mps", False))
    monkeypatch.setitem(sys.modules, "torch", torch)
    find_max_batch_size(probe_below(3), max_value=4)
    assert emptied == ["cuda"]  # one failure (4), on the one backend available


@pytest.mark.parametrize(
    ("options", "error", "argument"),
    [
        ({"rounding": "bogus"}, BatchError, "rounding"),
        ({"min_per_device": 0}, BatchError, "min_per_device"),
        ({"min_per_device": True}, BatchTypeError, "min_per_device"),
        ({"min_per_device": 100}, BatchError, "min_per_device"),
    ],
)
def test_auto_plan_checks_its_arguments_before_the_first_probe(
    options: dict[str, Any], error: type[Exception], argument: str
) -> None:
    # Each probe is a training step: the whole search ran before these were refused.
    calls: list[int] = []
    with pytest.raises(error) as info:
        auto_plan(64, probe_below(12, calls), **options)
    assert (calls, getattr(info.value, "argument", None)) == ([], argument)


def test_auto_plan_says_when_min_per_device_does_not_fit() -> None:
    with pytest.raises(BatchError, match="min_per_device 20 does not fit: the largest") as info:
        auto_plan(64, probe_below(12), min_per_device=20)
    assert "max_per_device" not in str(info.value)  # (auto_plan has no such argument)
    assert str(auto_plan(64, probe_below(12), min_per_device=8)) == "8 x 8 x 1 = 64"


@pytest.mark.parametrize("decay", ["0.5", None, True])
def test_a_decay_that_is_no_number_is_a_type_error(decay: object) -> None:
    with pytest.raises(BatchTypeError, match="decay must be a float in"):
        find_max_batch_size(probe_below(8), mode="decay", decay=decay)  # type: ignore[arg-type]


@given(st.integers(1, 10_000), st.integers(1, 10_000), st.floats(0.001, 0.999))
def test_decay_tries_1_before_it_says_nothing_fits(
    start: int, fits_up_to: int, decay: float
) -> None:
    # From 81 with decay 0.01 the next size was 0: the search gave up with 1 untried.
    search = find_max_batch_size(
        probe_below(fits_up_to), mode="decay", decay=decay, start=start, max_value=10_000
    )
    sizes = [trial.batch_size for trial in search.trials]
    assert sizes == sorted(set(sizes), reverse=True)  # down, each size once
    assert search.batch_size <= fits_up_to
    assert search.trials[-1].fits  # the last one tried fits: 1 at worst


def test_auto_plan_checks_the_finders_options_as_the_finder_does() -> None:
    # A start past the max_value given was lowered to it without a word (the finder
    # refuses it), and a misspelt option was Python's own TypeError.
    fits = probe_below(100)
    with pytest.raises(BatchError, match=r"^start 100 is larger than max_value 10$"):
        auto_plan(64, fits, start=100, max_value=10)
    with pytest.raises(BatchTypeError, match=r"^max_vaule is not an option") as caught:
        auto_plan(64, fits, max_vaule=10)
    assert (caught.value.argument, caught.value.value) == ("max_vaule", 10)
    assert str(auto_plan(64, fits, start=100)) == "64 x 1 x 1 = 64"  # past what 64 needs


def test_is_oom_error_refuses_what_is_not_an_exception() -> None:
    with pytest.raises(BatchTypeError) as caught:
        is_oom_error(4)  # type: ignore[arg-type]
    assert (caught.value.argument, caught.value.value) == ("exc", 4)


def test_auto_plan_rounds_up_to_min_per_device_as_plan_batch_does() -> None:
    calls: list[int] = []
    plan = auto_plan(4, probe_below(12, calls), min_per_device=5, rounding="up")
    assert (plan.per_device, plan.accumulation, plan.effective, plan.exact) == (5, 1, 5, False)
    assert max(calls) == 5  # never more than the plan can use


def test_auto_plan_refuses_before_probing_when_no_plan_exists() -> None:
    calls: list[int] = []
    with pytest.raises(BatchError) as caught:
        auto_plan(5, probe_below(12, calls), devices=2**62, min_per_device=2, rounding="up")
    assert (calls, caught.value.argument) == ([], "target")


@pytest.mark.parametrize(
    "text",
    [
        "CUDA driver error: out of memory",  # Lightning's rule: CUDA and "out of memory"
        "NPU out of memory. Tried to allocate 2.00 GiB",  # accelerate's " out of memory."
        "MUSA out of memory. Tried to allocate 20.00 MiB",
        "FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed",  # Habana, as accelerate has it
    ],
)
def test_is_oom_error_knows_what_lightning_and_accelerate_back_off_on(text: str) -> None:
    assert is_oom_error(RuntimeError(text))
    fits = find_max_batch_size(lambda n: n > 48 and (_ for _ in ()).throw(RuntimeError(text)))
    assert fits.batch_size == 48


def test_a_mode_that_is_not_a_str_is_a_type_error_naming_it() -> None:
    numpy = pytest.importorskip("numpy")
    with pytest.raises(BatchTypeError) as caught:
        find_max_batch_size(lambda n: None, mode=numpy.array(["power", "decay"]))
    assert caught.value.argument == "mode"


def test_cuda_and_out_of_memory_are_an_oom_only_in_a_runtime_error_of_one_message() -> None:
    # Lightning's rule: a ValueError that mentions both is not an out-of-memory error
    assert is_oom_error(RuntimeError("CUDA driver error: out of memory"))
    assert not is_oom_error(ValueError("loss is NaN on CUDA; not an out of memory error"))
    assert not is_oom_error(RuntimeError("CUDA graph", "out of memory is not the cause"))
    assert is_oom_error(RuntimeError("MLU out of memory. Tried to allocate 2.00 MiB"))


def lightning_power(fitting: frozenset[int], first: int, limit: int) -> list[int]:
    """The sizes Lightning's power scaling tries: double from *first* until one fails (or
    *limit* fits); where *first* fails, halve until one fits."""
    sizes = [first]
    if first in fitting:
        while sizes[-1] in fitting and sizes[-1] < limit:
            sizes.append(min(2 * sizes[-1], limit))
    else:
        while sizes[-1] not in fitting and sizes[-1] > 1:
            sizes.append(sizes[-1] // 2)
    return sizes


def accelerate_decay(fitting: frozenset[int], first: int, decay: float) -> list[int]:
    """The sizes accelerate's finder tries: from *first*, times *decay* after each failure,
    down to 1 (which accelerate would leave untried)."""
    sizes = [first]
    while sizes[-1] not in fitting and sizes[-1] > 1:
        sizes.append(max(1, int(sizes[-1] * decay)))
    return sizes


@settings(max_examples=30)  # (each size that does not fit collects garbage: 10 to 30 ms here)
@given(
    max_value=st.integers(1, 32),
    mode=st.sampled_from(["binsearch", "power", "decay"]),
    data=st.data(),
)
def test_a_search_records_each_probe_as_a_trial_and_returns_a_size_that_fit(
    max_value: int, mode: Any, data: st.DataObject
) -> None:
    # Any "fits" function, monotone (the sizes up to a threshold) or not: the trials are
    # the probe's calls in order, each size once, none past max_value, with the OOM error
    # of each that did not fit; the size found is the largest that fit of those tried.
    fitting = data.draw(
        st.integers(0, 36).map(lambda threshold: frozenset(range(1, threshold + 1)))
        | st.frozensets(st.integers(1, 32))
    )
    start = data.draw(st.none() | st.integers(1, max_value))
    decay = data.draw(st.floats(0.05, 0.9))
    message = "CUDA out of memory. Tried to allocate 2 GiB"
    calls: list[int] = []

    def probe(size: int) -> None:
        calls.append(size)
        if size not in fitting:
            raise FakeOOM(message)

    def trial(size: int) -> Trial:
        return Trial(size, True) if size in fitting else Trial(size, False, f"FakeOOM: {message}")

    options: dict[str, Any] = {"start": start, "max_value": max_value, "mode": mode}
    try:
        search = find_max_batch_size(probe, **options, decay=decay)
    except BatchError as caught:
        search, error = None, caught
    first = start if start is not None else max_value if mode == "decay" else 1
    assert calls[0] == first
    assert len(set(calls)) == len(calls)
    assert max(calls) <= max_value
    if mode == "power":
        assert calls == lightning_power(fitting, first, max_value)
    elif mode == "decay":
        assert calls == accelerate_decay(fitting, first, decay)
    if search is None:  # only where even the smallest size, 1, did not fit
        assert not fitting.intersection(calls)
        assert calls[-1] == 1
        assert (error.argument, error.value) == (None, tuple(map(trial, calls)))
        return
    assert search == BatchSearch(max(fitting.intersection(calls)), tuple(map(trial, calls)))
    found = search.batch_size
    if mode == "binsearch":  # no bigger neighbour fits: found + 1 failed, or is past max_value
        assert found == max_value or trial(found + 1) in search.trials
        if fitting == frozenset(range(1, len(fitting) + 1)):  # monotone: the brute-force max
            assert found == max(size for size in range(1, max_value + 1) if size in fitting)
