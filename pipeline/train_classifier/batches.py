"""The train-classifier stage's one training task (docs/stages.md, The train-classifier stage): every sampled
example arrives as Arrow batches; they are put in their seeded order, cut into training and held-out examples,
written as fastText training files, the model trained with one thread, and both files and the model copied to
the run directory. Out: one row per held-out example with its score. No Spark here."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.train_classifier.prepare import holdout_split, training_line
from pipeline.train_classifier.train import train

SAMPLE_SCHEMA = pa.schema([("key", pa.int64()), ("label", pa.string()), ("source", pa.string()), ("text", pa.string())])
HELD_OUT_SCHEMA = pa.schema(
    [("source", pa.string()), ("positive", pa.bool_()), ("score", pa.float64()), ("counts", pa.string())]
)


@dataclass(frozen=True)
class TrainPlan:
    """What the training task needs: labels, the held-out fraction, fastText's arguments, where files go."""

    label: str  # the positives' label
    negative_label: str
    holdout: float
    args: dict[str, Any]  # train_supervised's keyword arguments less input
    model: str  # the run's classifier/model.bin
    train_file: str  # the run's classifier/train.txt
    holdout_file: str  # the run's classifier/holdout.txt


def ordered(batches: Iterable[pa.RecordBatch]) -> list[tuple[int, str, str, str]]:
    """Every (key, label, source, text) example, in its seeded order (ties by label, then source, then text)."""
    rows: list[tuple[int, str, str, str]] = []
    for batch in batches:
        columns = [batch.column(name).to_pylist() for name in SAMPLE_SCHEMA.names]
        rows.extend((k, lab, src, txt or "") for k, lab, src, txt in zip(*columns, strict=True))
    rows.sort()
    return rows


def train_task(batches: Iterable[pa.RecordBatch], plan: TrainPlan) -> Iterator[pa.RecordBatch]:
    """mapInArrow body of the one training task: train, copy the files, yield the held-out scores."""
    rows = ordered(batches)
    labels = {row[1] for row in rows}
    for label, what in ((plan.label, "positives"), (plan.negative_label, "negatives")):
        if label not in labels:
            raise PipelineError(f"classifier.{what}: no example was drawn (nothing to train a classifier on)")
    cut = holdout_split(len(rows), plan.holdout)
    kept, held = rows[:cut], rows[cut:]
    with tempfile.TemporaryDirectory(prefix="pipeline-classifier-") as tmp:
        train_file = os.path.join(tmp, "train.txt")
        holdout_file = os.path.join(tmp, "holdout.txt")
        model_file = os.path.join(tmp, "model.bin")
        for path, part in ((train_file, kept), (holdout_file, held)):
            with open(path, "w", encoding="utf-8", newline="") as f:
                for _, label, _, text in part:
                    f.write(training_line(label, text))
        scores = train(train_file, model_file, plan.args, plan.label, [r[3] for r in held])
        for local, final in (
            (train_file, plan.train_file),
            (holdout_file, plan.holdout_file),
            (model_file, plan.model),
        ):
            with open(local, "rb") as src, storage.open_atomic(final) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    counts = {
        "train": {
            "positives": sum(1 for r in kept if r[1] == plan.label),
            "negatives": sum(1 for r in kept if r[1] != plan.label),
        },
        "holdout": {
            "positives": sum(1 for r in held if r[1] == plan.label),
            "negatives": sum(1 for r in held if r[1] != plan.label),
        },
    }
    yield pa.RecordBatch.from_arrays(
        [
            pa.array([r[2] for r in held], pa.string()),
            pa.array([r[1] == plan.label for r in held], pa.bool_()),
            pa.array(scores, pa.float64()),
            pa.nulls(len(held), pa.string()),
        ],
        schema=HELD_OUT_SCHEMA,
    )
    counts_row = [pa.nulls(1, pa.string()), pa.nulls(1, pa.bool_()), pa.nulls(1, pa.float64())]
    yield pa.RecordBatch.from_arrays([*counts_row, pa.array([json.dumps(counts)])], schema=HELD_OUT_SCHEMA)
