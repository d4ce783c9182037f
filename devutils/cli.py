"""The ``devutils`` command: one argparse subcommand per module.

Every subcommand reports a usage error as one line on stderr and exits with
status 2; ``main`` returns the exit status instead of calling `sys.exit`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from devutils import __version__

__all__ = ["CliError", "main"]


class CliError(Exception):
    """A problem to report as one line on stderr, with an exit status (default 2)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """Return the ``devutils`` parser with every subcommand registered."""
    from devutils import _cli_batch, _cli_dates, _cli_system, _cli_text

    parser = _Parser(
        prog="devutils",
        description="Developer utilities: one-pass multi-replace and more.",
    )
    parser.add_argument("--version", action="version", version=f"devutils {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    _cli_text.register(subparsers)
    _cli_dates.register(subparsers)
    _cli_batch.register(subparsers)
    _cli_system.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``devutils`` command and return its exit status.

    Examples:
        >>> main(["--version"])  # doctest: +SKIP
        devutils 0.1.0
    """
    from devutils._cli_text import prepare_argv

    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["replace"]:
        arguments = prepare_argv(arguments)
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
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`devutils ... | head`): not an error of ours.
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
