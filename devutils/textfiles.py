"""Rewrite text files with a `devutils.text.Replacer`: streamed, strictly decoded, atomic.

`replace_file` rewrites one file so that at every moment it is wholly old or wholly new:
the new text is streamed into a temporary file in the same directory (named
``.NAME.XXXXXXXX.devutils-tmp``), flushed, fsynced, given the original's permission bits
(and owner, where allowed), and renamed over the original. A file that changed while it
was being rewritten is left as the other writer left it. `AtomicRewrite` is that
mechanism for any transformation; `transcode` streams bytes through a Replacer.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import stat
import tempfile
from types import TracebackType
from typing import IO, Final, Protocol

from devutils.text import DEFAULT_CHUNK, Replacer, StreamReplacer

__all__ = [
    "TEMPORARY_SUFFIX",
    "AtomicRewrite",
    "FileChangedError",
    "FileRefusedError",
    "fsync_directory",
    "replace_file",
    "transcode",
    "write_all",
]

TEMPORARY_SUFFIX: Final = ".devutils-tmp"
"""How every temporary file ends: ``.NAME.XXXXXXXX.devutils-tmp`` next to ``NAME``."""


class FileRefusedError(ValueError):
    """A file was left untouched because it is binary, does not decode, or cannot be encoded."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class FileChangedError(OSError):
    """Another process changed the file while it was being rewritten; its change was kept."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: changed by another process during the rewrite; left as it is")
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class _Writer(Protocol):
    def write(self, data: bytes | memoryview, /) -> int | None: ...


def _check_chunk_size(chunk_size: object) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        msg = f"chunk_size must be an int, got {type(chunk_size).__name__} {chunk_size!r}"
        raise TypeError(msg)
    if chunk_size < 1:
        msg = f"chunk_size must be positive, got {chunk_size}"
        raise ValueError(msg)
    return chunk_size


def _bytes_view(data: object) -> memoryview:
    if not isinstance(data, bytes | bytearray | memoryview):
        msg = f"data must be bytes, got {type(data).__name__}"
        raise TypeError(msg)
    return memoryview(data).cast("B")


def write_all(target: _Writer, data: bytes) -> None:
    """Write all of *data* to *target*: a short write is continued, and a write that
    makes no progress is an OSError (ENOSPC), never silently dropped bytes.

    Raises:
        TypeError: If *data* is not bytes-like.
        OSError: ENOSPC if *target* takes nothing (returns 0 or None) before the end.

    Examples:
        >>> import io
        >>> out = io.BytesIO()
        >>> write_all(out, b"all of it")
        >>> out.getvalue()
        b'all of it'
    """
    view = _bytes_view(data)
    while view:
        written = target.write(view)
        if not written or written < 0:
            raise OSError(28, os.strerror(28))  # ENOSPC: nothing more could be written
        view = view[written:]


def transcode(  # noqa: PLR0913 - the streams, then keyword-only settings
    replacer: Replacer,
    source: _Reader,
    target: _Writer | None,
    *,
    name: str,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK,
) -> StreamReplacer:
    """Stream bytes from *source* to *target* (None: only count), decoding and encoding
    strictly; return the finished `StreamReplacer` (its ``count`` and ``changed``).

    Raises:
        TypeError: If *replacer* is not a `Replacer` or *source* gives anything but bytes.
        FileRefusedError: For a NUL character, bytes that do not decode, or output that
            cannot be encoded (*name* names the file in the message).
        LookupError: For an unknown *encoding*.

    Examples:
        >>> import io
        >>> out = io.BytesIO()
        >>> transcode(Replacer({"colour": "color"}), io.BytesIO(b"colour\\r\\n"), out,
        ...           name="notes.txt").count
        1
        >>> out.getvalue()
        b'color\\r\\n'
    """
    chunk_size = _check_chunk_size(chunk_size)
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    encoder = codecs.getincrementalencoder(encoding)(errors="strict")
    state = StreamReplacer(replacer)
    offset = 0
    while True:
        raw: object = source.read(chunk_size)
        if not isinstance(raw, bytes | bytearray):
            msg = f"source must give bytes (open it in binary mode), got {type(raw).__name__}"
            raise TypeError(msg)
        final = not raw
        pending = decoder.getstate()[0]
        try:
            text = decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            reason = f"not valid {encoding} (byte {offset - len(pending) + exc.start})"
            raise FileRefusedError(name, reason) from exc
        if "\x00" in text:
            raise FileRefusedError(name, "looks binary (it has a NUL byte)")
        offset += len(raw)
        out = state.finish() if final else state.feed(text)
        if target is not None and (out or final):
            try:
                data = encoder.encode(out, final=final)
            except UnicodeEncodeError as exc:
                reason = f"the result cannot be encoded in {encoding} ({exc.reason})"
                raise FileRefusedError(name, reason) from exc
            write_all(target, data)
        if final:
            return state


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class AtomicRewrite:
    """Rewrite a file atomically: read ``.source``, write ``.target``, then `commit`.

    On entry the file is opened (symlinks followed), checked to be a regular file, and a
    temporary file is created next to it. `commit` flushes and fsyncs the temporary
    file, gives it the original's permission bits (and owner, where allowed), keeps a
    backup if asked, and renames it over the original; if the original changed since
    entry (size, mtime, ctime, inode), it raises `FileChangedError` and leaves the
    original as it is. Leaving the block without `commit`, by an exception or a signal
    turned into one, removes the temporary file. Only SIGKILL or a crash can leave one
    behind, named ``.NAME.XXXXXXXX.devutils-tmp``; the original is intact either way.

    Args:
        path: The file to rewrite.
        backup_suffix: If given, keep the original as ``real_path + backup_suffix``.
        sync_directory: Fsync the directory after the rename (pass False when
            rewriting many files of one directory, then call `fsync_directory` once).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "a.txt").write_bytes(b"old")
        3
        >>> with AtomicRewrite(folder / "a.txt") as rewrite:
        ...     _ = rewrite.target.write(rewrite.source.read().upper())
        ...     rewrite.commit()
        >>> (folder / "a.txt").read_bytes(), sorted(p.name for p in folder.iterdir())
        (b'OLD', ['a.txt'])
    """

    source: IO[bytes]
    target: IO[bytes]

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        backup_suffix: str | None = None,
        sync_directory: bool = True,
    ) -> None:
        given: object = path
        if not isinstance(given, str | os.PathLike):
            msg = f"path must be a str or os.PathLike, got {type(given).__name__} {given!r}"
            raise TypeError(msg)
        suffix: object = backup_suffix
        if suffix is not None and not isinstance(suffix, str):
            msg = f"backup_suffix must be a str or None, got {suffix!r}"
            raise TypeError(msg)
        self.name = os.fspath(path)
        self.real = os.path.realpath(self.name)
        self.directory = os.path.dirname(self.real)
        self.backup_suffix = backup_suffix or None
        self.sync_directory = sync_directory
        self.temporary: str | None = None
        self._identity: tuple[int, ...] = ()
        self._mode = 0
        self._owner = (-1, -1)

    def __enter__(self) -> AtomicRewrite:
        self.source = open(self.real, "rb")
        try:
            info = os.fstat(self.source.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise FileRefusedError(self.name, "is not a regular file")
            self._identity = _identity(info)
            self._mode = stat.S_IMODE(info.st_mode)
            self._owner = (info.st_uid, info.st_gid)
            prefix = f".{os.path.basename(self.real)}."
            try:
                descriptor, self.temporary = tempfile.mkstemp(
                    dir=self.directory, prefix=prefix, suffix=TEMPORARY_SUFFIX
                )
            except OSError as exc:
                msg = f"cannot create a temporary file in {self.directory}: {exc.strerror}"
                raise OSError(exc.errno, msg) from exc
            self.target = os.fdopen(descriptor, "wb")
        except BaseException:
            self.source.close()
            raise
        return self

    def commit(self) -> None:
        """Make the temporary file the file (see the class)."""
        assert self.temporary is not None
        self.target.flush()
        os.fsync(self.target.fileno())
        self.target.close()
        os.chmod(self.temporary, self._mode)
        with contextlib.suppress(OSError):
            os.chown(self.temporary, *self._owner)
        if _identity(os.stat(self.real)) != self._identity:
            raise FileChangedError(self.name)
        if self.backup_suffix:
            _backup(self.real, self.real + self.backup_suffix)
        os.replace(self.temporary, self.real)
        self.temporary = None
        if self.sync_directory:
            fsync_directory(self.directory)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.source.close()
        if self.temporary is not None:
            self.target.close()
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None


def replace_file(
    replacer: Replacer,
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    backup_suffix: str | None = None,
    chunk_size: int = DEFAULT_CHUNK,
) -> int:
    """Rewrite the file at *path* in place, atomically; return the number of replacements.

    See `AtomicRewrite` for the guarantees. A file with nothing to change is not
    rewritten (its mtime stays). A symlink is followed and its target rewritten. Line
    endings and every byte outside the matches are kept exactly.

    Args:
        replacer: The replacements.
        path: The file to rewrite.
        encoding: Its text encoding.
        backup_suffix: If given, keep the original as ``path + backup_suffix`` (next
            to the symlink's target when *path* is a symlink), like ``sed -i.bak``.
        chunk_size: Bytes read at a time.

    Raises:
        TypeError: If *replacer* is not a `Replacer` or *path* not a path.
        FileRefusedError: If the file is binary (has a NUL character), does not decode,
            or the result cannot be encoded; the file is untouched.
        FileChangedError: If another process changed the file meanwhile; its change stays.
        OSError: If the file cannot be read or written; the file is untouched.
        LookupError: For an unknown *encoding*.

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = path.write_text("The colour of the centre\\n", encoding="utf-8")
        >>> replace_file(Replacer({"colour": "color", "centre": "center"}), path)
        2
        >>> path.read_text(encoding="utf-8")
        'The color of the center\\n'
    """
    chunk_size = _check_chunk_size(chunk_size)
    given: object = replacer
    if not isinstance(given, Replacer):  # before the file is opened
        msg = f"replacer must be a Replacer, got {type(given).__name__} {given!r:.60}"
        raise TypeError(msg)
    codecs.lookup(encoding)  # LookupError for an unknown encoding, before anything else
    with AtomicRewrite(path, backup_suffix=backup_suffix) as rewrite:
        state = transcode(
            replacer,
            rewrite.source,
            rewrite.target,
            name=rewrite.name,
            encoding=encoding,
            chunk_size=chunk_size,
        )
        if state.changed:
            rewrite.commit()
    return state.count


def _backup(original: str, backup: str) -> None:
    """Make *backup* hold the original bytes, atomically (a hard link where possible)."""
    directory = os.path.dirname(backup) or "."
    descriptor, temporary = tempfile.mkstemp(
        dir=directory, prefix=f".{os.path.basename(backup)}.", suffix=TEMPORARY_SUFFIX
    )
    os.close(descriptor)
    try:
        os.unlink(temporary)
        try:
            os.link(original, temporary)
        except OSError:
            shutil.copy2(original, temporary)
        os.replace(temporary, backup)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def fsync_directory(directory: str) -> None:
    """Make renames in *directory* durable (best effort: not every file system can, so
    an error is ignored).

    Examples:
        >>> fsync_directory(".")  # after os.replace() of a file in the current directory
    """
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
