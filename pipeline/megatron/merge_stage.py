"""Merge half of the merge-blend stage: ``shards/<source>/`` -> ``megatron/<source>.{bin,idx}``.

Per source, the shards that exist are merged in partition order (= doc_id order; empty partitions
wrote none) with :func:`merge_indexed_datasets`, then the result is validated. A source with zero
documents is not published: numpy cannot memory-map an empty ``.bin``, so Megatron's reader would
fail on it (SPEC §11). Its entry says ``published: false`` so the blend leaves it out and says so.
"""

from __future__ import annotations

import time

from pipeline import storage
from pipeline.context import RunContext
from pipeline.errors import PipelineError
from pipeline.manifest import marker_path
from pipeline.megatron import _fs
from pipeline.megatron.merge import merge_indexed_datasets
from pipeline.megatron.shards import list_shards, shard_dir, shard_name
from pipeline.megatron.validate import validate


def megatron_prefix(ctx: RunContext, source: str) -> str:
    """``<run>/megatron/<source>`` (the dataset prefix handed to Megatron)."""
    return ctx.path("megatron", source)


def _tokenize_counts(ctx: RunContext) -> dict:
    """Per-source counts the tokenize stage recorded, or {} when its marker is absent."""
    path = marker_path(ctx.run_dir, "tokenize")
    if not storage.exists(path):
        return {}
    return storage.read_json(path).get("counts", {}).get("sources", {})


def merge_source(ctx: RunContext, source: str) -> dict:
    """Merge one source's shards, validate the result; its counts (``published`` says if it exists)."""
    started = time.time()
    directory = shard_dir(ctx, source)
    pairs, stray = list_shards(directory)
    if stray:
        raise PipelineError(f"{directory}: holds files that are not complete shard pairs: {stray[:5]}; "
                           "re-run the tokenize stage")
    prefixes = [storage.join(directory, shard_name(p)) for p in pairs]
    out = megatron_prefix(ctx, source)
    _fs.remove_quietly(_fs.idx_path(out))  # .idx first: a half-removed pair is never "present"
    _fs.remove_quietly(_fs.bin_path(out))
    documents = sum(_documents(p) for p in prefixes)
    if documents == 0:
        return {"published": False, "reason": "no documents (an empty .bin cannot be memory-mapped)",
                "documents": 0, "tokens": 0, "bytes": 0, "shards": len(prefixes),
                "seconds": round(time.time() - started, 3)}
    result = merge_indexed_datasets(prefixes, out, progress=None)
    report = validate(out)
    if (report.documents, report.tokens) != (result.documents, result.tokens):
        raise PipelineError(f"{out}: validation counts {report} differ from the merge's {result}")
    return {"published": True, "prefix": out, "documents": report.documents, "tokens": report.tokens,
            "bytes": report.bin_bytes, "idx_bytes": _size(_fs.idx_path(out)), "dtype": report.dtype,
            "shards": len(prefixes), "seconds": round(time.time() - started, 3)}


def _documents(prefix: str) -> int:
    from pipeline.megatron.reader import read_index

    return read_index(prefix, mmap=False)[0].document_count


def _size(path: str) -> int:
    fs, inner = _fs.resolve(path)
    return int(fs.size(inner))


def merge_sources(ctx: RunContext) -> dict:
    """Merge every configured source; per-source counts and the list of sources left unpublished.

    When the tokenize stage's counts are in the run directory, each merged source must hold the
    documents and tokens tokenize reported, or this raises (accounting, SPEC §3).
    """
    expected = _tokenize_counts(ctx)
    sources = {}
    for src in ctx.config.sources:
        counts = merge_source(ctx, src.name)
        want = expected.get(src.name)
        if want is not None and (want["documents"], want["tokens"]) != (counts["documents"], counts["tokens"]):
            raise PipelineError(
                f"source {src.name!r}: merged {counts['documents']} documents / {counts['tokens']} tokens, "
                f"tokenize wrote {want['documents']} / {want['tokens']}")
        sources[src.name] = counts
    return {"sources": sources, "unpublished": [n for n, c in sources.items() if not c["published"]]}
