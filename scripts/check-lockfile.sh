#!/usr/bin/env bash
# Fails when `npm install` would change package-lock.json (a dependency or a workspace's manifest
# changed without the lockfile): resolves the lockfile again from the npm cache, compares, and
# puts the original back either way.
set -euo pipefail
cd "$(dirname "$0")/.."
saved="$(mktemp)"
cp package-lock.json "$saved"
trap 'cp "$saved" package-lock.json; rm -f "$saved"' EXIT
npm install --package-lock-only --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null
if ! cmp -s package-lock.json "$saved"; then
  echo "package-lock.json is out of date: run npm install and commit the lockfile." >&2
  diff <(grep -v '^\s*"resolved"' "$saved") <(grep -v '^\s*"resolved"' package-lock.json) | head -20 >&2 || true
  exit 1
fi
