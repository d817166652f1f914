"""The corpus both sides of bench_vs_bigcode.py read: a JSONL prefix of a real corpus (ours, a line's byte offset
its ingest position) and its Parquet copy (the peer's, the line number in a ``doc`` column)."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpora.store import built

PEER_PARTS = 8  # Parquet files of the peer's copy (as many documents each)


@dataclass
class Corpus:
    """A JSONL file and, per line, its byte offset and text digest."""

    jsonl: Path
    offsets: list[int]
    digests: list[bytes]
    text_bytes: int

    def texts(self):
        """(index, text) of every document, in file order."""
        with open(self.jsonl, "rb") as f:
            for i, line in enumerate(f):
                yield i, json.loads(line)["text"]


def shard_paths(path: Path) -> list[Path]:
    """A JSONL file, or a directory's ``*.jsonl`` files in name order."""
    if path.is_file():
        return [path]
    shards = sorted(path.glob("*.jsonl")) if path.is_dir() else []
    if not shards:
        raise SystemExit(f"--corpus: no JSONL file or directory of *.jsonl shards at {path}")
    return shards


def lines(source: Path, limit: float | None, size: Callable[[Path, bytes], int]) -> Iterator[tuple[Path, bytes]]:
    """(shard, line) of the corpus's lines while the ``size`` of those given is below ``limit`` (None: all)."""
    taken = 0
    for shard in shard_paths(source):
        with open(shard, "rb") as src:
            for line in src:
                if limit is not None and taken >= limit:
                    return
                taken += size(shard, line)
                yield shard, line


def text_size(shard: Path, line: bytes) -> int:
    """The bytes of a line's ``text``; exits naming --corpus when it has none."""
    text = json.loads(line).get("text")
    if not isinstance(text, str):
        raise SystemExit(f"--corpus: a line of {shard} has no string 'text' key")
    return len(text.encode())


def source_tag(source: Path) -> str:
    """A digest of the source's shards' names, sizes and times: a rebuilt corpus gets a new tag."""
    stamp = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in shard_paths(source)]
    return hashlib.blake2b(repr(stamp).encode(), digest_size=4).hexdigest()


def prefix(source: Path, mb: float | None, out_dir: Path) -> Path:
    """The first whole documents of ``source`` with ``mb`` MB of text (None: all) as one JSONL file, made once."""
    name = f"{source.name.removesuffix('.jsonl')}-{source_tag(source)}"

    def write(into: Path) -> None:
        with open(into, "wb") as dst:
            for _, line in lines(source, None if mb is None else mb * 1e6, text_size):
                dst.write(line if line.endswith(b"\n") else line + b"\n")

    return built(out_dir / f"{name}-{'all' if mb is None else f'{mb:g}mb'}.jsonl", write)


def load(jsonl: Path) -> Corpus:
    """Offsets, text digests and text bytes of every line of ``jsonl``."""
    offsets, digests, total, at = [], [], 0, 0
    with open(jsonl, "rb") as f:
        for line in f:
            text = json.loads(line)["text"].encode()
            offsets.append(at)
            digests.append(hashlib.blake2b(text, digest_size=16).digest())
            total += len(text)
            at += len(line)
    return Corpus(jsonl, offsets, digests, total)


def peer_parquet(corpus: Corpus, column: str) -> Path:
    """The corpus as Parquet (``doc``: line number, ``column``: text), in PEER_PARTS files, made once."""
    chunk = max(1, -(-len(corpus.offsets) // PEER_PARTS))

    def write(into: Path) -> None:
        into.mkdir()
        texts = corpus.texts()
        for part in range(-(-len(corpus.offsets) // chunk)):
            rows = list(itertools.islice(texts, chunk))
            table = pa.table({"doc": pa.array([i for i, _ in rows], pa.int64()), column: [text for _, text in rows]})
            pq.write_table(table, into / f"part-{part:05d}.parquet")

    return built(corpus.jsonl.with_suffix(".peer.parquet.d"), write)
