"""The signals that stop a program from outside, and a step that runs whole despite them.

`STOPPING` names them: Ctrl-C (SIGINT), SIGTERM, SIGHUP and the others whose default
action ends a process, which a program may turn into exceptions (Python turns SIGINT
into KeyboardInterrupt). `held` holds them back for a block that must not be cut in two,
such as a backup and a rename; what arrives meanwhile is delivered at its end.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

__all__ = ["STOPPING", "held", "stopping"]

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
        yield
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
