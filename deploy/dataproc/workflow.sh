#!/usr/bin/env bash
# The pipeline as a Dataproc workflow template: import it, run it for a date, or schedule it.
#
# Usage: deploy/dataproc/workflow.sh import   --bucket B [--prefix pretrain] [--region R] [--template T]
#                                             [--local-config conf/dataproc.yaml] [--index gs://B/dedup-index]
#                                             [--numba-cache]
#        deploy/dataproc/workflow.sh run      --bucket B --date YYYY-MM-DD [--config gs://...]
#        deploy/dataproc/workflow.sh schedule --bucket B --service-account SA@P.iam.gserviceaccount.com
#                                             [--cron "0 3 * * *"] [--time-zone Etc/UTC] [--project P]
# Common: [--project P] [--region us-central1] [--template pretrain-pipeline] [--dry-run]
#
# The template runs on a managed cluster: created for each instantiation, deleted when it ends, with
# the config's spark.settings as cluster properties (import renders them from --local-config).
# import --index: every job gets --set dedup.index=URL, so each scheduled run dedups against the runs
# before it and adds its documents to that index when its last stage ends.
# import --numba-cache: the managed cluster's executors get dist/numba-cache.tar.gz (build_artifacts.sh
# --numba-cache on the cluster's machine type and image, then upload.sh): a fresh cluster compiles no kernel.
# schedule creates a Cloud Scheduler job that instantiates the template every day with
# RUN_DATE=yesterday (UTC): each run reads raw/<source>/dt=<yesterday>/ and writes runs/<yesterday>/.
# The service account needs roles/dataproc.editor (and to act as the cluster's service account).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ACTION="${1:-}"
[[ $# -gt 0 ]] && shift
BUCKET="${BUCKET:-}"
PREFIX="${PREFIX:-pretrain}"
PROJECT="${PROJECT:-}"
REGION="${REGION:-us-central1}"
TEMPLATE="${TEMPLATE:-pretrain-pipeline}"
RUN_DATE=""
INDEX=""
CONFIG=""
LOCAL_CONFIG="$ROOT/conf/dataproc.yaml"
CRON="${CRON:-0 3 * * *}"
TIME_ZONE="${TIME_ZONE:-Etc/UTC}"
SERVICE_ACCOUNT="${SERVICE_ACCOUNT:-}"
NUMBA_CACHE=0
DRY_RUN=0

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bucket) BUCKET="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --project) PROJECT="$2"; shift 2 ;;
    --region) REGION="$2"; shift 2 ;;
    --template) TEMPLATE="$2"; shift 2 ;;
    --date) RUN_DATE="$2"; shift 2 ;;
    --config) CONFIG="$2"; shift 2 ;;
    --index) INDEX="$2"; shift 2 ;;
    --local-config) LOCAL_CONFIG="$2"; shift 2 ;;
    --cron) CRON="$2"; shift 2 ;;
    --time-zone) TIME_ZONE="$2"; shift 2 ;;
    --service-account) SERVICE_ACCOUNT="$2"; shift 2 ;;
    --numba-cache) NUMBA_CACHE=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

[[ -n "$BUCKET" ]] || { echo "--bucket is required" >&2; usage >&2; exit 2; }
ARTIFACTS="gs://$BUCKET/$PREFIX"
CONFIG="${CONFIG:-$ARTIFACTS/conf/dataproc.yaml}"
project_args=()
[[ -n "$PROJECT" ]] && project_args=(--project "$PROJECT")

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

case "$ACTION" in
  import)
    rendered="$(mktemp --suffix .yaml)"
    trap 'rm -f "$rendered"' EXIT
    # gs://ARTIFACTS filled in, and the config's spark.settings as the managed cluster's properties.
    index_args=()
    [[ -n "${INDEX:-}" ]] && index_args=(--index "$INDEX")  # every job gets --set dedup.index=INDEX
    [[ "$NUMBA_CACHE" == 1 ]] && index_args+=(--numba-cache)
    python3 "$ROOT/deploy/dataproc/render_template.py" --artifacts "$ARTIFACTS" --bucket "$BUCKET" \
      --config "$LOCAL_CONFIG" "${index_args[@]}" > "$rendered"
    [[ "$DRY_RUN" == 1 ]] && cat "$rendered"
    run gcloud dataproc workflow-templates import "$TEMPLATE" --region "$REGION" \
      "${project_args[@]}" --source "$rendered" --quiet
    ;;
  run)
    [[ -n "$RUN_DATE" ]] || { echo "run needs --date YYYY-MM-DD (or yesterday/today)" >&2; exit 2; }
    run gcloud dataproc workflow-templates instantiate "$TEMPLATE" --region "$REGION" \
      "${project_args[@]}" --parameters "CONFIG=$CONFIG,RUN_DATE=$RUN_DATE"
    ;;
  schedule)
    [[ -n "$SERVICE_ACCOUNT" ]] || { echo "schedule needs --service-account" >&2; exit 2; }
    if [[ -z "$PROJECT" ]]; then
      if [[ "$DRY_RUN" == 1 ]]; then PROJECT="PROJECT"; else PROJECT="$(gcloud config get-value project)"; fi
    fi
    uri="https://dataproc.googleapis.com/v1/projects/$PROJECT/regions/$REGION/workflowTemplates/$TEMPLATE:instantiate"
    body="{\"parameters\": {\"CONFIG\": \"$CONFIG\", \"RUN_DATE\": \"yesterday\"}}"
    run gcloud scheduler jobs create http "$TEMPLATE-daily" --project "$PROJECT" --location "$REGION" \
      --schedule "$CRON" --time-zone "$TIME_ZONE" --uri "$uri" --http-method POST \
      --headers "Content-Type=application/json" --message-body "$body" \
      --oauth-service-account-email "$SERVICE_ACCOUNT" \
      --oauth-token-scope "https://www.googleapis.com/auth/cloud-platform"
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
