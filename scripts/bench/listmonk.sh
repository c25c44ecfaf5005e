#!/usr/bin/env bash
# make bench-listmonk LISTMONK=<path>: contactbook beside listmonk (the
# open-source mailing-list manager, Go and PostgreSQL), the same figures
# one right after the other on the same machine, written with their ratios
# to docs/benchmarks.md (between the listmonk:start and listmonk:end
# markers).
#
#   scripts/bench/listmonk.sh /path/to/listmonk-checkout
#
# The checkout is only read: listmonk is built from it into a temporary
# directory (go build, modules from the Go proxy or cache), with an empty
# placeholder for its admin frontend (the API needs none), and run from the
# checkout's directory (it reads its SQL queries, schema, i18n and static
# files there). Nothing is downloaded but Go modules; nothing of listmonk
# is kept.
#
# Each product gets a fresh database on the local PostgreSQL with 100,000
# contacts / subscribers of the same names and emails (contact g is
# "<first> Person<g>", user<g>@example.com). Figures, each contactbook
# first, then listmonk:
#  - GET one by id, wrk, 20 connections, 10 s;
#  - list 50 with total at offsets 0, 50,000 and 99,950 (listmonk: page
#    1, 1,001 and 2,000 of 50), and search ("person42", 1,111 matches);
#  - add 10,000 to a label / list and delete 10,000 (fresh ones each time),
#    five times each, curl's total time, median; contactbook without a
#    webhook and with one subscribed to the events (listmonk sends none);
#  - creates, wrk, 16 connections, 10 s; contactbook without and with a
#    contact.created webhook (delivered to a local sink);
#  - a campaign of one email to all 100,000 through SMTP to the same local
#    SMTP sink (scripts/bench/sink -smtp; 20 connections each), from the
#    start to the sink's last message; then contactbook's second campaign
#    to the same contacts after VACUUM ANALYZE; each server's peak RSS
#    before the campaigns;
#  - a CSV import of the same 100,000 new people (a name and an email):
#    from the upload to the import's end, and the server's peak RSS;
#  - the limits the figures are bounded by: pgbench -S (20 clients) for
#    reads, the contact INSERT run bare by pgbench with 16 clients for
#    creates, and a bare COPY of the import's rows into contacts (same
#    indexes and triggers) for the import.
# Each figure starts once the 1-minute load is under 0.8 (settle); the
# table prints the load before each.
set -euo pipefail
lm_src=$(cd "${1:?usage: listmonk.sh LISTMONK_CHECKOUT}" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# shellcheck source=lib.sh
. scripts/bench/lib.sh
raw=docs/bench-listmonk-raw.txt
: >"$raw"
need_wrk
tmp=$(mktemp -d)
cb_db=$(new_db "contactbook_vs_lm_$$")
lm_db=$(new_db "listmonk_vs_cb_$$")
cleanup() {
	kill "${CB_PID:-}" "${LM_PID:-}" "${SINK_PID:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	drop_db "$cb_db"
	drop_db "$lm_db"
	rm -rf "$tmp"
}
trap cleanup EXIT

log "building listmonk from $lm_src"
mkdir -p "$tmp/dist"
echo '<!doctype html><title>listmonk</title>' >"$tmp/dist/index.html"
(cd "$lm_src" && CGO_ENABLED=0 go build -o "$tmp/listmonk" \
	-ldflags "-X 'main.buildString=bench' -X 'main.versionString=bench' -X 'main.frontendDir=$tmp/dist'" ./cmd)
lm_port=18100
lm_name=${lm_db##*/}
lm_name=${lm_name%%\?*}
cat >"$tmp/config.toml" <<TOML
[app]
address = "127.0.0.1:$lm_port"
[db]
host = "127.0.0.1"
port = 5432
user = "postgres"
password = "unused-trust"
database = "$lm_name"
ssl_mode = "disable"
max_open = 25
max_idle = 25
max_lifetime = "300s"
params = ""
TOML
lmsql() { psql "$lm_db" -qtAX -v ON_ERROR_STOP=1 "$@"; }
lm_token=$(cd "$lm_src" && LISTMONK_ADMIN_USER=admin LISTMONK_ADMIN_PASSWORD=bench-password LISTMONK_ADMIN_API_USER=bench \
	"$tmp/listmonk" --install --idempotent --yes --config "$tmp/config.toml" 2>&1 >/dev/null |
	sed -n 's/^export LISTMONK_ADMIN_API_TOKEN="\(.*\)"$/\1/p')
[ -n "$lm_token" ] || { log "listmonk install gave no API token"; exit 1; }
smtp_port=18097
# listmonk sends through the sink as contactbook does: 20 SMTP
# connections, no message rate limit (its default is 10 a second), its
# default 1,000 subscribers a batch. Settings are rows of its database,
# read at start.
lmsql -c "UPDATE settings SET value = '20' WHERE key = 'app.concurrency'" \
	-c "UPDATE settings SET value = '1000000' WHERE key = 'app.message_rate'" \
	-c "UPDATE settings SET value = '\"bench <news@acme.example>\"' WHERE key = 'app.from_email'" \
	-c "UPDATE settings SET value = '[{\"enabled\":true,\"host\":\"127.0.0.1\",\"port\":$smtp_port,\"auth_protocol\":\"none\",\"username\":\"\",\"password\":\"\",\"hello_hostname\":\"\",\"max_conns\":20,\"idle_timeout\":\"15s\",\"wait_timeout\":\"5s\",\"max_msg_retries\":2,\"msg_retry_delay\":\"10ms\",\"tls_type\":\"none\",\"tls_skip_verify\":true,\"email_headers\":[],\"from_addresses\":[]}]' WHERE key = 'smtp'"
log "seeding listmonk with 100,000 subscribers"
lmsql -c "INSERT INTO subscribers (uuid, email, name, attribs, status, created_at, updated_at)
	SELECT gen_random_uuid(), 'user' || g || '@example.com',
	       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Ken','Dennis','Margaret','Linus'])[1 + g % 10] || ' Person' || g,
	       '{}', 'enabled', timestamptz '2025-01-01' + g * interval '1 minute', timestamptz '2025-01-01' + g * interval '1 minute'
	FROM generate_series(1, 100000) g" -c "VACUUM ANALYZE"
(cd "$lm_src" && exec "$tmp/listmonk" --config "$tmp/config.toml") >"$tmp/listmonk.log" 2>&1 &
LM_PID=$!
LM_URL="http://127.0.0.1:$lm_port"
lm_auth=(-H "Authorization: token bench:$lm_token")
wait_ready "$LM_URL/health"

start_sink 18098 "$smtp_port"
start_contactbook "$cb_db" 18099
cb_auth=(-H "Authorization: Bearer $KEY" -H "X-Book-ID: $BOOK_ID")

# Reads.
cid=$(psql "$cb_db" -tAc "SELECT id FROM contacts WHERE book_id = '$BOOK_ID' ORDER BY created_at LIMIT 1 OFFSET 50000")
sid=$(lmsql -c "SELECT id FROM subscribers ORDER BY id LIMIT 1 OFFSET 50000")
settle cb_get
wrk_run cb_get 20 "$CB_URL/api/v1/contacts/$cid" "${cb_auth[@]}"
settle lm_get
wrk_run lm_get 20 "$LM_URL/api/subscribers/$sid" "${lm_auth[@]}"
for off in 0 50000 99950; do
	settle "cb_list_$off"
	wrk_run "cb_list_$off" 20 "$CB_URL/api/v1/contacts?limit=50&offset=$off" "${cb_auth[@]}"
	settle "lm_list_$off"
	wrk_run "lm_list_$off" 20 "$LM_URL/api/subscribers?per_page=50&page=$((off / 50 + 1))" "${lm_auth[@]}"
done
settle cb_search
wrk_run cb_search 20 "$CB_URL/api/v1/contacts?limit=50&q=person42" "${cb_auth[@]}"
settle lm_search
wrk_run lm_search 20 "$LM_URL/api/subscribers?per_page=50&search=person42" "${lm_auth[@]}"

# Campaigns: one email to every one of the 100,000, through SMTP to the
# sink, timed from the start to the sink's last message.
sink_wait() { # count: waits until the sink got count messages; prints the time of the last, in ns
	local n at
	for _ in $(seq 1 6000); do
		read -r n at < <(curl -fsS "$SINK_BASE/count")
		if [ "$n" -ge "$1" ]; then
			echo "$at"
			return
		fi
		sleep 0.1
	done
	log "the sink got $n of $1 messages"
	exit 1
}
campaign_rate() { # name, start ns, end ns
	echo "CAMPAIGN $1 $(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", 100000 / ((b - a) / 1e9) }')" | tee -a "$raw" >&2
}
echo "PEAK cb-before-campaign $(peak_mb "$CB_PID")" | tee -a "$raw" >&2
echo "PEAK lm-before-campaign $(peak_mb "$LM_PID")" | tee -a "$raw" >&2
cbj() { curl -fsS -H "Authorization: Bearer $TOKEN" -H "X-Book-ID: $BOOK_ID" -H 'Content-Type: application/json' "$@"; }
psql "$cb_db" -qc "UPDATE teams SET campaign_addon = 'active' WHERE id = '$TEAM_ID'"
cbj -X PUT "$CB_URL/api/campaign-settings" -d "{\"sender_name\":\"bench\",\"sender_email\":\"news@acme.example\",
	\"company_name\":\"Acme Inc.\",\"address_line1\":\"1 Main St\",\"city\":\"Springfield\",\"postal_code\":\"62701\",\"country\":\"USA\",
	\"provider\":\"smtp\",\"smtp_host\":\"127.0.0.1\",\"smtp_port\":$smtp_port,\"smtp_security\":\"none\",\"smtp_max_connections\":20}" >/dev/null
body='<h1>Hello {{first_name}}</h1><p>Dear {{full_name}}, here is this month'"'"'s news.</p><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>'
tpl=$(cbj -X POST "$CB_URL/api/campaign-templates" -d "{\"name\":\"News\",\"subject\":\"News for {{first_name}}\",\"body_html\":\"$body\"}" | field id)
cb_campaign() { # name: a campaign of one immediate email step to every contact of the book, sent
	local cid start
	cid=$(cbj -X POST "$CB_URL/api/campaigns" -d "{\"name\":\"$1\"}" | field id)
	cbj -X POST "$CB_URL/api/campaigns/$cid/steps" -d "{\"step_type\":\"email\",\"name\":\"News\",\"schedule_type\":\"immediate\",\"email_template_id\":\"$tpl\"}" >/dev/null
	cbj -X PATCH "$CB_URL/api/campaigns/$cid" -d '{"status":"active"}' >/dev/null
	# Enrolled in one statement, as listmonk's list below.
	psql "$cb_db" -qc "INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		SELECT '$cid', id, now() FROM contacts WHERE book_id = '$BOOK_ID' AND first_name <> 'Load'"
	curl -fsS -X POST "$SINK_BASE/reset"
	settle "$1"
	reset_peak "$CB_PID"
	cpu_start "$CB_PID"
	start=$(now_ns)
	cbj -X POST "$CB_URL/api/campaigns/$cid/run" >/dev/null
	campaign_rate "$1" "$start" "$(sink_wait 100000)"
	cpu_end "$1" "$CB_PID"
	echo "PEAK $1 $(peak_mb "$CB_PID")" | tee -a "$raw" >&2
}
cb_campaign cb-campaign
lm_list=$(curl -fsS "${lm_auth[@]}" -H 'Content-Type: application/json' -d '{"name":"everyone","type":"private","optin":"single"}' "$LM_URL/api/lists" |
	grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
lmsql -c "INSERT INTO subscriber_lists (subscriber_id, list_id, status) SELECT id, $lm_list, 'confirmed' FROM subscribers" -c "ANALYZE"
lm_body='<h1>Hello {{ .Subscriber.FirstName }}</h1><p>Dear {{ .Subscriber.Name }}, here is this month'"'"'s news.</p><p><a href=\"{{ UnsubscribeURL }}\">Unsubscribe</a></p>'
lm_camp=$(curl -fsS "${lm_auth[@]}" -H 'Content-Type: application/json' "$LM_URL/api/campaigns" -d "{\"name\":\"News\",
	\"subject\":\"News for {{ .Subscriber.FirstName }}\",\"lists\":[$lm_list],\"from_email\":\"bench <news@acme.example>\",
	\"content_type\":\"html\",\"body\":\"$lm_body\",\"messenger\":\"email\",\"type\":\"regular\"}" |
	grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
curl -fsS -X POST "$SINK_BASE/reset"
settle lm-campaign
reset_peak "$LM_PID"
cpu_start "$LM_PID"
start=$(now_ns)
curl -fsS -o /dev/null "${lm_auth[@]}" -X PUT -H 'Content-Type: application/json' -d '{"status":"running"}' "$LM_URL/api/campaigns/$lm_camp/status"
campaign_rate lm-campaign "$start" "$(sink_wait 100000)"
cpu_end lm-campaign "$LM_PID"
echo "PEAK lm-campaign $(peak_mb "$LM_PID")" | tee -a "$raw" >&2
# The second campaign to the same contacts, once ANALYZE saw the first's
# participants all completed.
psql "$cb_db" -qc "VACUUM ANALYZE"
cb_campaign cb-campaign-2

# Bulk changes: contactbook's through bulk.sh, listmonk's here.
RUNS=${RUNS:-5}
settle cb_bulk
log "contactbook bulk add and delete, no webhook"
DATABASE_URL="$cb_db" OPS="add delete" RUNS=$RUNS scripts/bench/bulk.sh | tee -a "$raw" >&2
log "contactbook bulk add and delete, a webhook on contact.updated and contact.deleted"
hook=$(webhook_on contact.updated contact.deleted)
settle cb_bulk_webhook
DATABASE_URL="$cb_db" OPS="add delete" RUNS=$RUNS PAUSE=3 SUFFIX=+webhook scripts/bench/bulk.sh | tee -a "$raw" >&2
webhook_off "$hook" "$cb_db"

settle lm_bulk
log "listmonk: add 10,000 subscribers to a list, delete 10,000"
lm_ids=$(lmsql -c "SELECT json_agg(id) FROM (SELECT id FROM subscribers ORDER BY id LIMIT 10000 OFFSET 20000) s")
lm_time() { # name, curl arguments...: one timed request, which must answer 200
	local out code secs
	out=$(curl -sS -o "$tmp/answer.json" -w '%{http_code} %{time_total}' "${lm_auth[@]}" "${@:2}")
	read -r code secs <<<"$out"
	if [ "$code" != 200 ]; then
		log "listmonk $1 answered $code: $(head -c 300 "$tmp/answer.json")"
		exit 1
	fi
	echo "BULK $1 $secs" | tee -a "$raw" >&2
	sleep 1
}
for run in $(seq 1 "$RUNS"); do
	list=$(curl -fsS "${lm_auth[@]}" -H 'Content-Type: application/json' \
		-d "{\"name\":\"bench $run $RANDOM\",\"type\":\"private\",\"optin\":\"single\"}" "$LM_URL/api/lists" |
		grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
	printf '{"ids":%s,"action":"add","target_list_ids":[%s],"status":"confirmed"}' "$lm_ids" "$list" >"$tmp/add.json"
	lm_time lm-add -X PUT -H 'Content-Type: application/json' --data-binary "@$tmp/add.json" "$LM_URL/api/subscribers/lists"
	# 10,000 new subscribers on that list, to delete.
	doomed=$(lmsql -c "WITH s AS (
			INSERT INTO subscribers (uuid, email, name, attribs, status)
			SELECT gen_random_uuid(), 'doomed' || $run || '-' || g || '@example.com', 'Doomed Person' || g, '{}', 'enabled'
			FROM generate_series(1, 10000) g RETURNING id
		), l AS (
			INSERT INTO subscriber_lists (subscriber_id, list_id, status) SELECT id, $list, 'confirmed' FROM s
		)
		SELECT string_agg('id=' || id, '&') FROM s")
	lmsql -c "ANALYZE subscribers" >/dev/null
	lm_time lm-delete -X DELETE "$LM_URL/api/subscribers?$doomed"
done

# Creates (they add contacts, and listmonk's creates slow down with every
# subscriber: before the imports); contactbook's with a webhook after
# listmonk's, and its deliveries drained before the calibration.
settle cb_create
wrk_run cb_create 16 "$CB_URL/api/v1/contacts" "${cb_auth[@]}" -s scripts/bench/create.lua
export CREATE_BODY=listmonk
settle lm_create
wrk_run lm_create 16 "$LM_URL/api/subscribers" "${lm_auth[@]}" -s scripts/bench/create.lua
unset CREATE_BODY
hook=$(webhook_on contact.created)
settle cb_create_webhook
wrk_run cb_create_webhook 16 "$CB_URL/api/v1/contacts" "${cb_auth[@]}" -s scripts/bench/create.lua
webhook_off "$hook" "$cb_db"

# Imports of the same 100,000 new people (a name and an email) into the
# seeded book / a new list, one after the other: from the upload to the
# import's end, and the server's peak RSS meanwhile (VmHWM, reset first).
log "imports of 100,000 new rows"
awk 'BEGIN { print "first_name,email"; for (g = 1; g <= 100000; g++) printf "Imported%d,imported%d@example.org\n", g, g }' >"$tmp/cb-import.csv"
awk 'BEGIN { print "email,name"; for (g = 1; g <= 100000; g++) printf "imported%d@example.org,Imported%d\n", g, g }' >"$tmp/lm-import.csv"
peak() { echo "PEAK $1 $(peak_mb "$2")" | tee -a "$raw" >&2; } # name pid
settle cb-import
reset_peak "$CB_PID"
start=$(now_ns)
imp=$(curl -fsS -H "Authorization: Bearer $TOKEN" -F "file=@$tmp/cb-import.csv;type=text/csv" "$CB_URL/api/books/$BOOK_ID/imports" | field id)
while st=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$CB_URL/api/books/$BOOK_ID/imports/$imp" | field status); [ "$st" = queued ] || [ "$st" = running ]; do
	sleep 0.1
done
[ "$st" = succeeded ] || { log "contactbook's import ended $st"; exit 1; }
echo "BULK cb-import $(since "$start")" | tee -a "$raw" >&2
peak cb-import "$CB_PID"
list=$(curl -fsS "${lm_auth[@]}" -H 'Content-Type: application/json' -d '{"name":"imported","type":"private","optin":"single"}' "$LM_URL/api/lists" |
	grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
settle lm-import
reset_peak "$LM_PID"
start=$(now_ns)
curl -fsS -o /dev/null "${lm_auth[@]}" --form-string "params={\"mode\":\"subscribe\",\"subscription_status\":\"confirmed\",\"delim\":\",\",\"lists\":[$list],\"overwrite\":true}" \
	-F "file=@$tmp/lm-import.csv;type=text/csv" "$LM_URL/api/import/subscribers"
while st=$(curl -fsS "${lm_auth[@]}" "$LM_URL/api/import/subscribers" | field status); [ "$st" = importing ] || [ "$st" = none ]; do
	sleep 0.1
done
[ "$st" = finished ] || { log "listmonk's import ended $st"; exit 1; }
echo "BULK lm-import $(since "$start")" | tee -a "$raw" >&2
peak lm-import "$LM_PID"
[ "$(lmsql -c "SELECT count(*) FROM subscribers WHERE email LIKE 'imported%'")" = 100000 ] || { log "listmonk did not import 100,000"; exit 1; }

# The limits: the contact INSERT bare (pgbench, 16 clients, 10 s) and a
# bare COPY of 100,000 rows like the import's into contacts, both with the
# table's indexes and triggers, in the benchmark's book.
settle limit-insert
cat >"$tmp/insert.sql" <<SQL
\set n random(1, 1000000000000)
INSERT INTO contacts (book_id, first_name, last_name, company, emails, phones)
VALUES ('$BOOK_ID', 'Bare', 'Test ' || :n, 'Bench',
        jsonb_build_array(jsonb_build_object('address', 'bare-' || :n || '@example.com', 'label', 'work', 'primary', true)),
        jsonb_build_array(jsonb_build_object('number', '+1 555 0100', 'label', 'mobile', 'primary', true)));
SQL
echo "LIMIT insert $(pgbench -n -c 16 -j 2 -T 10 -f "$tmp/insert.sql" "$cb_db" 2>/dev/null | awk '/^tps/ { printf "%.0f", $3; exit }')" | tee -a "$raw" >&2
awk -v b="$BOOK_ID" 'BEGIN { for (g = 1; g <= 100000; g++) printf "%s,Copied%d,\"[{\"\"address\"\": \"\"copied%d@example.org\"\", \"\"label\"\": \"\"other\"\", \"\"primary\"\": true}]\"\n", b, g, g }' >"$tmp/copy.csv"
settle limit-copy
start=$(now_ns)
psql "$cb_db" -qc "\\copy contacts (book_id, first_name, emails) FROM '$tmp/copy.csv' WITH (FORMAT csv)"
echo "BULK limit-copy $(since "$start")" | tee -a "$raw" >&2

settle pgbench
calibrate "$(admin_url "$cb_db")"
load=$(cut -d ' ' -f 1-3 /proc/loadavg)

# The table.
pgb=$(awk '$1 == "PGBENCH" { v = $2 } END { print v }' "$raw")
limit_insert=$(awk '$1 == "LIMIT" && $2 == "insert" { v = $3 } END { print v }' "$raw")
pct() { awk -v a="$1" -v b="${2:-$pgb}" 'BEGIN { if (a != "" && b > 0) printf "%.0f %%", 100 * a / b; else print "n/a" }'; }
loads() { printf '%s / %s' "$(load_of "$1")" "$(load_of "$2")"; }
rps_row() { # label, contactbook run, listmonk run[, limit, limit's name]
	local a b
	a=$(wrk_rps "$2")
	b=$(wrk_rps "$3")
	printf '| %s | %s | %s req/s (p99 %s) | %s req/s (p99 %s) | **%s×** | %s of %s |\n' "$1" "$(loads "$2" "$3")" "$(fmt_int "$a")" "$(wrk_p99 "$2")" \
		"$(fmt_int "$b")" "$(wrk_p99 "$3")" "$(ratio "$a" "$b")" "$(pct "$a" "${4:-}")" "${5:-pgbench -S ($(fmt_int "$pgb")/s)}"
}
secs_row() { # label, contactbook operation, listmonk operation, the loads' names, limit cell
	local a b
	a=$(median_secs "$2")
	b=$(median_secs "$3")
	printf '| %s | %s | %s s | %s s | **%s×** the speed (%s of its time) | %s |\n' "$1" "$(loads "$4" "$5")" "${a:-n/a}" "${b:-n/a}" \
		"$(ratio "$a" "$b" 1)" "$(ratio "$a" "$b")" "${6:-}"
}
camp() { awk -v n="$1" '$1 == "CAMPAIGN" && $2 == n { v = $3 } END { print v }' "$raw"; }
cpu_of() { awk -v n="$1" '$1 == "CPU" && $2 == n { v = $3 " s / " $4 " s / " $5 " s" } END { print (v == "" ? "n/a" : v) }' "$raw"; }
peak_of() { awk -v n="$1" '$1 == "PEAK" && $2 == n { v = $3 } END { print (v == "" ? "n/a" : v) }' "$raw"; }
copy=$(median_secs limit-copy)
cbimp=$(median_secs cb-import)
table=$(
	cat <<TABLE
Machine: $(machine "$(admin_url "$cb_db")"), answering $(fmt_int "$pgb") primary-key selects/s alone (pgbench -S, 20 clients). Each figure was taken once the 1-minute load average fell under ${SETTLE_LOAD:-0.8} (at most ${SETTLE_MAX:-300} s of waiting); the loads column gives it before contactbook's / listmonk's figure. Load average at the end: $load. listmonk built from $(git -C "$lm_src" log -1 --format='%h (%cs)' 2>/dev/null || echo 'the given checkout'). Date: $(date -u +%Y-%m-%d). Produced by \`make bench-listmonk\`.

| Figure (100,000 contacts) | Load before | contactbook | listmonk | contactbook ÷ listmonk | contactbook ÷ its limit |
|---|---|---|---|---|---|
$(rps_row "GET one by id, 20 connections" cb_get lm_get)
$(rps_row "list 50 with total, offset 0" cb_list_0 lm_list_0)
$(rps_row "list 50 with total, offset 50,000" cb_list_50000 lm_list_50000)
$(rps_row "list 50 with total, offset 99,950" cb_list_99950 lm_list_99950)
$(rps_row "search \"person42\" (1,111 matches), 50 with total" cb_search lm_search)
$(rps_row "create, 16 connections, no webhook" cb_create lm_create "$limit_insert" "the bare INSERT ($(fmt_int "$limit_insert")/s, pgbench, 16 clients)")
$(rps_row "create, 16 connections, contactbook with a contact.created webhook" cb_create_webhook lm_create "$limit_insert" "the bare INSERT")
$(secs_row "add 10,000 to a label / list, median of $RUNS, no webhook" bulk-add-label lm-add cb_bulk lm_bulk)
$(secs_row "add 10,000, contactbook with a webhook (10,000 events)" bulk-add-label+webhook lm-add cb_bulk_webhook lm_bulk)
$(secs_row "delete 10,000, median of $RUNS, no webhook" bulk-delete lm-delete cb_bulk lm_bulk)
$(secs_row "delete 10,000, contactbook with a webhook (10,000 events)" bulk-delete+webhook lm-delete cb_bulk_webhook lm_bulk)
$(secs_row "CSV import of 100,000 new rows (a name and an email), upload to end" cb-import lm-import cb-import lm-import "$(ratio "$cbimp" "$copy") × the bare COPY of the same rows (${copy:-n/a} s)")
| peak RSS of the server during that import | | $(peak_of cb-import) MB | $(peak_of lm-import) MB | | |
| campaign to 100,000 through SMTP to the same sink, start to the last message | $(loads cb-campaign lm-campaign) | $(fmt_int "$(camp cb-campaign)") emails/s | $(fmt_int "$(camp lm-campaign)") emails/s | **$(ratio "$(camp cb-campaign)" "$(camp lm-campaign)")×** | |
| CPU the campaign cost: the server / PostgreSQL / the sink | | $(cpu_of cb-campaign) | $(cpu_of lm-campaign) | | |
| second campaign to the same 100,000 after VACUUM ANALYZE | $(load_of cb-campaign-2) / – | $(fmt_int "$(camp cb-campaign-2)") emails/s | – | $(ratio "$(camp cb-campaign-2)" "$(camp cb-campaign)") of the first | |
| peak RSS before the campaigns (seeded, after the reads) | | $(peak_of cb-before-campaign) MB | $(peak_of lm-before-campaign) MB | $(ratio "$(peak_of cb-before-campaign)" "$(peak_of lm-before-campaign)")× | |
| peak RSS during the campaign | | $(peak_of cb-campaign) MB | $(peak_of lm-campaign) MB | | |
TABLE
)
replace_section docs/benchmarks.md listmonk "$table"
log "wrote the comparison to docs/benchmarks.md"
printf '%s\n' "$table"
