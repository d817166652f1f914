"""A fastText quality classifier (docs/stages.md, The fastText classifier): datatrove 0.10.1's
``FastTextClassifierFilter`` with its arguments (``model_url`` is ``model``).

The text is cut into units by ``filter_mode``: the whole document, its paragraphs (datatrove's
``split_into_paragraphs``: a blank line joins the paragraph before it) or its sentences (datatrove's English
``split_into_sentences``, :mod:`pipeline.text.english.sentences`). Each unit, stripped and with every newline
replaced by ``newline_replacement``, is given to fastText's ``predict(k=-1)``; a unit stays when one of
``keep_labels`` scores at least its threshold (with ``remove_labels``: when none of them does; with neither:
always). The document's text becomes its kept units joined, and it is dropped when that is empty or whitespace
only. Every label's score is averaged over the units fastText returned it for (datatrove's metadata): those means
are the filter's measures ``fasttext_classifier.<label>`` (NaN where no unit returned the label).

Prediction: :class:`pipeline.fasttext.predict.FastTextPredictor` for the models it runs (every loss, word
n-grams too), every other model (an output quantized with norms) through the ``fasttext`` library's own predict
(the run log says so once per process and model); the model is loaded once per process. A model on an object
store is copied to a local file once per process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import logging
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.errors import PipelineError, UsageError
from pipeline.fasttext import model as fasttext_model
from pipeline.fasttext.predict import FastTextPredictor, drop_newlines
from pipeline.filter import entries
from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions, OptionError, made
from pipeline.filter.registry import register
from pipeline.filter.rules.language import _utf8
from pipeline.stage_api.filter import FilterResult
from pipeline.text.english.sentences import split_sentences

NAME = "fasttext_classifier"
LOW_SCORE = "fasttext_classifier.low_score"  # keep_labels: no listed label reached its threshold
REMOVED = "fasttext_classifier.removed_label"  # remove_labels: a listed label reached its threshold
EMPTY = "fasttext_classifier.empty"  # every unit was removed (or the text was blank to begin with)
LABEL_PREFIX = "__label__"
MODES = ("document", "paragraph", "sentence")
RUN_MODEL = "run"  # the model this run trains (the classifier section)
CLASSIFIER_INPUT = "classifier"  # the name train-classifier passes that model on as (Stage.passes)
MISSING = -9e9  # datatrove's score of a label fastText did not return
BY = ("documents", "tokens")  # what keep_top's fraction counts
MAX_BUCKETS = 1000
KEEP_TOP = "fasttext_classifier.keep_top"  # below the run's keep_top cut
BUCKET_COLUMN = "quality_bucket"
FASTTEXT_SPACES = " \t\n\v\f\r"  # the whitespace both fastText and str.strip() know
SPACE_BYTES = np.frombuffer(FASTTEXT_SPACES.encode(), dtype=np.uint8)
ENDS = 64  # bytes at each end of a text whose whitespace is read before the whole text is

log = logging.getLogger(__name__)
_LIBRARY: dict[str, Any] = {}  # local model path -> the fastText library's model, once per process
_OURS: dict[str, FastTextPredictor | None] = {}  # local model path -> our predictor (None: a model it cannot run)
_LOCAL: dict[str, str] = {}  # model path as configured -> a local file holding it


def local_model(path: str) -> str:
    """A local file holding the model at ``path`` (an object-store model is copied once per process)."""
    if storage.is_local(path):
        return storage.local_path(path)
    found = _LOCAL.get(path)
    if found is None:
        folder = Path(tempfile.gettempdir()) / "pipeline-fasttext-models"
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(path.encode()).hexdigest()[:16] + "-" + path.rstrip("/").rpartition("/")[2]
        found = str(folder / name)
        staged = f"{found}.{os.getpid()}.tmp"
        Path(staged).write_bytes(storage.read_bytes(path))
        os.replace(staged, found)
        _LOCAL[path] = found
    return found


def predictor(path: str) -> FastTextPredictor | None:
    """Our predictor of the local model ``path``, None when it is a kind ours does not run (logged once)."""
    if path not in _OURS:
        loaded = fasttext_model.load(path)
        try:
            _OURS[path] = FastTextPredictor(loaded)
        except ValueError as exc:
            _OURS[path] = None
            log.info("fasttext_classifier: %s predicts through the fastText library (%s)", path, exc)
    return _OURS[path]


def library_model(path: str) -> Any:
    """The ``fasttext`` library's model of the local file ``path``, once per process."""
    found = _LIBRARY.get(path)
    if found is None:
        fasttext = importlib.import_module("fasttext.FastText")
        found = _LIBRARY[path] = fasttext._FastText(model_path=path)
    return found


def split_paragraphs(text: str) -> list[str]:
    """datatrove 0.10.1's ``split_into_paragraphs``: the lines (``str.splitlines``) with a newline after every one
    but the last, a line that is blank joining the unit before it; the units join back into the text less its
    line-break characters other than ``\\n`` (and a final line break)."""
    lines = text.splitlines()
    units: list[str] = []
    current: list[str] = []
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if line.strip() and current:
            units.append("".join(current))
            current = []
        current.append(line)
        if i != last:
            current.append("\n")
    if current:
        units.append("".join(current))
    return units


def split_units(text: str, mode: str) -> list[str]:
    """The units of ``text`` that ``filter_mode`` ``mode`` scores, as datatrove's ``split_into_parts`` cuts them."""
    if mode == "document":
        return [text]
    if mode == "paragraph":
        return split_paragraphs(text)
    return split_sentences(text)


Pair = tuple[str, float]


@dataclass(frozen=True)
class FastTextClassifierOptions(FilterOptions):
    """The options of :class:`FastTextClassifierFilter`: datatrove 0.10.1's ``FastTextClassifierFilter``
    arguments (``model_url`` is ``model``; the label scores are always kept, as its ``save_labels_in_metadata``)."""

    model: str = field(default="", metadata={"file": True})
    """The fastText supervised model (``.bin`` or ``.ftz``): a local path or an object-store URL; fingerprinted by
    content."""
    keep_labels: list[Pair] | Pair | None = None
    """``[label, min_score]`` pairs (label without ``__label__``): a unit stays when one scores at least its score."""
    remove_labels: list[Pair] | Pair | None = None
    """``[label, min_score]`` pairs: a unit stays when none scores at least its score (not with ``keep_labels``)."""
    newline_replacement: str = ""
    """What every newline of a unit becomes before fastText reads it (no newline in it)."""
    filter_mode: str = "document"
    """``document``, ``paragraph`` or ``sentence`` (datatrove's upper-case names too): what is scored and kept."""
    score_label: str | None = None
    """The label whose score ``keep_top`` and ``buckets`` rank documents by (needed with either)."""
    keep_top: float | None = None
    """Instead of thresholds: keep the documents whose ``score_label`` score is in this top fraction of the whole
    run (an exact corpus-wide cut, ties broken by doc_id)."""
    keep_top_by: str = "documents"
    """What ``keep_top``'s fraction counts: ``documents``, or ``tokens`` (fastText's words of the text)."""
    buckets: int | None = None
    """Write ``quality_bucket``: 0 (lowest scores) to ``buckets - 1`` (highest), each holding an equal share of
    the kept documents' tokens (Nemotron-CC's equal-token buckets)."""

    def check(self) -> None:
        keep, remove = _pairs(self.keep_labels), _pairs(self.remove_labels)
        object.__setattr__(self, "keep_labels", keep)
        object.__setattr__(self, "remove_labels", remove)
        mode = self.filter_mode.lower()
        if mode not in MODES:
            raise OptionError("filter_mode", f"expected one of {', '.join(MODES)}, got {self.filter_mode!r}")
        object.__setattr__(self, "filter_mode", mode)
        if "\n" in self.newline_replacement:
            raise OptionError("newline_replacement", "must not contain a newline (fastText reads one line)")
        if keep and remove:
            raise OptionError("remove_labels", "give keep_labels or remove_labels, not both")
        for option, pairs in (("keep_labels", keep), ("remove_labels", remove)):
            for i, (_, score) in enumerate(pairs or ()):
                if not 0 <= score <= 1:
                    raise OptionError(f"{option}.{i}", f"a threshold must be a fraction in [0, 1], got {score!r}")
        if self.keep_top is not None and not 0 < self.keep_top <= 1:
            raise OptionError("keep_top", f"must be a fraction in (0, 1], got {self.keep_top!r}")
        if self.keep_top_by not in BY:
            raise OptionError("keep_top_by", f"expected one of {', '.join(BY)}, got {self.keep_top_by!r}")
        if self.buckets is not None and not 2 <= self.buckets <= MAX_BUCKETS:
            raise OptionError("buckets", f"must be an integer in [2, {MAX_BUCKETS}], got {self.buckets!r}")
        if self.ranks:
            what = "keep_top" if self.keep_top is not None else "buckets"
            for option in ("keep_labels", "remove_labels"):
                if getattr(self, option) is not None:
                    raise OptionError(option, f"{what} ranks by score_label instead of thresholds: leave {option} out")
            if not self.score_label:
                raise OptionError("score_label", f"{what} needs the label whose score ranks the documents")
            if mode != "document":
                raise OptionError("filter_mode", f"{what} ranks whole documents: filter_mode must be document")
        elif self.keep_top_by != "documents":
            raise OptionError("keep_top_by", "is for keep_top")
        if self.model == RUN_MODEL:
            return  # the labels are the classifier section's, checked against the config (check_run_model)
        labels = model_labels(self.model)
        for option, pairs in (("keep_labels", keep), ("remove_labels", remove)):
            for i, (label, _) in enumerate(pairs or ()):
                if label not in labels:
                    raise OptionError(f"{option}.{i}", f"label {label!r} is not one of the model's labels {labels}")
        if self.score_label is not None and self.score_label not in labels:
            raise OptionError("score_label", f"label {self.score_label!r} is not one of the model's labels {labels}")

    @property
    def ranks(self) -> bool:
        """Whether the run ranks documents by score (``keep_top`` or ``buckets``)."""
        return self.keep_top is not None or self.buckets is not None

    def files(self) -> dict[str, str]:
        """The model file (none for ``run``: the train-classifier stage before the filter stage makes it)."""
        return {} if self.model == RUN_MODEL else {"model": self.model}

    def in_run(self, inputs: Mapping[str, str]) -> FastTextClassifierOptions:
        """``model: run`` as the path of the model the run trained (the filter stage's ``classifier`` input)."""
        if self.model != RUN_MODEL:
            return self
        if CLASSIFIER_INPUT not in inputs:
            raise PipelineError("model: run needs the model the train-classifier stage trains before the filter stage")
        return dataclasses.replace(self, model=inputs[CLASSIFIER_INPUT])


def _pairs(value: Any) -> list[Pair] | None:
    """One ``(label, score)`` pair or a list of them as a list (datatrove takes either); None when unset."""
    if value is None:
        return None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return [value]
    return [(str(label), float(score)) for label, score in value]


def model_labels(path: str) -> list[str]:
    """The labels (without ``__label__``) of the fastText model at ``path``; :class:`OptionError` (``model``) when
    it is missing, not readable or not a supervised fastText model."""
    if not path:
        raise OptionError("model", "needs the path of a fastText model")
    try:
        if not storage.exists(path):
            raise OptionError("model", f"{path} is not a file")
        labels = fasttext_model.load(local_model(path)).labels
    except UsageError as exc:
        raise OptionError("model", f"not a fastText model ({exc})") from None
    except OSError as exc:
        raise OptionError("model", f"cannot read {path} ({exc})") from None
    return [label.removeprefix(LABEL_PREFIX) for label in labels]


def check_config(config: PipelineConfig) -> None:
    """Every ``fasttext_classifier`` entry with ``model: run`` has a ``classifier`` section to train the model, and
    names only its labels; every entry that ranks the run (``keep_top``, ``buckets``) ranks it the same way. A
    ConfigError names the entry's key."""
    own = [(f"sources.{i}.filter", s.filter or []) for i, s in enumerate(config.sources)]
    ranked: dict[tuple[Any, ...], str] = {}
    for key, listed in [("filter", config.filter or []), *own]:
        for i, entry in enumerate(listed):
            if not isinstance(entry, dict) or entry.get("name") != NAME:
                continue
            options = entries.checked(entry, f"{key}.{i}")[1]
            assert isinstance(options, FastTextClassifierOptions)
            if options.ranks:
                ranked.setdefault((options.score_label, options.keep_top, options.keep_top_by, options.buckets), key)
                if len(ranked) > 1:
                    first = next(iter(ranked.values()))
                    raise ConfigError(
                        f"{key}.{i}",
                        f"ranks the run otherwise than {first}'s {NAME}: one ranking per run, list it alike",
                    )
            if entry.get("model") != RUN_MODEL:
                continue
            if config.classifier is None:
                raise ConfigError(f"{key}.{i}.model", "'run' (the model this run trains) needs a classifier section")
            labels = [config.classifier.label, config.classifier.negative_label]
            for option in ("keep_labels", "remove_labels"):
                for j, (label, _) in enumerate(_pairs(getattr(options, option)) or ()):
                    if label not in labels:
                        raise ConfigError(
                            f"{key}.{i}.{option}.{j}", f"label {label!r} is not one of the classifier's labels {labels}"
                        )
            if options.score_label is not None and options.score_label not in labels:
                raise ConfigError(
                    f"{key}.{i}.score_label",
                    f"label {options.score_label!r} is not one of the classifier's labels {labels}",
                )


@register(NAME)
class FastTextClassifierFilter(BaseFilter):
    """Scores every unit of a document with a fastText classifier and keeps those its labels' thresholds pass."""

    name = NAME
    Options = FastTextClassifierOptions
    READS = (CLASSIFIER_INPUT,)  # train-classifier's model, for ``model: run``

    @classmethod
    def check_config(cls, config: PipelineConfig) -> None:
        """The run's rules of ``model: run`` and of the one ranking per run (:func:`check_config`)."""
        check_config(config)

    def __init__(self, options: FastTextClassifierOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(FastTextClassifierOptions, options, kwargs, NAME)
        self.keep: list[Pair] = _pairs(o.keep_labels) or []
        self.remove: list[Pair] = _pairs(o.remove_labels) or []
        self.mode = o.filter_mode
        self.replacement = o.newline_replacement
        self.path = o.model
        self._labels: list[str] | None = None

    def labels(self) -> list[str]:
        """The model's labels (without ``__label__``), read once."""
        if self._labels is None:
            self._labels = model_labels(self.path)
        return self._labels

    def columns(self) -> list[str]:
        """The columns it sets on every document it scores: each label's mean score (null: not returned)."""
        return [score_column(label) for label in self.labels()]

    def ranking(self) -> dict[str, Any] | None:
        """What the filter stage ranks the whole run by after the batches (None: no ``keep_top`` or ``buckets``)."""
        o = self.options
        if not o.ranks or o.score_label is None:
            return None
        return {
            "label": o.score_label,
            "column": score_column(o.score_label),
            "keep_top": o.keep_top,
            "by": o.keep_top_by,
            "buckets": o.buckets,
            "bucket_column": BUCKET_COLUMN,
            "reason": KEEP_TOP,
        }

    def thresholds(self) -> dict[str, tuple[float, str]]:
        """The rules' thresholds: a keep label's is a minimum, a remove label's a maximum (of a unit's score)."""
        found = {f"{NAME}.{label}": (score, "min") for label, score in self.keep}
        found.update({f"{NAME}.{label}": (score, "max") for label, score in self.remove})
        return found

    def _passes(self, scores: dict[str, float]) -> bool:
        """datatrove's ``check_label_scores`` on one unit's ``{label: score}``."""
        if self.keep:
            return any(scores.get(label, MISSING) >= score for label, score in self.keep)
        return not self.remove or not any(scores.get(label, MISSING) >= score for label, score in self.remove)

    def predict(self, lines: list[str]) -> list[dict[str, float]]:
        """fastText's ``predict(line, k=-1)`` of each line (no newline in it) as ``{label: probability}``."""
        path = local_model(self.path)
        ours = predictor(path)
        if ours is None:
            model = library_model(path)
            out = []
            for line in lines:
                labels, probs = model.predict(line, k=-1)
                out.append({label.removeprefix(LABEL_PREFIX): float(p) for label, p in zip(labels, probs, strict=True)})
            return out
        probs, reached = ours.probabilities([line + "\n" for line in lines])
        return [
            {ours.labels[j]: float(probs[i, j]) for j in np.flatnonzero(reached[i]).tolist()} for i in range(len(lines))
        ]

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep, per document, the units the labels' thresholds pass; drop a document left blank."""
        if self.mode == "document" and self.replacement in ("", " ") and batch.num_rows:
            ours = predictor(local_model(self.path))
            if ours is not None:
                return self._apply_documents(ours, batch.column("text"))
        return self._apply_units(batch)

    def _apply_documents(self, ours: FastTextPredictor, column: pa.Array) -> FilterResult:
        """:meth:`apply` in document mode with a newline replacement of ``" "`` or ``""``, for a model our predictor
        runs: every document predicted from the column's UTF-8 bytes in one call.

        ``text.strip()`` is left out where it removes only fastText's own whitespace at the ends (it then changes
        no word fastText reads); a document that ends in other whitespace (``\xa0``, ``\x1c``...) is predicted
        from its stripped text alone. ``""`` deletes the newlines' bytes first (joining the words either side)."""
        data, offsets = _utf8(column)
        n = len(offsets) - 1
        data = data[offsets[0] : offsets[-1]]
        offsets = offsets - offsets[0]
        blank, odd = _ends(data, offsets)
        if self.replacement == "":  # delete every newline, its bytes gone from the words' bytes
            data, offsets = drop_newlines(data, offsets)
        probs, reached = ours.scores(*ours.hidden_utf8(data, offsets, newline_is_space=True))
        scores = np.where(reached, probs.astype(np.float64), np.nan)
        for i in np.flatnonzero(odd).tolist():
            text = column[i].as_py() or ""
            blank[i] = not text.strip()
            if text.strip() != text.strip(FASTTEXT_SPACES):
                got = self.predict([text.strip().replace("\n", self.replacement)])[0]
                scores[i] = [got.get(label, np.nan) for label in ours.labels]
        index = {label: j for j, label in enumerate(ours.labels)}
        found = np.where(np.isnan(scores), MISSING, scores)
        if self.keep:
            passes = np.logical_or.reduce([found[:, index[label]] >= score for label, score in self.keep])
        elif self.remove:
            passes = ~np.logical_or.reduce([found[:, index[label]] >= score for label, score in self.remove])
        else:
            passes = np.ones(n, dtype=bool)
        keep = passes & ~blank
        reason: list[str | None] = [None] * n
        detail: list[str | None] = [None] * n
        for i in np.flatnonzero(~keep).tolist():
            if blank[i]:
                reason[i], detail[i] = EMPTY, "no text left to keep"
            else:
                means = {label: float(scores[i, j]) for label, j in index.items() if not np.isnan(scores[i, j])}
                reason[i], detail[i] = self._why_scored(means)
        measures = {label: scores[:, j].copy() for label, j in index.items() if not np.isnan(scores[:, j]).all()}
        columns = {score_column(label): pa.array(scores[:, index[label]], pa.float64(), from_pandas=True)
                   for label in self.labels()}  # fmt: skip
        return FilterResult(keep, reason, detail, None, 0, {}, measures, columns)

    def _apply_units(self, batch: pa.RecordBatch) -> FilterResult:
        """:meth:`apply` unit by unit, as datatrove's filter does."""
        texts = [t or "" for t in batch.column("text").to_pylist()]
        units = [split_units(text, self.mode) for text in texts]
        flat = [u.strip().replace("\n", self.replacement) for per in units for u in per]
        scored = self.predict(flat)
        n = len(texts)
        keep = np.ones(n, dtype=bool)
        reason: list[str | None] = [None] * n
        detail: list[str | None] = [None] * n
        new_texts: list[str] = []
        per_label: dict[str, list[float]] = {}
        at = 0
        for i, per in enumerate(units):
            collected: dict[str, list[float]] = defaultdict(list)
            kept = []
            for unit in per:
                scores = scored[at]
                at += 1
                for label, p in scores.items():
                    collected[label].append(p)
                if self._passes(scores):
                    kept.append(unit)
            means = {label: float(np.mean(values)) for label, values in collected.items()}
            for label, mean in means.items():
                per_label.setdefault(label, [math_nan()] * n)[i] = mean
            text = "".join(kept)
            new_texts.append(text)
            if not text.strip():
                keep[i] = False
                reason[i], detail[i] = self._why(per, kept, means)
        measures = {label: np.asarray(values, np.float64) for label, values in per_label.items()}
        changed = sum(1 for old, new in zip(texts, new_texts, strict=True) if old != new)
        text_column = pa.array(new_texts, pa.string()) if self.mode != "document" else None
        nothing = np.full(n, np.nan)
        columns = {
            score_column(label): pa.array(per_label.get(label, nothing), pa.float64(), from_pandas=True)
            for label in self.labels()
        }
        changed = changed if text_column is not None else 0
        return FilterResult(keep, reason, detail, text_column, changed, {}, measures, columns)

    def _why(self, units: list[str], kept: list[str], means: dict[str, float]) -> tuple[str, str]:
        """The reason and detail of a dropped document."""
        if kept or not units or not any(u.strip() for u in units):
            return EMPTY, "no text left to keep"
        if self.mode != "document":
            return EMPTY, f"all {len(units)} {self.mode}s removed by the classifier"
        return self._why_scored(means)

    def _why_scored(self, means: dict[str, float]) -> tuple[str, str]:
        """The reason and detail of a document the labels' thresholds dropped whole."""
        if self.keep:
            shown = ", ".join(f"{label} {means.get(label, 0.0):.6f} < {score}" for label, score in self.keep)
            return LOW_SCORE, shown
        shown = ", ".join(
            f"{label} {means[label]:.6f} >= {score}"
            for label, score in self.remove
            if means.get(label, MISSING) >= score
        )
        return REMOVED, shown


def _ends(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether each text ``data[offsets[i]:offsets[i + 1]]`` is blank as ``str.strip`` sees it, whether its first
    or last character past the whitespace of :data:`FASTTEXT_SPACES` may be other whitespace: non-ASCII or
    ``\\x1c``-``\\x1f``)."""
    starts, stops = offsets[:-1], offsets[1:]
    n = len(starts)
    empty = starts == stops
    if not len(data):
        return np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    spaces = np.zeros(256, dtype=bool)
    spaces[SPACE_BYTES] = True
    first = np.minimum(starts, len(data) - 1)
    last = np.maximum(stops - 1, 0)
    blank = empty.copy()
    white = FASTTEXT_SPACES.encode()
    for i in np.flatnonzero(~empty & (spaces[data[first]] | spaces[data[last]])).tolist():
        head = data[starts[i] : min(starts[i] + ENDS, stops[i])].tobytes()  # the whitespace at the ends, read
        tail = data[max(stops[i] - ENDS, starts[i]) : stops[i]].tobytes()  # from a few bytes at each end
        lead, trail = len(head) - len(head.lstrip(white)), len(tail) - len(tail.rstrip(white))
        if lead == len(head) or trail == len(tail):  # whitespace further in: the whole text
            text = data[starts[i] : stops[i]].tobytes()
            if not text.strip(white):
                blank[i] = True
                continue
            lead, trail = len(text) - len(text.lstrip(white)), len(text) - len(text.rstrip(white))
        first[i] = starts[i] + lead
        last[i] = stops[i] - 1 - trail
    ends = np.stack([data[first], data[last]])
    odd = ~blank & ((ends >= 0x80) | ((ends >= 0x1C) & (ends <= 0x1F))).any(axis=0)
    return blank, odd


def score_column(label: str) -> str:
    """The column of filter/documents/ holding a label's score: ``classifier_<label>`` (other than letters, digits
    and ``_`` as ``_``)."""
    return "classifier_" + re.sub(r"[^0-9A-Za-z_]", "_", label)


def math_nan() -> float:
    """NaN: a label no unit of the document was given (fastText did not return it)."""
    return float("nan")
