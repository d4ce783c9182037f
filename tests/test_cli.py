"""Tests for the devutils command itself: --version, python -m, output that cannot be written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from devutils import __version__
from devutils.cli import COMMANDS

if TYPE_CHECKING:
    from tests.conftest import Cli


def test_readme_example_through_the_installed_module() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "devutils",
            "replace",
            "--pair",
            "ストロベリー",
            "strawberry",
            "--pair",
            "パイナップル",
            "pineapple",
        ],
        input="ストロベリーパフェとパイナップルジュース\n".encode(),
        capture_output=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.decode() == "strawberryパフェとpineappleジュース\n"


def test_version() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "devutils", "--version"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0
    assert completed.stdout.strip() == f"devutils {__version__}"
    # and it answers without importing a single subcommand's module
    code = (
        "import sys\nfrom devutils.cli import main\ntry:\n    main(['--version'])\n"
        "finally:\n    print(sorted(m for m in sys.modules if m.startswith('devutils._')))"
    )
    imported = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    assert imported == "[]"


WRITERS = [
    ["months", "2024-01-01", "2024-05-01", "--list"],
    ["--help"],
    ["replace", "--help"],
    ["batch", "--target", "64", "--max-per-device", "8"],
    ["which-dstat"],
    ["stat", "-c", "0.05", "1"],
    ["stat", "--csv", "-c", "0.05", "1"],
    ["--version"],
]


def _prog(args: list[str]) -> str:
    return "devutils" if args[0].startswith("-") else f"devutils {args[0]}"


def _buffered_env() -> dict[str, str]:
    # stdout buffered, as a user's shell has it (argparse drops a failed unbuffered write)
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", WRITERS)
def test_a_full_disk_is_one_line_and_status_1(args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        completed = subprocess.run(
            [sys.executable, "-m", "devutils", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            env=_buffered_env(),
        )
    prog = _prog(args)
    assert (completed.returncode, completed.stderr) == (
        1,
        f"{prog}: error: stdout: No space left on device\n",
    )


@pytest.mark.skipif(os.name != "posix", reason="closes stdout with sh")
@pytest.mark.parametrize("args", WRITERS)
def test_a_closed_stdout_is_an_error_not_silence(args: list[str]) -> None:
    completed = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', sys.executable, "-m", "devutils", *args],
        capture_output=True,
        text=True,
        check=False,
        env=_buffered_env(),
    )
    prog = _prog(args)
    assert (completed.returncode, completed.stderr) == (
        1,
        f"{prog}: error: stdout: Bad file descriptor\n",
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["stat", "--help"]])
def test_help_and_version_onto_a_full_disk_fail_even_unbuffered(args: list[str]) -> None:
    # argparse itself swallows a failed write of its help: devutils's parser does not
    with open("/dev/full", "wb") as full:
        completed = subprocess.run(
            [sys.executable, "-m", "devutils", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    assert completed.returncode == 1
    assert completed.stderr.endswith("error: stdout: No space left on device\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["months", "2024-01-01", "2024-02-01", "extra"], "devutils months: error: unrecognized"),
        (["stat", "1", "1", "1"], "devutils stat: error: unrecognized arguments: 1"),
        (["batch", "--target", "8", "--max-per-device", "4", "x"], "devutils batch: error:"),
    ],
)
def test_an_error_names_the_subcommand(args: list[str], message: str, cli: Cli) -> None:
    result = cli(args)
    assert result.status == 2
    assert result.err.startswith(message)


def test_a_bare_devutils_lists_its_commands_as_a_usage_error(cli: Cli) -> None:
    result = cli([])
    assert result.status == 2
    assert result.out == b""
    listed = re.findall(r"^    (\S+)", result.err, re.MULTILINE)
    assert listed == list(COMMANDS)


def _flags(help_text: str) -> set[str]:
    """The option strings a parser's ``--help`` lists (its usage line aside)."""
    options = help_text.split("options:", 1)[1]
    return set(re.findall(r"(?<![\w`-])(--?[A-Za-z][\w-]*)", options)) - {"-h", "--help"}


def _cli_section(page: str, command: str) -> str:
    """The part of docs/cli.md that documents *command*: replace's chapters before "Every
    subcommand, flag by flag", or the command's own ``### `devutils COMMAND`` section."""
    if command == "replace":
        return page[: page.index("\n## Every subcommand, flag by flag")]
    start = page.find(f"\n### `devutils {command}")
    assert start >= 0, f"docs/cli.md has no section ### `devutils {command}`"
    end = re.compile(r"^##", re.MULTILINE).search(page, start + 4)
    return page[start : end.start() if end else len(page)]


@pytest.mark.parametrize("command", COMMANDS)
def test_docs_cli_md_documents_every_flag_of_every_subcommand(
    command: str, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    # every subcommand that `devutils --help` lists, each flag in its own section, which
    # also gives its exit statuses
    page = (Path(__file__).parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    section = _cli_section(page, command)
    monkeypatch.setenv("COLUMNS", "1000")  # one line a flag: no flag cut by a wrap
    flags = _flags(cli([command, "--help"]).text)
    assert flags  # the help was read
    missing = sorted(f for f in flags if not re.search(f"`{re.escape(f)}[`\\s=\\[]", section))
    assert missing == []
    assert re.search(r"exit status", section, re.IGNORECASE)


def test_the_flag_check_sees_a_flag_documented_under_another_subcommand_only() -> None:
    page = (
        "## Every subcommand, flag by flag\n### `devutils gpu`\n`--json`\n### `devutils months`\n"
    )
    assert "`--json`" in _cli_section(page, "gpu")
    assert "`--json`" not in _cli_section(page, "months")


@pytest.mark.skipif(os.name != "posix", reason="closes stderr with sh")
def test_a_closed_stderr_still_runs_the_command(tmp_path: Path) -> None:
    # --progress auto asked sys.stderr (None) whether it is a terminal: an AttributeError
    # that nobody saw, status 1, and no file rewritten.
    path = tmp_path / "c.txt"
    path.write_bytes(b"colour\n")
    replace = [sys.executable, "-m", "devutils", "replace", "--pair", "colour", "color"]
    closed = ["sh", "-c", 'exec "$0" "$@" 2>&-']
    completed = subprocess.run([*closed, *replace, str(path)], capture_output=True, check=False)
    assert (completed.returncode, completed.stdout) == (0, b"color\n")
    completed = subprocess.run(
        [*closed, *replace, "--in-place", str(path)], capture_output=True, check=False
    )
    assert (completed.returncode, path.read_bytes()) == (0, b"color\n")
    completed = subprocess.run(
        [*closed, *replace, str(tmp_path / "none.txt")], capture_output=True, check=False
    )
    assert completed.returncode == 1  # the error unseen, the status still says it


@pytest.fixture(scope="module")
def euc_jp(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Japanese EUC-JP locale, built with localedef."""
    if shutil.which("localedef") is None:
        pytest.skip("needs localedef (libc-bin) to build an EUC-JP locale")
    folder = tmp_path_factory.mktemp("locales")
    built = subprocess.run(
        ["localedef", "-i", "ja_JP", "-f", "EUC-JP", str(folder / "ja_JP.eucJP")],
        capture_output=True,
        check=False,
    )
    env = {**os.environ, "LOCPATH": str(folder), "LANG": "ja_JP.eucJP"}
    for name in ("LC_ALL", "LC_CTYPE", "PYTHONUTF8", "PYTHONIOENCODING"):
        env.pop(name, None)
    probe = [sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"]
    encoding = subprocess.run(probe, env=env, capture_output=True, text=True, check=False)
    if built.returncode > 1 or encoding.stdout.strip() != "euc_jp":  # (1: warnings only)
        pytest.skip(f"could not build an EUC-JP locale: {built.stderr[-200:]!r}")
    return env


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("word", ["ストロベリー", "Straße", "日本", "한국", "café"])
def test_utf8_words_and_names_under_an_euc_jp_locale(
    euc_jp: dict[str, str], tmp_path: Path, word: str
) -> None:
    # Python decodes the command line with the C library, which reads some bytes of UTF-8
    # as characters that Python's euc_jp codec cannot encode back: a traceback.
    replace = [sys.executable, "-m", "devutils", "replace"]
    completed = subprocess.run(
        [*replace, "--pair", word, "X"],
        input=f"<{word}>\n".encode(),
        env=euc_jp,
        capture_output=True,
        check=False,
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, b"<X>\n", b"")
    path = tmp_path / f"{word}.txt"
    path.write_bytes(b"a\n")
    completed = subprocess.run(
        [*replace, "--in-place", "--pair", "a", "b", os.fsencode(path)],
        env=euc_jp,
        capture_output=True,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, b"")
    assert path.read_bytes() == b"b\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="reads /proc (Linux)")
def test_a_command_line_set_by_the_caller_is_the_one_run(euc_jp: dict[str, str]) -> None:
    # Under EUC-JP the words were read again from /proc/self/cmdline by their count only:
    # a wrapper that set sys.argv ran the last words of its own command line instead.
    script = (
        "import sys; from devutils.cli import main; "
        "sys.argv = ['devutils', 'replace', '--pair', '\\ud55c\\uad6d', 'X']; sys.exit(main())"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, "months", "--list", "2024-01", "2024-03"],
        input="한국\n".encode(),
        env=euc_jp,
        capture_output=True,
        check=False,
    )
    assert (completed.returncode, completed.stdout) == (0, b"X\n"), completed.stderr


@pytest.mark.skipif(os.name != "posix", reason="closes descriptors with sh")
@pytest.mark.parametrize(("closed", "descriptor"), [("<&- 2>&-", 2), ("<&- >&-", 1)])
def test_a_closed_stream_keeps_its_descriptor_taken(closed: str, descriptor: int) -> None:
    # With stdin closed too, the stand-in took descriptor 0, and the next file opened got
    # the closed stream's: whatever was written there went into that file.
    other = 3 - descriptor  # the stream left open, to report on
    probe = (
        "import os; from devutils.cli import main; main(['months', 'x', 'y']); "
        f"os.write({other}, b'fd=%d' % os.open(os.devnull, os.O_RDONLY))"
    )
    completed = subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {closed}', sys.executable, "-c", probe],
        capture_output=True,
        check=False,
    )
    reported = re.search(rb"fd=(\d+)", completed.stdout + completed.stderr)
    assert reported is not None, completed
    assert int(reported[1]) not in (1, 2)  # both taken: the closed one by its stand-in


def test_a_stream_set_to_none_by_the_caller_leaves_its_descriptor_alone(tmp_path: Path) -> None:
    # The stand-in for a stdout set to None took descriptor 1 over: the caller's own
    # output, once it put its stream back, failed with EBADF.
    script = (
        "import sys; from devutils.cli import main; saved = sys.stdout; sys.stdout = None; "
        "main(['months', '2024-01-15', '2024-03-05']); sys.stdout = saved; "
        "print('the caller, after main', flush=True)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=tmp_path, check=False
    )
    assert (completed.returncode, completed.stdout) == (0, b"the caller, after main\n")
