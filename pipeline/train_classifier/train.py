"""Training the classifier with the ``fasttext`` library itself and measuring it with scikit-learn's metrics
(docs/stages.md, The train-classifier stage), no Spark. Both packages are the ``classifier`` extra."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.errors import PipelineError
from pipeline.train_classifier.prepare import LABEL_PREFIX, prepared

DECILES = tuple(round(0.1 * i, 1) for i in range(1, 10))


# The child's program: train on argv[1], save to argv[2] with the JSON keyword arguments of argv[3], then write
# the probability of the label argv[4] for each line of the file argv[5] (prepared text) to argv[6], one per line.
CHILD = """
import json, sys
import fasttext
model = fasttext.train_supervised(input=sys.argv[1], **json.loads(sys.argv[3]))
model.save_model(sys.argv[2])
with open(sys.argv[5], encoding="utf-8") as lines, open(sys.argv[6], "w") as out:
    for line in lines:
        labels, probs = model.predict(line.rstrip("\\n"), k=-1)
        out.write(repr(float(dict(zip(labels, probs)).get(sys.argv[4], 0.0))) + "\\n")
"""


def train(train_file: str, model_file: str, args: dict[str, Any], label: str, texts: Sequence[str]) -> np.ndarray:
    """``fasttext.train_supervised(input=train_file, **args)`` saved to ``model_file``, in a child process (a fresh
    interpreter: no state a worker's earlier tasks left, such as the CPU's floating-point modes, reaches the
    training); returns fastText's probability of ``label`` for each of ``texts``, prepared as for training."""
    with tempfile.TemporaryDirectory(prefix="pipeline-classifier-child-") as tmp:
        lines, scores = os.path.join(tmp, "texts.txt"), os.path.join(tmp, "scores.txt")
        with open(lines, "w", encoding="utf-8", newline="") as f:
            f.writelines(prepared(t) + "\n" for t in texts)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the worker's py-files too
        argv = [train_file, model_file, json.dumps(args), LABEL_PREFIX + label, lines, scores]
        done = subprocess.run([sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            tail = " ".join(done.stderr.strip().splitlines()[-3:])
            raise PipelineError(f"classifier: fastText's training failed (exit {done.returncode}): {tail}")
        with open(scores, encoding="utf-8") as f:
            return np.array([float(x) for x in f.read().split()], np.float64)


def metrics(positive: np.ndarray, scores: np.ndarray, threshold: float = 0.5) -> dict[str, Any]:
    """Held-out precision and recall of ``score >= threshold`` and ROC AUC (scikit-learn), and the score at each
    decile of all held-out examples and of each class (None where there is nothing to measure)."""
    sklearn_metrics = importlib.import_module("sklearn.metrics")
    y = np.asarray(positive, dtype=bool)
    s = np.asarray(scores, np.float64)
    predicted = s >= threshold
    both = bool(y.any() and (~y).any())
    found: dict[str, Any] = {
        "examples": int(len(y)),
        "positives": int(y.sum()),
        "negatives": int((~y).sum()),
        "threshold": threshold,
        "precision": float(sklearn_metrics.precision_score(y, predicted, zero_division=0)) if len(y) else None,
        "recall": float(sklearn_metrics.recall_score(y, predicted, zero_division=0)) if len(y) else None,
        "roc_auc": float(sklearn_metrics.roc_auc_score(y, s)) if both else None,
    }
    found["deciles"] = _deciles(s)
    found["deciles_positives"] = _deciles(s[y])
    found["deciles_negatives"] = _deciles(s[~y])
    return found


def _deciles(values: np.ndarray) -> dict[str, float] | None:
    """The score at each decile (numpy's linear quantile), keyed ``"0.1"`` to ``"0.9"``."""
    if not len(values):
        return None
    return {str(q): float(v) for q, v in zip(DECILES, np.quantile(values, DECILES), strict=True)}
