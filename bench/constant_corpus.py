"""A scale corpus whose every prefix is a uniform sample of the whole (issue #47, item 4): the same shares of exact
and near-duplicate documents in every window, whatever its size. Built deterministically from real text: the
files of the release corpus's PyPI packages, one version of each (newest release first, an older release giving
only the files the newer ones do not have), beside the Debian documentation and translation catalogues of
``bench/real_corpus.py``; past ``JOIN_BYTES`` of fresh text, also the source trees and HTML manuals of pinned Debian
packages (``ADDED_PACKAGES``, disjoint from the mixed corpus's). Written as JSONL shards (``{"source", "path",
"text"}`` per line) with ``_stats.json``.

    python -m bench constant_corpus --mb 1000                 # -> /tmp/pipeline-bench/constant-corpus-1000mb/
    python -m bench constant_corpus --mb 1000 --exact 0.1 --near 0.2 --check 200
    python -m bench constant_corpus --count             # MB of fresh text the added packages give
    python -m bench constant_corpus --pin               # look ADDED_RELEASES up on PyPI and pin them

How it measures: docs/benchmarks.md, Method notes, constant_corpus.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import random
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from bench import mixed_corpus, real_corpus, release_archives, release_corpus
from bench.dedup_precision import shingle_set
from bench.harness import arguments, built
from bench.real_corpus import interleave

EXACT_SHARE = 0.15
NEAR_SHARE = 0.15
BLOCK = 200  # documents whose kinds are shuffled together: each block holds the configured shares
POOL = 1024  # originals a copy is made from: a uniform reservoir sample of every fresh document so far
NGRAM = 5  # the dedup's shingle length (conf/dataproc.yaml)
MIN_JACCARD = 0.8  # a near copy's word 5-gram Jaccard with its original, above the dedup threshold (0.7)
MIN_WORDS = 50  # an original needs this many words for edits that keep MIN_JACCARD
WINDOW_BYTES = 250_000_000
SHARD_BYTES = release_corpus.SHARD_BYTES
PROSE_SOURCES = ("fixtures", "catalogues", "debian", "html")  # real_corpus's `python` overlaps the PyPI files
SEED = 47
JOIN_BYTES = 700_000_000  # fresh text before ADDED_PACKAGES join (the 1,000 MB corpus takes 681 MB: it stays as it was)
# Debian 12 packages of source trees (some as a tarball or zip inside) and HTML manuals, pinned (not python3.11-doc:
# real_corpus.html reads it where installed): each a stream of equal share, with the first sources' rest beside
# them (ADDED_SHARE of the text while it lasts).
ADDED_PACKAGES: dict[str, str] = {
    "linux-source-6.1": "6.1.192-2",
    "gcc-12-source": "12.2.0-14+deb12u1",
    "glibc-source": "2.36-9+deb12u14",
    "golang-1.19-src": "1.19.8-2",
    "openjdk-17-source": "17.0.21.1+2-1~deb12u1",
    "rust-src": "1.63.0+dfsg1-2",
    "binutils-source": "2.40-2",
    "emacs-el": "1:28.2+1-15+deb12u4",
    "openjdk-17-doc": "17.0.21.1+2-1~deb12u1",
    "rust-doc": "1.63.0+dfsg1-2",
    "erlang-doc": "1:25.2.3+dfsg-1+deb12u4",
    "qtbase5-doc-html": "5.15.8+dfsg-11+deb12u3",
    "libstdc++-12-doc": "12.2.0-14+deb12u1",
    "postgresql-doc-15": "15.20-0+deb12u1",
    "perl-doc": "5.36.0-7+deb12u4",
    "libboost1.74-dev": "1.74.0+ds1-21",
    "llvm-15-dev": "1:15.0.6-4+b1",
    "libcgal-dev": "5.5.1-2",
    "perl-modules-5.36": "5.36.0-7+deb12u4",
    "ghc-doc": "9.0.2-4",
    "vtk9-doc": "9.1.0+really9.1.0+dfsg2-5+deb12u1",
    "erlang-src": "1:25.2.3+dfsg-1+deb12u4",
    "bazel-bootstrap-source": "4.2.3+ds-9",
    "acl2-books-source": "8.5dfsg-5",
    # m47g: HTML manuals (doxygen, javadoc, sphinx, haddock) and source trees, none a source of another corpus
    "sumo-doc": "1.15.0+dfsg-1+deb12u1",
    "petsc3.18-doc": "3.18.5+dfsg1-1",
    "libdeal.ii-doc": "9.4.1-1",
    "libgtkmm-3.0-doc": "3.24.7-1",
    "libcoq-stdlib": "8.16.1+dfsg-1+b2",
    "trilinos-doc": "13.2.0-4",
    "sagemath-doc": "9.5-6",
    "scala-doc": "2.11.12-5",
    "libsbml5-doc": "5.19.7+dfsg-2",
    "singular-doc": "1:4.3.1-p3+ds-2",
    "gnuradio-doc": "3.10.5.1-3",
    "simbody-doc": "3.7+dfsg-3",
    "casacore-doc": "3.5.0-2",
    "racket-doc": "8.7+dfsg1-1",
    "cppreference-doc-en-html": "20170409-2",
    "lilypond-doc-html": "2.24.1-2",
    "lazarus-doc-2.2": "2.2.6+dfsg2-2",
    "libghc-gi-gtk-doc": "3.0.39-1",
    "libpcl-doc": "1.13.0+dfsg-3",
    "openscenegraph-doc": "3.6.5+dfsg1-8",
    "dcmtk-doc": "3.6.7-9~deb12u4",
    "libgecode-doc": "6.2.0-5",
    "libvisp-doc": "3.5.0-4",
    "qgis-api-doc": "3.22.16+dfsg-1",
    "libzypp-doc": "17.25.7-2.4",
    "libbullet-doc": "3.24+dfsg-2",
    "xrootd-doc": "5.5.3-1",
    "pacemaker-doc": "2.1.5-1+deb12u1",
    "libcombblas-docs": "1.6.2-8",
    "rheolef-doc": "7.2-2",
    "libball1.5-doc": "1.5.0+git20180813.37fc53c-11",
    "libace-doc": "7.0.8+dfsg-2",
    "elastix-doc": "5.0.1-4",
    "libcoin-doc": "4.0.0+ds-3",
    "groovy-doc": "2.4.21-8",
    "libjogl2-java-doc": "2.3.2+dfsg-10",
    "lorene-doc": "0.0.0~cvs20161116+dfsg-1",
    "libapache-poi-java-doc": "4.0.1-4",
    "libjuce-doc": "7.0.5+ds-1",
    "ogre-1.12-doc": "1.12.10+dfsg2-3",
    "libmed-doc": "4.1.0+repack-3",
    "derby-doc": "10.14.2.0-2",
    "libopenvdb-doc": "10.0.1-2",
    "libcegui-mk2-doc": "0.8.7+git20220615-3",
    "clhep-doc": "2.1.4.1+dfsg-1.1",
    "crystal-doc": "1.6.0+dfsg-3",
    "quantlib-refman-html": "1.20-1",
    "pike8.0-doc": "8.0.1738-1",
    "libcrypto++-doc": "8.7.0+git220824-1",
    "dpdk-doc": "22.11.11-0+deb12u1",
    "libgtk-4-doc": "4.8.3+ds-2+deb12u1",
    "libxalan-c-doc": "1.12-7",
    "efl-doc": "1.26.3-1",
    "rdkit-doc": "202209.3-1",
    "liblapack-doc": "3.11.0-2",
    "fp-docs-3.2.2": "3.2.2+dfsg-20",
    "halide14-api-doc": "14.0.0-3",
    "libeigen3-doc": "3.4.0-4",
    "grass-dev-doc": "8.2.1-1",
    "imagemagick-6-doc": "8:6.9.11.60+dfsg-1.6+deb12u15",
    "libmsgpack-cxx-doc": "4.1.3-1",
    "libhbci4j-core-java-doc": "3.1.64+dfsg-1",
    "libbiojava6-java-doc": "6.1.0+dfsg-4",
    "libviennacl-doc": "1.7.1+dfsg1-6",
    "db5.3-doc": "5.3.28+dfsg2-1",
    "fop-doc": "1:2.8-2",
    "libpwiz-doc": "3.0.18342-4",
    "libjfreechart-java-doc": "1.0.19-3",
    "libopenjfx-java-doc": "11.0.11+1-3",
    "dolfin-doc": "2019.2.0~git20230116.bd54183-2",
    "libmwaw-doc": "0.3.21-1",
    "libghc-gi-gio-doc": "2.0.30-1",
    "libxalan2-java-doc": "2.7.2-4",
    "liblucene++-doc": "3.0.8-6",
    "libdap-doc": "3.20.11-1",
    "uima-doc": "2.10.2-4",
    "libsc-doc": "2.3.1-22",
    "libvigraimpex-doc": "1.11.1+dfsg-11",
    "libcoap3-doc": "4.3.1-1",
    "fpc-source-3.2.2": "3.2.2+dfsg-20",
    "castle-game-engine-src": "7.0~alpha.2+dfsg1-5",
    "bluez-source": "5.66-1+deb12u2",
    "python3-sage": "9.5-6",
    "python3-torch": "1.13.1+dfsg-4",
    "python3-paraview": "5.11.0+dfsg-1+b1",
    "python3-cinder": "2:21.3.1-1~deb12u1",
    "python3-yt": "4.1.4-2",
    "golang-github-aws-aws-sdk-go-dev": "1.44.133-1",
    "golang-github-aws-aws-sdk-go-v2-dev": "1.17.1-3",
}
# PyPI sdists that bundle big C/C++ trees, pinned in ADDED_PINS (none in releases.json or the mixed corpus's).
ADDED_RELEASES = {"opencv-python": "5.0.0.93", "wxpython": "4.3.2", "grpcio": "1.85.1", "duckdb": "2.0.0"}
ADDED_PINS = Path(__file__).resolve().parent / "constant_archives.json"
ADDED_SHARE = 0.5
CODE_SUFFIXES = (*release_archives.TEXT_SUFFIXES, *".go .java .rs .el .rb .pl .pm .s .erl .lisp .pas .pp".split())
INNER_ARCHIVES = (".tar.xz", ".tar.gz", ".tar.bz2", ".tgz", ".zip")
Record = tuple[str, str, str]  # (source, path, text)
Reader = Callable[[str, str], list[release_archives.Member]]

WORD = re.compile(r"\w+")
ORGS = ("The Project Authors", "Example Corp.", "the contributors", "Acme Software Foundation", "J. Smith")
HOSTS = ("mirror.example.org", "docs.example.net", "archive.example.com", "cdn.example.io")
HEADERS = (
    "# Copyright (c) {year} {org}. All rights reserved.",
    "<!-- Mirrored from {host} on {year}-{month:02d}-{day:02d} -->",
    "Downloaded from https://{host}/ on {year}-{month:02d}-{day:02d}.",
    "/* This file is part of a distribution by {org}, {year}. */",
)
FOOTERS = (
    "Last updated {year}-{month:02d}-{day:02d}.",
    "(c) {year} {org}. Licensed under the Apache License, Version 2.0.",
    "Share this page ({year}): Twitter | Facebook | E-mail | Print",
    "Mirrored by {host}. Report a problem with this page.",
)


def newest_first(
    package: str, versions: Iterable[str], read: Reader = release_archives.release_members
) -> Iterator[Record]:
    """The ``pypi`` documents of one package: every member of its newest release, then from each older release
    only the members whose names no newer release has (one version of each file, so no two are releases of it)."""
    seen: set[str] = set()
    for version in reversed(list(versions)):
        for name, text in read(package, version):
            if name not in seen:
                seen.add(name)
                yield "pypi", f"{package}-{version}/{name}", text


def unique(records: Iterator[Record]) -> Iterator[Record]:
    """Records whose text no earlier record had (a 128-bit digest per text kept)."""
    seen: set[bytes] = set()
    for record in records:
        digest = hashlib.blake2b(record[2].encode("utf-8"), digest_size=16).digest()
        if digest not in seen:
            seen.add(digest)
            yield record


def default_fresh() -> Iterator[Record]:
    """The fresh documents: real_corpus's prose sources (``release_corpus.PROSE_SHARE`` of the bytes each, while they
    last) and one stream per package, weighted by its largest release's text, interleaved as the release corpus."""
    streams = {
        name: (release_corpus.PROSE_SHARE, release_corpus.cut(name, real_corpus.SOURCES[name]()))
        for name in PROSE_SOURCES
    }
    pins = release_archives.pins()
    sizes = {
        package: max(int(pins[f"{package}=={version}"]["text_bytes"]) for version in versions)
        for package, versions in release_archives.RELEASES.items()
    }
    left = 1 - release_corpus.PROSE_SHARE * len(streams)
    for package, versions in release_archives.RELEASES.items():
        streams[f"pypi:{package}"] = (left * sizes[package] / sum(sizes.values()), newest_first(package, versions))
    return unique(joined(unique(interleave(streams)), JOIN_BYTES, added_streams()))


def _code(name: str, data: bytes) -> str | None:
    """A source file's text (gzip-compressed ones too), or None when it is no text file of CODE_SUFFIXES."""
    lower = name.lower()
    if lower.endswith(".gz") and lower[:-3].endswith(CODE_SUFFIXES):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return None
    elif not lower.endswith(CODE_SUFFIXES):
        return None
    return release_archives.decode(data)


def _inner_members(name: str, data: bytes) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the files of an archive shipped inside a package, in archive order."""
    return ((f"{name}/{inner}", raw) for inner, raw in release_archives.members(name, io.BytesIO(data)))


def package_texts(package: str, version: str, directory: Path = mixed_corpus.DEBS) -> Iterator[Record]:
    """The ``debian`` documents of a pinned package (path ``package=version/member``), in archive order: its source
    files (also inside an archive under usr/src or a JDK's src.zip; other archives are test data, left out), HTML
    pages as plain text and manual pages, 1 byte to 1 MB of text."""
    for name, data in mixed_corpus.deb_members(mixed_corpus.fetch_deb(package, version, directory)):
        shipped = name.endswith(INNER_ARCHIVES) and (name.startswith("usr/src/") or name.endswith("/src.zip"))
        members = _inner_members(name, data) if shipped else iter([(name, data)])
        for inner, raw in members:
            text = mixed_corpus.member_text(inner, raw) or _code(inner, raw)
            if text and text.strip() and len(text.encode("utf-8")) <= release_archives.MAX_BYTES:
                yield "debian", f"{package}={version}/{inner}", text


def joined(first: Iterator[Record], after: int, added: dict[str, tuple[float, Iterator[Record]]]) -> Iterator[Record]:
    """``first``'s records until they have given ``after`` bytes of text, then its rest (ADDED_SHARE of the text
    while it lasts) interleaved with the ``added`` streams (the rest of the text, by their shares)."""
    given = 0
    for record in first:
        yield record
        given += len(record[2].encode("utf-8"))
        if given >= after:
            break
    total = sum(share for share, _ in added.values())
    rest = {"first": (ADDED_SHARE, first)}
    yield from interleave(rest | {name: ((1 - ADDED_SHARE) * share / total, it) for name, (share, it) in added.items()})


def sdist_texts(package: str, version: str, directory: Path = mixed_corpus.DEBS.parent) -> Iterator[Record]:
    """The ``pypi`` documents of one added sdist (release_archives' rules), fetched once into ``directory``."""
    pinned = json.loads(ADDED_PINS.read_text()) if ADDED_PINS.is_file() else {}
    if f"{package}=={version}" not in pinned:
        raise SystemExit(f"{package}=={version}: not in {ADDED_PINS.name}: run `python -m bench constant_corpus --pin`")
    for name, text in release_archives.read_archive(release_archives.fetch(package, version, directory, pinned)):
        yield "pypi", f"{package}-{version}/{name}", text


def pin_added() -> None:
    """Pin every release of ADDED_RELEASES not pinned yet (file name and SHA-256 as PyPI lists them)."""
    release_archives.pin_all({package: [version] for package, version in ADDED_RELEASES.items()}, ADDED_PINS, False)


def added_streams(
    packages: dict[str, str] = ADDED_PACKAGES, releases: dict[str, str] = ADDED_RELEASES
) -> dict[str, tuple[float, Iterator[Record]]]:
    """One stream per added Debian package and per added sdist, equal shares."""
    streams = {f"debian:{package}": (1.0, package_texts(package, version)) for package, version in packages.items()}
    return streams | {f"pypi:{package}": (1.0, sdist_texts(package, version)) for package, version in releases.items()}


def kinds(exact: float, near: float, rng: random.Random, block: int = BLOCK) -> Iterator[str]:
    """``"exact"``, ``"near"`` or ``"fresh"`` per document: each block of ``block`` documents holds
    ``exact``/``near`` of them (rounded so that every prefix of whole blocks is exact), in shuffled order."""
    start = 0
    while True:
        end = start + block
        n_exact = math.floor(end * exact) - math.floor(start * exact)
        n_near = math.floor(end * near) - math.floor(start * near)
        slots = ["exact"] * n_exact + ["near"] * n_near + ["fresh"] * (block - n_exact - n_near)
        rng.shuffle(slots)
        yield from slots
        start = end


def _line(templates: tuple[str, ...], rng: random.Random) -> str:
    fields = {"org": rng.choice(ORGS), "host": rng.choice(HOSTS), "year": rng.randint(2009, 2024)}
    return rng.choice(templates).format(month=rng.randint(1, 12), day=rng.randint(1, 28), **fields)


def change_words(text: str, rng: random.Random) -> str:
    """A few words (1, up to one per 60 words and at most 8) replaced by other words of the same text."""
    spans = [m.span() for m in WORD.finditer(text)]
    vocabulary = sorted({text[a:b] for a, b in spans})
    if len(vocabulary) < 2:
        return text
    chosen = sorted(rng.sample(range(len(spans)), rng.randint(1, max(1, min(8, len(spans) // 60)))))
    parts, at = [], 0
    for index in chosen:
        a, b = spans[index]
        word = text[a:b]
        replacement = rng.choice(vocabulary)
        while replacement.lower() == word.lower():
            replacement = rng.choice(vocabulary)
        parts += [text[at:a], replacement]
        at = b
    return "".join([*parts, text[at:]])


def add_header_footer(text: str, rng: random.Random) -> str:
    """A header line, a footer line or both, as a mirror or a packager adds them."""
    where = rng.choice(("header", "footer", "both"))
    head = _line(HEADERS, rng) + "\n\n" if where != "footer" else ""
    foot = "\n\n" + _line(FOOTERS, rng) if where != "header" else ""
    return head + text + foot


def drop_paragraph(text: str, rng: random.Random) -> str:
    """One paragraph (blank-line separated) of at most a tenth of the text's characters left out, if it has 3+."""
    paragraphs = text.split("\n\n")
    small = [i for i, p in enumerate(paragraphs) if p.strip() and len(p) <= len(text) // 10]
    if len(paragraphs) < 3 or not small:
        return text
    drop = rng.choice(small)
    return "\n\n".join(p for i, p in enumerate(paragraphs) if i != drop)


EDITS = (change_words, add_header_footer, drop_paragraph)


def near_copy(text: str, rng: random.Random, attempts: int = 4) -> str | None:
    """``text`` with one to three of the EDITS applied, differing from it and at word 5-gram Jaccard
    >= MIN_JACCARD with it; None when the text is too short or no attempt keeps that similarity."""
    if len(WORD.findall(text)) < MIN_WORDS:
        return None
    original = shingle_set(text, NGRAM)
    for _ in range(attempts):
        edited = text
        for edit in rng.sample(EDITS, rng.randint(1, len(EDITS))):
            edited = edit(edited, rng)
        if edited == text:
            continue
        copy = shingle_set(edited, NGRAM)
        if len(original & copy) >= MIN_JACCARD * len(original | copy):
            return edited
    return None


class Copier:
    """The exact and near copies of a stream of fresh documents: a reservoir of ``pool`` of them (a uniform sample of
    every fresh document so far) to draw originals from."""

    def __init__(self, rng: random.Random, pool: int = POOL) -> None:
        self.rng, self.size, self.seen = rng, pool, 0
        self.pool: list[Record] = []
        self.made: set[bytes] = set()  # digests of the near copies made: none is made twice

    def add(self, record: Record) -> None:
        """Offer a fresh document to the reservoir."""
        self.seen += 1
        if len(self.pool) < self.size:
            self.pool.append(record)
        elif (slot := self.rng.randrange(self.seen)) < self.size:
            self.pool[slot] = record

    def exact(self) -> Record | None:
        """An exact copy of a pooled document (its path marked ``#exact``), or None with an empty pool."""
        if not self.pool:
            return None
        source, path, text = self.rng.choice(self.pool)
        return source, f"{path}#exact", text

    def near(self, tries: int = 16) -> tuple[Record, str] | None:
        """A near copy of a pooled document (its path marked ``#near``) and the original's text, or None when no
        pooled document drawn in ``tries`` takes the edits."""
        for _ in range(tries if self.pool else 0):
            source, path, text = self.rng.choice(self.pool)
            if (edited := near_copy(text, self.rng)) is None:
                continue
            digest = hashlib.blake2b(edited.encode("utf-8"), digest_size=16).digest()
            if digest not in self.made:
                self.made.add(digest)
                return (source, f"{path}#near", edited), text
        return None


def documents(
    fresh: Iterator[Record],
    exact: float = EXACT_SHARE,
    near: float = NEAR_SHARE,
    seed: int = SEED,
    pairs: list[tuple[str, str]] | None = None,
    keep_pairs: int = 0,
) -> Iterator[tuple[str, Record]]:
    """(kind, record) of the corpus: per :func:`kinds`, a fresh document or a copy of one. A copy that cannot be made
    yet (empty pool, no original long enough) is owed and made in the next slot that would take a fresh document,
    so the counts catch up. Up to ``keep_pairs`` (original, near copy) texts are appended to ``pairs``, evenly.
    Stops when ``fresh`` runs out."""
    rng = random.Random(seed)
    copier = Copier(rng)
    owed: list[str] = []
    made_near = 0
    for kind in kinds(exact, near, rng):
        if kind == "fresh" and owed:
            kind = owed.pop(0)
        record: Record | None = None
        if kind == "exact":
            record = copier.exact()
        elif kind == "near" and (made := copier.near()) is not None:
            record, original = made
            if pairs is not None and len(pairs) < keep_pairs and made_near % 7 == 0:
                pairs.append((original, record[2]))
            made_near += 1
        if record is None:
            if kind != "fresh":
                owed.append(kind)
            record = next(fresh, None)
            if record is None:
                return
            copier.add(record)
            kind = "fresh"
        yield kind, record


def _empty_window() -> dict[str, int]:
    return {"documents": 0, "bytes": 0, "exact": 0, "exact_bytes": 0, "near": 0, "near_bytes": 0}


def write_corpus(
    records: Iterator[tuple[str, Record]],
    directory: Path,
    target: int,
    shard_bytes: int = SHARD_BYTES,
    window_bytes: int = WINDOW_BYTES,
) -> dict[str, Any]:
    """Write records into shards in ``directory`` until their text reaches ``target`` bytes; their statistics per
    window of ``window_bytes`` of text (also in ``_stats.json``): documents and bytes, exact copies (a text seen
    before, counted by digest, not by kind) and near copies. Raises SystemExit when the fresh documents run out."""
    windows = [_empty_window()]
    fresh = fresh_bytes = 0
    with release_corpus.Shards(directory, target, shard_bytes) as out:
        for kind, record in records:
            data, copy = out.write(record)
            if windows[-1]["bytes"] >= window_bytes:
                windows.append(_empty_window())
            window = windows[-1]
            window["documents"] += 1
            window["bytes"] += len(data)
            if copy:
                window["exact"] += 1
                window["exact_bytes"] += len(data)
            elif kind == "near":
                window["near"] += 1
                window["near_bytes"] += len(data)
            if kind == "fresh":
                fresh, fresh_bytes = fresh + 1, fresh_bytes + len(data)
            if out.full:
                break
    if not out.full:
        raise SystemExit(
            f"the fresh documents ran out after {fresh:,} ({fresh_bytes / 1e6:.1f} MB of text): "
            f"only {out.bytes / 1e6:.1f} MB of corpus, {target / 1e6:g} MB asked (--mb)"
        )
    documents_total = sum(w["documents"] for w in windows)
    return out.finish(
        {
            "documents": documents_total,
            "bytes": out.bytes,
            "shards": out.count,
            "fresh_documents": fresh,
            "fresh_bytes": fresh_bytes,
            "exact_share": sum(w["exact"] for w in windows) / max(documents_total, 1),
            "near_share": sum(w["near"] for w in windows) / max(documents_total, 1),
            "window_bytes": window_bytes,
            "windows": windows,
        }
    )


def datasketch_check(pairs: list[tuple[str, str]], num_perm: int = 256, threshold: float = 0.7) -> dict[str, Any]:
    """datasketch's MinHash estimate (``num_perm`` permutations, word 5-grams) of each (original, near copy) pair:
    how many estimate >= ``threshold``, and the smallest and median estimates."""
    from datasketch import MinHash

    def signature(text: str) -> MinHash:
        minhash = MinHash(num_perm=num_perm)
        minhash.update_batch([gram.encode("utf-8") for gram in shingle_set(text, NGRAM)])
        return minhash

    estimates = sorted(signature(a).jaccard(signature(b)) for a, b in pairs)
    return {
        "pairs": len(estimates),
        "above_threshold": sum(e >= threshold for e in estimates),
        "threshold": threshold,
        "min": round(estimates[0], 3) if estimates else None,
        "median": round(estimates[len(estimates) // 2], 3) if estimates else None,
    }


def check_shares(exact: float, near: float) -> None:
    """Exit with a one-line error naming the option when the shares cannot be a corpus's."""
    for name, share in (("--exact", exact), ("--near", near)):
        if not 0 <= share < 1:
            raise SystemExit(f"error: {name}: a share in [0, 1), got {share}")
    if exact + near >= 1:
        raise SystemExit(f"error: --exact + --near: must be below 1 (fresh documents), got {exact + near:g}")


def build(
    megabytes: float,
    directory: Path | None = None,
    exact: float = EXACT_SHARE,
    near: float = NEAR_SHARE,
    fresh: Callable[[], Iterator[Record]] = default_fresh,
    shard_bytes: int = SHARD_BYTES,
) -> Path:
    """The corpus directory of at least ``megabytes`` MB of text (default under $PIPELINE_BENCH_DATA, named by its
    size and shares), built once in ``<name>.partial`` and renamed when complete; an existing one is reused."""
    check_shares(exact, near)
    name = f"constant-corpus-{megabytes:g}mb" + (
        "" if (exact, near) == (EXACT_SHARE, NEAR_SHARE) else f"-{exact:g}-{near:g}"
    )
    target = int(megabytes * 1e6)
    return built(
        directory or real_corpus.DEFAULT_DIR / name,
        lambda into: write_corpus(documents(fresh(), exact, near), into, target, shard_bytes),
    )


def at_least(megabytes: float) -> Path:
    """The smallest built corpus of the default shares holding at least ``megabytes`` MB of text (under
    $PIPELINE_BENCH_DATA), else a new one of that size (its every prefix has the same shares)."""
    sizes = []
    for path in real_corpus.DEFAULT_DIR.glob("constant-corpus-*mb"):
        if (found := re.fullmatch(r"constant-corpus-(\d+(?:\.\d+)?)mb", path.name)) and path.is_dir():
            sizes.append((float(found[1]), path))
    fitting = sorted((mb, path) for mb, path in sizes if mb >= megabytes)
    return fitting[0][1] if fitting else build(megabytes)


def main() -> None:
    """Build (or reuse) the corpus, print its directory and its shares per window; --check N measures N sampled
    near copies against their originals with datasketch."""
    args = arguments(
        __doc__, mb=1000.0, exact=EXACT_SHARE, near=NEAR_SHARE, check=0, count=False, pin=False, out=None
    ).parse_args()
    if args.pin:
        pin_added()
        return
    if args.count:  # every added package read once; each text counted once
        sizes = {}
        for name, (_, stream) in added_streams().items():
            sizes[name] = sum(len(record[2].encode("utf-8")) for record in unique(stream))
            print(f"{name:<32}{sizes[name] / 1e6:>10.1f} MB", flush=True)
        print(f"{'added packages':<32}{sum(sizes.values()) / 1e6:>10.1f} MB of fresh text (each package's texts once)")
        return
    check_shares(args.exact, args.near)
    directory = build(args.mb, args.out, args.exact, args.near)
    print(directory)
    stats = json.loads((directory / "_stats.json").read_text())
    print(f"{stats['documents']:,} documents, {stats['fresh_documents']:,} fresh ({stats['fresh_bytes'] / 1e6:.0f} MB)")
    for number, window in enumerate(stats["windows"]):
        docs, size = max(window["documents"], 1), max(window["bytes"], 1)
        print(
            f"window {number} ({window['bytes'] / 1e6:.0f} MB, {window['documents']:,} documents): "
            f"exact {window['exact'] / docs:.3f} of documents, {window['exact_bytes'] / size:.3f} of bytes; "
            f"near {window['near'] / docs:.3f}, {window['near_bytes'] / size:.3f}"
        )
    if args.check:  # the same records again (deterministic), keeping a sample of (original, near copy) pairs
        pairs: list[tuple[str, str]] = []
        records = documents(default_fresh(), args.exact, args.near, pairs=pairs, keep_pairs=args.check)
        for _ in zip(range(stats["documents"]), records, strict=False):
            if len(pairs) >= args.check:
                break
        print(json.dumps({"datasketch": datasketch_check(pairs)}))


if __name__ == "__main__":
    main()
