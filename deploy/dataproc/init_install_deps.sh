#!/usr/bin/env bash
# Dataproc initialization action: install the pipeline's Python dependencies on every node.
# pyspark is NOT installed: the cluster provides it. Set by create_cluster.sh as instance metadata:
#   PIPELINE_DIST       gs://.../dist with the wheel and requirements-cluster.txt (required)
#   PIPELINE_DEPS       wheelhouse (default), pip: from PyPI or PIP_INDEX_URL -- needs Cloud NAT or a mirror;
#                       Dataproc 2.2+ clusters have no internet by default (docs/running.md, Cluster and storage)
#                       wheelhouse: from PIPELINE_DIST/wheelhouse/ (built by build_artifacts.sh
#                       --wheelhouse) with --no-index: no internet needed
#                       env: unpack PIPELINE_DIST/env-py3.11.tar.gz to /opt/pretrain-env on the master, for
#                       the driver (executors get it via spark.archives)
#   PIP_INDEX_URL       optional mirror (Artifact Registry PyPI remote repository, ...)
#   PIPELINE_PYTHON     interpreter to install into (default: Dataproc's /opt/conda/default/bin/python)
#   PIPELINE_DATE_CLOCK cluster-creation: write the UTC time now to /etc/pretrain-pipeline/date-clock, from
#                       which the jobs resolve --date yesterday/today (pipeline/cli/schedule.py). Only the
#                       workflow template sets it: its cluster lives for one run, so all five jobs get one
#                       date even across midnight. A long-lived cluster must not (its date would never move).
# PIPELINE_METADATA_COMMAND and PIPELINE_ETC replace the metadata reader and /etc/pretrain-pipeline in tests.
set -euo pipefail

meta() {
  ${PIPELINE_METADATA_COMMAND:-/usr/share/google/get_metadata_value} "attributes/$1" 2>/dev/null || true
}

if [[ "$(meta PIPELINE_DATE_CLOCK)" == "cluster-creation" ]]; then
  ETC="${PIPELINE_ETC:-/etc/pretrain-pipeline}"
  mkdir -p "$ETC"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$ETC/date-clock.tmp"
  mv "$ETC/date-clock.tmp" "$ETC/date-clock"
fi

DIST="$(meta PIPELINE_DIST)"
DEPS="$(meta PIPELINE_DEPS)"
DEPS="${DEPS:-wheelhouse}"
INDEX_URL="$(meta PIP_INDEX_URL)"
PYTHON="$(meta PIPELINE_PYTHON)"
PYTHON="${PYTHON:-/opt/conda/default/bin/python}"
ROLE="$(meta dataproc-role)"
WORK="$(mktemp -d)"

if [[ -z "$DIST" ]]; then
  echo "metadata PIPELINE_DIST is not set (gs://BUCKET/PREFIX/dist)" >&2
  exit 1
fi
[[ -x "$PYTHON" ]] || PYTHON="$(command -v python3)"

case "$DEPS" in
  pip)
    gcloud storage cp "$DIST/requirements-cluster.txt" "$DIST/spark_pretrain_pipeline-*.whl" "$WORK/"
    pip_args=(--quiet --disable-pip-version-check)
    [[ -n "$INDEX_URL" ]] && pip_args+=(--index-url "$INDEX_URL")
    "$PYTHON" -m pip install "${pip_args[@]}" -r "$WORK/requirements-cluster.txt"
    "$PYTHON" -m pip install "${pip_args[@]}" --no-deps "$WORK"/spark_pretrain_pipeline-*.whl
    ;;
  wheelhouse)
    mkdir -p "$WORK/wheelhouse"
    gcloud storage cp "$DIST/requirements-cluster.txt" "$WORK/"
    gcloud storage cp "$DIST/wheelhouse/*" "$WORK/wheelhouse/"
    "$PYTHON" -m pip install --quiet --no-index --find-links "$WORK/wheelhouse" \
      -r "$WORK/requirements-cluster.txt"
    "$PYTHON" -m pip install --quiet --no-index --no-deps "$WORK"/wheelhouse/spark_pretrain_pipeline-*.whl
    ;;
  env)
    if [[ "$ROLE" == "Master" ]]; then
      gcloud storage cp "$DIST/env-py3.11.tar.gz" "$WORK/env.tar.gz"
      mkdir -p /opt/pretrain-env
      tar -xzf "$WORK/env.tar.gz" -C /opt/pretrain-env
    fi
    ;;
  *)
    echo "unknown PIPELINE_DEPS=$DEPS (pip, wheelhouse or env)" >&2
    exit 1
    ;;
esac
rm -rf "$WORK"
echo "pipeline dependencies installed ($DEPS) with $PYTHON"
