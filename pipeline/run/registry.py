"""The stages in run order: one line per stage; each stage package owns its whole definition (its ``STAGE``)."""

from __future__ import annotations

from pipeline.dedup.stage import STAGE as DEDUP
from pipeline.filter.stage import STAGE as FILTER
from pipeline.ingest.stage import STAGE as INGEST
from pipeline.merge_blend.stage import STAGE as MERGE_BLEND
from pipeline.spans.stage import STAGE as SPANS
from pipeline.stage_api.stage import Stage
from pipeline.tokenize.stage import STAGE as TOKENIZE
from pipeline.train_classifier.stage import STAGE as TRAIN_CLASSIFIER
from pipeline.train_tokenizer.stage import STAGE as TRAIN_TOKENIZER
from pipeline.training_indices.stage import STAGE as TRAINING_INDICES

STAGES: tuple[Stage, ...] = (
    INGEST,
    TRAIN_CLASSIFIER,
    FILTER,
    DEDUP,
    SPANS,
    TRAIN_TOKENIZER,
    TOKENIZE,
    MERGE_BLEND,
    TRAINING_INDICES,
)
STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)


def stage(name: str) -> Stage:
    """The stage called ``name``."""
    return STAGES[STAGE_NAMES.index(name)]
