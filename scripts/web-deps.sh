#!/usr/bin/env bash
# web-deps.sh - check that Node.js is recent enough for the dashboard's build and tests
# (Vite needs 20.19+ or 22.12+) and install web/app's npm packages when package-lock.json
# changed since the last install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../web/app"

if ! command -v node >/dev/null || ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) || (a === 20 && b >= 19) ? 0 : 1)'; then
	echo "web-deps: the dashboard's build and tests need Node.js 20.19+ or 22.12+ (Vite's requirement; found: $(node --version 2>/dev/null || echo none)); see https://nodejs.org" >&2
	exit 1
fi
if ! cmp -s package-lock.json node_modules/.installed-lock; then
	npm ci --no-audit --no-fund
	cp package-lock.json node_modules/.installed-lock
fi
