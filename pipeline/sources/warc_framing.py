"""Cutting WARC files into records without Spark (docs/bad_input.md, Web archives): gzip members of a
``.warc.gz`` (usually one record each, as Common Crawl ships them; a member holding several is read record by
record) found from any byte offset, and the records of a plain ``.warc``. A record is held in memory up to the
size limit only, whatever its member inflates to.

A record's position is the byte offset where its gzip member (or, uncompressed, its ``WARC/`` line) starts in
the file (the later records of a member: see ``MEMBER_STRIDE``), so a record's doc id is the same whichever
split reads it. A split ``[start, end)`` reads the members
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
# the k-th record (k >= 1) of a gzip member holding several is at position member offset + k * MEMBER_STRIDE: no
# file offset (files under 1 TiB) and no other record shares it, and it does not depend on the split
MEMBER_STRIDE = 1 << 40
MAX_RECORDS_IN_MEMBER = 1 << 22  # the rest of a member past this many records is one reject (positions < 2**63)


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


class _MemberStream:
    """The decompressed bytes of the gzip member starting at ``position``, consumed front to back, inflated
    ``CHUNK`` bytes at a time (never the whole member in memory)."""

    def __init__(self, f: IO[bytes], position: int) -> None:
        f.seek(position)
        self.f = f
        self.position = position
        self.d = zlib.decompressobj(31)
        self.buf = bytearray()
        self.fed = 0
        self.want = FIRST_READ
        self.error = ""
        self.taken = 0

    def more(self) -> bool:
        """Inflate up to ``CHUNK`` more bytes onto ``buf``; False at the member's end or on an error (``error``)."""
        while not self.d.eof and not self.error:
            chunk = self.d.unconsumed_tail or self.f.read(self.want)
            if not self.d.unconsumed_tail:
                self.fed += len(chunk)
                self.want = min(2 * self.want, CHUNK)
            if not chunk:
                self.error = "truncated: the file ends inside this gzip member"
                return False
            try:
                out = self.d.decompress(chunk, CHUNK)
            except zlib.error as exc:
                self.error = f"corrupt gzip member: {exc}"
                return False
            if out:
                self.buf += out
                return True
        return False

    def after(self) -> int:
        """The offset just after the member (after a damaged member: ``position + 1``)."""
        return self.position + 1 if self.error else self.position + self.fed - len(self.d.unused_data)

    def skip_blank(self) -> bool:
        """Drop the whitespace before the next record; False when the member holds no more bytes."""
        while True:
            dropped = len(self.buf) - len(self.buf.lstrip())
            if dropped:
                del self.buf[:dropped]
            if self.buf:
                return True
            if not self.more():
                return False

    def header(self, limit: int) -> bytes | None:
        """The bytes up to and including the first blank line (consumed); None (nothing consumed) when the member
        ends or ``limit`` bytes pass first."""
        searched = 0
        while True:
            found = [self.buf.find(b"\r\n\r\n", searched), self.buf.find(b"\n\n", searched)]
            ends = [i + n for i, n in zip(found, (4, 2), strict=True) if i != -1]
            if ends:
                head = bytes(self.buf[: min(ends)])
                del self.buf[: min(ends)]
                return head
            searched = max(0, len(self.buf) - 3)
            if len(self.buf) > limit or not self.more():
                return None

    def take(self, n: int | None, keep: int) -> bytes:
        """Consume ``n`` bytes (None: to the member's end) and return the first ``keep`` of them; ``taken`` is how
        many were consumed (fewer than ``n`` when the member ends first)."""
        kept = bytearray()
        self.taken = 0
        while n is None or self.taken < n:
            if not self.buf and not self.more():
                break
            piece = len(self.buf) if n is None else min(len(self.buf), n - self.taken)
            room = keep - len(kept)
            if room > 0:
                kept += self.buf[: min(piece, room)]
            del self.buf[:piece]
            self.taken += piece
        return bytes(kept)


def _member_records(m: _MemberStream, limit: int) -> Iterator[Member]:
    """The records of one gzip member, each framed by its header's ``Content-Length`` (a header that cannot frame
    its record makes the rest of the member that record). The member is consumed to its end."""
    k = 0
    while m.skip_blank():
        pos = m.position + k * MEMBER_STRIDE
        k += 1
        head = m.header(limit)
        if head is None or k == MAX_RECORDS_IN_MEMBER:
            data = m.take(None, limit)
            error = m.error or ("" if head is None else f"more than {MAX_RECORDS_IN_MEMBER - 1} records in one member")
            yield Member(pos, (head or b"")[:limit] + data, len(head or b"") + m.taken, error)
            return
        keep = max(0, limit - len(head))
        length = _content_length(head) if head.startswith(WARC_MAGIC) else None
        if length is None or header_fault(head) is not None:  # parsed as it is: a malformed_warc_header reject
            rest = m.take(None, keep)
            yield Member(pos, head[:limit] + rest, len(head) + m.taken, m.error)
            return
        block = m.take(length, keep)
        if m.taken < length:
            error = m.error or "truncated: the gzip member ends inside this record"
            yield Member(pos, head[:limit] + block, len(head) + m.taken, error)
            return
        yield Member(pos, head[:limit] + block, len(head) + length)
    if m.error:
        yield Member(m.position + k * MEMBER_STRIDE, b"", 0, m.error)


def gzip_members(f: IO[bytes], start: int, end: int | None, limit: int) -> Iterator[Member]:
    """The records of the members that start in ``[start, end)`` (``end`` None: to the end of the file), each
    decompressed up to ``limit`` bytes. After a truncated or corrupt member reading goes on at the next member
    start; bytes at the start of the file that are no member are one corrupt member at 0."""
    pos = next_member_start(f, start, end)
    if start == 0 and pos != 0:
        f.seek(0)
        if f.read(1):
            yield Member(0, b"", 0, "no gzip member starts at offset 0")
    while pos is not None and (end is None or pos < end):
        f.seek(pos)
        if not f.read(1):
            return
        member = _MemberStream(f, pos)
        yield from _member_records(member, limit)
        pos = next_member_start(f, member.after(), end) if member.error else member.after()


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
