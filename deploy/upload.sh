#!/usr/bin/env bash
# Stage everything a cluster run needs under one GCS or S3 prefix (run build_artifacts.sh first):
#   <dest>/jobs/*.py  <dest>/conf/*.yaml (YOUR_BUCKET replaced)  <dest>/dist/ (zip, wheel, requirements,
#   wheelhouse/, env-py*.tar.gz and numba-cache.tar.gz when built)  <dest>/deploy/... (init action, bootstrap)
#   <dest>/jars/ GraphFrames JVM jars fetched from Maven Central here, so clusters need no internet
# With --sample-date D, also copies the bundled sample to <bucket>/raw/<source>/dt=D/ for a first run.
#
# Usage: deploy/upload.sh --dest gs://my-bucket/pretrain [--dist dist] [--graphframes 0.10.1]
#          [--scala 2.12] [--scala 2.13] [--no-jars] [--sample-date 2026-11-22] [--dry-run]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST=""
DIST="$ROOT/dist"
GRAPHFRAMES_VERSION="${GRAPHFRAMES_VERSION:-0.10.1}"
SCALAS=()
JARS=1
SAMPLE_DATE=""
DRY_RUN=0
MAVEN="${MAVEN:-https://repo1.maven.org/maven2}"

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --dest) DEST="${2%/}"; shift 2 ;;
    --dist) DIST="$2"; shift 2 ;;
    --graphframes) GRAPHFRAMES_VERSION="$2"; shift 2 ;;
    --scala) SCALAS+=("$2"); shift 2 ;;
    --no-jars) JARS=0; shift ;;
    --sample-date) SAMPLE_DATE="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

case "$DEST" in
  gs://*) COPY=(gcloud storage cp) ;;
  s3://*) COPY=(aws s3 cp --only-show-errors) ;;
  *) echo "--dest must be gs://BUCKET/PREFIX or s3://BUCKET/PREFIX" >&2; exit 2 ;;
esac
[[ ${#SCALAS[@]} -gt 0 ]] || SCALAS=(2.12)
SCHEME="${DEST%%://*}"
BUCKET="${DEST#*://}"
BUCKET="${BUCKET%%/*}"

run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

if [[ ! -f "$DIST/pretrain_pipeline.zip" && "$DRY_RUN" == 0 ]]; then
  echo "$DIST/pretrain_pipeline.zip not found: run deploy/build_artifacts.sh first" >&2
  exit 1
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

for job in "$ROOT"/jobs/*.py; do
  run "${COPY[@]}" "$job" "$DEST/jobs/$(basename "$job")"
done
mkdir -p "$TMP/conf"
for conf in "$ROOT"/conf/*.yaml; do
  sed "s#YOUR_BUCKET#$BUCKET#g" "$conf" > "$TMP/conf/$(basename "$conf")"
  run "${COPY[@]}" "$TMP/conf/$(basename "$conf")" "$DEST/conf/$(basename "$conf")"
done
for file in "$DIST"/pretrain_pipeline.zip "$DIST"/spark_pretrain_pipeline-*.whl \
            "$DIST"/requirements-cluster.txt "$DIST"/env-py*.tar.gz "$DIST"/numba-cache.tar.gz; do
  [[ -f "$file" || "$DRY_RUN" == 1 ]] || continue
  run "${COPY[@]}" "$file" "$DEST/dist/$(basename "$file")"
done
if [[ -d "$DIST/wheelhouse" ]]; then
  for file in "$DIST"/wheelhouse/*.whl; do
    run "${COPY[@]}" "$file" "$DEST/dist/wheelhouse/$(basename "$file")"
  done
fi
run "${COPY[@]}" "$ROOT/deploy/dataproc/init_install_deps.sh" "$DEST/deploy/dataproc/init_install_deps.sh"
run "${COPY[@]}" "$ROOT/deploy/emr/bootstrap.sh" "$DEST/deploy/emr/bootstrap.sh"

if [[ "$JARS" == 1 ]]; then
  # graphframes-spark3 needs its graphframes-graphx companion (a compile dependency since 0.10).
  for scala in "${SCALAS[@]}"; do
    for artifact in graphframes-spark3 graphframes-graphx-spark3; do
      name="${artifact}_${scala}-${GRAPHFRAMES_VERSION}.jar"
      url="$MAVEN/io/graphframes/${artifact}_${scala}/${GRAPHFRAMES_VERSION}/$name"
      run curl --fail --silent --show-error --location -o "$TMP/$name" "$url"
      run "${COPY[@]}" "$TMP/$name" "$DEST/jars/$name"
    done
  done
fi

if [[ -n "$SAMPLE_DATE" ]]; then
  RAW="$SCHEME://$BUCKET/raw"
  for file in "$ROOT"/pipeline/sample/web/*.jsonl; do
    run "${COPY[@]}" "$file" "$RAW/web/dt=$SAMPLE_DATE/$(basename "$file")"
  done
  run "${COPY[@]}" "$ROOT/pipeline/sample/wiki/wiki.jsonl.gz" "$RAW/wiki/dt=$SAMPLE_DATE/wiki.jsonl.gz"
  run "${COPY[@]}" "$ROOT/pipeline/sample/forum/forum.parquet" "$RAW/forum/dt=$SAMPLE_DATE/forum.parquet"
fi
echo "staged under $DEST"
