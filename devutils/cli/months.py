"""``devutils months``: the command line of `devutils.dates`."""

from __future__ import annotations

import argparse
import re
from datetime import date, datetime
from typing import Any

from devutils.cli.common import CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "months",
        help="count the calendar months a date range touches",
        description=(
            "Print how many calendar months the closed range START..END touches "
            "(2024-01-15 2024-03-05 -> 3). Dates are ISO 8601: YYYY-MM-DD, a month "
            "YYYY-MM (its first day), or a datetime such as 2024-01-15T10:00 or "
            "2024-01-15T10:00+01:00."
        ),
    )
    parser.add_argument("start", metavar="START", help="first day, or month (ISO 8601)")
    parser.add_argument("end", metavar="END", help="last day, or month (ISO 8601)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="print each month as YYYY-MM instead")
    group.add_argument(
        "--elapsed",
        action="store_true",
        help="print whole months elapsed instead (relativedelta semantics; may be negative)",
    )
    parser.set_defaults(handler=run)


_MONTH = re.compile("[0-9]{4}-[0-9]{2}")
"""A month, ``YYYY-MM``, in ASCII digits (as `date.fromisoformat` takes them)."""
_DATETIME = re.compile(
    r"[^T ]+[T ][0-9]{2}(:?[0-9]{2}(:?[0-9]{2}([.,][0-9]{1,6})?)?)?"
    r"(Z|[+-][0-9]{2}(:?[0-9]{2}(:?[0-9]{2}([.,][0-9]{1,6})?)?)?)?"
)
"""A date, ``T`` or a space, a time and an offset, as ISO 8601 writes them: what Python
3.11's `datetime.fromisoformat` also takes otherwise, it misreads (``T10.5`` as half a
second past ten, not 10:30; ``2024-01-15+01:00`` as one in the morning; a seventh digit
of a fraction dropped)."""


def parse_iso(name: str, text: str) -> date:
    """Parse an ISO 8601 date, month (``YYYY-MM``: its first day) or datetime.

    Examples:
        >>> parse_iso("START", "2024-02"), parse_iso("END", "2024-02-29")
        (datetime.date(2024, 2, 1), datetime.date(2024, 2, 29))
    """
    try:
        if _MONTH.fullmatch(text):
            return date(int(text[:4]), int(text[5:]), 1)
        if len(text) <= len("YYYY-MM-DD") and "T" not in text and " " not in text:
            return date.fromisoformat(text)
        if not _DATETIME.fullmatch(text):
            msg = "a time follows the date after T or a space: HH, HH:MM or HH:MM:SS.ffffff"
            raise ValueError(msg)
        return datetime.fromisoformat(text)
    except ValueError as exc:
        msg = f"{name} is not an ISO 8601 date or datetime: {text!r} ({exc})"
        raise CliError(msg) from exc


def run(args: argparse.Namespace) -> int:
    from devutils.dates import (
        DateOrderError,
        DateRangeError,
        MixedDatesError,
        count_months,
        iter_months,
        months_between,
    )

    start = parse_iso("START", args.start)
    end = parse_iso("END", args.end)
    try:
        if args.elapsed:
            print(months_between(start, end))
        elif args.list:
            for month in iter_months(start, end):
                print(f"{month.year:04d}-{month.month:02d}")
        else:
            print(count_months(start, end))
    except DateOrderError as exc:  # the values as typed, not as Python objects
        msg = f"END is before START, got START {args.start!r}, END {args.end!r}"
        raise CliError(msg) from exc
    except MixedDatesError as exc:
        first, second = exc.kinds
        msg = f"cannot mix {first} and {second}: START {args.start!r}, END {args.end!r}"
        raise CliError(msg) from exc
    except DateRangeError as exc:  # a list of months past year 9999, on START's clock
        msg = (
            f"the months from START {args.start!r} to END {args.end!r} reach outside "
            f"years 1..9999 on START's wall clock"
        )
        raise CliError(msg) from exc
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    return 0
