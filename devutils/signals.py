"""The signals that stop a program from outside, and a step that runs whole despite them.

`STOPPING` names them: Ctrl-C (SIGINT), SIGTERM, SIGHUP and the others whose default
action ends a process, which a program may turn into exceptions (Python turns SIGINT
into KeyboardInterrupt). `held` holds them back for a block that must not be cut in two,
such as a backup and a rename; what arrives meanwhile is delivered at its end.
`deferred` holds back only their Python handlers, for a block that starts a process (a
child inherits a blocked signal).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["STOPPING", "deferred", "held", "stopping"]

STOPPING = (
    "SIGINT",
    "SIGTERM",
    "SIGHUP",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGALRM",
    "SIGVTALRM",
    "SIGPROF",
    "SIGXCPU",
    "SIGPWR",
)
"""The names of the signals that stop a program from outside (not a fault's, such as
SIGSEGV, which only the faulting code gets)."""


@functools.cache
def stopping() -> frozenset[int]:
    """The numbers of the `STOPPING` signals this system has.

    Examples:
        >>> import signal
        >>> signal.SIGINT in stopping(), signal.SIGSEGV in stopping()
        (True, False)
    """
    import signal

    return frozenset(getattr(signal, name) for name in STOPPING if hasattr(signal, name))


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold the `stopping` signals back for the block, so that it is cut short neither
    by their Python handlers' exceptions (KeyboardInterrupt) nor by their default
    action; what arrived meanwhile is delivered at its end. Blocks nest. Where signals
    cannot be held (Windows), the block runs as it is.

    A signal is blocked in this thread only, so where the process runs other threads (a
    thread pool's, a library's), one sent to the process may reach one of them, and
    Python would still run its handler in the main thread at once: there the handlers
    are `deferred` too, and such a signal is delivered at the block's end or, where that
    thread is still passing it on, just after. A signal whose default action ends the
    process ends it even so.

    Examples:
        >>> import signal
        >>> with held():
        ...     signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        True
        >>> signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        False
    """
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = None
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, stopping())
        with contextlib.nullcontext() if _alone() else deferred():
            yield
    finally:
        if previous is not None:  # (then what was noted, raised again, is delivered)
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _alone() -> bool:
    """Whether this process runs this thread only: on Linux, where ``/proc/self/task``
    holds a folder per thread (and so links ``.``, ``..`` and each); elsewhere, as far as
    `threading` knows (not threads started outside Python)."""
    import threading

    try:
        return os.stat("/proc/self/task").st_nlink <= 3  # noqa: PLR2004 - ., .. and this one
    except OSError:
        return threading.active_count() == 1


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Defer the Python handlers of the `stopping` signals for the block: each is replaced
    by one that notes the signal, and at the block's end, put back and sent the signals
    noted, once each. Python runs handlers in the main thread only: in another thread,
    the block runs as it is.

    Examples:
        >>> import os, signal
        >>> def stop(signum, frame):
        ...     raise RuntimeError("stopped")
        >>> previous = signal.signal(signal.SIGUSR1, stop)
        >>> try:
        ...     with deferred():
        ...         os.kill(os.getpid(), signal.SIGUSR1)
        ...         print("the block runs whole")
        ... except RuntimeError as exc:
        ...     print(exc)
        ... finally:
        ...     _ = signal.signal(signal.SIGUSR1, previous)
        the block runs whole
        stopped
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    replaced = {}
    try:
        for signum in sorted(stopping()):
            handler = signal.getsignal(signum)
            if callable(handler):  # (not the default action, nor ignored)
                replaced[signum] = handler
                signal.signal(signum, lambda number, _frame: noted.append(number))
        yield
    finally:
        _put_back(replaced)
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)


def _put_back(handlers: dict[int, Any]) -> None:
    """Give each signal of *handlers* its handler back, every one of them even where one
    given back runs at once and raises (another thread took its signal as the block
    ended): then that exception is raised after."""
    import signal

    error: BaseException | None = None
    for signum, handler in handlers.items():
        try:
            signal.signal(signum, handler)
        except BaseException as exc:  # (raised below, once all are back)
            error = exc
            signal.signal(signum, handler)  # (the exception may have come before it)
    if error is not None:
        raise error
