"""Line-delimited files (JSONL, text lines): byte-range splits on line boundaries, compressed files whole."""

from __future__ import annotations

import gzip
import io
import math
from collections.abc import Iterator
from typing import IO

import zstandard

from pipeline.sources.formats.base import SourceFile, Split
from pipeline.storage import resolve

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


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
    return raw


def _strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    return line


def lines(split: Split) -> Iterator[tuple[int, bytes]]:
    """``(position, line)`` for the lines starting in [start, end) (Hadoop line-split rule), or every line of a
    whole file. Positions are byte offsets of line starts, line numbers in a whole (compressed) file."""
    with open_split(split) as f:
        if split.end == -1:
            for number, line in enumerate(f):
                yield number, _strip_eol(line)
            return
        pos = split.start
        if pos > 0:
            f.seek(pos - 1)
            pos += len(f.readline()) - 1  # finish the line that straddles the split start
        while pos < split.end:
            line = f.readline()
            if not line:
                break
            yield pos, _strip_eol(line)
            pos += len(line)
