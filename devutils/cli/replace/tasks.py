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
from devutils.textfiles import LOSSY, TRANSFORMS

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


_DIFF_TEXT = "".join(map(chr, range(32, 127))) + "\t\n"
"""What a diff's headers, hunk lines and markers are made of (`work` C-quotes a name
beyond printable ASCII)."""


def _writes_ascii(encoding: str) -> bool:
    """Whether *encoding* writes printable ASCII, tab and newline as their ASCII bytes, as
    patch and git apply read a diff's headers: not ``utf-16-le`` or ``utf-32-be`` (where
    a 0 byte is no NUL character either), EBCDIC's ``cp037``, nor the few that respell
    one of them (``shift_jis_2004``'s ``\\``, ``hz``'s ``~``, ``cp864``'s ``%``).

    Examples:
        >>> _writes_ascii("latin-1"), _writes_ascii("utf-16-le"), _writes_ascii("cp037")
        (True, False, False)
    """
    try:
        return _DIFF_TEXT.encode(encoding) == _DIFF_TEXT.encode("ascii")
    except UnicodeEncodeError:
        return False


def check_encoding(name: str, *, diff: bool = False) -> str:
    """The codec to read and write files in for ``--encoding NAME``, or a usage error.

    Every byte outside the matches must be written back as it was, so only character
    encodings of text are taken: not bytes-to-bytes codecs (``base64``, ``zlib``,
    ``rot13``), not transforms (``unicode_escape``, ``idna``, ``utf-7``), and not
    ``utf-16``/``utf-32``, which write the machine's byte order, nor those this Python
    writes wrongly (`devutils.textfiles.LOSSY`); ``utf-8-sig`` reads as
    ``utf-8``, which keeps a byte order mark as it is and adds none. With *diff*
    (``--diff``), only encodings that are ASCII-compatible (`_writes_ascii`).
    """
    try:
        codec = codecs.lookup(name).name
    except (LookupError, ValueError) as exc:  # (ValueError: a NUL, an undecodable byte)
        msg = f"unknown text encoding {name!r}"
        raise CliError(msg) from exc
    try:
        "".encode(codec)  # LookupError for a codec that is not a text encoding
    except (LookupError, ValueError) as exc:  # (ValueError: "undefined" refuses everything)
        msg = f"--encoding {name} is not a text encoding: it would rewrite the file"
        raise CliError(msg) from exc
    if codec == "utf-8-sig":
        return "utf-8"
    if codec in TRANSFORMS:
        msg = f"--encoding {name} is a transform, not a text encoding: it would rewrite the file"
        raise CliError(msg)
    if codec in LOSSY:
        msg = (
            f"--encoding {name}: this Python's encoder for it loses bytes of some texts,"
            f" so a rewrite could change the file outside the matches"
        )
        raise CliError(msg)
    if diff and not _writes_ascii(codec):  # (before utf-16's advice, which would not do)
        msg = (
            f"--diff with --encoding {name}: not ASCII-compatible, so neither patch nor "
            f"git apply could read the diff's headers"
        )
        raise CliError(msg)
    if codec in {"utf-16", "utf-32"}:
        msg = (
            f"--encoding {name}: give the byte order, {codec}-le or {codec}-be "
            f"(a byte order mark is kept as it is)"
        )
        raise CliError(msg)
    return name  # as typed: messages say the name the user gave


def make_job(replacer: Replacer, args: argparse.Namespace) -> Job:
    """The run's job; usage errors for combinations that make no sense."""
    encoding = check_encoding(args.encoding, diff=args.diff)
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
    if args.in_place and os.sep in args.in_place:
        msg = f"--in-place={args.in_place}: a backup suffix with {os.sep!r} names no file beside it"
        raise CliError(msg)
    if names.count(STDIN) + (args.map_file == STDIN) > 1:
        msg = (
            "stdin (-) can be read only once: as --map - or as the input, not both"
            if args.map_file == STDIN
            else "stdin (-) can be read only once: name it once"
        )
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
            yield from _walk(name, hidden=hidden, ignore=ignore)
        else:
            yield Task(name, True, _size(name))


_GIT_LOCATION = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
)
"""What git's environment may say of where a repository is (set inside a git hook): git
is asked about each folder's own repository instead."""


class _GitFailed(Exception):
    """git could not say what it ignores in a work tree."""


def _not_ignored(top: str) -> set[str] | None:
    """The files under *top* that git does not ignore (tracked, or untracked and not
    matched by .gitignore, .git/info/exclude or the global excludes), as paths under
    *top*, a repository inside it listed as its folder; None where *top* is in no git
    work tree, or is one that git ignores (named on the command line: walked whole).

    Raises:
        _GitFailed: If *top* is in a work tree and git cannot list it (not installed, a
            repository of another user's that git refuses to read).
    """
    import subprocess

    environment = {key: value for key, value in os.environ.items() if key not in _GIT_LOCATION}
    environment["LC_ALL"] = "C"  # (its messages untranslated)
    command = ["git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = subprocess.run(command, capture_output=True, check=False, env=environment)
    except OSError as exc:  # no git
        if _in_work_tree(top):
            msg = f"git could not be run ({exc.strerror})"
            raise _GitFailed(msg) from None
        return None
    if listed.returncode != 0:
        said = listed.stderr.decode("utf-8", "replace").strip()
        if "not a git repository" in said or not _in_work_tree(top):
            return None
        first = said.splitlines()[0] if said else f"exit status {listed.returncode}"
        msg = f"git: {first}"
        raise _GitFailed(msg)
    if _ignored_by_git(top, environment):  # (even where it holds tracked files)
        return None
    return {
        os.path.normpath(os.path.join(top, os.fsdecode(name)))
        for name in listed.stdout.split(b"\0")
        if name
    }


def _in_work_tree(folder: str) -> bool:
    """Whether *folder* or one above it holds a ``.git``."""
    folder = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _ignored_by_git(folder: str, environment: dict[str, str]) -> bool:
    """Whether git ignores *folder* itself (``build/`` in .gitignore). A work tree's top
    is never ignored, not even by a ``*`` that starts a list of what is kept."""
    import subprocess

    if os.path.lexists(os.path.join(folder, ".git")):
        return False

    command = ["git", "-C", folder, "check-ignore", "-q", "--no-index", "."]
    done = subprocess.run(command, capture_output=True, check=False, env=environment)
    return done.returncode == 0


def _walk(top: str, *, hidden: bool, ignore: bool) -> Iterator[Task]:
    """The regular files under *top*, sorted, without what git ignores there (with
    *ignore*; each repository inside by its own rules, as ``rg`` does). As ``rg`` does,
    symlinks are not followed (neither to files nor to folders); a folder that cannot be
    read, or whose git cannot list what it ignores, is a task whose error says so."""
    kept = None
    if ignore:
        try:
            kept = _not_ignored(top)
        except _GitFailed as exc:
            reason = f"cannot tell what git ignores here ({exc}; --no-ignore walks it whole)"
            yield Task(top, False, 0, error=reason)
            return
    folders = None if kept is None else _folders_of(kept)
    yield from _walk_folder(top, hidden=hidden, ignore=ignore, kept=kept, folders=folders)


def _walk_folder(
    folder: str, *, hidden: bool, ignore: bool, kept: set[str] | None, folders: set[str] | None
) -> Iterator[Task]:
    try:
        files, subfolders = _listing(folder, hidden=hidden)
    except OSError as exc:
        yield Task(folder, False, 0, error=exc.strerror or str(exc))
        return
    for path in files:
        if kept is None or os.path.normpath(path) in kept:
            yield Task(path, False, _size(path))
    for subfolder in subfolders:
        path = os.path.normpath(subfolder)
        if kept is not None and folders is not None and path not in folders and path not in kept:
            continue  # a folder git ignores is not walked at all
        if ignore and os.path.lexists(os.path.join(subfolder, ".git")):  # a repository
            yield from _walk(subfolder, hidden=hidden, ignore=ignore)  # by its own rules
        else:
            yield from _walk_folder(
                subfolder, hidden=hidden, ignore=ignore, kept=kept, folders=folders
            )


def _listing(folder: str, *, hidden: bool) -> tuple[list[str], list[str]]:
    """The regular files and the folders in *folder*, by name (no symlink, FIFO or device;
    no ``.git``, folder or file; nothing hidden unless *hidden*)."""
    files: list[str] = []
    subfolders: list[str] = []
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name == ".git":  # git's own, never walked: a work tree's or submodule's
            continue  # .git file ("gitdir: ...") too, which a rewrite would cut off
        if not hidden and entry.name.startswith("."):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                subfolders.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                files.append(entry.path)
        except OSError:  # (gone meanwhile)
            continue
    return files, subfolders


def _folders_of(paths: set[str]) -> set[str]:
    """Every folder that holds one of *paths*, however deep."""
    folders: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        while folder and folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    return folders


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
