#!/usr/bin/env bash
# Installs what the tests and benchmarks need beyond npm: Debian's Chromium (browser tests), PostgreSQL's
# server binaries (the PostgreSQL store's tests), nginx (the tests of the server behind a proxy) and curl
# (the README's curl example, run as written).
# Does nothing when all are present.
set -euo pipefail

need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "Missing system packages: ${need[*]}. Install them (apt-get install -y ${need[*]}) and run again." >&2
  exit 1
fi
echo "Installing ${need[*]} from Debian's packages…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
