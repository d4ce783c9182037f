"""``devutils replace``: the command line of `devutils.text` and `devutils.textfiles`."""

from __future__ import annotations

import argparse
import codecs
import difflib
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from devutils.cli.common import CliError, positive_int
from devutils.text import Replacer
from devutils.textfiles import AtomicRewrite, FileRefusedError, fsync_directory, transcode

DEFAULT_CHUNK = 1 << 20  # bytes read at a time


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replace",
        help="replace many strings in one pass (leftmost-longest), in streams or files",
        description=(
            "Replace many strings in one pass: at each position the longest key wins, "
            "and replacements are never rescanned. With no FILE (or -) it filters stdin "
            "to stdout; with FILEs it writes the results to stdout in order, or rewrites "
            "them atomically with --in-place. Exit status: 0 done, 1 a file was refused "
            "or failed, 2 usage error."
        ),
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="files to read (- is stdin)")
    parser.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("FROM", "TO"),
        help="replace FROM with TO (repeatable)",
    )
    parser.add_argument(
        "--map",
        dest="map_file",
        metavar="FILE",
        help="a JSON object or a two-column TSV file (FROM<TAB>TO per line) of replacements",
    )
    parser.add_argument("--ignore-case", action="store_true", help="full Unicode case folding")
    parser.add_argument(
        "-w", "--whole-words", action="store_true", help="match only where not inside a word"
    )
    parser.add_argument(
        "--preserve-case",
        action="store_true",
        help="give each replacement the matched text's case (UPPER, Title, else as given)",
    )
    parser.add_argument(
        "--in-place",
        nargs="?",
        const="",
        default=None,
        metavar="SUFFIX",
        help="rewrite each FILE atomically; --in-place=SUFFIX keeps a backup FILE+SUFFIX",
    )
    parser.add_argument(
        "-n", "--dry-run", action="store_true", help="change nothing; print each file's count"
    )
    parser.add_argument(
        "--diff", action="store_true", help="change nothing; print a unified diff instead"
    )
    parser.add_argument(
        "--count", action="store_true", help="print each file's count on stderr afterwards"
    )
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=1, metavar="N", help="files processed at once"
    )
    parser.add_argument(
        "-r", "--recursive", action="store_true", help="walk directories given as FILE"
    )
    parser.add_argument(
        "--hidden", action="store_true", help="with --recursive, include hidden files and dirs"
    )
    parser.add_argument("--encoding", default="utf-8", help="text encoding (default: utf-8)")
    parser.add_argument(
        "--chunk-size", type=positive_int, default=DEFAULT_CHUNK, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="a progress bar on stderr: auto (a terminal and long work), always or never",
    )
    parser.set_defaults(handler=run)


def prepare_argv(argv: list[str]) -> list[str]:
    """Let a bare ``--in-place`` take no value, so ``--in-place FILE`` keeps FILE a file."""
    out: list[str] = []
    for index, arg in enumerate(argv):
        if arg == "--":
            return out + argv[index:]
        out.append("--in-place=" if arg == "--in-place" else arg)
    return out


def load_map(path: str) -> dict[str, str]:
    """Read a JSON object or two-column TSV file of replacements."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        msg = f"cannot read --map {path!r}: {exc.strerror or exc}"
        raise CliError(msg) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"--map {path!r} is not valid UTF-8 (byte {exc.start})"
        raise CliError(msg) from exc
    suffix = Path(path).suffix.lower()
    if suffix == ".json" or (suffix not in {".tsv", ".tab", ".txt"} and text.lstrip()[:1] == "{"):
        return _load_json(path, text)
    return _load_tsv(path, text)


def _load_json(path: str, text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"--map {path!r}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise CliError(msg) from exc
    if not isinstance(data, dict):
        msg = f"--map {path!r}: expected a JSON object, got {type(data).__name__}"
        raise CliError(msg)
    for key, value in data.items():
        if not isinstance(value, str):
            msg = f"--map {path!r}: value for key {key!r} must be a string, got {value!r}"
            raise CliError(msg)
    return data


def _load_tsv(path: str, text: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            msg = (
                f"--map {path!r} line {number}: expected 2 tab-separated columns, "
                f"got {len(fields)}: {line[:60]!r}"
            )
            raise CliError(msg)
        key, value = fields
        if key in mapping and mapping[key] != value:
            msg = (
                f"--map {path!r} line {number}: key {key!r} given twice with different "
                f"values {mapping[key]!r} and {value!r}"
            )
            raise CliError(msg)
        mapping[key] = value
    return mapping


def build_replacer(args: argparse.Namespace) -> Replacer:
    """Merge ``--map`` and ``--pair`` into one validated Replacer."""
    mapping: dict[str, str] = {}
    sources: dict[str, str] = {}
    if args.map_file is not None:
        for key, value in load_map(args.map_file).items():
            mapping[key] = value
            sources[key] = f"--map {args.map_file}"
    for key, value in args.pair:
        if key in mapping and mapping[key] != value:
            msg = (
                f"key {key!r} given twice with different values: {mapping[key]!r} "
                f"({sources[key]}) and {value!r} (--pair)"
            )
            raise CliError(msg)
        mapping[key] = value
        sources[key] = "--pair"
    if not mapping:
        msg = "no replacements: give --pair FROM TO or --map FILE"
        raise CliError(msg)
    try:
        return Replacer(
            mapping,
            ignore_case=args.ignore_case,
            whole_words=args.whole_words,
            preserve_case=args.preserve_case,
        )
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc


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


def run(args: argparse.Namespace) -> int:
    return run_files(build_replacer(args), args)


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
        if options.mode == "dry-run":
            with open(task.path, "rb") as source:
                if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                    raise FileRefusedError(task.path, "is not a regular file")
                count = transcode(
                    replacer,
                    _Counted(source, advance),
                    None,
                    name=task.path,
                    encoding=options.encoding,
                    chunk_size=options.chunk_size,
                ).count
            return Outcome(task.path, count)
        if options.mode == "in-place":
            return Outcome(task.path, _rewrite(replacer, task.path, options, advance))
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
                _Counted(source, progress.advance if progress is not None else None),
                target,
                name=path,
                encoding=options.encoding,
                chunk_size=options.chunk_size,
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


class _Counted:
    """A binary reader that reports how many bytes each read returned (for progress)."""

    def __init__(self, source: IO[bytes], advance: Callable[[int], None] | None) -> None:
        self._source = source
        self._advance = advance

    def read(self, size: int = -1, /) -> bytes:
        data = self._source.read(size)
        if self._advance is not None and data:
            self._advance(len(data))
        return data


def _rewrite(
    replacer: Replacer, path: str, options: Options, advance: Callable[[int], None] | None
) -> int:
    """Rewrite *path* atomically (its directory is fsynced once, by `run_files`)."""
    codecs.lookup(options.encoding)
    with AtomicRewrite(path, backup_suffix=options.suffix, sync_directory=False) as rewrite:
        state = transcode(
            replacer,
            _Counted(rewrite.source, advance),
            rewrite.target,
            name=path,
            encoding=options.encoding,
            chunk_size=options.chunk_size,
        )
        if state.changed:
            rewrite.commit()
    return state.count


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
