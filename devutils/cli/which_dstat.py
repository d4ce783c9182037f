"""``devutils which-dstat``: the command line of `devutils.which_dstat`."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from typing import Any

from devutils.cli.common import catch_signals
from devutils.which_dstat import which_dstat


def register(subparsers: Any) -> None:
    which = subparsers.add_parser(
        "which-dstat",
        help="tell dstat, pcp-dstat and dool on PATH apart",
        description="Show what dstat, dool and pcp-dstat on PATH really are, and why.",
    )
    which.add_argument("--json", action="store_true", help="print JSON")
    which.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    catch_signals()  # SIGTERM, SIGHUP...: a --version still running is killed, as on Ctrl-C
    infos = which_dstat()
    if args.json:
        print(json.dumps([asdict(info) for info in infos], indent=2))
        return 0
    for info in infos:
        if info.flavor == "missing":
            print(f"{info.command}: not on PATH")
            continue
        path, real = _printable(info.path), _printable(info.real_path)
        where = path if info.path == info.real_path else f"{path} -> {real}"
        version = f" {info.version}" if info.version else ""
        print(f"{info.command}: {info.flavor}{version} ({where})")
        for note in info.evidence:
            print(f"  {_printable(note)}")
    return 0


def _printable(text: str | None) -> str:
    """*text* with the bytes of a name that is not UTF-8 as ``\\xff`` (any stdout
    encodes that)."""
    return os.fsencode(text or "").decode("utf-8", "backslashreplace")
