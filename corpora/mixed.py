"""A mixed-size corpus of REAL text no bench was tuned on: source and licence files of up to 2 MB from releases of
PyPI packages the release corpus lacks, Debian's licence texts, and the documentation of pinned Debian packages in
many languages (corpora/mixed_sources.json); JSONL shards, the same pins giving the same bytes.

    python -m bench mixed_corpus --mb 200          # -> /tmp/pipeline-bench/mixed-corpus-200mb/, its statistics
    python -m bench mixed_corpus --pin             # look MIXED_RELEASES up on PyPI and rewrite the pins
    python -m bench mixed_corpus --count           # MB of text each source has (the largest corpus they allow)

How it measures: docs/benchmarks.md, Method notes, mixed_corpus.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpora import archives, release
from corpora.real import DEFAULT_DIR, interleave
from corpora.release import Record, Streams
from corpora.store import arguments, built

HERE = Path(__file__).resolve().parent
PINS = HERE / "mixed_archives.json"
LICENSES = Path("/usr/share/common-licenses")
MAX_BYTES = 2_000_000
LICENCE_NAMES = ("license", "licence", "copying", "notice")
SHARES = {"code": 0.6, "licence": 0.02, "prose": 0.38}  # of the text bytes, while a stream lasts
BINS = (1_000, 10_000, 100_000, 1_000_000, MAX_BYTES)  # upper bounds of the size histogram's bins

SOURCES = json.loads((HERE / "mixed_sources.json").read_text())  # the pinned releases and prose packages
MIXED_RELEASES: dict[str, list[str]] = SOURCES["releases"]
PROSE_PACKAGES: dict[str, str] = SOURCES["prose_packages"]


def kind(name: str, size: int) -> str | None:
    """``licence``, ``code`` or None (left out) for an archive member of this name and size."""
    base = name.rsplit("/", 1)[-1].lower()
    if not 0 < size <= MAX_BYTES:
        return None
    if base.startswith(LICENCE_NAMES):
        return "licence"
    return "code" if base.endswith(archives.TEXT_SUFFIXES) else None


def releases(directory: Path) -> Iterator[Record]:
    """Every pinned release's code and licence documents, a file's copies neighbours; archives deleted once read."""
    for package, versions in MIXED_RELEASES.items():
        read: list[tuple[str, list[archives.Member]]] = []
        for version in versions:
            path = archives.fetch(package, version, directory, PINS)
            read.append((f"{package}-{version}", archives.read_archive(path, kind)))
            path.unlink()
        for where, text in release.interleave_releases(read):
            yield "licence" if where.rsplit("/", 1)[-1].lower().startswith(LICENCE_NAMES) else "code", where, text


def licences() -> Iterator[Record]:
    """Debian's common licence texts (regular files only: the others link to them)."""
    for path in sorted(LICENSES.iterdir()):
        if path.is_file() and not path.is_symlink():
            yield "licence", str(path), path.read_text(encoding="utf-8", errors="replace")


def package_prose(package: str, version: str) -> Iterator[Record]:
    """The ``prose`` documents (``package=version/member``) of one package, non-blank, up to MAX_BYTES."""
    for name, data in archives.deb_members(archives.fetch_deb(package, version)):
        text = archives.member_text(name, data)
        if text is not None and text.strip() and len(text.encode("utf-8")) <= MAX_BYTES:
            yield "prose", f"{package}={version}/{name}", text


def streams(directory: Path) -> Streams:
    """The corpus's streams and their shares of the text; the prose of every package interleaved by bytes given."""
    prose = interleave({package: (1.0, package_prose(package, version)) for package, version in PROSE_PACKAGES.items()})
    made = {"code": releases(directory), "licence": licences(), "prose": prose}
    return {name: (SHARES[name], stream) for name, stream in made.items()}


def statistics(directory: Path) -> dict[str, Any]:
    """Documents and bytes per source, the size histogram, the shares of exact copies and of changed copies (a
    file again in a later release of its package, with other text)."""
    seen: set[str] = set()
    by_path: dict[str, str] = {}
    sources: dict[str, list[int]] = {}
    packages: dict[str, list[int]] = {}
    sizes, exact, changed = [], 0, 0
    for shard in sorted(directory.glob("*.jsonl")):
        with open(shard, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                text, path = record["text"], record["path"]
                size = len(text.encode("utf-8"))
                sizes.append(size)
                sources.setdefault(record["source"], []).append(size)
                if record["source"] == "prose":
                    packages.setdefault(path.split("=", 1)[0], []).append(size)
                exact += text in seen
                seen.add(text)
                if record["source"] != "prose" and "/" in path and not path.startswith("/"):
                    label, member = path.split("/", 1)
                    key = f"{label.rsplit('-', 1)[0]}/{member}"
                    changed += key in by_path and by_path[key] != text
                    by_path[key] = text
    histogram = []  # (bin label, documents, bytes), bins bounded by BINS
    for low, high in zip((0, *BINS), BINS, strict=False):
        inside = [n for n in sizes if low < n <= high]
        histogram.append((f"{low / 1e3:g}-{high / 1e3:g} kB", len(inside), sum(inside)))
    total = max(len(sizes), 1)
    return {
        "documents": len(sizes),
        "bytes": sum(sizes),
        "sources": {name: {"documents": len(s), "bytes": sum(s)} for name, s in sorted(sources.items())},
        "prose packages": {name: {"documents": len(s), "bytes": sum(s)} for name, s in sorted(packages.items())},
        "histogram": histogram,
        "exact copies": exact / total,
        "changed copies": changed / total,
    }


def build(megabytes: float, directory: Path | None = None) -> Path:
    """The corpus directory of at least ``megabytes`` MB of text with its ``_stats.json``, built once."""
    directory = directory or DEFAULT_DIR / f"mixed-corpus-{megabytes:g}mb"
    if not directory.exists():
        for package, version in PROSE_PACKAGES.items():  # a missing package stops the build before it writes
            archives.fetch_deb(package, version)
    scratch = directory.with_name(directory.name + ".sdists")

    def write(partial: Path) -> None:
        try:
            release.write_corpus(interleave(streams(scratch)), partial, int(megabytes * 1e6))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        (partial / "_stats.json").write_text(json.dumps(statistics(partial), indent=1) + "\n")

    return built(directory, write)


def show(stats: dict[str, Any]) -> None:
    print(f"{stats['documents']} documents, {stats['bytes'] / 1e6:.1f} MB of text")
    for name, tally in stats["sources"].items():
        print(f"  {name:<10}{tally['documents']:>8} documents {tally['bytes'] / 1e6:>8.1f} MB")
    print("prose by package:")
    for name, tally in stats.get("prose packages", {}).items():
        print(f"  {name:<28}{tally['documents']:>8} documents {tally['bytes'] / 1e6:>8.2f} MB")
    print("size histogram:")
    for label, count, size in stats["histogram"]:
        print(f"  {label:<16}{count:>8} documents {size / 1e6:>8.1f} MB")
    print(
        f"exact copies {stats['exact copies']:.1%} of documents; changed copies (same file, other text, in a "
        f"later release) {stats['changed copies']:.1%}"
    )


def main() -> None:
    parser = arguments(__doc__, mb=200.0)
    parser.add_argument("--pin", action="store_true", help="look the releases up on PyPI and rewrite the pins")
    parser.add_argument("--count", action="store_true", help="MB of text each source has (the largest corpus)")
    args = parser.parse_args()
    if args.pin:
        print(f"{len(archives.pin_all(MIXED_RELEASES, PINS, measure=False))} releases pinned in {PINS}")
        return
    if args.count:  # bytes of text each stream has in all
        scratch = DEFAULT_DIR / "mixed-corpus-count.sdists"
        try:
            sizes = {name: sum(len(r[2].encode()) for r in stream) for name, (_, stream) in streams(scratch).items()}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        for name, size in sizes.items():  # a stream that runs out drops out: the others fill its share
            below = size / SHARES[name] / 1e6
            print(f"{name:<8}{size / 1e6:>8.1f} MB: at its share while the corpus is below {below:.0f} MB")
        print(f"{sum(sizes.values()) / 1e6:.0f} MB of text in all: the largest corpus")
        return
    directory = build(args.mb, args.out)
    print(directory)
    show(json.loads((directory / "_stats.json").read_text()))


if __name__ == "__main__":
    main()
