"""Tests for devutils batch."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.conftest import Cli


def test_batch_text(cli: Cli) -> None:
    result = cli(["batch", "--target", "64", "--max-per-device", "4"])
    assert result.status == 0
    assert result.text.splitlines()[0].startswith("4 x 16 x 1 = 64")


def test_batch_schedule(cli: Cli) -> None:
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
    result = cli([*args, "--epochs", "3", "--warmup", "0.05", "--seq-len", "2048"])
    assert result.status == 0
    lines = result.text.splitlines()
    assert lines[0].startswith("8 x 6 x 2 = 96")
    assert "steps per epoch: 105" in lines
    assert "total steps: 315 (3 epochs)" in lines
    assert "warmup steps: 16" in lines
    assert "tokens per step: 196608" in lines


def test_tokens_per_step_without_a_schedule(cli: Cli) -> None:
    args = ["batch", "--target", "96", "--max-per-device", "8", "--devices", "2"]
    text = cli([*args, "--seq-len", "2048"]).text.splitlines()
    assert text[-1] == "tokens per step: 196608"  # 8 x 6 x 2 samples of 2048 tokens
    data = json.loads(cli([*args, "--seq-len", "2048", "--format", "json"]).text)
    assert (data["tokens_per_step"], "schedule" in data) == (196608, False)


def test_tokens_per_step_past_max_int_is_an_error_before_any_output(cli: Cli) -> None:
    big = str(2**62)
    for extra in ([], ["--samples", "10"], ["--format", "json"]):
        result = cli(["batch", "--target", big, "--max-per-device", big, "--seq-len", "4", *extra])
        assert (result.status, result.out) == (2, b"")
        assert result.err == (
            "devutils batch: error: tokens per step is 18446744073709551616, more than 2**63 - 1\n"
        )


def test_lightning_devices_per_node(cli: Cli) -> None:
    args = ["batch", "--target", "256", "--max-per-device", "16", "--devices", "4"]
    result = cli([*args, "--num-nodes", "2", "--model-parallel", "4", "--format", "lightning"])
    assert json.loads(result.text)["trainer"] == {
        "accumulate_grad_batches": 4,
        "devices": 8,
        "num_nodes": 2,
    }
    other = cli([*args, "--num-nodes", "3", "--format", "json"])  # (it was checked there)
    assert (other.status, other.err) == (
        2,
        "devutils batch: error: --num-nodes sets Lightning's devices: give --format lightning\n",
    )
    refused = cli([*args, "--num-nodes", "3", "--format", "lightning"])
    assert (refused.status, refused.err) == (
        2,
        "devutils batch: error: --num-nodes 3 does not divide the 4 GPUs"
        " (the devices times the model-parallel size)\n",
    )


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
def test_batch_framework_snippets(fmt: str, expected: dict[str, object], cli: Cli) -> None:
    result = cli(["batch", "--target", "64", "--max-per-device", "4", "--format", fmt])
    assert json.loads(result.text) == expected


def test_batch_json(cli: Cli) -> None:
    result = cli(
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
        (
            ["--target", "4.0", "--max-per-device", "8"],
            "argument --target: must be a positive integer (at most 2**63 - 1), got '4.0'",
        ),
        (["--target", "0", "--max-per-device", "8"], "argument --target: must be a positive"),
        (["--target", "64"], "required: --max-per-device"),
        (
            ["--target", "64", "--max-per-device", "4", "--epochs", "2"],
            "--epochs needs --samples (the schedule is counted from it)",
        ),
        (
            ["--target", "64", "--max-per-device", "4", "--warmup", "0", "--drop-last"],
            "--warmup and --drop-last need --samples",
        ),
        (
            ["--target", "64", "--max-per-device", "4", "--samples", "10", "--warmup", "2.5"],
            "argument --warmup: must be a ratio in [0, 1) or a step count >= 0, got '2.5'",
        ),
        # checked with or without --samples
        (["--target", "64", "--max-per-device", "4", "--warmup", "1.5"], "argument --warmup"),
        (["--target", "64", "--max-per-device", "4", "--warmup", "-3"], "argument --warmup"),
        (["--target", "64", "--max-per-device", "4", "--seq-len", "0"], "argument --seq-len"),
        (
            ["--target", "64", "--max-per-device", "4", "--samples", "100", "--epochs", "1e308"],
            "--epochs 1e+308 x 2 steps per epoch is over 2**63 - 1 steps",
        ),
        (["--target", "64", "--max-per-device", "4", "--epochs", "inf"], "argument --epochs"),
        (["--target", "9" * 30, "--max-per-device", "4"], "argument --target"),
        (
            ["--target", "64", "--max-per-device", "4", "--min-per-device", "8"],
            "--min-per-device 8 is larger than --max-per-device 4",
        ),
        (
            ["--target", "64", "--max-per-device", "4", "--samples", "3", "--drop-last"],
            "--samples 3 gives no full micro-batch of 4 x 1 devices when the last, partial one is dropped",
        ),
        (
            ["--target", "64", "--max-per-device", "4", "--samples", "10", "--warmup", "50"],
            "--warmup 50 must be between 0 and the total steps, 1",
        ),
    ],
)
def test_batch_errors(args: list[str], message: str, cli: Cli) -> None:
    result = cli(["batch", *args])
    assert result.status == 2
    assert message in result.err
    assert result.err.count("\n") == 1


# Every error the library can give the command, with what the command says.
LIBRARY_ERRORS = [
    (
        ["--target", "97", "--max-per-device", "8", "--min-per-device", "2"],
        "--target 97 has no exact split with 2..8 per device on 1 device(s); nearest achievable"
        " targets: 96 below, 98 above (or pass --rounding down, up or nearest)",
    ),
    (
        ["--target", "3", "--max-per-device", "8", "--devices", "4", "--rounding", "down"],
        "--target 3 has no achievable target down from it with 1..8 per device on 4 device(s)",
    ),
    (
        ["--target", str(2**63 - 1), "--max-per-device", "10", "--min-per-device", "8"],
        # no target above fits in int64: only the one below is offered, and the roundings
        # that reach it (--rounding up then failed)
        "--target 9223372036854775807 has no exact split with 8..10 per device on 1 device(s); "
        "nearest achievable targets: 9223372036854775800 below (or pass --rounding down or "
        "nearest)",
    ),
    (
        ["--target", "64", "--max-per-device", "4", "--samples", "3", "--drop-last"],
        "--samples 3 gives no full micro-batch of 4 x 1 devices when the last, partial one is dropped",
    ),
    (
        ["--target", "64", "--max-per-device", "4", "--samples", "100", "--epochs", "1e308"],
        "--epochs 1e+308 x 2 steps per epoch is over 2**63 - 1 steps",
    ),
    (
        ["--target", "64", "--max-per-device", "4", "--samples", "10", "--warmup", "50"],
        "--warmup 50 must be between 0 and the total steps, 1",
    ),
]


@pytest.mark.parametrize(("args", "message"), LIBRARY_ERRORS)
def test_library_errors_name_the_flags_never_a_python_argument(
    args: list[str], message: str, cli: Cli
) -> None:
    result = cli(["batch", *args])
    assert result.status == 2
    assert result.err == f"devutils batch: error: {message}\n"
    assert re.search(r"[a-z]_[a-z]|rounding=", result.err) is None  # no n_samples, drop_last=


def test_framework_snippets_carry_the_schedule_in_their_own_keys(cli: Cli) -> None:
    import json

    args = ["batch", "--target", "64", "--max-per-device", "8", "--samples", "10000"]
    schedule = [*args, "--epochs", "3", "--warmup", "0.1"]
    hf = json.loads(cli([*schedule, "--format", "hf"]).text)
    # 10000 samples / 8 per device = 1250 micro-batches, / 8 accumulation = 157 steps an
    # epoch (the Trainer rounds up), x 3 = 471; warmup ceil(0.1 x 471) = 48
    assert hf == {
        "per_device_train_batch_size": 8,
        "gradient_accumulation_steps": 8,
        "max_steps": 471,
        "warmup_steps": 48,
        "dataloader_drop_last": False,
    }
    deepspeed = json.loads(cli([*schedule, "--format", "deepspeed"]).text)
    assert deepspeed["scheduler"] == {
        "type": "WarmupDecayLR",
        "params": {"warmup_num_steps": 48, "total_num_steps": 471},
    }
    assert deepspeed["train_batch_size"] == 64
    assert deepspeed["dataloader_drop_last"] is False
    dropped = json.loads(cli([*schedule, "--drop-last", "--format", "deepspeed"]).text)
    assert dropped["dataloader_drop_last"] is True  # (it was left out: DeepSpeed kept the last)
    lightning = json.loads(cli([*schedule, "--drop-last", "--format", "lightning"]).text)
    assert lightning["trainer"]["max_steps"] == 471  # 1250 micro-batches: none partial
    assert lightning["dataloader"] == {"batch_size": 8, "drop_last": True}
    plain = json.loads(
        cli(["batch", "--target", "64", "--max-per-device", "8", "--format", "hf"]).text
    )
    assert plain == {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 8}


def test_lightning_max_steps_count_the_distributed_sampler_s_padding(cli: Cli) -> None:
    # 23 samples on 3 devices: DistributedSampler pads each share to 8, so with batches of 2
    # and the last partial one dropped, 4 batches per epoch (the Trainer's loader: 3)
    args = ["batch", "--target", "6", "--max-per-device", "2", "--devices", "3"]
    args += ["--samples", "23", "--drop-last", "--epochs", "2"]
    lightning = json.loads(cli([*args, "--format", "lightning"]).text)
    assert lightning["trainer"]["max_steps"] == 8
    hf = json.loads(cli([*args, "--format", "hf"]).text)
    assert hf["max_steps"] == 6


def test_no_rounding_hint_where_no_target_has_a_split(cli: Cli) -> None:
    args = ["batch", "--target", "5", "--max-per-device", "4", "--min-per-device", "2"]
    result = cli([*args, "--devices", str(2**62)])
    assert result.status == 2
    assert "--rounding" not in result.err
    assert "and no target does (all are over 2**63 - 1)" in result.err


def test_whole_epochs_are_counted_exactly_past_2_53_steps(cli: Cli) -> None:
    # --epochs was always a float: 3 x 9007199254740993 steps gave ...976, below 3 epochs
    args = ["batch", "--target", "1", "--max-per-device", "1", "--samples", str(2**53 + 1)]
    assert f"total steps: {2**53 + 1} (1 epoch)" in cli(args).text.splitlines()
    hf = json.loads(cli([*args, "--epochs", "3", "--format", "hf"]).text)
    assert hf["max_steps"] == 3 * (2**53 + 1)


@pytest.mark.parametrize(
    ("flag", "text"),
    [
        (flag, text)
        for flag in ("--max-per-device", "--samples", "--epochs", "--warmup")
        for text in ("\u0661\u0662", "\U0001d7e0", "1_000", " 5 ", "+5", "1e3")
        if (flag, text) != ("--epochs", "1e3")  # (1000 epochs, as a number is written)
    ],
)
def test_numbers_are_ascii_digits_as_typed(cli: Cli, flag: str, text: str) -> None:
    # int() and float() took Arabic-Indic and mathematical digits, "_", spaces and "+"
    args = ["batch", "--target", "64", "--max-per-device", "8", "--samples", "1000"]
    result = cli([*args, flag, text])
    assert result.status == 2
    assert f"argument {flag}: must be" in result.err
