"""What every input format provides: how one file is cut into splits, and how one split is read into records."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

from pipeline.config import SourceConfig
from pipeline.sources.records import Parsed, RecordRules

Record = tuple[int, Parsed, bytes]  # (position in the file, parsed outcome, raw bytes for a reject's excerpt)


@dataclass(frozen=True)
class Split:
    """One unit of reading work. Byte range [start, end) for splittable files; row groups for Parquet;
    ``end == -1`` means the whole (compressed or whole-file) input. ``size`` is about the bytes it reads
    (what packing splits into tasks weighs)."""

    source: str
    format: str
    url: str
    rel_path: str
    start: int
    end: int
    compression: str | None
    size: int = 0

    def as_row(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SourceFile:
    """One input file of a source, as split planning sees it."""

    source: SourceConfig
    url: str
    rel_path: str  # relative to the source's base directory: what doc ids and rejects name
    size: int

    def split(self, start: int, end: int, compression: str | None = None, size: int | None = None) -> Split:
        """The split of this file from ``start`` to ``end`` (``-1``: to its end); its ``size`` is by default the
        bytes from ``start`` to ``end`` (a format whose start and end are not byte offsets gives it)."""
        if size is None:
            size = self.size if end == -1 else end - start
        return Split(self.source.name, self.source.format, self.url, self.rel_path, start, end, compression, size)


@dataclass(frozen=True)
class Format:
    """An input format: the name a source's ``format`` key gives, and its two steps.

    ``splits(file, split_bytes)`` runs on the driver and cuts one file into splits of about ``split_bytes``;
    ``read(split, rules)`` runs in a task and yields every record of a split as ``(position, parsed, raw)``.
    A record that cannot be parsed is a reject of that record only; an exception out of ``read`` means the
    file could not be read on (the rest of the split becomes one ``unreadable_file`` reject).
    """

    name: str
    splits: Callable[[SourceFile, int], list[Split]]
    read: Callable[[Split, RecordRules], Iterator[Record]]
    web: bool = False  # its documents are web pages with a url and warc_date in meta (docs/bad_input.md, URL rules)
