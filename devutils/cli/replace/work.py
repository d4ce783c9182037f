"""One file (or stdin) in the run's mode: to stdout, ``--in-place``, ``--dry-run`` or
``--diff``; and how a file's name is shown."""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from devutils.cli.replace.tasks import STDIN, Job, Task
from devutils.signals import held
from devutils.textfiles import (
    DEFAULT_CHUNK_BYTES,
    AtomicRewrite,
    FileChangedError,
    FileRefusedError,
    open_regular,
    replace_encoded,
    write_all,
)

DIFF_LIMIT = 32 << 20
"""The largest file ``--diff`` takes, in bytes (a diff holds both texts in memory)."""


@dataclass
class Outcome:
    path: str
    count: int = 0
    error: str | None = None
    skipped: bool = False
    output: str | None = None  # a temporary file holding stdout output (parallel runs)
    diff: str = ""


class Stopped(Exception):
    """The run was interrupted: a file not started is left alone, one begun is unwound."""


class StdoutError(OSError):
    """Writing to stdout failed (a full disk, a closed descriptor): named as ``stdout``."""


_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def shown(path: str) -> str:
    """*path* as messages show it: as it is when every character is printable, else
    quoted as bash's ``$'...'`` (``$'a\\nb.txt'``, a byte that is not UTF-8 as ``\\xff``),
    which a shell reads back as the same name.

    Examples:
        >>> shown("notes.txt"), shown("-")
        ('notes.txt', '<stdin>')
        >>> print(shown("a\\nb.txt"), shown(os.fsdecode(b"caf\\xe9.txt")))
        $'a\\nb.txt' $'caf\\xe9.txt'
    """
    if path == STDIN:
        return "<stdin>"
    if path.isprintable():
        return path
    quoted = []
    for char in path:
        if char in _ESCAPES:
            quoted.append(_ESCAPES[char])
        elif char.isprintable():
            quoted.append(char)
        else:
            quoted.extend(f"\\x{byte:02x}" for byte in os.fsencode(char))
    return "$'" + "".join(quoted) + "'"


def _without_dots(path: str) -> str:
    """*path* without its ``.`` parts and repeated slashes, as git names a file in a diff
    (``./src/f.txt`` -> ``src/f.txt``; git apply refuses ``a/./src/f.txt``). ``..`` stays:
    through a symlink it is not the folder above.

    Examples:
        >>> _without_dots("./src//./f.txt"), _without_dots("/tmp/./f"), _without_dots("../f")
        ('src/f.txt', '/tmp/f', '../f')
    """
    first, *rest = path.split("/")
    parts = [first] if first not in ("", ".") else []
    parts += [part for part in rest if part not in ("", ".")]
    return ("/" if path.startswith("/") else "") + "/".join(parts)


def _diff_name(prefix: str, path: str) -> str:
    """A diff header's name as git (``core.quotePath``, its default) and patch read it:
    C-quoted where it holds more than printable ASCII, so that it is the name's own bytes
    in any encoding the diff is written in; followed by a tab where it holds a space, so
    that patch reads the whole name (where the header's date would go).

    Examples:
        >>> _diff_name("a/", "notes.txt"), _diff_name("b/", "café.txt")
        ('a/notes.txt', '"b/caf\\\\303\\\\251.txt"')
        >>> _diff_name("a/", "my notes.txt")
        'a/my notes.txt\\t'
    """
    name = prefix + ("<stdin>" if path == STDIN else _without_dots(path))
    tab = "\t" if " " in name else ""
    if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name:
        return name + tab
    quoted = []
    for byte in os.fsencode(name):
        char = chr(byte)
        if char in '"\\':
            quoted.append("\\" + char)
        elif 32 <= byte < 127:  # noqa: PLR2004 - printable ASCII
            quoted.append(char)
        else:
            quoted.append({10: "\\n", 9: "\\t", 13: "\\r"}.get(byte, f"\\{byte:03o}"))
    return '"' + "".join(quoted) + '"' + tab


def process(  # noqa: PLR0913 - the task, then what to tell of it and where
    job: Job,
    task: Task,
    stop: Any,
    advance: Callable[[int], None] | None = None,
    *,
    parallel: bool = False,
    committed: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """Do *task* in the job's mode; a problem with the file is its outcome's error.

    *stop* (an Event or None) is checked between chunks; *advance* is told each chunk's
    size; *parallel* writes stdout output to a file in the job's spool; *committed* is
    given the outcome of a rewrite as soon as it is renamed over the file, before a
    signal that came meanwhile stops the run (so that the file is counted done)."""
    if task.error is not None:
        return Outcome(task.path, error=f"{shown(task.path)}: {task.error}; not searched")
    source = _Reader(advance, stop)
    try:
        return _in_mode(job, task.path, source, parallel=parallel, committed=committed)
    except Stopped:
        return Outcome(task.path, skipped=True)
    except FileRefusedError as exc:
        if not task.explicit and exc.kind == "binary":
            return Outcome(task.path, skipped=True)
        hint = " (another encoding? give --encoding)" if exc.kind == "undecodable" else ""
        left = "; left unchanged" if job.mode == "in-place" else ""
        return Outcome(task.path, error=f"{shown(task.path)}: {exc.reason}{hint}{left}")
    except FileChangedError:
        message = "changed by another process during the rewrite; left as it is"
        return Outcome(task.path, error=f"{shown(task.path)}: {message}")
    except (StdoutError, BrokenPipeError):  # ours to write, not the file's to read
        raise
    except OSError as exc:
        where = os.fsdecode(exc.filename) if exc.filename is not None else task.path
        return Outcome(task.path, error=f"{shown(where)}: {exc.strerror or exc}")


def _in_mode(
    job: Job,
    path: str,
    source: _Reader,
    *,
    parallel: bool,
    committed: Callable[[Outcome], None] | None,
) -> Outcome:
    if path == STDIN:
        return _stdin(job, source)
    if job.mode == "dry-run":
        return Outcome(path, _count(job, path, source))
    if job.mode == "in-place":
        return Outcome(path, _rewrite(job, path, source, committed))
    if job.mode == "diff":
        return _diff(job, path)
    return _to_stdout(job, path, source, parallel=parallel)


class _Reader:
    """A binary reader over a file that reports progress and stops when asked."""

    def __init__(self, advance: Callable[[int], None] | None, stop: Any) -> None:
        self._advance = advance
        self._stop = stop
        self._read: Callable[[int], bytes] | None = None
        self._file = False

    def over(self, source: IO[bytes], *, streamed: bool = False) -> _Reader:
        """Read *source*; *streamed* (a pipe, stdin): what has arrived, as soon as it
        has, not a whole chunk (`tail -f log | devutils replace ...`)."""
        self._read = getattr(source, "read1", source.read) if streamed else source.read
        self._file = not streamed and source.seekable()
        return self

    def seekable(self) -> bool:
        """Whether the source is a file (which `devutils.textfiles` may read to its end
        to tell a binary file from an undecodable one), not a stream."""
        return self._file

    def read(self, size: int = -1, /) -> bytes:
        if self._stop is not None and self._stop.is_set():
            raise Stopped
        assert self._read is not None
        data = self._read(size)
        if self._advance is not None and data:
            self._advance(len(data))
        return data


def _count(job: Job, path: str, source: _Reader) -> int:
    """What rewriting *path* would count, changing nothing: the result is encoded as a
    rewrite encodes it, so that what the rewrite refuses is refused here too."""
    with open_regular(path) as handle:
        return replace_encoded(
            job.replacer,
            source.over(handle),
            _Discard(),
            name=path,
            encoding=job.encoding,
            chunk_size=job.chunk_size,
        ).count


def _rewrite(
    job: Job, path: str, source: _Reader, committed: Callable[[Outcome], None] | None
) -> int:
    """Rewrite *path* atomically (its directory is fsynced once, at the end of the run)."""
    with AtomicRewrite(path, backup_suffix=job.suffix, sync_directory=False) as rewrite:
        state = replace_encoded(
            job.replacer,
            source.over(rewrite.source),
            rewrite.target,
            name=path,
            encoding=job.encoding,
            chunk_size=job.chunk_size,
        )
        if state.changed:
            with held():  # (one that came meanwhile stops the run once it is told)
                rewrite.commit()
                if committed is not None:
                    committed(Outcome(path, state.count))
    return state.count


def _stdin(job: Job, source: _Reader) -> Outcome:
    stdin = sys.stdin.buffer
    if job.mode == "diff":
        data = stdin.read(DIFF_LIMIT + 1)
        if len(data) > DIFF_LIMIT:
            raise FileRefusedError(STDIN, _too_large(), "too-large")
        diff, count = _unified(job, data, STDIN)
        return Outcome(STDIN, count, diff=diff)
    state = replace_encoded(
        job.replacer,
        source.over(stdin, streamed=True),
        _Discard() if job.mode == "dry-run" else _StdoutSink(),
        name="<stdin>",
        encoding=job.encoding,
        chunk_size=job.chunk_size,
    )
    return Outcome(STDIN, state.count)


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
    """What `replace_encoded` writes to, for stdout: every write whole, or `StdoutError`."""

    def write(self, data: bytes | memoryview, /) -> int:
        write_stdout(bytes(data))
        return len(data)


class _Discard:
    """What `replace_encoded` writes to for ``--dry-run``: the result, encoded (a result
    that cannot be is refused, as the real run refuses it), is dropped."""

    def write(self, data: bytes | memoryview, /) -> int:
        return len(data)


def _to_stdout(job: Job, path: str, source: _Reader, *, parallel: bool) -> Outcome:
    """Replace into a temporary file first, so a refused file writes nothing to stdout."""
    target: IO[bytes]
    name = ""
    if parallel:
        descriptor, name = tempfile.mkstemp(dir=job.spool, prefix="output-")
        target = os.fdopen(descriptor, "wb")
    else:
        target = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - closed below
    # The temporary directory (with --jobs, the run's folder is in it, removed at its end).
    folder = os.path.dirname(os.path.dirname(name)) if parallel else tempfile.gettempdir()
    held = _Held(target, folder)
    try:
        with open_regular(path) as handle:
            state = replace_encoded(
                job.replacer,
                source.over(handle),
                held,
                name=path,
                encoding=job.encoding,
                chunk_size=job.chunk_size,
            )
        if parallel:
            held.close()
            return Outcome(path, state.count, output=name)
        target.seek(0)
        while data := target.read(DEFAULT_CHUNK_BYTES):
            write_stdout(data)
        return Outcome(path, state.count)
    except BaseException:
        if parallel:
            with contextlib.suppress(OSError):
                target.close()
            os.unlink(name)
        raise
    finally:
        with contextlib.suppress(OSError):  # (a failed write is reported already)
            target.close()


class _Held:
    """The temporary file where a file's output waits for stdout; a write or flush it
    refuses (a full temporary directory) names that directory, not the file read."""

    def __init__(self, target: IO[bytes], folder: str) -> None:
        self._target = target
        self._folder = folder

    def write(self, data: bytes | memoryview, /) -> int:
        with self._naming():
            return self._target.write(data)

    def close(self) -> None:
        with self._naming():
            self._target.close()

    @contextlib.contextmanager
    def _naming(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            reason = f"cannot hold the output in {shown(self._folder)}: {exc.strerror or exc}"
            raise OSError(exc.errno, reason) from exc


def _too_large() -> str:
    return (
        f"too large for --diff (over {DIFF_LIMIT >> 20} MiB, which both texts would hold in "
        f"memory): use --in-place=.bak, then diff the backup"
    )


def _diff(job: Job, path: str) -> Outcome:
    with open_regular(path) as handle:
        data = handle.read(DIFF_LIMIT + 1)
    if len(data) > DIFF_LIMIT:
        try:  # a binary file is refused as one (which a walk skips), not as too large
            start = io.BytesIO(data[:DEFAULT_CHUNK_BYTES])
            replace_encoded(job.replacer, start, None, name=path, encoding=job.encoding)
        except FileRefusedError as exc:
            if exc.kind == "binary":
                raise
        raise FileRefusedError(path, _too_large(), "too-large")
    diff, count = _unified(job, data, path)
    return Outcome(path, count, diff=diff)


def _lines(text: str) -> list[str]:
    """*text*'s lines as diff and patch see them: each ends at ``\\n``, and only there."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _unified(job: Job, data: bytes, path: str) -> tuple[str, int]:
    """The unified diff of what the replacements would make of *data*, and their count.

    The result is made as ``--in-place`` makes it, so a file that it refuses (bytes that
    do not decode or would not be written back as they were, a result that cannot be
    encoded) is refused here too; then the diff's text encodes in the file's encoding."""
    result = io.BytesIO()
    name = "<stdin>" if path == STDIN else path
    state = replace_encoded(
        job.replacer, io.BytesIO(data), result, name=name, encoding=job.encoding
    )
    before, after = data.decode(job.encoding), result.getvalue().decode(job.encoding)
    count = state.count
    lines = difflib.unified_diff(
        _lines(before),
        _lines(after),
        fromfile=_diff_name("a/", path),
        tofile=_diff_name("b/", path),
    )
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return diff, count
