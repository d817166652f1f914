"""training-indices stage: megatron-core's GPTDataset and BlendedDataset index caches, ``<run>/megatron_cache/``.

Off unless the config has a ``training`` section. The sources and their weights are the blend's
(``blend/blend.json``: the published sources, in blend order); the dataset prefixes are
``<training.data_path>/megatron/<source>``, spelled as the training job's ``--data-path`` spells them, since
they are part of every cache key (docs/training_indices.md). Each (source, split) GPTDataset is built by its
own Spark task from the merged ``.idx`` alone; the blends (one per split, a few bytes per sample) are built
on the driver once the tasks report each GPTDataset's length.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from functools import partial
from typing import Any

from pipeline import storage
from pipeline.blend.io import BLEND_JSON_FILE
from pipeline.config import ConfigError, PipelineConfig
from pipeline.errors import PipelineError
from pipeline.megatron.format import HEADER_SIZE, idx_path, parse_header
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage
from pipeline.training_indices import describe
from pipeline.training_indices.plan import GptTask, Plan, dataset_prefix, make_plan
from pipeline.training_indices.tasks import build_blend, build_gpt


def training_data_path(config: PipelineConfig) -> str:
    """The run directory as the training job sees it: ``training.data_path``, else the run's output."""
    assert config.training is not None
    return config.training.data_path or config.output


def plan_for(ctx: RunContext, blend: str, megatron: str) -> Plan:
    """The plan over the sources the blend holds (``<blend>/blend.json``), with its weights, of their datasets in
    ``megatron`` (both merge-blend's)."""
    cfg = ctx.config.training
    assert cfg is not None
    blend_json = ctx.path(*layout.parts(blend), BLEND_JSON_FILE)
    if not storage.exists(blend_json):
        raise PipelineError(f"{blend_json} not found: the training indices need the blended run's outputs")
    doc = storage.read_json(blend_json)
    sources = list(doc["sources"])
    relative = [f"{megatron}/{name}" for name in sources]
    local = [ctx.path(*layout.parts(megatron), name) for name in sources]
    for prefix in local:
        if not storage.exists(idx_path(prefix)):
            raise PipelineError(f"{idx_path(prefix)} not found: re-run the stage that merges the sources")
    return make_plan(cfg, training_data_path(ctx.config), sources, relative, local, list(doc["weights"]))


def check_splits(plan: Plan) -> None:
    """Refuse, on the driver and before the Spark job, a split asked for samples that holds no document: the check
    its task would make (:func:`~pipeline.training_indices.gpt_indices.num_epochs`) read from each ``.idx`` header
    alone (a split of documents holding no token is still found by its task)."""
    sequences: dict[str, int] = {}
    for task in plan.gpt:
        if task.prefix not in sequences:
            fs, inner = storage.resolve(idx_path(task.prefix))
            with fs.open(inner, "rb") as f:
                sequences[task.prefix] = parse_header(f.read(HEADER_SIZE), idx_path(task.prefix)).sequence_count
        count = sequences[task.prefix]
        beg, end = describe.document_range(task.bookends, count)
        wanted = task.num_samples * task.sequence_length + int(task.extra)
        if beg >= end and wanted > 0:
            split = describe.SPLITS[task.split]
            raise PipelineError(
                f"source {task.source!r}, {split} split (documents ({beg}, {end}) of {count}): the split has no "
                f"tokens but {task.num_samples} samples are asked of it; give the split a larger share in "
                f"training.split (0 builds no {split} split) or run on more documents"
            )


def _gpt_tasks(cache: str, tasks: Iterable[GptTask]) -> Iterator[dict[str, Any]]:
    for task in tasks:
        yield build_gpt(task, cache)


def run_training_indices(ctx: RunContext, blend: str, megatron: str) -> dict[str, Any]:
    """Write every GPTDataset (a Spark task each) and BlendedDataset of the plan of the blend ``blend`` (of the
    datasets in ``megatron``) into ``megatron_cache/``."""
    started = time.time()
    cfg = ctx.config.training
    assert cfg is not None
    plan = plan_for(ctx, blend, megatron)
    check_splits(plan)
    cache = ctx.path(layout.MEGATRON_CACHE)
    storage.remove(cache)  # files of an earlier configuration have other names: none may linger
    storage.makedirs(cache)
    sc = ctx.spark.sparkContext
    rows = sc.parallelize(plan.gpt, max(1, len(plan.gpt))).mapPartitions(per_task(partial(_gpt_tasks, cache))).collect()
    length = {(r["source"], r["split"]): r["samples"] for r in rows}
    blends = [build_blend(b, [length[(g.source, describe.SPLITS[g.split])] for g in b.gpt], cache) for b in plan.blends]
    data_path = training_data_path(ctx.config)
    return {
        "data_path": plan.data_path,
        "data_cache_path": dataset_prefix(data_path, layout.MEGATRON_CACHE),
        "split": cfg.split,
        "seq_length": cfg.sequence_length,
        "seed": cfg.random_seed,
        "datasets": rows,
        "blends": blends,
        "files": 4 * len(rows) + 3 * len(blends),
        "seconds": round(time.time() - started, 3),
    }


def check_training(config: PipelineConfig) -> None:
    """``training.split`` parses as Megatron's; the data path can be spelled on a ``--data-path``."""
    cfg = config.training
    if cfg is None:
        return
    try:
        describe.split_vector(cfg.split)
    except ValueError as exc:
        raise ConfigError("training.split", str(exc)) from None
    path = training_data_path(config)
    if any(c.isspace() for c in path):
        key = "training.data_path" if cfg.data_path else "output"
        raise ConfigError(key, f"{path!r} has whitespace, which Megatron's --data-path cannot carry")


class TrainingIndices(Stage):
    """The blend -> megatron-core's GPTDataset and BlendedDataset index caches, ``megatron_cache/``."""

    name = "training-indices"
    config_keys = ("training", "blend.weights", "sources[].weight")
    reads = ("blend", "megatron")
    writes = (layout.MEGATRON_CACHE,)

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_training_indices(ctx, inputs["blend"].table, inputs["megatron"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {
            "training": asdict(config.training) if config.training else None,
            "blend.weights": config.blend.weights,
            "weights": {s.name: s.weight for s in config.sources},
        }

    def applies(self, config: PipelineConfig) -> bool:
        return config.training is not None

    def check_config(self, config: PipelineConfig) -> None:
        check_training(config)


STAGE = TrainingIndices()
