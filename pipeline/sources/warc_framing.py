"""Cutting WARC files into records without Spark (docs/bad_input.md, Web archives): gzip members of a
``.warc.gz`` (one record each, as Common Crawl ships them) found from any byte offset, and the records of a
plain ``.warc``.

A record's position is the byte offset where its gzip member (or, uncompressed, its ``WARC/`` line) starts in
the file, so a record's doc id is the same whichever split reads it. A split ``[start, end)`` reads the members
that start in it: a task starting mid-file looks for the first member start at or after ``start`` (the gzip
magic ``1f 8b 08`` whose stream inflates to ``WARC/``), the task before it reads on past ``end`` to finish the
member that started before ``end``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/"
CHUNK = 1 << 20
FIRST_READ = 1 << 16  # a member's first read: most records are a few kB compressed; later reads double up to CHUNK


@dataclass(frozen=True)
class Member:
    """One gzip member (or plain record): where it starts, its bytes (up to the size limit), its fate."""

    position: int
    data: bytes  # the decompressed record, or its first bytes when ``too_large`` or ``error`` is set
    size: int  # decompressed bytes (counted to the end even when over the limit)
    error: str = ""  # the member is truncated or corrupt (zlib's message)

    @property
    def too_large(self) -> bool:
        return self.size > len(self.data) and not self.error


def _looks_like_member(head: bytes) -> bool:
    """Whether ``head`` (bytes from a candidate magic on) inflates to the start of a WARC record."""
    try:
        out = zlib.decompressobj(31).decompress(head, len(WARC_MAGIC))
    except zlib.error:
        return False
    return out == WARC_MAGIC


def next_member_start(f: IO[bytes], offset: int, end: int | None = None) -> int | None:
    """The first offset >= ``offset`` (and < ``end`` when given) where a WARC gzip member starts, else None."""
    pos = offset
    while end is None or pos < end:
        f.seek(pos)
        window = f.read(CHUNK)
        i = window.find(GZIP_MAGIC)
        while i != -1:
            if end is not None and pos + i >= end:
                return None
            f.seek(pos + i)
            if _looks_like_member(f.read(4096)):
                return pos + i
            i = window.find(GZIP_MAGIC, i + 1)
        if len(window) < CHUNK:
            return None
        pos += len(window) - (len(GZIP_MAGIC) - 1)  # a magic across the window's end is found in the next
    return None


def _inflate(f: IO[bytes], position: int, limit: int) -> tuple[Member, int]:
    """The member starting at ``position`` and the offset just after it (after a corrupt member: position + 1)."""
    f.seek(position)
    d = zlib.decompressobj(31)
    kept: list[bytes] = []
    size = 0
    fed = 0
    want = FIRST_READ
    while not d.eof:
        chunk = d.unconsumed_tail or f.read(want)
        if not d.unconsumed_tail:
            fed += len(chunk)
            want = min(2 * want, CHUNK)
        if not chunk:
            head = b"".join(kept)
            return Member(position, head, size, "truncated: the file ends inside this gzip member"), position + 1
        try:
            out = d.decompress(chunk, CHUNK)
        except zlib.error as exc:
            return Member(position, b"".join(kept), size, f"corrupt gzip member: {exc}"), position + 1
        size += len(out)
        room = limit - (size - len(out))
        if room > 0:
            kept.append(out[:room])
    after = position + fed - len(d.unused_data)
    return Member(position, b"".join(kept), size), after


def gzip_members(f: IO[bytes], start: int, end: int | None, limit: int) -> Iterator[Member]:
    """The members that start in ``[start, end)`` (``end`` None: to the end of the file), each decompressed up to
    ``limit`` bytes. After a truncated or corrupt member reading goes on at the next member start; bytes at the
    start of the file that are no member are one corrupt member at 0."""
    pos = next_member_start(f, start, end)
    if start == 0 and pos != 0:
        f.seek(0)
        if f.read(1):
            yield Member(0, b"", 0, "no gzip member starts at offset 0")
    while pos is not None and (end is None or pos < end):
        f.seek(pos)
        if not f.read(1):
            return
        member, after = _inflate(f, pos, limit)
        yield member
        pos = next_member_start(f, after, end) if member.error else after


def plain_records(f: IO[bytes], limit: int) -> Iterator[Member]:
    """The records of an uncompressed WARC file, by their ``Content-Length``; a record whose header cannot be
    framed is reported as corrupt and reading goes on at the next line starting with ``WARC/``."""
    pos = 0
    f.seek(0)
    while True:
        line = f.readline()
        if not line:
            return
        if not line.strip():
            pos += len(line)
            continue
        start = pos
        header = [line]
        pos += len(line)
        while True:
            line = f.readline()
            pos += len(line)
            header.append(line)
            if not line or not line.strip():
                break
        head = b"".join(header)
        length = _content_length(head) if head.startswith(WARC_MAGIC) else None
        if length is not None and header_fault(head) is not None:  # framed by a blank line of its payload
            yield Member(start, head[:limit], len(head))  # parsed as a malformed_warc_header reject
            pos = _skip_to_warc_line(f, pos)
            continue
        if length is None:
            yield Member(start, head[:limit], len(head), "no WARC header with a Content-Length here")
            pos = _skip_to_warc_line(f, pos)
            continue
        want = min(length, max(0, limit - len(head)))
        block = f.read(want)
        if len(block) < want:
            yield Member(start, head + block, len(head) + len(block), "truncated: the file ends inside this record")
            return
        pos += length
        f.seek(pos)
        yield Member(start, head + block, len(head) + length)


def header_fault(head: bytes) -> str | None:
    """What is wrong with a record's WARC header block (its bytes up to the first blank line): a line after the
    version line that is neither a ``Name: value`` field nor a continuation, as when the blank line before the
    payload is missing and the HTTP status line follows the fields; None when every line is a field."""
    ends = [i for i in (head.find(b"\r\n\r\n"), head.find(b"\n\n")) if i != -1]
    block = head[: min(ends)] if ends else head
    for line in block.split(b"\n")[1:]:
        line = line.rstrip(b"\r")
        if line and line[:1] not in b" \t" and b":" not in line:
            shown = line[:80].decode("utf-8", "replace")
            return f"a header line that is no field (no blank line before the payload?): {shown!r}"
    return None


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n" if b"\r\n" in head else b"\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None


def _skip_to_warc_line(f: IO[bytes], pos: int) -> int:
    """The offset of the next line starting with ``WARC/`` (the stream positioned there)."""
    f.seek(pos)
    while True:
        line = f.readline()
        if not line or line.startswith(WARC_MAGIC):
            f.seek(pos)
            return pos
        pos += len(line)
