"""Tests for devutils.signals: which signals stop a program, and holding them back."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.signals import STOPPING, deferred, held, stopping

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "pthread_sigmask"), reason="signals cannot be held here"
)


def test_the_stopping_signals_are_this_system_s_and_no_fault_s() -> None:
    assert stopping() == {getattr(signal, name) for name in STOPPING if hasattr(signal, name)}
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGHUP} <= stopping()
    assert not {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGKILL} & stopping()


def blocked() -> set[int]:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


@given(st.sets(st.sampled_from([signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD, signal.SIGWINCH])))
def test_a_held_block_adds_the_stopping_signals_to_the_mask_and_gives_it_back(
    before: set[int],
) -> None:
    previous = signal.pthread_sigmask(signal.SIG_SETMASK, before)
    try:
        with held():
            assert blocked() == before | stopping()
            with held():  # (blocks nest)
                assert blocked() == before | stopping()
            assert blocked() == before | stopping()
        assert blocked() == before
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class Stopped(Exception):
    pass


def test_a_signal_in_a_held_block_is_delivered_at_its_end() -> None:
    steps = []

    def stop(_signum: int, _frame: object) -> None:
        raise Stopped

    def block() -> None:
        with held():
            os.kill(os.getpid(), signal.SIGUSR1)
            steps.append("the rest of the block ran")
        steps.append("after the block")  # (the signal's exception comes first)

    def block_then_wait() -> None:  # (another thread, where one runs, may take it: soon)
        block()
        until(lambda: False)

    def failing() -> None:
        with held():
            raise Stopped

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        with pytest.raises(Stopped):
            block_then_wait()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert steps[0] == "the rest of the block ran"
    with pytest.raises(Stopped):
        failing()
    assert signal.SIGINT not in blocked()  # an exception in the block gives the mask back


def test_a_signal_another_thread_takes_in_a_held_block_is_delivered_at_its_end() -> None:
    # A signal to the process goes to a thread that does not block it: Python then ran
    # the handler in the main thread at once, mid-block (a backup removed mid-commit).
    import threading

    steps: list[str] = []
    release = threading.Event()
    bystander = threading.Thread(target=release.wait)  # (as a thread pool's would)
    bystander.start()
    previous = signal.signal(signal.SIGUSR1, lambda _signum, _frame: steps.append("handled"))
    try:
        with held():
            os.kill(os.getpid(), signal.SIGUSR1)
            release.wait(0.2)  # (time for the bystander to take it and the main thread to look)
            steps.append("the rest of the block ran")
        until(lambda: "handled" in steps)  # (the bystander may still be delivering it)
    finally:
        signal.signal(signal.SIGUSR1, previous)
        release.set()
        bystander.join()
    assert steps == ["the rest of the block ran", "handled"]


def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll *condition* until it holds; fail after *seconds*."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not after {seconds} s"
        time.sleep(0.001)


HANDLED = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGALRM]


@given(st.lists(st.sampled_from(HANDLED), unique=True), st.booleans())
def test_deferred_handlers_get_each_signal_once_after_the_block_and_are_put_back(
    sent: list[int], masked: bool
) -> None:
    got: list[int] = []
    handlers = {signum: lambda number, _frame: got.append(number) for signum in HANDLED}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        with held() if masked else deferred():
            for signum in sent:
                os.kill(os.getpid(), signum)
            assert got == []
        # (another thread, where one runs, may take one and still be delivering it as the
        # block ends: each is waited for, so that none arrives in the next example)
        until(lambda: len(got) >= len(sent))
        assert sorted(got) == sorted(sent)
        assert all(signal.getsignal(signum) is handlers[signum] for signum in HANDLED)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
