#!/usr/bin/env python3
"""Print a config's ``spark.settings`` as cluster/job properties for gcloud, aws or spark-submit.

Under spark-submit the cluster's settings win (pipeline/spark/session.py), and static settings such
as ``spark.executor.memory`` or ``spark.jars`` cannot change once the driver runs. So the deploy
scripts hand the config's settings to the cluster (or job) when they create it, through this script:

    deploy/spark_conf.py conf/dataproc.yaml --format dataproc-cluster --sub YOUR_BUCKET=my-bucket \
        --default spark.executor.memory=20g     # a computed default; the config's value wins

Formats: ``dataproc-cluster`` (``^|^spark:k=v|...`` for ``clusters create --properties``),
``dataproc-job`` (``^|^k=v|...`` for jobs and batches), ``emr`` (a ``spark-defaults`` classification,
JSON), ``submit`` (``--conf k=v``, one argument per line). Needs only PyYAML.

``--numba-cache DIST`` ships ``DIST/numba-cache.tar.gz`` (``deploy/build_artifacts.sh --numba-cache``) to every
executor: added to ``spark.archives`` as ``#numba-cache`` and named by ``spark.executorEnv.PIPELINE_NUMBA_SHIPPED``
(docs/running.md, Cold clusters).
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

NUMBA_CACHE_ARCHIVE = "numba-cache.tar.gz"  # what build_artifacts.sh --numba-cache writes
NUMBA_CACHE_DIR = "numba-cache"  # where executors find it unpacked, relative to their working directory


def with_numba_cache(props: dict[str, str], dist: str) -> dict[str, str]:
    """``props`` plus the numba cache in ``dist`` (a gs://, s3:// or local directory) for every executor."""
    archive = f"{dist.rstrip('/')}/{NUMBA_CACHE_ARCHIVE}#{NUMBA_CACHE_DIR}"
    archives = [a for a in props.get("spark.archives", "").split(",") if a]
    return {
        **props,
        "spark.archives": ",".join([*archives, archive]),
        "spark.executorEnv.PIPELINE_NUMBA_SHIPPED": NUMBA_CACHE_DIR,
    }


def settings(
    path: str, subs: list[str], defaults: list[str], drop: list[str], numba_cache: str | None = None
) -> dict[str, str]:
    """``--default`` values, overridden by the config's ``spark.settings``, with text substitutions; with
    ``numba_cache`` (the dist directory) the shipped numba cache added."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for sub in subs:
        old, new = sub.split("=", 1)
        text = text.replace(old, new)
    raw = yaml.safe_load(text) or {}
    merged = dict(kv.split("=", 1) for kv in defaults)
    merged.update({str(k): str(v) for k, v in ((raw.get("spark") or {}).get("settings") or {}).items()})
    if numba_cache:
        merged = with_numba_cache(merged, numba_cache)
    return {k: v for k, v in merged.items() if k not in drop}


def render(props: dict[str, str], fmt: str) -> str:
    """The properties in one of the output formats."""
    if fmt == "dataproc-cluster":
        return "^|^" + "|".join(f"spark:{k}={v}" for k, v in props.items())
    if fmt == "dataproc-job":
        return "^|^" + "|".join(f"{k}={v}" for k, v in props.items())
    if fmt == "emr":
        return json.dumps([{"Classification": "spark-defaults", "Properties": props}], indent=2)
    return "\n".join(f"--conf\n{k}={v}" for k, v in props.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="local YAML config")
    parser.add_argument("--format", choices=("dataproc-cluster", "dataproc-job", "emr", "submit"), default="submit")
    parser.add_argument(
        "--sub",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="replace text in the config first (e.g. YOUR_BUCKET=my-bucket)",
    )
    parser.add_argument(
        "--default",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting used when the config does not set the key",
    )
    parser.add_argument("--drop", action="append", default=[], metavar="KEY", help="leave this key out")
    parser.add_argument("--numba-cache", metavar="DIST", help="ship DIST/numba-cache.tar.gz to the executors")
    args = parser.parse_args(argv)
    props = settings(args.config, args.sub, args.default, args.drop, args.numba_cache)
    if props:
        print(render(props, args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
