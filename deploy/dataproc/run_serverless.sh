#!/usr/bin/env bash
# Run the pipeline on Dataproc Serverless: one batch per stage, in order (each waits for the last).
#
# Usage: deploy/dataproc/run_serverless.sh --bucket B --date YYYY-MM-DD [--prefix pretrain]
#   [--project P] [--region us-central1] [--version 2.2] [--config gs://...]
#   [--stages ingest,train-classifier,filter,dedup,spans,train-tokenizer,tokenize,merge-blend,training-indices] [--subnet S]
#   [--service-account SA] [--container-image IMAGE | --env-archive] [--local-config conf/dataproc.yaml]
#   [--index gs://B/dedup-index] [--dry-run]
#
# Serverless runtime 2.2 runs Spark 3.5 with Scala 2.13 and Python 3.12. Dependencies (one is required):
# --container-image (a custom image with requirements-cluster.txt installed for its Python 3.12), or
# --env-archive: dist/env-py3.12.tar.gz as spark.archives, built by
# `deploy/build_artifacts.sh --pack-env --python python3.12` on a matching image.
# GraphFrames jars (_2.13: deploy/upload.sh --scala 2.13) are passed only when the config's
# dedup.engine is graphframes. Pass --service-account for scheduled runs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUCKET="${BUCKET:-}"
PREFIX="${PREFIX:-pretrain}"
PROJECT="${PROJECT:-}"
REGION="${REGION:-us-central1}"
VERSION="${VERSION:-2.2}"
SCALA="${SCALA:-2.13}"
GRAPHFRAMES_VERSION="${GRAPHFRAMES_VERSION:-0.10.1}"
CONFIG=""
RUN_DATE=""
INDEX=""
STAGES="ingest,train-classifier,filter,dedup,spans,train-tokenizer,tokenize,merge-blend,training-indices"
SUBNET=""
SERVICE_ACCOUNT=""
CONTAINER_IMAGE=""
ENV_ARCHIVE=0
LOCAL_CONFIG="$ROOT/conf/dataproc.yaml"
DRY_RUN=0

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bucket) BUCKET="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --project) PROJECT="$2"; shift 2 ;;
    --region) REGION="$2"; shift 2 ;;
    --version) VERSION="$2"; shift 2 ;;
    --config) CONFIG="$2"; shift 2 ;;
    --date) RUN_DATE="$2"; shift 2 ;;
    --index) INDEX="$2"; shift 2 ;;
    --stages) STAGES="$2"; shift 2 ;;
    --subnet) SUBNET="$2"; shift 2 ;;
    --service-account) SERVICE_ACCOUNT="$2"; shift 2 ;;
    --container-image) CONTAINER_IMAGE="$2"; shift 2 ;;
    --env-archive) ENV_ARCHIVE=1; shift ;;
    --local-config) LOCAL_CONFIG="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

[[ -n "$BUCKET" ]] || { echo "--bucket is required" >&2; exit 2; }
[[ -n "$RUN_DATE" ]] || { echo "--date is required (YYYY-MM-DD, yesterday or today)" >&2; exit 2; }
if [[ -z "$CONTAINER_IMAGE" && "$ENV_ARCHIVE" == 0 ]]; then
  echo "pass --container-image IMAGE or --env-archive: the Serverless runtime lacks the pipeline's" \
       "dependencies (numba, xxhash, ...)" >&2
  exit 2
fi
case "$VERSION" in
  2.2) RUNTIME_PYTHON=3.12 ;;
  *) RUNTIME_PYTHON="" ;;
esac
# Resolve a relative date once, so that every stage's batch works on the same run directory.
case "$RUN_DATE" in
  yesterday|today)
    RUN_DATE="$(python3 -c 'import datetime as d, sys; n = d.datetime.now(d.timezone.utc).date()
print(n - d.timedelta(days=1) if sys.argv[1] == "yesterday" else n)' "$RUN_DATE")" ;;
esac
ARTIFACTS="gs://$BUCKET/$PREFIX"
CONFIG="${CONFIG:-$ARTIFACTS/conf/dataproc.yaml}"

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

ENGINE="$(python3 -c 'import sys, yaml
print(((yaml.safe_load(open(sys.argv[1])) or {}).get("dedup") or {}).get("engine", "star"))' "$LOCAL_CONFIG")"
extra=()
if [[ "$ENV_ARCHIVE" == 1 ]]; then
  [[ -n "$RUNTIME_PYTHON" ]] || { echo "--env-archive: unknown Python for runtime $VERSION" >&2; exit 2; }
  extra+=(--default "spark.archives=$ARTIFACTS/dist/env-py$RUNTIME_PYTHON.tar.gz#environment"
          --default "spark.pyspark.python=./environment/bin/python")
fi
# The config's settings, without its cluster jars (Scala 2.12) and executor sizes Serverless decides.
PROPS="$(python3 "$ROOT/deploy/spark_conf.py" "$LOCAL_CONFIG" --format dataproc-job \
          --sub "YOUR_BUCKET=$BUCKET" --drop spark.jars --drop spark.executor.memory \
          --drop spark.executor.memoryOverhead "${extra[@]}")"

common=(--region "$REGION" --version "$VERSION" --deps-bucket "gs://$BUCKET"
        --py-files "$ARTIFACTS/dist/pretrain_pipeline.zip")
if [[ "$ENGINE" == graphframes ]]; then
  JARS="$ARTIFACTS/jars/graphframes-spark3_${SCALA}-${GRAPHFRAMES_VERSION}.jar"
  JARS="$JARS,$ARTIFACTS/jars/graphframes-graphx-spark3_${SCALA}-${GRAPHFRAMES_VERSION}.jar"
  common+=(--jars "$JARS")
fi
[[ -n "$PROPS" ]] && common+=(--properties "$PROPS")
[[ -n "$PROJECT" ]] && common+=(--project "$PROJECT")
[[ -n "$SUBNET" ]] && common+=(--subnet "$SUBNET")
[[ -n "$SERVICE_ACCOUNT" ]] && common+=(--service-account "$SERVICE_ACCOUNT")
[[ -n "$CONTAINER_IMAGE" ]] && common+=(--container-image "$CONTAINER_IMAGE")

suffix="$(date -u +%Y%m%d%H%M%S)"
IFS=',' read -r -a stage_list <<< "$STAGES"
for stage in "${stage_list[@]}"; do
  job="job_${stage//-/_}"
  [[ -f "$ROOT/jobs/$job.py" ]] || { echo "no job for stage '$stage' (jobs/$job.py)" >&2; exit 2; }
  batch="pretrain-${stage}-${suffix}"
  run gcloud dataproc batches submit pyspark "$ARTIFACTS/jobs/$job.py" --batch "$batch" "${common[@]}" \
    -- --config "$CONFIG" --date "$RUN_DATE" ${INDEX:+--set "dedup.index=$INDEX"}
done
