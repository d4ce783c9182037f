"""Rewrite text files with a `devutils.text.Replacer`: streamed, strictly decoded, atomic.

`replace_file` rewrites one file so that at every moment it is wholly old or wholly new:
the new text is streamed into a temporary file in the same directory (named
``.NAME.XXXXXXXX.devutils-tmp``), given the original's owner (where allowed), extended
attributes (POSIX ACLs among them) and mode (setuid, setgid and sticky bits included),
fsynced, and renamed over the original. Two rewrites of one file take turns (an advisory
``flock`` on the original), so both changes are kept; a file that another program changed
while it was being rewritten is left as that program left it (except for a write in the
moment before the rename, or through a descriptor held open: see `AtomicRewrite`, and
take the ``flock`` to be safe from both). `replace_encoded` streams bytes through a
Replacer (decoding, replacing, encoding).

The atomic rewrite itself, for any transformation, is `devutils.atomicfiles`'
(`AtomicRewrite`, `open_regular`, `FileChangedError`, `FileRefusedError`), and this
module re-exports its names.
"""

from __future__ import annotations

import codecs
import io
import os
from typing import Final, Protocol

from devutils.atomicfiles import (
    TEMPORARY_SUFFIX,
    AtomicRewrite,
    FileChangedError,
    FileRefusedError,
    fsync_directory,
    open_regular,
)
from devutils.messages import describe
from devutils.text import Replacer
from devutils.textstream import MAX_CHUNK, StreamReplacer, check_chunk_size

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "LOSSY",
    "MAX_CHUNK",
    "TEMPORARY_SUFFIX",
    "TRANSFORMS",
    "AtomicRewrite",
    "FileChangedError",
    "FileRefusedError",
    "fsync_directory",
    "open_regular",
    "replace_encoded",
    "replace_file",
    "write_all",
]

DEFAULT_CHUNK_BYTES: Final = 1 << 20
"""The bytes `replace_encoded` and `replace_file` read at a time unless told otherwise
(`devutils.textstream.DEFAULT_CHUNK` counts characters, for text streams)."""

TRANSFORMS: Final = frozenset(
    {"idna", "punycode", "raw-unicode-escape", "undefined", "unicode-escape", "utf-7"}
)
"""Codecs (by `codecs.lookup` name) that decode bytes to text but are no text file's
encoding: written back, they would change the bytes around every match. `replace_encoded`
refuses them with a LookupError, as it does bytes-to-bytes codecs (``base64``)."""


def _round_trips(codec: str, text: str) -> bool:
    try:
        return text.encode(codec).decode(codec) == text
    except UnicodeError:
        return False


LOSSY: Final = frozenset(
    codec for codec, text in {"hz": "字a" * 30 + "~字"}.items() if not _round_trips(codec, text)
)
"""Text encodings whose encoder in this Python loses bytes: CPython's ``hz`` drops an
escaped ``"~"`` at some lengths of output (as it does the one in ``"字a" * 30 + "~字"``),
so a rewrite would corrupt the text around the matches. `replace_encoded` refuses them
with a LookupError; a Python whose codec writes that text faithfully has none."""


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class _Writer(Protocol):
    def write(self, data: bytes | memoryview, /) -> int | None: ...


def _bytes_view(data: object) -> memoryview:
    if not isinstance(data, bytes | bytearray | memoryview):
        msg = f"data must be bytes, got {type(data).__name__}"
        raise TypeError(msg)
    return memoryview(data).cast("B")


def write_all(target: _Writer, data: bytes) -> None:
    """Write all of *data* to *target*: a short write is continued, and a write that
    makes no progress is an OSError (ENOSPC), never silently dropped bytes.

    Raises:
        TypeError: If *data* is not bytes-like, *target* has no ``write``, or its
            ``write`` returns anything but an int or None.
        OSError: ENOSPC if *target* takes nothing (returns 0 or None) before the end.

    Examples:
        >>> import io
        >>> out = io.BytesIO()
        >>> write_all(out, b"all of it")
        >>> out.getvalue()
        b'all of it'
    """
    view = _bytes_view(data)
    if not callable(getattr(target, "write", None)):
        msg = f"target must have a write() method, got {type(target).__name__}"
        raise TypeError(msg)
    while view:
        written: object = target.write(view)
        if written is not None and (isinstance(written, bool) or not isinstance(written, int)):
            msg = f"target.write() must return the bytes it wrote, got {describe(written)}"
            raise TypeError(msg)
        if not written or written < 0:
            raise OSError(28, os.strerror(28))  # ENOSPC: nothing more could be written
        view = view[written:]


def replace_encoded(  # noqa: PLR0913 - the streams, then keyword-only settings
    replacer: Replacer,
    source: _Reader,
    target: _Writer | None,
    *,
    name: str,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK_BYTES,
) -> StreamReplacer:
    """Replace in the text that *source*'s bytes encode, writing it encoded to *target*.

    The bytes are streamed: each chunk is decoded strictly, replaced, encoded and written
    (*target* None: only counted). Returns the finished `StreamReplacer` (its ``count``
    and ``changed``). ``utf-8-sig`` is read as ``utf-8``: a byte order mark is kept where
    there is one, and none is added.

    Raises:
        TypeError: If *replacer* is not a `Replacer`, *source* has no ``read`` or gives
            anything but bytes, *target* has no ``write``, either is a text stream, or
            *name* or *encoding* is not a str (all but the bytes checked before reading).
        FileRefusedError: For a NUL character, bytes that do not decode, bytes that
            would not be written back as they were (see `_ReadBack`), or output that
            cannot be encoded (*name* names the file in the message).
        ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.
        LookupError: For an unknown *encoding*, a bytes-to-bytes codec (``base64``), or one
            in `TRANSFORMS` or `LOSSY`.

    Examples:
        >>> import io
        >>> out = io.BytesIO()
        >>> replace_encoded(Replacer({"colour": "color"}), io.BytesIO(b"colour\\r\\n"), out,
        ...                 name="notes.txt").count
        1
        >>> out.getvalue()
        b'color\\r\\n'
    """
    chunk_size = check_chunk_size(chunk_size)
    codec = _text_codec(encoding)
    if codec != _codec(encoding):  # utf-8-sig, which would add a mark to a file without one
        encoding = codec
    _check_streams(name, source, target)
    decoder = _StrictDecoder(encoding, name)
    encoder = codecs.getincrementalencoder(encoding)(errors="strict")
    # Where a byte 0 is the NUL character (UTF-8, Latin-1, Shift_JIS, EBCDIC; not UTF-16),
    # it marks a binary file before any decoding: a binary file's other bytes seldom decode.
    after_text = codecs.getincrementalencoder(codec)()
    after_text.encode("a")  # (past a BOM, and in a stateful encoding's ASCII)
    nul_byte = after_text.encode("\x00") == b"\x00"
    state = StreamReplacer(replacer)
    read_any = False
    while True:
        raw: object = source.read(chunk_size)
        if not isinstance(raw, bytes | bytearray):
            msg = f"source must give bytes (open it in binary mode), got {type(raw).__name__}"
            raise TypeError(msg)
        read_any = read_any or bool(raw)
        text = _text_of(decoder, bytes(raw), source, nul_byte=nul_byte, final=not raw)
        refused = decoder.refused  # (then *text* is what came before the bytes refused)
        final = not raw and refused is None
        out = state.finish() if final else state.feed(text)
        if target is not None and (out or final):
            try:  # (an empty file stays empty: no BOM for no text)
                data = encoder.encode(out, final=final) if out or read_any else b""
            except UnicodeEncodeError as exc:
                if nul_byte and _nul_byte_later(source):
                    raise _binary(name) from None
                reason = f"the result cannot be encoded in {encoding} ({exc.reason})"
                raise FileRefusedError(name, reason, "unencodable") from exc
            write_all(target, data)
        if refused is not None:  # (a stream's output before them is written)
            raise refused
        if final:
            return state


def _text_of(
    decoder: _StrictDecoder, raw: bytes, source: _Reader, *, nul_byte: bool, final: bool
) -> str:
    """*raw*, the next bytes read from *source*, decoded; a binary file (a NUL character)
    refused as one, also where bytes before its first byte 0 do not decode."""
    if nul_byte and b"\x00" in raw:
        raise _binary(decoder.name)
    try:
        text = decoder.decode(raw, final=final)
    except FileRefusedError:
        if nul_byte and _nul_byte_later(source):
            raise _binary(decoder.name) from None
        raise
    if "\x00" in text or (decoder.refused and nul_byte and _nul_byte_later(source)):
        raise _binary(decoder.name)
    return text


def _binary(name: str) -> FileRefusedError:
    return FileRefusedError(name, "looks binary (it has a NUL byte)", "binary")


def _nul_byte_later(source: _Reader) -> bool:
    """Whether the rest of *source* holds a byte 0, where *source* is a file (seekable),
    read to its end or to the 0. A stream is not read on: its end may never come (``tail
    -f``), and it is refused at the byte that is."""
    seekable = getattr(source, "seekable", None)
    if not callable(seekable) or not seekable():
        return False
    while raw := source.read(DEFAULT_CHUNK_BYTES):
        if b"\x00" in raw:
            return True
    return False


def _check_streams(name: object, source: object, target: object) -> None:
    """`replace_encoded`'s TypeErrors for its *name*, *source* and *target*, before
    anything is read."""
    if not isinstance(name, str):
        msg = f"name must be a str, got {type(name).__name__} {name!r}"
        raise TypeError(msg)
    if not callable(getattr(source, "read", None)):
        msg = f"source must have a read() method, got {type(source).__name__}"
        raise TypeError(msg)
    if target is not None and not callable(getattr(target, "write", None)):
        msg = f"target must have a write() method or be None, got {type(target).__name__}"
        raise TypeError(msg)
    for role, verb, stream in (("source", "give", source), ("target", "take", target)):
        if isinstance(stream, io.TextIOBase):
            msg = f"{role} must {verb} bytes (open it in binary mode), got {type(stream).__name__}"
            raise TypeError(msg)


def _text_codec(encoding: object) -> str:
    """The codec `replace_encoded` reads and writes *encoding*'s files with, by
    `codecs.lookup` name (``utf-8`` for ``utf-8-sig``); a LookupError for one that is no
    text file's encoding, or that this Python writes wrongly."""
    codec = _codec(encoding)
    if codec == "utf-8-sig":
        return "utf-8"
    if codec in TRANSFORMS:
        msg = f"{encoding!r} is a transform, not a text encoding"
        raise LookupError(msg)
    if codec in LOSSY:
        msg = f"{encoding!r}: this Python's encoder loses bytes of it (see LOSSY)"
        raise LookupError(msg)
    "".encode(codec)  # a LookupError for a bytes-to-bytes codec (base64, zlib, rot13)
    return codec


def _codec(encoding: object) -> str:
    """The name `codecs.lookup` gives *encoding*; a TypeError naming the argument for a
    non-str, and a LookupError for a name no codec can have (a NUL, a lone surrogate, as
    a command line gives undecodable bytes), as for any other unknown name."""
    if not isinstance(encoding, str):
        msg = f"encoding must be a str, got {type(encoding).__name__} {encoding!r:.60}"
        raise TypeError(msg)
    try:
        return codecs.lookup(encoding).name
    except ValueError:  # (UnicodeEncodeError, "embedded null character")
        msg = f"unknown encoding: {encoding!r}"
        raise LookupError(msg) from None


class _ReadBack:
    """Checks that the text read encodes back to the bytes it came from, byte for byte:
    so it does in UTF-8 and the single-byte encodings, not always where several byte
    sequences decode to one text (``iso2022_jp``'s escapes, ``big5hkscs``) or the codec
    transforms (``unicode_escape``). Stateful encoders hold bytes back until later text,
    so the two sides are compared as they come, as far as both have gone."""

    def __init__(self, encoding: str) -> None:
        self._encoder = codecs.getincrementalencoder(encoding)(errors="strict")
        self._read = b""
        self._made = b""
        self._started = False

    def same(self, text: str, data: bytes, *, final: bool) -> bool:
        """Whether *text*, decoded from *data*, still agrees with the bytes read so far
        (an empty file reads back as empty, where an encoder writes a BOM even for "")."""
        if not (text or data or self._made or self._read or self._started):
            return True  # (nothing yet: no BOM to compare)
        self._started = True
        try:
            self._made += self._encoder.encode(text, final=final)
        except UnicodeEncodeError:
            return False
        self._read += data
        common = min(len(self._read), len(self._made))
        if self._read[:common] != self._made[:common]:
            return False
        self._read, self._made = self._read[common:], self._made[common:]
        return not final or self._read == self._made == b""


class _StrictDecoder:
    """Decodes a stream strictly: bytes that would not be written back as they were
    (`_ReadBack`) are a `FileRefusedError` naming the byte; so are bytes that do not
    decode, where `decode` gives the text before them and leaves the error in `refused`."""

    def __init__(self, encoding: str, name: str) -> None:
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
        self._read_back = _ReadBack(encoding)
        self._encoding = encoding
        self.name = name
        self.refused: FileRefusedError | None = None
        self._offset = 0  # of the first byte not yet given to the decoder

    def decode(self, raw: bytes, *, final: bool) -> str:
        before = self._decoder.getstate()
        pending = before[0]
        start = self._offset - len(pending)  # of the first byte not yet decoded
        try:
            text = self._decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            reason = f"not valid {self._encoding} (byte {start + exc.start})"
            self.refused = FileRefusedError(self.name, reason, "undecodable")
            self.refused.__cause__ = exc
            self._decoder.setstate(before)  # (and the bytes before them, decoded)
            raw, final = raw[: max(0, exc.start - len(pending))], False
            text = self._decoder.decode(raw, final=False)
        except UnicodeError as exc:  # utf-16 and utf-32 without a byte order mark
            reason = f"not valid {self._encoding} ({exc})"
            raise FileRefusedError(self.name, reason, "undecodable") from exc
        self._offset += len(raw)
        read = pending + raw
        decoded = read[: len(read) - len(self._decoder.getstate()[0])]
        if not self._read_back.same(text, decoded, final=final):
            reason = (
                f"its {self._encoding} does not read back byte for byte (near byte {start}):"
                f" a rewrite would change it outside the matches"
            )
            raise FileRefusedError(self.name, reason, "respelled")
        return text


def replace_file(
    replacer: Replacer,
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    backup_suffix: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_BYTES,
) -> int:
    """Rewrite the file at *path* in place, atomically; return the number of replacements.

    See `AtomicRewrite` for the guarantees. A file with nothing to change is not
    rewritten (its mtime stays). A symlink is followed and its target rewritten. Line
    endings and every byte outside the matches are kept exactly.

    Args:
        replacer: The replacements.
        path: The file to rewrite.
        encoding: Its text encoding.
        backup_suffix: If given, keep the original as ``path + backup_suffix`` (next
            to the symlink's target when *path* is a symlink), like ``sed -i.bak``;
            ``""`` keeps none.
        chunk_size: Bytes read at a time.

    Raises:
        TypeError: If *replacer* is not a `Replacer`, *path* not a path or *encoding*
            not a str.
        FileRefusedError: If the file is binary (has a NUL character), does not decode,
            or the result cannot be encoded; the file is untouched.
        FileChangedError: If another process changed the file meanwhile; its change stays.
        OSError: If the file cannot be read or written; the file is untouched.
        ValueError: If *chunk_size* is not in ``1..MAX_CHUNK``.
        LookupError: For an unknown *encoding*, or one `replace_encoded` refuses.

    Examples:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = path.write_text("The colour of the centre\\n", encoding="utf-8")
        >>> replace_file(Replacer({"colour": "color", "centre": "center"}), path)
        2
        >>> path.read_text(encoding="utf-8")
        'The color of the center\\n'
    """
    chunk_size = check_chunk_size(chunk_size)
    given: object = replacer
    if not isinstance(given, Replacer):  # before the file is opened
        msg = f"replacer must be a Replacer, got {type(given).__name__} {given!r:.60}"
        raise TypeError(msg)
    _codec(encoding)  # LookupError for an unknown encoding, before anything else
    with AtomicRewrite(path, backup_suffix=backup_suffix) as rewrite:
        state = replace_encoded(
            replacer,
            rewrite.source,
            rewrite.target,
            name=rewrite.name,
            encoding=encoding,
            chunk_size=chunk_size,
        )
        if state.changed:
            rewrite.commit()
    return state.count
