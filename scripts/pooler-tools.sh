#!/usr/bin/env bash
# Installs PgBouncer and HAProxy from Debian's packages when they are missing:
# the PgBouncer tests (internal/postgres, internal/httpapi) and the scale-out
# reliability scenario run them. Needs root and apt-get; otherwise it says what
# is missing and exits 0, and the tests that need the tools skip, saying so.
set -euo pipefail

missing=()
[[ -x /usr/sbin/pgbouncer ]] || command -v pgbouncer >/dev/null 2>&1 || missing+=(pgbouncer)
[[ -x /usr/sbin/haproxy ]] || command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	echo "pooler-tools: ${missing[*]} missing; install them (apt-get install ${missing[*]}) or the tests that need them skip" >&2
	exit 0
fi
echo "pooler-tools: installing ${missing[*]} with apt-get" >&2
apt-get update -qq >&2
# Whatever the packages' own services do is left alone: the tests run their own
# instances, on ports of their own.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
