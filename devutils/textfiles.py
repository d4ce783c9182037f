"""Rewrite text files with a `devutils.text.Replacer`: streamed, strictly decoded, atomic.

`replace_file` rewrites one file so that at every moment it is wholly old or wholly new:
the new text is streamed into a temporary file in the same directory (named
``.NAME.XXXXXXXX.devutils-tmp``), given the original's owner (where allowed), extended
attributes (POSIX ACLs among them) and mode (setuid, setgid and sticky bits included),
fsynced, and renamed over the original. Two rewrites of one file take turns (an advisory
``flock`` on the original), so both changes are kept; a file that another program changed
while it was being rewritten is left as that program left it (except for a write in the
moment before the rename, or through a descriptor held open: see `AtomicRewrite`, and
take the ``flock`` to be safe from both). `AtomicRewrite` is that
mechanism for any transformation; `replace_encoded` streams bytes through a Replacer
(decoding, replacing, encoding), and `open_regular` opens a file for it.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Final, NamedTuple, Protocol

from devutils.text import Replacer
from devutils.textstream import MAX_CHUNK, StreamReplacer, check_chunk_size

if sys.platform != "win32":
    import fcntl

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "MAX_CHUNK",
    "TEMPORARY_SUFFIX",
    "TRANSFORMS",
    "AtomicRewrite",
    "FileChangedError",
    "FileRefusedError",
    "fsync_directory",
    "open_regular",
    "replace_encoded",
    "replace_file",
    "write_all",
]

DEFAULT_CHUNK_BYTES: Final = 1 << 20
"""The bytes `replace_encoded` and `replace_file` read at a time unless told otherwise
(`devutils.textstream.DEFAULT_CHUNK` counts characters, for text streams)."""

TEMPORARY_SUFFIX: Final = ".devutils-tmp"
"""How every temporary file ends: ``.NAME.XXXXXXXX.devutils-tmp`` next to ``NAME`` (NAME
shortened where the whole would be longer than a file name may be)."""

TRANSFORMS: Final = frozenset(
    {"idna", "punycode", "raw-unicode-escape", "undefined", "unicode-escape", "utf-7"}
)
"""Codecs (by `codecs.lookup` name) that decode bytes to text but are no text file's
encoding: written back, they would change the bytes around every match. `replace_encoded`
refuses them with a LookupError, as it does bytes-to-bytes codecs (``base64``)."""

_NAME_MAX: Final = 255
"""The longest file name, in bytes, that the common file systems allow."""
_RANDOM_LENGTH: Final = 8
"""The characters `tempfile.mkstemp` puts between a prefix and a suffix."""
_OPEN_ATTEMPTS: Final = 100
"""How often `AtomicRewrite` reopens a file that other rewrites replaced while it waited
for the lock, before it gives up with `FileChangedError`."""
_ACL: Final = "system.posix_acl_access"


class FileRefusedError(ValueError):
    """A file was left untouched because it is binary, does not decode, or cannot be encoded.

    ``path`` is the file, ``reason`` the words after its name, and ``kind`` says which
    refusal it is, for a caller that treats them differently: ``"binary"`` (a NUL
    character), ``"undecodable"`` (not valid in the encoding), ``"respelled"`` (its bytes
    would not be written back as they were), ``"unencodable"`` (the result cannot be
    encoded), ``"not-regular"`` (a FIFO, a device) or ``"too-large"``.

    Examples:
        >>> error = FileRefusedError("a.bin", "looks binary (it has a NUL byte)", "binary")
        >>> str(error), error.kind
        ('a.bin: looks binary (it has a NUL byte)', 'binary')
    """

    def __init__(self, path: str, reason: str, kind: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.kind = kind

    def __reduce__(self) -> tuple[type[FileRefusedError], tuple[str, str, str]]:
        return type(self), (self.path, self.reason, self.kind)  # (across processes too)


class FileChangedError(OSError):
    """Another process changed the file while it was being rewritten; its change was kept."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: changed by another process during the rewrite; left as it is")
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[FileChangedError], tuple[str]]:
        return type(self), (self.path,)


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class _Writer(Protocol):
    def write(self, data: bytes | memoryview, /) -> int | None: ...


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


def replace_encoded(  # noqa: PLR0913 - the streams, then keyword-only settings
    replacer: Replacer,
    source: _Reader,
    target: _Writer | None,
    *,
    name: str,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK_BYTES,
) -> StreamReplacer:
    """Replace in the text that *source*'s bytes encode, writing it encoded to *target*.

    The bytes are streamed: each chunk is decoded strictly, replaced, encoded and written
    (*target* None: only counted). Returns the finished `StreamReplacer` (its ``count``
    and ``changed``).

    Raises:
        TypeError: If *replacer* is not a `Replacer`, *source* has no ``read`` or gives
            anything but bytes, or *name* is not a str.
        FileRefusedError: For a NUL character, bytes that do not decode, bytes that
            would not be written back as they were (see `_ReadBack`), or output that
            cannot be encoded (*name* names the file in the message).
        ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.
        LookupError: For an unknown *encoding*, a bytes-to-bytes codec (``base64``), or one
            in `TRANSFORMS`.

    Examples:
        >>> import io
        >>> out = io.BytesIO()
        >>> replace_encoded(Replacer({"colour": "color"}), io.BytesIO(b"colour\\r\\n"), out,
        ...                 name="notes.txt").count
        1
        >>> out.getvalue()
        b'color\\r\\n'
    """
    chunk_size = check_chunk_size(chunk_size)
    codec = codecs.lookup(encoding).name
    "".encode(codec)  # a LookupError for a bytes-to-bytes codec (base64, zlib, rot13)
    if codec in TRANSFORMS:
        msg = f"{encoding!r} is a transform, not a text encoding"
        raise LookupError(msg)
    given: object = name
    if not isinstance(given, str):
        msg = f"name must be a str, got {type(given).__name__} {given!r}"
        raise TypeError(msg)
    if not callable(getattr(source, "read", None)):
        msg = f"source must have a read() method, got {type(source).__name__}"
        raise TypeError(msg)
    decoder = _StrictDecoder(encoding, name)
    encoder = codecs.getincrementalencoder(encoding)(errors="strict")
    state = StreamReplacer(replacer)
    while True:
        raw: object = source.read(chunk_size)
        if not isinstance(raw, bytes | bytearray):
            msg = f"source must give bytes (open it in binary mode), got {type(raw).__name__}"
            raise TypeError(msg)
        final = not raw
        text = decoder.decode(bytes(raw), final=final)
        if "\x00" in text:
            raise FileRefusedError(name, "looks binary (it has a NUL byte)", "binary")
        out = state.finish() if final else state.feed(text)
        if target is not None and (out or final):
            try:
                data = encoder.encode(out, final=final)
            except UnicodeEncodeError as exc:
                reason = f"the result cannot be encoded in {encoding} ({exc.reason})"
                raise FileRefusedError(name, reason, "unencodable") from exc
            write_all(target, data)
        if final:
            return state


def open_regular(path: str, *, name: str | None = None) -> IO[bytes]:
    """Open *path* for reading in binary if it is a regular file (a symlink is followed).

    The file is opened without blocking, so that a FIFO is refused rather than waited on
    for a writer, and a device (``/dev/zero``) is refused before anything is read from
    it; the file returned blocks as files do.

    Raises:
        FileRefusedError: If *path* is not a regular file (kind ``"not-regular"``;
            *name*, default *path*, names it in the message).
        OSError: If *path* cannot be opened (its ``filename`` *name*, where given).

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = path.write_bytes(b"text")
        >>> with open_regular(str(path)) as source:
        ...     source.read()
        b'text'
        >>> open_regular("/dev/zero")
        Traceback (most recent call last):
        ...
        devutils.textfiles.FileRefusedError: /dev/zero: is not a regular file
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:  # named as the caller names the file (not its resolved path)
        if name is None or exc.filename is None:
            raise
        raise OSError(exc.errno, exc.strerror, name) from None
    try:  # (a directory opens too: refused before it is wrapped, which would fail)
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise FileRefusedError(name or path, "is not a regular file", "not-regular")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


class _ReadBack:
    """Checks that the text read encodes back to the bytes it came from, byte for byte:
    so it does in UTF-8 and the single-byte encodings, not always where several byte
    sequences decode to one text (``iso2022_jp``'s escapes, ``big5hkscs``) or the codec
    transforms (``unicode_escape``). Stateful encoders hold bytes back until later text,
    so the two sides are compared as they come, as far as both have gone."""

    def __init__(self, encoding: str) -> None:
        self._encoder = codecs.getincrementalencoder(encoding)(errors="strict")
        self._read = b""
        self._made = b""

    def same(self, text: str, data: bytes, *, final: bool) -> bool:
        """Whether *text*, decoded from *data*, still agrees with the bytes read so far."""
        try:
            self._made += self._encoder.encode(text, final=final)
        except UnicodeEncodeError:
            return False
        self._read += data
        common = min(len(self._read), len(self._made))
        if self._read[:common] != self._made[:common]:
            return False
        self._read, self._made = self._read[common:], self._made[common:]
        return not final or self._read == self._made == b""


class _StrictDecoder:
    """Decodes a stream strictly: bytes that do not decode, or that would not be written
    back as they were (`_ReadBack`), are a `FileRefusedError` naming the byte."""

    def __init__(self, encoding: str, name: str) -> None:
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
        self._read_back = _ReadBack(encoding)
        self._encoding = encoding
        self._name = name
        self._offset = 0  # of the first byte not yet given to the decoder

    def decode(self, raw: bytes, *, final: bool) -> str:
        pending = self._decoder.getstate()[0]
        start = self._offset - len(pending)  # of the first byte not yet decoded
        try:
            text = self._decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            reason = f"not valid {self._encoding} (byte {start + exc.start})"
            raise FileRefusedError(self._name, reason, "undecodable") from exc
        except UnicodeError as exc:  # utf-16 and utf-32 without a byte order mark
            reason = f"not valid {self._encoding} ({exc})"
            raise FileRefusedError(self._name, reason, "undecodable") from exc
        self._offset += len(raw)
        read = pending + raw
        decoded = read[: len(read) - len(self._decoder.getstate()[0])]
        if not self._read_back.same(text, decoded, final=final):
            reason = (
                f"its {self._encoding} does not read back byte for byte (near byte {start}):"
                f" a rewrite would change it outside the matches"
            )
            raise FileRefusedError(self._name, reason, "respelled")
        return text


class _Identity(NamedTuple):
    """What tells that a file changed: its name now gives another file, or its contents or
    metadata changed (a write sets the mtime and the ctime; chmod, chown and link the ctime)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


def _identity(info: os.stat_result) -> _Identity:
    return _Identity(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _temporary_prefix(name: str) -> str:
    """``.NAME.`` for `tempfile.mkstemp`, with NAME cut short (between two characters) where
    the whole temporary name, ``.NAME.XXXXXXXX.devutils-tmp``, would not fit in a file name."""
    room = _NAME_MAX - len(f"..{TEMPORARY_SUFFIX}") - _RANDOM_LENGTH
    while len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}."


@contextlib.contextmanager
def _naming(filename: str) -> Iterator[None]:
    """Re-raise an OSError of the block as one about *filename* (the file the user named,
    or its backup), never about an internal temporary file."""
    try:
        yield
    except FileChangedError:
        raise
    except OSError as exc:
        if exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, filename) from exc


def _lock(source: IO[bytes]) -> bool:
    """Wait for an exclusive advisory lock on *source* (released when it is closed); False
    where there is none to take (not POSIX, or a file system that refuses ``flock``)."""
    if sys.platform == "win32":
        return False
    try:
        fcntl.flock(source.fileno(), fcntl.LOCK_EX)
    except OSError:  # ENOLCK, EOPNOTSUPP; EBADF where NFS emulates it on a read-only file
        return False
    return True


def _still_named(path: str, info: os.stat_result) -> bool:
    """Whether *path* still names the file that *info* describes."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (info.st_dev, info.st_ino)


@contextlib.contextmanager
def _skip_refused() -> Iterator[None]:
    """Ignore an OSError saying that the file system or the user's privileges refuse an
    extended attribute (or that there is none); raise any other."""
    refused = {errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EACCES, errno.ENODATA}
    try:
        yield
    except OSError as exc:
        if exc.errno not in refused:
            raise


def _copy_xattrs(source: int, target: int) -> None:
    """Give the file open as *target* the extended attributes of the one open as *source*:
    ``user.*``, ``security.*``, ``trusted.*`` and the ACL (``system.posix_acl_access``),
    skipping what is refused. An ACL that *target* inherited from its directory's default
    ACL is removed when *source* has none."""
    if sys.platform != "linux":  # the only system where `os` has the xattr functions
        return
    names: list[str] = []
    with _skip_refused():
        names = os.listxattr(source)
    for name in names:
        with _skip_refused():
            os.setxattr(target, name, os.getxattr(source, name))
    if _ACL not in names:
        with _skip_refused():
            os.removexattr(target, _ACL)


class AtomicRewrite:
    """Rewrite a file atomically: read ``.source``, write ``.target``, then `commit`.

    On entry the file is opened (symlinks followed), checked to be a regular file, and
    locked with an advisory ``flock`` (where the system has one): another `AtomicRewrite`
    of the same file waits until this one is done, then reads the file as this one left
    it, so neither change is lost. The lock is per open file, so two rewrites of one file
    nested in one thread wait for each other forever: finish one first. A temporary file
    is created next to the file. `commit` gives it the original's owner (where allowed),
    extended attributes (the ACL among them) and mode (setuid, setgid and sticky bits
    included), fsyncs it, keeps a backup if asked, and renames it over the original; if
    the original changed since entry (size, mtime, ctime, inode), it raises
    `FileChangedError` and leaves the original as it is. An OSError from `commit` names
    the file (or the backup, where that is the problem), never the temporary file.
    Leaving the block without `commit`, by an exception or a signal turned into one,
    removes the temporary file. Only SIGKILL or a crash can leave one behind, named
    ``.NAME.XXXXXXXX.devutils-tmp`` (NAME shortened where the whole would be longer than
    a file name may be); the original is intact either way.

    The rename gives the name a new file: other hard links to the original keep its old
    contents, and the mtime and ctime are the rewrite's. A program that holds the file
    open writes on into the old file, and one that writes in the moment between the last
    check and the rename does too: those writes are not in the new file. A writer that
    takes the same ``flock`` and then opens the file, as ``flock FILE -c 'echo line >>
    FILE'`` does, waits for the rewrite instead, and writes to the new file.

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
    _identity: _Identity

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        backup_suffix: str | None = None,
        sync_directory: bool = True,
    ) -> None:
        given: object = path
        name = os.fspath(given) if isinstance(given, str | os.PathLike) else None
        if not isinstance(name, str):
            msg = f"path must be a str or os.PathLike of one, got {type(given).__name__} {given!r}"
            raise TypeError(msg)
        if not name:
            msg = "path must not be empty"
            raise ValueError(msg)
        suffix: object = backup_suffix
        if suffix is not None and not isinstance(suffix, str):
            msg = f"backup_suffix must be a str or None, got {suffix!r}"
            raise TypeError(msg)
        flag: object = sync_directory
        if not isinstance(flag, bool):
            msg = f"sync_directory must be a bool, got {type(flag).__name__} {flag!r}"
            raise TypeError(msg)
        self.name = name
        self.real = os.path.realpath(self.name)
        self.directory = os.path.dirname(self.real)
        self.backup_suffix = backup_suffix or None
        self.backup = self.real + backup_suffix if backup_suffix else None
        self.sync_directory = sync_directory
        self.temporary: str | None = None
        self._mode = 0
        self._owner = (-1, -1)

    def __enter__(self) -> AtomicRewrite:
        self.source = self._open_locked()
        try:
            info = os.fstat(self.source.fileno())
            self._identity = _identity(info)
            self._mode = stat.S_IMODE(info.st_mode)
            self._owner = (info.st_uid, info.st_gid)
            prefix = _temporary_prefix(os.path.basename(self.real))
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

    def _open_locked(self) -> IO[bytes]:
        """Open the file and lock it. A rewrite that held the lock meanwhile renamed a new
        file over the name: then open and lock that one, as often as that happens."""
        if self.name.endswith(os.sep):  # realpath drops the slash: the name's own error
            os.stat(self.name)  # (a file: NotADirectoryError; then a folder is refused)
        for _ in range(_OPEN_ATTEMPTS):
            source = open_regular(self.real, name=self.name)
            try:
                info = os.fstat(source.fileno())
                if not _lock(source) or _still_named(self.real, info):
                    return source  # (without a lock there is nothing to wait for)
            except BaseException:
                source.close()
                raise
            source.close()
        raise FileChangedError(self.name)

    def commit(self) -> None:
        """Make the temporary file the file (see the class).

        Raises:
            ValueError: Outside the ``with`` block, or after a commit.
        """
        if self.temporary is None:
            msg = "commit() needs the rewrite open: inside its with block, once"
            raise ValueError(msg)
        with _naming(self.name):
            self.target.flush()
            self._copy_metadata(self.target.fileno())
            os.fsync(self.target.fileno())
            self.target.close()
        if self.backup is not None:
            self._check_unchanged()  # the backup is to hold what was read
            with _naming(self.backup):
                _backup(self.real, self.backup)
            # The backup's hard link set the file's ctime, and only that: expect the new one.
            ctime_ns = os.fstat(self.source.fileno()).st_ctime_ns
            self._identity = self._identity._replace(ctime_ns=ctime_ns)
        self._check_unchanged()
        with _naming(self.name):
            os.replace(self.temporary, self.real)
        self.temporary = None
        if self.sync_directory:
            fsync_directory(self.directory)

    def _copy_metadata(self, target: int) -> None:
        """Give *target* the original's owner, extended attributes and mode, in that order:
        a chown clears the setuid and setgid bits, and setting an ACL sets the group bits
        (the mode, set last, sets the ACL's mask back to the original's)."""
        with contextlib.suppress(OSError):  # only root may give a file away
            os.fchown(target, *self._owner)
        _copy_xattrs(self.source.fileno(), target)
        os.fchmod(target, self._mode)

    def _check_unchanged(self) -> None:
        """Raise `FileChangedError` if the name gives another file, or the file changed."""
        try:
            current = os.stat(self.real)
        except FileNotFoundError:  # removed meanwhile: left removed
            raise FileChangedError(self.name) from None
        if _identity(current) != self._identity:
            raise FileChangedError(self.name)

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
    chunk_size: int = DEFAULT_CHUNK_BYTES,
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
        ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.
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
    chunk_size = check_chunk_size(chunk_size)
    given: object = replacer
    if not isinstance(given, Replacer):  # before the file is opened
        msg = f"replacer must be a Replacer, got {type(given).__name__} {given!r:.60}"
        raise TypeError(msg)
    codecs.lookup(encoding)  # LookupError for an unknown encoding, before anything else
    with AtomicRewrite(path, backup_suffix=backup_suffix) as rewrite:
        state = replace_encoded(
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
        dir=directory, prefix=_temporary_prefix(os.path.basename(backup)), suffix=TEMPORARY_SUFFIX
    )
    os.close(descriptor)
    try:
        os.unlink(temporary)
        try:
            os.link(original, temporary)
        except OSError:
            shutil.copy2(original, temporary)
        os.replace(temporary, backup)
    finally:
        # Gone after the rename, unless *backup* already was a hard link of the original:
        # a rename between two names of one file does nothing and leaves both names.
        with contextlib.suppress(OSError):
            os.unlink(temporary)


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
