"""Spark train-tokenizer stage: pre-token counts on executors, BPE merges on the driver (docs/tokenizer.md, Training).

Reads ``dedup/survivors/`` (doc_id, source, text), keeps a deterministic sample (a document is in
the sample when ``xxhash64(doc_id, seed)`` falls below ``sample_fraction`` of the hash range, so the
sample depends on the documents only, never on partitioning), counts pre-tokens (split by
``tokenizer.pattern``, GPT-2's when unset) per partition with :func:`count_pretokens` and sums them by
key on Spark. Pre-tokens seen fewer than
``min_pretoken_count`` times are dropped and at most ``max_distinct_pretokens`` are kept (the most
frequent; ties keep the byte-wise smaller pre-token). Only that bounded table reaches the driver.

Special tokens: the configured ``special_tokens`` plus ``eod_token`` (added when missing) split
the text while counting and get their own ids after the last merge.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.config.schema import tokenizer_values_from_v1
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.run_files import special_tokens
from pipeline.train_tokenizer.batches import count_partition

SAMPLE_SEED = 20240917
_HASH_RANGE = 1 << 62


def sampled_survivors(ctx: RunContext, documents: str):
    """The documents (doc_id, text) of the table ``documents`` in the deterministic sample of
    ``tokenizer.sample_fraction``."""
    from pyspark.sql import functions as F

    fraction = ctx.config.tokenizer.sample_fraction
    df = ctx.read_table(documents).select("doc_id", "text")
    if fraction < 1.0:
        bucket = F.pmod(F.xxhash64(F.col("doc_id"), F.lit(SAMPLE_SEED)), F.lit(_HASH_RANGE))
        df = df.where(bucket < F.lit(int(fraction * _HASH_RANGE)))
    return df


def count_table(ctx: RunContext, documents: str) -> tuple[dict[bytes, int], dict[str, int]]:
    """The bounded pre-token table on the driver, and counts describing how it was cut."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    cfg = ctx.config.tokenizer
    specials = special_tokens(ctx.config)
    sample = sampled_survivors(ctx, documents)
    schema = StructType([StructField("pretoken", BinaryType()), StructField("count", LongType())])
    split = None if cfg.pattern in (None, "gpt2") else cfg.pattern
    per_partition = sample.select("text").mapInArrow(
        per_task(lambda it: count_partition(iter(it), specials, split)), schema
    )
    totals = per_partition.groupBy("pretoken").agg(F.sum("count").alias("count"))
    totals = totals.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        stats = totals.agg(
            F.count(F.lit(1)).alias("distinct"),
            F.sum(F.when(F.col("count") >= cfg.min_pretoken_count, 1).otherwise(0)).alias("frequent"),
            F.sum("count").alias("occurrences"),
        ).collect()[0]
        kept = (
            totals.where(F.col("count") >= cfg.min_pretoken_count)
            .orderBy(F.col("count").desc(), F.col("pretoken").asc())
            .limit(cfg.max_distinct_pretokens)
            .collect()
        )
    finally:
        totals.unpersist()
    table = {bytes(row["pretoken"]): int(row["count"]) for row in kept}
    info = {
        "documents_sampled": sample.count(),
        "pretokens_distinct": int(stats["distinct"] or 0),
        "pretokens_above_min_count": int(stats["frequent"] or 0),
        "pretokens_kept": len(table),
        "pretoken_occurrences": int(stats["occurrences"] or 0),
        "pretoken_occurrences_kept": sum(table.values()),
    }
    return table, info


def run_train_tokenizer(ctx: RunContext, documents: str) -> dict:
    """Train a BPE tokenizer on a sample of the table ``documents``; write ``<run>/tokenizer/``; return counts."""
    cfg = ctx.config.tokenizer
    started = time.time()
    table, info = count_table(ctx, documents)
    counted = time.time()
    tok = BPETokenizer.train_from_counts(
        table, cfg.vocab_size, special_tokens(ctx.config), progress=None, pattern=cfg.pattern
    )
    trained = time.time()
    out = ctx.path(layout.TOKENIZER)
    storage.remove(out)
    with tempfile.TemporaryDirectory(prefix="tokenizer-") as tmp:
        tok.save(tmp)
        for name in tok.files():  # local: atomic rename per file; remote: one upload each
            with open(os.path.join(tmp, name), "rb") as f:
                storage.write_bytes(storage.join(out, name), f.read())
    return {
        **info,
        "sample_fraction": cfg.sample_fraction,
        "vocab_size": tok.vocab_size,
        "merges": len(tok.merges),
        "special_tokens": tok.special_tokens,
        "seconds_counting": round(counted - started, 3),
        "seconds_training": round(trained - counted, 3),
    }


class TrainTokenizer(Stage):
    """A sample of the documents (dedup's survivors) -> a BPE tokenizer, ``tokenizer/``."""

    name = "train-tokenizer"
    config_keys = ("tokenizer",)
    reads = ("documents",)
    passes = {"tokenizer": layout.TOKENIZER}  # vocab.json, merges.txt, tokenizer.json
    version = 2  # 1: before tokenizer.kind, path, pattern, add_bos and bos_token (at their defaults then)
    writes = (layout.TOKENIZER,)

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_train_tokenizer(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"tokenizer": asdict(config.tokenizer)}

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        return tokenizer_values_from_v1(values)

    def applies(self, config: PipelineConfig) -> bool:
        return config.tokenizer.train


STAGE = TrainTokenizer()
