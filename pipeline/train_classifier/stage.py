"""The train-classifier stage's Spark plan (docs/stages.md, The train-classifier stage): positives read like
sources, negatives drawn from the run's documents after the rule filters (or read from files), every example keyed
by a seeded xxhash64 so that the draw and the order do not depend on the partitioning, then one task that trains the
fastText model with one thread and writes ``classifier/``; held-out metrics computed on the driver."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig, SourceConfig
from pipeline.filter.batches import filter_partition, output_schema
from pipeline.filter.plan import make_plan
from pipeline.filter.rules.fasttext_classifier import NAME as CLASSIFIER_FILTER
from pipeline.sources.formats import FORMATS, check_formats
from pipeline.sources.spark.reader import read_sources
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage
from pipeline.train_classifier.batches import HELD_OUT_SCHEMA, SAMPLE_SCHEMA, TrainPlan, train_task
from pipeline.train_classifier.prepare import training_args
from pipeline.train_classifier.report_section import report_section
from pipeline.train_classifier.train import metrics

INSTALL = "pip install 'spark-pretrain-pipeline[classifier]'"
COLUMNS = SAMPLE_SCHEMA.names


def _read(ctx: RunContext, sources: list[SourceConfig], key: str, label: str) -> DataFrame:
    """Every record of ``sources`` as an example labelled ``label``, keyed by (seed, source, file, position)."""
    cfg = ctx.config
    seed = cfg.classifier.seed if cfg.classifier else 0
    records = read_sources(ctx.spark, sources, cfg.ingest, key, keep_fields=False).where(F.col("reason").isNull())
    hashed = F.xxhash64(F.lit(seed), F.col("source"), F.col("file"), F.col("position"))
    return records.select(hashed.alias("key"), F.lit(label).alias("label"), "source", "text")


def negatives_from_run(ctx: RunContext, documents: str, count: int, label: str, seed: int) -> DataFrame:
    """``count`` documents of the table ``documents`` that pass every source's filters before its
    ``fasttext_classifier`` entry: those with the smallest xxhash64 of (seed, doc_id) (ties by doc_id)."""
    docs = ctx.read_table(documents)
    plan = make_plan(ctx.config, before=CLASSIFIER_FILTER)
    if any(plan.steps.values()):
        schema = output_schema(to_arrow_schema(docs.schema))
        rows = docs.mapInArrow(per_task(lambda it: filter_partition(it, plan, schema)), from_arrow_schema(schema))
        docs = rows.where(F.col("kind") == "kept")
    keyed = docs.select(F.xxhash64(F.lit(seed), F.col("doc_id")).alias("key"), "doc_id", "source", "text")
    drawn = keyed.orderBy("key", "doc_id").limit(count)
    return drawn.select("key", F.lit(label).alias("label"), "source", "text")


def run_train_classifier(ctx: RunContext, documents: str) -> dict[str, Any]:
    """Draw the examples, train in one task, write ``classifier/`` (model, training files, metrics); counts."""
    cfg = ctx.config.classifier
    assert cfg is not None  # the stage applies only with the section
    positives = _read(ctx, cfg.positives, "classifier.positives", cfg.label)
    neg = cfg.negatives
    if neg.from_run is not None:
        negatives = negatives_from_run(ctx, documents, neg.from_run, cfg.negative_label, cfg.seed)
    else:
        negatives = _read(ctx, [negatives_source(ctx.config)], "classifier.negatives", cfg.negative_label)
    plan = TrainPlan(
        label=cfg.label,
        negative_label=cfg.negative_label,
        holdout=cfg.holdout,
        args=training_args(cfg.fasttext, cfg.seed),
        model=ctx.path(*layout.parts(layout.CLASSIFIER_MODEL)),
        train_file=ctx.path(*layout.parts(layout.CLASSIFIER_TRAIN)),
        holdout_file=ctx.path(*layout.parts(layout.CLASSIFIER_HOLDOUT)),
    )
    drawn = positives.select(*COLUMNS).unionByName(negatives.select(*COLUMNS))
    # the training order: a second seeded hash, independent of the one that drew the negatives (their smallest keys)
    order = F.xxhash64(F.lit("order"), F.lit(cfg.seed), F.col("label"), F.col("key"))
    examples = drawn.withColumn("key", order).repartition(1)
    rows = examples.mapInArrow(per_task(partial(train_task, plan=plan)), from_arrow_schema(HELD_OUT_SCHEMA)).collect()
    counts = next(r["counts"] for r in rows if r["counts"] is not None)
    held = [r for r in rows if r["counts"] is None]
    positive = np.array([r["positive"] for r in held], dtype=bool)
    scores = np.array([r["score"] for r in held], dtype=np.float64)
    found = json.loads(counts)
    measured = metrics(positive, scores)
    by_source = {}
    for name in sorted({r["source"] for r in held}):
        mine = np.array([r["source"] == name for r in held], dtype=bool)
        by_source[name] = metrics(positive[mine], scores[mine])
    document = {
        "label": cfg.label,
        "negative_label": cfg.negative_label,
        "fasttext": plan.args,
        "seed": cfg.seed,
        "holdout_fraction": cfg.holdout,
        "examples": {"train": found["train"], "holdout": found["holdout"]},
        "model_bytes": storage.size(plan.model),
        "holdout": measured,
        "holdout_by_source": by_source,
    }
    storage.write_json(ctx.path(*layout.parts(layout.CLASSIFIER_METRICS)), document)
    return {
        "examples": document["examples"],
        "precision": measured["precision"],
        "recall": measured["recall"],
        "roc_auc": measured["roc_auc"],
    }


def negatives_source(config: PipelineConfig) -> SourceConfig:
    """``classifier.negatives``' files as a source called ``negatives``."""
    assert config.classifier is not None
    neg = config.classifier.negatives
    return SourceConfig(name="negatives", paths=list(neg.paths), format=neg.format, text_field=neg.text_field)


def check_config(config: PipelineConfig) -> None:
    """The section's rules across its fields, and the classifier extra installed (before Spark starts)."""
    cfg = config.classifier
    if cfg is None:
        return
    neg = cfg.negatives
    if (neg.from_run is None) == (not neg.paths):
        raise ConfigError("classifier.negatives", "give from_run (documents of this run) or paths, one of them")
    if neg.from_run is not None and (neg.format != "jsonl" or neg.text_field != "text"):
        raise ConfigError("classifier.negatives.from_run", "format and text_field are for paths")
    if cfg.label == cfg.negative_label:
        raise ConfigError("classifier.negative_label", f"must differ from classifier.label ({cfg.label!r})")
    names = [s.name for s in cfg.positives]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"classifier.positives.{i}.name", f"duplicate source name {name!r}")
    check_formats(cfg.positives, "classifier.positives")
    if neg.paths and neg.format not in FORMATS:
        raise ConfigError("classifier.negatives.format", f"must be one of {', '.join(FORMATS)}; got {neg.format!r}")
    training_args(cfg.fasttext, cfg.seed)
    for module, package in (("fasttext", "fasttext-numpy2-wheel"), ("sklearn", "scikit-learn")):
        if importlib.util.find_spec(module) is None or (module == "fasttext" and not _trains()):
            raise ConfigError("classifier", f"training needs {package} ({INSTALL})")


def _trains() -> bool:
    """Whether the installed ``fasttext`` module trains (fasttext-predict installs one that only predicts)."""
    try:
        return hasattr(importlib.import_module("fasttext"), "train_supervised")
    except ImportError:
        return False


class TrainClassifier(Stage):
    """Positives and documents of the run -> a fastText classifier, ``classifier/``."""

    name = "train-classifier"
    config_keys = ("classifier", "filter", "sources[].filter")
    reads = ("documents",)
    passes = {"classifier": layout.CLASSIFIER_MODEL}  # the model, for the fasttext_classifier filter's model: run
    writes = (layout.CLASSIFIER,)

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_train_classifier(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        if config.classifier is None:
            return {}
        values: dict[str, Any] = {"classifier": dataclasses.asdict(config.classifier)}
        if config.classifier.negatives.from_run is not None:  # the rule filters choose the negatives
            values["filter"] = config.filter
            values["sources"] = {s.name: s.filter for s in config.sources if s.filter is not None}
        return values

    def applies(self, config: PipelineConfig) -> bool:
        return config.classifier is not None

    def check_config(self, config: PipelineConfig) -> None:
        check_config(config)

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        return report_section(run)


STAGE = TrainClassifier()
