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
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from devutils.cli.common import (
    CliError,
    Terminated,
    catch_signals,
    hold_signals,
    positive_int,
)
from devutils.text import Replacer
from devutils.textfiles import (
    AtomicRewrite,
    FileChangedError,
    FileRefusedError,
    fsync_directory,
    transcode,
    write_all,
)

DEFAULT_CHUNK = 1 << 20  # bytes read at a time
MAX_JOBS = 256
"""The most files processed at once (``--jobs``); never more workers than files."""


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
        help="replace FROM with TO (repeatable; the two words are taken as they are, so "
        "they may start with -)",
    )
    # prepare_argv turns each "--pair FROM TO" into these two, which take any word
    parser.add_argument("--pair-from", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--pair-to", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument(
        "--map",
        dest="map_file",
        metavar="FILE",
        help="a JSON object or a two-column TSV file (FROM<TAB>TO per line) of "
        "replacements; - reads it from stdin",
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
        "-n",
        "--dry-run",
        action="store_true",
        help="change nothing; print each file's count (with --in-place: of what it would rewrite)",
    )
    parser.add_argument(
        "--diff", action="store_true", help="change nothing; print a unified diff instead"
    )
    parser.add_argument(
        "--count",
        action="store_true",
        help="print each file's count on stderr afterwards (also with --diff)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help=f"files processed at once, 1 to {MAX_JOBS} (never more than there are files)",
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


def _jobs(text: str) -> int:
    """An argparse type: 1 to `MAX_JOBS` worker processes."""
    jobs = positive_int(text)
    if jobs > MAX_JOBS:
        msg = f"must be at most {MAX_JOBS}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return jobs


def prepare_argv(argv: list[str]) -> list[str]:
    """Read ``devutils replace``'s arguments as sed readers expect them.

    A bare ``--in-place`` takes no value, so ``--in-place FILE`` keeps FILE a file; and
    ``--pair FROM TO`` takes the next two words whatever they are (``--pair -v
    --verbose``), given to argparse as ``--pair-from=FROM --pair-to=TO``. Past ``--``
    every word is a file.
    """
    out: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return out + argv[index:]
        if arg == "--pair" and index + 2 < len(argv):
            out += [f"--pair-from={argv[index + 1]}", f"--pair-to={argv[index + 2]}"]
            index += 3
            continue
        out.append("--in-place=" if arg == "--in-place" else arg)
        index += 1
    return out


def load_map(path: str) -> dict[str, str]:
    """Read a JSON object or two-column TSV file of replacements (``-``: stdin)."""
    try:
        raw = sys.stdin.buffer.read() if path == STDIN else Path(path).read_bytes()
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
        if len(fields) != 2:  # noqa: PLR2004 - FROM and TO
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
    for key, value in zip(args.pair_from, args.pair_to, strict=True):
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
    spool: str | None = None  # the folder for parallel runs' stdout output


class _Stopped(Exception):
    """The run was interrupted: a file not started is left alone, one begun is unwound."""


def run(args: argparse.Namespace) -> int:
    return run_files(build_replacer(args), args)


def _options(args: argparse.Namespace) -> Options:
    """The run's mode and settings; usage errors for combinations that make no sense."""
    try:
        codecs.lookup(args.encoding)
    except LookupError as exc:
        msg = f"unknown encoding {args.encoding!r}"
        raise CliError(msg) from exc
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
    return Options(mode, args.in_place or None, args.encoding, args.chunk_size)


def run_files(replacer: Replacer, args: argparse.Namespace) -> int:
    """Replace in every file (or stdin); 0 if all went well, 1 if a file failed, and
    128 + the signal's number when interrupted, after one line saying how far it got."""
    options = _options(args)
    names = args.files or [STDIN]
    tasks = list(_expand(names, recursive=args.recursive, hidden=args.hidden))
    if options.mode in ("in-place", "dry-run"):
        # A file named twice (or through a symlink too) is rewritten once, not twice:
        # a swap applied twice would silently undo itself.
        first: dict[str, Task] = {}
        for task in tasks:
            first.setdefault(task.path if task.path == STDIN else os.path.realpath(task.path), task)
        tasks = list(first.values())
    catch_signals()
    progress = _Progress.create(args.progress, tasks)
    workers = 1 if STDIN in names else min(args.jobs, len(tasks))
    runner = _Runner(replacer, options, workers, progress)
    try:
        with runner:
            failed, counts = _report(runner.outcomes(tasks), options, tasks, progress)
    except (KeyboardInterrupt, Terminated) as exc:
        signum = exc.signum if isinstance(exc, Terminated) else 2
        where = "; the others are unchanged" if options.mode == "in-place" else ""
        print(
            f"devutils replace: interrupted: {runner.done} of {len(tasks)} files done{where}",
            file=sys.stderr,
        )
        return 128 + signum
    if options.mode == "in-place":
        for directory in sorted({os.path.dirname(os.path.realpath(t.path)) for t in tasks}):
            fsync_directory(directory)
    if args.count and options.mode != "dry-run":  # a dry run's output is the counts
        for name, count in counts:
            print(f"{name}: {count}", file=sys.stderr)
    return 1 if failed else 0


def _report(
    outcomes: Iterator[Outcome], options: Options, tasks: list[Task], progress: _Progress | None
) -> tuple[bool, list[tuple[str, int]]]:
    """Report each outcome, in order: the output, the count or the error."""
    failed = False
    counts: list[tuple[str, int]] = []
    for task, outcome in zip(tasks, outcomes, strict=True):
        if progress is not None:
            progress.file_done(task)
        if outcome.error is not None:
            failed = True
            _message(outcome.error)
        elif not outcome.skipped:
            counts.append((_shown(outcome.path), outcome.count))
            if outcome.output is not None:
                _emit_file(outcome.output)
            if options.mode == "dry-run":
                write_stdout(f"{_shown(outcome.path)}: {outcome.count}\n".encode())
            elif options.mode == "diff" and outcome.diff:
                write_stdout(outcome.diff.encode(options.encoding, "surrogateescape"))
    return failed, counts


class _Runner:
    """Run tasks here, or in worker processes that stop at once when asked; ``done``
    counts the files finished.

    The workers ignore Ctrl-C (the whole process group gets it): this process catches
    it, sets the stop event and waits; a worker checks the event before each file and
    between chunks, so a file not started is never touched and one begun is unwound
    (its temporary file removed). A worker that gets SIGTERM itself unwinds its file and
    says so, and this process stops too. Their stdout output goes through files in a
    folder of this process's (``devutils-replace-XXXXXXXX`` in the temporary directory),
    removed whatever happens; only SIGKILL can leave it behind.
    """

    def __init__(
        self, replacer: Replacer, options: Options, workers: int, progress: _Progress | None
    ) -> None:
        self.replacer = replacer
        self.options = options
        self.workers = workers
        self.progress = progress
        self.pool: ProcessPoolExecutor | None = None
        self.stop: Any = None
        self.futures: list[Future[tuple[list[Outcome], int]]] = []
        self._done_here = 0

    def __enter__(self) -> _Runner:
        if self.workers <= 1:
            _init_worker(self.replacer, self.options, None)
            return self
        import multiprocessing

        spool = tempfile.mkdtemp(prefix="devutils-replace-")
        self.options = Options(**{**self.options.__dict__, "spool": spool})
        self.stop = multiprocessing.get_context().Event()
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            initializer=_init_worker,
            initargs=(self.replacer, self.options, self.stop),
        )
        return self

    @property
    def done(self) -> int:
        """Files finished (rewritten, or with nothing to change, or written out)."""
        finished = [
            f.result()[0]
            for f in self.futures
            if f.done() and not f.cancelled() and f.exception() is None
        ]
        return self._done_here + sum(_succeeded(outcome) for part in finished for outcome in part)

    def outcomes(self, tasks: list[Task]) -> Iterator[Outcome]:
        if self.pool is None:
            for task in tasks:
                outcome = _process(task, self.options, self.progress)
                self._done_here += _succeeded(outcome)
                yield outcome
            return
        size = max(1, min(64, len(tasks) // (4 * self.workers)))
        chunks = [tasks[i : i + size] for i in range(0, len(tasks), size)]
        # The pool's threads and workers start with the signals held, so that a signal to
        # this process reaches this thread (one taken by a helper thread is not noticed
        # until the wait ends); the workers take theirs back in `_init_worker`.
        with hold_signals():
            self.futures = [self.pool.submit(_work, chunk) for chunk in chunks]
        for future in self.futures:
            outcomes, signum = future.result()
            if signum:  # a worker was sent a signal of its own: stop everything
                raise Terminated(signum)
            yield from outcomes

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            with hold_signals():  # a second Ctrl-C waits for the workers to unwind
                self.stop.set()
                self.pool.shutdown(wait=True, cancel_futures=True)
                assert self.options.spool is not None
                shutil.rmtree(self.options.spool, ignore_errors=True)
        if self.progress is not None:
            self.progress.close()


def _succeeded(outcome: Outcome) -> bool:
    return outcome.error is None and not outcome.skipped


def _shown(path: str) -> str:
    return "<stdin>" if path == STDIN else path


def _message(text: str) -> None:
    sys.stdout.flush()
    print(f"devutils replace: {text}", file=sys.stderr, flush=True)


def _emit_file(path: str) -> None:
    with open(path, "rb") as handle:
        while data := handle.read(1 << 20):
            write_stdout(data)
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

_worker: tuple[Replacer, Options, Any] | None = None


def _init_worker(replacer: Replacer, options: Options, stop: Any) -> None:
    global _worker  # noqa: PLW0603 - per-process state for the pool
    _worker = (replacer, options, stop)
    if stop is not None:  # a worker process: Ctrl-C is the parent's to handle
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        catch_signals()  # SIGTERM to the whole group: unwind the file begun
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def _work(tasks: list[Task]) -> tuple[list[Outcome], int]:
    """In a worker: the outcomes of *tasks* (those not started when the run stops are
    skipped), and the signal sent to this worker, if one cut them short (else 0)."""
    assert _worker is not None
    _, options, stop = _worker
    outcomes: list[Outcome] = []
    try:
        for task in tasks:
            skip = stop.is_set()
            outcomes.append(
                Outcome(task.path, skipped=True)
                if skip
                else _process(task, options, None, parallel=True)
            )
    except Terminated as exc:
        return outcomes, exc.signum
    return outcomes, 0


def _process(
    task: Task, options: Options, progress: _Progress | None, *, parallel: bool = False
) -> Outcome:
    assert _worker is not None
    replacer, _, stop = _worker
    source = _Reader(progress.advance if progress is not None else None, stop)
    try:
        return _do(replacer, task.path, options, source, parallel=parallel)
    except _Stopped:
        return Outcome(task.path, skipped=True)
    except FileRefusedError as exc:
        if not task.explicit and exc.reason.startswith(_BINARY):
            return Outcome(task.path, skipped=True)
        left = "; left unchanged" if options.mode == "in-place" else ""
        return Outcome(task.path, error=f"{exc}{left}")
    except FileChangedError as exc:
        return Outcome(task.path, error=str(exc))
    except (StdoutError, BrokenPipeError):  # ours to write, not the file's to read
        raise
    except OSError as exc:
        where = exc.filename if exc.filename is not None else task.path
        return Outcome(task.path, error=f"{where}: {exc.strerror or exc}")


def _do(
    replacer: Replacer, path: str, options: Options, source: _Reader, *, parallel: bool
) -> Outcome:
    """One file (or stdin) in the run's mode."""
    if path == STDIN:
        return _stdin(replacer, options, source)
    if options.mode == "dry-run":
        return Outcome(path, _count(replacer, path, options, source))
    if options.mode == "in-place":
        return Outcome(path, _rewrite(replacer, path, options, source))
    if options.mode == "diff":
        return _diff(replacer, path, options)
    return _to_stdout(replacer, path, options, source, parallel=parallel)


class _Reader:
    """A binary reader over a file that reports progress and stops when asked."""

    def __init__(self, advance: Callable[[int], None] | None, stop: Any) -> None:
        self._advance = advance
        self._stop = stop
        self.source: IO[bytes] | None = None

    def over(self, source: IO[bytes]) -> _Reader:
        self.source = source
        return self

    def read(self, size: int = -1, /) -> bytes:
        if self._stop is not None and self._stop.is_set():
            raise _Stopped
        assert self.source is not None
        data = self.source.read(size)
        if self._advance is not None and data:
            self._advance(len(data))
        return data


def _count(replacer: Replacer, path: str, options: Options, source: _Reader) -> int:
    """What rewriting *path* would count, changing nothing."""
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise FileRefusedError(path, "is not a regular file")
        return transcode(
            replacer,
            source.over(handle),
            None,
            name=path,
            encoding=options.encoding,
            chunk_size=options.chunk_size,
        ).count


def _rewrite(replacer: Replacer, path: str, options: Options, source: _Reader) -> int:
    """Rewrite *path* atomically (its directory is fsynced once, by `run_files`)."""
    with AtomicRewrite(path, backup_suffix=options.suffix, sync_directory=False) as rewrite:
        state = transcode(
            replacer,
            source.over(rewrite.source),
            rewrite.target,
            name=path,
            encoding=options.encoding,
            chunk_size=options.chunk_size,
        )
        if state.changed:
            rewrite.commit()
    return state.count


def _stdin(replacer: Replacer, options: Options, source: _Reader) -> Outcome:
    if options.mode == "diff":
        data = sys.stdin.buffer.read()
        diff, count = _unified(replacer, data, "<stdin>", options)
        return Outcome(STDIN, count, diff=diff)
    if options.mode == "dry-run":
        state = transcode(
            replacer,
            source.over(sys.stdin.buffer),
            None,
            name="<stdin>",
            encoding=options.encoding,
            chunk_size=options.chunk_size,
        )
        return Outcome(STDIN, state.count)
    state = transcode(
        replacer,
        source.over(sys.stdin.buffer),
        _StdoutSink(),
        name="<stdin>",
        encoding=options.encoding,
        chunk_size=options.chunk_size,
    )
    return Outcome(STDIN, state.count)


class StdoutError(OSError):
    """Writing to stdout failed (a full disk, a closed descriptor): named as ``stdout``."""


def write_stdout(data: bytes) -> None:
    """Write *data* to stdout whole (a short write continues), or raise `StdoutError` (or
    BrokenPipeError, for a reader that went away)."""
    sys.stdout.flush()
    try:
        write_all(sys.stdout.buffer, data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc.errno, exc.strerror or str(exc), "stdout") from exc


class _StdoutSink:
    """What `transcode` writes to, for stdout: every write whole, or `StdoutError`."""

    def write(self, data: bytes | memoryview, /) -> int:
        write_stdout(bytes(data))
        return len(data)


def _to_stdout(
    replacer: Replacer, path: str, options: Options, source: _Reader, *, parallel: bool
) -> Outcome:
    """Transcode into a temporary file first, so a refused file writes nothing to stdout."""
    target: IO[bytes]
    name = ""
    if parallel:
        descriptor, name = tempfile.mkstemp(dir=options.spool, prefix="output-")
        target = os.fdopen(descriptor, "wb")
    else:
        target = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - closed below
    try:
        with open(path, "rb") as handle:
            state = transcode(
                replacer,
                source.over(handle),
                target,
                name=path,
                encoding=options.encoding,
                chunk_size=options.chunk_size,
            )
        if parallel:
            target.close()
            return Outcome(path, state.count, output=name)
        target.seek(0)
        while data := target.read(1 << 20):
            write_stdout(data)
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
    diff, count = _unified(replacer, data, path, options)
    return Outcome(path, count, diff=diff)


def _unified(replacer: Replacer, data: bytes, name: str, options: Options) -> tuple[str, int]:
    """The unified diff of what the replacements would make of *data*, and their count."""
    try:
        before = data.decode(options.encoding)
    except UnicodeDecodeError as exc:
        reason = f"not valid {options.encoding} (byte {exc.start})"
        raise FileRefusedError(name, reason) from exc
    if "\x00" in before:
        raise FileRefusedError(name, "looks binary (it has a NUL byte)")
    after, count = replacer.replace_count(before)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return diff, count


class _Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    REDRAW = 0.1
    """Seconds between redraws, at least."""
    LONG = 32 << 20
    """Bytes of one file above which ``--progress auto`` shows a bar."""

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
        long_work = len(tasks) > 1 or total > cls.LONG
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
        if not force and now - self.last < self.REDRAW:
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
