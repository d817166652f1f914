"""Checks that need I/O but no Spark: run before the first Spark job, failing with the key's name.

Storage is probed read-only (one listing of at most one object per location): a missing bucket,
a permission error or an unreachable endpoint ends the run here, naming the path, and nothing is
created or written. Credentials come from the platform (application default credentials on GCP,
the instance role on AWS) through gcsfs/s3fs's own chains; the config holds none (credential-like
``spark.settings`` keys are refused) and no storage options are ever printed.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.decontaminate.references import reference_files
from pipeline.dedup.index.head import check_location, read_head
from pipeline.run.registry import STAGES
from pipeline.secrets import is_secret_setting
from pipeline.tokenizer.run_files import load_library_tokenizer

PROBE_TIMEOUT = 30.0  # seconds to wait for one storage location to answer


def check_stage_configs(config: PipelineConfig) -> None:
    """Each stage's rules that span several config fields (``Stage.check_config``), before any I/O."""
    for stage in STAGES:
        stage.check_config(config)


def check_paths(config: PipelineConfig) -> None:
    """No credentials in the config; every remote location answers; tokenizer files exist when given; every
    decontamination reference matches files; the dedup index's place is usable."""
    check_no_secrets(config)
    check_output_apart_from_sources(config)
    probes = [("output", config.output)]
    for i, src in enumerate(config.sources):
        probes += [(f"sources.{i}.paths.{j}", p) for j, p in enumerate(src.paths)]
    for i, ref in enumerate(config.decontaminate.references):
        probes += [(f"decontaminate.references.{i}.paths.{j}", p) for j, p in enumerate(ref.paths)]
    if config.dedup.index:
        probes.append(("dedup.index", config.dedup.index))
    tok = config.tokenizer
    if not tok.train:
        probes += [(f"tokenizer.{k}", getattr(tok, k)) for k in ("vocab", "merges", "path") if getattr(tok, k)]
    seen: set[str] = set()
    for key, path in probes:
        if path and not storage.is_local(path) and _location(path) not in seen:
            seen.add(_location(path))
            probe(key, path)
    if not tok.train:
        for key in ("vocab", "merges", "path"):
            path = getattr(tok, key)
            if path and not _exists(key, path):
                raise ConfigError(f"tokenizer.{key}", f"file not found: {path!r}")
    if tok.kind != "bpe":  # the file loads, its pattern compiles, its EOD and BOS tokens exist
        load_library_tokenizer(config)
    reference_files(config)  # every reference path matches files (decontaminate.references.<i>.paths.<j>)
    check_dedup_index(config)


def check_dedup_index(config: PipelineConfig) -> None:
    """``dedup.index`` can hold an index (not a file, writable) and its HEAD, if any, reads (docs/dedup_index.md,
    Index); the MinHash parameters are compared at the dedup stage's precheck."""
    if config.dedup.index:
        check_location(config.dedup.index)
        read_head(config.dedup.index)


def check_no_secrets(config: PipelineConfig) -> None:
    """Refuse credentials in ``spark.settings`` (:func:`pipeline.secrets.is_secret_setting`; never echoed)."""
    for key, value in (config.spark.settings or {}).items():
        if is_secret_setting(key, value):
            raise ConfigError(
                f"spark.settings.{key}",
                "credentials do not belong in the config; the pipeline "
                "uses the platform's (application default credentials, instance role)",
            )


def check_output_apart_from_sources(config: PipelineConfig) -> None:
    """Refuse an output directory inside (or equal to) a source's input directory or glob, or a source
    path inside the output: a run would read its own files as input. For a glob, its directory part
    before the first wildcard counts."""
    output = _normalized(config.output)
    for i, src in enumerate(config.sources):
        for j, pattern in enumerate(src.paths):
            base = _normalized(_fixed_part(pattern))
            if _nested(output, base) or _nested(base, output):
                raise ConfigError(
                    "output",
                    f"{config.output!r} overlaps sources.{i}.paths.{j} = {pattern!r}: "
                    "a run would read its own outputs; put the output directory elsewhere",
                )


def _fixed_part(pattern: str) -> str:
    """The directory part of a glob before its first wildcard (the pattern itself when it has none)."""
    cut = min((pattern.find(c) for c in "*?[{" if c in pattern), default=-1)
    return pattern if cut < 0 else pattern[:cut].rsplit("/", 1)[0] or "/"


def _normalized(path: str) -> str:
    """Absolute, ``..``-free path (local: symlinks resolved) or ``scheme://bucket/key`` without a trailing '/'."""
    if storage.is_local(path):
        return os.path.realpath(os.path.abspath(path.removeprefix("file://")))
    scheme, rest = path.split("://", 1)
    return f"{scheme.replace('gcs', 'gs').replace('s3a', 's3')}://{posixpath.normpath('/' + rest).lstrip('/')}"


def _nested(inner: str, outer: str) -> bool:
    """True when ``inner`` equals ``outer`` or lies below it."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _location(path: str) -> str:
    """``scheme://bucket`` of a URL."""
    scheme, rest = path.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def probe(key: str, path: str, timeout: float | None = None) -> None:
    """List at most one object at ``path``'s bucket and prefix; ConfigError naming ``key`` and ``path``."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            _list_one(path)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - classified below
            outcome.append(exc)

    worker = threading.Thread(target=run, name="storage-probe", daemon=True)
    worker.start()
    worker.join(PROBE_TIMEOUT if timeout is None else timeout)
    where = _location(path)
    if not outcome:
        raise ConfigError(
            key,
            f"cannot reach {where} for {path!r}: no answer within "
            f"{PROBE_TIMEOUT if timeout is None else timeout:.0f} s (endpoint unreachable?)",
        )
    exc = outcome[0]
    if exc is None:
        return
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, FileNotFoundError) or "NoSuchBucket" in text:
        raise ConfigError(
            key, f"bucket {where} does not exist (for {path!r}); create it first, the pipeline never creates buckets"
        )
    if isinstance(exc, PermissionError) or re.search(r"\b403\b|Forbidden|AccessDenied|InvalidAccessKeyId", text):
        raise ConfigError(
            key,
            f"permission denied listing {path!r}; grant the job's service account or "
            "instance role read/write access to it",
        )
    raise ConfigError(key, f"cannot reach {where} for {path!r}: {text[:300]}")


def _list_one(path: str) -> None:
    """One listing request of at most one key below ``path`` on gs:// and s3:// (raises on a missing bucket)."""
    fs, inner = storage.resolve(path)
    bucket, _, prefix = inner.partition("/")
    prefix = prefix.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
    scheme = path.split("://", 1)[0]
    if scheme in ("gs", "gcs"):
        fs.call("GET", "b/{}/o", bucket, prefix=prefix, maxResults=1, json_out=True)
    elif scheme in ("s3", "s3a"):
        fs.call_s3("list_objects_v2", Bucket=bucket, Prefix=prefix, MaxKeys=1)
    # other schemes (memory://, file-like stores) have no buckets to probe


def _exists(key: str, path: str) -> bool:
    try:
        return storage.exists(path)
    except Exception as exc:
        raise ConfigError(f"tokenizer.{key}", f"cannot reach {path!r}: {type(exc).__name__}: {exc}") from None
