#!/usr/bin/env bash
# test-web.sh - the dashboard's unit tests (Vitest) and browser tests (playwright-core
# driving Debian's chromium against the real binary on a fresh database next to the one
# scripts/devdb.sh gives). Installs the npm packages, and chromium and psql with apt-get
# when they are missing (CHROMIUM_PATH picks another browser).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$repo/scripts/web-deps.sh"
if [[ -z "${CHROMIUM_PATH:-}" ]] && ! command -v chromium >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
if ! command -v psql >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client
fi
DATABASE_URL="$("$repo/scripts/devdb.sh" contactbook_test)"
export DATABASE_URL
cd "$repo/web/app"
npm test
npm run test:browser
