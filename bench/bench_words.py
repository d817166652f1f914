"""English word splitting on one core: datatrove's ``split_into_words`` (spaCy) vs ``pipeline.text.english.words``.

The text is real: Debian's HTML documentation under /usr/share/doc as plain text (resiliparse, as ingest
extracts it), then Python sources of the installed site-packages, one document per file, until
``--megabytes``. Both split every document; the script checks the word lists are equal and prints MB/s of
each (CPU seconds of this process, so a busy machine does not skew them) and the ratio. Ours starts
with an empty chunk cache.
"""

from __future__ import annotations

import argparse
import site
import time
from pathlib import Path

from bench.harness import write_result


def real_documents(megabytes: float) -> list[str]:
    """Real English documents (HTML docs as text, then Python sources) totalling about ``megabytes`` MB."""
    from pipeline.sources.web import EXTRACTORS

    limit = int(megabytes * 1e6)
    docs: list[str] = []
    size = 0
    html = sorted(Path("/usr/share/doc").rglob("*.html"))
    sources = sorted(p for d in site.getsitepackages() for p in Path(d).rglob("*.py"))
    for path in [*html, *sources]:
        if not path.is_file():
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        text = EXTRACTORS["resiliparse"](raw) if path.suffix == ".html" else raw
        if not text.strip():
            continue
        docs.append(text)
        size += len(text.encode())
        if size >= limit:
            break
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=20.0, help="size of the real text (default 20)")
    args = parser.parse_args()
    docs = real_documents(args.megabytes)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    print(f"{len(docs)} documents, {mb:.1f} MB of real text")

    from datatrove.utils.text import split_into_words

    from pipeline.text.english import chunk_cache, words

    split_into_words("warm up.", "en")
    t0 = time.process_time()
    theirs = [split_into_words(d, "en") for d in docs]
    t_theirs = time.process_time() - t0

    chunk_cache.clear()
    t0 = time.process_time()
    ours = [words.split_words(d) for d in docs]
    t_ours = time.process_time() - t0
    t0 = time.process_time()
    counts = [words.count_words(d) for d in docs]
    t_count = time.process_time() - t0

    same = sum(a == b for a, b in zip(ours, theirs, strict=True))
    assert counts == [len(w) for w in ours]
    print(f"identical word lists: {same}/{len(docs)} documents")
    print(f"datatrove split_into_words: {mb / t_theirs:8.2f} MB/s")
    print(f"ours split_words (cold):    {mb / t_ours:8.2f} MB/s  ({t_theirs / t_ours:.1f}x)")
    print(f"ours count_words (warm):    {mb / t_count:8.2f} MB/s  ({t_theirs / t_count:.1f}x)")
    figures = {
        "identical": (same, "documents"),
        "documents": (len(docs), "documents"),
        "datatrove": (mb / t_theirs, "MB/s"),
    }
    own = {"split_words": (mb / t_ours, "MB/s"), "count_words": (mb / t_count, "MB/s")}
    write_result("words", args, {**figures, **own})


if __name__ == "__main__":
    main()
