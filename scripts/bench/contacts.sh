#!/usr/bin/env bash
# Load test of the contact endpoints over HTTP: GET a contact by id, and the
# first page of the list with its total, each with 20 concurrent clients for
# 10 seconds (hey). Prints requests per second and fails on any non-200.
#   BASE_URL=http://localhost:8080 KEY=cbk_... BOOK_ID=<uuid> scripts/bench/contacts.sh
# The book should hold 100,000 contacts: see prepare.sh and seed.sql.
# CONCURRENCY and DURATION override the defaults.
set -euo pipefail
: "${BASE_URL:?}" "${KEY:?}" "${BOOK_ID:?}"
CONCURRENCY=${CONCURRENCY:-20}
DURATION=${DURATION:-10s}

hey="$("$(dirname "${BASH_SOURCE[0]}")/../gotool.sh" github.com/rakyll/hey@v0.1.4)"

auth=(-H "Authorization: Bearer $KEY" -H "X-Book-ID: $BOOK_ID")
page=$(curl -fsS "${auth[@]}" "$BASE_URL/api/v1/contacts?limit=1")
contact=$(sed -n 's/.*"data":\[{"id":"\([^"]*\)".*/\1/p' <<<"$page")
total=$(sed -n 's/.*"total":\([0-9]*\).*/\1/p' <<<"$page")
[ -n "$contact" ] || { echo "the book has no contacts; seed it first (prepare.sh)" >&2; exit 1; }
echo "book $BOOK_ID: $total contacts; $CONCURRENCY clients, $DURATION per endpoint"

status=0
run() {
  local name=$1 url=$2 out rps bad
  out=$("$hey" -z "$DURATION" -c "$CONCURRENCY" "${auth[@]}" "$url")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  bad=$(sed -n '/Status code distribution/,/^$/p' <<<"$out" | grep -v '\[200\]' | grep '\[' || true)
  printf '%-24s %12s req/s\n' "$name" "$rps"
  if [ -n "$bad" ] || grep -q '^Error distribution' <<<"$out"; then
    echo "  non-200 answers or errors:" >&2
    sed -n '/Status code distribution/,$p' <<<"$out" >&2
    status=1
  fi
}
run "GET /contacts/{id}" "$BASE_URL/api/v1/contacts/$contact"
run "GET /contacts (total)" "$BASE_URL/api/v1/contacts?limit=50"
exit $status
