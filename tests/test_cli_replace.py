"""Tests for devutils replace: streams and files, in place, in parallel, maps."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from devutils.textfiles import LOSSY

if TYPE_CHECKING:
    from tests.conftest import Cli


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_pairs_swap_and_longest_wins(cli: Cli) -> None:
    result = cli(
        ["replace", "--pair", "a", "b", "--pair", "b", "a", "--pair", "ab", "X"], b"ab ba\n"
    )
    assert (result.status, result.text) == (0, "X ab\n")


def test_bytes_pass_through_unchanged_crlf(cli: Cli) -> None:
    result = cli(["replace", "--pair", "x", "y"], b"x\r\nline\r\n")
    assert result.out == b"y\r\nline\r\n"


def test_options(tmp_path: Path, cli: Cli) -> None:
    result = cli(
        ["replace", "--pair", "acme", "corp", "--ignore-case", "--preserve-case", "-w"],
        b"ACME Acme acmes",
    )
    assert result.text == "CORP Corp acmes"


def test_json_map(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"colour": "color", "centre": "center"}), encoding="utf-8")
    result = cli(["replace", "--map", str(path)], b"colour centre")
    assert result.text == "color center"


def test_tsv_map_with_pairs(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "glossary.tsv"
    path.write_text("colour\tcolor\n\ncentre\tcenter\n", encoding="utf-8")
    result = cli(["replace", "--map", str(path), "--pair", "grey", "gray"], b"grey colour centre")
    assert result.text == "gray color center"


def test_tsv_malformed_line_is_named(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "glossary.tsv"
    path.write_text("colour\tcolor\ncentre center\n", encoding="utf-8")
    result = cli(["replace", "--map", str(path)], b"x")
    assert result.status == 2  # a usage error
    assert "line 2" in result.err
    assert result.err.count("\n") == 1
    assert result.out == b""


def test_a_refused_key_names_where_it_was_given(tmp_path: Path, cli: Cli) -> None:
    result = cli(["replace", "--pair", "", "x"], b"a")
    assert (result.status, result.err) == (
        2,
        "devutils replace: error: --pair: mapping keys must be non-empty, got ''\n",
    )
    path = tmp_path / "m.json"
    path.write_text('{"A": "x"}', encoding="utf-8")
    result = cli(["replace", "--map", str(path), "--pair", "a", "y", "--ignore-case"], b"a")
    assert result.status == 2  # a usage error
    assert result.err.startswith(
        f"devutils replace: error: --map {path} and --pair: keys 'A' and 'a' are equal"
    )


def test_key_given_twice_with_different_values(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"a": "b"}', encoding="utf-8")
    result = cli(["replace", "--map", str(path), "--pair", "a", "c"], b"a")
    assert result.status == 2  # a usage error
    assert "'a' given twice" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replace"], "no replacements"),
        (["replace", "--pair", "", "x"], "non-empty"),
        (["replace", "--map", "/nonexistent/map.json"], "cannot read --map"),
        (["replace", "--pair", "a"], "expected 2 arguments"),
        (["replace", "--bogus"], "unrecognized arguments"),
        (["nosuchcommand"], "invalid choice"),
        (
            ["replace", "--pair", "A", "x", "--pair", "a", "y", "--ignore-case"],
            "equal when case is ignored",
        ),
        # (each file was refused in turn, "Not a directory", after its rewrite was made)
        (["replace", "--in-place=/x", "--pair", "a", "b", "f.txt"], "names no file beside it"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str, cli: Cli) -> None:
    result = cli(args, b"a")
    assert result.status == 2  # a usage error
    assert message in result.err
    assert result.err.count("\n") == 1, result.err


def test_bad_json_map(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    assert "must be a string" in cli(["replace", "--map", str(path)]).err
    path.write_text("[1, 2]", encoding="utf-8")
    assert "expected a JSON object" in cli(["replace", "--map", str(path)]).err
    path.write_text("{oops", encoding="utf-8")
    assert "invalid JSON at line 1" in cli(["replace", "--map", str(path)]).err


def test_undecodable_stdin_is_refused(cli: Cli) -> None:
    result = cli(["replace", "--pair", "a", "b"], b"\xff\xfe a")
    assert result.status == 1
    assert "<stdin>: not valid utf-8 (byte 0)" in result.err
    assert result.out == b""


def test_bare_in_place_does_not_swallow_the_file_name(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"old\n")
    assert cli(["replace", "--pair", "old", "new", "--in-place", str(path)]).status == 0
    assert path.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_binary_and_undecodable_files_are_refused_others_processed(
    tmp_path: Path, cli: Cli
) -> None:
    binary = write(tmp_path / "image.png", b"old\x00\x01\x02")
    broken = write(tmp_path / "latin.txt", "old café".encode("latin-1"))
    good = write(tmp_path / "good.txt", b"old\n")
    result = cli(
        ["replace", "--in-place", "--pair", "old", "new", str(binary), str(broken), str(good)]
    )
    assert result.status == 1
    assert f"{binary}: looks binary" in result.err
    assert f"{broken}: not valid utf-8 (byte 7)" in result.err
    assert binary.read_bytes() == b"old\x00\x01\x02"
    assert broken.read_bytes() == "old café".encode("latin-1")
    assert good.read_bytes() == b"new\n"


def test_missing_file_is_exit_1_and_others_go_on(tmp_path: Path, cli: Cli) -> None:
    good = write(tmp_path / "good.txt", b"old\n")
    result = cli(
        ["replace", "--in-place", "--pair", "old", "new", str(tmp_path / "nope"), str(good)]
    )
    assert result.status == 1
    assert "No such file" in result.err
    assert good.read_bytes() == b"new\n"


def test_files_to_stdout_in_order_and_refused_file_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    first = write(tmp_path / "1.txt", b"one old\n")
    bad = write(tmp_path / "2.txt", b"old \xff\n")
    third = write(tmp_path / "3.txt", b"three old\n")
    result = cli(["replace", "--pair", "old", "new", str(first), str(bad), str(third)])
    assert result.status == 1
    assert result.out == b"one new\nthree new\n"
    assert first.read_bytes() == b"one old\n"


def test_dry_run_and_count(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.txt", b"old old\n")
    b = write(tmp_path / "b.txt", b"nothing\n")
    result = cli(["replace", "--dry-run", "--pair", "old", "new", str(a), str(b)])
    assert (result.status, result.text) == (0, f"{a}: 2\n{b}: 0\n")
    assert a.read_bytes() == b"old old\n"
    result = cli(["replace", "--in-place", "--count", "--pair", "old", "new", str(a), str(b)])
    assert result.err == f"{a}: 2\n{b}: 0\n"
    assert a.read_bytes() == b"new new\n"


def test_diff(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.txt", b"keep\nold line\nkeep\n")
    result = cli(["replace", "--diff", "--pair", "old", "new", str(a)])
    assert result.status == 0
    assert f"--- a/{a}\n+++ b/{a}\n" in result.text
    assert "-old line\n+new line\n" in result.text
    assert a.read_bytes() == b"keep\nold line\nkeep\n"
    counted = cli(["replace", "--diff", "--count", "--pair", "old", "new", str(a)])
    assert (counted.text, counted.err) == (result.text, f"{a}: 1\n")


def test_in_place_with_stdin_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    result = cli(["replace", "--in-place", "--pair", "a", "b"])
    assert result.status == 2  # a usage error
    assert result.err.count("\n") == 1
    path = write(tmp_path / "a.txt", b"a")
    dry = cli(["replace", "--in-place", "--dry-run", "--pair", "a", "b", str(path)])
    assert (dry.status, dry.text, path.read_bytes()) == (0, f"{path}: 1\n", b"a")


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


def test_directory_needs_recursive(tmp_path: Path, cli: Cli) -> None:
    make_tree(tmp_path)
    result = cli(["replace", "--in-place", "--pair", "old", "new", str(tmp_path)])
    assert result.status == 2  # a usage error
    assert "is a directory (use --recursive" in result.err


def test_recursive_skips_hidden_and_binary(tmp_path: Path, cli: Cli) -> None:
    make_tree(tmp_path)
    result = cli(["replace", "-r", "--in-place", "--pair", "old", "new", str(tmp_path)])
    assert (result.status, result.err) == (0, "")
    changed = sorted(
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if p.is_file() and p.read_bytes() == b"new\n"
    )
    assert changed == ["a.txt", "sub/b.txt"]
    assert (tmp_path / "sub/img.bin").read_bytes() == b"old\x00"


def test_recursive_skips_binary_files_whose_other_bytes_do_not_decode(
    tmp_path: Path, cli: Cli
) -> None:
    # an image, a program, an archive: each was "not valid utf-8 (byte 0)" and status 1
    write(tmp_path / "a.txt", b"old\n")
    write(tmp_path / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR old")
    write(tmp_path / "prog", b"\x7fELF\x02\x01\x01\x00\xff\xfe old")
    write(tmp_path / "big.bin", b"\xff\x00" * (17 << 20))  # past --diff's 32 MiB
    for mode in (["--in-place"], ["--dry-run"], ["--diff"]):
        result = cli(["replace", "-r", *mode, "--pair", "old", "new", str(tmp_path)])
        assert (result.status, result.err) == (0, ""), mode
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"
    assert (tmp_path / "logo.png").read_bytes().endswith(b" old")
    named = cli(["replace", "--diff", "--pair", "old", "new", str(tmp_path / "big.bin")])
    assert (named.status, named.err) == (
        1,
        f"devutils replace: {tmp_path / 'big.bin'}: looks binary (it has a NUL byte)\n",
    )


def test_recursive_hidden(tmp_path: Path, cli: Cli) -> None:
    make_tree(tmp_path)
    assert (
        cli(
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


def _kill_when(process: subprocess.Popen[bytes], seen: Callable[[], bool]) -> bool:
    """SIGKILL *process* as soon as *seen()* holds (polled); False if it ended first."""
    while process.poll() is None:
        if seen():
            process.kill()
            process.wait()
            return True
        time.sleep(0.001)  # a poll interval, not a delay the test depends on
    return False


@pytest.mark.parametrize("when", ["writing", "written"])
def test_sigkill_leaves_the_file_old_or_new(tmp_path: Path, when: str) -> None:
    old = b"the old colour of the centre\n" * 400_000  # about 12 MB
    new = old.replace(b"colour", b"color").replace(b"centre", b"center")
    path = tmp_path / "big.txt"

    def temporary_size() -> int:
        sizes = [leftover.stat().st_size for leftover in tmp_path.glob(".big.txt.*.devutils-tmp")]
        return max(sizes, default=-1)

    # killed while the temporary file is half written: the original, whole; or once it
    # holds the whole result: the original or the result, never a mix
    seen = (
        (lambda: temporary_size() > 0)
        if when == "writing"
        else (lambda: temporary_size() == len(new))
    )
    args = ["--chunk-size", "4096", "--pair", "colour", "color", "--pair", "centre", "center"]
    for _ in range(5):  # (a run can end before the poll sees it)
        path.write_bytes(old)
        for leftover in tmp_path.glob(".big.txt.*.devutils-tmp"):
            leftover.unlink()  # a kill can leave the temporary file, never a damaged original
        process = subprocess.Popen(
            [sys.executable, "-m", "devutils", "replace", "--in-place", *args, str(path)]
        )
        if _kill_when(process, seen):
            break
    else:
        pytest.fail(f"never saw the temporary file {when} in 5 runs")
    data = path.read_bytes()
    expected = [old] if when == "writing" else [old, new]
    assert data in expected, f"{len(data)} bytes, neither the old text nor the new"


def test_recipe_rename_identifiers(tmp_path: Path, cli: Cli) -> None:
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
    result = cli([*args, "--pair", "UserId", "AccountId", str(a), str(b)])
    assert result.status == 0
    assert a.read_bytes() == b"account_id = get(user_identity)\nclass AccountId: ...\n"
    assert b.read_bytes() == b"print(account_id)\n"


def test_recipe_glossary_on_a_corpus(tmp_path: Path, cli: Cli) -> None:
    glossary = write(
        tmp_path / "glossary.tsv", b"colour\tcolor\ncentre\tcenter\nrealise\trealize\n"
    )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write(corpus / "a.txt", b"I realise the colour of the centre.\n")
    write(corpus / "b.txt", b"Nothing here.\n")
    args = ["replace", "--map", str(glossary), "--whole-words", "--in-place", "--count", "-r"]
    result = cli([*args, str(corpus)])
    assert result.status == 0
    assert result.err == f"{corpus}/a.txt: 3\n{corpus}/b.txt: 0\n"
    assert (corpus / "a.txt").read_bytes() == b"I realize the color of the center.\n"


def test_recipe_preview_with_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "notes.txt", b"The colour of the sea\n")
    result = cli(["replace", "--diff", "--pair", "colour", "color", "notes.txt"])
    assert result.text == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n"
        "-The colour of the sea\n+The color of the sea\n"
    )
    assert (
        cli(["replace", "--dry-run", "--pair", "colour", "color", "notes.txt"]).text
        == "notes.txt: 1\n"
    )


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path: Path, cli: Cli) -> None:
    paths = [write(tmp_path / f"{i}.txt", b"old\n" * 100) for i in range(3)]
    quiet = cli(["replace", "--in-place", "--pair", "old", "new", *map(str, paths)])
    assert quiet.err == ""  # stderr is not a terminal here: no bar
    shown = cli(
        ["replace", "--in-place", "--progress", "always", "--pair", "new", "old", *map(str, paths)]
    )
    assert "devutils replace [" in shown.err
    assert "3/3 files" in shown.err
    assert all(p.read_bytes() == b"old\n" * 100 for p in paths)


def on_a_terminal(args: list[str]) -> bytes:
    """What ``devutils replace ARGS`` writes with stdout and stderr on one terminal."""
    leader, follower = os.openpty()
    command = [sys.executable, "-m", "devutils", "replace", *args]
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower):
        os.close(follower)
        seen = b""
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            seen += data
    os.close(leader)
    return seen


def test_the_bar_never_breaks_a_line_of_output_or_a_message(tmp_path: Path) -> None:
    # "...0.0/0.0 MBline X": output and messages were written after the bar, on its line
    first, second = write(tmp_path / "a.txt", b"line abc\n"), write(tmp_path / "b.txt", b"x abc\n")
    printed = on_a_terminal(["--pair", "abc", "X", str(first), str(second)])
    assert printed == b"line X\r\nx X\r\n"  # the output is the progress: no bar
    args = ["--in-place", "--pair", "abc", "X", str(first), str(tmp_path / "nosuch")]
    lines = on_a_terminal(args).split(b"\r\n")
    message = b"devutils replace: " + str(tmp_path / "nosuch").encode()
    (said,) = [line for line in lines if message in line]
    assert said.endswith(b"\x1b[K" + message + b": No such file or directory"), said
    assert b"devutils replace [" in lines[-1]  # the bar is drawn again below, then cleared


def test_the_bar_is_cleared_only_where_something_is_written_below_it(
    tmp_path: Path, cli: Cli
) -> None:
    # it was cleared and redrawn for every file: 6,002 redraws for 3,000 files
    paths = [write(tmp_path / f"{i}.txt", b"old\n") for i in range(5)]
    args = ["replace", "--in-place", "--progress", "always", "--pair", "old", "new"]
    shown = cli([*args, *map(str, paths)])
    assert (shown.status, shown.err.count("\x1b[K")) == (0, 1)  # once, at the end


def test_a_file_named_twice_is_rewritten_once(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"cat dog\n")
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    args = ["replace", "--in-place", "--pair", "cat", "dog", "--pair", "dog", "cat"]
    assert cli([*args, str(path), str(path), str(link)]).status == 0
    assert path.read_bytes() == b"dog cat\n"


# -- faults: signals, closed pipes, full disks, concurrent writers ---------------------------
#
# A test that must catch a run in the middle of its work waits for what it can see (a
# temporary file of a rewrite, a spool file, a pipe the test does not read), never for a
# time tuned to one machine: `frozen_mid_rewrite` stops the run's process group with
# SIGSTOP at a moment when a rewrite's temporary file exists, so whatever the test does
# next finds the run in the middle of a file, on a fast machine or a loaded one.

WORDS = [f"w{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcdefgh"]  # 512
STOPS_WITHIN = 10.0  # seconds: "at once" on a slow, loaded machine (bench/bench_signals.py)
needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="watches the run's processes in /proc"
)


def slow_inputs(folder: Path, files: int = 6, words: int = 600_000) -> tuple[list[Path], Path]:
    """*files* files of random words and a map that upper-cases every word (a few MB each:
    enough that a run is long against polling a folder)."""
    import random

    rng = random.Random(0)
    paths = []
    for number in range(files):
        path = folder / f"f{number}.txt"
        path.write_text(" ".join(rng.choice(WORDS) for _ in range(words)), encoding="utf-8")
        paths.append(path)
    table = folder.parent / f"{folder.name}-map.json"
    table.write_text(json.dumps({word: word.upper() for word in WORDS}), encoding="utf-8")
    return paths, table


def devutils_replace(
    args: list[str], table: Path, temporary: Path, **kwargs: object
) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "devutils", "replace", "-w", "--chunk-size", "4096"]
    process: subprocess.Popen[str] = subprocess.Popen(
        [*command, "--map", str(table), *args],
        text=True,
        env={**os.environ, "TMPDIR": str(temporary)},
        start_new_session=True,  # its own process group: a Ctrl-C reaches it and its workers
        **kwargs,  # type: ignore[call-overload]
    )
    return process


def group_members(group: int) -> list[int]:
    """The live processes of process group *group* (from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == group and fields[0] != "Z":
                    members.append(int(entry.name))
    return members


def _all_stopped(group: int) -> bool:
    states = []
    for pid in group_members(group):
        with contextlib.suppress(OSError, IndexError):
            states.append(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0])
    return all(s in "tT" for s in states)


def frozen_mid_rewrite(
    process: subprocess.Popen[str],
    folder: Path,
    *,
    after: int = 0,
    paths: Sequence[Path] = (),
    unfinished: Path | None = None,
) -> list[Path]:
    """Stop *process*'s group (SIGSTOP) while a rewrite's temporary file exists in *folder*
    (and, with *after*, once that many of *paths* are rewritten; with *unfinished*, while
    the temporary file holds some but not all of that file's length: the rewrite has read
    the old text and is still writing, before its last check that the file is unchanged);
    return the temporary files. The caller sends SIGCONT (`thaw`)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be caught mid-rewrite"
        ready = sum(state(path) == "new" for path in paths) >= after
        if ready and list(folder.glob(".*.devutils-tmp")):
            os.killpg(process.pid, signal.SIGSTOP)
            while not _all_stopped(process.pid):
                time.sleep(0.001)
            caught = list(folder.glob(".*.devutils-tmp"))
            if unfinished is not None:
                size = unfinished.stat().st_size
                caught = [p for p in caught if p.exists() and 0 < p.stat().st_size < size]
            if caught:
                return caught
            thaw(process)  # between two files: try again
        time.sleep(0.001)
    pytest.fail("no rewrite seen in 120 s")


def thaw(process: subprocess.Popen[str]) -> None:
    os.killpg(process.pid, signal.SIGCONT)


def state(path: Path) -> str:
    data = path.read_text(encoding="utf-8")
    if data == data.lower():
        return "old"
    return "new" if data == data.upper() else "MIXED"


def no_litter(folder: Path, temporary: Path) -> None:
    assert sorted(p.name for p in folder.glob(".*devutils-tmp")) == []
    assert sorted(p.name for p in temporary.iterdir()) == []


@needs_proc
@pytest.mark.parametrize(
    ("signum", "jobs", "after"),
    [
        (signal.SIGINT, 2, 0),
        (signal.SIGINT, 2, 2),
        (signal.SIGINT, 1, 2),
        (signal.SIGTERM, 2, 2),
        (signal.SIGTERM, 1, 0),
        (signal.SIGHUP, 2, 2),
        (signal.SIGQUIT, 1, 0),  # Ctrl-\: its default would dump core, leaving the tmp
        (signal.SIGQUIT, 2, 2),
        (signal.SIGUSR1, 1, 2),  # (a default action that terminates, as SIGALRM's)
    ],
)
def test_a_signal_stops_at_once_and_leaves_nothing_behind(
    tmp_path: Path, signum: int, jobs: int, after: int
) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder)
    process = devutils_replace(
        ["--in-place", "-j", str(jobs), *map(str, paths)], table, temporary, stderr=subprocess.PIPE
    )
    frozen_mid_rewrite(process, folder, after=after, paths=paths)
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)  # Ctrl-C: the terminal signals the whole group
    else:
        process.send_signal(signum)
    sent = time.monotonic()
    thaw(process)
    _, err = process.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert process.returncode == 128 + signum, err
    states = [state(path) for path in paths]
    assert "MIXED" not in states
    done = states.count("new")
    assert done >= after
    assert err == (
        f"devutils replace: interrupted: {done} of 6 files done; the others are unchanged\n"
    )
    assert done < len(paths)  # a file not started is left alone
    no_litter(folder, temporary)
    assert stopped < STOPS_WITHIN, f"took {stopped:.2f} s to stop"


@needs_proc
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_hangup_that_nohup_ignores_is_ignored(tmp_path: Path, jobs: int) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=3, words=200_000)
    process = devutils_replace(
        ["--in-place", "-j", str(jobs), *map(str, paths)],
        table,
        temporary,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # as nohup does
    )
    frozen_mid_rewrite(process, folder)
    os.killpg(process.pid, signal.SIGHUP)  # the terminal closed
    thaw(process)
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (0, "")
    assert [state(path) for path in paths] == ["new"] * 3
    no_litter(folder, temporary)


def holder_of(temporary: Path, group: int) -> int:
    """The process of *group* that has *temporary* open (the worker rewriting)."""
    for pid in group_members(group):
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                if os.readlink(fd) == str(temporary):
                    return pid
    pytest.fail(f"no process has {temporary} open")


@needs_proc
def test_a_worker_killed_mid_rewrite_is_one_line_saying_how_far_the_run_got(
    tmp_path: Path,
) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder)
    process = devutils_replace(
        ["--in-place", "-j", "2", *map(str, paths)], table, temporary, stderr=subprocess.PIPE
    )
    caught = frozen_mid_rewrite(process, folder)
    os.kill(holder_of(caught[0].resolve(), process.pid), signal.SIGKILL)  # the OOM killer
    thaw(process)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    states = [state(path) for path in paths]
    assert "MIXED" not in states
    done = states.count("new")
    assert err == (
        f"devutils replace: error: a --jobs worker process died (killed, or out of memory):"
        f" {done} of 6 files done; the others are unchanged (a .NAME.XXXXXXXX.devutils-tmp"
        " may be left beside the file it was rewriting)\n"
    )
    assert len(list(folder.glob(".*.devutils-tmp"))) <= 1  # the killed worker's only
    assert sorted(temporary.iterdir()) == []


@needs_proc
def test_ctrl_c_after_a_stop_and_continue_stops_the_workers_at_once(tmp_path: Path) -> None:
    # Ctrl-Z, then `kill -INT %1` and `fg`: the signal waits while the run is stopped, and
    # any thread may take it when it continues. Taken by a helper thread of the pool, it
    # would go unnoticed until a whole batch of files (here 25 a worker) was done.
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=200, words=40_000)
    process = devutils_replace(
        ["--in-place", "-j", "2", *map(str, paths)], table, temporary, stderr=subprocess.PIPE
    )
    frozen_mid_rewrite(process, folder)
    os.killpg(process.pid, signal.SIGINT)
    thaw(process)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    done = [state(path) for path in paths].count("new")
    assert done < 25, f"{done} files were rewritten after Ctrl-C"
    assert err == (
        f"devutils replace: interrupted: {done} of 200 files done; the others are unchanged\n"
    )
    no_litter(folder, temporary)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_closed_pipe_is_quiet_and_leaves_nothing(tmp_path: Path, jobs: int) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=3, words=100_000)
    process = devutils_replace(
        ["-j", str(jobs), *map(str, paths)],
        table,
        temporary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stdout.read(1)  # `| head -c1`
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (0, "")
    no_litter(folder, temporary)


def test_sigint_in_stdout_mode_removes_the_spool(tmp_path: Path) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=8)
    process = devutils_replace(
        ["-j", "2", *map(str, paths)],
        table,
        temporary,
        stdout=subprocess.PIPE,  # not read: the run cannot finish until the test reads it
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not list(temporary.glob("devutils-replace-*/*")):  # a worker's output is spooled
        assert process.poll() is None, "the run ended with its stdout unread"
        assert time.monotonic() < deadline, "no spooled output in 120 s"
        time.sleep(0.001)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err.startswith("devutils replace: interrupted: ")
    no_litter(folder, temporary)


@needs_proc
def test_sigkill_leaves_a_temporary_file_named_as_documented(tmp_path: Path) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    (path,), table = slow_inputs(folder, files=1)
    process = devutils_replace(["--in-place", str(path)], table, temporary)
    frozen_mid_rewrite(process, folder)
    process.kill()
    thaw(process)
    process.wait(timeout=60)
    assert state(path) == "old"
    (leftover,) = folder.glob(".f0.txt.*.devutils-tmp")  # the pattern docs/cli.md names
    assert len(leftover.name.split(".")) == 5


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a parent-death signal is Linux's")
def test_the_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    # After a SIGKILL of the run, its --jobs workers went on: they finished the files
    # they had begun, then waited for work forever.
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=4)
    process = devutils_replace(["--jobs", "2", "--in-place", *map(str, paths)], table, temporary)
    try:
        frozen_mid_rewrite(process, folder)
        workers = [pid for pid in group_members(process.pid) if pid != process.pid]
        states = [state(path) for path in paths]
        assert workers
        process.kill()
        process.wait(timeout=60)
        thaw(process)
        deadline = time.monotonic() + 60
        while set(workers) & set(group_members(process.pid)):
            assert time.monotonic() < deadline, "the workers outlived their parent"
            time.sleep(0.01)
        assert [state(path) for path in paths] == states  # nothing rewritten after it
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


@needs_proc
def test_a_file_changed_during_the_rewrite_is_left_to_the_other_writer(tmp_path: Path) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    (path,), table = slow_inputs(folder, files=1)
    process = devutils_replace(["--in-place", str(path)], table, temporary, stderr=subprocess.PIPE)
    frozen_mid_rewrite(process, folder, unfinished=path)
    path.write_text("another writer's text\n", encoding="utf-8")  # like an editor saving
    thaw(process)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err == (
        f"devutils replace: {path}: changed by another process during the rewrite; left as it is\n"
    )
    assert path.read_text(encoding="utf-8") == "another writer's text\n"
    no_litter(folder, temporary)


def worker_count(pid: int) -> int:
    """Child processes of *pid* running the same program (the pool's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    own = Path(f"/proc/{pid}/cmdline").read_bytes()
    count = 0
    for child in children:
        with contextlib.suppress(OSError):
            count += Path(f"/proc/{child}/cmdline").read_bytes() == own
    return count


@needs_proc
def test_jobs_never_start_more_workers_than_files(tmp_path: Path) -> None:
    folder, temporary = tmp_path / "files", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    paths, table = slow_inputs(folder, files=2)
    process = devutils_replace(["--in-place", "-j", "50", *map(str, paths)], table, temporary)
    frozen_mid_rewrite(process, folder)  # the workers are at work
    try:
        assert 1 <= worker_count(process.pid) <= 2
    finally:
        thaw(process)
        process.wait(timeout=60)
    assert process.returncode == 0
    assert [state(path) for path in paths] == ["new", "new"]


@pytest.mark.parametrize("jobs", ["100000", "2147483648", "257"])
def test_jobs_past_the_cap_is_a_usage_error(jobs: str, cli: Cli) -> None:
    result = cli(["replace", "-j", jobs, "--pair", "a", "b"])
    assert result.status == 2  # a usage error
    assert result.err == (
        f"devutils replace: error: argument -j/--jobs: must be at most 256, got {jobs!r}\n"
    )


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="needs /proc")
def test_the_message_names_the_real_cause(cli: Cli) -> None:
    result = cli(["replace", "--in-place", "--pair", "0", "O", "/proc/loadavg"])
    assert result.status == 1
    assert "cannot create a temporary file in /proc" in result.err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_stdout_onto_a_full_disk_names_stdout(tmp_path: Path, jobs: str) -> None:
    files = [write(tmp_path / f"{n}.txt", b"a b a\n" * 1000) for n in range(3)]
    with open("/dev/full", "wb") as full:
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "devutils",
                "replace",
                "-j",
                jobs,
                "--pair",
                "a",
                "b",
                *map(str, files),
            ],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    assert (completed.returncode, completed.stderr) == (
        1,
        "devutils replace: error: stdout: No space left on device\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.txt", "1.txt", "2.txt"]


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of *size* mounted at *folder* (root only), unmounted afterwards."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_output_onto_a_disk_that_fills_up_is_an_error(tmp_path: Path) -> None:
    source = write(tmp_path / "in.txt", b"a " * 100_000)  # 200 KB in, 400 KB out
    with small_tmpfs(tmp_path / "disk") as disk:
        with open(disk / "out", "wb") as out:
            completed = subprocess.run(
                [sys.executable, "-m", "devutils", "replace", "--pair", "a", "bb", str(source)],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
        assert (completed.returncode, completed.stderr) == (
            1,
            "devutils replace: error: stdout: No space left on device\n",
        )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_temporary_directory_is_named_not_the_file_read(tmp_path: Path, jobs: str) -> None:
    # Output waits in the temporary directory (past 16 MiB, or for --jobs): its full disk
    # was reported as the file's, "big.txt: No space left on device".
    big = write(tmp_path / "big.txt", b"colour " * 3_000_000)  # 21 MB
    small = write(tmp_path / "small.txt", b"colour\n")
    with small_tmpfs(tmp_path / "tmp", size="64k") as folder:
        completed = run_replace(
            ["-j", jobs, "--pair", "colour", "color", str(big), str(small)],
            env={**os.environ, "TMPDIR": str(folder)},
        )
        assert sorted(os.listdir(folder)) == []  # nothing left behind
    assert completed.returncode == 1
    assert completed.stderr.decode() == (
        f"devutils replace: {big}: cannot hold the output in {folder}: No space left on device\n"
    )
    assert completed.stdout.endswith(b"color\n")  # the small file's output, all the same


def test_in_place_on_a_full_disk_keeps_the_original(tmp_path: Path, cli: Cli) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        original = b"a " * 60_000  # 120 KB: the rewrite (240 KB) does not fit beside it
        path = write(disk / "notes.txt", original)
        result = cli(["replace", "--in-place", "--pair", "a", "bb", str(path)])
        assert result.status == 1
        assert result.err.startswith(f"devutils replace: {path}: ")
        assert "No space left on device" in result.err
        assert path.read_bytes() == original
        assert sorted(p.name for p in disk.iterdir()) == ["notes.txt"]


# -- --dry-run with --in-place, and GNU tools' habits -------------------------------------------


def test_dry_run_in_place_counts_what_the_rewrite_would(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "tree"
    folder.mkdir()
    target = write(folder / "a.txt", b"colour colour\n")
    write(folder / "b.txt", b"nothing\n")
    (folder / "link.txt").symlink_to(target)
    args = ["replace", "-r", "--pair", "colour", "color", str(folder)]
    dry = cli([*args, "--dry-run", "--in-place"])
    assert dry.status == 0
    assert dry.text == f"{folder}/a.txt: 2\n{folder}/b.txt: 0\n"  # the link's target once
    assert target.read_bytes() == b"colour colour\n"
    assert cli([*args, "--dry-run"]).text == dry.text
    real = cli([*args, "--in-place", "--count"])
    assert real.err == dry.text.replace(f"{folder}/", f"{folder}/")
    diff = cli(["replace", "--dry-run", "--diff", "--pair", "color", "colour", str(target)])
    assert diff.text.splitlines()[2:] == ["@@ -1 +1 @@", "-color color", "+colour colour"]
    assert target.read_bytes() == b"color color\n"


def test_a_dry_run_refuses_what_the_real_run_refuses(tmp_path: Path, cli: Cli) -> None:
    # --dry-run --in-place, "a rehearsal of it", said "l1.txt: 1" and 0 where the rewrite
    # refuses a result the encoding cannot hold (status 1), and the --map file (status 2).
    path = write(tmp_path / "l1.txt", b"a\n")
    args = ["replace", "--encoding", "latin-1", "--pair", "a", "\u65e5"]
    refusal = f"devutils replace: {path}: the result cannot be encoded in latin-1"
    for mode in (["--in-place"], ["--dry-run", "--in-place"], ["--dry-run"], []):
        result = cli([*args, *mode, str(path)])
        assert (result.status, result.out) == (1, b""), mode
        assert result.err.startswith(refusal), mode
    assert path.read_bytes() == b"a\n"
    piped = cli([*args, "--dry-run"], b"a\n")
    assert (piped.status, piped.out) == (1, b"")
    assert piped.err.startswith("devutils replace: <stdin>: the result cannot be encoded")
    glossary = write(tmp_path / "g.tsv", b"colour\tcolor\n")
    # (--diff printed the glossary's diff, which patch applies: it rewrote itself)
    for mode in (["--in-place"], ["--dry-run", "--in-place"], ["--diff"]):
        result = cli(["replace", *mode, "--map", str(glossary), str(glossary)])
        assert (result.status, result.err) == (
            2,
            f"devutils replace: error: {glossary} is the --map file: it is never rewritten\n",
        ), mode
    shown = cli(["replace", "--dry-run", "--map", str(glossary), str(glossary)])
    assert (shown.status, shown.text) == (0, f"{glossary}: 1\n")  # as its stdout run is
    assert glossary.read_bytes() == b"colour\tcolor\n"


def test_a_map_value_with_a_lone_surrogate_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    # A JSON "\udc80" was refused once per file, as a result that cannot be encoded
    # (status 1), or passed silently where nothing matched; --pair's TO is checked first.
    glossary = write(tmp_path / "m.json", b'{"a": "x\\udc80"}')
    for data in (b"a\n", b"nothing to replace\n"):
        result = cli(["replace", "--map", str(glossary)], data)
        assert (result.status, result.out) == (2, b"")
        assert result.err == (
            f"devutils replace: error: --map {glossary}: replacements must be Unicode text, "
            "got 'x\\udc80' with a lone surrogate at index 1 (the value of 'a': a \\u escape "
            "without its pair)\n"
        )


def test_options_and_files_mix(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.txt", b"x\n")
    b = write(tmp_path / "b.txt", b"x x\n")
    result = cli(["replace", str(a), "--pair", "x", "y", str(b), "--count"])
    assert (result.status, result.text) == (0, "y\ny y\n")


def test_every_word_after_a_double_dash_is_a_file(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # argparse's parse_intermixed_args (Python 3.11) read "-n" after "--" as --dry-run,
    # and "--in-place=.orig" as --in-place: a file named so was never read, or another
    # file rewritten.
    monkeypatch.chdir(tmp_path)
    for name in ("-n", "--", "--in-place=.orig", "-f"):
        write(tmp_path / name, b"colour " + name.encode() + b"\n")
    notes = write(tmp_path / "notes.txt", b"colour\n")
    result = cli(["replace", "--pair", "colour", "color", "--", "-n", "--", "--in-place=.orig"])
    assert (result.status, result.err) == (0, "")
    assert result.text == "color -n\ncolor --\ncolor --in-place=.orig\n"
    result = cli(["replace", "--pair", "colour", "color", "--", "--in-place=.orig", "notes.txt"])
    assert notes.read_bytes() == b"colour\n"  # printed, not rewritten
    assert not (tmp_path / "notes.txt.orig").exists()
    assert result.text == "color --in-place=.orig\ncolor\n"
    result = cli(["replace", "--in-place", "--pair", "colour", "color", "--", "-f"])
    assert (result.status, (tmp_path / "-f").read_bytes()) == (0, b"color -f\n")


def test_keys_and_values_may_start_with_a_dash(cli: Cli) -> None:
    result = cli(
        ["replace", "--pair", "-v", "--verbose", "--pair", "-q", "-"], stdin=b"cmd -v -q\n"
    )
    assert (result.status, result.text) == (0, "cmd --verbose -\n")


def test_the_map_from_stdin(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path / "a.txt", b"colour\n")
    result = cli(["replace", "--map", "-", str(path)], stdin=b"colour\tcolor\n")
    assert (result.status, result.text) == (0, "color\n")
    both = cli(["replace", "--map", "-"], stdin=b"colour\tcolor\n")
    assert both.status == 2
    assert "stdin (-) can be read only once: as --map - or as the input" in both.err
    twice = cli(["replace", "--pair", "a", "b", "-", "-"], stdin=b"a\n")
    assert (twice.status, twice.err.splitlines()[-1]) == (
        2,
        "devutils replace: error: stdin (-) can be read only once: name it once",
    )


# -- every word, locale, encoding, map and name --------------------------------------------


def run_replace(
    args: list[str], *, stdin: bytes | None = b"", env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[bytes]:
    """``devutils replace ARGS`` in a process of its own (stdin None: closed)."""
    command = [sys.executable, "-m", "devutils", "replace", *args]
    if stdin is None:  # `<&-`: the shell closes descriptor 0 before the command starts
        command = ["sh", "-c", 'exec "$@" <&-', "sh", *command]
    completed: subprocess.CompletedProcess[bytes] = subprocess.run(
        command, input=stdin, capture_output=True, env=env, check=False, **kw
    )
    return completed


@pytest.mark.parametrize(
    ("pair", "text", "expected"),
    [
        (["--", "—"], b"a -- b\n", b"a \xe2\x80\x94 b\n"),
        (["a", "--"], b"a b\n", b"-- b\n"),
        (["-n", "--in-place"], b"-n\n", b"--in-place\n"),
        (["--pair", ":"], b"--pair\n", b":\n"),
    ],
)
def test_any_word_is_a_pair_even_dashes(pair: list[str], text: bytes, expected: bytes) -> None:
    result = run_replace(["--pair", *pair], stdin=text)
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, b"")


@pytest.mark.parametrize(
    ("args", "status", "out", "err"),
    [
        (["--pai", "a", "b"], 0, b"b\n", b""),  # an abbreviation argparse takes
        (["--in-pla", "--pair", "a", "b"], 2, b"", b"--in-place needs files"),  # not ambiguous
        (["--pair-from", "a"], 2, b"", b"unrecognized arguments: --pair-from"),  # no such flag
        (["--pair-t", "a"], 2, b"", b"unrecognized arguments: --pair-t"),
        (["--pai", "a"], 2, b"", b"argument --pair: expected 2 arguments"),
        (["--pa", "a", "-v"], 0, b"-v\n", b""),  # abbreviated, it takes any two words too
        (["--in-pla", ".bak", "--pa", "a", "b"], 2, b"", b"only as --in-place=.bak"),
    ],
)
def test_the_pair_flags_are_what_help_shows(
    args: list[str], status: int, out: bytes, err: bytes
) -> None:
    result = run_replace(args, stdin=b"a\n")
    assert (result.returncode, result.stdout) == (status, out), result.stderr
    assert err in result.stderr
    assert result.stderr.count(b"\n") == (1 if err else 0)  # one line, no traceback


def test_the_flags_read_before_argparse_are_abbreviated_as_argparse_would() -> None:
    # prepare_argv reads --in-place and --pair itself, abbreviated too (--in-pla .bak took
    # .bak as the suffix): each shortest abbreviation it takes must begin no other flag.
    from devutils.cli import build_parser
    from devutils.cli.replace.arguments import _SHORTEST

    (commands,) = (a for a in build_parser()._actions if a.dest == "command")
    replace = commands.choices["replace"]  # type: ignore[index]
    flags = {option for action in replace._actions for option in action.option_strings}
    for flag, shortest in _SHORTEST.items():
        assert flag in flags
        assert [other for other in flags if other.startswith(shortest)] == [flag]


@pytest.mark.parametrize(
    "args",
    [[], ["--diff"], ["--dry-run"], ["-"], ["--count"]],
)
def test_a_closed_stdin_is_one_line_not_a_traceback(args: list[str]) -> None:
    result = run_replace(["--pair", "a", "b", *args], stdin=None)
    assert result.returncode == 1
    assert (
        result.stderr
        == b"devutils replace: error: stdin is closed: give FILEs to read, or open stdin\n"
    )


def test_a_closed_stdin_for_the_map_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"a\n")
    result = run_replace(["--map", "-", str(path)], stdin=None)
    assert result.returncode == 2  # a usage error
    assert result.stderr == b"devutils replace: error: cannot read --map -: stdin is closed\n"


@pytest.fixture(scope="module")
def latin1_locale(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of an ``en_US.ISO-8859-1`` locale, built with localedef."""
    if shutil.which("localedef") is None:
        pytest.skip("needs localedef (the locales package) to build an ISO-8859-1 locale")
    folder = tmp_path_factory.mktemp("locales")
    built = subprocess.run(
        ["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
        capture_output=True,
        check=False,
    )
    if not (folder / "en_US.ISO-8859-1").exists():
        pytest.skip(f"localedef could not build en_US.ISO-8859-1: {built.stderr[-200:]!r}")
    env = {**os.environ, "LOCPATH": str(folder), "LC_ALL": "en_US.ISO-8859-1"}
    env.pop("PYTHONUTF8", None)
    encoding = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if encoding != "iso8859-1":
        pytest.skip(f"Python did not take the locale's encoding (got {encoding})")
    return env


def test_words_mean_the_same_under_a_latin1_locale(
    tmp_path: Path, latin1_locale: dict[str, str]
) -> None:
    path = write(tmp_path / "u.txt", "ストロベリー and colour\n".encode())
    args = ["--pair", "ストロベリー", "strawberry", "--pair", "colour", "ストロベリー"]
    result = run_replace([*args, str(path)], env=latin1_locale)
    assert (result.returncode, result.stdout) == (0, "strawberry and ストロベリー\n".encode())
    sed = subprocess.run(
        ["sed", "s/ストロベリー/strawberry/", str(path)],
        env=latin1_locale,
        capture_output=True,
        check=False,
    )
    assert sed.stdout.startswith(b"strawberry and ")  # as sed does in the same locale
    assert run_replace([*args, "--in-place", str(path)], env=latin1_locale).returncode == 0
    assert path.read_text(encoding="utf-8") == "strawberry and ストロベリー\n"


def test_a_latin1_word_typed_in_a_latin1_locale_still_matches(
    tmp_path: Path, latin1_locale: dict[str, str]
) -> None:
    path = write(tmp_path / "l.txt", "café\n".encode("latin-1"))
    # the bytes a latin-1 terminal sends for "café": not UTF-8, so read in the locale
    command: list[str | bytes] = [sys.executable, "-m", "devutils", "replace", "--encoding"]
    result = subprocess.run(
        [*command, "latin-1", "--pair", b"caf\xe9", b"tea", str(path)],
        env=latin1_locale,
        capture_output=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, b"tea\n")


def test_a_to_word_that_is_not_utf8_is_a_usage_error_as_a_from_word_is(tmp_path: Path) -> None:
    # it was refused per file ("cannot be encoded in utf-8"), or passed where none matched
    first, second = write(tmp_path / "a.txt", b"abc\n"), write(tmp_path / "b.txt", b"abc\n")
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    command: list[str | bytes] = [sys.executable, "-m", "devutils", "replace", "--pair"]
    cases: list[tuple[list[bytes], list[str]]] = [
        ([b"abc", b"caf\xe9"], ["--in-place", str(first), str(second)]),
        ([b"xyz", b"\xe9"], []),
    ]
    for pair, files in cases:
        result = subprocess.run(
            [*command, *pair, *files], input=b"abc\n", env=env, capture_output=True, check=False
        )
        assert result.returncode == 2
        assert result.stderr.startswith(b"devutils replace: error: --pair: replacements must be")
        assert result.stderr.count(b"\n") == 1
    assert first.read_bytes() == second.read_bytes() == b"abc\n"


def test_a_dry_run_names_a_file_in_the_locale_s_encoding(
    tmp_path: Path, latin1_locale: dict[str, str]
) -> None:
    name = b"caf\xe9.txt"  # "café.txt" as a latin-1 system names it
    write(tmp_path / os.fsdecode(name), b"colour\n")
    args = ["--pair", "colour", "color", "--count", "--dry-run"]
    command: list[str | bytes] = [sys.executable, "-m", "devutils", "replace", *args, name]
    result = subprocess.run(
        command, cwd=tmp_path, env=latin1_locale, capture_output=True, check=False
    )
    # named by its own bytes, as ls names it, not re-encoded as UTF-8
    assert (result.returncode, result.stdout) == (0, name + b": 1\n"), result.stderr
    assert result.stderr == b""  # a dry run's counts are its stdout


@pytest.mark.parametrize(
    "encoding",
    [
        "unicode_escape",
        "raw_unicode_escape",
        "idna",
        "punycode",
        "utf-7",
        "rot13",
        "base64",
        "hex",
        "zlib",
        "undefined",
        "bz2",
        "uu",
        "quopri",
    ],
)
def test_an_encoding_that_would_rewrite_the_file_is_a_usage_error(
    tmp_path: Path, encoding: str
) -> None:
    path = write(tmp_path / "c.txt", b"colour.x\n")
    result = run_replace(
        ["--encoding", encoding, "--in-place", "--pair", "colour", "color", str(path)]
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(b"devutils replace: error: ")
    assert b"Traceback" not in result.stderr
    assert encoding.encode() in result.stderr
    assert path.read_bytes() == b"colour.x\n"


@pytest.mark.skipif("hz" not in LOSSY, reason="this Python's hz encoder writes faithfully")
def test_an_encoding_this_python_writes_wrongly_is_a_usage_error(tmp_path: Path) -> None:
    data = ("colour\n" + "字a" * 9 + "~字\n").encode("hz")
    path = write(tmp_path / "c.txt", data)
    result = run_replace(["--encoding", "hz", "--in-place", "--pair", "colour", "color", str(path)])
    assert result.returncode == 2, result.stderr
    assert b"--encoding hz: this Python's encoder for it loses bytes" in result.stderr
    assert path.read_bytes() == data


def test_utf8_sig_neither_adds_nor_drops_a_bom(tmp_path: Path) -> None:
    plain = write(tmp_path / "plain.txt", b"colour\n")
    marked = write(tmp_path / "marked.txt", b"\xef\xbb\xbfcolour\n")
    args = ["--encoding", "utf-8-sig", "--in-place", "--pair", "colour", "color"]
    assert run_replace([*args, str(plain), str(marked)]).returncode == 0
    assert plain.read_bytes() == b"color\n"
    assert marked.read_bytes() == b"\xef\xbb\xbfcolor\n"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "UTF16"])
def test_utf16_without_a_byte_order_asks_for_one(encoding: str) -> None:
    result = run_replace(["--encoding", encoding, "--pair", "a", "b"], stdin=b"")
    assert result.returncode == 2  # a usage error
    assert b"give the byte order" in result.stderr


def test_a_big_endian_file_stays_big_endian(tmp_path: Path) -> None:
    path = write(tmp_path / "be.txt", "\ufeffcolour\n".encode("utf-16-be"))
    args = ["--encoding", "utf-16-be", "--in-place", "--pair", "colour", "color"]
    assert run_replace([*args, str(path)]).returncode == 0
    assert path.read_bytes() == "\ufeffcolor\n".encode("utf-16-be")


@pytest.mark.parametrize(
    "separator", ["\u2028", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\r"]
)
def test_a_tsv_value_may_hold_any_character_but_a_newline_or_tab(
    tmp_path: Path, separator: str
) -> None:
    table = write(tmp_path / "map.tsv", f"a\tA{separator}x\nb\tB\r\n\nc\tC\n".encode())
    result = run_replace(["--map", str(table)], stdin=b"abc\n")
    assert (result.returncode, result.stdout.decode()) == (0, f"A{separator}xBC\n")


def test_a_tsv_error_names_the_right_line(tmp_path: Path) -> None:
    table = write(tmp_path / "map.tsv", "a\tA\u2028\n\x0cb\tB\nbroken line\n".encode())
    result = run_replace(["--map", str(table)], stdin=b"")
    assert result.returncode == 2  # a usage error
    assert f"--map {table} line 3: expected 2 tab-separated columns".encode() in result.stderr


def test_stdin_refused_midway_keeps_the_output_before_it() -> None:
    result = run_replace(["--pair", "x", "z"], stdin=b"x\ny\xff\n")
    assert (result.returncode, result.stdout) == (1, b"z\n")
    assert result.stderr.startswith(b"devutils replace: <stdin>: not valid utf-8 (byte 3)")


def test_a_map_file_s_name_is_shown_as_every_file_s_is(tmp_path: Path) -> None:
    # A --map name that is not UTF-8 was its repr, 'caf\\udce9.tsv', which no shell reads
    # back; a printable one was quoted in some messages and bare in others.
    name = os.fsdecode(b"caf\xe9.tsv")
    expected = "$'caf\\xe9.tsv'"
    missing = run_replace(["--map", name], cwd=tmp_path)
    write(tmp_path / name, b"a\tb\tc\n")
    broken = run_replace(["--map", name], cwd=tmp_path)
    write(tmp_path / name, b"a\tb\n")
    twice = run_replace(["--map", name, "--pair", "a", "c"], cwd=tmp_path)
    assert [result.stderr.decode() for result in (missing, broken, twice)] == [
        f"devutils replace: error: cannot read --map {expected}: No such file or directory\n",
        f"devutils replace: error: --map {expected} line 1: expected 2 tab-separated columns, "
        "got 3: 'a\\tb\\tc' (read as TSV: not named .json and not a JSON object)\n",
        f"devutils replace: error: key 'a' given twice with different values: 'b' (--map "
        f"{expected}) and 'c' (--pair)\n",
    ]


def test_a_json_key_given_twice_is_an_error_as_in_a_tsv(tmp_path: Path) -> None:
    table = write(tmp_path / "map.json", b'{"colour": "color", "colour": "colr"}')
    result = run_replace(["--map", str(table)], stdin=b"colour\n")
    assert result.returncode == 2  # a usage error
    assert (
        result.stderr
        == (
            f"devutils replace: error: --map {table}: key 'colour' given twice with "
            "different values 'color' and 'colr'\n"
        ).encode()
    )
    same = write(tmp_path / "same.json", b'{"colour": "color", "colour": "color"}')
    assert run_replace(["--map", str(same)], stdin=b"colour\n").stdout == b"color\n"


def test_recursive_does_not_follow_symlinks_out_of_the_tree(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside.txt", b"colour\n")
    (tmp_path / "elsewhere").mkdir()
    write(tmp_path / "elsewhere" / "deep.txt", b"colour\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    inside = write(tree / "inside.txt", b"colour\n")
    (tree / "link.txt").symlink_to(outside)
    (tree / "linked-dir").symlink_to(tmp_path / "elsewhere")
    result = run_replace(["-r", "--in-place", "--count", "--pair", "colour", "color", str(tree)])
    assert (result.returncode, result.stderr) == (0, f"{tree}/inside.txt: 1\n".encode())
    assert inside.read_bytes() == b"color\n"
    assert outside.read_bytes() == b"colour\n"  # as rg: links are not followed without -L
    assert (tmp_path / "elsewhere" / "deep.txt").read_bytes() == b"colour\n"
    named = run_replace(["--in-place", "--pair", "colour", "color", str(tree / "link.txt")])
    assert named.returncode == 0  # a link named on the command line is followed
    assert outside.read_bytes() == b"color\n"


def locked_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "locked").mkdir(parents=True)
    write(tree / "a.txt", b"colour\n")
    write(tree / "locked" / "b.txt", b"colour\n")
    return tree


def test_recursive_names_a_folder_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    tree = locked_tree(tmp_path)
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:  # what a folder without read permission gives
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", str(tree)])
    assert result.status == 1
    assert result.text == f"{tree}/a.txt: 1\n"
    assert result.err == f"devutils replace: {tree}/locked: Permission denied; not searched\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_recursive_names_a_folder_it_cannot_read_for_real(tmp_path: Path) -> None:
    tree = locked_tree(tmp_path)
    (tree / "locked").chmod(0o000)
    try:
        result = run_replace(["-r", "--dry-run", "--pair", "colour", "color", str(tree)])
    finally:
        (tree / "locked").chmod(0o755)
    assert result.returncode == 1
    assert result.stdout == f"{tree}/a.txt: 1\n".encode()
    assert result.stderr == (
        f"devutils replace: {tree}/locked: Permission denied; not searched\n".encode()
    )


def test_names_that_are_not_utf8_or_hold_a_newline_are_shown_unambiguously(
    tmp_path: Path,
) -> None:
    folder = os.fsencode(tmp_path)
    names = [b"caf\xe9.txt", b"two\nlines.txt", b"plain.txt"]
    for name in names:
        with open(folder + b"/" + name, "wb") as handle:
            handle.write(b"colour colour\n")
    result = run_replace(
        ["--dry-run", "--pair", "colour", "color", *(os.fsdecode(name) for name in names)],
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == b"$'caf\\xe9.txt': 2\n$'two\\nlines.txt': 2\nplain.txt: 2\n"
    rewritten = run_replace(
        ["--in-place", "--count", "--pair", "colour", "color", os.fsdecode(names[0])],
        cwd=tmp_path,
    )
    assert rewritten.stderr == b"$'caf\\xe9.txt': 2\n"
    with open(folder + b"/" + names[0], "rb") as handle:
        assert handle.read() == b"color color\n"


@pytest.mark.parametrize("name", ["/dev/zero", "/dev/null"])
def test_diff_and_dry_run_refuse_what_in_place_refuses(name: str) -> None:
    if not Path(name).exists():
        pytest.skip(f"needs {name}")
    for mode in ("--diff", "--dry-run", "--in-place"):
        result = run_replace([mode, "--pair", "a", "b", name], timeout=60)
        assert result.returncode == 1, (mode, result.stderr)
        assert result.stderr == f"devutils replace: {name}: is not a regular file\n".encode() or (
            result.stderr
            == f"devutils replace: {name}: is not a regular file; left unchanged\n".encode()
        )


@pytest.mark.parametrize(
    ("data", "options", "problem"),
    [
        (
            b"colour\n",
            ["--encoding", "ascii", "--pair", "colour", "c\u00f6lor"],
            b"cannot be encoded",
        ),
        (b'\x1b$B$"\x1b(B\x1b(B colour\n', ["--encoding", "iso2022_jp"], b"does not read back"),
        # (a TO word that is not UTF-8 is a usage error before any file is read)
        (
            b"cafe\n",
            ["--encoding", "latin-1", "--pair", "e", "\u20ac"],
            b"cannot be encoded in latin-1",
        ),
    ],
)
def test_diff_refuses_what_in_place_refuses_a_result(
    tmp_path: Path, data: bytes, options: list[str], problem: bytes
) -> None:
    # --diff replaced in memory on its own: it previewed changes that --in-place refuses,
    # or failed with a traceback encoding the diff.
    path = write(tmp_path / "a.txt", data)
    pair = [] if "--pair" in options else ["--pair", "colour", "color"]
    for mode in ("--in-place", "--diff"):
        result = run_replace([mode, *options, *pair, "a.txt"], cwd=tmp_path)
        assert (result.returncode, result.stdout) == (1, b""), mode
        assert problem in result.stderr, mode
        assert result.stderr.count(b"\n") == 1, mode
        assert path.read_bytes() == data


@pytest.mark.parametrize(
    "encoding",
    ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-16", "cp037", "shift_jis_2004"],
)
def test_diff_in_an_encoding_that_is_not_ascii_compatible_is_a_usage_error(
    tmp_path: Path, encoding: str, cli: Cli
) -> None:
    # The diff came out in UTF-16, headers too, which neither patch nor git apply reads
    # (shift_jis_2004 wrote "\ No newline at end of file" with a two-byte backslash).
    data = "colour".encode(encoding)
    path = write(tmp_path / "a.txt", data)
    args = ["replace", "--diff", "--encoding", encoding, "--pair", "colour", "color"]
    for given in ([str(path)], []):
        result = cli([*args, *given], data)
        assert (result.status, result.out) == (2, b"")
        assert result.err == (
            f"devutils replace: error: --diff with --encoding {encoding}: not ASCII-compatible,"
            " so neither patch nor git apply could read the diff's headers\n"
        )
    assert path.read_bytes() == data
    if encoding != "utf-16":  # (which the other modes refuse too: give the byte order)
        rewritten = cli(["replace", "--in-place", *args[2:], str(path)])
        assert (rewritten.status, path.read_bytes()) == (0, "color".encode(encoding))


def test_diff_headers_are_the_names_bytes_in_any_encoding(tmp_path: Path) -> None:
    # They were encoded in --encoding: a name in Japanese was a traceback under latin-1,
    # and "é.txt" came out as the byte e9, not the name's own c3 a9.
    write(tmp_path / "ストロ.txt", b"caf\xe9\n")
    write(tmp_path / "é.txt", b"cafe\n")
    result = run_replace(
        ["--diff", "--encoding", "latin-1", "--pair", "caf", "X", "ストロ.txt", "é.txt"],
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (0, b"")
    headers = [line for line in result.stdout.split(b"\n") if line[:4] in (b"--- ", b"+++ ")]
    assert headers == [
        b'--- "a/\\343\\202\\271\\343\\203\\210\\343\\203\\255.txt"',
        b'+++ "b/\\343\\202\\271\\343\\203\\210\\343\\203\\255.txt"',
        b'--- "a/\\303\\251.txt"',
        b'+++ "b/\\303\\251.txt"',
    ]
    assert b"-caf\xe9\n+X\xe9\n" in result.stdout  # the lines: the file's own bytes
    if shutil.which("patch") is not None:
        subprocess.run(["patch", "-p1"], input=result.stdout, cwd=tmp_path, check=True)
        assert (tmp_path / "é.txt").read_bytes() == b"Xe\n"


def test_diff_headers_with_a_space_end_in_a_tab_as_git_writes_them(tmp_path: Path) -> None:
    # patch read "a/my" as the name and found no file to patch.
    write(tmp_path / "my notes.txt", b"colour\n")
    write(tmp_path / "my café.txt", b"colour\n")
    result = run_replace(
        ["--diff", "--pair", "colour", "color", "my notes.txt", "my café.txt"], cwd=tmp_path
    )
    headers = [line for line in result.stdout.split(b"\n") if line[:4] in (b"--- ", b"+++ ")]
    assert headers == [
        b"--- a/my notes.txt\t",
        b"+++ b/my notes.txt\t",
        b'--- "a/my caf\\303\\251.txt"\t',
        b'+++ "b/my caf\\303\\251.txt"\t',
    ]
    if shutil.which("patch") is not None:
        subprocess.run(["patch", "-p1"], input=result.stdout, cwd=tmp_path, check=True)
        assert (tmp_path / "my notes.txt").read_bytes() == b"color\n"
        assert (tmp_path / "my café.txt").read_bytes() == b"color\n"


def test_a_diff_names_each_file_once_as_git_does(tmp_path: Path) -> None:
    # "-r . src" gave two diffs, a/./src/f.txt and a/src/f.txt: git apply refused the
    # first name, and patch took the second copy for a reversed patch and undid the first
    (tmp_path / "src").mkdir()
    write(tmp_path / "src" / "f.txt", b"one\n")
    result = run_replace(["--diff", "-r", "--pair", "one", "ONE", ".", "src"], cwd=tmp_path)
    headers = [line for line in result.stdout.split(b"\n") if line[:4] in (b"--- ", b"+++ ")]
    assert (result.returncode, headers) == (0, [b"--- a/src/f.txt", b"+++ b/src/f.txt"])
    if shutil.which("git") is not None:
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        check = ["git", "apply", "--check"]
        subprocess.run(check, input=result.stdout, cwd=tmp_path, check=True)
    if shutil.which("patch") is not None:
        subprocess.run(["patch", "-p1", "--batch"], input=result.stdout, cwd=tmp_path, check=True)
        assert (tmp_path / "src" / "f.txt").read_bytes() == b"ONE\n"


def test_in_place_errors_name_the_file_as_given(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    result = run_replace(["--in-place", "--pair", "a", "b", "nosuch.txt", "dangling"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        b"devutils replace: nosuch.txt: No such file or directory\n"
        b"devutils replace: dangling: No such file or directory\n"
    )


def test_diff_refuses_a_file_past_its_limit_and_says_what_to_do(tmp_path: Path) -> None:
    from devutils.cli.replace.work import DIFF_LIMIT

    path = tmp_path / "big.txt"
    with open(path, "wb") as handle:
        handle.write(b"colour\n" * (1 << 18))  # text first (zeros alone are binary)
        handle.truncate(DIFF_LIMIT + 1)  # then sparse: no disk is used
    result = run_replace(["--diff", "--pair", "a", "b", str(path)])
    assert result.returncode == 1
    assert b"too large for --diff" in result.stderr
    assert b"use --in-place=.bak, then diff the backup" in result.stderr


@pytest.mark.parametrize("size", ["9223372036854775807", "1073741825", "99999999999999999999"])
def test_chunk_size_has_an_upper_bound(size: str) -> None:
    result = run_replace(["--chunk-size", size, "--pair", "a", "b"], stdin=b"a\n")
    assert result.returncode == 2  # a usage error
    assert (
        result.stderr
        == (
            f"devutils replace: error: argument --chunk-size: must be at most 1073741824 "
            f"(1 GiB), got {size!r}\n"
        ).encode()
    )


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch (apt-get install patch)")
@pytest.mark.parametrize("inside", ["\x0c", "\u2028", "\r", "\x85", "\x1c"])
def test_a_diff_applies_with_patch_whatever_a_line_holds(tmp_path: Path, inside: str) -> None:
    text = f"one colour{inside}two colour\nthree\nfour colour".encode()
    path = write(tmp_path / "notes.txt", text)
    result = run_replace(["--diff", "--pair", "colour", "color", "notes.txt"], cwd=tmp_path)
    assert result.returncode == 0
    applied = subprocess.run(
        ["patch", "-p1", "--dry-run", "-o", "-", "notes.txt"],
        input=result.stdout,
        capture_output=True,
        cwd=tmp_path,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr + applied.stdout
    patched = subprocess.run(
        ["patch", "-p1", "notes.txt"],
        input=result.stdout,
        capture_output=True,
        cwd=tmp_path,
        check=False,
    )
    assert patched.returncode == 0, patched.stdout
    assert path.read_bytes() == text.replace(b"colour", b"color")


# -- what sed, sd and rg users expect --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-i"],
            "-i is sed's in place: devutils spells it --in-place[=SUFFIX] (and --ignore-case)",
        ),
        (
            ["-i.bak"],
            "-i is sed's in place: devutils spells it --in-place[=SUFFIX] (and --ignore-case)",
        ),
        (
            ["--in-place", ".bak"],
            "--in-place takes a suffix only as --in-place=.bak (a separate word is a FILE, "
            "and .bak does not exist)",
        ),
        (["-j", "0"], "argument -j/--jobs: must be a whole number from 1 to 256, got '0'"),
    ],
)
def test_a_sed_users_habit_gets_a_hint(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "notes.txt", b"colour\n")
    result = cli(["replace", *args, "--pair", "colour", "color", "notes.txt"])
    assert (result.status, result.err) == (2, f"devutils replace: error: {message}\n")
    assert (tmp_path / "notes.txt").read_bytes() == b"colour\n"


def test_in_place_before_a_file_that_starts_with_a_dot_takes_it_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".env", b"colour\n")
    assert cli(["replace", "--in-place", ".env", "--pair", "colour", "color"]).status == 0
    assert (tmp_path / ".env").read_bytes() == b"color\n"


def test_an_undecodable_file_suggests_encoding(cli: Cli) -> None:
    result = cli(["replace", "--pair", "a", "b"], b"caf\xe9\n")
    assert result.err == (
        "devutils replace: <stdin>: not valid utf-8 (byte 3) (another encoding? give --encoding)\n"
    )


@pytest.mark.parametrize("name", ["glossary.txt", "glossary", "glossary.tab"])
def test_a_json_map_is_read_as_json_whatever_its_name(tmp_path: Path, name: str, cli: Cli) -> None:
    table = write(tmp_path / name, b'{"colour": "color"}\n')
    assert cli(["replace", "--map", str(table)], b"colour\n").text == "color\n"


def test_a_tsv_map_whose_first_key_starts_with_a_brace_stays_a_tsv(
    tmp_path: Path, cli: Cli
) -> None:
    table = write(tmp_path / "templates.txt", b"{name}\tAda\n{city}\tParis\n")
    assert cli(["replace", "--map", str(table)], b"{name} of {city}\n").text == "Ada of Paris\n"
    broken = write(tmp_path / "broken.txt", b"{name} Ada\n")
    result = cli(["replace", "--map", str(broken)], b"")
    assert result.status == 2  # a usage error
    assert "(read as TSV: not named .json and not a JSON object)" in result.err


@pytest.mark.parametrize(
    ("table", "text", "expected"),
    [
        (b"{\t}\n", b"x{y\n", b"x}y\n"),
        (b'{\t"a": "b"}\n', b"{a}\n", b'"a": "b"}a}\n'),
        (b"\n{\t}\r\n{x}\tX\r\n", b"{x}{\n", b"X}\n"),
        (b" {\t}\n", b" { {\n", b"}}\n"),
    ],
)
def test_a_tsv_whose_first_key_is_a_brace_is_not_read_as_json(
    tmp_path: Path, table: bytes, text: bytes, expected: bytes, cli: Cli
) -> None:
    # json.loads takes the tab for a space: "{<TAB>}" was read as an empty JSON object
    # (its mapping silently dropped), '{<TAB>"a": "b"}' as the JSON {"a": "b"}.
    glossary = write(tmp_path / "glossary.txt", table)
    result = cli(["replace", "--map", str(glossary)], text)
    assert (result.status, result.out, result.err) == (0, expected, "")


@pytest.mark.parametrize(
    "table",
    [
        json.dumps({"colour": "color", "{": "}"}, indent="\t"),
        json.dumps({"colour": "color", "{": "}"}, indent=2),
        json.dumps({"colour": "color", "{": "}"}),
        json.dumps({"colour": "color", "{": "}"}, indent="\t").replace("\n", "\r\n"),
        "\n" + json.dumps({"colour": "color", "{": "}"}, indent="\t") + "\n",
        json.dumps({"colour": "color"}, indent="\t"),
        '{"colour":\t"color",\n"{":\t\t"}"}',
    ],
)
def test_a_json_map_with_tabs_is_still_read_as_json(tmp_path: Path, table: str, cli: Cli) -> None:
    glossary = write(tmp_path / "glossary.txt", table.encode())
    result = cli(["replace", "--map", str(glossary)], b"colour {\n")
    expected = b"color }\n" if '"{"' in table else b"color {\n"
    assert (result.status, result.out, result.err) == (0, expected, "")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git work tree with an ignored build/ folder and *.log files, and a glossary."""
    if shutil.which("git") is None:
        pytest.skip("needs git to tell what a repository ignores")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("src/a.txt", "build/out.txt", "notes.log", "src/deep/b.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        write(tmp_path / name, b"colour\n")
    write(tmp_path / ".gitignore", b"build/\n*.log\n")
    write(tmp_path / "glossary.tsv", b"colour\tcolor\n")
    return tmp_path


def test_recursive_leaves_out_what_git_ignores_as_rg_does(
    repository: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(repository)
    args = ["replace", "-r", "--dry-run", "--map", "glossary.tsv"]
    assert cli([*args, "."]).text == "./src/a.txt: 1\n./src/deep/b.txt: 1\n"
    assert cli([*args, "--no-ignore", "."]).text == (
        "./notes.log: 1\n./build/out.txt: 1\n./src/a.txt: 1\n./src/deep/b.txt: 1\n"
    )
    assert cli([*args, "src"]).text == "src/a.txt: 1\nsrc/deep/b.txt: 1\n"
    rg = shutil.which("rg")
    if rg is not None:  # the same files as ripgrep lists
        listed = subprocess.run([rg, "--files", "."], capture_output=True, text=True, check=True)
        assert sorted(listed.stdout.split()) == [
            "./glossary.tsv",
            "./src/a.txt",
            "./src/deep/b.txt",
        ]


def test_outside_a_repository_nothing_is_ignored(tmp_path: Path, cli: Cli) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    write(tree / "notes.log", b"colour\n")
    write(tree / ".gitignore", b"*.log\n")
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", str(tree)])
    assert result.text == f"{tree}/notes.log: 1\n"


def _git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def test_a_repository_inside_is_walked_by_its_own_rules(
    repository: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # git lists a repository inside as one folder, so nothing in it was walked; outside
    # any repository, a repository inside had its .gitignore left unread (rg reads both).
    inner = repository / "vendor" / "lib"
    inner.mkdir(parents=True)
    _git_init(inner)
    write(inner / "lib.txt", b"colour\n")
    write(inner / "lib.log", b"colour\n")
    write(inner / ".gitignore", b"*.log\n")
    monkeypatch.chdir(repository)
    args = ["replace", "-r", "--dry-run", "--pair", "colour", "color"]
    assert cli([*args, "vendor"]).text == "vendor/lib/lib.txt: 1\n"
    outside = repository / "build" / "plain"  # (in no repository's listing: walked whole)
    outside.mkdir()
    shutil.move(str(repository / "vendor"), str(outside / "vendor"))
    write(outside / "top.log", b"colour\n")
    assert cli([*args, "build/plain"]).text == (
        "build/plain/top.log: 1\nbuild/plain/vendor/lib/lib.txt: 1\n"
    )


def test_a_folder_git_ignores_named_on_the_command_line_is_walked(
    repository: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # It gave nothing, and status 0; rg walks a folder it is given.
    monkeypatch.chdir(repository)
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", "build"])
    assert (result.status, result.text) == (0, "build/out.txt: 1\n")
    write(repository / "build" / "kept.txt", b"colour\n")  # tracked, in the ignored folder
    subprocess.run(["git", "-C", str(repository), "add", "-f", "build/kept.txt"], check=True)
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", "build"])
    assert result.text == "build/kept.txt: 1\nbuild/out.txt: 1\n"  # (not the tracked one only)


def test_a_list_of_what_is_kept_that_starts_with_a_star_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # `*` matched the work tree's top itself, taken for an ignored folder named on the
    # command line: everything was walked, the ignored files too.
    if shutil.which("git") is None:
        pytest.skip("needs git to tell what a repository ignores")
    _git_init(tmp_path)
    write(tmp_path / ".gitignore", b"*\n!*/\n!*.py\n")
    for name in ("a.py", "a.log", "src/b.o", "src/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        write(tmp_path / name, b"colour\n")
    args = ["replace", "-r", "--dry-run", "--pair", "colour", "color"]
    monkeypatch.chdir(tmp_path / "src")
    assert cli([*args, ".."]).text == "../a.py: 1\n../src/c.py: 1\n"
    assert cli([*args, str(tmp_path)]).text == f"{tmp_path}/a.py: 1\n{tmp_path}/src/c.py: 1\n"
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert listed.stdout.split() == ["a.py", "src/c.py"]  # what git itself lists


def test_git_s_answer_is_read_whatever_its_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # A translated "not a git repository" made a folder in no repository an error.
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Schwerwiegend: Kein Git-Repository' >&2\nexit 128\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    tree = tmp_path / "tree"
    tree.mkdir()
    write(tree / "a.txt", b"colour\n")
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", str(tree)])
    assert (result.status, result.text) == (0, f"{tree}/a.txt: 1\n")


def test_git_s_own_location_in_the_environment_is_not_followed(
    repository: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # GIT_DIR=.git (as git sets it in a hook) made git read the wrong folder for "src":
    # nothing was ignored.
    write(repository / "src" / "debug.log", b"colour\n")
    monkeypatch.chdir(repository)
    monkeypatch.setenv("GIT_DIR", ".git")
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", "src"])
    assert result.text == "src/a.txt: 1\nsrc/deep/b.txt: 1\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the repository away")
def test_a_repository_git_refuses_to_read_is_named_not_walked_whole(
    repository: Path, cli: Cli
) -> None:
    # git refuses another user's repository ("dubious ownership"): nothing was ignored,
    # and nothing said so.
    for path in [repository, *repository.rglob("*")]:
        os.lchown(path, 65534, 65534)
    result = cli(["replace", "-r", "--dry-run", "--pair", "colour", "color", str(repository)])
    assert (result.status, result.text) == (1, "")
    assert "cannot tell what git ignores here (git: fatal: detected dubious" in result.err
    assert "--no-ignore walks it whole); not searched" in result.err
    args = ["replace", "-r", "--dry-run", "--no-ignore", "--pair", "colour", "x"]
    walked = cli([*args, str(repository)])
    assert (walked.status, walked.text.count(": 1\n")) == (0, 5)


def test_the_map_file_is_never_rewritten(
    repository: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(repository)
    walked = cli(["replace", "-r", "--in-place", "--count", "--map", "glossary.tsv", "."])
    assert walked.status == 0
    assert walked.err == "./src/a.txt: 1\n./src/deep/b.txt: 1\n"
    assert (repository / "glossary.tsv").read_bytes() == b"colour\tcolor\n"
    named = cli(["replace", "--in-place", "--map", "glossary.tsv", "glossary.tsv"])
    assert (named.status, named.err) == (
        2,
        "devutils replace: error: glossary.tsv is the --map file: it is never rewritten\n",
    )
    assert (repository / "glossary.tsv").read_bytes() == b"colour\tcolor\n"


def test_a_git_file_is_never_walked(tmp_path: Path, cli: Cli) -> None:
    # A work tree's or submodule's .git is a file, "gitdir: ...": --hidden --no-ignore
    # walked it and rewrote the path in it, which cut the work tree off its repository.
    tree = tmp_path / "main-wt"
    (tree / "sub").mkdir(parents=True)
    write(tree / "notes.txt", b"main\n")
    pointer = b"gitdir: /srv/main/.git/worktrees/main-wt\n"
    write(tree / ".git", pointer)
    write(tmp_path / "elsewhere", b"main\n")
    (tree / "sub" / ".git").symlink_to(tmp_path / "elsewhere")
    args = ["replace", "-r", "--hidden", "--no-ignore", "--pair", "main", "trunk", str(tree)]
    assert cli([*args, "--dry-run"]).text == f"{tree}/notes.txt: 1\n"
    result = cli([*args, "--in-place", "--count"])
    assert (result.status, result.err) == (0, f"{tree}/notes.txt: 1\n")
    assert (tree / ".git").read_bytes() == pointer
    assert (tmp_path / "elsewhere").read_bytes() == b"main\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("mode", ["--in-place", "--dry-run", "--diff", "--count"])
def test_a_fifo_is_refused_in_every_mode_without_waiting_for_a_writer(
    tmp_path: Path, mode: str
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_replace([mode, "--pair", "a", "b", str(fifo)], timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(f"devutils replace: {fifo}: is not a regular file".encode())


def test_stdin_is_replaced_as_it_arrives() -> None:
    # stdin was read a megabyte at a time: `tail -f log | devutils replace` showed nothing
    # until a megabyte had come or the input ended.
    import select

    process = subprocess.Popen(
        [sys.executable, "-m", "devutils", "replace", "--pair", "colour", "color"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(b"a colour line " * 8 + b"\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "nothing came out while the input was still open"
        assert os.read(process.stdout.fileno(), 4096).startswith(b"a color line a color")
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert process.returncode == 0


@pytest.mark.parametrize("encoding", [b"\xff", b"utf\xe9"])
def test_an_encoding_that_is_not_utf8_is_a_usage_error(encoding: bytes) -> None:
    # It was a UnicodeEncodeError traceback from codecs.lookup, status 1.
    command = [os.fsencode(sys.executable), b"-m", b"devutils", b"replace", b"--encoding"]
    result = subprocess.run(
        [*command, encoding, b"--pair", b"a", b"b"], input=b"a\n", capture_output=True, check=False
    )
    assert result.returncode == 2  # a usage error
    assert result.stderr.startswith(b"devutils replace: error: unknown text encoding ")
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize("name", ["deep.json", "deep.txt"])
def test_a_map_nested_too_deep_is_an_error_naming_it(tmp_path: Path, name: str, cli: Cli) -> None:
    # A RecursionError traceback, status 1: from the sniffing (deep.txt) and the reading.
    depth = 100_000
    path = write(tmp_path / name, b'{"a":' + b"[" * depth + b"]" * depth + b"}")
    result = cli(["replace", "--map", str(path)], stdin=b"a\n")
    assert result.status == 2  # a usage error
    assert f"--map {path}: JSON nested too deep" in result.err
    long = write(tmp_path / "long.json", b'{"a": [' + b"1," * 100_000 + b"1]}")
    result = cli(["replace", "--map", str(long)], stdin=b"a\n")
    assert "must be a string, got [1, 1," in result.err
    assert len(result.err) < 300  # the value cut short, not 300 KB of it


@pytest.mark.skipif(sys.platform != "linux", reason="lowers the open-file limit (Linux)")
def test_workers_that_cannot_start_are_an_error_and_no_file_is_touched(tmp_path: Path) -> None:
    # Out of descriptors, it blamed stdout, then hung for ever on the workers it had.
    import resource

    names = [f"f{number}.txt" for number in range(80)]
    for name in names:
        write(tmp_path / name, b"colour\n")

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    spool = tmp_path / "tmp"
    spool.mkdir()
    result = run_replace(
        ["-j", "64", "--in-place", "--pair", "colour", "color", *names],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(spool)},
        preexec_fn=few_descriptors,  # (only setrlimit, before the exec)
        timeout=60,  # (it hung for ever)
    )
    assert list(spool.iterdir()) == []  # its folder for the workers' output removed
    spool.rmdir()
    assert result.returncode == 1
    assert result.stderr.endswith(
        b"devutils replace: error: --jobs 64: cannot start the worker processes"
        b" (Too many open files): try fewer\n"
    )
    assert b"Traceback" not in result.stderr
    assert all((tmp_path / name).read_bytes() == b"colour\n" for name in names)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names)


def test_a_map_read_from_stdin_redirected_from_a_file_is_never_rewritten(tmp_path: Path) -> None:
    # `--map - < g.tsv` rewrote g.tsv itself, which `--map g.tsv` refuses.
    glossary = write(tmp_path / "g.tsv", b"colour\tcolor\n")
    write(tmp_path / "a.txt", b"colour\n")
    with glossary.open("rb") as stdin:
        refused = subprocess.run(
            [sys.executable, "-m", "devutils", "replace", "--map", "-", "--in-place", "g.tsv"],
            stdin=stdin,
            capture_output=True,
            cwd=tmp_path,
            check=False,
        )
    assert (refused.returncode, refused.stderr) == (
        2,
        b"devutils replace: error: g.tsv is the --map file: it is never rewritten\n",
    )
    with glossary.open("rb") as stdin:
        walked = subprocess.run(
            [sys.executable, "-m", "devutils", "replace", "--map", "-", "-r", "-n", "."],
            stdin=stdin,
            capture_output=True,
            cwd=tmp_path,
            check=False,
        )
    assert (walked.returncode, walked.stdout) == (0, b"./a.txt: 1\n")  # the map left out
    assert glossary.read_bytes() == b"colour\tcolor\n"


@pytest.mark.skipif(sys.platform != "linux", reason="lowers the open-file limit (Linux)")
def test_workers_that_cannot_start_leave_the_callers_own_processes(tmp_path: Path) -> None:
    # Every child of the process was killed, the caller's own too.
    for number in range(80):
        write(tmp_path / f"f{number}.txt", b"colour\n")
    script = """
import glob, multiprocessing, resource, sys, time
from devutils.cli import main
if __name__ == "__main__":
    mine = multiprocessing.Process(target=time.sleep, args=(60,))
    mine.start()
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    status = main(["replace", "-j", "64", "--in-place", "--pair", "colour", "color",
                   *sorted(glob.glob("f*.txt"))])
    print(status, mine.is_alive())
    mine.kill()
"""
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=60, check=False
    )
    assert completed.stdout == b"1 True\n", completed.stderr


def test_stdin_gives_back_each_line_before_the_next_is_written() -> None:
    # `tail -f log | devutils replace ...`: the newest line came out only with the next
    # (the last 2 x (longest key + 1) characters were held back)
    command = [sys.executable, "-m", "devutils", "replace", "--pair", "abc", "X"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"first abc\n")
        process.stdin.flush()  # and left open: no more input, no end of it
        timer = threading.Timer(30, process.kill)  # (a hang fails the test, not the run)
        timer.start()
        try:
            line = process.stdout.readline()
        finally:
            timer.cancel()
        process.stdin.close()
        assert line == b"first X\n"
        assert process.wait(timeout=30) == 0


@pytest.mark.parametrize(
    ("given", "content", "err"),
    [
        ("/dev/zero", None, b"--map /dev/zero is a device, not a file of replacements"),
        ("", None, b"--map must name a file (or - for stdin), got ''"),  # not the folder .
        ("empty.tsv", b"", b"no replacements: --map empty.tsv holds none"),
        ("empty.json", b"{}", b"no replacements: --map empty.json holds none"),
    ],
)
def test_a_map_that_gives_no_replacements_says_why(
    tmp_path: Path, given: str, content: bytes | None, err: bytes
) -> None:
    if content is not None:
        write(tmp_path / given, content)
    text = write(tmp_path / "a.txt", b"hello\n")
    result = run_replace([f"--map={given}", str(text)], cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr == b"devutils replace: error: " + err + b"\n"


def test_a_map_through_a_pipe_is_read(tmp_path: Path) -> None:
    # `--map <(jq ...)`: the shell gives a pipe's name
    text = write(tmp_path / "a.txt", b"hello\n")
    reader, writer = os.pipe()
    os.write(writer, b"hello\tbye\n")
    os.close(writer)
    try:
        result = run_replace(["--map", f"/dev/fd/{reader}", str(text)], pass_fds=(reader,))
    finally:
        os.close(reader)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"bye\n", b"")


def test_the_bar_of_stdin_fills_up_and_stays_full(cli: Cli) -> None:
    # stdin's size is not known: the bar was full while it was read, then empty
    shown = cli(["replace", "--progress", "always", "--pair", "old", "new"], b"old\n" * 1000)
    assert shown.status == 0
    bars = [part for part in shown.err.split("\r") if part.startswith("devutils replace [")]
    assert bars
    assert bars[-1] == f"devutils replace [{'#' * 30}] 1/1 files, 0.0/0.0 MB"


@pytest.mark.parametrize("mode", [["--in-place"], ["--dry-run"], []])
def test_a_file_whose_nul_byte_comes_after_an_undecodable_one_is_binary(
    tmp_path: Path, mode: list[str]
) -> None:
    # Past the first chunk: it was "not valid utf-8", and a walk failed on it
    data = b"caf\xe9\n" + b"colour\n" * 200_000 + b"\x00binary"
    path = write(tmp_path / "big.dat", data)
    walked = run_replace([*mode, "-r", "--pair", "colour", "color", "."], cwd=tmp_path)
    assert (walked.returncode, walked.stderr) == (0, b"")  # skipped, as binary files are
    named = run_replace([*mode, "--pair", "colour", "color", "big.dat"], cwd=tmp_path)
    assert named.returncode == 1
    assert b"big.dat: looks binary (it has a NUL byte)" in named.stderr
    assert path.read_bytes() == data


def test_a_signal_during_a_commit_counts_that_file_done(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It stopped the run once the file was new, and the line counted it "unchanged"
    from devutils.atomicfiles import AtomicRewrite

    first, second = write(tmp_path / "a.txt", b"old\n"), write(tmp_path / "b.txt", b"old\n")
    commit = AtomicRewrite.commit

    def commit_then_sigterm(self: AtomicRewrite) -> None:
        commit(self)
        os.kill(os.getpid(), signal.SIGTERM)  # held back, as the rename is done

    monkeypatch.setattr(AtomicRewrite, "commit", commit_then_sigterm)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        result = cli(["replace", "--in-place", "--pair", "old", "new", str(first), str(second)])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (first.read_bytes(), second.read_bytes()) == (b"new\n", b"old\n")
    assert result.status == 143
    assert result.err == (
        "devutils replace: interrupted: 1 of 2 files done; the others are unchanged\n"
    )
