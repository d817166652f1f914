#!/usr/bin/env bash
# The pipeline on AWS EMR 7.x (Spark 3.5, Scala 2.12, Java 17).
#
# Usage: deploy/emr/run.sh create --bucket B [--prefix pretrain] [--region us-east-1]
#          [--release emr-7.13.0] [--workers 4] [--instance-type r6i.2xlarge] [--subnet subnet-...]
#          [--service-role EMR_DefaultRole] [--instance-profile EMR_EC2_DefaultRole]
#          [--create-default-roles] [--wheelhouse] [--log-uri s3://B/emr-logs/]
#          [--idle-timeout 3600] [--numba-cache] [--dry-run]
#        deploy/emr/run.sh steps --cluster-id j-XXXX --bucket B --date YYYY-MM-DD [--index s3://B/dedup-index]
#          [--dry-run]
#
# create: a cluster with the bootstrap action (deploy/emr/bootstrap.sh), Spark pointed at
#         python3.11, and conf/emr.yaml's spark.settings as spark-defaults; it stops after
#         --idle-timeout seconds without work. The service role and EC2 instance profile are named
#         explicitly and checked first: if they do not exist, it stops and says so, or with
#         --create-default-roles runs `aws emr create-default-roles` (once per account) first.
#         --numba-cache: executors get dist/numba-cache.tar.gz (build_artifacts.sh --numba-cache with
#         python3.11 on the instance type's CPU family): no numba kernel compiles on a fresh cluster.
# steps:  adds deploy/emr/steps.json (the CLI's --steps shape: one Spark step per stage, in order)
#         for one date; --index adds --set dedup.index=URL to every step (scheduled runs dedup against
#         every earlier run that used that index). The AWS CLI honours AWS_ENDPOINT_URL, AWS_PROFILE
#         and friends as usual.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ACTION="${1:-}"
[[ $# -gt 0 ]] && shift
BUCKET="${BUCKET:-}"
PREFIX="${PREFIX:-pretrain}"
REGION="${REGION:-us-east-1}"
RELEASE="${RELEASE:-emr-7.13.0}"   # Spark 3.5, Scala 2.12; standard support to 2028-04-21
WORKERS="${WORKERS:-4}"
INSTANCE_TYPE="${INSTANCE_TYPE:-r6i.2xlarge}"
SUBNET=""
SERVICE_ROLE="${SERVICE_ROLE:-EMR_DefaultRole}"
INSTANCE_PROFILE="${INSTANCE_PROFILE:-EMR_EC2_DefaultRole}"
CREATE_ROLES=0
WHEELHOUSE=0
LOG_URI=""
IDLE_TIMEOUT="${IDLE_TIMEOUT:-3600}"
CLUSTER_ID=""
RUN_DATE=""
INDEX=""
PYTHON="/usr/bin/python3.11"
NUMBA_CACHE=0
DRY_RUN=0

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bucket) BUCKET="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --region) REGION="$2"; shift 2 ;;
    --release) RELEASE="$2"; shift 2 ;;
    --workers) WORKERS="$2"; shift 2 ;;
    --instance-type) INSTANCE_TYPE="$2"; shift 2 ;;
    --subnet) SUBNET="$2"; shift 2 ;;
    --service-role) SERVICE_ROLE="$2"; shift 2 ;;
    --instance-profile) INSTANCE_PROFILE="$2"; shift 2 ;;
    --create-default-roles) CREATE_ROLES=1; shift ;;
    --wheelhouse) WHEELHOUSE=1; shift ;;
    --log-uri) LOG_URI="$2"; shift 2 ;;
    --idle-timeout) IDLE_TIMEOUT="$2"; shift 2 ;;
    --cluster-id) CLUSTER_ID="$2"; shift 2 ;;
    --date) RUN_DATE="$2"; shift 2 ;;
    --index) INDEX="$2"; shift 2 ;;
    --numba-cache) NUMBA_CACHE=1; shift ;;
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
    numba_args=()
    [[ "$NUMBA_CACHE" == 1 ]] && numba_args=(--numba-cache "$ARTIFACTS/dist")
    python3 - "$TMP/configurations.json" "$PYTHON" \
        <(python3 "$ROOT/deploy/spark_conf.py" "$ROOT/conf/emr.yaml" --format emr --sub "YOUR_BUCKET=$BUCKET" \
            "${numba_args[@]}") <<'PY'
import json, sys
out, python, defaults = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(defaults).read().strip()
config = json.loads(text) if text else []
env = {"Classification": "export", "Properties": {"PYSPARK_PYTHON": python}}
config.append({"Classification": "spark-env", "Properties": {}, "Configurations": [env]})
open(out, "w").write(json.dumps(config, indent=2) + "\n")
PY
    if [[ "$DRY_RUN" == 0 ]]; then
      # --use-default-roles fails in an account where create-default-roles never ran: check instead.
      roles_exist() {
        aws iam get-role --role-name "$SERVICE_ROLE" >/dev/null 2>&1 &&
          aws iam get-instance-profile --instance-profile-name "$INSTANCE_PROFILE" >/dev/null 2>&1
      }
      if ! roles_exist; then
        if [[ "$CREATE_ROLES" == 1 ]]; then
          aws emr create-default-roles --region "$REGION" >/dev/null
        fi
        roles_exist || {
          echo "IAM role '$SERVICE_ROLE' or instance profile '$INSTANCE_PROFILE' not found: run" \
               "'aws emr create-default-roles' once in this account (or pass --create-default-roles)," \
               "or name existing ones with --service-role / --instance-profile" >&2
          exit 1
        }
      fi
    fi
    bootstrap_args="--dist,$ARTIFACTS/dist"
    [[ "$WHEELHOUSE" == 1 ]] && bootstrap_args="$bootstrap_args,--wheelhouse"
    args=(--name pretrain-pipeline --release-label "$RELEASE" --applications Name=Spark
          --region "$REGION" --service-role "$SERVICE_ROLE"
          --instance-groups "InstanceGroupType=MASTER,InstanceCount=1,InstanceType=$INSTANCE_TYPE"
                            "InstanceGroupType=CORE,InstanceCount=$WORKERS,InstanceType=$INSTANCE_TYPE"
          --bootstrap-actions "Path=$ARTIFACTS/deploy/emr/bootstrap.sh,Name=pretrain-deps,Args=[$bootstrap_args]"
          --configurations "file://$TMP/configurations.json"
          --auto-termination-policy "IdleTimeout=$IDLE_TIMEOUT"
          --log-uri "${LOG_URI:-s3://$BUCKET/emr-logs/}")
    ec2="InstanceProfile=$INSTANCE_PROFILE"
    [[ -n "$SUBNET" ]] && ec2="$ec2,SubnetId=$SUBNET"
    args+=(--ec2-attributes "$ec2")
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
    [[ "$RUN_DATE" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || { echo "--date $RUN_DATE: expected YYYY-MM-DD" >&2; exit 2; }
    index_sub=()  # --index: every step gets --set dedup.index=INDEX after its --date
    [[ -n "${INDEX:-}" ]] && index_sub=(-e "s#\"RUN_DATE\"#\"RUN_DATE\", \"--set\", \"dedup.index=$INDEX\"#g")
    sed "${index_sub[@]}" -e "s#s3://ARTIFACTS#$ARTIFACTS#g" -e "s#RUN_DATE#$RUN_DATE#g" "$ROOT/deploy/emr/steps.json" \
      > "$TMP/steps.json"
    [[ "$DRY_RUN" == 1 ]] && cat "$TMP/steps.json"
    run aws emr add-steps --region "$REGION" --cluster-id "$CLUSTER_ID" --steps "file://$TMP/steps.json"
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
