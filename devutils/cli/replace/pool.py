"""Running a job's tasks here, or in worker processes (``--jobs``) that stop at once
when asked."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

from devutils.cli.common import (
    CliError,
    Terminated,
    catch_signals,
)
from devutils.cli.replace.progress import Progress
from devutils.cli.replace.tasks import Job, Task
from devutils.cli.replace.work import Outcome, process, shown
from devutils.signals import held, stopping


class Runner:
    """Run *job*'s tasks here, or in *workers* processes; ``done`` counts the files
    finished.

    The workers ignore Ctrl-C (the whole process group gets it): this process catches
    it, sets the stop event and waits; a worker checks the event before each file and
    between chunks, so a file not started is never touched and one begun is unwound
    (its temporary file removed). A worker that gets SIGTERM itself unwinds its file and
    says so, and this process stops too. Their stdout output goes through files in a
    folder of this process's (``devutils-replace-XXXXXXXX`` in the temporary directory),
    removed whatever happens; only SIGKILL can leave it behind.
    """

    def __init__(self, job: Job, workers: int, progress: Progress | None) -> None:
        self.job = job
        self.workers = workers
        self.progress = progress
        self.pool: ProcessPoolExecutor | None = None
        self.stop: Any = None
        self.futures: list[Future[tuple[list[Outcome], int]]] = []
        self._done_here = 0
        self._others: set[Any] = set()

    def __enter__(self) -> Runner:
        if self.workers <= 1:
            return self
        import multiprocessing

        self._others = set(multiprocessing.active_children())  # (the caller's own)
        try:
            spool = tempfile.mkdtemp(prefix="devutils-replace-")
        except OSError as exc:
            msg = f"cannot make a folder in {shown(tempfile.gettempdir())}: {exc.strerror or exc}"
            raise CliError(msg, status=1) from exc
        self.job = replace(self.job, spool=spool)
        try:
            self.stop = multiprocessing.get_context().Event()
            self.pool = ProcessPoolExecutor(
                max_workers=self.workers,
                initializer=_init_worker,
                # (a forkserver, not this process, is the workers' parent)
                initargs=(self.stop, None if _forkserver() else os.getpid()),
            )
        except OSError as exc:  # (with __exit__ never called: all undone here)
            raise self._not_started(exc) from exc
        return self

    @property
    def done(self) -> int:
        """Files finished (rewritten, or with nothing to change, or written out)."""
        finished = [
            f.result()[0]
            for f in self.futures
            if f.done() and not f.cancelled() and f.exception() is None
        ]
        return self._done_here + sum(succeeded(outcome) for part in finished for outcome in part)

    def outcomes(self, tasks: list[Task]) -> Iterator[Outcome]:
        """Each task's outcome, in the tasks' order."""
        if self.pool is None:
            advance = self.progress.advance if self.progress is not None else None
            told: list[Outcome] = []  # (a rewrite counted as it was committed)
            for task in tasks:
                told.clear()
                outcome = process(self.job, task, None, advance, committed=self._told(told))
                if not told:
                    self._done_here += succeeded(outcome)
                yield outcome
            return
        size = max(1, min(64, len(tasks) // (4 * self.workers)))
        chunks = [tasks[i : i + size] for i in range(0, len(tasks), size)]
        # The pool's threads and workers start with the signals held, so that a signal to
        # this process reaches this thread (one taken by a helper thread is not noticed
        # until the wait ends); the workers take theirs back in `_init_worker`.
        with held():
            try:  # (the workers all start with the first chunk, before it is sent)
                self.futures = [self.pool.submit(_process_chunk, self.job, c) for c in chunks]
            except OSError as exc:  # too many open files or processes: no file touched yet
                raise self._not_started(exc) from exc
        for future in self.futures:
            try:
                outcomes, signum = future.result()
            except BrokenProcessPool:  # a worker was killed (SIGKILL, out of memory)
                raise self._died(len(tasks)) from None
            if signum:  # a worker was sent a signal of its own: stop everything
                raise Terminated(signum)
            yield from outcomes

    def _told(self, told: list[Outcome]) -> Callable[[Outcome], None]:
        """What `process` tells of a rewrite committed: counted done at once, with the
        signals held (a signal after it, before the outcome is back, stops the run)."""

        def committed(outcome: Outcome) -> None:
            self._done_here += 1
            told.append(outcome)

        return committed

    def _died(self, tasks: int) -> CliError:
        """The error of a worker that died, saying how far the run got: the pool stops
        the other workers (SIGTERM: they unwind their files)."""
        where = "; the others are unchanged" if self.job.mode == "in-place" else ""
        leftover = (
            " (a .NAME.XXXXXXXX.devutils-tmp may be left beside the file it was rewriting)"
            if self.job.mode == "in-place"
            else ""
        )
        msg = (
            f"a --jobs worker process died (killed, or out of memory): {self.done} of"
            f" {tasks} files done{where}{leftover}"
        )
        return CliError(msg, status=1)

    def _not_started(self, exc: OSError) -> CliError:
        """The error of workers that could not all start, once those that did are gone:
        they wait for work that is never sent (a queue no one would close), and are
        killed, as none has a file open."""
        import multiprocessing

        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            if child not in self._others:
                child.kill()
                child.join()
                child.close()  # (its descriptors back: rmtree needs one)
        self.pool = None
        assert self.job.spool is not None
        try:  # empty still, so no descriptor is needed
            os.rmdir(self.job.spool)
        except OSError:
            shutil.rmtree(self.job.spool, ignore_errors=True)
        reason = exc.strerror or str(exc)
        msg = f"--jobs {self.workers}: cannot start the worker processes ({reason}): try fewer"
        return CliError(msg, status=1)

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            with held():  # a second Ctrl-C waits for the workers to unwind
                self.stop.set()
                self.pool.shutdown(wait=True, cancel_futures=True)
                assert self.job.spool is not None
                shutil.rmtree(self.job.spool, ignore_errors=True)
        if self.progress is not None:
            self.progress.close()


def succeeded(outcome: Outcome) -> bool:
    return outcome.error is None and not outcome.skipped


# -- in the worker processes ---------------------------------------------------------------

_stop: Any = None
"""The run's stop event: multiprocessing hands an Event to a worker only at its start."""
_busy = False
"""Whether this worker is processing a chunk (`_stopped`)."""
_received: dict[str | None, Job] = {}
"""The first copy of each run's job this worker unpickled, by the run's spool folder
(unique to the run): its replacer is compiled once per worker, not once per chunk."""


def _forkserver() -> bool:
    import multiprocessing

    return multiprocessing.get_start_method() == "forkserver"


def _init_worker(stop: Any, parent: int | None) -> None:
    global _stop  # noqa: PLW0603 - what a pool's initializer is for
    _stop = stop
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    catch_signals(_stopped)  # SIGTERM (or SIGQUIT...) to the whole group
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stopping())


def _stopped(signum: int, _frame: object) -> None:
    """A signal that stops this worker: in a chunk, unwind the file begun (`Terminated`);
    between chunks, where it holds no file (waiting for work, or unpickling it), end at
    once, quietly (the pool stops its workers so when one of them died)."""
    if _busy:
        raise Terminated(signum)
    os._exit(128 + signum)


def _die_with(parent: int | None) -> None:
    """Be killed with the parent process (this process's, which is *parent* where given),
    on Linux, where it is killed (SIGKILL) before it can stop this worker: a worker left
    on its own went on rewriting files, then waited for work forever. (As SIGKILL leaves
    a rewrite, so does this: the original intact, the temporary file beside it.)"""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    set_parent_death_signal = 1  # PR_SET_PDEATHSIG, <linux/prctl.h>
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(set_parent_death_signal, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:  # (gone before the signal was set)
        os._exit(1)


def _process_chunk(job: Job, tasks: list[Task]) -> tuple[list[Outcome], int]:
    """In a worker: the outcomes of *tasks* (those not started when the run stops are
    skipped), and the signal sent to this worker, if one cut them short (else 0)."""
    global _busy  # noqa: PLW0603 - read by the signal handler
    job = _received.setdefault(job.spool, job)
    outcomes: list[Outcome] = []
    try:
        _busy = True
        for task in tasks:
            if _stop.is_set():
                outcomes.append(Outcome(task.path, skipped=True))
                continue
            told = len(outcomes)  # (a rewrite committed is in outcomes at once)
            outcome = process(job, task, _stop, parallel=True, committed=outcomes.append)
            if len(outcomes) == told:
                outcomes.append(outcome)
    except Terminated as exc:
        return outcomes, exc.signum
    finally:
        _busy = False
    return outcomes, 0
