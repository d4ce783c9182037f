"""What one ``devutils replace`` run does (`Job`) and the files it covers (`Task`).

The job is one explicit, picklable value: the replacer and the settings that every file
of the run shares, handed to the code that processes a file (in this process or in a
worker), never kept in a global.
"""

from __future__ import annotations

import argparse
import codecs
import os
from collections.abc import Iterator
from dataclasses import dataclass

from devutils.cli.common import CliError
from devutils.text import Replacer
from devutils.textfiles import TRANSFORMS

STDIN = "-"


@dataclass(frozen=True)
class Job:
    """The replacer and the settings every file of the run shares."""

    replacer: Replacer
    mode: str  # "stdout", "in-place", "dry-run" or "diff"
    suffix: str | None  # --in-place=SUFFIX: keep a backup
    encoding: str
    chunk_size: int
    spool: str | None = None  # the folder for parallel runs' stdout output


@dataclass(frozen=True)
class Task:
    """One file of the run (or stdin), or a folder that could not be searched."""

    path: str
    explicit: bool  # named on the command line, not found by --recursive
    size: int
    error: str | None = None  # why the folder *path* could not be walked


def check_encoding(name: str) -> str:
    """The codec to read and write files in for ``--encoding NAME``, or a usage error.

    Every byte outside the matches must be written back as it was, so only character
    encodings of text are taken: not bytes-to-bytes codecs (``base64``, ``zlib``,
    ``rot13``), not transforms (``unicode_escape``, ``idna``, ``utf-7``), and not
    ``utf-16``/``utf-32``, which write the machine's byte order; ``utf-8-sig`` reads as
    ``utf-8``, which keeps a byte order mark as it is and adds none.
    """
    try:
        codec = codecs.lookup(name).name
        "".encode(codec)  # LookupError for a codec that is not a text encoding
    except LookupError as exc:
        msg = f"unknown text encoding {name!r}"
        raise CliError(msg) from exc
    if codec == "utf-8-sig":
        return "utf-8"
    if codec in {"utf-16", "utf-32"}:
        msg = (
            f"--encoding {name}: give the byte order, {codec}-le or {codec}-be "
            f"(a byte order mark is kept as it is)"
        )
        raise CliError(msg)
    if codec in TRANSFORMS:
        msg = f"--encoding {name} is a transform, not a text encoding: it would rewrite the file"
        raise CliError(msg)
    return name  # as typed: messages say the name the user gave


def make_job(replacer: Replacer, args: argparse.Namespace) -> Job:
    """The run's job; usage errors for combinations that make no sense."""
    encoding = check_encoding(args.encoding)
    mode = "diff" if args.diff else "dry-run" if args.dry_run else "stdout"
    if args.in_place is not None and mode == "stdout":
        mode = "in-place"
    if args.hidden and not args.recursive:
        msg = "--hidden needs --recursive"
        raise CliError(msg)
    names = args.files or [STDIN]
    if args.in_place is not None and STDIN in names:
        msg = "--in-place needs files: stdin cannot be rewritten in place"
        raise CliError(msg)
    if names.count(STDIN) + (args.map_file == STDIN) > 1:
        msg = "stdin (-) can be read only once: as --map - or as the input, not both"
        raise CliError(msg)
    return Job(replacer, mode, args.in_place or None, encoding, args.chunk_size)


def expand(
    names: list[str], *, recursive: bool, hidden: bool, ignore: bool = True
) -> Iterator[Task]:
    """The tasks for the command line's names, folders walked with *recursive* (with
    *ignore*, leaving out what git ignores there)."""
    for name in names:
        if name == STDIN:
            yield Task(STDIN, True, 0)
        elif os.path.isdir(name):
            if not recursive:
                msg = f"{name} is a directory (use --recursive to walk it)"
                raise CliError(msg)
            kept = _not_ignored(name) if ignore else None
            yield from _walk(name, hidden=hidden, kept=kept)
        else:
            yield Task(name, True, _size(name))


def _not_ignored(top: str) -> set[str] | None:
    """The files under *top* that git does not ignore (tracked, or untracked and not
    matched by .gitignore, .git/info/exclude or the global excludes), as paths under
    *top*; None where *top* is not in a git work tree or git is not installed."""
    import subprocess

    try:
        listed = subprocess.run(
            ["git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=False,
        )
    except OSError:  # no git
        return None
    if listed.returncode != 0:  # not a work tree
        return None
    return {
        os.path.normpath(os.path.join(top, os.fsdecode(name)))
        for name in listed.stdout.split(b"\0")
        if name
    }


def _walk(top: str, *, hidden: bool, kept: set[str] | None) -> Iterator[Task]:
    """The regular files under *top*, sorted (only those in *kept*, unless None); as
    ``rg`` does, symlinks are not followed (neither to files nor to folders), and a
    folder that cannot be read is a task whose error says so."""
    folders = None if kept is None else _folders_of(kept)
    unreadable: list[OSError] = []
    for directory, subdirs, files in os.walk(top, onerror=unreadable.append):
        yield from _unreadable(unreadable)
        subdirs[:] = sorted(d for d in subdirs if hidden or not d.startswith("."))
        subdirs[:] = [d for d in subdirs if d != ".git"]  # never walk into .git
        if folders is not None:  # a folder git ignores is not walked at all
            subdirs[:] = [
                d for d in subdirs if os.path.normpath(os.path.join(directory, d)) in folders
            ]
        for file in sorted(files):
            if hidden or not file.startswith("."):
                path = os.path.join(directory, file)
                if kept is not None and os.path.normpath(path) not in kept:
                    continue
                # skips symlinks, sockets, FIFOs and devices
                if not os.path.islink(path) and os.path.isfile(path):
                    yield Task(path, False, _size(path))
    yield from _unreadable(unreadable)  # the last folders walked, or *top* itself


def _folders_of(paths: set[str]) -> set[str]:
    """Every folder that holds one of *paths*, however deep."""
    folders: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        while folder and folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    return folders


def _unreadable(errors: list[OSError]) -> Iterator[Task]:
    for error in errors:
        yield Task(str(error.filename), False, 0, error=error.strerror or str(error))
    errors.clear()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
