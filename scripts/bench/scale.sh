#!/usr/bin/env bash
# The same figures on a book of 100,000 and of 1,000,000 contacts (make
# bench runs it; SCALES="100000 1000000" by default), so a team can see
# what ten times the data costs. For each size, a fresh database, the real
# binary with the provider stand-in (scripts/bench/sink) as its email
# provider, and a book seeded with COPY (not the API):
#  - GET one contact by id, the first page of 50 with total, a page at
#    half the book by cursor (the next_cursor of the page before it) and
#    by offset, and two searches, wrk, 20 connections: q=lighthouse
#    matches the same 1,000 contacts at every size, q=person42 ten times
#    as many at a million;
#  - two segment previews (POST /api/v1/segments/preview, two conditions),
#    wrk, 20 connections: one matches the same 100 at every size, the
#    other ten times as many at a million;
#  - the CSV export of the whole book, curl's total time;
#  - a campaign email step to every contact, from POST .../run to the last
#    email at the provider stand-in, in emails per second;
#  - an import of 100,000 new rows (first name and email) into a new book
#    of the same database, in seconds and rows per second: the same file
#    at both sizes, so the rate per row shows what the table's size costs
#    (a file of a million rows is over the limit of 200,000 records a
#    file); before the campaign, whose memory would count in its peak.
# Before each figure the server's peak resident set is reset; the peak
# during it is reported beside it (memory flat means the same peak at
# both sizes). Lines "SCALE <size> <figure> <value> <unit>" go to the raw
# output; the table is written to docs/benchmarks.md between the
# scale:start and scale:end markers, with the 1-minute load average taken
# before each figure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# shellcheck source=lib.sh
. scripts/bench/lib.sh
raw=${RAW:-docs/bench-scale-raw.txt}
[ -n "${RAW:-}" ] || : >"$raw"
need_wrk
tmp=$(mktemp -d)
sink_port=18108
cb_port=18109
cleanup() {
	kill "${CB_PID:-}" "${SINK_PID:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	[ -z "${url:-}" ] || drop_db "$url"
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o bin/contactbook ./cmd/contactbook
go build -o bin/bench-sink ./scripts/bench/sink
bin/bench-sink -addr "127.0.0.1:$sink_port" >"$tmp/sink.txt" 2>&1 &
SINK_PID=$!
sink="http://127.0.0.1:$sink_port"

figure() { # size name value unit: with the load settle saw before it (else the load now)
	local l
	l=$(load_of "scale_$1_$2")
	[ "$l" != n/a ] || l=$(cut -d ' ' -f 1 /proc/loadavg)
	printf 'SCALE %s %s %s %s load=%s\n' "$1" "$2" "$3" "$4" "$l" | tee -a "$raw" >&2
}
api() { # method path [curl args...]: the internal API as the bench user, in the book
	local m=$1 p=$2
	shift 2
	curl -fsS -X "$m" -H "Authorization: Bearer $TOKEN" -H "X-Book-ID: $BOOK_ID" -H 'Content-Type: application/json' "$@" "$CB_URL$p"
}

# io_now URL: the WAL position, the database's buffer hits and reads, and
# the checkpoints so far; io_since URL "io_now's answer": what each grew
# by since, the WAL in bytes. What a campaign costs the server besides
# CPU: the WAL it writes (full pages after a checkpoint included) and the
# blocks it needs that shared buffers did not hold.
io_now() {
	psql "$1" -tAc "SELECT pg_current_wal_lsn(), blks_hit, blks_read, (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)
		FROM pg_stat_database WHERE datname = current_database()" | tr '|' ' '
}
io_since() {
	local lsn hit read ckpt
	read -r lsn hit read ckpt <<<"$2"
	psql "$1" -tAc "SELECT pg_current_wal_lsn() - '$lsn'::pg_lsn, blks_hit - $hit, blks_read - $read,
		(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter) - $ckpt
		FROM pg_stat_database WHERE datname = current_database()" | tr '|' ' '
}

# read_figure NAME URL: wrk, 20 connections, once the machine is quiet.
read_figure() {
	settle "scale_${size}_$1"
	wrk_run "scale_${size}_$1" 20 "$2" "${auth[@]}"
	figure "$size" "$1" "$(wrk_rps "scale_${size}_$1")" req/s
}

# preview NAME RULE: the segment preview of a rule, as read_figure.
preview() {
	printf 'wrk.method = "POST"\nwrk.body = [[%s]]\nwrk.headers["Content-Type"] = "application/json"\n' "$2" >"$tmp/preview-$1.lua"
	settle "scale_${size}_preview_$1"
	wrk_run "scale_${size}_preview_$1" 20 "$CB_URL/api/v1/segments/preview" "${auth[@]}" -s "$tmp/preview-$1.lua"
	figure "$size" "preview_$1" "$(wrk_rps "scale_${size}_preview_$1")" req/s
}

# seed_copy URL BOOK COUNT: COUNT contacts shaped as seed.sql's, through
# COPY, but for a fixed thousand (g <= 100,000 with g % 100 = 42) whose
# company is "Lighthouse <g % 1000>": at every size, q=lighthouse matches
# these 1,000 and the segment of "lighthouse 42" these 100, so those
# figures answer the same rows from a bigger table.
seed_copy() {
	awk -v book="$2" -v n="$3" 'BEGIN {
		split("Ada Grace Alan Edsger Barbara Donald Ken Dennis Margaret Linus", first, " ")
		for (g = 1; g <= n; g++) {
			company = (g <= 100000 && g % 100 == 42) ? "Lighthouse" : "Company"
			printf "%s,%s,Person%d,%s %d,Engineer,\"[{\"\"address\"\": \"\"user%d@example.com\"\", \"\"label\"\": \"\"work\"\", \"\"primary\"\": true}]\",\"[{\"\"number\"\": \"\"+1 555 %04d\"\", \"\"label\"\": \"\"mobile\"\", \"\"primary\"\": true}]\",%s\n",
				book, first[1 + g % 10], g, company, g % 1000, g, g % 10000, (g % 10 == 0) ? "t" : "f"
		}
	}' | psql "$1" -qc "\copy contacts (book_id, first_name, last_name, company, job_title, emails, phones, starred) FROM STDIN WITH (FORMAT csv)"
	psql "$1" -qc "VACUUM ANALYZE" >/dev/null
}

for size in ${SCALES:-100000 1000000}; do
	url=$(new_db "contactbook_scale_${size}_$$")
	DATABASE_URL="$url" HTTP_ADDR="127.0.0.1:$cb_port" LOG_LEVEL=warn JWT_SECRET=bench-secret-0123456789 \
		MAILER_BASE_URL="$sink" API_KEY_RATE_LIMIT=0 CAMPAIGN_SCHEDULE='0 0 1 1 *' bin/contactbook serve >"$tmp/server-$size.txt" 2>&1 &
	CB_PID=$!
	CB_URL="http://127.0.0.1:$cb_port"
	wait_ready "$CB_URL/readyz"
	eval "$(BASE_URL="$CB_URL" DATABASE_URL="$url" COUNT=0 scripts/bench/prepare.sh)"
	log "seeding $size contacts with COPY"
	seed_copy "$url" "$BOOK_ID" "$size"
	auth=(-H "Authorization: Bearer $KEY" -H "X-Book-ID: $BOOK_ID")

	reset_peak "$CB_PID"
	cid=$(psql "$url" -tAc "SELECT id FROM contacts WHERE book_id = '$BOOK_ID' ORDER BY created_at LIMIT 1 OFFSET $((size / 2))")
	read_figure get_by_id "$CB_URL/api/v1/contacts/$cid"
	read_figure first_page "$CB_URL/api/v1/contacts?limit=50"
	read_figure deep_page "$CB_URL/api/v1/contacts?limit=50&offset=$((size / 2))"
	cursor=$(curl -fsS "${auth[@]}" "$CB_URL/api/v1/contacts?limit=50&offset=$((size / 2 - 50))" | grep -o '"next_cursor":"[^"]*"' | cut -d '"' -f 4)
	read_figure cursor_page "$CB_URL/api/v1/contacts?limit=50&cursor=$cursor"
	read_figure search_fixed "$CB_URL/api/v1/contacts?q=lighthouse&limit=50"
	read_figure search "$CB_URL/api/v1/contacts?q=person42&limit=50"
	preview fixed '{"rule":{"all":[{"field":"company","op":"contains","value":"lighthouse 42"},{"field":"starred","op":"eq","value":false}]}}'
	preview growing '{"rule":{"all":[{"field":"company","op":"contains","value":"company 42"},{"field":"starred","op":"eq","value":true}]}}'
	figure "$size" reads_peak_rss "$(peak_mb "$CB_PID")" MB

	settle "scale_${size}_export_seconds"
	reset_peak "$CB_PID"
	start=$(now_ns)
	bytes=$(curl -fsS -o /dev/null -w '%{size_download}' "${auth[@]}" "$CB_URL/api/v1/contacts/export?format=csv")
	figure "$size" export_seconds "$(since "$start")" s
	figure "$size" export_peak_rss "$(peak_mb "$CB_PID")" MB
	log "export: $bytes bytes"

	# An import of 100,000 new rows into a book of its own (the table and
	# its indexes hold the seeded book's rows too), before the campaign so
	# that the campaign's memory is not counted in the import's peak.
	imp_book=$(api POST /api/books -d "{\"team_id\":\"$TEAM_ID\",\"name\":\"Imported\"}" | field id)
	awk -v n=100000 'BEGIN { print "first_name,email"; for (g = 1; g <= n; g++) printf "New%d,new%d@example.org\n", g, g }' >"$tmp/import.csv"
	settle "scale_${size}_import_seconds"
	reset_peak "$CB_PID"
	start=$(now_ns)
	imp=$(curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -F "file=@$tmp/import.csv;type=text/csv" "$CB_URL/api/books/$imp_book/imports" | field id)
	while st=$(api GET "/api/books/$imp_book/imports/$imp" | field status); [ "$st" = queued ] || [ "$st" = running ]; do
		sleep 0.2
	done
	[ "$st" = succeeded ] || { log "import ended $st"; exit 1; }
	secs=$(since "$start")
	figure "$size" import_seconds "$secs" s
	figure "$size" import_rows_per_second "$(awk -v n=100000 -v s="$secs" 'BEGIN { printf "%.0f", n / s }')" rows/s
	figure "$size" import_peak_rss "$(peak_mb "$CB_PID")" MB

	# A campaign email step to every contact of the book.
	psql "$url" -qc "UPDATE teams SET campaign_addon = 'active' WHERE id = '$TEAM_ID'"
	api PUT /api/campaign-settings -d '{"sender_name":"Acme","sender_email":"news@acme.example","company_name":"Acme Inc.","address_line1":"1 Main St","city":"Springfield","postal_code":"62701","country":"USA","mailer_api_key":"SG.bench"}' >/dev/null
	tpl=$(api POST /api/campaign-templates -d '{"name":"News","subject":"News for {{first_name}}","body_html":"<h1>Hello {{first_name}}</h1><p>Dear {{full_name}} of {{company}}, the news.</p><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"}' | field id)
	cid=$(api POST /api/campaigns -d '{"name":"Scale"}' | field id)
	api POST "/api/campaigns/$cid/steps" -d "{\"step_type\":\"email\",\"name\":\"News\",\"schedule_type\":\"immediate\",\"email_template_id\":\"$tpl\"}" >/dev/null
	api PATCH "/api/campaigns/$cid" -d '{"status":"active"}' >/dev/null
	psql "$url" -qc "INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT '$cid', id, now() FROM contacts WHERE book_id = '$BOOK_ID'"
	psql "$url" -qc "VACUUM ANALYZE" >/dev/null
	curl -fsS -X POST "$sink/reset" >/dev/null
	settle "scale_${size}_campaign_emails_per_second"
	reset_peak "$CB_PID"
	io0=$(io_now "$url")
	start=$(now_ns)
	api POST "/api/campaigns/$cid/run" >/dev/null
	while read -r got last < <(curl -fsS "$sink/count"); [ "$got" -lt "$size" ]; do
		sleep 0.5
		if ! kill -0 "$CB_PID" 2>/dev/null; then log "the server stopped during the campaign"; exit 1; fi
	done
	figure "$size" campaign_emails_per_second "$(awk -v n="$size" -v a="$start" -v b="$last" 'BEGIN { printf "%.0f", n / ((b - a) / 1e9) }')" emails/s
	figure "$size" campaign_peak_rss "$(peak_mb "$CB_PID")" MB
	read -r wal hit read ckpt < <(io_since "$url" "$io0")
	figure "$size" campaign_wal_per_email "$((wal / size))" bytes
	figure "$size" campaign_blocks_hit_per_email "$(awk -v h="$hit" -v n="$size" 'BEGIN { printf "%.1f", h / n }')" blocks
	figure "$size" campaign_blocks_read_per_email "$(awk -v r="$read" -v n="$size" 'BEGIN { printf "%.2f", r / n }')" blocks
	figure "$size" campaign_checkpoints "$ckpt" checkpoints

	kill "$CB_PID"
	wait "$CB_PID" 2>/dev/null || true
	CB_PID=
	drop_db "$url"
	url=
done

# The table: one row a figure, a column a size, the load beside each.
val() { awk -v s="$1" -v f="$2" '$1 == "SCALE" && $2 == s && $3 == f { v = $4 " (load " substr($6, 6) ")" } END { print (v == "" ? "n/a" : v) }' "$raw"; }
sizes=(${SCALES:-100000 1000000})
{
	printf 'Date: %s. Produced by `scripts/bench/scale.sh` (part of `make bench`); the load is the 1-minute average taken before each figure.\n\n' "$(date -u +%Y-%m-%d)"
	printf '| Figure |'; for s in "${sizes[@]}"; do printf ' %s contacts |' "$(fmt_int "$s")"; done; printf '\n|---|'
	for _ in "${sizes[@]}"; do printf -- '---|'; done; printf '\n'
	for f in get_by_id:"GET one contact by id, req/s" first_page:"first page of 50 with total, req/s" \
		cursor_page:"the page at half the book by cursor, req/s" search_fixed:"search q=lighthouse (1,000 matches at every size), req/s" \
		preview_fixed:"segment preview, 100 matches at every size, req/s" \
		deep_page:"the page at half the book by offset, req/s" search:"search q=person42 (1,111 matches; 11,111 at a million), req/s" \
		preview_growing:"segment preview, 100 matches (1,000 at a million), req/s" reads_peak_rss:"peak RSS during the reads, MB" \
		export_seconds:"CSV export of the book, s" export_peak_rss:"peak RSS during the export, MB" \
		campaign_emails_per_second:"campaign step to every contact, emails/s" campaign_peak_rss:"peak RSS during the campaign, MB" \
		campaign_wal_per_email:"the campaign's WAL per email, bytes" campaign_blocks_hit_per_email:"its buffer hits per email" \
		campaign_blocks_read_per_email:"its blocks read from outside shared buffers, per email" campaign_checkpoints:"checkpoints during it" \
		import_seconds:"import of 100,000 new rows (another book, same tables), s" import_rows_per_second:"import rate, rows/s" import_peak_rss:"peak RSS during the import, MB"; do
		printf '| %s |' "${f#*:}"
		for s in "${sizes[@]}"; do printf ' %s |' "$(val "$s" "${f%%:*}")"; done
		printf '\n'
	done
} >"$tmp/table.md"
replace_section docs/benchmarks.md scale "$(cat "$tmp/table.md")"
cat "$tmp/table.md" >&2
