#!/usr/bin/env bash
# Build what a cluster needs from this checkout:
#   <out>/pretrain_pipeline.zip        the pipeline package for spark-submit --py-files
#   <out>/spark_pretrain_pipeline-*.whl and <out>/requirements-cluster.txt (deps minus pyspark)
# and, optionally, for clusters without internet (docs/running.md, Cluster and storage):
#   <out>/wheelhouse/                  every dependency as a wheel for the cluster's Python/platform
#                                      (--platform and every older manylinux tag), installed by the
#                                      init action / bootstrap with --no-index
#   <out>/numba-cache.tar.gz           with --numba-cache: the numba kernels compiled by --python on this CPU,
#                                      shipped with --archives ...#numba-cache (docs/running.md, Cold clusters);
#                                      build it with the cluster's Python, on its CPU or for a level
#                                      all its CPUs have (--numba-cpu x86-64-v3)
#   <out>/env-py<X.Y>.tar.gz           a packed virtualenv of --python (X.Y: its version) for
#                                      spark.archives=...#environment (3.11: Dataproc, 3.12: Serverless 2.2)
#
# Usage: deploy/build_artifacts.sh [--out dist] [--python python3] [--zip-only] [--no-isolation]
#          [--wheelhouse] [--target-python 3.11] [--platform manylinux_2_28_x86_64]
#          [--pack-env] [--extra web-trafilatura] [--numba-cache [--numba-cpu x86-64-v3]] [--dry-run]
# --python needs PyPA build (pip install build); --target-python 3.12 for Dataproc Serverless 2.2.
# --extra NAME (repeatable) adds an extra's dependencies to requirements-cluster.txt and the wheelhouse.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/dist}"
PYTHON="${PYTHON:-python3}"
ZIP_ONLY=0
NO_ISOLATION=0
WHEELHOUSE=0
PACK_ENV=0
TARGET_PYTHON="${TARGET_PYTHON:-3.11}"         # Dataproc 2.2/2.3 images; EMR 7 with python3.11
PLATFORM="${PLATFORM:-manylinux_2_28_x86_64}"   # glibc 2.28+: Debian 12 (Dataproc 2.2), AL2023 (EMR 7)
DRY_RUN=0
NUMBA_CACHE=0
NUMBA_CPU=host
EXTRAS=()

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --python) PYTHON="$2"; shift 2 ;;
    --zip-only) ZIP_ONLY=1; shift ;;
    --no-isolation) NO_ISOLATION=1; shift ;;
    --wheelhouse) WHEELHOUSE=1; shift ;;
    --target-python) TARGET_PYTHON="$2"; shift 2 ;;
    --platform) PLATFORM="$2"; shift 2 ;;
    --pack-env) PACK_ENV=1; shift ;;
    --extra) EXTRAS+=(--extra "$2"); shift 2 ;;
    --numba-cache) NUMBA_CACHE=1; shift ;;
    --numba-cpu) NUMBA_CPU="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
# deploy/build_artifacts.py builds the zip, the wheel (PyPA build) and, with --wheelhouse, downloads
# every dependency for --target-python with the manylinux tags of --platform and all older ones.
args=(--out "$OUT" --target-python "$TARGET_PYTHON" --platform "$PLATFORM")
[[ "$ZIP_ONLY" == 1 ]] && args+=(--zip-only)
[[ "$WHEELHOUSE" == 1 ]] && args+=(--wheelhouse)
[[ "$NO_ISOLATION" == 1 ]] && args+=(--no-isolation)
[[ "$NUMBA_CACHE" == 1 ]] && args+=(--numba-cache)
[[ "$NUMBA_CACHE" == 1 ]] && args+=(--numba-cpu "$NUMBA_CPU")
args+=("${EXTRAS[@]}")
if [[ "$DRY_RUN" == 1 && "$WHEELHOUSE" == 1 ]]; then
  "$PYTHON" "$ROOT/deploy/build_artifacts.py" "${args[@]}" --print-pip-command | sed 's/^/+ /'
fi
run "$PYTHON" "$ROOT/deploy/build_artifacts.py" "${args[@]}"

if [[ "$PACK_ENV" == 1 ]]; then
  # venv-pack keeps the interpreter out of the archive: build this on the cluster's image (same
  # Python at the same path, e.g. /opt/conda/default/bin/python on Dataproc) -- see README.
  ENV_DIR="$(mktemp -d)/env"
  run "$PYTHON" -m venv "$ENV_DIR"
  run "$ENV_DIR/bin/pip" install --quiet venv-pack
  run "$ENV_DIR/bin/pip" install --quiet -r "$OUT/requirements-cluster.txt"
  run "$ENV_DIR/bin/pip" install --quiet --no-deps "$OUT"/spark_pretrain_pipeline-*.whl
  PY_XY="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  run "$ENV_DIR/bin/venv-pack" -p "$ENV_DIR" -o "$OUT/env-py$PY_XY.tar.gz" --force
fi

echo "artifacts in $OUT"
