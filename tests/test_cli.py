"""Tests for the devutils command itself: --version, python -m, output that cannot be written."""

from __future__ import annotations

import os
import re
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
