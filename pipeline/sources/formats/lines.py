"""Line-delimited files (JSONL, text lines): byte-range splits on line boundaries, compressed files whole. A line
is held in memory up to the record size limit only, whatever the file decompresses to."""

from __future__ import annotations

import gzip
import io
import math
from collections.abc import Iterator
from typing import IO

import zstandard
from fsspec.spec import AbstractBufferedFile

from pipeline.sources.formats.base import SourceFile, Split
from pipeline.sources.records import Parsed, RejectReason
from pipeline.storage import resolve

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
PIECE = 1 << 20  # an over-long line is read on to its end in pieces of this size
KEPT = 4096  # of an over-long line, the bytes kept (a reject's excerpt)


def compression_of(url: str) -> str | None:
    """'gzip', 'zstd' or None, from the file name."""
    for suffix, name in COMPRESSED_SUFFIXES.items():
        if url.endswith(suffix):
            return name
    return None


def line_splits(file: SourceFile, split_bytes: int) -> list[Split]:
    """Byte ranges of about ``split_bytes``; a compressed or empty file is one whole-file split."""
    comp = compression_of(file.url)
    if comp is not None or file.size == 0:
        return [file.split(0, -1, comp)]
    n = max(1, math.ceil(file.size / split_bytes))
    step = math.ceil(file.size / n)
    return [file.split(a, min(a + step, file.size)) for a in range(0, file.size, step)]


def whole_file_split(file: SourceFile) -> list[Split]:
    """The file as one split (decompressed when its name says so)."""
    return [file.split(0, -1, compression_of(file.url))]


def open_split(split: Split) -> IO[bytes] | io.BufferedIOBase:
    """The split's file, opened for reading bytes and decompressed."""
    fs, path = resolve(split.url)
    raw = fs.open(path, "rb", block_size=4 * 1024 * 1024)
    if split.compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if split.compression == "zstd":
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True))
    if isinstance(raw, AbstractBufferedFile):  # an object store's file: its readline takes no size
        return io.BufferedReader(raw, PIECE)
    return raw


def too_large(size: int, limit: int) -> Parsed:
    """The reject of a record of ``size`` bytes (or more) over the limit ``ingest.max_record_bytes``."""
    return Parsed(reason=RejectReason.RECORD_TOO_LARGE, detail=f"{size} bytes > {limit}")


def _eol(line: bytes) -> int:
    return 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0


def _next_line(f: IO[bytes] | io.BufferedIOBase, limit: int) -> tuple[bytes, int, int]:
    """``(line, size, taken)``: the next line without its end of line, its size, and the bytes it took (end of line
    included; 0 at the end of the file). A line over ``limit`` bytes is read on to its end in pieces, its first
    ``KEPT`` bytes kept."""
    line = f.readline(limit + 2)
    taken = len(line)
    if taken < limit + 2 or line.endswith(b"\n"):
        eol = _eol(line)
        return line[: taken - eol], taken - eol, taken
    head = line[:KEPT]
    del line
    while True:
        piece = f.readline(PIECE)
        taken += len(piece)
        if not piece or piece.endswith(b"\n"):
            eol = _eol(piece)
            return head, taken - eol, taken


def lines(split: Split, limit: int) -> Iterator[tuple[int, bytes, int]]:
    """``(position, line, size)`` for the lines starting in [start, end) (Hadoop line-split rule), or every line of
    a whole file. Positions are byte offsets of line starts, line numbers in a whole (compressed) file. A line over
    ``limit`` bytes (``size > limit``) is never held whole: only its first bytes are given."""
    with open_split(split) as f:
        if split.end == -1:
            number = 0
            while True:
                line, size, taken = _next_line(f, limit)
                if not taken:
                    return
                yield number, line, size
                number += 1
        pos = split.start
        if pos > 0:
            f.seek(pos - 1)
            pos += _next_line(f, limit)[2] - 1  # finish the line that straddles the split start
        while pos < split.end:
            line, size, taken = _next_line(f, limit)
            if not taken:
                break
            yield pos, line, size
            pos += taken
