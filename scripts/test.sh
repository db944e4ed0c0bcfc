#!/usr/bin/env bash
# `npm test`: every check the project has, in the order that fails fastest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system-deps.sh
bash scripts/check-lockfile.sh
npx tsc --noEmit
npx vitest run "$@"
