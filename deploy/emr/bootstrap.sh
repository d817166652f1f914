#!/usr/bin/env bash
# EMR bootstrap action: install the pipeline's Python dependencies on every node (pyspark comes from
# EMR). EMR 7's system python3 is older than the project needs (>= 3.10), so this installs
# python3.11 from the Amazon Linux 2023 repositories and the pipeline into it; create_cluster.sh
# points Spark at it (spark-env PYSPARK_PYTHON=/usr/bin/python3.11).
#
# Args: --dist s3://BUCKET/PREFIX/dist [--wheelhouse] [--index-url URL] [--python python3.11]
#   --wheelhouse   install from <dist>/wheelhouse with --no-index (no internet; build_artifacts.sh
#                  --wheelhouse --target-python 3.11)
set -euo pipefail

DIST=""
WHEELHOUSE=0
INDEX_URL=""
PYTHON="python3.11"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --dist) DIST="${2%/}"; shift 2 ;;
    --wheelhouse) WHEELHOUSE=1; shift ;;
    --index-url) INDEX_URL="$2"; shift 2 ;;
    --python) PYTHON="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -n "$DIST" ]] || { echo "--dist s3://BUCKET/PREFIX/dist is required" >&2; exit 2; }

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  sudo dnf install -y -q "$PYTHON" "$PYTHON-pip"
fi
WORK="$(mktemp -d)"
aws s3 cp --only-show-errors "$DIST/requirements-cluster.txt" "$WORK/"
pip_args=(--quiet --disable-pip-version-check)
if [[ "$WHEELHOUSE" == 1 ]]; then
  aws s3 cp --only-show-errors --recursive "$DIST/wheelhouse/" "$WORK/wheelhouse/"
  pip_args+=(--no-index --find-links "$WORK/wheelhouse")
  wheel_dir="$WORK/wheelhouse"
else
  [[ -n "$INDEX_URL" ]] && pip_args+=(--index-url "$INDEX_URL")
  aws s3 cp --only-show-errors --recursive --exclude "*" --include "spark_pretrain_pipeline-*.whl" \
    "$DIST/" "$WORK/"
  wheel_dir="$WORK"
fi
# s3fs: the fsspec file system for s3:// configs and run directories (gcsfs is in the requirements).
sudo "$PYTHON" -m pip install "${pip_args[@]}" -r "$WORK/requirements-cluster.txt" s3fs
sudo "$PYTHON" -m pip install "${pip_args[@]}" --no-deps "$wheel_dir"/spark_pretrain_pipeline-*.whl
rm -rf "$WORK"
echo "pipeline dependencies installed with $PYTHON"
