#!/usr/bin/env bash
# Prepares a running contactbook for scripts/bench/contacts.sh: signs up a
# user, creates a book and a team API key through the API, seeds the book
# with 100,000 contacts (seed.sql) and prints the variables contacts.sh
# reads (and the user's TOKEN and TEAM_ID, for webhooks), ready for eval:
#   eval "$(BASE_URL=http://localhost:8080 DATABASE_URL=postgres://... scripts/bench/prepare.sh)"
# Needs curl and psql.
set -euo pipefail
: "${BASE_URL:?BASE_URL of the running service}" "${DATABASE_URL:?DATABASE_URL of its database}"
COUNT=${COUNT:-100000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# field NAME: the value of the first "NAME":"value" in stdin.
field() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | cut -d '"' -f 4; }
post() { curl -fsS -X POST -H 'Content-Type: application/json' "$@"; }

email="bench-$(date +%s)-$RANDOM@example.com"
signup=$(post "$BASE_URL/api/auth/signup" -d "{\"email\":\"$email\",\"password\":\"bench password 123\",\"name\":\"Bench\",\"team_name\":\"Bench\"}")
token=$(field token <<<"$signup")
team=$(grep -o '"team":{"id":"[^"]*"' <<<"$signup" | cut -d '"' -f 6)
book=$(post -H "Authorization: Bearer $token" "$BASE_URL/api/books" -d "{\"team_id\":\"$team\",\"name\":\"Bench\"}" | field id)
key=$(post -H "Authorization: Bearer $token" "$BASE_URL/api/teams/$team/api-keys" -d '{"name":"bench"}' | field key)
psql "$DATABASE_URL" -q -v book_id="$book" -v count="$COUNT" -f "$here/seed.sql" >&2
printf 'export BASE_URL=%q KEY=%q BOOK_ID=%q TOKEN=%q TEAM_ID=%q\n' "$BASE_URL" "$key" "$book" "$token" "$team"
