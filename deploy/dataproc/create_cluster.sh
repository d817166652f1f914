#!/usr/bin/env bash
# Create a Dataproc cluster sized from a few parameters, with the pipeline's dependencies, labelled
# pretrain-pipeline=ready, for ad-hoc runs (the workflow template brings its own managed cluster).
# With --managed-template NAME, this shape replaces NAME's managed cluster (created per run, deleted
# after it).
#
# Usage: deploy/dataproc/create_cluster.sh --bucket BUCKET [--prefix pretrain] [--project P]
#   [--region us-central1] [--cluster pretrain] [--workers 4] [--worker-type n2-highmem-8]
#   [--master-type n2-standard-8] [--disk-gb 500] [--image-version 2.2-debian12]
#   [--deps wheelhouse|pip|env|image] [--pip-index-url URL] [--image IMAGE_URI]
#   [--config conf/dataproc.yaml] [--max-idle 2h] [--subnet SUBNET] [--properties 'spark:K=V|spark:K=V']
#   [--managed-template NAME] [--numba-cache] [--dry-run]
#
# --deps wheelhouse  (default) init action installs from dist/wheelhouse in GCS (no internet needed;
#                    build_artifacts.sh --wheelhouse)
# --deps pip         init action pip-installs requirements from PyPI or --pip-index-url: needs Cloud
#                    NAT or a mirror (Dataproc 2.2+ nodes have internal IPs only by default)
# --deps env         packed virtualenv: spark.archives=dist/env-py3.11.tar.gz#environment for executors,
#                    unpacked on the master for the driver (no internet)
# --deps image       a custom image (--image) that already has the dependencies (no init action)
# --numba-cache      executors get dist/numba-cache.tar.gz (build_artifacts.sh --numba-cache on this
#                    machine type's CPU and the image's Python): no numba kernel compiles on a fresh cluster
# Spark settings: computed from the worker shape, then the config's spark.settings (which win),
# then --properties.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUCKET="${BUCKET:-}"
PREFIX="${PREFIX:-pretrain}"
PROJECT="${PROJECT:-}"
REGION="${REGION:-us-central1}"
CLUSTER="${CLUSTER:-pretrain}"
WORKERS="${WORKERS:-4}"
WORKER_TYPE="${WORKER_TYPE:-n2-highmem-8}"
MASTER_TYPE="${MASTER_TYPE:-n2-standard-8}"
DISK_GB="${DISK_GB:-500}"
IMAGE_VERSION="${IMAGE_VERSION:-2.2-debian12}"
DEPS="${DEPS:-wheelhouse}"
PIP_INDEX_URL="${PIP_INDEX_URL:-}"
IMAGE=""
CONFIG="$ROOT/conf/dataproc.yaml"
MAX_IDLE="${MAX_IDLE:-2h}"
SUBNET=""
EXTRA_PROPS=""
MANAGED_TEMPLATE=""
NUMBA_CACHE=0
DRY_RUN=0

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bucket) BUCKET="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --project) PROJECT="$2"; shift 2 ;;
    --region) REGION="$2"; shift 2 ;;
    --cluster) CLUSTER="$2"; shift 2 ;;
    --workers) WORKERS="$2"; shift 2 ;;
    --worker-type) WORKER_TYPE="$2"; shift 2 ;;
    --master-type) MASTER_TYPE="$2"; shift 2 ;;
    --disk-gb) DISK_GB="$2"; shift 2 ;;
    --image-version) IMAGE_VERSION="$2"; shift 2 ;;
    --deps) DEPS="$2"; shift 2 ;;
    --pip-index-url) PIP_INDEX_URL="$2"; shift 2 ;;
    --image) IMAGE="$2"; shift 2 ;;
    --config) CONFIG="$2"; shift 2 ;;
    --max-idle) MAX_IDLE="$2"; shift 2 ;;
    --subnet) SUBNET="$2"; shift 2 ;;
    --properties) EXTRA_PROPS="$2"; shift 2 ;;
    --managed-template) MANAGED_TEMPLATE="$2"; shift 2 ;;
    --numba-cache) NUMBA_CACHE=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

[[ -n "$BUCKET" ]] || { echo "--bucket is required" >&2; exit 2; }
[[ "$WORKERS" =~ ^[0-9]+$ && "$WORKERS" -ge 2 ]] || { echo "--workers must be >= 2" >&2; exit 2; }
ARTIFACTS="gs://$BUCKET/$PREFIX"

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

# Size executors from the machine type: <family>-<standard|highmem|highcpu>-<vCPUs>.
VCPUS="${WORKER_TYPE##*-}"
[[ "$VCPUS" =~ ^[0-9]+$ ]] || { echo "cannot read vCPUs from --worker-type $WORKER_TYPE" >&2; exit 2; }
case "$WORKER_TYPE" in
  *-highmem-*) GB_PER_VCPU=8 ;;
  *-highcpu-*) GB_PER_VCPU=1 ;;
  *) GB_PER_VCPU=4 ;;
esac
EXEC_CORES=$(( VCPUS >= 4 ? 4 : VCPUS ))
EXECS_PER_WORKER=$(( VCPUS / EXEC_CORES ))
# YARN gets roughly 75% of a Dataproc worker's memory (yarn.nodemanager.resource.memory-mb); 2 GiB of
# it stay free for the application master; 1/8 of each executor's share goes to memoryOverhead.
YARN_GB=$(( VCPUS * GB_PER_VCPU * 75 / 100 ))
EXEC_SHARE_GB=$(( (YARN_GB - 2) / EXECS_PER_WORKER ))
EXEC_MEM_GB=$(( EXEC_SHARE_GB * 7 / 8 ))
OVERHEAD_GB=$(( EXEC_SHARE_GB - EXEC_MEM_GB ))
(( EXEC_MEM_GB >= 1 && OVERHEAD_GB >= 1 )) || { echo "--worker-type $WORKER_TYPE is too small" >&2; exit 2; }
SHUFFLE_PARTITIONS=$(( WORKERS * VCPUS * 3 ))

defaults=(
  --default "spark.executor.cores=$EXEC_CORES"
  --default "spark.executor.memory=${EXEC_MEM_GB}g"
  --default "spark.executor.memoryOverhead=${OVERHEAD_GB}g"
  --default "spark.sql.shuffle.partitions=$SHUFFLE_PARTITIONS"
)
case "$DEPS" in
  pip|wheelhouse|image) ;;
  env)
    defaults+=(
      --default "spark.archives=$ARTIFACTS/dist/env-py3.11.tar.gz#environment"
      --default "spark.pyspark.python=./environment/bin/python"
      --default "spark.pyspark.driver.python=/opt/pretrain-env/bin/python"
    ) ;;
  *) echo "--deps must be pip, wheelhouse, env or image" >&2; exit 2 ;;
esac
numba_args=()
[[ "$NUMBA_CACHE" == 1 ]] && numba_args=(--numba-cache "$ARTIFACTS/dist")
PROPS="$(python3 "$ROOT/deploy/spark_conf.py" "$CONFIG" --format dataproc-cluster \
          --sub "YOUR_BUCKET=$BUCKET" "${defaults[@]}" "${numba_args[@]}")"
if [[ -n "$EXTRA_PROPS" ]]; then
  PROPS="$PROPS|${EXTRA_PROPS#^|^}"
fi

shape=(
  --region "$REGION"
  --num-workers "$WORKERS"
  --worker-machine-type "$WORKER_TYPE"
  --master-machine-type "$MASTER_TYPE"
  --worker-boot-disk-size "${DISK_GB}GB"
  --master-boot-disk-size 200GB
  --properties "$PROPS"
  --labels pretrain-pipeline=ready
)
[[ -n "$PROJECT" ]] && shape+=(--project "$PROJECT")
[[ -n "$SUBNET" ]] && shape+=(--subnet "$SUBNET")
if [[ "$DEPS" == image ]]; then
  [[ -n "$IMAGE" ]] || { echo "--deps image needs --image projects/P/global/images/NAME" >&2; exit 2; }
  shape+=(--image "$IMAGE")
else
  shape+=(--image-version "$IMAGE_VERSION")
  metadata="PIPELINE_DIST=$ARTIFACTS/dist,PIPELINE_DEPS=$DEPS"
  [[ -n "$PIP_INDEX_URL" ]] && metadata="$metadata,PIP_INDEX_URL=$PIP_INDEX_URL"
  shape+=(
    --initialization-actions "$ARTIFACTS/deploy/dataproc/init_install_deps.sh"
    --initialization-action-timeout 20m
    --metadata "$metadata"
  )
fi

if [[ -n "$MANAGED_TEMPLATE" ]]; then
  run gcloud dataproc workflow-templates set-managed-cluster "$MANAGED_TEMPLATE" \
    --cluster-name "$CLUSTER" "${shape[@]}"
else
  run gcloud dataproc clusters create "$CLUSTER" "${shape[@]}" --max-idle "$MAX_IDLE" \
    --enable-component-gateway
fi
