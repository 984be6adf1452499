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
from typing import Any

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

    def json(self, name: str) -> Any:
        """A member parsed as one JSON document (strictly; located errors)."""
        return load_bytes(self.read(name), Provenance(self.path, pointer=name))

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

    def _refuse(self, where: Provenance, what: str, document: int) -> InputError:
        if document < self._left:
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

    def _raw(self, info: zipfile.ZipInfo, where: Provenance) -> bytes:
        """A member's compressed bytes, read past its local header."""
        handle = self._handle
        try:
            handle.seek(info.header_offset)
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(
                handle.read(_LOCAL_HEADER.size)
            )
            if signature != b"PK\x03\x04":
                raise InputError("corrupt zip archive (bad local header)", where)
            handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
            raw = handle.read(info.compress_size)
        except (OSError, struct.error) as error:
            raise InputError(f"corrupt zip archive ({error})", where) from None
        if len(raw) != info.compress_size:
            raise InputError("truncated zip archive", where)
        return raw


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


def _stdlib_zstd_decompress(raw: bytes, where: Provenance, limit: int) -> bytes:
    """Python ≥ 3.14's compression.zstd, or its backport for older versions."""
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
    try:
        # ZstdFile reads across frames and stops where asked: never more than limit + 1.
        with zstd.ZstdFile(io.BytesIO(raw)) as stream:
            data: bytes = stream.read(limit + 1)
    except (zstd.ZstdError, EOFError) as error:
        raise InputError(f"corrupt zstd data ({error})", where) from None
    return data
