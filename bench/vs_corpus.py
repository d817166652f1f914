"""The corpus both sides of bench_vs_bigcode.py read: one JSONL file (ours) and its Parquet copy (the peer).

A real corpus (a JSONL file, or a directory of JSONL shards read in sorted name order) is cut to a prefix of
whole documents holding at least ``mb`` MB of text and written once, cached under DATA, as one JSONL file.
Each line's byte offset in it is the document's position, which our ingest records (``documents/``
position), so a document's index in the corpus (its line number) is known on both sides: the Parquet copy
carries it in a ``doc`` column, which the peer script keeps in its output rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.harness import built

PEER_PARTS = 8  # Parquet files of the peer's copy (as many documents each)


@dataclass
class Corpus:
    """A comparison corpus: its JSONL file and, per document (line), its byte offset and text digest."""

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
    """A JSONL file, or the ``*.jsonl`` files of a directory in sorted name order; exits when there are none."""
    if path.is_file():
        return [path]
    shards = sorted(path.glob("*.jsonl")) if path.is_dir() else []
    if not shards:
        raise SystemExit(f"--corpus: no JSONL file or directory of *.jsonl shards at {path}")
    return shards


def lines(source: Path, limit: float | None, size: Callable[[Path, bytes], int]) -> Iterator[tuple[Path, bytes]]:
    """(shard, line) of the corpus's lines in order, while the ``size`` of those given is below ``limit`` (all when
    None): the lines of a prefix, whole."""
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
    """A short digest of the source's shards (name, size, modification time): a rebuilt corpus gets a new tag."""
    stamp = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in shard_paths(source)]
    return hashlib.blake2b(repr(stamp).encode(), digest_size=4).hexdigest()


def prefix(source: Path, mb: float | None, out_dir: Path) -> Path:
    """The first whole documents of ``source`` holding at least ``mb`` MB of text (all when None), one JSONL file,
    cached under a name carrying :func:`source_tag`, so that a rebuilt source is never read from a stale copy."""
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
