"""Spark ingest stage: splits -> Arrow batches of records -> ``documents/`` and ``rejects/``."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.config import IngestConfig, PipelineConfig
from pipeline.config.errors import ConfigError
from pipeline.errors import PipelineError
from pipeline.ingest.spark.captures import REASON, older_captures, without
from pipeline.sources import splits, trafilatura_text
from pipeline.sources.formats import FORMATS, check_formats
from pipeline.sources.records import record_rules
from pipeline.sources.spark.reader import read_records
from pipeline.sources.url_rules import load_blocklist
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage, source_tally

DOCUMENT_COLUMNS = ["doc_id", "source", "file", "position", "text", "meta"]
REJECT_COLUMNS = ["source", "file", "position", "reason", "detail", "excerpt"]
SKIPPED_EXAMPLES = 5  # hidden names recorded per source (all are counted)
LISTED_FILES = 1000  # a source of at most this many files records each one, so a changed input is named
log = logging.getLogger("pipeline.ingest")


def run_ingest(ctx: RunContext) -> dict:
    """Read every source, write ``documents/`` and ``rejects/``, return counts per source and reason."""
    config = ctx.config
    listings = source_files(config)
    planned = splits.plan_splits(config.sources, config.ingest, listings)
    tasks = splits.pack_splits(planned, config.ingest)
    rules = record_rules(config.sources, config.ingest)
    spark = ctx.spark
    with_rejects = spark.sparkContext.accumulator(frozenset(), _SplitSet())

    def note(split: splits.Split) -> None:
        with_rejects.add(frozenset((split,)))

    records = read_records(spark, tasks, rules, "documents", note)
    web = [s.name for s in config.sources if FORMATS[s.format].web]
    older: dict[str, int] = {}
    if web and config.ingest.latest_capture_only:
        older = _keep_latest_captures(ctx, records.select(*DOCUMENT_COLUMNS), web)
    else:
        ctx.write_table(records.select(*DOCUMENT_COLUMNS), layout.DOCUMENTS)
        storage.remove(ctx.table(layout.OLDER_CAPTURES))  # an earlier run's list would outlive its config
    # the rejects pass re-reads only the splits where the documents pass met a reject
    again = [s for s in planned if s in with_rejects.value]
    records = read_records(spark, splits.pack_splits(again, config.ingest), rules, "rejects")
    ctx.write_table(records.select(*REJECT_COLUMNS), layout.REJECTS)
    tallies: list[tuple[str, str | None, int]] = [*documents_per_source(ctx.read_table(layout.DOCUMENTS))]
    if again:  # else the rejects pass read nothing: an empty table, no job to count it
        for row in ctx.read_table(layout.REJECTS).groupBy("source", "reason").count().collect():
            tallies.append((row["source"], row["reason"], row["count"]))
    return {
        "sources": _count(tallies, [s.name for s in config.sources], older),
        "splits": len(planned),
        "tasks": len(tasks),
        "splits_with_rejects": len(again),
        "skipped_files": _skipped(listings),
        "inputs": {name: input_state(listing) for name, listing in listings.items()},
    }


def _keep_latest_captures(ctx: RunContext, documents: DataFrame, web: list[str]) -> dict[str, int]:
    """Write ``documents/`` without the older captures of a URL and ``older_captures/`` listing them
    (docs/bad_input.md, URL rules); their count per web source."""
    ctx.write_table(documents, layout.INGEST_READ)
    staged = ctx.read_table(layout.INGEST_READ)
    ctx.write_table(older_captures(staged, web), layout.OLDER_CAPTURES)
    older = ctx.read_table(layout.OLDER_CAPTURES)
    ctx.write_table(without(staged, older), layout.DOCUMENTS)
    counts = {row["source"]: row["count"] for row in older.groupBy("source").count().collect()}
    storage.remove(ctx.table(layout.INGEST_READ))
    return {name: counts.get(name, 0) for name in web}


_LISTED: list[tuple[PipelineConfig, str, dict[str, splits.SourceListing]]] = []  # the last config's listing


def source_files(config: PipelineConfig) -> dict[str, splits.SourceListing]:
    """Every source's input files (docs/bad_input.md, Files); a source whose paths match nothing fails, naming
    ``sources.<i>.paths.<j>``. Listed once per config object (one invocation: preflight, resume's check and
    the stage share it); a changed ``sources`` or ``ingest.include_hidden`` lists again."""
    key = json.dumps([[s.name, s.paths] for s in config.sources] + [config.ingest.include_hidden])
    if _LISTED and _LISTED[0][0] is config and _LISTED[0][1] == key:
        return _LISTED[0][2]
    found = splits.source_files(config.sources, "sources", config.ingest.include_hidden)
    _LISTED[:] = [(config, key, found)]
    return found


def _skipped(listings: dict[str, splits.SourceListing]) -> dict[str, dict[str, Any]]:
    """Per source with hidden names left out: how many, a few of them, and a warning line saying so."""
    skipped = {}
    for name, listing in listings.items():
        if listing.skipped:
            examples = listing.skipped[:SKIPPED_EXAMPLES]
            skipped[name] = {"count": len(listing.skipped), "examples": examples}
            log.warning(
                "source %r: %d hidden name(s) left out of its directories (%s%s); "
                "set ingest.include_hidden: true to read them",
                name,
                len(listing.skipped),
                ", ".join(examples),
                ", ..." if len(listing.skipped) > len(examples) else "",
            )
    return skipped


def input_state(listing: splits.SourceListing) -> dict[str, Any]:
    """What a source's input was: file count, bytes, a digest of every (file, size, version), and the files
    themselves when there are at most ``LISTED_FILES``."""
    files = {rel: [f.size, f.version] for rel, f in listing.relative().items()}
    state: dict[str, Any] = {
        "files": len(files),
        "bytes": sum(size for size, _ in files.values()),
        "digest": hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest(),
    }
    if len(files) <= LISTED_FILES:
        state["listed"] = files
    return state


def _outdated(ctx: RunContext, counts: dict[str, Any]) -> str | None:
    """The sources' files differ from those the finished ingest read (docs/bad_input.md, Files): a file added,
    removed or rewritten since. None for a marker from before inputs were recorded."""
    recorded = counts.get("inputs")
    if recorded is None:
        return None
    changes = []
    for name, listing in source_files(ctx.config).items():
        then, now = recorded.get(name), input_state(listing)
        if then is None or then["digest"] != now["digest"]:
            changes.append(f"source {name!r} {_changes(then, now)}")
    return "its input files changed since it ran: " + "; ".join(changes) if changes else None


def _changes(then: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """What differs between two input states of a source, naming files when both list them."""
    if then is None:
        return "was not read"
    if "listed" not in then or "listed" not in now:
        return f"has {now['files']} files ({now['bytes']} bytes), had {then['files']} ({then['bytes']} bytes)"
    old, new = then["listed"], now["listed"]
    parts = []
    for label, names in (
        ("added", sorted(set(new) - set(old))),
        ("removed", sorted(set(old) - set(new))),
        ("rewritten", sorted(n for n in set(old) & set(new) if old[n] != new[n])),
    ):
        if names:
            parts.append(f"{label} {', '.join(names[:5])}" + (f" and {len(names) - 5} more" if len(names) > 5 else ""))
    return ", ".join(parts)


def check_config(config: PipelineConfig) -> None:
    """Every source and every decontamination reference names a known format, the chosen HTML extractor is
    installed and the domain blocklist reads (before Spark starts)."""
    check_formats(config.sources, "sources")
    check_formats(config.decontaminate.references, "decontaminate.references")
    if config.ingest.html_extractor == "trafilatura" and not trafilatura_text.available():
        raise ConfigError("ingest.html_extractor", f"trafilatura is not installed ({trafilatura_text.INSTALL})")
    load_blocklist(config.ingest.domain_blocklist)


class _SplitSet(AccumulatorParam):
    """Accumulates the set of splits in which a pass met a reject (a retried task only adds again)."""

    def zero(self, value: frozenset) -> frozenset:
        return frozenset()

    def addInPlace(self, value1: frozenset, value2: frozenset) -> frozenset:  # noqa: N802 - pyspark's name
        return value1 | value2


class DocIdCollisionError(PipelineError, RuntimeError):
    """Two records hashed to the same 64-bit doc_id (about 2.7% likely at 10^9 documents)."""


def documents_per_source(docs: DataFrame) -> list[tuple[str, None, int]]:
    """(source, None, documents) per source, from one job that also finds any doc_id held by several rows
    (then :class:`DocIdCollisionError` names them)."""
    per_id = docs.groupBy("doc_id").agg(F.count("*").alias("n"), F.min("source").alias("source"))
    per_source = per_id.groupBy("source").agg(F.sum("n").alias("count"), F.max("n").alias("most")).collect()
    if any(row["most"] > 1 for row in per_source):
        _check_unique_ids(docs)
    return [(row["source"], None, row["count"]) for row in per_source]


def _check_unique_ids(docs) -> None:
    """Fail loudly, naming the records, if any doc_id repeats: joins would silently duplicate rows."""
    repeated = docs.groupBy("doc_id").count().where("count > 1")
    clashes = repeated.join(docs.select("doc_id", "source", "file", "position"), "doc_id").limit(10).collect()
    if clashes:
        where = "; ".join(f"{r['doc_id']}: {r['source']}/{r['file']}@{r['position']}" for r in clashes)
        raise DocIdCollisionError(
            f"doc_id collision between distinct records ({where}); rename a source or file to change their ids"
        )


def _count(tallies: list[tuple[str, str | None, int]], names: list[str], older: dict[str, int]) -> dict:
    """documents_read = documents + rejected + older_capture per source, with rejects broken down by reason,
    from (source, reject reason or None for documents, count) rows and the older captures per web source."""
    per_source: dict[str, dict[str, Any]] = {
        name: {"documents_read": 0, "rejected": 0, "documents": 0, "rejects_by_reason": {}} for name in names
    }
    for source, reason, count in tallies:
        entry = per_source[source]
        entry["documents_read"] += count
        if reason is None:
            entry["documents"] += count
        else:
            entry["rejected"] += count
            entry["rejects_by_reason"][reason] = count
    for source, count in older.items():
        per_source[source][REASON] = count
        per_source[source]["documents_read"] += count
    return per_source


SOURCE_FIELDS = ("name", "paths", "format", "text_field", "keep_fields", "text_unit")
LATER_KEYS = ("include_hidden", "html_extractor", "max_record_bytes", "domain_blocklist", "latest_capture_only")


class Ingest(Stage):
    """Raw files of every source -> ``documents/`` (passed on), ``rejects/``, ``older_captures/``."""

    name = "ingest"
    config_keys = (*(f"sources[].{k}" for k in SOURCE_FIELDS), "ingest")
    version = 2  # 1: the LATER_KEYS were left out at their defaults
    passes = {"documents": layout.DOCUMENTS}
    writes = (layout.DOCUMENTS, layout.REJECTS, layout.OLDER_CAPTURES)
    removal_tables = {REASON: layout.OLDER_CAPTURES}
    stop_when_empty = True

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_ingest(ctx)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        ingest = asdict(config.ingest)
        if config.ingest.domain_blocklist is not None:  # the list's domains, so an edited file is not reused
            domains = "\n".join(sorted(load_blocklist(config.ingest.domain_blocklist)))
            ingest["domain_blocklist_sha256"] = hashlib.sha256(domains.encode()).hexdigest()
        return {"sources": [{k: getattr(s, k) for k in SOURCE_FIELDS} for s in config.sources], "ingest": ingest}

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        """Version 1 recorded the LATER_KEYS only when set: the others were at their defaults."""
        defaults = asdict(IngestConfig())
        return {**values, "ingest": {**{k: defaults[k] for k in LATER_KEYS}, **values.get("ingest", {})}}

    def check_config(self, config: PipelineConfig) -> None:
        check_config(config)

    def outdated(self, ctx: RunContext, counts: dict[str, Any]) -> str | None:
        return _outdated(ctx, counts)

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        return source_tally(counts, "documents", read="documents_read", rejected="rejected", removals=(REASON,))


STAGE = Ingest()
