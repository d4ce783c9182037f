"""``devutils replace`` from its arguments to its exit status."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any

from devutils.cli.common import CliError, Terminated, catch_signals
from devutils.cli.replace.arguments import add_parser, build_replacer
from devutils.cli.replace.pool import Runner
from devutils.cli.replace.progress import Progress
from devutils.cli.replace.tasks import STDIN, Job, Task, expand, make_job
from devutils.cli.replace.work import Outcome, shown, write_stdout
from devutils.textfiles import DEFAULT_CHUNK_BYTES, fsync_directory


def register(subparsers: Any) -> None:
    add_parser(subparsers).set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Replace in every file (or stdin); 0 if all went well, 1 if a file failed, and
    128 + the signal's number when interrupted, after one line saying how far it got."""
    job = make_job(build_replacer(args), args)
    names = args.files or [STDIN]
    if STDIN in names and sys.stdin is None:
        msg = "stdin is closed: give FILEs to read, or open stdin"
        raise CliError(msg, status=1)
    tasks = list(
        expand(names, recursive=args.recursive, hidden=args.hidden, ignore=not args.no_ignore)
    )
    glossary = None if args.map_file is None else _map_identity(args.map_file)
    if glossary is not None:
        # (a dry run with --in-place rehearses the rewrite, and a diff proposes it: they
        # refuse what it refuses)
        rewrites = job.mode in ("in-place", "diff") or (
            job.mode == "dry-run" and args.in_place is not None
        )
        tasks = _without_the_map(tasks, glossary, rewrites=rewrites)
    if job.mode in ("in-place", "dry-run", "diff"):
        # A file named twice (or through a symlink too) is rewritten once, not twice:
        # a swap applied twice would silently undo itself (patch takes a diff's second
        # copy for a reversed patch and undoes the first).
        first: dict[str, Task] = {}
        for task in tasks:
            first.setdefault(task.path if task.path == STDIN else os.path.realpath(task.path), task)
        tasks = list(first.values())
    catch_signals()
    progress = Progress.create(args.progress, tasks, writes_stdout=job.mode != "in-place")
    workers = 1 if STDIN in names else min(args.jobs, len(tasks))
    runner = Runner(job, workers, progress)
    try:
        with runner:
            failed, counts = _report(runner.outcomes(tasks), job, tasks, progress)
    except (KeyboardInterrupt, Terminated) as exc:
        signum = exc.signum if isinstance(exc, Terminated) else 2
        where = "; the others are unchanged" if job.mode == "in-place" else ""
        print(
            f"devutils replace: interrupted: {runner.done} of {len(tasks)} files done{where}",
            file=sys.stderr,
        )
        return 128 + signum
    if job.mode == "in-place":
        for directory in sorted({os.path.dirname(os.path.realpath(t.path)) for t in tasks}):
            fsync_directory(directory)
    if args.count and job.mode != "dry-run":  # a dry run's output is the counts
        for name, count in counts:
            print(f"{name}: {count}", file=sys.stderr)
    return 1 if failed else 0


def _map_identity(map_file: str) -> os.stat_result | None:
    """The ``--map`` file's stat (with ``-``, stdin's, where it is a file: ``--map - <
    glossary.tsv``), or None where there is no file to leave out."""
    try:
        if map_file != STDIN:
            return os.stat(map_file)
        if sys.stdin is None:
            return None
        info = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):  # (ValueError: a stdin without a descriptor)
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _without_the_map(tasks: list[Task], glossary: os.stat_result, *, rewrites: bool) -> list[Task]:
    """*tasks* less the ``--map`` file: a walk leaves it out, and naming it where the run
    *rewrites* (``--in-place``, or rehearses or proposes it) is an error (the glossary would rewrite
    itself)."""
    kept = []
    for task in tasks:
        with contextlib.suppress(OSError):
            if os.path.samestat(os.stat(task.path), glossary):
                if not task.explicit:
                    continue
                if rewrites:
                    msg = f"{shown(task.path)} is the --map file: it is never rewritten"
                    raise CliError(msg)
        kept.append(task)
    return kept


def _report(
    outcomes: Iterator[Outcome], job: Job, tasks: list[Task], progress: Progress | None
) -> tuple[bool, list[tuple[str, int]]]:
    """Report each outcome, in order: the output, the count or the error."""
    failed = False
    counts: list[tuple[str, int]] = []
    for task, outcome in zip(tasks, outcomes, strict=True):
        writes = outcome.error is not None or (
            not outcome.skipped
            and (outcome.output is not None or job.mode == "dry-run" or bool(outcome.diff))
        )
        if progress is not None and writes:
            progress.clear()  # (what is written next starts its own line)
        if outcome.error is not None:
            failed = True
            _message(outcome.error)
        elif not outcome.skipped:
            counts.append((shown(outcome.path), outcome.count))
            if outcome.output is not None:
                _emit_file(outcome.output)
            if job.mode == "dry-run":
                _print_stdout(f"{shown(outcome.path)}: {outcome.count}\n")
            elif job.mode == "diff" and outcome.diff:
                write_stdout(outcome.diff.encode(job.encoding))
        if progress is not None:
            progress.file_done(task)
    return failed, counts


def _print_stdout(text: str) -> None:
    """Write *text* to stdout as `print` would (in stdout's encoding: a file's name is
    its own bytes under any locale), between the bytes the other outcomes write."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    write_stdout(text.encode(encoding, getattr(sys.stdout, "errors", None) or "strict"))


def _message(text: str) -> None:
    sys.stdout.flush()
    print(f"devutils replace: {text}", file=sys.stderr, flush=True)


def _emit_file(path: str) -> None:
    with open(path, "rb") as handle:
        while data := handle.read(DEFAULT_CHUNK_BYTES):
            write_stdout(data)
    os.unlink(path)
