"""A deterministic corpus of REAL documents with real near-duplicates, 1 to 10 GB and more: the files of consecutive
releases of PyPI packages (corpora/releases.json) beside corpora/real.py's sources, as JSONL shards.

    python -m bench release_corpus --mb 1000          # -> /tmp/pipeline-bench/release-corpus-1000mb/
    python -m bench release_corpus --mb 1000 --stats  # documents and bytes per source, repeated paths

How it measures: docs/benchmarks.md, Method notes, release_corpus.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from corpora import archives, real
from corpora.real import interleave
from corpora.store import arguments, built

WINDOW = 3
PROSE_SHARE = 0.02
SHARD_BYTES = 256_000_000
Record = tuple[str, str, str]  # (source, path, text)
Streams = dict[str, tuple[float, Iterator[Record]]]  # per name, its share of the text and its records
Reader = Callable[[str, str], list[archives.Member]]
T = TypeVar("T")


def interleave_releases(releases: list[tuple[str, list[archives.Member]]]) -> Iterator[tuple[str, str]]:
    """(``<release label>/<member>``, text) of several releases, by sorted member name, then the releases' order."""
    tables = [(label, dict(members)) for label, members in releases]
    for name in sorted(set().union(*(table for _, table in tables))):
        for label, table in tables:
            if name in table:
                yield f"{label}/{name}", table[name]


def package_documents(
    package: str, versions: Iterable[str], window: int = WINDOW, read: Reader = archives.release_members
) -> Iterator[Record]:
    """The ``pypi`` documents of one package's releases, in windows of ``window`` consecutive releases."""
    versions = list(versions)
    for start in range(0, len(versions), window):
        releases = [(f"{package}-{version}", read(package, version)) for version in versions[start : start + window]]
        for path, text in interleave_releases(releases):
            yield "pypi", path, text


def cut(source: str, documents: Iterator[real.Doc]) -> Iterator[Record]:
    """A real_corpus source's documents cut into pieces as real_corpus does."""
    for path, text in documents:
        for piece in real.pieces(text):
            yield source, path, piece


def pypi_streams(
    sources: Iterable[str], size: Callable[[Iterable[int]], int], read: Callable[[str, list[str]], Iterator[Record]]
) -> Streams:
    """real_corpus's ``sources`` (PROSE_SHARE each), then ``read(package, versions)`` by the ``size`` of its text."""
    streams = {name: (PROSE_SHARE, cut(name, real.SOURCES[name]())) for name in sources}
    pins = archives.pins()
    sizes = {
        package: size(int(pins[f"{package}=={version}"]["text_bytes"]) for version in versions)
        for package, versions in archives.RELEASES.items()
    }
    left = 1 - PROSE_SHARE * len(streams)
    for package, versions in archives.RELEASES.items():
        streams[f"pypi:{package}"] = (left * sizes[package] / sum(sizes.values()), read(package, versions))
    return streams


def default_streams() -> Streams:
    """The corpus's streams and their shares: the real_corpus sources, then one per PyPI package."""
    return pypi_streams(real.SOURCES, sum, package_documents)


def repeated_fractions(paths: list[str]) -> dict[str, float]:
    """The fractions of ``pypi`` paths whose member name, and base name, another release of the package has."""
    members: dict[tuple[str, str], set[str]] = {}
    bases: dict[tuple[str, str], set[str]] = {}
    keys = []
    for path in paths:
        release, member = path.split("/", 1)
        package = release.rsplit("-", 1)[0]
        key, base = (package, member), (package, member.rsplit("/", 1)[-1])
        members.setdefault(key, set()).add(release)
        bases.setdefault(base, set()).add(release)
        keys.append((key, base))
    total = max(len(keys), 1)
    return {
        "repeated_paths": sum(len(members[key]) > 1 for key, _ in keys) / total,
        "repeated_basenames": sum(len(bases[base]) > 1 for _, base in keys) / total,
    }


class Shards:
    """The corpus builders' shard writer: ``part-NNNNN.jsonl`` of ``shard_bytes`` of text until ``target`` bytes."""

    def __init__(self, directory: Path, target: int, shard_bytes: int = SHARD_BYTES) -> None:
        directory.mkdir(parents=True)
        self.directory, self.target, self.shard_bytes, self.started = directory, target, shard_bytes, time.time()
        self.bytes = self.count = 0
        self._seen: set[bytes] = set()

    def write(self, records: Iterable[tuple[T, Record]]) -> Iterator[tuple[T, str, bytes, bool]]:
        """Write (tag, record) pairs until ``full``: per record its tag, source, UTF-8 text and whether it is a copy."""
        with contextlib.ExitStack() as stack:
            out, in_shard = None, 0
            for tag, (source, path, text) in records:
                if out is None or in_shard >= self.shard_bytes:
                    stack.close()
                    out = stack.enter_context(
                        open(self.directory / f"part-{self.count:05d}.jsonl", "w", encoding="utf-8")
                    )
                    self.count, in_shard = self.count + 1, 0
                out.write(json.dumps({"source": source, "path": path, "text": text}, ensure_ascii=False) + "\n")
                data = text.encode("utf-8")
                self.bytes, in_shard = self.bytes + len(data), in_shard + len(data)
                digest = hashlib.blake2b(data, digest_size=16).digest()  # a copy: an earlier record had this digest
                copy = digest in self._seen
                self._seen.add(digest)
                yield tag, source, data, copy
                if self.full:
                    return

    @property
    def full(self) -> bool:
        return self.bytes >= self.target

    def finish(self, stats: dict[str, Any]) -> dict[str, Any]:
        """``stats`` with the seconds since the start, written to ``_stats.json``."""
        stats["seconds"] = round(time.time() - self.started, 1)
        (self.directory / "_stats.json").write_text(json.dumps(stats, indent=1) + "\n")
        return stats


def write_corpus(
    records: Iterator[Record], directory: Path, target: int, shard_bytes: int = SHARD_BYTES
) -> dict[str, Any]:
    """Write records into shards until their text reaches ``target`` bytes; their statistics (``_stats.json``)."""
    sources: dict[str, dict[str, int]] = {}
    pypi_paths: list[str] = []
    exact = 0
    out = Shards(directory, target, shard_bytes)
    for path, source, data, copy in out.write((record[1], record) for record in records):
        tally = sources.setdefault(source, {"documents": 0, "bytes": 0})
        tally["documents"], tally["bytes"], exact = tally["documents"] + 1, tally["bytes"] + len(data), exact + copy
        if source == "pypi":
            pypi_paths.append(path)
    if not out.full:
        raise SystemExit(f"only {out.bytes / 1e6:.1f} MB of documents, {target / 1e6:g} MB asked (--mb)")
    documents = sum(t["documents"] for t in sources.values())
    stats = {"documents": documents, "bytes": out.bytes, "shards": out.count, "sources": sources}
    return out.finish({**stats, "exact_duplicates": exact / max(documents, 1), **repeated_fractions(pypi_paths)})


def build(
    megabytes: float,
    directory: Path | None = None,
    streams: Callable[[], Streams] = default_streams,
    shard_bytes: int = SHARD_BYTES,
) -> Path:
    """The corpus directory of at least ``megabytes`` MB of text, built once."""
    directory = directory or real.DEFAULT_DIR / f"release-corpus-{megabytes:g}mb"
    return built(directory, lambda into: write_corpus(interleave(streams()), into, int(megabytes * 1e6), shard_bytes))


def main() -> None:
    parser = arguments(__doc__, mb=1000.0)
    parser.add_argument("--stats", action="store_true", help="print documents, bytes per source, repeated paths")
    parser.add_argument("--pin", action="store_true", help="look the releases up on PyPI and rewrite the pins")
    args = parser.parse_args()
    if args.pin:
        print(f"{len(archives.pin_all())} releases pinned in {archives.PINS}")
        return
    directory = build(args.mb, args.out)
    print(directory)
    if args.stats:
        print(json.dumps(json.loads((directory / "_stats.json").read_text()), indent=1))


if __name__ == "__main__":
    main()
