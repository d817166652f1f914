"""The configuration schema: one dataclass per section, with field-level checks.

Every field may carry ``metadata={"choices": (...)}`` or ``{"check": callable, "why": str}``; the
loader in :mod:`pipeline.config.load` enforces them and names the key on failure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from typing import Any

_NAME_RE = r"[A-Za-z0-9][A-Za-z0-9_.-]*"  # matched with re.fullmatch: no trailing newline slips through
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_SHARDS = 100_000  # shard files are part-NNNNN: five digits


def _choices(*values: str) -> dict[str, Any]:
    return {"choices": values}


def _check(predicate, why: str) -> dict[str, Any]:
    return {"check": predicate, "why": why}


def _int_in(low: int, high: int, optional: bool = False) -> dict[str, Any]:
    """An integer in [low, high] (or None when ``optional``)."""
    return _check(
        lambda v: (optional and v is None) or (v is not None and low <= v <= high),
        f"must be an integer in [{low}, {high}]",
    )


@dataclass
class SourceConfig:
    """One input source: where its raw files are and how to read them."""

    name: str = field(metadata={"pattern": _NAME_RE})
    paths: list[str] = field(metadata=_check(lambda v: len(v) > 0, "must list at least one path"))
    format: str = "jsonl"  # a name of pipeline.sources.formats, checked by the ingest stage (Stage.check_config)
    text_field: str = "text"
    keep_fields: list[str] = field(default_factory=list)
    weight: float | None = field(
        default=None,
        metadata=_check(
            lambda v: v is None or (math.isfinite(v) and v > 0),
            "must be finite and > 0 (or omitted: proportional to size)",
        ),
    )
    text_unit: str = field(default="line", metadata=_choices("line", "file"))
    priority: int = field(default=0, metadata=_int_in(-(2**62), 2**62))
    # this source's own filter list, replacing the run's ``filter`` (docs/stages.md, The filter stage); [] = none
    filter: list[dict[str, Any]] | None = None


# the runtime speed-ups ``spark.speedups`` may turn on (pipeline/spark/speedups/, docs/config.md, Speed-ups)
SPEEDUPS = ("class_archive", "local_daemon", "zip_rescans", "gc_freeze")


@dataclass
class SparkConfig:
    """Spark master and settings; under spark-submit the cluster's own settings win."""

    master: str | None = None
    app_name: str = "pretrain-pipeline"
    settings: dict[str, str] = field(default_factory=dict)
    checkpoint_dir: str | None = None
    log_level: str = field(default="WARN", metadata=_choices("ERROR", "WARN", "INFO", "DEBUG"))
    # opt-in runtime speed-ups by name (none by default)
    speedups: list[str] = field(
        default_factory=list,
        metadata=_check(lambda v: all(n in SPEEDUPS for n in v), f"must name only {', '.join(SPEEDUPS)}"),
    )


@dataclass
class IngestConfig:
    """Reading raw files: split size, size limits, reject excerpts."""

    partitions: int | None = field(default=None, metadata=_int_in(1, INT32_MAX, optional=True))
    # bytes per split, and per task: small files are packed together into tasks of about this size
    split_bytes: int = field(default=64 * 1024 * 1024, metadata=_int_in(1, INT64_MAX))
    max_text_bytes: int = field(default=10 * 1024 * 1024, metadata=_int_in(1, INT32_MAX))  # one Arrow string
    excerpt_chars: int = field(default=200, metadata=_check(lambda v: 0 <= v <= 10_000, "must be in [0, 10000]"))
    # read the files whose name (or a directory's, below a source directory) starts with _ or . (_SUCCESS,
    # .crc side files); by default they are left out and counted (docs/bad_input.md, Files). Also for
    # decontamination's references
    include_hidden: bool = False
    # warc format: how HTML becomes text (docs/bad_input.md, Web archives)
    html_extractor: str = field(default="resiliparse", metadata=_choices("resiliparse", "trafilatura"))
    # every format: a record (a line, a text file, a Parquet page, a decompressed WARC record) over this is a
    # record_too_large reject, never held whole in memory (docs/bad_input.md, Records)
    max_record_bytes: int = field(default=64 * 1024 * 1024, metadata=_int_in(1, INT32_MAX))
    # warc and wet formats: a file of domains, one per line; pages of a listed domain or its subdomains are
    # blocked_domain rejects (docs/bad_input.md, URL rules)
    domain_blocklist: str | None = None
    # warc and wet formats: of the pages sharing a URL in a run, only the latest capture (WARC-Date) is kept,
    # the others are removed as older_capture (docs/bad_input.md, URL rules)
    latest_capture_only: bool = True


@dataclass
class DedupConfig:
    """MinHash LSH near-deduplication parameters (docs/dedup.md, Parameters)."""

    enabled: bool = True
    num_perm: int = field(default=256, metadata=_check(lambda v: 2 <= v <= 4096, "must be in [2, 4096]"))
    threshold: float = field(default=0.7, metadata=_check(lambda v: 0 < v <= 1, "must be in (0, 1]"))
    ngram: int = field(default=5, metadata=_int_in(1, INT32_MAX))
    shingle: str = field(default="word", metadata=_choices("word", "char"))
    bands: int | None = field(default=None, metadata=_int_in(1, 4096, optional=True))
    rows: int | None = field(default=None, metadata=_int_in(1, 4096, optional=True))
    seed: int = field(default=1, metadata=_int_in(0, 2**32 - 1))  # numpy.random.RandomState's range
    scheme: str = field(default="affine32", metadata=_choices("affine32", "legacy"))
    hash: str = field(default="sha1", metadata=_choices("sha1", "xxhash"))
    min_tokens: int = field(default=5, metadata=_int_in(0, INT32_MAX))
    max_shingles: int | None = field(default=100_000, metadata=_int_in(1, INT32_MAX, optional=True))
    exact_prepass: bool = True
    verify: bool = True
    engine: str = field(default="star", metadata=_choices("star", "graphframes"))
    checkpoint_interval: int = field(default=3, metadata=_int_in(1, 1_000_000))
    # at most this many verified edges: components in one Spark task (union-find; the edges never reach the
    # driver); 0 = always the distributed engine
    local_components_max_edges: int = field(default=2_000_000, metadata=_int_in(0, INT32_MAX))
    # at most this many band rows (documents x bands): exact groups and candidate edges in one Spark task;
    # 0 = always the distributed shuffles
    local_buckets_max_rows: int = field(default=5_000_000, metadata=_int_in(0, INT32_MAX))
    survivor: str = field(default="min_id", metadata=_choices("min_id", "priority", "longest"))
    index: str | None = field(
        default=None,
        metadata=_check(
            lambda v: v is None or _index_location(v), "must be a local path, gs://bucket/... or s3://bucket/..."
        ),
    )


def _index_location(path: str) -> bool:
    """A dedup index lives where a conditional write exists: a local directory, gs:// or s3://."""
    if not path.strip():
        return False
    return "://" not in path or path.split("://", 1)[0] in ("file", "gs", "gcs", "s3", "s3a")


@dataclass
class DecontaminateConfig:
    """Removal of documents that share word n-grams with benchmark texts (off unless references are given)."""

    references: list[SourceConfig] = field(default_factory=list)
    ngram: int = field(default=13, metadata=_int_in(1, 1000))
    min_matches: int = field(default=1, metadata=_int_in(1, INT32_MAX))


# the names of pipeline/tokenizer/patterns.py's NAMED_PATTERNS
# (tests/unit/tokenizer/test_tokenizer_train_patterns.py checks)
PATTERN_NAMES = ("gpt2", "cl100k", "o200k", "llama3", "qwen2", "qwen3.5")


@dataclass
class TokenizerConfig:
    """Which tokenizer: trained on the survivors, GPT-2 style files, or a model's own (docs/tokenizer.md, Kinds)."""

    # bpe: our encoder over vocab.json + merges.txt (trained here or given); the others run their own library
    kind: str = field(default="bpe", metadata=_choices("bpe", "tiktoken", "huggingface", "sentencepiece"))
    train: bool = False
    vocab: str | None = None
    merges: str | None = None
    # tiktoken, huggingface, sentencepiece: the rank file, tokenizer.json or .model (local or object store)
    path: str | None = None
    # tiktoken: a named split pattern (gpt2, cl100k, o200k, llama3, qwen2) or a regex; bpe: a named one (GPT-2 if unset)
    pattern: str | None = None
    vocab_size: int = field(default=8000, metadata=_int_in(257, INT32_MAX))
    # bpe: a list of special token texts; tiktoken: a mapping of its special tokens to their ids
    special_tokens: list[str] | dict[str, int] = field(default_factory=lambda: ["<|endoftext|>"])
    eod_token: str = "<|endoftext|>"
    # prepend the BOS to every document; None: as megatron-core's tokenizer class for the kind (no BOS)
    add_bos: bool | None = None
    # the BOS text when add_bos (a SentencePiece model's own BOS when omitted)
    bos_token: str | None = None
    sample_fraction: float = field(default=1.0, metadata=_check(lambda v: 0 < v <= 1, "must be in (0, 1]"))
    min_pretoken_count: int = field(default=1, metadata=_int_in(1, INT64_MAX))
    max_distinct_pretokens: int = field(default=2_000_000, metadata=_int_in(1, INT64_MAX))


TOKENIZER_KEYS_OF_V2 = ("kind", "path", "pattern", "add_bos", "bos_token")  # keys the tokenizer section gained


def tokenizer_values_from_v1(values: dict[str, Any]) -> dict[str, Any]:
    """Recorded values of a stage reading the tokenizer section, from before it had :data:`TOKENIZER_KEYS_OF_V2`
    (then every tokenizer was GPT-2 style BPE: those keys at their defaults)."""
    if "tokenizer" not in values:
        return values
    defaults = {f.name: f.default for f in fields(TokenizerConfig) if f.name in TOKENIZER_KEYS_OF_V2}
    return {**values, "tokenizer": {**defaults, **values["tokenizer"]}}


@dataclass
class TokenizeConfig:
    """Tokenize stage: how many shards (Spark partitions) per source."""

    partitions: int = field(default=8, metadata=_int_in(1, MAX_SHARDS))


@dataclass
class BlendConfig:
    """Blend stage (docs/blending.md)."""

    size: int | None = field(default=None, metadata=_int_in(1, INT64_MAX, optional=True))
    mode: str = field(default="fixed", metadata=_choices("fixed", "megatron"))
    oversample: str = field(default="error", metadata=_choices("error", "wrap"))
    weights: str | None = None
    materialize: bool = False
    # FineWeb-2's rehydration: a lower bound of a survivor's cluster size -> its copies in the blend; None = off
    rehydrate: dict[str, int] | None = None


def _split_string(value: str) -> bool:
    """Megatron's ``--split``: up to three non-negative numbers ("969,30,1"), with a positive sum."""
    parts = re.findall(r"[.0-9]+", value)
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        return False
    return 0 < len(numbers) <= 3 and sum(numbers) > 0 and not re.sub(r"[.0-9,\s]", "", value)


@dataclass
class TrainingConfig:
    """The training run's index caches (docs/training_indices.md); absent = the training-indices stage is off."""

    # Megatron's --seq-length: tokens per sample
    sequence_length: int = field(metadata=_int_in(2, INT32_MAX))
    # [train, valid, test] samples the training run asks for (Megatron-LM's train_val_test_num_samples)
    samples: list[int] = field(
        metadata=_check(lambda v: len(v) == 3 and all(0 <= x <= INT64_MAX for x in v), "must be three integers >= 0")
    )
    # the training tokenizer's unique_identifiers, in its order (megatron-core puts them in every cache key); when
    # omitted, those of the class megatron-core builds for tokenizer.kind (not kind bpe: give them)
    tokenizer: dict[str, Any] | None = field(
        default=None, metadata=_check(lambda v: v is None or len(v) > 0, "must give the tokenizer's identifiers")
    )
    # Megatron's --seed: the seed of every shuffle
    random_seed: int = field(default=1234, metadata=_int_in(0, 2**32 - 1))
    # Megatron's --split, verbatim (the string is part of the cache key); Megatron-LM's default when omitted
    split: str = field(default="969, 30, 1", metadata=_check(_split_string, 'must look like "969,30,1"'))
    # the run directory as the training job sees it (its --data-path prefixes); None: the run's output
    data_path: str | None = field(default=None, metadata=_check(lambda v: v is None or bool(v.strip()), "empty"))
    # GPTDatasetConfig.add_extra_token_to_sequence: samples of sequence_length + 1 tokens
    add_extra_token_to_sequence: bool = True
    # GPTDatasetConfig.drop_last_partial_validation_sequence
    drop_last_partial_validation_sequence: bool = True
    # BlendedMegatronDatasetConfig.mid_level_dataset_surplus: extra samples built per source and split
    mid_level_dataset_surplus: float = field(
        default=0.005, metadata=_check(lambda v: math.isfinite(v) and v >= 0, "must be finite and >= 0")
    )


@dataclass
class ExactSubstringConfig:
    """Exact-substring dedup (docs/spans.md, Exact substrings): Lee et al. 2022's repeated spans."""

    # a span of at least this many tokens occurring more than once in the corpus is removed but for its first copy
    min_tokens: int = field(default=50, metadata=_int_in(1, 1_000_000))
    # tokens: UTF-8 bytes, or words (runs of bytes other than ASCII whitespace)
    tokenizer: str = field(default="bytes", metadata=_choices("bytes", "words"))


@dataclass
class SentencesConfig:
    """Sentence-level dedup (docs/spans.md, Sentences): datatrove 0.10.1's SentenceDedup."""

    # a run of this many consecutive sentences seen before in the corpus is dropped (datatrove's n_sentences)
    span: int = field(default=3, metadata=_int_in(1, 1000))
    # a document the drops changed is removed when left with fewer words (0: no minimum)
    min_doc_words: int = field(default=50, metadata=_int_in(0, 1_000_000))
    # ... or with fewer sentences (0: no minimum)
    min_num_sentences: int = field(default=3, metadata=_int_in(0, 1_000_000))


@dataclass
class LinesConfig:
    """Line-level dedup (docs/spans.md, Lines): CCNet's paragraph dedup, keeping the first copy."""

    # a normalized line occurring at least this many times in the corpus loses every copy but its first
    min_repeats: int = field(default=2, metadata=_int_in(2, 2**31 - 1))


@dataclass
class SpansConfig:
    """The spans stage (docs/spans.md): removes repeated spans from the dedup survivors; absent = off."""

    # exact substrings of at least min_tokens tokens; None: that part is off
    exact_substring: ExactSubstringConfig | None = field(default_factory=ExactSubstringConfig)
    # repeated runs of sentences; None (the default): that part is off
    sentences: SentencesConfig | None = None
    # repeated lines (CCNet); None (the default): that part is off
    lines: LinesConfig | None = None


@dataclass
class NegativesConfig:
    """The classifier's negative examples: ``from_run`` documents of this run after the rule filters, or files."""

    from_run: int | None = field(default=None, metadata=_int_in(1, INT64_MAX, optional=True))
    paths: list[str] = field(default_factory=list)  # files read like a source's (not with from_run)
    format: str = "jsonl"
    text_field: str = "text"


@dataclass
class ClassifierConfig:
    """The train-classifier stage (docs/stages.md, The train-classifier stage): a fastText classifier trained in
    the run on positives against negatives; absent = off."""

    positives: list[SourceConfig] = field(metadata=_check(lambda v: len(v) > 0, "must list at least one source"))
    negatives: NegativesConfig = field(default_factory=NegativesConfig)
    label: str = field(default="hq", metadata={"pattern": _NAME_RE})  # the positives' label, without __label__
    negative_label: str = field(default="cc", metadata={"pattern": _NAME_RE})  # the negatives' label
    holdout: float = field(default=0.1, metadata=_check(lambda v: 0 <= v < 1, "must be in [0, 1)"))
    seed: int = field(default=0, metadata=_int_in(0, INT32_MAX))  # the samples' order and fastText's seed
    # fastText train_supervised options over DCLM's training script's defaults (thread is always 1)
    fasttext: dict[str, Any] = field(default_factory=dict)


@dataclass
class PipelineConfig:
    """A whole run: sources, run directory, Spark, and every stage's parameters."""

    output: str
    sources: list[SourceConfig] = field(metadata=_check(lambda v: len(v) > 0, "must list at least one source"))
    spark: SparkConfig = field(default_factory=SparkConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    decontaminate: DecontaminateConfig = field(default_factory=DecontaminateConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    tokenize: TokenizeConfig = field(default_factory=TokenizeConfig)
    blend: BlendConfig = field(default_factory=BlendConfig)
    training: TrainingConfig | None = None  # None: no training-indices stage
    spans: SpansConfig | None = None  # None: no spans stage (docs/spans.md)
    classifier: ClassifierConfig | None = None  # None: no train-classifier stage
    # the filter stage's ordered list of filters, ``{name: ..., <keyword argument>: ...}`` each; [] = no filter
    # stage (docs/stages.md, The filter stage); names, keys and types are checked by the stage before Spark starts
    filter: list[dict[str, Any]] = field(default_factory=list)

    def source(self, name: str) -> SourceConfig:
        """The source called ``name``."""
        for src in self.sources:
            if src.name == name:
                return src
        raise KeyError(name)
