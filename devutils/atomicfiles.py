"""Rewrite a file atomically: wholly old or wholly new at every moment, nothing lost.

`AtomicRewrite` opens a file (a regular one: `open_regular` refuses FIFOs and devices
unread), locks it with an advisory ``flock`` so that two rewrites take turns, and gives
the caller a temporary file next to it (named ``.NAME.XXXXXXXX.devutils-tmp``). `commit`
gives that file the original's owner (where allowed), extended attributes (POSIX ACLs
among them) and mode (setuid, setgid and sticky bits included), fsyncs it, keeps a
backup if asked, and renames it over the original, unless another program changed the
original meanwhile (`FileChangedError`: its change is kept). Any transformation of the
bytes can be done inside; `devutils.textfiles` does text replacement so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Final, NamedTuple

from devutils.messages import describe
from devutils.signals import held

if sys.platform != "win32":
    import fcntl

__all__ = [
    "TEMPORARY_SUFFIX",
    "AtomicRewrite",
    "FileChangedError",
    "FileRefusedError",
    "fsync_directory",
    "open_regular",
]

TEMPORARY_SUFFIX: Final = ".devutils-tmp"
"""How every temporary file ends: ``.NAME.XXXXXXXX.devutils-tmp`` next to ``NAME`` (NAME
shortened where the whole would be longer than a file name may be)."""

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
    """Another process changed the file while it was being rewritten; its change was kept.

    ``path`` is the file, as the rewrite was given it.

    Examples:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = path.write_text("old")
        >>> with AtomicRewrite(path) as rewrite:
        ...     _ = path.write_text("their edit")  # another program, meanwhile
        ...     try:
        ...         rewrite.commit()
        ...     except FileChangedError as error:
        ...         print(error.path == str(path), path.read_text())
        True their edit
    """

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: changed by another process during the rewrite; left as it is")
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[FileChangedError], tuple[str]]:
        return type(self), (self.path,)


def _check_path(argument: str, value: object) -> str:
    """*value*, a str or an ``os.PathLike`` of one, as a str; a TypeError or ValueError
    naming *argument* for anything else, an empty path, one holding a NUL or one the
    file system's encoding cannot hold."""
    path = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if not isinstance(path, str):
        msg = f"{argument} must be a str or os.PathLike of one, got {describe(value)}"
        raise TypeError(msg)
    if not path:
        msg = f"{argument} must not be empty"
        raise ValueError(msg)
    if "\x00" in path:
        msg = f"{argument} must not hold a NUL character, got {path!r}"
        raise ValueError(msg)
    try:
        os.fsencode(path)
    except UnicodeEncodeError:  # (a lone surrogate that surrogateescape did not make)
        msg = f"{argument} must be a name the file system can hold, got {path!r}"
        raise ValueError(msg) from None
    return path


def open_regular(path: str, *, name: str | None = None) -> IO[bytes]:
    """Open *path* for reading in binary if it is a regular file (a symlink is followed).

    The file is opened without blocking, so that a FIFO is refused rather than waited on
    for a writer, and a device (``/dev/zero``) is refused before anything is read from
    it; the file returned blocks as files do.

    Raises:
        TypeError: If *path* is not a str or ``os.PathLike``.
        ValueError: If *path* is empty, holds a NUL character, or cannot be encoded
            for the file system.
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
        devutils.atomicfiles.FileRefusedError: /dev/zero: is not a regular file
    """
    path = _check_path("path", path)
    with held():  # (a Ctrl-C in fdopen closed the descriptor, then again here)
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
        except BaseException:
            os.close(descriptor)
            raise
        return os.fdopen(descriptor, "rb")  # (which closes the descriptor if it fails)


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
    `FileChangedError` and leaves the original as it is. Where commit fails after the
    backup is made, the backup is put back as it was (the earlier one, or none). An
    OSError from `commit` names the file (or the backup, where that is the problem),
    never the temporary file.
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
        backup_suffix: If given, keep the original as ``real_path + backup_suffix`` (a
            suffix with a ``/`` or a NUL, which would name no file beside it, is a
            ValueError before anything is read); ``""`` keeps none, as None does (as
            ``sed -i ''`` does).
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
        name = _check_path("path", path)
        suffix: object = backup_suffix
        if suffix is not None and not isinstance(suffix, str):
            msg = f"backup_suffix must be a str or None, got {suffix!r}"
            raise TypeError(msg)
        if suffix is not None and ("\x00" in suffix or os.sep in suffix):
            beside = f"a file beside the original (no {os.sep!r}, no NUL)"
            msg = f"backup_suffix must name {beside}, got {suffix!r}"
            raise ValueError(msg)
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
            with held():  # (made and known, then opened; removed below on an error)
                try:
                    descriptor, self.temporary = tempfile.mkstemp(
                        dir=self.directory, prefix=prefix, suffix=TEMPORARY_SUFFIX
                    )
                except OSError as exc:
                    msg = f"cannot create a temporary file in {self.directory}: {exc.strerror}"
                    raise OSError(exc.errno, msg) from exc
                self.target = os.fdopen(descriptor, "wb")
        except BaseException:  # (a signal held above arrives at the block's end, here)
            self.source.close()
            if self.temporary is not None:
                if hasattr(self, "target"):
                    self.target.close()
                with contextlib.suppress(OSError):
                    os.unlink(self.temporary)
                self.temporary = None
            raise
        return self

    def _open_locked(self) -> IO[bytes]:
        """Open the file and lock it. A rewrite that held the lock meanwhile renamed a new
        file over the name: then open and lock that one, as often as that happens."""
        if self.name.endswith(os.sep):  # realpath drops the slash: the name's own error
            os.stat(self.name)  # (a file: NotADirectoryError; then a folder is refused)
        if not os.path.lexists(self.real) and os.path.exists(self.name):
            # a link to what has no name (/dev/stdin on a pipe: /proc/PID/fd/pipe:[N]):
            # the name's own error (not a regular file), not the link's (no such file)
            open_regular(self.name, name=self.name).close()
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

        Examples:
            >>> import pathlib, tempfile
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
            >>> _ = path.write_bytes(b"old")
            >>> with AtomicRewrite(path) as rewrite:
            ...     _ = rewrite.target.write(b"new")
            ...     rewrite.commit()
            >>> path.read_bytes()
            b'new'
        """
        if self.temporary is None:
            msg = "commit() needs the rewrite open: inside its with block, once"
            raise ValueError(msg)
        with _naming(self.name):
            self.target.flush()
            self._copy_metadata(self.target.fileno())
            os.fsync(self.target.fileno())
            self.target.close()
        if _sticky_keeps(self.directory, self._owner[0]):  # said before any backup is made
            with _naming(self.name):
                raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        # A signal's exception (Ctrl-C) waits until the rename is done and known: one
        # just after it would have removed the backup (the original's only name left)
        # as a failed step's, or left the new file taken for the temporary one.
        with held():
            self._check_unchanged()  # the backup is to hold what was read
            if self.backup is None:
                with _naming(self.name):
                    os.replace(self.temporary, self.real)
            else:
                with _BackupInPlace(self.backup):  # (which a failure below puts back)
                    with _naming(self._named(self.backup)):
                        _backup(self.real, self.backup)
                    # The backup's hard link set the file's ctime, and only that: expect
                    # the new one (a file changed meanwhile: the backup may be that file).
                    ctime_ns = os.fstat(self.source.fileno()).st_ctime_ns
                    self._identity = self._identity._replace(ctime_ns=ctime_ns)
                    self._check_unchanged()
                    with _naming(self.name):
                        os.replace(self.temporary, self.real)
            self.temporary = None
        if self.sync_directory:
            fsync_directory(self.directory)

    def _named(self, backup: str) -> str:
        """*backup* as messages name it: beside the name given (``notes.txt.bak``), where
        that is the file itself, not a symlink to it (then its real path)."""
        if os.path.abspath(self.name) == self.real:
            return self.name + backup[len(self.real) :]
        return backup

    def _copy_metadata(self, target: int) -> None:
        """Give *target* the original's owner, extended attributes and mode, in that order:
        a chown clears the setuid and setgid bits, and setting an ACL sets the group bits
        (the mode, set last, sets the ACL's mask back to the original's)."""
        try:
            os.fchown(target, *self._owner)
        except OSError:  # only root may give a file away, but a member may keep its group
            with contextlib.suppress(OSError):
                os.fchown(target, -1, self._owner[1])
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
            # (closing flushes what is buffered, which fails again on a full disk: the
            # temporary file goes all the same)
            with contextlib.suppress(OSError):
                self.target.close()
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None


class _BackupInPlace:
    """A ``with`` block that replaces the backup *path*: where it fails, *path* is as it
    was before (the earlier backup, kept under a temporary name until then, or none), as
    ``sed -i.bak`` leaves it when it cannot rename the file (an immutable file, a file
    mounted over). An earlier backup that cannot be linked (a folder, or another user's
    in a sticky folder) is left to the block."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.kept: str | None = None
        self.existed = os.path.lexists(path)
        directory = os.path.dirname(path)
        with contextlib.suppress(OSError):
            if self.existed and not _sticky_keeps(directory, os.lstat(path).st_uid):
                kept = _free_name(path)
                os.link(path, kept, follow_symlinks=False)
                self.kept = kept

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.kept is not None:
            if kind is not None:
                with contextlib.suppress(OSError):
                    os.replace(self.kept, self.path)
            with contextlib.suppress(OSError):  # (gone, but where both named one file)
                os.unlink(self.kept)
        elif kind is not None and not self.existed:
            with contextlib.suppress(OSError):
                os.unlink(self.path)


def _backup(original: str, backup: str) -> None:
    """Make *backup* hold the original bytes, atomically (a hard link where possible)."""
    directory = os.path.dirname(backup) or "."
    temporary = _free_name(backup)
    try:
        try:
            # (a link is the original's: another user's, where a sticky bit keeps this
            # user from renaming or removing it again, so there a copy of this user's)
            if _sticky_keeps(directory, os.stat(original).st_uid):
                raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
            os.link(original, temporary)
        except OSError:
            shutil.copy2(original, temporary)
        os.replace(temporary, backup)
    finally:
        # Gone after the rename, unless *backup* already was a hard link of the original:
        # a rename between two names of one file does nothing and leaves both names.
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _free_name(path: str) -> str:
    """A temporary name beside *path* that no file has (made, then removed), for a link."""
    with held():  # (removed, whatever arrives meanwhile)
        descriptor, name = tempfile.mkstemp(
            dir=os.path.dirname(path) or ".",
            prefix=_temporary_prefix(os.path.basename(path)),
            suffix=TEMPORARY_SUFFIX,
        )
        os.close(descriptor)
        os.unlink(name)
    return name


def _sticky_keeps(directory: str, owner: int) -> bool:
    """Whether the sticky bit of *directory* keeps this user from renaming or removing a
    file of *owner*'s there, as the kernel refuses it (EPERM): another user's file in a
    folder of mode 1777, such as /tmp, that is not this user's either."""
    try:
        folder = os.stat(directory or ".")
    except OSError:
        return False
    user = os.geteuid()
    return bool(folder.st_mode & stat.S_ISVTX) and user not in (0, owner, folder.st_uid)


def fsync_directory(directory: str) -> None:
    """Make renames in *directory* durable (best effort: not every file system can, so
    an error is ignored).

    Raises:
        TypeError: If *directory* is not a str or ``os.PathLike``.
        ValueError: If *directory* is empty, holds a NUL character, or cannot be
            encoded for the file system.

    Examples:
        >>> fsync_directory(".")  # after os.replace() of a file in the current directory
    """
    directory = _check_path("directory", directory)
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
