"""Tests for devutils.textfiles: atomic rewriting, strict decoding, streaming bytes."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shlex
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils import textstream
from devutils.text import Replacer
from devutils.textfiles import (
    LOSSY,
    MAX_CHUNK,
    TEMPORARY_SUFFIX,
    AtomicRewrite,
    FileChangedError,
    FileRefusedError,
    fsync_directory,
    open_regular,
    replace_encoded,
    replace_file,
    write_all,
)
from tests.text_reference import reference

if TYPE_CHECKING:
    from tests.conftest import Cli


@given(
    text=st.text("aé語🎉 \r\n", max_size=40),
    chunk_size=st.integers(1, 9),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-8-sig"]),
)
def test_multibyte_characters_split_across_reads(text: str, chunk_size: int, encoding: str) -> None:
    replacer = Replacer({"語": "go", "é": "e", "🎉": "!", "\r\n": "\r\n"})
    source = io.BytesIO(text.encode(encoding))
    target = io.BytesIO()
    replace_encoded(replacer, source, target, name="t", encoding=encoding, chunk_size=chunk_size)
    assert target.getvalue().decode(encoding) == replacer.replace(text)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_replace_file_keeps_crlf_and_returns_count(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"colour\r\ncolour centre\r\n")
    count = replace_file(Replacer({"colour": "color"}), path)
    assert count == 2
    assert path.read_bytes() == b"color\r\ncolor centre\r\n"


def test_latin1_round_trip(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", "café crème\n".encode("latin-1"))
    assert (
        cli(
            ["replace", "--encoding", "latin-1", "--in-place", "--pair", "crème", "lait", str(path)]
        ).status
        == 0
    )
    assert path.read_bytes() == "café lait\n".encode("latin-1")


def test_unencodable_result_is_refused(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"cafe\n")
    result = cli(
        ["replace", "--encoding", "latin-1", "--in-place", "--pair", "cafe", "喫茶", str(path)]
    )
    assert result.status == 1
    assert "cannot be encoded in latin-1" in result.err
    assert path.read_bytes() == b"cafe\n"


def test_unchanged_file_is_not_rewritten(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"nothing to see\n")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    inode = path.stat().st_ino
    assert cli(["replace", "--in-place", "--pair", "zzz", "y", str(path)]).status == 0
    assert path.stat().st_mtime == 1_000_000_000
    assert path.stat().st_ino == inode
    same = write(tmp_path / "b.txt", b"keep keep\n")
    os.utime(same, (1_000_000_000, 1_000_000_000))
    assert cli(["replace", "--in-place", "--pair", "keep", "keep", str(same)]).status == 0
    assert same.stat().st_mtime == 1_000_000_000


def test_permissions_are_kept(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "script.sh", b"echo old\n")
    path.chmod(0o751)
    assert cli(["replace", "--in-place", "--pair", "old", "new", str(path)]).status == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_bytes() == b"echo new\n"


def test_symlink_target_is_rewritten(tmp_path: Path, cli: Cli) -> None:
    target = write(tmp_path / "target.txt", b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert cli(["replace", "--in-place", "--pair", "old", "new", str(link)]).status == 0
    assert link.is_symlink()
    assert target.read_bytes() == b"new\n"


def test_backup_suffix(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"old\n")
    assert cli(["replace", "--in-place=.bak", "--pair", "old", "new", str(path)]).status == 0
    assert path.read_bytes() == b"new\n"
    assert (tmp_path / "a.txt.bak").read_bytes() == b"old\n"
    # A second run replaces the backup with the then-current content.
    assert cli(["replace", "--in-place=.bak", "--pair", "new", "newer", str(path)]).status == 0
    assert (tmp_path / "a.txt.bak").read_bytes() == b"new\n"


def test_replace_file_api_refuses_binary(tmp_path: Path) -> None:
    path = write(tmp_path / "a.bin", b"a\x00b")
    with pytest.raises(FileRefusedError, match="looks binary"):
        replace_file(Replacer({"a": "b"}), path)
    assert path.read_bytes() == b"a\x00b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]  # no temporary left


# -- write_all and fsync_directory ---------------------------------------------------------


class _ShortWriter:
    """Takes at most the next of *sizes* bytes a call (0: a full disk), as a pipe or a
    full file system does."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.data = bytearray()

    def write(self, data: bytes | memoryview, /) -> int:
        size = min(self.sizes.pop(0) if self.sizes else len(data), len(data))
        self.data += bytes(data[:size])
        return size


@given(st.binary(max_size=200), st.lists(st.integers(1, 50), max_size=20))
def test_write_all_continues_short_writes(data: bytes, sizes: list[int]) -> None:
    writer = _ShortWriter(sizes)
    write_all(writer, data)
    assert writer.data == data


@given(st.binary(min_size=1, max_size=200), st.lists(st.integers(1, 50), max_size=5))
def test_write_all_reports_a_full_disk(data: bytes, sizes: list[int]) -> None:
    writer = _ShortWriter([*sizes, 0])
    if sum(sizes) >= len(data):
        write_all(writer, data)
        assert writer.data == data
        return
    with pytest.raises(OSError, match="No space left on device") as caught:
        write_all(writer, data)
    assert caught.value.errno == errno.ENOSPC
    assert writer.data == data[: sum(sizes)]


def test_write_all_wants_bytes() -> None:
    with pytest.raises(TypeError, match="data must be bytes, got str"):
        write_all(io.BytesIO(), "text")  # type: ignore[arg-type]


class _WordyWriter:
    def write(self, data: bytes | memoryview, /) -> object:
        return "lots"


def test_write_all_wants_a_writer_that_counts() -> None:
    # "'<' not supported between instances of 'str' and 'int'"; None: an AttributeError
    with pytest.raises(TypeError, match=r"^target.write\(\) must return the bytes it wrote"):
        write_all(_WordyWriter(), b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^target must have a write\(\) method, got NoneType"):
        write_all(None, b"x")  # type: ignore[arg-type]


def test_fsync_directory_syncs_and_ignores_what_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    fsync_directory(str(tmp_path))
    assert len(synced) == 1
    fsync_directory(str(tmp_path / "missing"))  # best effort: no error
    assert len(synced) == 1


def test_the_replacer_and_the_source_are_checked_first(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(TypeError, match="replacer must be a Replacer, got dict"):
        replace_file({"a": "b"}, missing)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="source must give bytes \\(open it in binary mode\\)"):
        replace_encoded(Replacer({"a": "b"}), io.StringIO("a"), io.BytesIO(), name="x")  # type: ignore[arg-type]


# -- what --in-place keeps: concurrent rewrites, other writers, metadata, names ----------


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def no_temporary_left(folder: Path) -> None:
    assert [name for name in names_in(folder) if name.endswith(TEMPORARY_SUFFIX)] == []


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not seen in 60 s"
        time.sleep(0.001)


def lock_waiters(path: Path) -> int:
    """How many locks on *path*'s file are being waited for (the ``->`` lines of /proc/locks)."""
    info = path.stat()
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    lines = Path("/proc/locks").read_text().splitlines()
    return sum("->" in line.split() and line.split()[-3] == device for line in lines)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="watches the lock in /proc/locks")
def test_a_second_rewrite_waits_for_the_first_and_keeps_both_changes(tmp_path: Path) -> None:
    path = write(tmp_path / "f.txt", b"ab\n")
    with ThreadPoolExecutor(1) as pool:
        with AtomicRewrite(path, backup_suffix=".bak") as first:
            second = pool.submit(replace_file, Replacer({"b": "B"}), path, backup_suffix=".bak")
            wait_until(lambda: lock_waiters(path) == 1, "the second rewrite waiting for the lock")
            first.target.write(first.source.read().replace(b"a", b"A"))
            first.commit()
        assert second.result(timeout=60) == 1  # it read the first one's result
    assert path.read_bytes() == b"AB\n"
    assert (tmp_path / "f.txt.bak").read_bytes() == b"Ab\n"
    assert names_in(tmp_path) == ["f.txt", "f.txt.bak"]


def test_concurrent_runs_with_a_backup_keep_both_changes(tmp_path: Path) -> None:
    lines = 100_000
    command = [sys.executable, "-m", "devutils", "replace", "--in-place=.bak"]
    for attempt in range(30):
        folder = tmp_path / str(attempt)
        folder.mkdir()
        path = folder / "f.txt"
        path.write_text("ab\n" * lines, encoding="utf-8")
        runs = [
            subprocess.Popen(
                [*command, "--pair", old, new, str(path)], stderr=subprocess.PIPE, text=True
            )
            for old, new in (("a", "A"), ("b", "B"))
        ]
        errors = [run.communicate(timeout=120)[1] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], (attempt, errors)
        assert path.read_text(encoding="utf-8") == "AB\n" * lines, attempt
        # The backup is what the second run read: the first run's result.
        backup = (folder / "f.txt.bak").read_text(encoding="utf-8")
        assert backup in {"Ab\n" * lines, "aB\n" * lines}, attempt
        assert names_in(folder) == ["f.txt", "f.txt.bak"], attempt


def replace_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as other:  # the same file, truncated and written
        other.truncate()
        other.write(data)


def replace_by_rename(path: Path, data: bytes) -> None:
    saved = path.with_name("saved-by-an-editor")  # a new file renamed over the name
    saved.write_bytes(data)
    os.replace(saved, path)


@pytest.mark.parametrize("backup_suffix", [None, ".bak"])
@pytest.mark.parametrize("other_writer", [replace_in_place, replace_by_rename])
def test_another_writers_change_during_the_rewrite_is_kept_and_reported(
    tmp_path: Path, backup_suffix: str | None, other_writer: Callable[[Path, bytes], None]
) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    with AtomicRewrite(path, backup_suffix=backup_suffix) as rewrite:
        rewrite.target.write(rewrite.source.read().replace(b"old", b"new"))
        other_writer(path, b"another writer's text\n")
        with pytest.raises(FileChangedError, match="changed by another process during the"):
            rewrite.commit()
    assert path.read_bytes() == b"another writer's text\n"
    no_temporary_left(tmp_path)


def test_a_write_during_the_backup_is_kept_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    real_link = os.link

    def link_then_write(source: str, target: str) -> None:
        real_link(source, target)  # the backup's hard link, then another writer's append
        with open(path, "ab") as other:
            other.write(b"another writer's line\n")

    monkeypatch.setattr(os, "link", link_then_write)
    with pytest.raises(FileChangedError):
        replace_file(Replacer({"old": "new"}), path, backup_suffix=".bak")
    assert path.read_bytes() == b"old\nanother writer's line\n"
    no_temporary_left(tmp_path)


def test_a_backup_that_is_a_hard_link_of_the_file_is_replaced_without_leftovers(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    os.link(path, tmp_path / "f.txt.bak")  # a rename between two names of one file does nothing
    assert replace_file(Replacer({"old": "new"}), path, backup_suffix=".bak") == 1
    assert path.read_bytes() == b"new\n"
    assert (tmp_path / "f.txt.bak").read_bytes() == b"old\n"
    assert names_in(tmp_path) == ["f.txt", "f.txt.bak"]


@pytest.mark.parametrize("mode", [0o6755, 0o4755, 0o2755, 0o1644, 0o7777], ids=oct)
def test_setuid_setgid_and_sticky_bits_are_kept(tmp_path: Path, mode: int) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    path.chmod(mode)
    if stat.S_IMODE(path.stat().st_mode) != mode:
        pytest.skip(f"this system does not let the test set mode {mode:o}")
    assert replace_file(Replacer({"old": "new"}), path) == 1
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == b"new\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_owner_group_and_setuid_bits_are_kept_together(tmp_path: Path) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    os.chown(path, 65534, 65534)
    path.chmod(0o6755)  # after the chown, which clears setuid and setgid
    assert replace_file(Replacer({"old": "new"}), path) == 1
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o6755)


needs_xattrs = pytest.mark.skipif(
    not hasattr(os, "setxattr"), reason="os has the xattr functions on Linux only"
)


def set_xattr_or_skip(path: Path, name: str, value: bytes) -> None:
    try:
        os.setxattr(path, name, value)
    except OSError as exc:
        pytest.skip(f"this file system refuses {name}: {exc.strerror}")


# An ACL as Linux stores it in system.posix_acl_access: version 2, then (tag, permissions,
# id) entries sorted by tag. This one is `setfacl -m u:65534:rw-` on a file of mode 640:
# user::rw- user:65534:rw- group::r-- mask::rw- other::---, and the mode becomes 660.
UNDEFINED_ID = 0xFFFFFFFF
ACL_ENTRIES = [(0x01, 6, UNDEFINED_ID), (0x02, 6, 65534), (0x04, 4, UNDEFINED_ID)]
ACL_ENTRIES += [(0x10, 6, UNDEFINED_ID), (0x20, 0, UNDEFINED_ID)]
ACL = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in ACL_ENTRIES)


@needs_xattrs
def test_user_extended_attributes_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    set_xattr_or_skip(path, "user.origin", b"https://example.org/f.txt")
    set_xattr_or_skip(path, "user.empty", b"")
    assert replace_file(Replacer({"old": "new"}), path) == 1
    assert path.read_bytes() == b"new\n"
    assert os.getxattr(path, "user.origin") == b"https://example.org/f.txt"
    assert os.getxattr(path, "user.empty") == b""


@needs_xattrs
def test_an_acl_and_the_mode_are_kept_exactly(tmp_path: Path) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    path.chmod(0o640)
    set_xattr_or_skip(path, "system.posix_acl_access", ACL)
    acl, mode = os.getxattr(path, "system.posix_acl_access"), stat.S_IMODE(path.stat().st_mode)
    assert mode == 0o660  # the group bits show the ACL's mask; the group itself has r--
    assert replace_file(Replacer({"old": "new"}), path) == 1
    assert os.getxattr(path, "system.posix_acl_access") == acl
    assert stat.S_IMODE(path.stat().st_mode) == mode
    if getfacl := shutil.which("getfacl"):
        shown = subprocess.run(
            [getfacl, "-cpn", str(path)], capture_output=True, text=True, check=True
        )
        assert shown.stdout.split() == [
            "user::rw-",
            "user:65534:rw-",
            "group::r--",
            "mask::rw-",
            "other::---",
        ]


@needs_xattrs
def test_an_acl_inherited_by_the_temporary_file_is_not_added(tmp_path: Path) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    path.chmod(0o640)
    set_xattr_or_skip(tmp_path, "system.posix_acl_default", ACL)  # for files made later
    assert replace_file(Replacer({"old": "new"}), path) == 1
    with pytest.raises(OSError, match="No data available"):
        os.getxattr(path, "system.posix_acl_access")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@needs_xattrs
@pytest.mark.parametrize(
    "refusal", [errno.ENOTSUP, errno.EPERM, errno.EACCES], ids=errno.errorcode.get
)
def test_attributes_refused_are_skipped_and_other_errors_name_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int
) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    set_xattr_or_skip(path, "user.kept", b"1")
    set_xattr_or_skip(path, "user.refused", b"2")
    real_setxattr = os.setxattr
    failure = refusal  # as a file system without the namespace, or security.* for a user

    def setxattr(target: int, name: str, value: bytes) -> None:
        if name == "user.refused":
            raise OSError(failure, os.strerror(failure))
        real_setxattr(target, name, value)

    monkeypatch.setattr(os, "setxattr", setxattr)
    assert replace_file(Replacer({"old": "new"}), path) == 1
    assert [name for name in os.listxattr(path) if name.startswith("user.")] == ["user.kept"]
    real_setxattr(path, "user.refused", b"2")
    failure = errno.EIO  # not a refusal: the rewrite fails, naming the file
    with pytest.raises(OSError, match="Input/output error") as caught:
        replace_file(Replacer({"new": "newer"}), path)
    assert (caught.value.errno, caught.value.filename) == (errno.EIO, str(path))
    assert path.read_bytes() == b"new\n"
    no_temporary_left(tmp_path)


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[Path]:
    """A file with the immutable attribute (``chattr +i``), made mutable again after."""
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("needs chattr (e2fsprogs)")
    path = write(tmp_path / "f.txt", b"old\n")
    done = subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is refused here: {done.stderr.strip()}")
    yield path
    subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.parametrize("backup_suffix", [None, ".bak"])
def test_an_immutable_file_is_named_in_the_error(
    immutable: Path, backup_suffix: str | None, cli: Cli
) -> None:
    with pytest.raises(PermissionError) as caught:
        replace_file(Replacer({"old": "new"}), immutable, backup_suffix=backup_suffix)
    assert (caught.value.errno, caught.value.filename) == (errno.EPERM, str(immutable))
    assert immutable.read_bytes() == b"old\n"
    no_temporary_left(immutable.parent)
    result = cli(["replace", "--in-place", "--pair", "old", "new", str(immutable)])
    assert (result.status, result.err) == (
        1,
        f"devutils replace: {immutable}: Operation not permitted\n",
    )


def test_a_backup_path_that_is_a_directory_is_named_in_the_error(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "f.txt", b"old\n")
    (tmp_path / "f.txt.bak").mkdir()
    backup = os.path.realpath(path) + ".bak"
    with pytest.raises(IsADirectoryError) as caught:
        replace_file(Replacer({"old": "new"}), path, backup_suffix=".bak")
    assert (caught.value.errno, caught.value.filename) == (errno.EISDIR, backup)
    assert path.read_bytes() == b"old\n"
    assert names_in(tmp_path) == ["f.txt", "f.txt.bak"]
    assert names_in(tmp_path / "f.txt.bak") == []
    result = cli(["replace", "--in-place=.bak", "--pair", "old", "new", str(path)])
    assert (result.status, result.err) == (1, f"devutils replace: {backup}: Is a directory\n")
    # named beside the name given, as the file is (it was the absolute real path)
    monkeypatch.chdir(tmp_path)
    result = cli(["replace", "--in-place=.bak", "--pair", "old", "new", "f.txt"])
    assert (result.status, result.err) == (1, "devutils replace: f.txt.bak: Is a directory\n")


LONG_NAMES = {
    "ascii": "n" * 251 + ".txt",
    "two-byte": "a" + "é" * 125 + ".txt",
    "three-byte": "語" * 83 + "ab.txt",
    "four-byte": "abc" + "🎉" * 62 + ".txt",
    "not-utf-8": os.fsdecode(b"\xe9" * 251 + b".txt"),  # Latin-1 bytes, surrogateescaped
}


@pytest.mark.parametrize("name", LONG_NAMES.values(), ids=LONG_NAMES.keys())
def test_a_name_at_the_length_limit_is_rewritten(tmp_path: Path, name: str) -> None:
    assert len(os.fsencode(name)) == 255
    path = write(tmp_path / name, b"old\n")
    with AtomicRewrite(path) as rewrite:
        assert rewrite.temporary is not None
        temporary = os.path.basename(rewrite.temporary)
        rewrite.target.write(rewrite.source.read().replace(b"old", b"new"))
        rewrite.commit()
    assert path.read_bytes() == b"new\n"
    assert names_in(tmp_path) == [name]
    # .NAME.XXXXXXXX.devutils-tmp, NAME cut between two characters to fit in 255 bytes.
    assert len(os.fsencode(temporary)) <= 255
    assert temporary.startswith(".")
    assert temporary.endswith(TEMPORARY_SUFFIX)
    cut = temporary[1:].rsplit(".", 2)[0]
    assert name.startswith(cut)
    assert len(cut) < len(name)
    if "\udce9" not in name:
        os.fsencode(temporary).decode("utf-8")  # no character split (strict: raises if so)


def test_a_backup_name_beyond_the_length_limit_is_named_in_the_error(tmp_path: Path) -> None:
    path = write(tmp_path / LONG_NAMES["ascii"], b"old\n")
    with pytest.raises(OSError, match="File name too long") as caught:
        replace_file(Replacer({"old": "new"}), path, backup_suffix=".bak")
    assert caught.value.filename == os.path.realpath(path) + ".bak"
    assert path.read_bytes() == b"old\n"
    assert names_in(tmp_path) == [path.name]


def test_chunk_size_has_an_upper_bound(tmp_path: Path) -> None:
    assert MAX_CHUNK == textstream.MAX_CHUNK == 2**30
    out = io.BytesIO()
    replace_encoded(Replacer({"a": "b"}), io.BytesIO(b"a"), out, name="t", chunk_size=MAX_CHUNK)
    assert out.getvalue() == b"b"
    path = write(tmp_path / "a.txt", b"a\n")
    for size in (MAX_CHUNK + 1, 2**63 - 1, 2**73):
        message = f"chunk_size must be at most {2**30} \\(MAX_CHUNK\\), got {size}$"
        with pytest.raises(ValueError, match=message):
            replace_encoded(Replacer({"a": "b"}), io.BytesIO(b"a"), out, name="t", chunk_size=size)
        with pytest.raises(ValueError, match=message):
            replace_file(Replacer({"a": "b"}), path, chunk_size=size)
    assert path.read_bytes() == b"a\n"


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("big5hkscs", b"\xa1\xfe colour"),  # one of two byte pairs for one character
        ("johab", b"\x84[ colour"),
        ("iso2022_jp", b"\x1b$B\x1b(B colour"),  # an escape to JIS and straight back
        ("utf-16", "colour".encode("utf-16-be")),  # big-endian, would be written little
        ("utf-16", b"c\x00olour"),  # no byte order mark at all
    ],
)
def test_bytes_that_would_not_be_written_back_as_they_were_are_refused(
    encoding: str, data: bytes
) -> None:
    out = io.BytesIO()
    with pytest.raises(
        FileRefusedError, match=f"not valid {encoding}|{encoding} does not read back"
    ):
        replace_encoded(
            Replacer({"colour": "color"}), io.BytesIO(data), out, name="f.txt", encoding=encoding
        )


@pytest.mark.parametrize("data", [b"colour\n", b"\xef\xbb\xbfcolour\n", b"\xef\xbb\xbf"])
def test_utf8_sig_keeps_a_byte_order_mark_and_adds_none(tmp_path: Path, data: bytes) -> None:
    # A file without the mark was refused ("would gain a byte order mark"), where the
    # command, which reads utf-8-sig as utf-8, rewrote it.
    path = write(tmp_path / "a.txt", data)
    replace_file(Replacer({"colour": "color"}), path, encoding="utf-8-sig")
    assert path.read_bytes() == data.replace(b"colour", b"color")


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 1 << 20])
@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("iso2022_jp", "colour 日本 colour\nの colour"),
        ("utf-16", "colour ß colour"),
        ("shift_jis", "colour ストロベリー colour"),
        ("cp1252", "colour café colour"),
    ],
)
def test_a_stateful_or_multibyte_encoding_that_reads_back_is_rewritten_exactly(
    encoding: str, text: str, chunk_size: int
) -> None:
    out = io.BytesIO()
    data = text.encode(encoding)
    replace_encoded(
        Replacer({"colour": "color"}),
        io.BytesIO(data),
        out,
        name="f.txt",
        encoding=encoding,
        chunk_size=chunk_size,
    )
    assert out.getvalue() == text.replace("colour", "color").encode(encoding)


@pytest.mark.parametrize("encoding", ["idna", "unicode_escape", "utf-7", "punycode", "undefined"])
def test_a_transform_is_not_a_text_encoding(encoding: str) -> None:
    with pytest.raises(LookupError, match="is a transform, not a text encoding"):
        replace_encoded(
            Replacer({"a": "b"}), io.BytesIO(b"a.x\n"), io.BytesIO(), name="f", encoding=encoding
        )


def test_an_encoding_this_python_writes_wrongly_is_refused_or_written_faithfully() -> None:
    # CPython's hz encoder drops a "~" at some lengths: here the file is valid hz, and
    # "colour" -> "color" shifts what follows onto such a length.
    text = "colour\n" + "字a" * 9 + "~字\n"
    if "hz" in LOSSY:
        with pytest.raises(LookupError, match="loses bytes"):
            replace_encoded(
                Replacer({"colour": "color"}),
                io.BytesIO(text.encode("hz")),
                io.BytesIO(),
                name="f",
                encoding="HZ",
            )
    else:  # a Python whose codec is fixed: rewritten byte for byte around the match
        out = io.BytesIO()
        replace_encoded(
            Replacer({"colour": "color"}),
            io.BytesIO(text.encode("hz")),
            out,
            name="f",
            encoding="hz",
        )
        assert out.getvalue().decode("hz") == text.replace("colour", "color")
    for codec in LOSSY:  # each one listed shows its loss
        probe = "字a" * 30 + "~字"
        with contextlib.suppress(UnicodeError):
            assert probe.encode(codec).decode(codec) != probe


@pytest.mark.parametrize(
    ("data", "encoding", "kind"),
    [
        (b"a\x00b", "utf-8", "binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "utf-8", "binary"),  # (was undecodable)
        (b"\x00\xff", "shift_jis", "binary"),
        (b"caf\xe9", "utf-8", "undecodable"),
        ("\ufeffcolour".encode("utf-16-be"), "utf-16", "respelled"),
    ],
)
def test_a_refusal_says_its_kind(data: bytes, encoding: str, kind: str) -> None:
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(
            Replacer({"a": "b"}), io.BytesIO(data), io.BytesIO(), name="f", encoding=encoding
        )
    assert caught.value.kind == kind
    assert caught.value.path == "f"
    unencodable = Replacer({"a": "ß"})
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(unencodable, io.BytesIO(b"a"), io.BytesIO(), name="f", encoding="ascii")
    assert caught.value.kind == "unencodable"


@pytest.mark.parametrize("chunk_size", [1, 4, 1 << 20])
def test_a_nul_byte_past_bytes_that_do_not_decode_still_marks_a_binary_file(
    chunk_size: int,
) -> None:
    # The first chunk's 0xff was "not valid utf-8" before a later chunk's NUL was seen, so
    # ``devutils replace -r`` reported such a file as an error rather than skip it.
    data = b"\xff" + b"a" * (2 << 20) + b"\x00rest"
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(
            Replacer({"a": "b"}), io.BytesIO(data), None, name="f", chunk_size=chunk_size
        )
    assert caught.value.kind == "binary"
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(Replacer({"a": "b"}), io.BytesIO(data[:-5]), None, name="f")
    assert caught.value.kind == "undecodable"


class _EndlessPipe(io.RawIOBase):
    """A pipe that gives a line, then a byte that is not UTF-8 in every line, forever."""

    def __init__(self) -> None:
        self.reads = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        self.reads += 1
        return b"ok line\n" if self.reads == 1 else b"\xff bad\n"


@given(
    lines=st.lists(st.text(st.sampled_from("ab\u00e9 "), max_size=6), max_size=6),
    tail=st.text(st.sampled_from("ab"), max_size=3),
    chunk_size=st.integers(1, 64),
)
def test_a_refusal_midway_leaves_the_output_of_the_lines_before_it(
    lines: list[str], tail: str, chunk_size: int
) -> None:
    # Where one read held good lines and then a byte that is not UTF-8, none of them was
    # written: `printf 'x\\ny\\xff' | devutils replace --pair x z` printed nothing.
    replacer = Replacer({"a": "A", "\u00e9": "e"})
    text = "".join(line + "\n" for line in lines)
    out = io.BytesIO()
    data = (text + tail).encode() + b"\xff\n"
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(replacer, io.BytesIO(data), out, name="f", chunk_size=chunk_size)
    assert caught.value.kind == "undecodable"
    assert str(caught.value).endswith(f"(byte {len((text + tail).encode())})")
    # every whole line before it, and never more than the text before it gives
    assert out.getvalue().startswith(replacer.replace(text).encode())
    assert replacer.replace(text + tail).encode().startswith(out.getvalue())


def test_a_pipe_is_refused_at_the_byte_that_does_not_decode() -> None:
    # The look for a later NUL byte read the rest of the input: a pipe that never ends
    # (tail -f, yes) was read on forever, and never refused.
    pipe = _EndlessPipe()
    out = io.BytesIO()
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(Replacer({"ok": "OK"}), pipe, out, name="<stdin>", chunk_size=8)
    assert (caught.value.kind, pipe.reads) == ("undecodable", 2)
    assert out.getvalue() == b"OK line\n"  # what came before it


def test_an_endless_pipe_with_a_byte_that_does_not_decode_ends_the_command() -> None:
    command = f"yes \"$(printf '\\377')\" | {shlex.quote(sys.executable)} -m devutils replace"
    done = subprocess.run(
        ["sh", "-c", f"{command} --pair a b"], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert done.stderr.startswith(b"devutils replace: <stdin>: not valid utf-8 (byte 0)")


@pytest.mark.parametrize("chunk_size", [16, 1 << 20])
def test_a_nul_byte_marks_a_binary_file_in_ebcdic_and_past_an_unencodable_result(
    chunk_size: int,
) -> None:
    # cp424's "a" is no ASCII byte, so its byte 0 was not taken for the NUL character:
    # a binary file was "undecodable", which a walk reports where it skips a binary one.
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(
            Replacer({"a": "b"}),
            io.BytesIO(b"\x70\x00\x00\x00"),
            None,
            name="f",
            encoding="cp424",
        )
    assert caught.value.kind == "binary"
    # A result that latin-1 cannot hold, written before the chunk with the NUL byte was
    # read, made the same file "unencodable" in small chunks and "binary" in one.
    data = b"a" + b"x" * 100 + b"\x00"
    with pytest.raises(FileRefusedError) as caught:
        replace_encoded(
            Replacer({"a": "\u20ac"}),
            io.BytesIO(data),
            io.BytesIO(),
            name="f",
            encoding="latin-1",
            chunk_size=chunk_size,
        )
    assert caught.value.kind == "binary"


def test_utf16_text_with_its_zero_bytes_is_not_binary() -> None:
    out = io.BytesIO()
    data = "colour".encode("utf-16")  # every other byte is 0
    replace_encoded(
        Replacer({"colour": "color"}), io.BytesIO(data), out, name="f", encoding="utf-16"
    )
    assert out.getvalue().decode("utf-16") == "color"


@pytest.mark.skipif(shutil.which("flock") is None, reason="needs flock (util-linux)")
@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks to see a waiter")
def test_a_writer_that_takes_the_flock_waits_and_writes_to_the_new_file(tmp_path: Path) -> None:
    # What AtomicRewrite's docstring promises such a writer; one that does not lock can
    # write into the old file in the moment before the rename.
    path = write(tmp_path / "log.txt", b"first\n")
    command = f"echo appended >> {path}"
    with AtomicRewrite(path) as rewrite:
        data = rewrite.source.read()
        writer = subprocess.Popen(["flock", str(path), "-c", command])
        deadline = time.monotonic() + 30
        inode = f":{path.stat().st_ino} "
        while not any(  # the writer waits on the lock of this file
            "->" in line and inode in line for line in Path("/proc/locks").read_text().splitlines()
        ):
            assert writer.poll() is None, "the writer did not wait for the lock"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        rewrite.target.write(data.upper())
        rewrite.commit()
    assert writer.wait(timeout=30) == 0
    assert path.read_bytes() == b"FIRST\nappended\n"


def test_a_directory_is_refused_as_not_a_regular_file_and_no_descriptor_leaks(
    tmp_path: Path,
) -> None:
    # os.open opens a directory; wrapping it failed with the descriptor's number as the
    # file name, and left the descriptor open.
    before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").exists() else None
    for _ in range(5):
        with pytest.raises(FileRefusedError, match="is not a regular file") as info:
            replace_file(Replacer({"a": "b"}), tmp_path)
        assert (info.value.path, info.value.kind) == (str(tmp_path), "not-regular")
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


def test_paths_that_name_no_file_are_refused_as_open_would(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"a\n")
    with pytest.raises(ValueError, match="path must not be empty"):
        replace_file(Replacer({"a": "b"}), "")
    with pytest.raises(NotADirectoryError) as info:  # it rewrote a.txt
        replace_file(Replacer({"a": "b"}), f"{path}/")
    assert info.value.filename == f"{path}/"
    with pytest.raises(FileNotFoundError):  # (not "Not a directory")
        replace_file(Replacer({"a": "b"}), f"{tmp_path}/nope/")
    with pytest.raises(FileRefusedError, match="is not a regular file"):  # as without the /
        replace_file(Replacer({"a": "b"}), f"{tmp_path}/")
    with pytest.raises(TypeError, match=r"path must be a str or os\.PathLike of one"):
        AtomicRewrite(os.fsencode(path))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sync_directory must be a bool"):
        AtomicRewrite(path, sync_directory=1)  # type: ignore[arg-type]
    # os's own errors named neither the argument nor the value ("embedded null byte")
    with pytest.raises(ValueError, match=r"^path must not hold a NUL character, got 'a\\x00b'"):
        AtomicRewrite("a\x00b")
    with pytest.raises(ValueError, match=r"^path must not hold a NUL character"):
        open_regular("a\x00b")
    with pytest.raises(TypeError, match=r"^path must be a str or os\.PathLike of one, got None"):
        open_regular(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^directory must be a str or os\.PathLike of one"):
        fsync_directory(None)  # type: ignore[arg-type]
    # a lone surrogate that no surrogateescape made: os's UnicodeEncodeError, unnamed
    for call in (lambda: open_regular("/tmp/\ud800"), lambda: fsync_directory("/tmp/\ud800")):
        with pytest.raises(ValueError, match=r"must be a name the file system can hold"):
            call()
    with pytest.raises(ValueError, match=r"^backup_suffix must name a file beside the original"):
        replace_file(Replacer({"a": "b"}), path, backup_suffix="/x")  # (it got to commit)
    assert path.read_bytes() == b"a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_commit_outside_the_rewrite_is_a_value_error(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"a\n")
    with AtomicRewrite(path) as rewrite:
        rewrite.target.write(b"b\n")
        rewrite.commit()
        with pytest.raises(ValueError, match="commit"):
            rewrite.commit()
    with pytest.raises(ValueError, match="commit"):
        AtomicRewrite(path).commit()
    assert path.read_bytes() == b"b\n"


def test_the_file_errors_pickle_as_they_were() -> None:
    # A process pool sends a worker's exception back pickled: FileRefusedError broke the
    # pool, and FileChangedError came back with its message doubled.
    import pickle

    refused = pickle.loads(pickle.dumps(FileRefusedError("a.bin", "looks binary", "binary")))
    assert (refused.path, refused.reason, refused.kind, str(refused)) == (
        "a.bin",
        "looks binary",
        "binary",
        "a.bin: looks binary",
    )
    changed = pickle.loads(pickle.dumps(FileChangedError("a.txt")))
    assert (changed.path, str(changed)) == ("a.txt", str(FileChangedError("a.txt")))


@pytest.mark.parametrize("encoding", ["base64", "hex", "zlib", "rot13", "uu", "bz2"])
def test_bytes_to_bytes_codecs_are_a_lookup_error(tmp_path: Path, encoding: str) -> None:
    path = write(tmp_path / "a.txt", b"YQ==\n")
    with pytest.raises(LookupError, match="not a text encoding"):
        replace_file(Replacer({"a": "b"}), path, encoding=encoding)
    assert path.read_bytes() == b"YQ==\n"


def test_replace_encoded_checks_its_source_and_name() -> None:
    with pytest.raises(TypeError, match="source must have a read"):
        replace_encoded(Replacer({"a": "b"}), None, None, name="a.txt")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name must be a str"):
        replace_encoded(Replacer({"a": "b"}), io.BytesIO(b"a"), None, name=None)  # type: ignore[arg-type]


@given(st.binary(max_size=20))
def test_replace_encoded_checks_its_target_before_reading(data: bytes) -> None:
    # A target without write() was found only at the first write (never, for an empty
    # source), and a text stream raised StringIO's own error, after reading.
    for target, problem in [
        (object(), "target must have a write"),
        (io.StringIO(), "target must take bytes"),
    ]:
        source = io.BytesIO(data)
        with pytest.raises(TypeError, match=problem):
            replace_encoded(Replacer({"a": "b"}), source, target, name="a.txt")  # type: ignore[arg-type]
        assert source.tell() == 0  # nothing read
    text = io.StringIO("a")
    with pytest.raises(TypeError, match="source must give bytes"):
        replace_encoded(Replacer({"a": "b"}), text, None, name="a.txt")  # type: ignore[arg-type]
    assert text.tell() == 0


@pytest.mark.parametrize("encoding", ["\udcff", "utf-8\x00", "no-such-codec"])
def test_an_encoding_no_codec_can_have_is_a_lookup_error(tmp_path: Path, encoding: str) -> None:
    # A lone surrogate (an undecodable byte of a command line) or a NUL was a
    # UnicodeEncodeError or ValueError from codecs.lookup.
    path = tmp_path / "a.txt"
    path.write_bytes(b"a")
    with pytest.raises(LookupError, match="unknown encoding"):
        replace_encoded(Replacer({"a": "b"}), io.BytesIO(b"a"), None, name="x", encoding=encoding)
    with pytest.raises(LookupError, match="unknown encoding"):
        replace_file(Replacer({"a": "b"}), path, encoding=encoding)
    with pytest.raises(TypeError, match="encoding must be a str, got int 8"):
        replace_file(Replacer({"a": "b"}), path, encoding=8)  # type: ignore[arg-type]
    assert path.read_bytes() == b"a"


# -- properties added for the standard ---

_ALPHABETS = {  # the characters each encoding can write, with line endings of every kind
    "utf-8": "aAé語🎉ß \r\n",
    "utf-8-sig": "aAé語🎉ß \r\n",
    "utf-16": "aAé語🎉ß \r\n",
    "latin-1": "aAbéß \r\n",
}


@given(
    encoding=st.sampled_from(sorted(_ALPHABETS)),
    ignore_case=st.booleans(),
    whole_words=st.booleans(),
    mode=st.sampled_from([0o600, 0o640, 0o644, 0o664, 0o700, 0o755]),
    chunk_size=st.integers(1, 9) | st.just(1 << 20),
    data=st.data(),
)
def test_replace_file_gives_the_file_the_references_text_and_keeps_its_mode(
    encoding: str,
    ignore_case: bool,
    whole_words: bool,
    mode: int,
    chunk_size: int,
    data: st.DataObject,
) -> None:
    alphabet = st.sampled_from(_ALPHABETS[encoding])
    keys = data.draw(st.lists(st.text(alphabet, min_size=1, max_size=3), min_size=1, max_size=4))
    if ignore_case:  # (keys that fold alike must map to one value)
        keys = list({key.casefold(): key for key in keys}.values())
    keys = list(dict.fromkeys(keys))
    values = data.draw(
        st.lists(st.text(alphabet, max_size=3), min_size=len(keys), max_size=len(keys))
    )
    mapping = dict(zip(keys, values, strict=True))
    text = data.draw(
        st.lists(st.sampled_from([*keys, *_ALPHABETS[encoding]]), max_size=15).map("".join)
    )
    replacer = Replacer(mapping, ignore_case=ignore_case, whole_words=whole_words)
    matches = list(replacer.iter_matches(text))
    changed = any(value != text[start:end] for start, end, value in matches)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "notes.txt"
        path.write_bytes(text.encode(encoding))
        path.chmod(mode)
        before = path.stat()
        count = replace_file(replacer, path, encoding=encoding, chunk_size=chunk_size)
        after = path.stat()
        assert count == len(matches)
        # every byte outside the matches as it was: the brute force's text, encoded
        expected = reference(text, mapping, ignore_case=ignore_case, whole_words=whole_words)
        assert path.read_bytes() == expected.encode(encoding)
        assert stat.S_IMODE(after.st_mode) == mode
        if changed:  # a new file, renamed over the name
            assert after.st_ino != before.st_ino
        else:  # not rewritten
            assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
        assert os.listdir(folder) == ["notes.txt"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8-sig", "utf-8", "iso2022_jp"])
def test_an_empty_file_stays_empty_in_an_encoding_with_a_byte_order_mark(
    encoding: str, tmp_path: Path
) -> None:
    # Python's encoders write a BOM even for "": an empty file is no reason to write one
    out = io.BytesIO()
    state = replace_encoded(
        Replacer({"a": "b"}), io.BytesIO(b""), out, name="empty.txt", encoding=encoding
    )
    assert (out.getvalue(), state.count, state.changed) == (b"", 0, False)
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert replace_file(Replacer({"a": "b"}), path, encoding=encoding) == 0
    assert path.read_bytes() == b""
    # and a file that holds only its BOM keeps it
    bom_only = "".encode(encoding)
    out = io.BytesIO()
    replace_encoded(
        Replacer({"a": "b"}), io.BytesIO(bom_only), out, name="bom.txt", encoding=encoding
    )
    assert out.getvalue() == bom_only
