"""``devutils replace``: the command line of `devutils.text`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from devutils.cli import CliError, positive_int

if TYPE_CHECKING:
    from devutils.text import Replacer

DEFAULT_CHUNK = 1 << 20  # devutils._stream.DEFAULT_CHUNK, without importing it at startup


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replace",
        help="replace many strings in one pass (leftmost-longest), in streams or files",
        description=(
            "Replace many strings in one pass: at each position the longest key wins, "
            "and replacements are never rescanned. With no FILE (or -) it filters stdin "
            "to stdout; with FILEs it writes the results to stdout in order, or rewrites "
            "them atomically with --in-place. Exit status: 0 done, 1 a file was refused "
            "or failed, 2 usage error."
        ),
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="files to read (- is stdin)")
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
    parser.add_argument("--ignore-case", action="store_true", help="full Unicode case folding")
    parser.add_argument(
        "-w", "--whole-words", action="store_true", help="match only where not inside a word"
    )
    parser.add_argument(
        "--preserve-case",
        action="store_true",
        help="give each replacement the matched text's case (UPPER, Title, else as given)",
    )
    parser.add_argument(
        "--in-place",
        nargs="?",
        const="",
        default=None,
        metavar="SUFFIX",
        help="rewrite each FILE atomically; --in-place=SUFFIX keeps a backup FILE+SUFFIX",
    )
    parser.add_argument(
        "-n", "--dry-run", action="store_true", help="change nothing; print each file's count"
    )
    parser.add_argument(
        "--diff", action="store_true", help="change nothing; print a unified diff instead"
    )
    parser.add_argument(
        "--count", action="store_true", help="print each file's count on stderr afterwards"
    )
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=1, metavar="N", help="files processed at once"
    )
    parser.add_argument(
        "-r", "--recursive", action="store_true", help="walk directories given as FILE"
    )
    parser.add_argument(
        "--hidden", action="store_true", help="with --recursive, include hidden files and dirs"
    )
    parser.add_argument("--encoding", default="utf-8", help="text encoding (default: utf-8)")
    parser.add_argument(
        "--chunk-size", type=positive_int, default=DEFAULT_CHUNK, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="a progress bar on stderr: auto (a terminal and long work), always or never",
    )
    parser.set_defaults(handler=run)


def prepare_argv(argv: list[str]) -> list[str]:
    """Let a bare ``--in-place`` take no value, so ``--in-place FILE`` keeps FILE a file."""
    out: list[str] = []
    for index, arg in enumerate(argv):
        if arg == "--":
            return out + argv[index:]
        out.append("--in-place=" if arg == "--in-place" else arg)
    return out


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
    from devutils.text import Replacer

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
    from devutils._cli_files import run_files

    replacer = build_replacer(args)
    return run_files(replacer, args)
