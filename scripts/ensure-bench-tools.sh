#!/usr/bin/env bash
# Installs what the benchmarks drive or compare against, from Debian's packages, when missing:
# wrk (the HTTP load generator), nginx-light (the landmark of the download bench) and redis-server (the
# Redis under the BullMQ landmark of the dispatch bench; BullMQ's client, ioredis, is a dev dependency).
# A no-op when all three are present.
set -euo pipefail
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "bench tools: installing ${missing[*]} from Debian" >&2
sudo_=""
if [ "$(id -u)" -ne 0 ]; then sudo_="sudo -n"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_ apt-get update -qq >&2
$sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
# The packages enable system services; the benches start their own instances on loopback instead.
for unit in nginx redis-server; do
  $sudo_ systemctl disable --now "$unit" >/dev/null 2>&1 || $sudo_ service "$unit" stop >/dev/null 2>&1 || true
done
