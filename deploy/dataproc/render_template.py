#!/usr/bin/env python3
"""Render deploy/dataproc/workflow_template.yaml for ``gcloud dataproc workflow-templates import``.

``gs://ARTIFACTS`` becomes the staging prefix, and the managed cluster's ``softwareConfig.properties``
get the config's ``spark.settings`` (``spark:`` prefixed, YOUR_BUCKET replaced), so the cluster that
each run creates has the executor sizes and jars the config names. Needs only PyYAML.

    deploy/dataproc/render_template.py --artifacts gs://b/pretrain --bucket b [--config conf/dataproc.yaml]
        [--index gs://b/dedup-index] [--numba-cache]

``--numba-cache`` ships ``dist/numba-cache.tar.gz`` (``deploy/build_artifacts.sh --numba-cache``) to every
executor of the managed cluster (deploy/spark_conf.py), so a fresh cluster compiles no numba kernel.
``--index`` adds ``--set dedup.index=URL`` to every job: each scheduled run dedups against the runs
before it and adds its documents to that index when its last stage ends.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from spark_conf import settings  # noqa: E402  (deploy/spark_conf.py, beside this directory)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "dataproc" / "workflow_template.yaml"
PLACEHOLDER = "gs://ARTIFACTS"


def _replace(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {k: _replace(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, old, new) for v in node]
    return node.replace(old, new) if isinstance(node, str) else node


def render(
    artifacts: str,
    bucket: str,
    config: str,
    template: Path = TEMPLATE,
    index: str | None = None,
    numba_cache: bool = False,
) -> dict[str, Any]:
    """The template as a mapping, ready for import."""
    if not artifacts.startswith("gs://"):
        raise ValueError(f"--artifacts {artifacts!r}: expected gs://BUCKET/PREFIX")
    if index is not None and not index.startswith("gs://"):
        raise ValueError(f"--index {index!r}: expected gs://BUCKET/PATH")
    data = _replace(yaml.safe_load(template.read_text()), PLACEHOLDER, artifacts.rstrip("/"))
    dist = f"{artifacts.rstrip('/')}/dist" if numba_cache else None
    props = settings(config, [f"YOUR_BUCKET={bucket}"], [], [], numba_cache=dist)
    software = data["placement"]["managedCluster"]["config"]["softwareConfig"]
    software["properties"] = {f"spark:{k}": v for k, v in props.items()}
    if index:
        for job in data["jobs"]:
            job["pysparkJob"]["args"] += ["--set", f"dedup.index={index.rstrip('/')}"]
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifacts", required=True, help="gs://BUCKET/PREFIX where deploy/upload.sh staged")
    parser.add_argument("--bucket", required=True, help="replaces YOUR_BUCKET in the config")
    parser.add_argument("--config", default=str(ROOT / "conf" / "dataproc.yaml"), help="local YAML config")
    parser.add_argument("--index", help="gs:// dedup index every scheduled run uses (dedup.index)")
    parser.add_argument("--numba-cache", action="store_true", help="ship dist/numba-cache.tar.gz to the executors")
    args = parser.parse_args(argv)
    try:
        data = render(args.artifacts, args.bucket, args.config, index=args.index, numba_cache=args.numba_cache)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(yaml.safe_dump(data, sort_keys=False, width=1000), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
