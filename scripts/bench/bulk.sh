#!/usr/bin/env bash
# Times the four bulk operations on 10,000 contacts over HTTP against a
# running contactbook, the way a client sees them (curl's total time: body
# upload, the whole request, the answer). Each operation runs RUNS times
# (default 5); between requests it waits until the webhook engine has
# delivered the previous request's events (if a webhook wants them), then
# pauses PAUSE seconds (default 1). Prints one line per
# request, "BULK <operation><SUFFIX> <seconds>", and fails on any answer
# other than 200 with the expected count. OPS (default all four) picks
# operations: add, remove, update, delete.
#   BASE_URL=... KEY=cbk_... BOOK_ID=<uuid> DATABASE_URL=... scripts/bench/bulk.sh
# The book should hold 100,000 contacts (prepare.sh). Labels, the custom
# field and the contacts to delete are set up with psql; only the measured
# requests go through the API.
set -euo pipefail
: "${BASE_URL:?}" "${KEY:?}" "${BOOK_ID:?}" "${DATABASE_URL:?}"
RUNS=${RUNS:-5}
PAUSE=${PAUSE:-1}
OPS=${OPS:-add remove update delete}
SUFFIX=${SUFFIX:-}
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sql() { psql "$DATABASE_URL" -qtAX -v ON_ERROR_STOP=1 "$@"; }

# post OPERATION BODYFILE COUNTFIELD: one timed request.
post() {
	local out code secs n
	out=$(curl -sS -o "$tmp/answer.json" -w '%{http_code} %{time_total}' -X POST \
		-H "Authorization: Bearer $KEY" -H "X-Book-ID: $BOOK_ID" -H 'Content-Type: application/json' \
		--data-binary "@$2" "$BASE_URL/api/v1/contacts/$1")
	read -r code secs <<<"$out"
	n=$(grep -o "\"$3\":[0-9]*" "$tmp/answer.json" | cut -d: -f2)
	if [ "$code" != 200 ] || [ "$n" != 10000 ]; then
		echo "bulk.sh: $1 answered $code: $(cat "$tmp/answer.json")" >&2
		exit 1
	fi
	echo "BULK $1$SUFFIX $secs"
	drain "$DATABASE_URL"
	sleep "$PAUSE"
}

# A fixed tenth of the book, away from the ids the GET benchmark reads.
ids=$(sql -c "SELECT json_agg(id) FROM (SELECT id FROM contacts WHERE book_id = '$BOOK_ID' ORDER BY id LIMIT 10000 OFFSET 20000) s")
field=$(sql -c "INSERT INTO field_definitions (book_id, key, name, type) VALUES ('$BOOK_ID', 'bench_tier', 'Bench tier', 'text')
	ON CONFLICT (book_id, key) DO UPDATE SET name = EXCLUDED.name RETURNING id")
for run in $(seq 1 "$RUNS"); do
	label=$(sql -c "INSERT INTO labels (book_id, name) VALUES ('$BOOK_ID', 'bench $run $RANDOM') RETURNING id")
	printf '{"contact_ids":%s,"label_id":"%s"}' "$ids" "$label" >"$tmp/label.json"
	printf '{"contact_ids":%s,"field_definition_id":"%s","value":"tier %s %s"}' "$ids" "$field" "$run" "$RANDOM" >"$tmp/field.json"
	if [[ " $OPS " == *" add "* || " $OPS " == *" remove "* ]]; then
		post bulk-add-label "$tmp/label.json" added
	fi
	if [[ " $OPS " == *" remove "* ]]; then
		post bulk-remove-label "$tmp/label.json" removed
	fi
	if [[ " $OPS " == *" update "* ]]; then
		post bulk-update-field "$tmp/field.json" updated
	fi
	[[ " $OPS " == *" delete "* ]] || continue

	# 10,000 new contacts to delete, each with a label and a custom value
	# for the delete to cascade to.
	doomed=$(sql -c "WITH c AS (
			INSERT INTO contacts (book_id, first_name, last_name, emails)
			SELECT '$BOOK_ID', 'Doomed', 'Person' || g,
				jsonb_build_array(jsonb_build_object('address', 'doomed' || g || '@example.com', 'label', 'work', 'primary', true))
			FROM generate_series(1, 10000) g RETURNING id
		), l AS (
			INSERT INTO contact_labels (contact_id, label_id) SELECT id, '$label' FROM c
		), v AS (
			INSERT INTO contact_field_values (contact_id, field_id, value) SELECT id, '$field', 'x' FROM c
		)
		SELECT json_agg(id) FROM c")
	printf '{"contact_ids":%s}' "$doomed" >"$tmp/delete.json"
	sql -c "ANALYZE contacts" >/dev/null
	post bulk-delete "$tmp/delete.json" deleted
done
