"""Tests for streaming replacement and ``devutils replace`` on real files."""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devutils._stream import transcode
from devutils.text import FileRefusedError, Replacer
from tests.test_cli import run
from tests.test_text import ALPHABET, mappings

# -- streaming equals whole-text replacement ------------------------------------------------


@given(
    text=st.text(ALPHABET, max_size=60),
    mapping=mappings(),
    chunk_size=st.integers(1, 70),
    whole_words=st.booleans(),
    ignore_case=st.booleans(),
)
def test_stream_equals_whole_text(
    text: str, mapping: dict[str, str], chunk_size: int, whole_words: bool, ignore_case: bool
) -> None:
    if ignore_case:
        folded: dict[str, str] = {}
        for key, value in mapping.items():
            folded.setdefault(key.casefold(), value)
        mapping = {key: folded[key.casefold()] for key in mapping}
    replacer = Replacer(mapping, whole_words=whole_words, ignore_case=ignore_case)
    out = io.StringIO()
    count = replacer.replace_stream(io.StringIO(text), out, chunk_size=chunk_size)
    assert out.getvalue() == replacer.replace(text)
    assert count == replacer.replace_count(text)[1]


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


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be a positive int, got 0"):
        Replacer({"a": "b"}).replace_stream(io.StringIO("a"), io.StringIO(), chunk_size=0)


# -- files in place ----------------------------------------------------------------------------


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_replace_file_keeps_crlf_and_returns_count(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"colour\r\ncolour centre\r\n")
    count = Replacer({"colour": "color"}).replace_file(path)
    assert count == 2
    assert path.read_bytes() == b"color\r\ncolor centre\r\n"


def test_latin1_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "café crème\n".encode("latin-1"))
    assert (
        run(
            ["replace", "--encoding", "latin-1", "--in-place", "--pair", "crème", "lait", str(path)]
        ).status
        == 0
    )
    assert path.read_bytes() == "café lait\n".encode("latin-1")


def test_unencodable_result_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"cafe\n")
    result = run(
        ["replace", "--encoding", "latin-1", "--in-place", "--pair", "cafe", "喫茶", str(path)]
    )
    assert result.status == 1
    assert "cannot be encoded in latin-1" in result.err
    assert path.read_bytes() == b"cafe\n"


def test_unchanged_file_is_not_rewritten(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"nothing to see\n")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    inode = path.stat().st_ino
    assert run(["replace", "--in-place", "--pair", "zzz", "y", str(path)]).status == 0
    assert path.stat().st_mtime == 1_000_000_000
    assert path.stat().st_ino == inode
    same = write(tmp_path / "b.txt", b"keep keep\n")
    os.utime(same, (1_000_000_000, 1_000_000_000))
    assert run(["replace", "--in-place", "--pair", "keep", "keep", str(same)]).status == 0
    assert same.stat().st_mtime == 1_000_000_000


def test_permissions_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "script.sh", b"echo old\n")
    path.chmod(0o751)
    assert run(["replace", "--in-place", "--pair", "old", "new", str(path)]).status == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_bytes() == b"echo new\n"


def test_symlink_target_is_rewritten(tmp_path: Path) -> None:
    target = write(tmp_path / "target.txt", b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert run(["replace", "--in-place", "--pair", "old", "new", str(link)]).status == 0
    assert link.is_symlink()
    assert target.read_bytes() == b"new\n"


def test_backup_suffix(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"old\n")
    assert run(["replace", "--in-place=.bak", "--pair", "old", "new", str(path)]).status == 0
    assert path.read_bytes() == b"new\n"
    assert (tmp_path / "a.txt.bak").read_bytes() == b"old\n"
    # A second run replaces the backup with the then-current content.
    assert run(["replace", "--in-place=.bak", "--pair", "new", "newer", str(path)]).status == 0
    assert (tmp_path / "a.txt.bak").read_bytes() == b"new\n"


def test_bare_in_place_does_not_swallow_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"old\n")
    assert run(["replace", "--pair", "old", "new", "--in-place", str(path)]).status == 0
    assert path.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_binary_and_undecodable_files_are_refused_others_processed(tmp_path: Path) -> None:
    binary = write(tmp_path / "image.png", b"old\x00\x01\x02")
    broken = write(tmp_path / "latin.txt", "old café".encode("latin-1"))
    good = write(tmp_path / "good.txt", b"old\n")
    result = run(
        ["replace", "--in-place", "--pair", "old", "new", str(binary), str(broken), str(good)]
    )
    assert result.status == 1
    assert f"{binary}: looks binary" in result.err
    assert f"{broken}: not valid utf-8 (byte 7)" in result.err
    assert binary.read_bytes() == b"old\x00\x01\x02"
    assert broken.read_bytes() == "old café".encode("latin-1")
    assert good.read_bytes() == b"new\n"


def test_replace_file_api_refuses_binary(tmp_path: Path) -> None:
    path = write(tmp_path / "a.bin", b"a\x00b")
    with pytest.raises(FileRefusedError, match="looks binary"):
        Replacer({"a": "b"}).replace_file(path)
    assert path.read_bytes() == b"a\x00b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]  # no temporary left


def test_missing_file_is_exit_1_and_others_go_on(tmp_path: Path) -> None:
    good = write(tmp_path / "good.txt", b"old\n")
    result = run(
        ["replace", "--in-place", "--pair", "old", "new", str(tmp_path / "nope"), str(good)]
    )
    assert result.status == 1
    assert "No such file" in result.err
    assert good.read_bytes() == b"new\n"


# -- stdout, dry run, diff, count ----------------------------------------------------------------


def test_files_to_stdout_in_order_and_refused_file_writes_nothing(tmp_path: Path) -> None:
    first = write(tmp_path / "1.txt", b"one old\n")
    bad = write(tmp_path / "2.txt", b"old \xff\n")
    third = write(tmp_path / "3.txt", b"three old\n")
    result = run(["replace", "--pair", "old", "new", str(first), str(bad), str(third)])
    assert result.status == 1
    assert result.out == b"one new\nthree new\n"
    assert first.read_bytes() == b"one old\n"


def test_dry_run_and_count(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", b"old old\n")
    b = write(tmp_path / "b.txt", b"nothing\n")
    result = run(["replace", "--dry-run", "--pair", "old", "new", str(a), str(b)])
    assert (result.status, result.text) == (0, f"{a}: 2\n{b}: 0\n")
    assert a.read_bytes() == b"old old\n"
    result = run(["replace", "--in-place", "--count", "--pair", "old", "new", str(a), str(b)])
    assert result.err == f"{a}: 2\n{b}: 0\n"
    assert a.read_bytes() == b"new new\n"


def test_diff(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", b"keep\nold line\nkeep\n")
    result = run(["replace", "--diff", "--pair", "old", "new", str(a)])
    assert result.status == 0
    assert f"--- a/{a}\n+++ b/{a}\n" in result.text
    assert "-old line\n+new line\n" in result.text
    assert a.read_bytes() == b"keep\nold line\nkeep\n"


def test_in_place_with_stdin_or_dry_run_is_a_usage_error(tmp_path: Path) -> None:
    assert run(["replace", "--in-place", "--pair", "a", "b"]).status == 2
    path = write(tmp_path / "a.txt", b"a")
    result = run(["replace", "--in-place", "--dry-run", "--pair", "a", "b", str(path)])
    assert result.status == 2
    assert result.err.count("\n") == 1


# -- directories and parallel work ----------------------------------------------------------------


def make_tree(root: Path) -> None:
    for relative in [
        "a.txt",
        "sub/b.txt",
        ".hidden.txt",
        ".git/config",
        ".cache/c.txt",
        "sub/img.bin",
    ]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"old\x00" if relative.endswith(".bin") else b"old\n")


def test_directory_needs_recursive(tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = run(["replace", "--in-place", "--pair", "old", "new", str(tmp_path)])
    assert result.status == 2
    assert "is a directory (use --recursive" in result.err


def test_recursive_skips_hidden_and_binary(tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = run(["replace", "-r", "--in-place", "--pair", "old", "new", str(tmp_path)])
    assert (result.status, result.err) == (0, "")
    changed = sorted(
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if p.is_file() and p.read_bytes() == b"new\n"
    )
    assert changed == ["a.txt", "sub/b.txt"]
    assert (tmp_path / "sub/img.bin").read_bytes() == b"old\x00"


def test_recursive_hidden(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert (
        run(
            ["replace", "-r", "--hidden", "--in-place", "--pair", "old", "new", str(tmp_path)]
        ).status
        == 0
    )
    assert (tmp_path / ".hidden.txt").read_bytes() == b"new\n"
    assert (tmp_path / ".cache/c.txt").read_bytes() == b"new\n"
    assert (tmp_path / ".git/config").read_bytes() == b"old\n"  # never .git


def test_jobs_2_gives_the_same_bytes_as_jobs_1(tmp_path: Path) -> None:
    texts = [
        f"file {i}: colour centre colourful {'x' * i}\r\n".encode() * (i + 1) for i in range(12)
    ]
    args = ["replace", "--pair", "colour", "color", "--pair", "centre", "center", "-w"]
    for jobs in ("1", "2"):
        folder = tmp_path / jobs
        folder.mkdir()
        paths = [write(folder / f"{i:02d}.txt", text) for i, text in enumerate(texts)]
        completed = subprocess.run(
            [sys.executable, "-m", "devutils", *args, "--jobs", jobs, *map(str, paths)],
            capture_output=True,
            check=True,
        )
        (tmp_path / f"stdout-{jobs}").write_bytes(completed.stdout)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "devutils",
                *args,
                "--jobs",
                jobs,
                "--in-place",
                *map(str, paths),
            ],
            check=True,
        )
    assert (tmp_path / "stdout-1").read_bytes() == (tmp_path / "stdout-2").read_bytes()
    for i in range(12):
        assert (tmp_path / "1" / f"{i:02d}.txt").read_bytes() == (
            tmp_path / "2" / f"{i:02d}.txt"
        ).read_bytes()
    assert b"color center colourful" in (tmp_path / "2" / "00.txt").read_bytes()


# -- killed at any moment: wholly old or wholly new ---------------------------------------------


def test_sigkill_leaves_the_file_old_or_new(tmp_path: Path) -> None:
    folder = tmp_path
    old = b"the old colour of the centre\n" * 400_000  # about 12 MB
    new = old.replace(b"colour", b"color").replace(b"centre", b"center")
    path = folder / "big.txt"
    outcomes = set()
    for delay in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2):
        path.write_bytes(old)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "devutils",
                "replace",
                "--in-place",
                "--chunk-size",
                "65536",
                "--pair",
                "colour",
                "color",
                "--pair",
                "centre",
                "center",
                str(path),
            ]
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        data = path.read_bytes()
        assert data in (old, new), f"killed after {delay}s: {len(data)} bytes, neither old nor new"
        outcomes.add(data == new)
        for leftover in folder.glob(".big.txt.*.devutils-tmp"):
            leftover.unlink()  # a kill can leave the temporary file, never a damaged original
    assert False in outcomes  # some kills landed before the rename


# -- the recipes of docs/cli.md ------------------------------------------------------------------


def test_recipe_rename_identifiers(tmp_path: Path) -> None:
    a = write(tmp_path / "a.py", b"user_id = get(user_identity)\nclass UserId: ...\n")
    b = write(tmp_path / "b.py", b"print(user_id)\n")
    args = [
        "replace",
        "--whole-words",
        "--in-place",
        "--jobs",
        "2",
        "--pair",
        "user_id",
        "account_id",
    ]
    result = run([*args, "--pair", "UserId", "AccountId", str(a), str(b)])
    assert result.status == 0
    assert a.read_bytes() == b"account_id = get(user_identity)\nclass AccountId: ...\n"
    assert b.read_bytes() == b"print(account_id)\n"


def test_recipe_glossary_on_a_corpus(tmp_path: Path) -> None:
    glossary = write(
        tmp_path / "glossary.tsv", b"colour\tcolor\ncentre\tcenter\nrealise\trealize\n"
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write(corpus / "a.txt", b"I realise the colour of the centre.\n")
    write(corpus / "b.txt", b"Nothing here.\n")
    args = ["replace", "--map", str(glossary), "--whole-words", "--in-place", "--count", "-r"]
    result = run([*args, str(corpus)])
    assert result.status == 0
    assert result.err == f"{corpus}/a.txt: 3\n{corpus}/b.txt: 0\n"
    assert (corpus / "a.txt").read_bytes() == b"I realize the color of the center.\n"


def test_recipe_preview_with_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "notes.txt", b"The colour of the sea\n")
    result = run(["replace", "--diff", "--pair", "colour", "color", "notes.txt"])
    assert result.text == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n"
        "-The colour of the sea\n+The color of the sea\n"
    )
    assert (
        run(["replace", "--dry-run", "--pair", "colour", "color", "notes.txt"]).text
        == "notes.txt: 1\n"
    )


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path: Path) -> None:
    paths = [write(tmp_path / f"{i}.txt", b"old\n" * 100) for i in range(3)]
    quiet = run(["replace", "--in-place", "--pair", "old", "new", *map(str, paths)])
    assert quiet.err == ""  # stderr is not a terminal here: no bar
    shown = run(
        ["replace", "--in-place", "--progress", "always", "--pair", "new", "old", *map(str, paths)]
    )
    assert "devutils replace [" in shown.err
    assert "3/3 files" in shown.err
    assert all(p.read_bytes() == b"old\n" * 100 for p in paths)


def test_a_file_named_twice_is_rewritten_once(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"cat dog\n")
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    args = ["replace", "--in-place", "--pair", "cat", "dog", "--pair", "dog", "cat"]
    assert run([*args, str(path), str(path), str(link)]).status == 0
    assert path.read_bytes() == b"dog cat\n"
