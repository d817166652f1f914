"""A scale corpus whose every prefix is a uniform sample of the whole (issue #47, item 4): the same shares of exact
and near-duplicate documents in every window, whatever its size, planted in real text: one version of each file of
the release corpus's PyPI packages beside real_corpus's prose; past ``JOIN_BYTES``, also the pinned packages of
corpora/constant_sources.json. JSONL shards with ``_stats.json``. ``--uniform``: a built corpus's fresh documents in
a random order, the copies planted again, so that every window also has the whole's mix of sources.

    python -m bench constant_corpus --mb 1000                 # -> /tmp/pipeline-bench/constant-corpus-1000mb/
    python -m bench constant_corpus --mb 1000 --exact 0.1 --near 0.2 --check 200
    python -m bench constant_corpus --mb 10000 --uniform      # -> .../constant-corpus-10000mb-uniform/
    python -m bench constant_corpus --count             # MB of fresh text the added packages give
    python -m bench constant_corpus --pin               # look ADDED_RELEASES up on PyPI and pin them

How it measures: docs/benchmarks.md, Method notes, constant_corpus.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import math
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from corpora import archives, real, release
from corpora.real import interleave
from corpora.release import Reader, Record, Streams
from corpora.shingles import shingle_set
from corpora.store import arguments, built

EXACT_SHARE = 0.15
NEAR_SHARE = 0.15
BLOCK = 200  # documents whose kinds are shuffled together: each block holds the configured shares
POOL = 1024  # originals a copy is made from: a uniform reservoir sample of every fresh document so far
NGRAM = 5  # the dedup's shingle length (conf/dataproc.yaml)
MIN_JACCARD = 0.8  # a near copy's word 5-gram Jaccard with its original, above the dedup threshold (0.7)
MIN_WORDS = 50  # an original needs this many words for edits that keep MIN_JACCARD
WINDOW_BYTES = 250_000_000
SHARD_BYTES = release.SHARD_BYTES
PROSE_SOURCES = ("fixtures", "catalogues", "debian", "html")  # real_corpus's `python` overlaps the PyPI files
SEED = 47
JOIN_BYTES = 700_000_000  # fresh text before ADDED_PACKAGES join (the 1,000 MB corpus takes 681 MB: it stays as it was)
ADDED = json.loads((Path(__file__).resolve().parent / "constant_sources.json").read_text())
ADDED_PACKAGES: dict[str, str] = ADDED["packages"]  # Debian packages of source trees and HTML manuals, pinned
ADDED_RELEASES: dict[str, str] = ADDED["releases"]  # PyPI sdists bundling big C/C++ trees, pinned in ADDED_PINS
ADDED_PINS = Path(__file__).resolve().parent / "constant_archives.json"
ADDED_SHARE = 0.5
CODE_SUFFIXES = (*archives.TEXT_SUFFIXES, *".go .java .rs .el .rb .pl .pm .s .erl .lisp .pas .pp".split())
PROSE_SUFFIXES = (".rst", ".md", ".txt", ".html", ".htm", ".tex")
CODE_SOURCE = "debian-code"  # --uniform: the added packages' program sources, a source of their own (left unfiltered)
COPY_MARK = b'", "text": "'  # ends a written record's path: ``#exact`` or ``#near`` before it marks a copy
INNER_ARCHIVES = (".tar.xz", ".tar.gz", ".tar.bz2", ".tgz", ".zip")

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


def newest_first(package: str, versions: Iterable[str], read: Reader = archives.release_members) -> Iterator[Record]:
    """The ``pypi`` documents of one package: its newest release's members, then the older ones' new names."""
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
    """The fresh documents: as the release corpus's, each package weighted by its largest release; past JOIN_BYTES,
    the added streams too."""
    streams = release.pypi_streams(PROSE_SOURCES, max, newest_first)
    return unique(joined(unique(interleave(streams)), JOIN_BYTES, added_streams()))


def _code(name: str, data: bytes) -> str | None:
    """A source file's text (gzip-compressed ones too), or None when it is no text file of CODE_SUFFIXES."""
    lower = name.lower()
    if lower.endswith(".gz") and lower[:-3].endswith(CODE_SUFFIXES):
        return None if (raw := archives.gunzip(data)) is None else archives.decode(raw)
    return archives.decode(data) if lower.endswith(CODE_SUFFIXES) else None


def package_texts(package: str, version: str) -> Iterator[Record]:
    """The ``debian`` documents of a pinned package, in archive order: source files (also inside an archive under
    usr/src or a JDK's src.zip; other archives are test data), HTML pages as plain text and manual pages, to 1 MB."""
    for name, data in archives.deb_members(archives.fetch_deb(package, version)):
        inner: Iterator[tuple[str, bytes]] = iter([(name, data)])
        if name.endswith(INNER_ARCHIVES) and (name.startswith("usr/src/") or name.endswith("/src.zip")):
            inner = ((f"{name}/{member}", raw) for member, raw in archives.members(name, io.BytesIO(data)))
        for path, raw in inner:
            text = archives.member_text(path, raw) or _code(path, raw)
            if text and text.strip() and len(text.encode("utf-8")) <= archives.MAX_BYTES:
                yield "debian", f"{package}={version}/{path}", text


def joined(first: Iterator[Record], after: int, added: Streams) -> Iterator[Record]:
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


def sdist_texts(package: str, version: str, directory: Path = archives.DEBS.parent) -> Iterator[Record]:
    """The ``pypi`` documents of one added sdist (archives' rules), fetched once into ``directory``."""
    for name, text in archives.read_archive(archives.fetch(package, version, directory, ADDED_PINS)):
        yield "pypi", f"{package}-{version}/{name}", text


def added_streams() -> Streams:
    """One stream per added Debian package and per added sdist, equal shares."""
    streams = {f"debian:{name}": (1.0, package_texts(name, version)) for name, version in ADDED_PACKAGES.items()}
    return streams | {f"pypi:{name}": (1.0, sdist_texts(name, version)) for name, version in ADDED_RELEASES.items()}


def kinds(exact: float, near: float, rng: random.Random, block: int = BLOCK) -> Iterator[str]:
    """``exact``, ``near`` or ``fresh`` per document, shuffled in blocks of ``block``: whole blocks hold the shares."""
    for start in itertools.count(0, block):
        end = start + block
        n_exact = math.floor(end * exact) - math.floor(start * exact)
        n_near = math.floor(end * near) - math.floor(start * near)
        slots = ["exact"] * n_exact + ["near"] * n_near + ["fresh"] * (block - n_exact - n_near)
        rng.shuffle(slots)
        yield from slots


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
    """``text`` changed by one to three EDITS, at word 5-gram Jaccard >= MIN_JACCARD with it, or None."""
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
    """Exact and near copies of fresh documents drawn from a reservoir (a uniform sample) of ``pool`` of them; every
    seventh near copy and its original kept in ``pairs`` while they are fewer than ``keep_pairs``."""

    def __init__(self, rng: random.Random, pairs: list[tuple[str, str]], keep_pairs: int, pool: int = POOL) -> None:
        self.rng, self.size, self.seen, self.pairs, self.keep_pairs = rng, pool, 0, pairs, keep_pairs
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
        """An exact copy of a pooled document (its path marked ``#exact``), if any."""
        if not self.pool:
            return None
        source, path, text = self.rng.choice(self.pool)
        return source, f"{path}#exact", text

    def near(self, tries: int = 16) -> Record | None:
        """A near copy of a pooled document (its path marked ``#near``), if any of ``tries`` drawn takes the edits."""
        for _ in range(tries if self.pool else 0):
            source, path, text = self.rng.choice(self.pool)
            if (edited := near_copy(text, self.rng)) is None:
                continue
            digest = hashlib.blake2b(edited.encode("utf-8"), digest_size=16).digest()
            if digest not in self.made:
                if len(self.pairs) < self.keep_pairs and len(self.made) % 7 == 0:
                    self.pairs.append((text, edited))
                self.made.add(digest)
                return source, f"{path}#near", edited
        return None


def documents(
    fresh: Iterator[Record],
    exact: float = EXACT_SHARE,
    near: float = NEAR_SHARE,
    seed: int = SEED,
    pairs: list[tuple[str, str]] | None = None,
    keep_pairs: int = 0,
) -> Iterator[tuple[str, Record]]:
    """(kind, record) per :func:`kinds`, a copy that cannot be made yet owed to the next fresh slot, until ``fresh``
    runs out; near copies and their originals sampled into ``pairs`` (:class:`Copier`)."""
    rng = random.Random(seed)
    copier = Copier(rng, [] if pairs is None else pairs, keep_pairs)
    owed: list[str] = []
    for kind in kinds(exact, near, rng):
        if kind == "fresh" and owed:
            kind = owed.pop(0)
        record = copier.exact() if kind == "exact" else copier.near() if kind == "near" else None
        if record is None:
            if kind != "fresh":
                owed.append(kind)
            if (record := next(fresh, None)) is None:
                return
            copier.add(record)
            kind = "fresh"
        yield kind, record


def write_corpus(
    records: Iterator[tuple[str, Record]],
    directory: Path,
    target: int | None,
    shard_bytes: int = SHARD_BYTES,
    window_bytes: int = WINDOW_BYTES,
) -> dict[str, Any]:
    """Write records into shards until their text reaches ``target`` bytes (None: until they run out); their
    statistics (``_stats.json``) per window of ``window_bytes``: documents, exact copies (by digest, not kind) and
    near copies, and their bytes."""
    windows: list[dict[str, int]] = []
    fresh = fresh_bytes = 0
    out = release.Shards(directory, sys.maxsize if target is None else target, shard_bytes)
    for kind, _, data, copy in out.write(records):
        if not windows or windows[-1]["bytes"] >= window_bytes:
            windows.append(dict.fromkeys(("documents", "bytes", "exact", "exact_bytes", "near", "near_bytes"), 0))
        window = windows[-1]
        window["documents"], window["bytes"] = window["documents"] + 1, window["bytes"] + len(data)
        if copy or kind == "near":
            label = "exact" if copy else "near"
            window[label], window[f"{label}_bytes"] = window[label] + 1, window[f"{label}_bytes"] + len(data)
        if kind == "fresh":
            fresh, fresh_bytes = fresh + 1, fresh_bytes + len(data)
    if target is not None and not out.full:
        raise SystemExit(
            f"the fresh documents ran out after {fresh:,} ({fresh_bytes / 1e6:.1f} MB of text): "
            f"only {out.bytes / 1e6:.1f} MB of corpus, {target / 1e6:g} MB asked (--mb)"
        )
    total = {key: sum(w[key] for w in windows) for key in ("documents", "exact", "near")}
    stats = {"documents": total["documents"], "bytes": out.bytes, "shards": out.count, "fresh_documents": fresh}
    shares = {f"{key}_share": total[key] / max(total["documents"], 1) for key in ("exact", "near")}
    return out.finish(stats | {"fresh_bytes": fresh_bytes, **shares, "window_bytes": window_bytes, "windows": windows})


def datasketch_check(pairs: list[tuple[str, str]], num_perm: int = 256, threshold: float = 0.7) -> dict[str, Any]:
    """How many (original, near copy) pairs datasketch's MinHash estimates at >= ``threshold``; the min and median."""
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
    """The corpus directory of at least ``megabytes`` MB of text (named by its size and shares), built once."""
    check_shares(exact, near)
    shares = "" if (exact, near) == (EXACT_SHARE, NEAR_SHARE) else f"-{exact:g}-{near:g}"
    write = lambda into: write_corpus(documents(fresh(), exact, near), into, int(megabytes * 1e6), shard_bytes)  # noqa: E731
    return built(directory or real.DEFAULT_DIR / f"constant-corpus-{megabytes:g}mb{shares}", write)


def is_code(path: str) -> bool:
    """Whether a document's file is a program source: CODE_SUFFIXES but no prose markup, gzip-compressed too."""
    name = path.lower().removesuffix(".gz")
    return name.endswith(CODE_SUFFIXES) and not name.endswith(PROSE_SUFFIXES)


def fresh_index(shards: list[Path]) -> list[tuple[int, int, int]]:
    """(shard number, offset, length) of every record of ``shards`` whose path marks no copy."""
    index = []
    for number, shard in enumerate(shards):
        offset = 0
        with shard.open("rb") as lines:
            for line in lines:
                if not line[: line.index(COPY_MARK)].endswith((b"#exact", b"#near")):
                    index.append((number, offset, len(line)))
                offset += len(line)
    return index


def shuffled_fresh(directory: Path, seed: int = SEED) -> Iterator[Record]:
    """The fresh documents of a built corpus in a random order, the ``debian`` ones that are code as CODE_SOURCE."""
    shards = sorted(directory.glob("part-*.jsonl"))
    index = fresh_index(shards)
    random.Random(seed).shuffle(index)
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(shard.open("rb")) for shard in shards]
        for number, offset, length in index:
            files[number].seek(offset)
            record = json.loads(files[number].read(length))
            source, path = record["source"], record["path"]
            yield (CODE_SOURCE if source == "debian" and is_code(path) else source), path, record["text"]


def build_uniform(source: Path, exact: float = EXACT_SHARE, near: float = NEAR_SHARE) -> Path:
    """``<source>-uniform``: every fresh document of the built corpus ``source`` (:func:`shuffled_fresh`) with exact
    and near copies planted again at the shares, as big as they make it (built once)."""
    check_shares(exact, near)
    write = lambda into: write_corpus(documents(shuffled_fresh(source), exact, near), into, target=None)  # noqa: E731
    return built(source.with_name(f"{source.name}-uniform"), write)


def at_least(megabytes: float) -> Path:
    """The smallest built corpus of the default shares with at least ``megabytes`` MB of text, else a new one."""
    paths = real.DEFAULT_DIR.glob("constant-corpus-*mb")
    found = [(re.fullmatch(r"constant-corpus-(\d+(?:\.\d+)?)mb", path.name), path) for path in paths]
    fitting = sorted((float(m[1]), path) for m, path in found if m and path.is_dir() and float(m[1]) >= megabytes)
    return fitting[0][1] if fitting else build(megabytes)


def main() -> None:
    parser = arguments(__doc__, mb=1000.0)
    parser.add_argument(
        "--exact", type=float, default=EXACT_SHARE, help=f"share of exact copies (default {EXACT_SHARE})"
    )
    parser.add_argument("--near", type=float, default=NEAR_SHARE, help=f"share of near copies (default {NEAR_SHARE})")
    parser.add_argument("--check", type=int, default=0, help="(original, near copy) pairs datasketch checks")
    parser.add_argument("--count", action="store_true", help="MB of fresh text the added packages give")
    parser.add_argument("--uniform", action="store_true", help="the --mb corpus's fresh texts shuffled, copied again")
    parser.add_argument("--pin", action="store_true", help="look ADDED_RELEASES up on PyPI and pin them")
    args = parser.parse_args()
    if args.pin:  # every release of ADDED_RELEASES not pinned yet
        releases = {package: [version] for package, version in ADDED_RELEASES.items()}
        archives.pin_all(releases, ADDED_PINS, measure=False)
        return
    if args.count:  # every added package read once; each text counted once
        sizes = {}
        for name, (_, stream) in added_streams().items():
            sizes[name] = sum(len(record[2].encode("utf-8")) for record in unique(stream))
            print(f"{name:<32}{sizes[name] / 1e6:>10.1f} MB", flush=True)
        print(f"{'added packages':<32}{sum(sizes.values()) / 1e6:>10.1f} MB of fresh text (each package's texts once)")
        return
    directory = build(args.mb, args.out, args.exact, args.near)
    if args.uniform:
        directory = build_uniform(directory, args.exact, args.near)
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
