"""``devutils replace``: the command line of `devutils.text`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from devutils.cli import CliError
from devutils.text import Replacer


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replace",
        help="replace many strings in one pass (leftmost-longest)",
        description=(
            "Replace many strings in one pass: at each position the longest key wins, "
            "and replacements are never rescanned. Reads stdin, writes stdout."
        ),
    )
    parser.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("FROM", "TO"),
        help="replace FROM with TO (repeatable)",
    )
    parser.add_argument(
        "--map",
        dest="map_file",
        metavar="FILE",
        help="a JSON object or a two-column TSV file (FROM<TAB>TO per line) of replacements",
    )
    parser.add_argument(
        "-i", "--ignore-case", action="store_true", help="full Unicode case folding"
    )
    parser.add_argument(
        "-w", "--whole-words", action="store_true", help="match only where not inside a word"
    )
    parser.add_argument(
        "--preserve-case",
        action="store_true",
        help="give each replacement the matched text's case (UPPER, Title, else as given)",
    )
    parser.set_defaults(handler=run)


def load_map(path: str) -> dict[str, str]:
    """Read a JSON object or two-column TSV file of replacements."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        msg = f"cannot read --map {path!r}: {exc.strerror or exc}"
        raise CliError(msg) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"--map {path!r} is not valid UTF-8 (byte {exc.start})"
        raise CliError(msg) from exc
    suffix = Path(path).suffix.lower()
    if suffix == ".json" or (suffix not in {".tsv", ".tab", ".txt"} and text.lstrip()[:1] == "{"):
        return _load_json(path, text)
    return _load_tsv(path, text)


def _load_json(path: str, text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"--map {path!r}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise CliError(msg) from exc
    if not isinstance(data, dict):
        msg = f"--map {path!r}: expected a JSON object, got {type(data).__name__}"
        raise CliError(msg)
    for key, value in data.items():
        if not isinstance(value, str):
            msg = f"--map {path!r}: value for key {key!r} must be a string, got {value!r}"
            raise CliError(msg)
    return data


def _load_tsv(path: str, text: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            msg = (
                f"--map {path!r} line {number}: expected 2 tab-separated columns, "
                f"got {len(fields)}: {line[:60]!r}"
            )
            raise CliError(msg)
        key, value = fields
        if key in mapping and mapping[key] != value:
            msg = (
                f"--map {path!r} line {number}: key {key!r} given twice with different "
                f"values {mapping[key]!r} and {value!r}"
            )
            raise CliError(msg)
        mapping[key] = value
    return mapping


def build_replacer(args: argparse.Namespace) -> Replacer:
    """Merge ``--map`` and ``--pair`` into one validated Replacer."""
    mapping: dict[str, str] = {}
    sources: dict[str, str] = {}
    if args.map_file is not None:
        for key, value in load_map(args.map_file).items():
            mapping[key] = value
            sources[key] = f"--map {args.map_file}"
    for key, value in args.pair:
        if key in mapping and mapping[key] != value:
            msg = (
                f"key {key!r} given twice with different values: {mapping[key]!r} "
                f"({sources[key]}) and {value!r} (--pair)"
            )
            raise CliError(msg)
        mapping[key] = value
        sources[key] = "--pair"
    if not mapping:
        msg = "no replacements: give --pair FROM TO or --map FILE"
        raise CliError(msg)
    try:
        return Replacer(
            mapping,
            ignore_case=args.ignore_case,
            whole_words=args.whole_words,
            preserve_case=args.preserve_case,
        )
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    replacer = build_replacer(args)
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"stdin is not valid UTF-8 (byte {exc.start})"
        raise CliError(msg, status=1) from exc
    sys.stdout.buffer.write(replacer.replace(text).encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0
