"""The run directory's layout: the name of every table, marker and file set a stage writes (docs/stages.md).

Stages, the runner, the report and the command line name the run's parts through these constants, so a
table is spelled once. Table names are paths relative to the run directory, ``/``-separated.
"""

from __future__ import annotations

DOCUMENTS = "documents"  # ingest: doc_id, source, text, kept metadata
REJECTS = "rejects"  # ingest: source, file, position, reason, detail, excerpt
FILTER = "filter"  # the filter stage's directory
FILTERED = "filter/documents"  # the documents every filter kept: ingest's columns, language, language_score
FILTER_DROPPED = "filter/dropped"  # doc_id, source, reason, detail, value, threshold, excerpt
FILTER_SIGNALS = "filter/signals"  # doc_id, source, one column "<filter>.<measure>" per signal of every filter
FILTER_SIGNALS_META = "filter/signals.json"  # what the signals were measured on (docs/stages.md, Signals)
FILTER_SUMMARY = "filter/summary.json"  # per source counts, languages, and a histogram of each measured value
CLASSIFIER = "classifier"  # train-classifier: model.bin, metrics.json, train.txt, holdout.txt
CLASSIFIER_MODEL = "classifier/model.bin"  # the fastText model (the fasttext_classifier filter's model: run)
CLASSIFIER_METRICS = "classifier/metrics.json"  # held-out precision, recall, ROC AUC, score deciles, counts
CLASSIFIER_TRAIN = "classifier/train.txt"  # the training examples, fastText's format, in training order
CLASSIFIER_HOLDOUT = "classifier/holdout.txt"  # the held-out examples
OLDER_CAPTURES = "older_captures"  # ingest: web pages removed for a later capture of their URL
INGEST_READ = "_ingest_read"  # ingest: every document read, before the URL rule (deleted once it is applied)
DEDUP = "dedup"  # the dedup stage's directory
EDGES = "dedup/edges"
COMPONENTS = "dedup/components"
SURVIVORS = "dedup/survivors"
DEDUP_REPORT = "dedup/report.json"
CLUSTER_SIZES = "dedup/cluster_sizes"  # with blend.rehydrate: doc_id, source, cluster_size of every survivor
CONTAMINATED = "dedup/contaminated"  # decontamination: documents sharing n-grams with a benchmark
EARLIER_RUNS = "dedup/earlier_runs"  # dedup index: documents matching an earlier run
EARLIER_MATCHES = "dedup/earlier_matches"
INDEX_ENTRIES = "dedup/index_entries"  # dedup index: what this run's commit adds
# FILTER_REASONS stands for every reason "<filter>.<rule>" of the filter stage (a reason holding a dot) in a
# stage's removal_tables (Stage.removal_tables)
FILTER_REASONS = "<filter>.<rule>"
SPANS = "spans"  # the spans stage's directory (docs/spans.md)
SPANS_DOCUMENTS = "spans/documents"  # the survivors with repeated spans cut out: dedup's columns
SPANS_REMOVED = "spans/removed"  # doc_id, source, start, end, kind, copies, kept_doc_id, kept_start
SPANS_EMPTIED = "spans/emptied"  # doc_id, source, removed_bytes: documents the cuts left without a word
SPANS_TOO_SHORT = "spans/too_short"  # doc_id, source, removed_bytes: documents the line or sentence part left too short
SPANS_AFTER_LINES = "spans/after_lines"  # the line part's documents, when sentences or exact substrings follow
SPANS_AFTER_SENTENCES = "spans/after_sentences"  # the sentence part's documents, when exact substrings follow
TOKENIZER = "tokenizer"  # train-tokenizer: vocab.json, merges.txt, tokenizer.json
SHARDS = "shards"  # tokenize: shards/<source>/part-NNNNN.{bin,idx}
MEGATRON = "megatron"  # merge-blend: megatron/<source>.{bin,idx}
BLEND = "blend"  # merge-blend: the blending index files and blend.json
MEGATRON_CACHE = "megatron_cache"  # training-indices: megatron-core's GPTDataset/BlendedDataset index caches
MANIFEST = "manifest.json"
MARKER = "_SUCCESS"  # a finished stage's marker, inside ``_stages/<stage>/``
MARKERS = "_stages"
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
AFTER_RUN_ERRORS = "after_run_errors"  # manifest.json and report.json: stage -> why its last step failed


def marker(stage: str) -> str:
    """Where a finished stage leaves its marker, relative to the run directory."""
    return f"{MARKERS}/{stage}/{MARKER}"


def parts(table: str) -> tuple[str, ...]:
    """``"dedup/edges"`` -> ``("dedup", "edges")``, the form :meth:`RunContext.table` takes."""
    return tuple(table.split("/"))
