"""Zip archives (Inspect AI's ``.eval`` logs) read under a budget of unpacked bytes.

An archive may come from anywhere (a fork's artifact), and a few kilobytes of zip can claim or
unpack to gigabytes. Members are therefore never unpacked by :mod:`zipfile`, whose bzip2 and
LZMA readers inflate a whole compressed block at once whatever size was asked for: this module
reads a member's compressed bytes itself and unpacks them with a bound on the output, for
every codec it accepts (stored, deflate, bzip2 and zstd, zip method 93, which Python's
zipfile before 3.14 cannot read).

Two bounds apply (:mod:`gate.limits`): the members read from one archive may together unpack to
at most ``EVAL_GATE_INSPECT_MAX_BYTES`` (2 GiB), and each one to at most
``EVAL_GATE_MAX_DOCUMENT_BYTES`` (512 MiB), since it is parsed whole. A member whose declared
size is over what is left is refused before it is read, and unpacking stops one byte past
what is allowed, whatever the archive declared.
"""

from __future__ import annotations

import bz2
import io
import struct
import zipfile
import zlib
from types import TracebackType
from typing import Any, BinaryIO, cast

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest._json import load_bytes
from gate.limits import Limit
from gate.reading import open_input

ZIP_ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then name and extra-field lengths


class Archive:
    """A zip archive whose members are read within one budget of unpacked bytes."""

    def __init__(self, path: str, budget: Limit = limits.INSPECT_UNPACKED_BYTES) -> None:
        self.path = path
        self._budget = budget
        self._left = budget.value()
        self._handle = open_input(path)
        try:
            self._zip = zipfile.ZipFile(self._handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            self._handle.close()
            raise InputError(f"not a readable zip archive ({error})", Provenance(path)) from None
        self.names: list[str] = self._zip.namelist()

    def __enter__(self) -> Archive:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()
        self._handle.close()

    def json(self, name: str, *, non_finite: bool = False) -> Any:
        """A member parsed as one JSON document (strictly; located errors). ``non_finite``:
        NaN, Infinity and -Infinity are read as floats (Inspect AI writes them)."""
        return load_bytes(
            self.read(name), Provenance(self.path, pointer=name), non_finite=non_finite
        )

    def stream(self, name: str) -> Member:
        """A member to read piece by piece (never held whole): unpacked as it is read, within
        what is left of the archive's budget, and checked against its size and CRC at its end.
        The one-document limit does not apply: nothing holds the member whole."""
        where = Provenance(self.path, pointer=name)
        info = self._zip.getinfo(name)
        if info.flag_bits & 0x1:
            raise InputError("encrypted zip member", where)
        if info.file_size > self._left:
            raise self._refuse(where, f"declares {info.file_size} bytes unpacked", None)
        return Member(self, info, where)

    def _spend(self, size: int) -> None:
        self._left -= size

    def read(self, name: str) -> bytes:
        """A member's bytes, unpacked within the budget, checked against its size and CRC."""
        where = Provenance(self.path, pointer=name)
        info = self._zip.getinfo(name)
        if info.flag_bits & 0x1:
            raise InputError("encrypted zip member", where)
        document = limits.DOCUMENT_BYTES.value()
        if info.file_size > min(self._left, document):
            raise self._refuse(where, f"declares {info.file_size} bytes unpacked", document)
        allowed = min(self._left, document)
        data = _unpack(info.compress_type, self._raw(info, where), allowed, where)
        if len(data) > allowed:
            # The archive understated the size: stopped one byte past what was allowed.
            raise self._refuse(
                where, f"unpacks to more (it declares {info.file_size} bytes)", document
            )
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise InputError("corrupt zip member (size or CRC mismatch)", where)
        self._left -= len(data)
        return data

    def _refuse(self, where: Provenance, what: str, document: int | None) -> InputError:
        if document is not None and document < self._left:
            return InputError(
                f"zip member {what}, more than the {document}-byte limit for one document",
                where,
                expected=limits.DOCUMENT_BYTES.advice(),
            )
        limit = self._budget.value()
        return InputError(
            f"zip member {what}, more than the {self._left} bytes left of the "
            f"{limit}-byte limit for one Inspect log",
            where,
            expected=f"an Inspect log that unpacks to {self._budget.advice()}",
        )

    def _data_offset(self, info: zipfile.ZipInfo, where: Provenance) -> int:
        """Where a member's compressed bytes start, past its local header."""
        handle = self._handle
        try:
            handle.seek(info.header_offset)
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(
                handle.read(_LOCAL_HEADER.size)
            )
        except (OSError, struct.error) as error:
            raise InputError(f"corrupt zip archive ({error})", where) from None
        if signature != b"PK\x03\x04":
            raise InputError("corrupt zip archive (bad local header)", where)
        offset: int = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        return offset

    def _raw(self, info: zipfile.ZipInfo, where: Provenance) -> bytes:
        """A member's compressed bytes, read past its local header."""
        offset = self._data_offset(info, where)
        try:
            self._handle.seek(offset)
            raw = self._handle.read(info.compress_size)
        except OSError as error:
            raise InputError(f"corrupt zip archive ({error})", where) from None
        if len(raw) != info.compress_size:
            raise InputError("truncated zip archive", where)
        return raw

    def _read_raw(self, offset: int, size: int, where: Provenance) -> bytes:
        try:
            self._handle.seek(offset)
            return self._handle.read(size)
        except OSError as error:
            raise InputError(f"corrupt zip archive ({error})", where) from None


#: compressed bytes read at a time when a member is streamed.
_RAW_PIECE = 1024 * 1024


class _Compressed(io.RawIOBase):
    """A member's compressed bytes as a file, for the zstd readers."""

    def __init__(self, archive: Archive, offset: int, size: int, where: Provenance) -> None:
        self._archive, self._offset, self._left, self._where = archive, offset, size, where

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.take(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def take(self, size: int) -> bytes:
        size = min(size, self._left)
        if size <= 0:
            return b""
        data = self._archive._read_raw(self._offset, size, self._where)
        if not data:
            raise InputError("truncated zip archive", self._where)
        self._offset += len(data)
        self._left -= len(data)
        return data


class Member:
    """One archive member, unpacked as it is read (``read(n)``, as a binary file), within the
    archive's budget; its size and CRC are checked when its end is reached."""

    def __init__(self, archive: Archive, info: zipfile.ZipInfo, where: Provenance) -> None:
        self._archive = archive
        self._info = info
        self._where = where
        self._produced = 0
        self._crc = 0
        self._done = False
        raw = _Compressed(archive, archive._data_offset(info, where), info.compress_size, where)
        self._raw = raw
        method = info.compress_type
        self._inflate: Any = None
        self._zstd: Any = None
        self._zstd_errors: tuple[type[Exception], ...] = ()
        if method == zipfile.ZIP_DEFLATED:
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        elif method == zipfile.ZIP_BZIP2:
            self._inflate = bz2.BZ2Decompressor()
        elif method == ZIP_ZSTD:
            self._zstd, self._zstd_errors = zstd_reader(raw, where)
        elif method != zipfile.ZIP_STORED:
            raise InputError(
                f"zip member compressed with unsupported method {method}",
                where,
                expected="stored, deflate, bzip2 or zstd",
            )
        self._pending = b""  # compressed bytes given to the decompressor but not used yet

    def __enter__(self) -> Member:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def close(self) -> None:
        """Nothing to release: the archive owns the file."""

    def read(self, size: int = -1, /) -> bytes:
        """Up to ``size`` unpacked bytes (b"" at the end, once the member is checked whole)."""
        if self._done:
            return b""
        size = size if size > 0 else _RAW_PIECE
        # Never more than one byte past what is left of the budget: a bomb stops there.
        allowed = self._archive._left - self._produced + 1
        data = self._next(max(1, min(size, allowed)))
        if not data:
            self._finish()
            return b""
        self._produced += len(data)
        self._crc = zlib.crc32(data, self._crc)
        if self._produced > self._archive._left:
            raise self._archive._refuse(
                self._where, f"unpacks to more (it declares {self._info.file_size} bytes)", None
            )
        if self._produced > self._info.file_size:  # never read on past what it declared
            raise InputError(
                f"corrupt zip member (it unpacks to more than the {self._info.file_size} bytes "
                "it declares)",
                self._where,
            )
        return data

    def _next(self, size: int) -> bytes:
        if self._zstd is not None:
            try:
                data: bytes = self._zstd.read(size)
            except self._zstd_errors as error:
                raise InputError(f"corrupt zstd data ({error})", self._where) from None
            return data
        try:
            if self._inflate is None:  # stored
                return self._raw.take(size)
            while True:
                if isinstance(self._inflate, bz2.BZ2Decompressor):
                    if self._inflate.eof:
                        return b""
                    feed = self._raw.take(_RAW_PIECE) if self._inflate.needs_input else b""
                    data = self._inflate.decompress(feed, max_length=size)
                    if data or (self._inflate.needs_input and not feed):
                        return data
                    continue
                if self._inflate.eof:
                    return b""
                feed = self._pending or self._raw.take(_RAW_PIECE)
                data = self._inflate.decompress(feed, size)
                self._pending = self._inflate.unconsumed_tail
                if data or not feed:
                    return data
        except (zlib.error, OSError, ValueError, EOFError) as error:
            raise InputError(f"corrupt zip member ({error})", self._where) from None

    def _finish(self) -> None:
        self._done = True
        if self._produced != self._info.file_size or self._crc != self._info.CRC:
            raise InputError("corrupt zip member (size or CRC mismatch)", self._where)
        self._archive._spend(self._produced)


def _unpack(method: int, raw: bytes, limit: int, where: Provenance) -> bytes:
    """At most ``limit + 1`` unpacked bytes (one more tells the caller it went over)."""
    if method == zipfile.ZIP_STORED:
        return raw[: limit + 1]
    if method == ZIP_ZSTD:
        return zstd_decompress(raw, where, limit)
    try:
        if method == zipfile.ZIP_DEFLATED:
            data: bytes = zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw, limit + 1)
            return data
        if method == zipfile.ZIP_BZIP2:
            data = bz2.BZ2Decompressor().decompress(raw, max_length=limit + 1)
            return data
    except (zlib.error, OSError, ValueError, EOFError) as error:
        raise InputError(f"corrupt zip member ({error})", where) from None
    raise InputError(
        f"zip member compressed with unsupported method {method}",
        where,
        expected="stored, deflate, bzip2 or zstd",
    )


def zstd_decompress(raw: bytes, where: Provenance, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the data (one more tells the caller it went over)."""
    try:
        import zstandard
    except ImportError:
        return _stdlib_zstd_decompress(raw, where, limit)
    try:
        # Inspect may split a large member into several zstd frames.
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(raw), read_across_frames=True
        )
        data: bytes = reader.read(limit + 1)
    except zstandard.ZstdError as error:
        raise InputError(f"corrupt zstd data ({error})", where) from None
    return data


def zstd_reader(raw: io.RawIOBase, where: Provenance) -> tuple[Any, tuple[type[Exception], ...]]:
    """A reader of the zstd data (every frame) in ``raw``, whose ``read(n)`` gives at most n
    bytes, and the errors it raises on corrupt data: the ``zstandard`` package's, else Python
    3.14's or its backport's."""
    try:
        import zstandard
    except ImportError:
        pass
    else:
        source = cast(BinaryIO, raw)
        reader = zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True)
        return reader, (zstandard.ZstdError,)
    zstd = _stdlib_zstd(where)
    return zstd.ZstdFile(raw), (zstd.ZstdError, EOFError)


def _stdlib_zstd(where: Provenance) -> Any:
    """Python ≥ 3.14's compression.zstd, or its backport; an error naming the package to
    install when neither is there."""
    try:
        from compression import zstd
    except ImportError:
        try:
            from backports import zstd
        except ImportError:
            raise InputError(
                "this Inspect log is compressed with zstd (zip method 93), which needs the "
                "zstandard package: pip install zstandard",
                where,
            ) from None
    return zstd


def _stdlib_zstd_decompress(raw: bytes, where: Provenance, limit: int) -> bytes:
    """Python ≥ 3.14's compression.zstd, or its backport for older versions."""
    zstd = _stdlib_zstd(where)
    try:
        # ZstdFile reads across frames and stops where asked: never more than limit + 1.
        with zstd.ZstdFile(io.BytesIO(raw)) as stream:
            data: bytes = stream.read(limit + 1)
    except (zstd.ZstdError, EOFError) as error:
        raise InputError(f"corrupt zstd data ({error})", where) from None
    return data
