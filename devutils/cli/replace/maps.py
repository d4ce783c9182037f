"""Reading ``--map FILE``: a JSON object, or a TSV file of ``FROM<TAB>TO`` lines.

A file named ``.json`` is read as JSON; any other is a TSV when each of its lines (but
the empty ones) holds one tab, as a TSV's do, else JSON when it is a JSON object, and TSV
otherwise (so a glossary named ``.txt`` works either way, and a TSV whose first key
starts with ``{`` stays a TSV: ``{<TAB>}`` maps ``{`` to ``}``, where JSON would read an
empty object). A JSON map reads as a TSV only where each of its lines holds exactly one
tab (a tab in JSON is whitespace between tokens: a string cannot hold one), which none
that ``json.dump`` writes does, on one line or indented with tabs or spaces.

Both kinds follow one rule: a key given twice with the same value is fine, with two
different values it is an error naming both. A TSV file's lines end at ``\\n`` (a ``\\r``
before it is dropped, for files from Windows); nothing else ends a line, so a value may
hold a form feed, U+2028 or U+0085.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from devutils.cli.common import CliError
from devutils.cli.replace.work import shown as named
from devutils.messages import shown

STDIN = "-"


def load_map(path: str) -> dict[str, str]:
    """Read a JSON object or two-column TSV file of replacements (``-``: stdin)."""
    if not path:
        msg = "--map must name a file (or - for stdin), got ''"
        raise CliError(msg)
    try:
        if path == STDIN:
            if sys.stdin is None:
                msg = "cannot read --map -: stdin is closed"
                raise CliError(msg)
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:  # (a pipe too: --map <(jq ... glossary.json))
                if stat.S_ISCHR(mode := os.fstat(handle.fileno()).st_mode) or stat.S_ISBLK(mode):
                    msg = f"--map {named(path)} is a device, not a file of replacements"
                    raise CliError(msg)
                raw = handle.read()
    except OSError as exc:
        msg = f"cannot read --map {named(path)}: {exc.strerror or exc}"
        raise CliError(msg) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"--map {named(path)} is not valid UTF-8 (byte {exc.start})"
        raise CliError(msg) from exc
    if Path(path).suffix.lower() == ".json" or _is_json_object(text):
        return _load_json(path, text)
    return _load_tsv(path, text)


def _is_json_object(text: str) -> bool:
    """Whether *text* is a JSON object and not a TSV (whose first key may start with ``{``
    too: ``{<TAB>}``, to JSON, is an empty object, the tab a space)."""
    if text.lstrip()[:1] != "{" or _is_tsv(text):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False
    except RecursionError:  # an object nested too deep: read as JSON, which says so
        return True


def _is_tsv(text: str) -> bool:
    """Whether every line of *text* but the empty ones holds one tab, as `_load_tsv` reads
    them (a line ends at ``\\n``, and a ``\\r`` before it is dropped).

    Examples:
        >>> _is_tsv("{\\t}\\n"), _is_tsv('{\\n\\t"a": "b"\\n}\\n'), _is_tsv('{"a":\\t"b"}')
        (True, False, True)
    """
    return all(line.count("\t") == 1 for line in text.split("\n") if line.removesuffix("\r"))


def _add(mapping: dict[str, Any], key: str, value: object, where: str) -> None:
    """Add *key* to *mapping*: again with the same value is fine, with another an error
    that *where* (``--map 'FILE'``, and the line) begins."""
    if key in mapping and mapping[key] != value:
        msg = (
            f"{where}: key {key!r} given twice with different values {mapping[key]!r} and {value!r}"
        )
        raise CliError(msg)
    mapping[key] = value


def _load_json(path: str, text: str) -> dict[str, str]:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        mapping: dict[str, object] = {}
        for key, value in items:
            _add(mapping, key, value, f"--map {named(path)}")
        return mapping

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        msg = (
            f"--map {named(path)}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        )
        raise CliError(msg) from exc
    except RecursionError:  # (values must be strings: no map nests)
        msg = f"--map {named(path)}: JSON nested too deep (a map is one object of strings)"
        raise CliError(msg) from None
    if not isinstance(data, dict):
        msg = f"--map {named(path)}: expected a JSON object, got {type(data).__name__}"
        raise CliError(msg)
    for key, value in data.items():
        if not isinstance(value, str):
            msg = (
                f"--map {named(path)}: value for key {shown(key)} must be a string, "
                f"got {shown(value)}"
            )
            raise CliError(msg)
    return data


def _load_tsv(path: str, text: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the last line's newline
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")  # noqa: PLW2901 - the same line, without its CR
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 2:  # noqa: PLR2004 - FROM and TO
            msg = (
                f"--map {named(path)} line {number}: expected 2 tab-separated columns, "
                f"got {len(fields)}: {line[:60]!r} (read as TSV: not named .json and not "
                f"a JSON object)"
            )
            raise CliError(msg)
        key, value = fields
        _add(mapping, key, value, f"--map {named(path)} line {number}")
    return mapping
