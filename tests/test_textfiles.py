"""Tests for devutils.textfiles: atomic rewriting, strict decoding, streaming bytes."""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils.text import Replacer
from devutils.textfiles import (
    FileRefusedError,
    fsync_directory,
    replace_file,
    transcode,
    write_all,
)

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
    transcode(replacer, source, target, name="t", encoding=encoding, chunk_size=chunk_size)
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
        transcode(Replacer({"a": "b"}), io.StringIO("a"), io.BytesIO(), name="x")  # type: ignore[arg-type]
