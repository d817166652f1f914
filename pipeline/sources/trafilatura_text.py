"""HTML to text with trafilatura (``ingest.html_extractor: trafilatura``; docs/bad_input.md, Web archives).

The options are those datatrove's ``Trafilatura`` extractor passes by default (precision favoured, comments
and images left out, repeated segments removed), so both give the same text. Trafilatura's repeated-segment
memory is a process-wide cache by default, which would make a page's text depend on the pages its task read
before; each page gets a fresh one here, so a page's text depends on that page alone.
"""

from __future__ import annotations

from typing import Any

OPTIONS: dict[str, Any] = {"favor_precision": True, "include_comments": False, "include_images": False}
INSTALL = "pip install 'spark-pretrain-pipeline[web-trafilatura]'"
_loaded: list[Any] = []  # trafilatura's extract and LRUCache, imported on first use (seconds of imports)


def available() -> bool:
    """Whether trafilatura imports (its extra is installed)."""
    try:
        _load()
    except ImportError:
        return False
    return True


def _load() -> tuple[Any, Any]:
    if not _loaded:
        from trafilatura import extract
        from trafilatura.deduplication import LRUCache
        from trafilatura.settings import LRU_SIZE

        _loaded[:] = [extract, lambda: LRUCache(maxsize=LRU_SIZE)]
    return _loaded[0], _loaded[1]


def trafilatura_text(html: str) -> str:
    """The page's main text as trafilatura extracts it; "" when it finds none."""
    extract, fresh_cache = _load()
    return extract(html, deduplicate=fresh_cache(), **OPTIONS) or ""
