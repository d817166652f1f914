"""merge-blend stage: merge shards per source (``megatron/``), then blend the sources by weight (``blend/``).

Merge: per source, the shards that exist are merged in partition order (= doc_id order; empty
partitions wrote none) with :func:`merge_indexed_datasets`, then the result is validated. A source
with zero documents is not published: numpy cannot memory-map an empty ``.bin``, so Megatron's reader
would fail on it (docs/indexed_dataset.md, Empty datasets). Its entry says ``published: false`` so the blend leaves it
out and says so.

Rehydration (``blend.rehydrate``): each merged dataset is rewritten with every survivor as many times as
its cluster size gives (:mod:`pipeline.merge_blend.rehydrate`).

Blend: sizes are the number of documents (one sequence each) in every merged dataset. Prefixes in
``blend.json`` and the Megatron ``--data-path`` string are relative to the run directory, so two
runs of the same data in different directories write byte-identical ``blend/`` files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.blend.indices import OversampleError, build_blending_indices
from pipeline.blend.io import write_blend
from pipeline.blend.rehydrate import config_rules
from pipeline.blend.weights import blend_datasets, blend_weights_by_source, bucketed_sources
from pipeline.blend.weights import blend_weights as weights_of
from pipeline.config import PipelineConfig
from pipeline.errors import PipelineError
from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.megatron.format import bin_path, idx_path
from pipeline.megatron.merge import merge_indexed_datasets
from pipeline.megatron.reader import read_index
from pipeline.megatron.validate import validate
from pipeline.merge_blend.buckets import bucket_directory, split_source
from pipeline.merge_blend.rehydrate import rehydrate_source
from pipeline.merge_blend.report_html import report_charts, report_html
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage
from pipeline.tokenize.shards import list_shards, shard_dir, shard_name


def megatron_prefix(ctx: RunContext, source: str) -> str:
    """``<run>/megatron/<source>`` (the dataset prefix handed to Megatron)."""
    return ctx.path(layout.MEGATRON, source)


def merge_source(ctx: RunContext, source: str) -> dict:
    """Merge one source's shards, validate the result; its counts (``published`` says if it exists)."""
    started = time.time()
    directory = shard_dir(ctx.run_dir, source)
    pairs, stray = list_shards(directory)
    if stray:
        raise PipelineError(
            f"{directory}: holds files that are not complete shard pairs: {stray[:5]}; re-run the tokenize stage"
        )
    prefixes = [storage.join(directory, shard_name(p)) for p in pairs]
    out = megatron_prefix(ctx, source)
    storage.remove(idx_path(out), best_effort=True)  # .idx first: a half-removed pair is never "present"
    storage.remove(bin_path(out), best_effort=True)
    documents = sum(_documents(p) for p in prefixes)
    if documents == 0:
        return {
            "published": False,
            "reason": "no documents (an empty .bin cannot be memory-mapped)",
            "documents": 0,
            "tokens": 0,
            "bytes": 0,
            "shards": len(prefixes),
            "seconds": round(time.time() - started, 3),
        }
    result = merge_indexed_datasets(prefixes, out, progress=None)
    report = validate(out)
    if (report.documents, report.tokens) != (result.documents, result.tokens):
        raise PipelineError(f"{out}: validation counts {report} differ from the merge's {result}")
    return {
        "published": True,
        "prefix": out,
        "documents": report.documents,
        "tokens": report.tokens,
        "bytes": report.bin_bytes,
        "idx_bytes": storage.size(idx_path(out)),
        "dtype": report.dtype,
        "shards": len(prefixes),
        "seconds": round(time.time() - started, 3),
    }


def _documents(prefix: str) -> int:
    return read_index(prefix, mmap=False)[0].document_count


def merge_sources(
    ctx: RunContext,
    shards: Mapping[str, Any] | None = None,
    documents: str | None = None,
    cluster_sizes: str | None = None,
) -> dict:
    """Merge every configured source; per-source counts and the list of sources left unpublished.

    ``shards``: the counts of the stage that wrote the shards; each merged source must then hold the
    documents and tokens it reported, or this raises (docs/stages.md, Accounting). ``documents``: the table the
    shards were tokenized from, whose ``quality_bucket`` splits a source ``blend.weights`` weighs by bucket.
    ``cluster_sizes``: dedup's table of the survivors' cluster sizes, which ``blend.rehydrate`` reads.
    """
    expected = (shards or {}).get("sources", {})
    rules = config_rules(ctx.config)
    split = bucketed_sources(ctx.config)
    sources = {}
    for src in ctx.config.sources:
        counts = merge_source(ctx, src.name)
        want = expected.get(src.name)
        if want is not None and (want["documents"], want["tokens"]) != (counts["documents"], counts["tokens"]):
            raise PipelineError(
                f"source {src.name!r}: merged {counts['documents']} documents / {counts['tokens']} tokens, "
                f"tokenize wrote {want['documents']} / {want['tokens']}"
            )
        if rules is not None and counts["published"]:
            if cluster_sizes is None:
                raise PipelineError("blend.rehydrate is set: the merge needs dedup's cluster sizes")
            counts = rehydrate_source(ctx.run_dir, cluster_sizes, src.name, counts, rules)
        if src.name in split and counts["published"]:
            if documents is None:
                raise PipelineError("blend.weights weighs quality buckets: the merge needs the tokenized table")
            counts = split_source(ctx.run_dir, documents, src.name, counts, split[src.name], rules, cluster_sizes)
        else:  # bucket datasets of an earlier configuration must not linger beside the source's
            storage.remove(bucket_directory(ctx.run_dir, src.name))
        sources[src.name] = counts
    return {"sources": sources, "unpublished": [n for n, c in sources.items() if not c["published"]]}


def check_blend_weights(config: PipelineConfig) -> None:
    """``blend.weights``, when given, names every configured source once with a weight > 0, and ``blend.rehydrate``
    is valid (before Spark starts)."""
    blend_weights_by_source(config)
    config_rules(config)


def blend_weights(ctx: RunContext, names: list[str], sizes: list[int]) -> list[float]:
    """Weights for ``names`` (:func:`pipeline.blend.weights.blend_weights`)."""
    return weights_of(ctx.config, names, sizes)


def left_out_sources(config: PipelineConfig, unpublished: list[str]) -> list[dict]:
    """One entry (and a logged warning) per source left out of the blend because no document survived."""
    given = blend_weights_by_source(config) or {}
    entries = []
    for name in unpublished:
        weight = given.get(name, config.source(name).weight)
        entries.append(
            {"source": name, "weight": None if weight is None else float(weight), "why": "no documents survived"}
        )
        logging.getLogger("pipeline").warning(
            "source %r (weight %s) has no documents left: it is left out of "
            "the blend, and the other sources' weights are renormalised",
            name,
            weight,
        )
    return entries


def left_out_buckets(config: PipelineConfig, rows: Mapping[str, dict], unpublished: list[str]) -> list[dict]:
    """One entry (and a logged warning) per quality bucket left out of the blend because it holds no document
    (the buckets of a source with no document at all are covered by its own entry)."""
    given = blend_weights_by_source(config) or {}
    entries = []
    for name, row in rows.items():
        if "/" in name and not row["published"] and name.split("/")[0] not in unpublished:
            entries.append({"source": name, "weight": given[name], "why": "no documents in this bucket"})
            logging.getLogger("pipeline").warning(
                "quality bucket %r (weight %s) has no documents: it is left out of the blend, and the other "
                "datasets' weights are renormalised",
                name,
                given[name],
            )
    return entries


def materialize(
    ctx: RunContext, prefixes: list[str], dataset_index: np.ndarray, sample_index: np.ndarray, dtype
) -> dict:
    """Write the blend as one IndexedDataset, ``blend/blended``, documents in blend order."""
    readers = [IndexedDataset(p) for p in prefixes]
    out = ctx.path(layout.BLEND, "blended")
    with IndexedDatasetWriter(out, dtype=dtype) as writer:
        for k, i in zip(dataset_index.tolist(), sample_index.tolist(), strict=True):
            writer.add_document(readers[k][i])
    return {"prefix": out, "documents": int(len(dataset_index))}


def blend_rows(merged: dict, config: PipelineConfig) -> dict[str, dict]:
    """The merge's counts of every dataset the blend may hold, in blend order: a source, or each of its quality
    buckets when ``blend.weights`` weighs it by bucket."""
    rows = {}
    for name, source, bucket in blend_datasets(config):
        row = merged["sources"][source]
        rows[name] = row if bucket is None or not row["published"] else row["buckets"][name]
    return rows


def run_merge_blend(ctx: RunContext, merged: dict) -> dict:
    """Blend the sources :func:`merge_sources` merged (``merged``, its counts): write ``blend/dataset_index.npy``,
    ``dataset_sample_index.npy``, ``blend.json``."""
    rows = blend_rows(merged, ctx.config)
    names = [n for n, c in rows.items() if c["published"]]
    if not names:
        raise PipelineError("no source has any document left to blend; see the manifest's counts")
    sizes = [rows[n]["documents"] for n in names]
    weights = blend_weights(ctx, names, sizes)
    size = ctx.config.blend.size or sum(sizes)
    try:
        dataset_index, sample_index = build_blending_indices(
            weights, size, sizes=sizes, mode=ctx.config.blend.mode, oversample=ctx.config.blend.oversample, names=names
        )
    except OversampleError as exc:
        total = sum(weights)
        largest = min(int(n * total / w) for n, w in zip(sizes, weights, strict=True) if w > 0)
        raise OversampleError(
            f"{exc} In the config: blend.oversample: wrap, or blend.size of at most about {largest} (S is now {size})."
        ) from None
    relative = [f"{layout.MEGATRON}/{n}" for n in names]
    left_out = left_out_sources(ctx.config, merged["unpublished"])
    left_out += left_out_buckets(ctx.config, rows, merged["unpublished"])
    doc = write_blend(
        ctx.path(layout.BLEND),
        dataset_index,
        sample_index,
        sources=names,
        prefixes=relative,
        weights=weights,
        sizes=sizes,
        mode=ctx.config.blend.mode,
        oversample=ctx.config.blend.oversample,
        left_out=left_out,
    )
    result = {"merge": merged, "blend": doc, "left_out": left_out}
    if ctx.config.blend.materialize:
        dtype = np.dtype(merged["sources"][names[0].split("/")[0]]["dtype"])
        result["materialized"] = materialize(
            ctx, [megatron_prefix(ctx, n) for n in names], dataset_index, sample_index, dtype
        )
    return result


class MergeBlend(Stage):
    """The shards -> one Megatron dataset per source, ``megatron/``, and their blend, ``blend/`` (passed on)."""

    name = "merge-blend"
    config_keys = ("blend", "sources[].weight", "blend.rehydrate")
    version = 2  # 1: blend.rehydrate left out when off
    reads = ("shards", "documents", "cluster_sizes")
    passes = {"blend": layout.BLEND, "megatron": layout.MEGATRON}
    writes = (layout.MEGATRON, layout.BLEND)
    passes_on = "written"
    report_keys = ("blend",)
    report_before = "timeline"  # the blend's data path and rehydration, after the charts of Tokens and blend

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        tables = {name: inputs[name].table for name in ("documents", "cluster_sizes")}
        return run_merge_blend(ctx, merge_sources(ctx, inputs["shards"].counts, **tables))

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"blend": asdict(config.blend), "weights": {s.name: s.weight for s in config.sources}}

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        """Version 1 left out ``blend.rehydrate`` when off."""
        return {**values, "blend": {"rehydrate": None, **values.get("blend", {})}}

    def check_config(self, config: PipelineConfig) -> None:
        check_blend_weights(config)

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        """Per source the distinct documents written: rehydration's copies are added, not accounted documents."""
        merged = counts.get("merge", {}).get("sources", {})
        return {
            n: SourceTally(
                documents=row["documents"] - row.get("copies_added", 0) if row["published"] else 0,
                copies_added=row.get("copies_added", 0),
            )
            for n, row in merged.items()
        }

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        """report.json's ``blend``: the sources, their weights and achieved shares, and what was left out."""
        blend = counts.get("blend")
        if not blend:
            return {}
        keys = ("sources", "weights", "data_path", "mode", "size")
        section = {"achieved": blend["achieved_ratios"], **{k: blend[k] for k in keys}}
        merged = counts.get("merge", {}).get("sources", {})
        rehydrated = [n for n, row in merged.items() if row.get("published") and "copies_added" in row]
        if rehydrated:  # per source (a source blended by quality bucket too)
            section["rehydrate"] = {
                n: {"distinct_documents": merged[n]["distinct_documents"], "copies_added": merged[n]["copies_added"]}
                for n in rehydrated
            }
        left_out = [e for e in counts.get("left_out") or [] if isinstance(e, dict)]
        return {"blend": {**section, "left_out": left_out} if left_out else section}

    def report_charts(self, data: dict[str, Any]) -> list[str]:
        return report_charts(data)

    def report_html(self, data: dict[str, Any]) -> list[str]:
        return report_html(data)


STAGE = MergeBlend()
