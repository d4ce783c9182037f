"""``--progress``: a one-line progress bar on stderr."""

from __future__ import annotations

import sys
import time

from devutils.cli.replace.tasks import Task


class Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    REDRAW = 0.1
    """Seconds between redraws, at least."""
    LONG = 32 << 20
    """Bytes of one file above which ``--progress auto`` shows a bar."""

    def __init__(self, files: int, total: int) -> None:
        self.files = files
        self.total = total
        """Bytes to read: the files' sizes when the run began, raised to what was read
        where a file grew (stdin, whose size is not known, counts 0)."""
        self.done_files = 0
        self.done_bytes = 0
        self.file_bytes = 0
        self.last = 0.0
        self.shown = False  # a bar is on the line now

    @classmethod
    def create(cls, setting: str, tasks: list[Task], *, writes_stdout: bool) -> Progress | None:
        """The bar for ``--progress`` *setting*; for ``auto``, only on a terminal, for long
        work, and not where the output goes to that terminal too (it is the progress
        there, and a bar drawn between its lines would break them)."""
        if setting == "never":
            return None
        total = sum(task.size for task in tasks)
        long_work = len(tasks) > 1 or total > cls.LONG
        if setting == "auto" and not (sys.stderr.isatty() and long_work):
            return None
        if setting == "auto" and writes_stdout and sys.stdout.isatty():
            return None
        return cls(len(tasks), total)

    def advance(self, amount: int) -> None:
        self.file_bytes += amount
        self._draw()

    def file_done(self, task: Task) -> None:
        self.done_files += 1
        self.done_bytes += max(task.size, self.file_bytes)
        self.file_bytes = 0
        self._draw(force=self.done_files == self.files)

    def _draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.REDRAW:
            return
        self.last = now
        done = self.done_bytes + self.file_bytes
        self.total = max(self.total, done)
        width = 30
        filled = width if self.done_files == self.files else width * done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        line = (
            f"\rdevutils replace [{bar}] {self.done_files}/{self.files} files, "
            f"{done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        )
        sys.stderr.write(line)
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        """Take the bar off its line, so that output or a message written next starts
        the line (the next redraw puts the bar back)."""
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False

    def close(self) -> None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
