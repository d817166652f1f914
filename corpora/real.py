"""A JSONL corpus of REAL documents from what this machine has, for the filter bench (the same machine, the same bytes).

How it measures: docs/benchmarks.md, Method notes, real_corpus.
"""

from __future__ import annotations

import gettext
import gzip
import itertools
import json
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from corpora.store import DATA, FIXTURES, arguments, built

FIXTURE_FILES = ("corpus.en", "tinystories_sample.txt", "german.txt", "address.txt")
LOCALES = Path("/usr/share/locale")
DOCS = Path("/usr/share/doc")
MAX_CHARS = 100_000
DEFAULT_DIR = DATA

Doc = tuple[str, str]  # (path, text)
R = TypeVar("R", bound=tuple[Any, ...])


def _read(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def fixtures() -> Iterator[Doc]:
    """The shared fixture texts, cut at blank lines into documents of about 4 kB."""
    for name in FIXTURE_FILES:
        path = FIXTURES / name
        if not path.is_file():
            continue
        piece: list[str] = []
        for para in _read(path).split("\n\n"):
            piece.append(para)
            if sum(map(len, piece)) >= 4000:
                yield str(path), "\n\n".join(piece)
                piece = []
        if piece:
            yield str(path), "\n\n".join(piece)


def catalogues() -> Iterator[Doc]:
    """Per catalogue under /usr/share/locale, its translated strings in msgid order (ones gettext cannot read: none)."""
    for path in sorted(LOCALES.glob("*/LC_MESSAGES/*.mo")):
        try:
            with open(path, "rb") as handle:
                catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
                entries = sorted(catalog.items(), key=lambda kv: str(kv[0]))
        except (OSError, UnicodeDecodeError, IndexError, ValueError):  # another encoding, a malformed header
            continue
        yield str(path), "\n".join(v for k, v in entries if k and v and v != k)


def debian() -> Iterator[Doc]:
    """Debian copyright files and changelogs."""
    for path in sorted([*DOCS.glob("*/copyright"), *DOCS.glob("*/changelog*.gz")]):
        yield str(path), _read(path)


def html() -> Iterator[Doc]:
    """Debian's HTML documentation as plain text (resiliparse)."""
    from resiliparse.extract.html2text import extract_plain_text

    for path in sorted(DOCS.rglob("*.html")):
        if path.is_file():
            yield str(path), extract_plain_text(_read(path))


def python() -> Iterator[Doc]:
    """Python sources and docs of the running interpreter's site-packages."""
    root = Path(sysconfig.get_paths()["purelib"])
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".md", ".rst", ".txt")):
        if path.is_file():
            yield str(path.relative_to(root)), _read(path)


SOURCES: dict[str, Callable[[], Iterator[Doc]]] = {f.__name__: f for f in (fixtures, catalogues, debian, html, python)}


def pieces(text: str) -> list[str]:
    """``text`` cut into pieces of ``MAX_CHARS`` characters, blank pieces left out."""
    return [piece for at in range(0, len(text), MAX_CHARS) if (piece := text[at : at + MAX_CHARS]).strip()]


def interleave(streams: dict[str, tuple[float, Iterator[R]]], size: Callable[[R], int] = lambda r: len(r[2].encode())):
    """Records of every stream, next from the one with the fewest bytes (``size``) given per unit of its share."""
    order = {name: rank for rank, name in enumerate(streams)}
    active, given = dict(streams), dict.fromkeys(streams, 0)
    while active:
        name = min(active, key=lambda s: (given[s] / active[s][0], order[s]))
        record = next(active[name][1], None)
        if record is None:
            del active[name]
            continue
        given[name] += size(record)
        yield record


def _cut(name: str, make: Callable[[], Iterator[Doc]]) -> Iterator[tuple[str, str, list[str]]]:
    for path, text in make():
        yield name, path, pieces(text)


def documents() -> Iterator[tuple[str, str, str]]:
    """(source, path, text) of every piece of every document, interleaved by source and bytes given."""
    streams = {name: (1.0, _cut(name, make)) for name, make in SOURCES.items()}
    for name, path, parts in interleave(streams, lambda r: sum(len(p.encode("utf-8")) for p in r[2])):
        for piece in parts:
            yield name, path, piece


def write(path: Path, megabytes: float) -> None:
    """Write the corpus's first pieces holding at least ``megabytes`` MB of text to ``path``."""
    target, size = int(megabytes * 1e6), 0
    with open(path, "w", encoding="utf-8") as out:
        for source, where, text in documents():
            out.write(json.dumps({"source": source, "path": where, "text": text}, ensure_ascii=False) + "\n")
            size += len(text.encode("utf-8"))
            if size >= target:
                return
    raise SystemExit(f"only {size / 1e6:.1f} MB of real documents on this machine, {megabytes} MB asked (--mb)")


def build(megabytes: float, path: Path | None = None) -> Path:
    """The corpus of at least ``megabytes`` MB of text at ``path``, built once."""
    return built(path or DEFAULT_DIR / f"real-corpus-{megabytes:g}mb.jsonl", lambda partial: write(partial, megabytes))


def read(path: Path) -> list[dict[str, str]]:
    """The records of a corpus file."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def main() -> None:
    args = arguments(__doc__, mb=100.0).parse_args()
    path = build(args.mb, args.out)
    print(path)
    pairs = sorted((r["source"], len(r["text"].encode())) for r in read(path))
    for source, lengths in itertools.groupby(pairs, key=lambda pair: pair[0]):
        sizes = [n for _, n in lengths]
        print(f"{source:<11} {len(sizes):>7} documents {sum(sizes) / 1e6:>8.1f} MB")


if __name__ == "__main__":
    main()
