"""Tests for devutils.atomicfiles: AtomicRewrite with any transformation, open_regular.

What a rewrite keeps (metadata, concurrent writers, backups, long names) is tested through
`replace_file` and `devutils replace --in-place` in test_textfiles.py; these tests use
the mechanism directly, as a caller with a transformation of their own does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devutils.atomicfiles import (
    TEMPORARY_SUFFIX,
    AtomicRewrite,
    FileChangedError,
    FileRefusedError,
    fsync_directory,
    open_regular,
)

ANY_FOLDER = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(TEMPORARY_SUFFIX))


@ANY_FOLDER
@given(
    old=st.binary(max_size=300),
    new=st.binary(max_size=300),
    commit=st.booleans(),
    backup=st.sampled_from([None, ".orig"]),
)
def test_the_file_is_wholly_new_after_a_commit_and_wholly_old_otherwise(
    tmp_path: Path, old: bytes, new: bytes, commit: bool, backup: str | None
) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(old)
    (tmp_path / "data.bin.orig").unlink(missing_ok=True)
    os.chmod(path, 0o640)
    with AtomicRewrite(path, backup_suffix=backup) as rewrite:
        assert rewrite.source.read() == old
        rewrite.target.write(new)
        if commit:
            rewrite.commit()
    assert path.read_bytes() == (new if commit else old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the mode kept
    if backup is not None and commit:
        assert (tmp_path / "data.bin.orig").read_bytes() == old
    assert leftovers(tmp_path) == []


def test_an_error_in_the_block_leaves_the_original_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"old")

    def interrupted() -> None:
        with AtomicRewrite(path) as rewrite:
            rewrite.target.write(b"half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert path.read_bytes() == b"old"
    assert leftovers(tmp_path) == []


def test_a_change_by_another_program_is_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"old")
    with AtomicRewrite(path) as rewrite:
        rewrite.target.write(b"new")
        with path.open("ab") as other:
            other.write(b" and theirs")
        with pytest.raises(FileChangedError) as caught:
            rewrite.commit()
    assert caught.value.path == str(path)
    assert path.read_bytes() == b"old and theirs"
    assert leftovers(tmp_path) == []


def test_open_regular_reads_a_file_and_refuses_a_fifo_unread(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"text")
    with open_regular(str(path)) as source:
        assert source.read() == b"text"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileRefusedError) as caught:
        open_regular(str(fifo), name="pipe")  # refused, not waited on for a writer
    assert (caught.value.path, caught.value.kind) == ("pipe", "not-regular")
    with pytest.raises(FileNotFoundError) as missing:
        open_regular(str(tmp_path / "none"), name="none")
    assert missing.value.filename == "none"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_a_rewrite_of_a_link_to_a_pipe_is_refused_as_not_a_regular_file() -> None:
    # /dev/stdin on a pipe: its link names pipe:[N], which no path gives
    reader, writer = os.pipe()
    try:
        name = f"/proc/self/fd/{reader}"
        with pytest.raises(FileRefusedError) as caught, AtomicRewrite(name):
            pass
        assert (caught.value.path, caught.value.kind) == (name, "not-regular")
    finally:
        os.close(reader)
        os.close(writer)


def as_nobody(action: Callable[[], None], groups: tuple[int, ...] = ()) -> tuple[int, str]:
    """Run *action* in a child process as the user and group 65534 (nobody), a member of
    *groups* too: its exit status (0: it returned) and, where it raised, the error's type
    and message."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # (the child: never back into pytest)
        status, said = 0, ""
        try:
            os.close(reading)
            os.setgroups(list(groups))
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            action()
        except BaseException as exc:  # (reported to the parent)
            status, said = 1, f"{type(exc).__name__}: {exc}"
        os.write(writing, said.encode())
        os._exit(status)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        said = pipe.read().decode()
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]), said


@pytest.fixture
def sticky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder of mode 1777 (as /tmp is) that the user nobody can reach: root's."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to make files of two users")
    top = Path(tempfile.mkdtemp(prefix="devutils-sticky-"))  # (pytest's own folders: 0700)
    try:
        top.chmod(0o755)
        folder = top / "sticky"
        folder.mkdir()
        folder.chmod(0o1777)
        yield folder
    finally:
        shutil.rmtree(top)


def test_a_member_of_the_file_s_group_keeps_the_group_it_shares(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The owner could not be given back, and the group was lost with it (sed keeps it)
    if os.geteuid() != 0:
        pytest.skip("needs root, to make files of two users")
    top = Path(tempfile.mkdtemp(prefix="devutils-group-"))
    try:
        top.chmod(0o755)
        folder = top / "shared"
        folder.mkdir()
        folder.chmod(0o777)
        path = folder / "notes.txt"
        path.write_bytes(b"the colour\n")
        os.chown(path, 1000, 50)
        path.chmod(0o664)

        def rewrite() -> None:
            with AtomicRewrite(str(path)) as rewriting:
                rewriting.target.write(b"the color\n")
                rewriting.commit()

        assert as_nobody(rewrite, groups=(50,)) == (0, "")
        info = path.stat()
        assert path.read_bytes() == b"the color\n"
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 50, 0o664)
    finally:
        shutil.rmtree(top)


@pytest.mark.parametrize("backup", [None, ".bak"])
def test_another_user_s_file_in_a_sticky_folder_is_refused_leaving_nothing(
    sticky: Path, backup: str | None
) -> None:
    # The backup's hard link was root's: nobody could neither rename nor remove it, and it
    # stayed, one more each try (sed -i.bak says "cannot rename" and leaves nothing).
    folder = sticky
    path = folder / "f"
    path.write_bytes(b"abc\n")
    path.chmod(0o666)  # root's, and anyone may write it

    def rewrite() -> None:
        with AtomicRewrite(path, backup_suffix=backup) as job:
            job.target.write(job.source.read().upper())
            job.commit()

    status, said = as_nobody(rewrite)
    assert (status, said) == (
        1,
        f"PermissionError: [Errno 1] Operation not permitted: {str(path)!r}",
    )
    assert sorted(p.name for p in folder.iterdir()) == ["f"]
    assert path.read_bytes() == b"abc\n"


def test_a_backup_in_a_sticky_folder_of_this_user_s_file_is_kept(sticky: Path) -> None:
    folder = sticky
    path = folder / "f"
    path.write_bytes(b"abc\n")
    os.chown(path, 65534, 65534)  # nobody's own file: renamed and linked as ever

    def rewrite() -> None:
        with AtomicRewrite(path, backup_suffix=".bak") as job:
            job.target.write(job.source.read().upper())
            job.commit()

    assert as_nobody(rewrite) == (0, "")
    assert sorted(p.name for p in folder.iterdir()) == ["f", "f.bak"]
    assert (path.read_bytes(), (folder / "f.bak").read_bytes()) == (b"ABC\n", b"abc\n")
    assert (folder / "f.bak").stat().st_nlink == 1  # (the link was renamed: one name left)


def test_a_write_past_the_file_size_limit_leaves_no_temporary_file(tmp_path: Path) -> None:
    # close() flushed the buffered rest again, failed again (EFBIG, as ENOSPC on a full
    # disk), and the temporary file stayed, holding part of the new text
    path = tmp_path / "f"
    path.write_bytes(b"a" * 1000)
    script = (
        "import resource, sys\n"
        "from devutils.atomicfiles import AtomicRewrite\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))\n"
        "try:\n"
        "    with AtomicRewrite(sys.argv[1]) as job:\n"
        "        for _ in range(100_000):\n"
        "            job.target.write(b'x' * 10)\n"
        "        job.commit()\n"
        "except OSError as exc:\n"
        "    sys.exit(f'{type(exc).__name__}: {exc.errno}')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stderr) == (1, f"OSError: {errno.EFBIG}\n")
    assert (sorted(p.name for p in tmp_path.iterdir()), path.read_bytes()) == (["f"], b"a" * 1000)


def test_a_backup_that_is_the_changed_file_itself_is_not_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A change right after the backup's hard link: the "backup" was the live file, so
    # every later edit of it showed in the backup too
    from devutils import atomicfiles

    path = tmp_path / "g"
    path.write_bytes(b"hello a\n")
    linked = atomicfiles._backup

    def backup_then_a_writer(original: str, backup: str) -> None:
        linked(original, backup)
        with open(original, "ab") as other:  # another program appends
            other.write(b"APPENDED\n")

    monkeypatch.setattr(atomicfiles, "_backup", backup_then_a_writer)
    with AtomicRewrite(path, backup_suffix=".bak") as job:
        job.target.write(b"hello b\n")
        with pytest.raises(FileChangedError):
            job.commit()
    assert path.read_bytes() == b"hello a\nAPPENDED\n"  # as the other program left it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def _folder_state(folder: Path) -> dict[str, tuple[bool, bytes]]:
    """Each name in *folder*: whether it is a symlink, and its target or its bytes."""
    return {
        p.name: (True, os.fsencode(os.readlink(p))) if p.is_symlink() else (False, p.read_bytes())
        for p in folder.iterdir()
    }


def _make_backup(path: Path, backup: Path, kind: str | None) -> None:
    """An earlier *backup* of *path*: none, a file, a symlink or a hard link of *path*."""
    if kind == "file":
        backup.write_bytes(b"OLD BACKUP\n")
    elif kind == "symlink":
        backup.symlink_to("elsewhere")
    elif kind == "hard link":  # (put back by a rename between two names of one file)
        os.link(path, backup)


@pytest.mark.parametrize("earlier", [None, "file", "symlink", "hard link"])
@pytest.mark.parametrize("failure", [None, "rename", "changed"])
def test_a_failed_commit_leaves_the_earlier_backup_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: str | None, failure: str | None
) -> None:
    # The new backup replaced the earlier one before the rename that then failed (an
    # immutable file, a file mounted over): the file stayed, its earlier backup was gone.
    from devutils import atomicfiles

    path = tmp_path / "f"
    path.write_bytes(b"colour\n")
    _make_backup(path, tmp_path / "f.bak", earlier)
    before = _folder_state(tmp_path)
    replace, backup = os.replace, atomicfiles._backup

    def failing_replace(source: str, target: str) -> None:
        if failure == "rename" and target == str(path):
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        replace(source, target)

    def backup_then_a_writer(original: str, to: str) -> None:
        backup(original, to)
        if failure == "changed":
            with open(original, "ab") as other:
                other.write(b"APPENDED\n")

    monkeypatch.setattr(os, "replace", failing_replace)
    monkeypatch.setattr(atomicfiles, "_backup", backup_then_a_writer)
    with AtomicRewrite(path, backup_suffix=".bak") as job:
        job.target.write(b"color\n")
        if failure is None:
            job.commit()
        else:
            with pytest.raises(FileChangedError if failure == "changed" else OSError):
                job.commit()
    if failure is None:
        assert _folder_state(tmp_path) == {"f": (False, b"color\n"), "f.bak": (False, b"colour\n")}
        return
    if failure == "changed":
        before["f"] = (False, b"colour\nAPPENDED\n")  # as the other program left it
        if earlier == "hard link":
            before["f.bak"] = before["f"]  # (one file)
    assert _folder_state(tmp_path) == before


def test_an_immutable_file_keeps_its_earlier_backup(tmp_path: Path) -> None:
    # sed -i.bak on an immutable file fails and keeps FILE.bak; devutils replaced it.
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("needs root and chattr to make a file immutable")
    path = tmp_path / "f"
    path.write_bytes(b"colour\n")
    (tmp_path / "f.bak").write_bytes(b"OLD BACKUP\n")
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"this file system keeps no immutable flag: {made.stderr.decode().strip()}")
    try:
        with AtomicRewrite(path, backup_suffix=".bak") as job:
            job.target.write(b"color\n")
            with pytest.raises(PermissionError, match=re.escape(str(path))):
                job.commit()
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    assert _folder_state(tmp_path) == {"f": (False, b"colour\n"), "f.bak": (False, b"OLD BACKUP\n")}


# -- properties added for the standard ---


@given(
    data=st.binary(max_size=3000),
    kind=st.sampled_from(["file", "link", "folder", "fifo", "device"]),
    sizes=st.lists(st.integers(1, 700), max_size=5),
)
def test_open_regular_reads_back_a_regular_file_and_refuses_anything_else(
    data: bytes, kind: str, sizes: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.bin"
        path.write_bytes(data)
        name = Path(folder) / "named"
        if kind == "file":
            name = path
        elif kind == "link":
            name.symlink_to(path)
        elif kind == "folder":
            name.mkdir()
        elif kind == "fifo":
            os.mkfifo(name)
        else:
            name.symlink_to(os.devnull)
        if kind not in ("file", "link"):
            with pytest.raises(FileRefusedError) as caught:
                open_regular(str(name), name="shown")
            assert (caught.value.path, caught.value.kind) == ("shown", "not-regular")
            return
        with open_regular(str(name)) as source:
            assert os.get_blocking(source.fileno())  # (opened without blocking, then set back)
            pieces = [source.read(size) for size in sizes]
            pieces.append(source.read())
        assert b"".join(pieces) == data


def _descriptors() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
@given(
    kind=st.sampled_from(
        ["folder", "file", "missing", "under-a-file", "link-to-folder", "dangling"]
    ),
    name=st.text(
        st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"), min_size=1, max_size=8
    )
    | st.just("x" * 300),
)
def test_fsync_directory_syncs_what_opens_ignores_what_cannot_and_keeps_no_descriptor(
    kind: str, name: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, name)
        if kind == "folder":
            with contextlib.suppress(OSError):  # (a name too long for a file: it stays missing)
                os.mkdir(path)
        elif kind in ("file", "under-a-file"):
            with contextlib.suppress(OSError), open(path, "wb"):
                pass
            path = os.path.join(path, "inside") if kind == "under-a-file" else path
        elif kind in ("link-to-folder", "dangling"):
            target = folder if kind == "link-to-folder" else os.path.join(folder, "none")
            with contextlib.suppress(OSError):
                os.symlink(target, path)
        opens = os.path.exists(path)
        before = _descriptors()
        with mock.patch.object(os, "fsync", wraps=os.fsync) as synced:
            fsync_directory(path)  # (best effort: never an error)
        assert synced.call_count == (1 if opens else 0)
        assert _descriptors() == before


# -- a signal in the middle of a step ------------------------------------------------------


class Stopped(Exception):
    """What the test's SIGUSR1 handler raises (as Ctrl-C's raises KeyboardInterrupt)."""


@pytest.fixture
def stop_on_sigusr1() -> Iterator[Callable[[], None]]:
    """A function that sends this process SIGUSR1, whose handler raises `Stopped`."""
    import signal

    def stop(_signum: int, _frame: object) -> None:
        raise Stopped

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        yield lambda: os.kill(os.getpid(), signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def signal_in_fdopen(
    monkeypatch: pytest.MonkeyPatch, stop: Callable[[], None], mode: str | None = None
) -> None:
    """Make `os.fdopen` send the signal of *stop* just before it opens (in *mode* only,
    where given)."""
    fdopen = os.fdopen

    def signal_then_fdopen(descriptor: int, opened: str = "r", *args: object) -> object:
        if mode is None or opened == mode:
            stop()
        return fdopen(descriptor, opened, *args)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "fdopen", signal_then_fdopen)


@pytest.mark.parametrize("earlier", [None, b"an earlier backup\n"])
@pytest.mark.parametrize("suffix", [None, ".bak"])
def test_a_signal_just_after_the_rename_leaves_the_new_file_and_the_backup(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stop_on_sigusr1: Callable[[], None],
    suffix: str | None,
    earlier: bytes | None,
) -> None:
    # Its exception, in the backup's undo, removed the backup: the original's only copy
    path = tmp_path / "notes.txt"
    path.write_bytes(b"the colour\n")
    if suffix is not None and earlier is not None:
        (tmp_path / f"notes.txt{suffix}").write_bytes(earlier)
    rename = os.replace

    def rename_then_signal(source: str, target: str) -> None:
        rename(source, target)
        if target == str(path):
            stop_on_sigusr1()

    monkeypatch.setattr(os, "replace", rename_then_signal)
    with AtomicRewrite(str(path), backup_suffix=suffix) as rewrite:
        rewrite.target.write(b"the color\n")
        with pytest.raises(Stopped):  # (after the commit, which ran whole)
            rewrite.commit()
    assert path.read_bytes() == b"the color\n"
    if suffix is not None:
        assert (tmp_path / f"notes.txt{suffix}").read_bytes() == b"the colour\n"
    assert leftovers(tmp_path) == []


def test_a_signal_while_the_temporary_file_is_made_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_on_sigusr1: Callable[[], None]
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"the colour\n")
    signal_in_fdopen(monkeypatch, stop_on_sigusr1, "wb")  # (the temporary file exists now)
    with pytest.raises(Stopped), AtomicRewrite(str(path)):
        pytest.fail("the body ran")
    assert path.read_bytes() == b"the colour\n"
    assert leftovers(tmp_path) == []


def test_a_signal_while_a_file_is_opened_is_that_signal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_on_sigusr1: Callable[[], None]
) -> None:
    # It was taken for EBADF (the descriptor closed twice), and the run went on
    path = tmp_path / "notes.txt"
    path.write_bytes(b"text")
    opened = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else None
    signal_in_fdopen(monkeypatch, stop_on_sigusr1)
    with pytest.raises(Stopped):
        open_regular(str(path))
    if opened is not None:
        assert len(os.listdir("/proc/self/fd")) == opened


def test_an_empty_backup_suffix_keeps_no_backup_as_sed_does(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"old")
    with AtomicRewrite(path, backup_suffix="") as rewrite:
        rewrite.target.write(b"new")
        rewrite.commit()
    assert rewrite.backup is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert path.read_bytes() == b"new"
