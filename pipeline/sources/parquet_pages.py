"""The pages of a Parquet column chunk as their headers describe them, read without inflating any page: what a
page holds once decompressed, so a record over the size limit is found before a page is inflated whole
(docs/bad_input.md, Records). Page headers are Thrift compact-protocol structs (parquet-format's ``PageHeader``:
field 1 the page type, 2 its uncompressed size, 3 its compressed size)."""

from __future__ import annotations

from typing import IO

from pyarrow.parquet import ColumnChunkMetaData

HEADER_READ = 1 << 12  # a page header's first read; a header with large statistics is read again, up to MAX_HEADER
MAX_HEADER = 1 << 24


class _Compact:
    """A reader of Thrift compact-protocol values from ``data``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise EOFError("page header cut short")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        shift = value = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int) -> None:
        if kind in (1, 2):  # booleans: the value is in the type
            return
        if kind == 3:
            self.pos += 1
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.pos += 8
        elif kind == 8:
            length = self.varint()  # read before adding: ``self.pos += self.varint()`` would add to the old pos
            self.pos += length
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            element = head & 0x0F
            for _ in range(size):
                if element in (1, 2):  # a boolean element is one byte
                    self.pos += 1
                else:
                    self.skip(element)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4)
                    self.skip(types & 0x0F)
        elif kind == 12:
            self.struct({})
        else:
            raise ValueError(f"unknown Thrift compact type {kind}")
        if self.pos > len(self.data):
            raise EOFError("page header cut short")

    def struct(self, wanted: dict[int, int]) -> dict[int, int]:
        """Read a struct; the integer values of its fields whose ids are in ``wanted`` (others are skipped)."""
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return wanted
            kind = head & 0x0F
            last = last + (head >> 4) if head >> 4 else self.zigzag()
            if last in wanted and kind in (4, 5, 6):
                wanted[last] = self.zigzag()
            else:
                self.skip(kind)


def page_sizes(f: IO[bytes], column: ColumnChunkMetaData) -> list[int]:
    """The uncompressed size of every page (dictionary and data) of a column chunk, in order."""
    start = column.data_page_offset
    if column.has_dictionary_page and column.dictionary_page_offset:
        start = min(start, column.dictionary_page_offset)
    end = start + column.total_compressed_size
    sizes = []
    pos = start
    while pos < end:
        want = HEADER_READ
        while True:
            f.seek(pos)
            reader = _Compact(f.read(want))
            try:
                fields = reader.struct({2: -1, 3: -1})
                break
            except EOFError:
                if want >= MAX_HEADER or len(reader.data) < want:
                    raise ValueError(f"unreadable page header at byte {pos}") from None
                want *= 4
        uncompressed, compressed = fields[2], fields[3]
        if uncompressed < 0 or compressed < 0:
            raise ValueError(f"page header at byte {pos} without its sizes")
        sizes.append(uncompressed)
        pos += reader.pos + compressed
    return sizes
