#!/usr/bin/env bash
# Installs what the tests and benchmarks need beyond npm: Debian's Chromium (browser tests), PostgreSQL's
# server binaries and its `hll` extension (the PostgreSQL store's tests), nginx (the tests of the server
# behind a proxy) and curl (the README's curl example, run as written).
# Does nothing when all are present.
set -euo pipefail

# The major version of the installed PostgreSQL server, or nothing.
pg_major() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sed 's#.*/postgresql/\([0-9]*\)/bin#\1#' | sort -n | tail -1; }
# The hll extension's package for the installed server (postgresql-15-hll on Debian 12), when missing.
hll_need() {
  local major
  major=$(pg_major)
  if [ -n "$major" ] && [ ! -f "/usr/share/postgresql/$major/extension/hll.control" ]; then echo "postgresql-$major-hll"; fi
}

need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
hll=$(hll_need)
[ -n "$hll" ] && need+=("$hll")
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "Missing system packages: ${need[*]}. Install them (apt-get install -y ${need[*]}) and run again." >&2
  exit 1
fi
echo "Installing ${need[*]} from Debian's packages…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# A server installed just now: its version's extension.
hll=$(hll_need)
if [ -n "$hll" ]; then
  echo "Installing $hll from Debian's packages…"
  apt-get install -y -qq --no-install-recommends "$hll" >/dev/null
fi
