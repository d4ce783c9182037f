"""``devutils replace``'s flags, sed-style ``--pair`` and ``--in-place``, and the
replacer they describe."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any, Final

from devutils.cli.common import CliError, positive_int, typed_int
from devutils.cli.replace.maps import load_map
from devutils.cli.replace.work import shown as named
from devutils.messages import shown
from devutils.text import MappingKeyError, Replacer
from devutils.textengines import SURROGATES
from devutils.textfiles import DEFAULT_CHUNK_BYTES, MAX_CHUNK

MAX_JOBS = 256
"""The most files processed at once (``--jobs``); never more workers than files."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``replace`` subcommand's parser, with every flag."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
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
        help="replace FROM with TO (repeatable; the two words are taken as they are, so "
        "they may start with -)",
    )
    parser.add_argument(
        "--map",
        dest="map_file",
        metavar="FILE",
        help="a JSON object or a two-column TSV file (FROM<TAB>TO per line) of "
        "replacements; - reads it from stdin",
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
        metavar="=SUFFIX",  # (only as --in-place=SUFFIX: a separate word is a FILE)
        help="rewrite each FILE atomically; --in-place=SUFFIX keeps a backup FILE+SUFFIX",
    )
    parser.add_argument(
        "-n",
        "--dry-run",
        action="store_true",
        help="change nothing; print each file's count (with --in-place: of what it would rewrite)",
    )
    parser.add_argument(
        "--diff", action="store_true", help="change nothing; print a unified diff instead"
    )
    parser.add_argument(
        "--count",
        action="store_true",
        help="print each file's count on stderr afterwards (also with --diff)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help=f"files processed at once, 1 to {MAX_JOBS} (never more than there are files)",
    )
    parser.add_argument(
        "-r", "--recursive", action="store_true", help="walk directories given as FILE"
    )
    parser.add_argument(
        "--hidden", action="store_true", help="with --recursive, include hidden files and dirs"
    )
    parser.add_argument("--encoding", default="utf-8", help="text encoding (default: utf-8)")
    parser.add_argument(
        "--chunk-size", type=_chunk_size, default=DEFAULT_CHUNK_BYTES, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="a progress bar on stderr: auto (a terminal and long work), always or never",
    )
    parser.add_argument(
        "--no-ignore",
        action="store_true",
        help="with --recursive, also walk what .gitignore and git's other excludes ignore",
    )
    # What sed and sd users type, answered with what devutils spells instead.
    parser.add_argument("-i", nargs="?", action=_Hint, help=argparse.SUPPRESS)
    # (three dashes: no abbreviation a user types, such as --in-pla, can name it)
    parser.add_argument("---in-place-then", action=_Hint, help=argparse.SUPPRESS)
    return parser


_HINTS = {
    "-i": "-i is sed's in place: devutils spells it --in-place[=SUFFIX] (and --ignore-case)",
    "---in-place-then": (
        "--in-place takes a suffix only as --in-place={value} (a separate word is a FILE, "
        "and {value} does not exist)"
    ),
}


class _Hint(argparse.Action):
    """A flag of another tool: a usage error that says what to type instead."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        parser.error(_HINTS[str(option_string)].format(value=values))


def _jobs(text: str) -> int:
    """An argparse type: 1 to `MAX_JOBS` worker processes."""
    jobs = typed_int(text) or 0
    if jobs < 1:
        msg = f"must be a whole number from 1 to {MAX_JOBS}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    if jobs > MAX_JOBS:
        msg = f"must be at most {MAX_JOBS}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return jobs


def prepare_argv(argv: list[str]) -> tuple[list[str], list[str], list[list[str]]]:
    """Read ``devutils replace``'s arguments as sed readers expect them: the words for
    argparse, the files given after ``--``, and the ``--pair``s.

    A bare ``--in-place`` takes no value, so ``--in-place FILE`` keeps FILE a file; and
    ``--pair FROM TO`` takes the next two words whatever they are (``--pair -v
    --verbose``, ``--pair -- —``), which argparse would read as flags: they come back
    apart. Past ``--`` every word is a file: those come back apart too, as
    ``parse_intermixed_args`` (Python 3.11) would still read ``-n`` there as a flag.
    Their abbreviations (``--in-pla``, ``--pai``) are read as they are.

    Examples:
        >>> prepare_argv(["--pair", "--", "—", "--in-place", "notes.txt"])
        (['--in-place=', 'notes.txt'], [], [['--', '—']])
        >>> prepare_argv(["--pair", "a", "b", "--", "-n", "--"])
        ([], ['-n', '--'], [['a', 'b']])
    """
    out: list[str] = []
    pairs: list[list[str]] = []
    index = 0
    while index < len(argv):
        arg = _unabbreviated(argv[index])
        if arg == "--":
            return out, argv[index + 1 :], pairs
        if arg == "--pair" and index + 2 < len(argv):
            pairs.append(argv[index + 1 : index + 3])
            index += 3
            continue
        if arg == "--in-place" and index + 1 < len(argv) and _looks_like_a_suffix(argv[index + 1]):
            out.append(f"---in-place-then={argv[index + 1]}")  # `sed -i .bak`: a usage error
        out.append("--in-place=" if arg == "--in-place" else arg)
        index += 1
    return out, [], pairs


_SHORTEST: Final = {"--in-place": "--in", "--pair": "--pa"}
"""The shortest abbreviation argparse takes of each flag `prepare_argv` reads itself (no
other flag begins so: a test checks)."""


def _unabbreviated(word: str) -> str:
    """``--in-place`` for ``--in-pla`` (and ``--pair`` for ``--pai``), as argparse would
    read them: else *word*."""
    for flag, shortest in _SHORTEST.items():
        if word.startswith(shortest) and flag.startswith(word):
            return flag
    return word


def _looks_like_a_suffix(word: str) -> bool:
    """``.bak`` or ``~`` after a bare ``--in-place``, where no such file exists."""
    return word.startswith((".", "~")) and os.sep not in word and not os.path.lexists(word)


def _chunk_size(text: str) -> int:
    """An argparse type: 1 to `MAX_CHUNK` bytes."""
    if (typed_int(text) or 0) > MAX_CHUNK:  # (past MAX_INT too: the limit is this one)
        msg = f"must be at most {MAX_CHUNK} (1 GiB), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return positive_int(text)


def typed(word: str) -> str:
    """A FROM or TO word as the user typed it: read as UTF-8 (as ``--map`` files are),
    whatever the locale, so that a script's words mean the same under every locale;
    bytes that are not UTF-8 are read in the locale's encoding, as Python read them.

    Python decodes the command line with the locale's encoding (and surrogateescape), so
    ``os.fsencode`` gives back the bytes as they were typed.

    Examples:
        >>> typed("colour")
        'colour'
    """
    try:
        return os.fsencode(word).decode("utf-8")
    except UnicodeDecodeError:
        return word
    except UnicodeEncodeError:  # not from bytes (a caller's own argv): the word as given
        return word


def _check_replacement(value: str, given: str, why: str) -> None:
    """A usage error naming *given* (``--pair``, ``--map FILE``) where the replacement
    *value* holds a lone surrogate, which no file can hold (*why*: how it came to); a key
    with one is the Replacer's error."""
    if (surrogate := SURROGATES.search(value)) is not None:
        msg = (
            f"{given}: replacements must be Unicode text, got {shown(value)} with a lone "
            f"surrogate at index {surrogate.start()} ({why})"
        )
        raise CliError(msg)


def build_replacer(args: argparse.Namespace) -> Replacer:
    """Merge ``--map`` and ``--pair`` into one validated Replacer."""
    mapping: dict[str, str] = {}
    sources: dict[str, str] = {}
    if args.map_file is not None:
        for key, value in load_map(args.map_file).items():
            given = f"--map {named(args.map_file)}"
            _check_replacement(
                value, given, f"the value of {shown(key)}: a \\u escape without its pair"
            )
            mapping[key] = value
            sources[key] = given
    for key, value in ((typed(key), typed(value)) for key, value in args.pair):
        _check_replacement(value, "--pair", "a byte that is not UTF-8")
        if key in mapping and mapping[key] != value:
            msg = (
                f"key {shown(key)} given twice with different values: {shown(mapping[key])} "
                f"({sources[key]}) and {shown(value)} (--pair)"
            )
            raise CliError(msg)
        mapping[key] = value
        sources[key] = "--pair"
    if not mapping:
        msg = "no replacements: give --pair FROM TO or --map FILE"
        if args.map_file is not None and not args.pair:
            msg = f"no replacements: --map {named(args.map_file)} holds none"
        raise CliError(msg)
    try:
        return Replacer(
            mapping,
            ignore_case=args.ignore_case,
            whole_words=args.whole_words,
            preserve_case=args.preserve_case,
        )
    except MappingKeyError as exc:  # named where the user gave the key (or both keys)
        keys = [exc.key] if exc.other is None else [exc.other, exc.key]
        given = " and ".join(dict.fromkeys(sources[key] for key in keys))
        msg = f"{given}: {exc}"
        raise CliError(msg) from exc
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc
