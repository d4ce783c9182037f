"""``devutils replace`` on streams and files: in place, atomic, streaming, in parallel."""

from __future__ import annotations

import argparse
import codecs
import difflib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import IO

from devutils._stream import FileRefusedError, fsync_directory, replace_file, transcode
from devutils.cli import CliError
from devutils.text import Replacer

STDIN = "-"
_BINARY = "looks binary"


@dataclass(frozen=True)
class Task:
    path: str
    explicit: bool  # named on the command line, not found by --recursive
    size: int


@dataclass
class Outcome:
    path: str
    count: int = 0
    error: str | None = None
    skipped: bool = False
    output: str | None = None  # a temporary file holding stdout output (parallel runs)
    diff: str = ""


@dataclass(frozen=True)
class Options:
    mode: str  # "stdout", "in-place", "dry-run" or "diff"
    suffix: str | None
    encoding: str
    chunk_size: int


def run_files(replacer: Replacer, args: argparse.Namespace) -> int:
    try:
        codecs.lookup(args.encoding)
    except LookupError as exc:
        msg = f"unknown encoding {args.encoding!r}"
        raise CliError(msg) from exc
    mode = "stdout"
    if args.diff:
        mode = "diff"
    elif args.dry_run:
        mode = "dry-run"
    elif args.in_place is not None:
        mode = "in-place"
    if args.in_place is not None and (args.diff or args.dry_run):
        msg = "--in-place cannot be combined with --dry-run or --diff"
        raise CliError(msg)
    if args.hidden and not args.recursive:
        msg = "--hidden needs --recursive"
        raise CliError(msg)
    names = args.files or [STDIN]
    if mode == "in-place" and STDIN in names:
        msg = "--in-place needs files: stdin cannot be rewritten in place"
        raise CliError(msg)
    if names.count(STDIN) > 1:
        msg = "stdin (-) can be read only once"
        raise CliError(msg)
    options = Options(mode, args.in_place or None, args.encoding, args.chunk_size)
    tasks = list(_expand(names, recursive=args.recursive, hidden=args.hidden))
    if mode == "in-place":
        # A file named twice (or through a symlink too) is rewritten once, not twice:
        # a swap applied twice would silently undo itself.
        seen: set[str] = set()
        unique = []
        for task in tasks:
            real = os.path.realpath(task.path)
            if real not in seen:
                seen.add(real)
                unique.append(task)
        tasks = unique
    progress = _Progress.create(args.progress, tasks)

    outcomes: Iterator[Outcome]
    if args.jobs > 1 and len(tasks) > 1 and STDIN not in names:
        pool = ProcessPoolExecutor(
            max_workers=args.jobs, initializer=_init_worker, initargs=(replacer, options)
        )
        outcomes = pool.map(_work, tasks, chunksize=max(1, min(64, len(tasks) // (4 * args.jobs))))
    else:
        pool = None
        _init_worker(replacer, options)
        outcomes = (_process(task, options, progress) for task in tasks)

    failed = False
    counts: list[tuple[str, int]] = []
    try:
        for task, outcome in zip(tasks, outcomes, strict=True):
            if progress is not None:
                progress.file_done(task)
            if outcome.skipped:
                continue
            if outcome.error is not None:
                failed = True
                _message(outcome.error)
                continue
            counts.append((_shown(outcome.path), outcome.count))
            if outcome.output is not None:
                _emit_file(outcome.output)
            if mode == "dry-run":
                _write_stdout(f"{_shown(outcome.path)}: {outcome.count}\n")
            elif mode == "diff" and outcome.diff:
                _write_stdout(outcome.diff)
    finally:
        if progress is not None:
            progress.close()
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if mode == "in-place":
        for directory in sorted({os.path.dirname(os.path.realpath(t.path)) for t in tasks}):
            fsync_directory(directory)
    if args.count and mode in ("stdout", "in-place"):
        for name, count in counts:
            print(f"{name}: {count}", file=sys.stderr)
    return 1 if failed else 0


def _shown(path: str) -> str:
    return "<stdin>" if path == STDIN else path


def _message(text: str) -> None:
    sys.stdout.flush()
    print(f"devutils replace: {text}", file=sys.stderr, flush=True)


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _emit_file(path: str) -> None:
    sys.stdout.flush()
    try:
        with open(path, "rb") as handle:
            shutil.copyfileobj(handle, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()
    finally:
        os.unlink(path)


def _expand(names: list[str], *, recursive: bool, hidden: bool) -> Iterator[Task]:
    for name in names:
        if name == STDIN:
            yield Task(STDIN, True, 0)
        elif os.path.isdir(name):
            if not recursive:
                msg = f"{name} is a directory (use --recursive to walk it)"
                raise CliError(msg)
            yield from _walk(name, hidden=hidden)
        else:
            yield Task(name, True, _size(name))


def _walk(top: str, *, hidden: bool) -> Iterator[Task]:
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = sorted(d for d in subdirs if hidden or not d.startswith("."))
        subdirs[:] = [d for d in subdirs if d != ".git"]  # never walk into .git
        for file in sorted(files):
            if hidden or not file.startswith("."):
                path = os.path.join(directory, file)
                if os.path.isfile(path):  # skips sockets, FIFOs and broken links
                    yield Task(path, False, _size(path))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# -- the work itself (also run in worker processes) ---------------------------------------

_worker: tuple[Replacer, Options] | None = None


def _init_worker(replacer: Replacer, options: Options) -> None:
    global _worker  # noqa: PLW0603 - per-process state for the pool
    _worker = (replacer, options)


def _work(task: Task) -> Outcome:
    assert _worker is not None
    return _process(task, _worker[1], None, parallel=True)


def _process(
    task: Task, options: Options, progress: _Progress | None, *, parallel: bool = False
) -> Outcome:
    assert _worker is not None
    replacer = _worker[0]
    advance = progress.advance if progress is not None else None
    try:
        if task.path == STDIN:
            return _stdin(replacer, options)
        if options.mode in ("in-place", "dry-run"):
            count = replace_file(
                replacer,
                task.path,
                encoding=options.encoding,
                backup_suffix=options.suffix,
                chunk_size=options.chunk_size,
                dry_run=options.mode == "dry-run",
                progress=advance,
                sync_directory=False,  # run_files syncs each directory once, at the end
            )
            return Outcome(task.path, count)
        if options.mode == "diff":
            return _diff(replacer, task.path, options)
        return _to_stdout(replacer, task.path, options, parallel=parallel, progress=progress)
    except FileRefusedError as exc:
        if not task.explicit and exc.reason.startswith(_BINARY):
            return Outcome(task.path, skipped=True)
        left = "; left unchanged" if options.mode == "in-place" else ""
        return Outcome(task.path, error=f"{exc}{left}")
    except OSError as exc:
        return Outcome(task.path, error=f"{task.path}: {exc.strerror or exc}")


def _stdin(replacer: Replacer, options: Options) -> Outcome:
    sink = None if options.mode in ("dry-run", "diff") else sys.stdout.buffer
    if options.mode == "diff":
        data = sys.stdin.buffer.read()
        return Outcome(STDIN, diff=_unified(replacer, data, "<stdin>", options))
    sys.stdout.flush()
    try:
        state = transcode(
            replacer,
            sys.stdin.buffer,
            sink,
            name="<stdin>",
            encoding=options.encoding,
            chunk_size=options.chunk_size,
        )
    finally:
        if sink is not None:
            sink.flush()
    return Outcome(STDIN, state.count)


def _to_stdout(
    replacer: Replacer,
    path: str,
    options: Options,
    *,
    parallel: bool,
    progress: _Progress | None,
) -> Outcome:
    """Transcode into a temporary file first, so a refused file writes nothing to stdout."""
    target: IO[bytes]
    if parallel:
        descriptor, name = tempfile.mkstemp(prefix="devutils-replace-")
        target = os.fdopen(descriptor, "wb")
    else:
        target = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - closed below
    try:
        with open(path, "rb") as source:
            state = transcode(
                replacer,
                source,
                target,
                name=path,
                encoding=options.encoding,
                chunk_size=options.chunk_size,
                progress=progress.advance if progress is not None else None,
            )
        if parallel:
            target.close()
            return Outcome(path, state.count, output=name)
        target.seek(0)
        sys.stdout.flush()
        shutil.copyfileobj(target, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()
        return Outcome(path, state.count)
    except BaseException:
        if parallel:
            target.close()
            os.unlink(name)
        raise
    finally:
        target.close()


def _diff(replacer: Replacer, path: str, options: Options) -> Outcome:
    with open(path, "rb") as handle:
        data = handle.read()
    return Outcome(path, diff=_unified(replacer, data, path, options))


def _unified(replacer: Replacer, data: bytes, name: str, options: Options) -> str:
    try:
        before = data.decode(options.encoding)
    except UnicodeDecodeError as exc:
        reason = f"not valid {options.encoding} (byte {exc.start})"
        raise FileRefusedError(name, reason) from exc
    if "\x00" in before:
        raise FileRefusedError(name, "looks binary (it has a NUL byte)")
    after = replacer.replace(before)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


class _Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, files: int, total: int) -> None:
        self.files = files
        self.total = max(total, 1)
        self.done_files = 0
        self.done_bytes = 0
        self.file_bytes = 0
        self.last = 0.0

    @classmethod
    def create(cls, setting: str, tasks: list[Task]) -> _Progress | None:
        if setting == "never":
            return None
        total = sum(task.size for task in tasks)
        long_work = len(tasks) > 1 or total > 32 << 20
        if setting == "auto" and not (sys.stderr.isatty() and long_work):
            return None
        return cls(len(tasks), total)

    def advance(self, amount: int) -> None:
        self.file_bytes += amount
        self._draw()

    def file_done(self, task: Task) -> None:
        self.done_files += 1
        self.done_bytes += task.size
        self.file_bytes = 0
        self._draw(force=self.done_files == self.files)

    def _draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        done = min(self.done_bytes + self.file_bytes, self.total)
        width = 30
        filled = width * done // self.total
        bar = "#" * filled + "-" * (width - filled)
        line = (
            f"\rdevutils replace [{bar}] {self.done_files}/{self.files} files, "
            f"{done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        )
        sys.stderr.write(line)
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
