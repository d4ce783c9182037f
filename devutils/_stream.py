"""Streaming replacement and atomic file rewriting for `devutils.text.Replacer`.

The streaming rule: with keys of at most ``L`` characters, a match starting more than
``L`` characters before the end of the buffered text is final (its longest key fits,
and the character after it, needed by ``whole_words``, is there). So each chunk commits
the output up to that point and keeps the rest (under ``L + 1`` characters, or the tail
of a committed match) for the next chunk. With ``whole_words`` the character before the
kept text is represented by a sentinel of the same word-ness that no key contains.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from devutils.text import Replacer

DEFAULT_CHUNK = 1 << 20
"""Characters (or bytes, for files) read at a time."""


class SupportsRead(Protocol):
    def read(self, size: int = ..., /) -> str: ...


class SupportsWrite(Protocol):
    def write(self, text: str, /) -> object: ...


class FileRefusedError(ValueError):
    """A file was left untouched because it is binary, does not decode, or cannot be encoded."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _check_chunk_size(chunk_size: object) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        msg = f"chunk_size must be a positive int, got {chunk_size!r}"
        raise ValueError(msg)
    return chunk_size


class StreamReplacer:
    """Feed text in pieces; get back exactly what replacing the whole text would give."""

    def __init__(self, replacer: Replacer) -> None:
        from devutils.text import is_word_char

        self._replacer = replacer
        self._keep = replacer.max_match_length + 1
        self._buffer = ""
        self._previous = ""  # the last character already emitted
        self.count = 0
        self.changed = False
        self._is_word = is_word_char
        self._sentinels = ("", "")
        if replacer.whole_words:
            self._sentinels = _sentinels(replacer)

    def feed(self, text: str) -> str:
        """Add *text*; return the output that is now final."""
        self._buffer += text
        if len(self._buffer) < 2 * self._keep:
            return ""
        return self._process(final=False)

    def finish(self) -> str:
        """Return the rest of the output."""
        return self._process(final=True)

    def _process(self, *, final: bool) -> str:
        replacer = self._replacer
        sentinel = ""
        if self._previous:
            sentinel = self._sentinels[self._is_word(self._previous)]
        haystack = sentinel + self._buffer
        offset = len(sentinel)
        commit = len(haystack) if final else len(haystack) - self._keep
        pieces: list[str] = []
        append = pieces.append
        position = offset
        count = 0
        if replacer._plain:
            values = replacer._values
            by_key = replacer._by_key
            check = not replacer._always_changes and not self.changed
            for key_index, start, end in replacer._spans(haystack):
                if start >= commit:
                    break
                value = values[key_index] if key_index >= 0 else by_key[haystack[start:end]]
                append(haystack[position:start])
                append(value)  # type: ignore[arg-type]
                if check and value != haystack[start:end]:
                    self.changed = True
                    check = False
                position = end
                count += 1
            if count and replacer._always_changes:
                self.changed = True
        else:
            for key_index, start, end in replacer._spans(haystack):
                if start >= commit:
                    break
                matched = haystack[start:end]
                value = replacer._value_for(key_index, matched)
                append(haystack[position:start])
                append(value)
                if value != matched:
                    self.changed = True
                position = end
                count += 1
        self.count += count
        upto = max(commit, position)
        append(haystack[position:upto])
        if upto > offset:
            self._previous = haystack[upto - 1]
        self._buffer = haystack[upto:]
        return "".join(pieces)


def _sentinels(replacer: Replacer) -> tuple[str, str]:
    """Characters (non-word, word) that no key contains, cached on the Replacer."""
    cached = replacer._stream_sentinels
    if cached is None:
        from devutils.text import is_word_char

        used = {char for key in replacer._keys for char in key + key.casefold()}
        used |= {"\x02", "\x03"}
        candidates = _candidates()
        word = next(c for c in candidates if is_word_char(c) and c not in used)
        other = next(c for c in candidates if not is_word_char(c) and c not in used)
        cached = (other, word)
        object.__setattr__(replacer, "_stream_sentinels", cached)
    return cached


def _candidates() -> list[str]:
    """Caseless characters, word and non-word, to stand in for an emitted character."""
    return [
        *"_0123456789",
        *map(chr, range(0x4E00, 0x5E00)),  # CJK ideographs: word characters without case
        *" \x00\x01\x04\x05\x06\x07!#$%&*+,-./:;<=>?@~",
        *map(chr, range(0x2010, 0x2070)),  # general punctuation
    ]


def replace_stream(
    replacer: Replacer, reader: SupportsRead, writer: SupportsWrite, *, chunk_size: int
) -> int:
    chunk_size = _check_chunk_size(chunk_size)
    state = StreamReplacer(replacer)
    while True:
        chunk = reader.read(chunk_size)
        if not chunk:
            break
        out = state.feed(chunk)
        if out:
            writer.write(out)
    out = state.finish()
    if out:
        writer.write(out)
    return state.count


def transcode(
    replacer: Replacer,
    source: IO[bytes],
    target: IO[bytes] | None,
    *,
    name: str,
    encoding: str,
    chunk_size: int,
    progress: Callable[[int], None] | None = None,
) -> StreamReplacer:
    """Stream bytes from *source* to *target* (if any), decoding and encoding strictly.

    Raises FileRefusedError for a NUL character, bytes that do not decode, or output
    that cannot be encoded.
    """
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    encoder = codecs.getincrementalencoder(encoding)(errors="strict")
    state = StreamReplacer(replacer)
    offset = 0
    while True:
        raw = source.read(chunk_size)
        final = not raw
        pending = decoder.getstate()[0]
        try:
            text = decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            reason = f"not valid {encoding} (byte {offset - len(pending) + exc.start})"
            raise FileRefusedError(name, reason) from exc
        if "\x00" in text:
            raise FileRefusedError(name, "looks binary (it has a NUL byte)")
        offset += len(raw)
        out = state.finish() if final else state.feed(text)
        if target is not None and (out or final):
            try:
                data = encoder.encode(out, final=final)
            except UnicodeEncodeError as exc:
                reason = f"the result cannot be encoded in {encoding} ({exc.reason})"
                raise FileRefusedError(name, reason) from exc
            target.write(data)
        if progress is not None and raw:
            progress(len(raw))
        if final:
            return state


def replace_file(
    replacer: Replacer,
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    backup_suffix: str | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    sync_directory: bool = True,
) -> int:
    """Rewrite *path* atomically (see `Replacer.replace_file`); return the count.

    With *sync_directory* False the caller fsyncs the directory (once for many files).
    """
    chunk_size = _check_chunk_size(chunk_size)
    name = os.fspath(path)
    real = os.path.realpath(name)
    codecs.lookup(encoding)  # LookupError for an unknown encoding, before anything else
    with open(real, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(name, "is not a regular file")
        if dry_run:
            return transcode(
                replacer,
                source,
                None,
                name=name,
                encoding=encoding,
                chunk_size=chunk_size,
                progress=progress,
            ).count
        directory = os.path.dirname(real)
        descriptor, temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(real)}.", suffix=".devutils-tmp"
        )
        try:
            with os.fdopen(descriptor, "wb") as target:
                state = transcode(
                    replacer,
                    source,
                    target,
                    name=name,
                    encoding=encoding,
                    chunk_size=chunk_size,
                    progress=progress,
                )
                if not state.changed:
                    raise _Unchanged
                target.flush()
                os.fsync(target.fileno())
            os.chmod(temporary, stat.S_IMODE(info.st_mode))
            with contextlib.suppress(OSError):
                os.chown(temporary, info.st_uid, info.st_gid)
            if backup_suffix:
                _backup(real, real + backup_suffix)
            os.replace(temporary, real)
        except _Unchanged:
            os.unlink(temporary)
            return state.count
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    if sync_directory:
        fsync_directory(directory)
    return state.count


class _Unchanged(Exception):
    pass


def _backup(original: str, backup: str) -> None:
    """Make *backup* hold the original bytes, atomically (a hard link where possible)."""
    directory = os.path.dirname(backup) or "."
    temporary = tempfile.mktemp(dir=directory, prefix=".devutils-backup-")
    try:
        os.link(original, temporary)
    except OSError:
        import shutil

        shutil.copy2(original, temporary)
    os.replace(temporary, backup)


def fsync_directory(directory: str) -> None:
    """Make renames in *directory* durable (best effort)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
