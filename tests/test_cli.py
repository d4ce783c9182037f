"""Tests for the ``devutils`` command: the shell usage shown in README and docs/cli.md."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devutils import __version__
from devutils.cli import main


class Result:
    def __init__(self, status: int, out: bytes, err: str) -> None:
        self.status = status
        self.out = out
        self.err = err

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")


class _Buffer(io.BytesIO):
    """A BytesIO that survives its TextIOWrapper being closed."""

    def close(self) -> None:
        pass


def run(args: list[str], stdin: bytes = b"") -> Result:
    """Run ``main(args)`` in-process with byte-level stdin/stdout."""
    stdin_buffer = _Buffer(stdin)
    stdout_buffer = _Buffer()
    stderr = io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(stdin_buffer, encoding="utf-8")
    sys.stdout = io.TextIOWrapper(stdout_buffer, encoding="utf-8", write_through=True)
    sys.stderr = stderr
    try:
        status = main(args)
        sys.stdout.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(status, stdout_buffer.getvalue(), stderr.getvalue())


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
        f"{prog}: error: No space left on device\n",
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
    assert (completed.returncode, completed.stderr) == (1, f"{prog}: error: Bad file descriptor\n")


def test_pairs_swap_and_longest_wins() -> None:
    result = run(
        ["replace", "--pair", "a", "b", "--pair", "b", "a", "--pair", "ab", "X"], b"ab ba\n"
    )
    assert (result.status, result.text) == (0, "X ab\n")


def test_bytes_pass_through_unchanged_crlf() -> None:
    result = run(["replace", "--pair", "x", "y"], b"x\r\nline\r\n")
    assert result.out == b"y\r\nline\r\n"


def test_options(tmp_path: Path) -> None:
    result = run(
        ["replace", "--pair", "acme", "corp", "--ignore-case", "--preserve-case", "-w"],
        b"ACME Acme acmes",
    )
    assert result.text == "CORP Corp acmes"


def test_json_map(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"colour": "color", "centre": "center"}), encoding="utf-8")
    result = run(["replace", "--map", str(path)], b"colour centre")
    assert result.text == "color center"


def test_tsv_map_with_pairs(tmp_path: Path) -> None:
    path = tmp_path / "glossary.tsv"
    path.write_text("colour\tcolor\n\ncentre\tcenter\n", encoding="utf-8")
    result = run(["replace", "--map", str(path), "--pair", "grey", "gray"], b"grey colour centre")
    assert result.text == "gray color center"


def test_tsv_malformed_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "glossary.tsv"
    path.write_text("colour\tcolor\ncentre center\n", encoding="utf-8")
    result = run(["replace", "--map", str(path)], b"x")
    assert result.status == 2
    assert "line 2" in result.err
    assert result.err.count("\n") == 1
    assert result.out == b""


def test_key_given_twice_with_different_values(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"a": "b"}', encoding="utf-8")
    result = run(["replace", "--map", str(path), "--pair", "a", "c"], b"a")
    assert result.status == 2
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
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    result = run(args, b"a")
    assert result.status == 2
    assert message in result.err
    assert result.err.count("\n") == 1, result.err


def test_bad_json_map(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    assert "must be a string" in run(["replace", "--map", str(path)]).err
    path.write_text("[1, 2]", encoding="utf-8")
    assert "expected a JSON object" in run(["replace", "--map", str(path)]).err
    path.write_text("{oops", encoding="utf-8")
    assert "invalid JSON at line 1" in run(["replace", "--map", str(path)]).err


def test_undecodable_stdin_is_refused() -> None:
    result = run(["replace", "--pair", "a", "b"], b"\xff\xfe a")
    assert result.status == 1
    assert "<stdin>: not valid utf-8 (byte 0)" in result.err
    assert result.out == b""


# -- devutils months --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["2024-01-15", "2024-03-05"], "3\n"),
        (["2024-01-31", "2024-02-29", "--elapsed"], "1\n"),
        (["2024-03-31", "2024-02-29", "--elapsed"], "-1\n"),
        (["2023-11-20", "2024-02-01", "--list"], "2023-11\n2023-12\n2024-01\n2024-02\n"),
        (["2024-01-15T10:00-05:00", "2024-01-31T20:00-05:00"], "1\n"),
        (["2024-01-31T10:00", "2024-02-29T09:00", "--elapsed"], "0\n"),
    ],
)
def test_months(args: list[str], expected: str) -> None:
    result = run(["months", *args])
    assert (result.status, result.text, result.err) == (0, expected, "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["2024-02-30", "2024-03-01"], "START is not an ISO 8601 date or datetime: '2024-02-30'"),
        (["2024-01-01", "soon"], "END is not an ISO 8601"),
        (["2024-03-01", "2024-01-01"], "end must not be before start"),
        (["2024-01-01T00:00+00:00", "2024-02-01"], "cannot mix an aware datetime and a date"),
        (["2024-01-01"], "the following arguments are required: END"),
        (["2024-01-01", "2024-02-01", "--list", "--elapsed"], "not allowed with argument"),
    ],
)
def test_months_errors(args: list[str], message: str) -> None:
    result = run(["months", *args])
    assert result.status == 2
    assert message in result.err
    assert result.err.count("\n") == 1
    assert result.out == b""


# -- devutils batch ---------------------------------------------------------------------------


def test_batch_text() -> None:
    result = run(["batch", "--target", "64", "--max-per-device", "4"])
    assert result.status == 0
    assert result.text.splitlines()[0].startswith("4 x 16 x 1 = 64")


def test_batch_schedule() -> None:
    args = [
        "batch",
        "--target",
        "96",
        "--max-per-device",
        "8",
        "--devices",
        "2",
        "--samples",
        "10000",
    ]
    result = run([*args, "--epochs", "3", "--warmup", "0.05", "--seq-len", "2048"])
    assert result.status == 0
    lines = result.text.splitlines()
    assert lines[0].startswith("8 x 6 x 2 = 96")
    assert "steps per epoch: 105" in lines
    assert "total steps: 315 (3 epochs)" in lines
    assert "warmup steps: 16" in lines
    assert "tokens per step: 196608" in lines


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("hf", {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 16}),
        (
            "deepspeed",
            {
                "train_batch_size": 64,
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 16,
            },
        ),
        (
            "lightning",
            {
                "trainer": {"accumulate_grad_batches": 16, "devices": 1},
                "dataloader": {"batch_size": 4},
            },
        ),
    ],
)
def test_batch_framework_snippets(fmt: str, expected: dict[str, object]) -> None:
    result = run(["batch", "--target", "64", "--max-per-device", "4", "--format", fmt])
    assert json.loads(result.text) == expected


def test_batch_json() -> None:
    result = run(
        [
            "batch",
            "--target",
            "64",
            "--max-per-device",
            "6",
            "--samples",
            "1000",
            "--format",
            "json",
        ]
    )
    data = json.loads(result.text)
    assert data["plan"]["per_device"] == 4
    assert data["plan"]["effective"] == 64
    assert data["schedule"]["steps_per_epoch"] == 16


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--target", "97", "--max-per-device", "8", "--min-per-device", "2"],
            "nearest achievable targets: 96 below, 98 above",
        ),
        (["--target", "4.0", "--max-per-device", "8"], "invalid int value: '4.0'"),
        (["--target", "0", "--max-per-device", "8"], "target must be >= 1, got 0"),
        (["--target", "64"], "required: --max-per-device"),
        (
            ["--target", "64", "--max-per-device", "4", "--epochs", "2"],
            "--epochs and --max-steps need --samples",
        ),
        (
            ["--target", "64", "--max-per-device", "4", "--samples", "10", "--warmup", "2.5"],
            "ratio must be in [0, 1)",
        ),
    ],
)
def test_batch_errors(args: list[str], message: str) -> None:
    result = run(["batch", *args])
    assert result.status == 2
    assert message in result.err
    assert result.err.count("\n") == 1


def test_ci_runs_the_readmes_test_command() -> None:
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    prefix = "$ python3 -m venv .venv && . .venv/bin/activate && "
    (test_command,) = [
        line for line in readme.splitlines() if line.startswith(prefix) and "pytest" in line
    ]
    assert test_command.removeprefix(prefix) in ci.splitlines()
