#!/usr/bin/env bash
# The pipeline on AWS EMR 7.x (Spark 3.5, Scala 2.12, Java 17).
#
# Usage: deploy/emr/run.sh create --bucket B [--prefix pretrain] [--region us-east-1]
#          [--release emr-7.5.0] [--workers 4] [--instance-type r6i.2xlarge] [--subnet subnet-...]
#          [--wheelhouse] [--log-uri s3://B/emr-logs/] [--idle-timeout 3600] [--dry-run]
#        deploy/emr/run.sh steps --cluster-id j-XXXX --bucket B --date YYYY-MM-DD [--dry-run]
#
# create: a cluster with the bootstrap action (deploy/emr/bootstrap.sh), Spark pointed at
#         python3.11, and conf/emr.yaml's spark.settings as spark-defaults; it stops after
#         --idle-timeout seconds without work.
# steps:  adds deploy/emr/steps.json (one spark-submit step per stage, in order) for one date.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ACTION="${1:-}"
[[ $# -gt 0 ]] && shift
BUCKET="${BUCKET:-}"
PREFIX="${PREFIX:-pretrain}"
REGION="${REGION:-us-east-1}"
RELEASE="${RELEASE:-emr-7.5.0}"
WORKERS="${WORKERS:-4}"
INSTANCE_TYPE="${INSTANCE_TYPE:-r6i.2xlarge}"
SUBNET=""
WHEELHOUSE=0
LOG_URI=""
IDLE_TIMEOUT="${IDLE_TIMEOUT:-3600}"
CLUSTER_ID=""
RUN_DATE=""
PYTHON="/usr/bin/python3.11"
DRY_RUN=0

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bucket) BUCKET="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --region) REGION="$2"; shift 2 ;;
    --release) RELEASE="$2"; shift 2 ;;
    --workers) WORKERS="$2"; shift 2 ;;
    --instance-type) INSTANCE_TYPE="$2"; shift 2 ;;
    --subnet) SUBNET="$2"; shift 2 ;;
    --wheelhouse) WHEELHOUSE=1; shift ;;
    --log-uri) LOG_URI="$2"; shift 2 ;;
    --idle-timeout) IDLE_TIMEOUT="$2"; shift 2 ;;
    --cluster-id) CLUSTER_ID="$2"; shift 2 ;;
    --date) RUN_DATE="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -n "$BUCKET" ]] || { echo "--bucket is required" >&2; usage >&2; exit 2; }
ARTIFACTS="s3://$BUCKET/$PREFIX"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

case "$ACTION" in
  create)
    # spark-defaults from the config, plus the interpreter the bootstrap installed the pipeline into.
    python3 - "$TMP/configurations.json" "$PYTHON" \
        <(python3 "$ROOT/deploy/spark_conf.py" "$ROOT/conf/emr.yaml" --format emr --sub "YOUR_BUCKET=$BUCKET") <<'PY'
import json, sys
out, python, defaults = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(defaults).read().strip()
config = json.loads(text) if text else []
env = {"Classification": "export", "Properties": {"PYSPARK_PYTHON": python}}
config.append({"Classification": "spark-env", "Properties": {}, "Configurations": [env]})
json.dump(config, open(out, "w"), indent=2)
PY
    bootstrap_args="--dist,$ARTIFACTS/dist"
    [[ "$WHEELHOUSE" == 1 ]] && bootstrap_args="$bootstrap_args,--wheelhouse"
    args=(--name pretrain-pipeline --release-label "$RELEASE" --applications Name=Spark
          --region "$REGION" --use-default-roles
          --instance-groups "InstanceGroupType=MASTER,InstanceCount=1,InstanceType=$INSTANCE_TYPE"
                            "InstanceGroupType=CORE,InstanceCount=$WORKERS,InstanceType=$INSTANCE_TYPE"
          --bootstrap-actions "Path=$ARTIFACTS/deploy/emr/bootstrap.sh,Name=pretrain-deps,Args=[$bootstrap_args]"
          --configurations "file://$TMP/configurations.json"
          --auto-termination-policy "IdleTimeout=$IDLE_TIMEOUT"
          --log-uri "${LOG_URI:-s3://$BUCKET/emr-logs/}")
    [[ -n "$SUBNET" ]] && args+=(--ec2-attributes "SubnetId=$SUBNET")
    [[ "$DRY_RUN" == 1 ]] && cat "$TMP/configurations.json"
    run aws emr create-cluster "${args[@]}"
    ;;
  steps)
    [[ -n "$CLUSTER_ID" ]] || { echo "steps needs --cluster-id" >&2; exit 2; }
    [[ -n "$RUN_DATE" ]] || { echo "steps needs --date YYYY-MM-DD" >&2; exit 2; }
    # One date for every step, resolved here if relative.
    case "$RUN_DATE" in
      yesterday|today)
        RUN_DATE="$(python3 -c 'import datetime as d, sys; n = d.datetime.now(d.timezone.utc).date()
print(n - d.timedelta(days=1) if sys.argv[1] == "yesterday" else n)' "$RUN_DATE")" ;;
    esac
    {
      printf '{"JobFlowId": "%s", "Steps": ' "$CLUSTER_ID"
      sed -e "s#s3://ARTIFACTS#$ARTIFACTS#g" -e "s#RUN_DATE#$RUN_DATE#g" "$ROOT/deploy/emr/steps.json"
      printf '}\n'
    } > "$TMP/steps.json"
    [[ "$DRY_RUN" == 1 ]] && cat "$TMP/steps.json"
    run aws emr add-steps --region "$REGION" --cli-input-json "file://$TMP/steps.json"
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
