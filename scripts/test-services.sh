#!/usr/bin/env bash
# Starts (or stops) the servers the second test run needs, on loopback only:
#   PostgreSQL 15 from Debian's packages on port 55432 (cluster "gtatest", trust auth, fsync off;
#   PG_CLUSTER, PG_PORT, S3_PORT and STATE_DIR choose others)
#   s3rver from the npm dev dependencies on port 4569 (keys S3RVER/S3RVER, bucket "gta-test")
# `start` installs PostgreSQL when it is missing (root, apt-get) and prints the variables to export.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_PORT="${PG_PORT:-55432}"
# Another cluster name and ports let a second run (a CI check of a fresh clone) beside a developer's.
PG_CLUSTER="${PG_CLUSTER:-gtatest}"
S3_PORT="${S3_PORT:-4569}"
STATE_DIR="${STATE_DIR:-$PWD/.tmp/test-services}"

pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1; }

start() {
  mkdir -p "$STATE_DIR"
  if [ -z "$(pg_version)" ]; then
    echo "installing PostgreSQL from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq postgresql >/dev/null
  fi
  local v; v="$(pg_version)"
  if ! pg_lsclusters -h 2>/dev/null | awk '{print $2}' | grep -qx "$PG_CLUSTER"; then
    # A UTF-8 locale whatever the caller's environment: under plain C, lower() folds ASCII only and the
    # operator's search of Cyrillic names finds nothing (docs/deployment.md).
    pg_createcluster "$v" "$PG_CLUSTER" --port "$PG_PORT" --start-conf manual --locale C.UTF-8 \
      --pgoption fsync=off --pgoption synchronous_commit=off --pgoption full_page_writes=off \
      --pgoption max_connections=300 -- --auth=trust >/dev/null
  fi
  pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" start >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.2
  done
  pg_isready -h 127.0.0.1 -p "$PG_PORT" >/dev/null

  if ! (exec 3<>"/dev/tcp/127.0.0.1/$S3_PORT") 2>/dev/null; then
    mkdir -p "$STATE_DIR/s3"
    nohup node_modules/.bin/node scripts/s3rver.ts "$STATE_DIR/s3" "$S3_PORT" gta-test >"$STATE_DIR/s3rver.log" 2>&1 &
    echo $! >"$STATE_DIR/s3rver.pid"
    for _ in $(seq 1 50); do
      (exec 3<>"/dev/tcp/127.0.0.1/$S3_PORT") 2>/dev/null && break
      sleep 0.2
    done
  fi
  echo "export TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/postgres"
  echo "export TEST_STORAGE_URL='s3://gta-test?endpoint=http://127.0.0.1:$S3_PORT&region=us-east-1&accessKeyId=S3RVER&secretAccessKey=S3RVER'"
}

stop() {
  local v; v="$(pg_version)"
  [ -n "$v" ] && pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" stop 2>/dev/null || true
  [ -n "$v" ] && pg_dropcluster "$v" "$PG_CLUSTER" 2>/dev/null || true
  if [ -f "$STATE_DIR/s3rver.pid" ]; then
    kill "$(cat "$STATE_DIR/s3rver.pid")" 2>/dev/null || true
    rm -f "$STATE_DIR/s3rver.pid"
  fi
  rm -rf "$STATE_DIR/s3"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
