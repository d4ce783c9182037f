"""What every subcommand of the ``devutils`` command shares: errors, argparse types and
the parser that reports a usage error as one line.

The subcommand modules import this module, never `devutils.cli` itself, which imports
them: so no two modules import each other.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

from devutils.limits import MAX_INT, MAX_SECONDS
from devutils.signals import stopping

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from _typeshed import SupportsWrite

__all__ = [
    "MAX_INT",
    "SECONDS_MAX",
    "CliError",
    "Handler",
    "Parser",
    "Terminated",
    "catch_signals",
    "positive_float",
    "positive_int",
    "positive_seconds",
    "typed_float",
    "typed_int",
]

Handler = Callable[[argparse.Namespace], int]
"""What a subcommand runs: its parsed arguments in, its exit status out."""


class CliError(Exception):
    """A problem to report as one line on stderr, with an exit status (default 2)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (and with it bz2,
    lzma and zlib, on every start)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal, sized without shutil.

    argparse makes one for every ``add_argument`` (to check the metavar), and its own
    imports shutil to ask the terminal's width.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2  # what HelpFormatter does with shutil's answer
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse's own swallows a failed write: --help onto a full disk would exit 0
        if message:
            (file or sys.stderr).write(message)


_INTEGER = re.compile("[0-9]+")
_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def typed_int(text: str) -> int | None:
    """*text* as an int where it is one in ASCII digits, else None: int() also takes
    other scripts' digits (``"١٢"``), ``"1_000"``, ``" 5 "`` and ``"+5"``."""
    return int(text) if _INTEGER.fullmatch(text) else None


def typed_float(text: str) -> float | None:
    """*text* as a float where it is a decimal number in ASCII digits (``1``, ``0.5``,
    ``.5``, ``1e3``), else None: float() also takes what int() does, and ``"inf"``."""
    return float(text) if _DECIMAL.fullmatch(text) else None


def positive_int(text: str) -> int:
    """An argparse type: an int from 1 to `MAX_INT`, in ASCII digits."""
    value = typed_int(text) or 0
    if not 1 <= value <= MAX_INT:
        msg = f"must be a positive integer (at most 2**63 - 1), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_float(text: str, unit: str = "seconds") -> float:
    """An argparse type: a finite number > 0 (of *unit*, for the message), in ASCII digits."""
    value = typed_float(text)
    if value is None or not 0 < value < float("inf"):
        msg = f"must be a positive number of {unit}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0 and at most a day (a delay, a timeout)."""
    value = positive_float(text)
    if value > SECONDS_MAX:
        msg = f"must be at most {SECONDS_MAX} seconds (a day), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


SECONDS_MAX = MAX_SECONDS


class Terminated(BaseException):
    # named like KeyboardInterrupt, its sibling
    """A stopping signal other than SIGINT arrived (`devutils.signals.STOPPING`): unwind
    as Ctrl-C does, so that cleanups run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def catch_signals(handler: Callable[[int, Any], None] | None = None) -> None:
    """Turn the stopping signals (`devutils.signals.STOPPING`) but SIGINT, which is
    KeyboardInterrupt already, into `Terminated`, or give them to *handler*; except
    those this process was started ignoring (``nohup`` ignores SIGHUP)."""
    import signal

    for signum in stopping() - {signal.SIGINT}:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _terminate if handler is None else handler)
