#!/usr/bin/env bash
# make bench: runs every benchmark of the project and writes the summary
# table of docs/benchmarks.md (between the bench:start and bench:end
# markers) with the machine, the date, each target and its measured figure.
#  - Go benchmarks (real router and PostgreSQL, fakes for outside providers):
#    contacts on a 100,000-contact book, campaign sending to 100,000
#    participants, webhook fan-out throughput and latency, mail merge
#    (per recipient, and compiling 1 MB templates shaped against it).
#  - HTTP load against the running binary with wrk (installed from the OS
#    packages when missing): GET a contact, list 50 with total, list with
#    q, and create, 20 connections for 10 s each, on a fresh database seeded with 100,000
#    contacts; then each bulk operation on 10,000 of them, five times, with
#    curl (bulk.sh).
#  - A calibration of the machine: pgbench's primary-key selects.
# Raw output goes to docs/bench-raw.txt (ignored by git).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
raw=docs/bench-raw.txt
: >"$raw"
log() { printf '== %s\n' "$*" >&2; }

DATABASE_URL=$(scripts/devdb.sh contactbook_test)
export DATABASE_URL

gobench() { # package, regexp, benchtime
	log "go test -bench '$2' -benchtime $3 $1"
	go test -run '^$' -bench "$2" -benchtime "$3" -timeout 20m "$1" | tee -a "$raw" >&2
}
gobench ./internal/httpapi/ 'BenchmarkContact100k/(Get|List|Create)' 300x
gobench ./internal/httpapi/ 'BenchmarkContact100k/Bulk' 5x
gobench ./internal/campaigns/ 'BenchmarkCampaignSend' 1x
gobench ./internal/webhooks/ 'BenchmarkWebhookDelivery' 10000x
gobench ./internal/webhooks/ 'BenchmarkWebhookLatency' 5000x
gobench ./internal/mailmerge/ 'BenchmarkPersonalize' 1s
gobench ./internal/mailmerge/ 'BenchmarkAdversarialCompile/./1000KB' 0.3s

# HTTP load against the real binary.
if ! command -v wrk >/dev/null; then
	log "installing wrk"
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >&2
fi
db="contactbook_bench_$$"
url=$(DATABASE_URL='' scripts/devdb.sh "$db")
admin=${url%/*}/postgres${url##*/"$db"}
go build -o bin/contactbook ./cmd/contactbook
port=18099
DATABASE_URL="$url" HTTP_ADDR="127.0.0.1:$port" LOG_LEVEL=warn JWT_SECRET=bench-secret-0123456789 \
	CAMPAIGN_SCHEDULE='0 0 1 1 *' bin/contactbook serve >docs/bench-server.txt 2>&1 &
server=$!
cleanup() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	psql "$admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "DROP DATABASE IF EXISTS ${db}_pgbench WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
for _ in $(seq 1 100); do
	curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && break
	sleep 0.1
done
log "seeding 100,000 contacts"
eval "$(BASE_URL="http://127.0.0.1:$port" DATABASE_URL="$url" scripts/bench/prepare.sh)"
psql "$url" -qc "ANALYZE" >/dev/null
cid=$(psql "$url" -tAc "SELECT id FROM contacts WHERE book_id = '$BOOK_ID' ORDER BY id LIMIT 1 OFFSET 50000")
wrkrun() { # name, path, [wrk options]: fails when any answer is not 2xx
	local out
	log "wrk $1"
	out=$(wrk -t2 -c20 -d10s --latency -H "Authorization: Bearer $KEY" -H "X-Book-ID: $BOOK_ID" "${@:3}" "http://127.0.0.1:$port$2")
	printf 'WRK %s\n%s\n' "$1" "$out" | tee -a "$raw" >&2
	if grep -q 'Non-2xx' <<<"$out"; then
		log "wrk $1: answers other than 2xx; the figures would be meaningless"
		exit 1
	fi
}
wrkrun get_by_id "/api/v1/contacts/$cid"
wrkrun list_total "/api/v1/contacts?limit=50"
wrkrun list_q "/api/v1/contacts?q=person4242&limit=50"
log "bulk operations over HTTP"
DATABASE_URL="$url" scripts/bench/bulk.sh | tee -a "$raw" >&2
# Last: it adds contacts to the book.
wrkrun create /api/v1/contacts -s scripts/bench/create.lua

# Calibration: what PostgreSQL alone does on this machine (primary-key
# selects, pgbench -S, 20 clients), so figures from different machines can
# be compared.
if command -v pgbench >/dev/null; then
	log "pgbench calibration"
	psql "$admin" -qc "CREATE DATABASE ${db}_pgbench" >/dev/null
	pgurl=${url%/*}/${db}_pgbench${url##*/"$db"}
	pgbench -q -i -s 10 "$pgurl" >/dev/null 2>&1
	echo "PGBENCH $(pgbench -n -S -c 20 -j 2 -T 5 "$pgurl" 2>/dev/null | awk '/^tps/ { printf "%.0f", $3; exit }')" | tee -a "$raw" >&2
	psql "$admin" -qc "DROP DATABASE ${db}_pgbench" >/dev/null
else
	log "pgbench not installed: no calibration figure"
fi

# The table.
metric() { # benchmark name (regexp), unit -> the value printed before the unit
	awk -v b="$1" -v u="$2" '$1 ~ b { for (i = 2; i <= NF; i++) if ($i == u) { print $(i-1); exit } }' "$raw"
}
ms() { awk -v v="$(metric "$1" ns/op)" 'BEGIN { if (v == "") print "n/a"; else printf "%.3g ms", v / 1e6 }'; }
secs() { awk -v v="$(metric "$1" ns/op)" 'BEGIN { if (v == "") print "n/a"; else printf "%.2f s", v / 1e9 }'; }
num() { awk -v v="$(metric "$1" "$2")" 'BEGIN { if (v == "") print "n/a"; else printf "%\047.0f", v }'; }
wrkrps() { awk -v n="WRK $1" '$0 == n { on = 1 } on && /^Requests\/sec/ { printf "%\047.0f", $2; exit }' "$raw"; }
wrkp99() { awk -v n="WRK $1" '$0 == n { on = 1 } on && $1 == "99%" { print $2; exit }' "$raw"; }
met() { # measured, target, lower-is-better(1/0) -> yes/no
	awk -v m="$1" -v t="$2" -v low="$3" 'BEGIN { gsub(/[^0-9.]/, "", m); if (m == "") { print "n/a"; exit } print ((low ? m + 0 <= t : m + 0 >= t) ? "yes" : "no") }'
}
median() { # operation -> median seconds of its BULK lines
	awk -v op="$1" '$1 == "BULK" && $2 == op { print $3 }' "$raw" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else printf "%.2f s", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
bulk() { # sub-benchmark, operation, label -> table row; met on the HTTP figure
	local v
	v=$(median "$2")
	printf '| %s | <= 0.5 s | %s over HTTP, median of %s (Go benchmark: %s) | %s |\n' "$3" "$v" \
		"$(grep -c "^BULK $2 " "$raw")" "$(secs "BenchmarkContact100k/$1")" "$(met "$v" 0.5 1)"
}
getrps=$(wrkrps get_by_id)
listrps=$(wrkrps list_total)
emails=$(num BenchmarkCampaignSend emails/s)
deliveries=$(num BenchmarkWebhookDelivery deliveries/s)
p99=$(metric BenchmarkWebhookLatency p99-ms)
personalize=$(awk -v v="$(metric BenchmarkPersonalize ns/op)" 'BEGIN { printf "%.2f us", v / 1000 }')
# The slowest of the adversarial template shapes at 1 MB.
adversarial=$(awk '$1 ~ /^BenchmarkAdversarialCompile\/.*\/1000KB/ { for (i = 2; i <= NF; i++) if ($i == "ns/op" && $(i-1) > max) { max = $(i-1); name = $1 } }
	END { if (name == "") print "n/a"; else { sub(/^BenchmarkAdversarialCompile\//, "", name); sub(/\/1000KB.*/, "", name); printf "%.1f ms (%s)", max / 1e6, name } }' "$raw")
table=$(
	cat <<TABLE
Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $(go version | awk '{ print $3 }'); PostgreSQL $(psql "$admin" -tAc 'SHOW server_version' | awk '{ print $1 }'), on the same machine, answering $(awk '$1 == "PGBENCH" { v = $2 } END { if (v == "") print "n/a"; else printf "%\047.0f", v }' "$raw") primary-key selects/s alone (pgbench -S, 20 clients). Date: $(date -u +%Y-%m-%d). Produced by \`make bench\`.

| Benchmark | Target | Measured | Met |
|---|---|---|---|
| GET /api/v1/contacts/{id}, wrk, 20 connections | >= 8,000 req/s | $getrps req/s (p99 $(wrkp99 get_by_id)) | $(met "$getrps" 8000 0) |
| GET /api/v1/contacts?limit=50 with total, wrk, 20 connections | >= 500 req/s | $listrps req/s (p99 $(wrkp99 list_total)) | $(met "$listrps" 500 0) |
| GET /api/v1/contacts?q=person4242 (trigram), wrk, 20 connections | | $(wrkrps list_q) req/s (p99 $(wrkp99 list_q)) | |
| POST /api/v1/contacts, wrk, 20 connections | | $(wrkrps create) req/s (p99 $(wrkp99 create)) | |
$(bulk BulkAddLabel10k bulk-add-label "bulk-add-label, 10,000 contacts")
$(bulk BulkRemoveLabel10k bulk-remove-label "bulk-remove-label, 10,000 contacts")
$(bulk BulkUpdateField10k bulk-update-field "bulk-update-field, 10,000 contacts")
$(bulk BulkDelete10k bulk-delete "bulk-delete, 10,000 contacts")
| GET contact by id, 1 client (Go) | | $(ms 'BenchmarkContact100k/GetByID') | |
| list 50 with total, 1 client (Go) | | $(ms 'BenchmarkContact100k/List50WithTotal') | |
| list with q (trigram), 1 client (Go) | | $(ms 'BenchmarkContact100k/ListQ-') | |
| create contact, 1 client (Go) | | $(ms 'BenchmarkContact100k/Create') | |
| campaign email step, 100,000 participants | >= 10,000 emails/s | $emails emails/s | $(met "$emails" 10000 0) |
| webhook deliveries to a local receiver | >= 2,000/s | $deliveries/s | $(met "$deliveries" 2000 0) |
| webhook commit-to-delivery p99 at 500 events/s | <= 250 ms | ${p99:-n/a} ms (p50 $(metric BenchmarkWebhookLatency p50-ms) ms) | $(met "${p99:-}" 250 1) |
| mail merge, per recipient | < 10 us | $personalize | $(met "$personalize" 10 1) |
| mail merge, compile of a 1 MB adversarial template, slowest of 10 shapes | <= 100 ms | $adversarial | $(met "${adversarial%% *}" 100 1) |
TABLE
)
BENCH_TABLE="$table" awk '
	/<!-- bench:start -->/ { print; print ENVIRON["BENCH_TABLE"]; skip = 1; next }
	/<!-- bench:end -->/ { skip = 0 }
	!skip { print }
' docs/benchmarks.md >docs/benchmarks.md.new
mv docs/benchmarks.md.new docs/benchmarks.md
log "wrote the table to docs/benchmarks.md"
printf '%s\n' "$table"
