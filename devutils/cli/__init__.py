"""The ``devutils`` command: one argparse subcommand per module of `devutils.cli`.

Every subcommand reports a usage error as one line on stderr and exits with status 2;
``main`` returns the exit status instead of calling `sys.exit`. Only the subcommand asked
for is imported (and with it only the library module it needs), for a fast start.
Options and operands mix, as with GNU tools (`argparse`'s intermixed parsing).

Exit statuses: 0 done (also when the reader of stdout went away: ``| head``), 1 a
failure (a file refused, output that cannot be written), 2 a usage error, 128 + N after
signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), except that Ctrl-C ends ``stat`` and
``gpu --watch``, which run until stopped, with 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from devutils import __version__
from devutils.cli.common import CliError, Handler, Parser, Terminated

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing slows every start
if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["COMMANDS", "MODULES", "build_parser", "main"]

MODULES = {
    "replace": "replace",
    "months": "months",
    "batch": "batch",
    "stat": "stat",
    "gpu": "gpu",
    "which-dstat": "which_dstat",
}
"""Each subcommand's module in `devutils.cli`, in the order ``--help`` lists them."""
COMMANDS = tuple(MODULES)


def _subcommands(command: str | None) -> list[ModuleType]:
    """The modules that define *command*, or every subcommand's for any other word."""
    import importlib

    names = [MODULES[command]] if command in MODULES else list(MODULES.values())
    return [importlib.import_module(f"devutils.cli.{name}") for name in names]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the ``devutils`` parser.

    With a known *command*, only the module that implements it is imported and
    registered (a faster start); with ``--version``, none; otherwise every subcommand is.
    """
    return _parsers(command)[0]


def _parsers(
    command: str | None,
) -> tuple[argparse.ArgumentParser, Mapping[str, argparse.ArgumentParser]]:
    """The ``devutils`` parser and its subcommands' parsers by name (see `build_parser`)."""
    parser = Parser(
        prog="devutils",
        description=(
            "Developer utilities: one-pass multi-replace (replace), month counting "
            "(months), ML batch planning (batch), resource statistics (stat, gpu, "
            "which-dstat)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"devutils {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    if command != "--version":  # answered before any subcommand is looked at
        for module in _subcommands(command):
            module.register(subparsers)
    return parser, subparsers.choices


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
        sys.stdout = open(_stand_in(1, os.O_RDONLY), "w", encoding="utf-8")  # noqa: SIM115 - for the run
    if sys.stderr is None:  # started with stderr closed (`devutils ... 2>&-`): messages
        # go nowhere, and no file opened later takes descriptor 2.
        sys.stderr = open(_stand_in(2, os.O_WRONLY), "w", encoding="utf-8")  # noqa: SIM115 - for the run
    # What a stdout's encoding cannot hold (a GPU's name under EUC-JP) is escaped, not a
    # UnicodeEncodeError, where Python made it strict (its C locale's surrogateescape
    # stays); the bytes written to its buffer (devutils replace) are not touched.
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # (a stream of a caller's own)
    if reconfigure is not None and getattr(sys.stdout, "errors", None) == "strict":
        reconfigure(errors="backslashreplace")
    arguments = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        arguments = _as_typed(arguments)
    command = arguments[0] if arguments else None
    try:
        status = _dispatch(arguments, command)
        sys.stdout.flush()  # here, where a failed write is still ours to report
    except KeyboardInterrupt:
        return 128 + 2  # SIGINT
    except Terminated as exc:
        return 128 + exc.signum
    except BrokenPipeError:
        # The reader went away (`devutils ... | head`): not an error of ours.
        _silence_stdout()
        return 0
    except OSError as exc:  # a full disk, a closed stdout: one line, status 1
        prog = f"devutils {command}" if command in COMMANDS else "devutils"
        # Every subcommand reports a file it cannot read or write itself, with its name:
        # what comes here without one is stdout (a print, a flush).
        where = f"{exc.filename if exc.filename is not None else 'stdout'}: "
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        _silence_stdout()  # what is still buffered would fail again at exit
        return 1
    return status


def _stand_in(descriptor: int, flags: int) -> int:
    """A descriptor on the null device (with *flags*) for a stream that is None: where
    *descriptor* itself is closed, that one, so that no file opened later takes it (stdin
    may be closed too: the first open would take 0); where it is open (a caller set the
    stream to None), a new one, leaving *descriptor* as it is."""
    opened = os.open(os.devnull, flags)
    try:
        os.fstat(descriptor)
    except OSError:  # closed
        os.dup2(opened, descriptor)
        os.close(opened)
        return descriptor
    return opened


def _as_typed(arguments: list[str]) -> list[str]:
    """The command line's words, each of which `os.fsencode` turns back into the bytes
    typed (as every subcommand expects: words are read as UTF-8, file names opened).

    Python's own decoding (the C library's, with surrogateescape) cannot always be
    undone: under EUC-JP it reads the byte 0x82 of a UTF-8 word as the character U+0082,
    which Python's ``euc_jp`` codec cannot encode. Such words are read again from the
    bytes themselves (``/proc/self/cmdline``, on Linux), with `os.fsdecode`.
    """
    try:
        for word in arguments:
            os.fsencode(word)
    except UnicodeEncodeError:
        pass
    else:
        return arguments
    try:
        with open("/proc/self/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")[:-1]
    except OSError:  # not Linux: left as Python read them
        return arguments
    given = len(arguments)
    if len(words) != len(sys.orig_argv) or sys.orig_argv[len(words) - given :] != arguments:
        return arguments  # (not this process's command line: a caller set sys.argv)
    return [os.fsdecode(word) for word in words[len(words) - given :]]


def _dispatch(arguments: list[str], command: str | None) -> int:
    files: list[str] = []  # (replace: the files after "--", and each --pair FROM TO)
    pairs: list[list[str]] = []
    if command == "replace":
        from devutils.cli.replace import prepare_argv

        arguments, files, pairs = prepare_argv(arguments)
    parser, subcommands = _parsers(command)
    try:
        if command in COMMANDS:  # the subcommand's own parser: errors name it
            args = subcommands[command].parse_intermixed_args(arguments[1:])
            args.command = command
            if files:
                args.files += files
            if pairs:  # (before those argparse read: `--pai a b`)
                args.pair[:0] = pairs
        elif not arguments:  # a bare `devutils`: which commands there are, as a usage error
            parser.print_help(sys.stderr)
            return 2
        else:  # --help, --version, a misspelt command
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
