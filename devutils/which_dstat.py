"""Which ``dstat`` is this? The original dstat, Performance Co-Pilot's pcp-dstat, or dool.

Red Hat replaced ``/usr/bin/dstat`` with ``pcp-dstat``, and on Ubuntu 24.04 ``apt install
dstat`` installs ``pcp``; the maintained successor of the original is ``dool``.
`which_dstat` tells them apart from the file first, then from ``--version``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from devutils.limits import check_seconds

if TYPE_CHECKING:
    import subprocess

__all__ = ["DstatInfo", "which_dstat"]


@dataclass(frozen=True)
class DstatInfo:
    """What a ``dstat``-like command on PATH really is.

    ``flavor`` is ``"dstat"`` (the original), ``"pcp-dstat"`` (Performance Co-Pilot's
    rewrite), ``"dool"`` (the original's maintained successor), ``"missing"`` or
    ``"unknown"``; ``evidence`` lists what the decision rests on.

    Examples:
        >>> info = DstatInfo("dstat", "/usr/bin/dstat", "/usr/bin/pcp-dstat", "pcp-dstat",
        ...                  "6.2.0", ("resolves to /usr/bin/pcp-dstat",))
        >>> info.flavor, info.version, info.evidence[0]
        ('pcp-dstat', '6.2.0', 'resolves to /usr/bin/pcp-dstat')
    """

    command: str
    path: str | None
    real_path: str | None
    flavor: str
    version: str | None
    evidence: tuple[str, ...]


_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)*)")


def _head(real: str) -> bytes | str:
    """The first 256 KiB of the file *real*, or why they cannot be read."""
    try:  # (without blocking: a FIFO on PATH would wait for a writer forever)
        with open(os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return f"{real} is not a regular file"
            return handle.read(256 * 1024)
    except OSError as exc:
        return f"cannot read {real}: {exc.strerror}"


def _flavor_from_file(real: str) -> tuple[str | None, str | None, list[str]]:
    evidence: list[str] = []
    base = os.path.basename(real)
    named = "pcp-dstat" if base == "pcp-dstat" else None
    # (in a folder named pcp, as /usr/libexec/pcp/bin: pcp-dstat, where the file says
    # nothing else)
    in_pcp = "pcp-dstat" if named or "/pcp/" in real else None
    if in_pcp or base.startswith("dool"):
        evidence.append(f"resolves to {real}")
    head = _head(real)
    if isinstance(head, str):  # why it cannot be read
        evidence.append(head)
        return in_pcp, None, evidence
    if b"\0" in head[:4096]:
        evidence.append("a binary, not a Python script")
        return in_pcp, None, evidence
    text = head.decode("utf-8", "replace")
    first = text.splitlines()[0] if text else ""
    version_match = re.search(r"""^VERSION\s*=\s*['"]([^'"]+)['"]""", text, re.M)
    version = version_match.group(1) if version_match else None
    if named:
        return named, version, evidence
    if first.startswith("#!") and "pmpython" in first:
        evidence.append(f"shebang {first!r}")
        return "pcp-dstat", version, evidence
    if re.search(r"^\s*(from|import)\s+(pcp|cpmapi)\b", text, re.M):
        evidence.append("imports the pcp Python modules")
        return "pcp-dstat", version, evidence
    if re.search(r"\bdool\b", text, re.I):
        evidence.append("the script names dool")
        return "dool", version, evidence
    if re.search(r"\bDstat\b|\bdstat_\w+", text):
        evidence.append("the script has the original dstat's markers")
        return "dstat", version, evidence
    return in_pcp, version, evidence


def _flavor_from_version(path: str, timeout: float) -> tuple[str | None, str | None, str]:
    import signal
    import subprocess

    try:  # in its own session, so that a timeout kills what the script started too
        process = subprocess.Popen(
            [path, "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        return None, None, f"--version could not run: {exc.strerror}"
    try:
        stdout, stderr = _output(process, timeout)
    except BaseException as exc:  # a timeout, or Ctrl-C: no part of it is left running
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        # The pipes are closed unread: a process that left the session may hold them
        # open. One stuck in a system call dies when it returns: left to Python to reap.
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.1)
        if isinstance(exc, subprocess.TimeoutExpired):
            return None, None, f"--version timed out after {timeout:g} s"
        raise
    out = (stdout + stderr).decode("utf-8", "replace")
    first = out.strip().splitlines()[0] if out.strip() else ""
    if process.returncode != 0 and "Traceback" in out:
        return None, None, f"--version crashed (exit status {process.returncode})"
    match = _VERSION.search(first)
    # (a failure's message is no version: "cannot connect to pmcd on host 10.0.0.5")
    version = match.group(1) if match and process.returncode == 0 else None
    lowered = out.lower()
    if "pcp" in lowered:
        return "pcp-dstat", version, f"--version says {first!r}"
    if first.lower().startswith("dool"):
        return "dool", version, f"--version says {first!r}"
    if first.lower().startswith("dstat"):
        return "dstat", version, f"--version says {first!r}"
    # no dstat's answer (`/usr/bin/env: 'python2.7': No such file`): its numbers are not
    # the version
    return None, None, f"--version says {first!r}"


_MOST_OUTPUT = 1 << 16
"""Bytes of ``--version``'s stdout (and of its stderr) that are read: its answer is in
the first line; one that prints more is killed."""


def _output(process: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes]:
    """What *process* prints on stdout and stderr until it exits, at most `_MOST_OUTPUT`
    bytes of each (past that it is killed with its session, and the rest is not read);
    `subprocess.TimeoutExpired` after *timeout* seconds."""
    import selectors
    import signal
    import subprocess
    import time

    assert process.stdout is not None
    assert process.stderr is not None
    out, err = process.stdout.fileno(), process.stderr.fileno()
    held = {out: bytearray(), err: bytearray()}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for fd in held:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(process.args, timeout)
            for key, _ in selector.select(left):
                data = os.read(key.fd, 1 << 16)
                held[key.fd] += data
                if not data:
                    selector.unregister(key.fd)
                elif len(held[key.fd]) > _MOST_OUTPUT:
                    with contextlib.suppress(OSError):
                        os.killpg(process.pid, signal.SIGKILL)
                    for registered in list(selector.get_map()):
                        selector.unregister(registered)
                    break
    process.wait(max(0.0, deadline - time.monotonic()))
    return bytes(held[out]), bytes(held[err])


def which_dstat(*, timeout: float = 5.0) -> list[DstatInfo]:
    """Tell what ``dstat``, ``dool`` and ``pcp-dstat`` on PATH really are.

    Decides from the file first (a symlink to ``pcp-dstat``, a ``pmpython`` shebang, the
    script's own markers, else a folder named ``pcp``), then from ``--version`` (with a
    *timeout*; killed with what it started at the timeout), so pcp-dstat is recognized
    even when its ``--version`` crashes. A version is the one ``--version`` reports where
    it answers as a dstat does (``Dstat 0.7.4``, and exit status 0), else the script's
    own ``VERSION``.

    Raises:
        TypeError: If *timeout* is not a number.
        ValueError: If *timeout* is not positive, or more than a day.

    Examples:
        >>> [info.command for info in which_dstat()]
        ['dstat', 'dool', 'pcp-dstat']
    """
    import shutil

    timeout = check_seconds("timeout", timeout)
    results = []
    for command in ("dstat", "dool", "pcp-dstat"):
        path = shutil.which(command)
        if path is None:
            results.append(DstatInfo(command, None, None, "missing", None, ("not on PATH",)))
            continue
        real = os.path.realpath(path)
        flavor, version, evidence = _flavor_from_file(real)
        by_version, reported, note = _flavor_from_version(path, timeout)
        evidence.append(note)
        if flavor is None:
            flavor = by_version
        version = reported or version
        results.append(
            DstatInfo(command, path, real, flavor or "unknown", version, tuple(evidence))
        )
    return results
