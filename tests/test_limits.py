"""Tests for devutils.limits: the shared bound is int64's, and its users take it from here."""

from __future__ import annotations

import struct

import pytest

from devutils import batch
from devutils.cli import common
from devutils.limits import MAX_INT


def test_max_int_is_the_largest_int64() -> None:
    assert struct.unpack("<q", struct.pack("<q", MAX_INT)) == (MAX_INT,)
    with pytest.raises(struct.error):
        struct.pack("<q", MAX_INT + 1)


def test_the_library_and_the_command_line_use_the_one_bound() -> None:
    assert batch.MAX_INT is MAX_INT
    assert common.MAX_INT is MAX_INT
