"""The ``devutils`` command: one argparse subcommand per module.

Every subcommand reports a usage error as one line on stderr and exits with
status 2; ``main`` returns the exit status instead of calling `sys.exit`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from devutils import __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["CliError", "main", "positive_float", "positive_int"]


class CliError(Exception):
    """A problem to report as one line on stderr, with an exit status (default 2)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (and with it bz2,
    lzma and zlib: 2 ms of every start)."""
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


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


Handler = Callable[[argparse.Namespace], int]


def positive_int(text: str) -> int:
    """An argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"must be a positive integer, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0 (seconds)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        msg = f"must be a positive number of seconds, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


_MODULES = {
    "replace": "_cli_text",
    "months": "_cli_dates",
    "batch": "_cli_batch",
    "stat": "_cli_system",
    "gpu": "_cli_system",
    "which-dstat": "_cli_system",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the ``devutils`` parser.

    With a known *command*, only the module that implements it is imported and
    registered (a faster start); with ``--version``, none; otherwise every subcommand is.
    """
    import importlib

    parser = _Parser(
        prog="devutils",
        description=(
            "Developer utilities: one-pass multi-replace (replace), month counting "
            "(months), ML batch planning (batch), resource statistics (stat, gpu, "
            "which-dstat)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"devutils {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    if command in _MODULES:
        names = [_MODULES[command]]
    elif command == "--version":  # answered before any subcommand is looked at
        names = []
    else:
        names = list(dict.fromkeys(_MODULES.values()))
    for name in names:
        importlib.import_module(f"devutils.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``devutils`` command and return its exit status.

    Examples:
        >>> main(["months", "2024-01-15", "2024-03-05"])
        3
        0
    """
    if sys.stdout is None:  # started with stdout closed (`devutils ... >&-`)
        # A stand-in open read-only: any write fails with EBADF, as in the shell, rather
        # than vanish; and no file opened later can take descriptor 1.
        sys.stdout = open(os.open(os.devnull, os.O_RDONLY), "w", encoding="utf-8")  # noqa: SIM115
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments else None
    try:
        status = _run(arguments, command)
        sys.stdout.flush()  # here, where a failed write is still ours to report
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`devutils ... | head`): not an error of ours.
        _silence_stdout()
        return 0
    except OSError as exc:  # a full disk, a closed stdout: one line, status 1
        prog = f"devutils {command}" if command in _MODULES else "devutils"
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        _silence_stdout()  # what is still buffered would fail again at exit
        return 1
    return status


def _run(arguments: list[str], command: str | None) -> int:
    if command == "replace":
        from devutils._cli_text import prepare_argv

        arguments = prepare_argv(arguments)
    parser = build_parser(command)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else 2
    handler: Handler = args.handler
    try:
        return handler(args)
    except CliError as exc:
        print(f"devutils {args.command}: error: {exc}", file=sys.stderr)
        return exc.status


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # no stdout at all, or closed
        pass
    finally:
        os.close(devnull)
