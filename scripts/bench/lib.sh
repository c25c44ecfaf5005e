# Shared by the load scripts of scripts/bench (sourced, not run):
# databases, the contactbook server and its webhook sink, wrk runs and
# their figures, medians of timed requests, the pgbench calibration.
# The caller sets `raw` (the file every figure is appended to) and cds to
# the repository root.

log() { printf '== %s\n' "$*" >&2; }

# need_wrk installs wrk from the OS packages when missing.
need_wrk() {
	command -v wrk >/dev/null && return
	log "installing wrk"
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >&2
}

# new_db NAME: creates an empty database on the local server; prints its URL.
new_db() { DATABASE_URL='' scripts/devdb.sh "$1"; }

# admin_url URL: the URL of the server's postgres database.
admin_url() { local db=${1##*/}; db=${db%%\?*}; printf '%s' "${1%/*}/postgres${1##*/"$db"}"; }

# drop_db URL: drops the database (used at exit).
drop_db() {
	local db=${1##*/}
	db=${db%%\?*}
	psql "$(admin_url "$1")" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
}

# wait_ready URL: waits up to 10 s for URL to answer 2xx.
wait_ready() {
	for _ in $(seq 1 100); do
		curl -fs "$1" >/dev/null && return 0
		sleep 0.1
	done
	log "$1 did not answer"
	return 1
}

# start_contactbook DATABASE_URL PORT: builds and starts the service (the
# webhook engine on, http allowed for the local sink, campaigns never
# scheduled), seeds a book of 100,000 contacts (prepare.sh), vacuums and
# analyses it as autovacuum would, and exports CB_PID, CB_URL and
# prepare.sh's variables (KEY, BOOK_ID, TOKEN, TEAM_ID).
start_contactbook() {
	go build -o bin/contactbook ./cmd/contactbook
	DATABASE_URL="$1" HTTP_ADDR="127.0.0.1:$2" LOG_LEVEL=warn JWT_SECRET=bench-secret-0123456789 \
		WEBHOOK_ALLOW_INSECURE=true MAIL_ALLOW_INSECURE=true API_KEY_RATE_LIMIT=0 CAMPAIGN_SCHEDULE='0 0 1 1 *' bin/contactbook serve >"docs/bench-server-$2.txt" 2>&1 &
	CB_PID=$!
	CB_URL="http://127.0.0.1:$2"
	wait_ready "$CB_URL/readyz"
	log "seeding 100,000 contacts"
	eval "$(BASE_URL="$CB_URL" DATABASE_URL="$1" scripts/bench/prepare.sh)"
	psql "$1" -qc "VACUUM ANALYZE" >/dev/null
}

# field NAME: the value of the first "NAME":"value" in stdin (a JSON answer).
field() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | cut -d '"' -f 4; }

# now_ns: the time in nanoseconds; since START_NS: seconds since then.
now_ns() { date +%s%N; }
since() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# reset_peak PID: forgets the process's peak resident set (VmHWM); peak_mb
# PID: that peak since, in MB.
reset_peak() { echo 5 >"/proc/$1/clear_refs"; }
peak_mb() { awk '$1 == "VmHWM:" { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

# start_sink PORT [SMTP_PORT]: the webhook receiver (scripts/bench/sink),
# also an SMTP sink when SMTP_PORT is given; exports SINK_PID, SINK_URL
# and SINK_BASE.
start_sink() {
	go build -o bin/bench-sink ./scripts/bench/sink
	bin/bench-sink -addr "127.0.0.1:$1" ${2:+-smtp "127.0.0.1:$2"} >"docs/bench-sink.txt" 2>&1 &
	SINK_PID=$!
	SINK_BASE="http://127.0.0.1:$1"
	SINK_URL="$SINK_BASE/hook"
	sleep 0.2
}

# cpu_start / cpu_end NAME PID: the CPU seconds (user and system) that
# PID, every PostgreSQL process (the server's children that exited are
# counted in its own cumulative times) and the sink spent between the two
# calls; cpu_end appends "CPU NAME app pg sink" to $raw.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
pg_ticks() {
	local t=0 p parent
	for p in $(pgrep -x postgres); do
		parent=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || continue
		if [ "$(cat "/proc/$parent/comm" 2>/dev/null)" = postgres ]; then
			t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
		else # the postmaster, with the children it reaped
			t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
		fi
	done
	echo "$t"
}
cpu_start() { CPU0=("$(cpu_ticks "$1")" "$(pg_ticks)" "$(cpu_ticks "$SINK_PID")"); }
cpu_end() {
	local hz
	hz=$(getconf CLK_TCK)
	echo "CPU $1 $(awk -v h="$hz" -v a="$(($(cpu_ticks "$2") - CPU0[0]))" -v p="$(($(pg_ticks) - CPU0[1]))" -v s="$(($(cpu_ticks "$SINK_PID") - CPU0[2]))" \
		'BEGIN { printf "%.1f %.1f %.1f", a / h, p / h, s / h }')" | tee -a "$raw" >&2
}

# settle NAME: waits until the 1-minute load average is under SETTLE_LOAD
# (0.8) or SETTLE_MAX seconds (300) have passed, so that a figure does not
# pay for the one before it, and appends "LOAD NAME load" to $raw.
settle() {
	local waited=0
	while ! awk -v l="$(cut -d ' ' -f 1 /proc/loadavg)" -v m="${SETTLE_LOAD:-0.8}" 'BEGIN { exit !(l < m) }' &&
		[ "$waited" -lt "${SETTLE_MAX:-300}" ]; do
		sleep 5
		waited=$((waited + 5))
	done
	echo "LOAD $1 $(cut -d ' ' -f 1 /proc/loadavg)" | tee -a "$raw" >&2
}

# load_of NAME: the load settle recorded before NAME ("n/a" when none).
load_of() { awk -v n="$1" '$1 == "LOAD" && $2 == n { v = $3 } END { print (v == "" ? "n/a" : v) }' "$raw"; }

# webhook_on EVENTS...: subscribes a webhook of the bench team to the sink
# for the event types; prints its id.
webhook_on() {
	local types
	types=$(printf '"%s",' "$@")
	curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
		-d "{\"url\":\"$SINK_URL\",\"events\":[${types%,}]}" "$CB_URL/api/teams/$TEAM_ID/webhooks" |
		grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4
}

# drain DATABASE_URL: waits (up to two minutes) until the webhook engine
# has fanned out every queued event and finished every delivery, so the
# next figure does not share the machine with the previous one's deliveries.
drain() {
	for _ in $(seq 1 1200); do
		[ "$(psql "$1" -tAc "SELECT (SELECT count(*) FROM event_queue) + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')")" = 0 ] && return
		sleep 0.1
	done
	log "webhook deliveries still pending after two minutes"
}

# webhook_off ID DATABASE_URL: deletes the webhook once its deliveries are
# done: deleting it while workers still complete them can end in a
# deadlock between the cascade and the workers.
webhook_off() {
	drain "$2"
	for _ in 1 2 3; do
		curl -fsS -X DELETE -H "Authorization: Bearer $TOKEN" "$CB_URL/api/teams/$TEAM_ID/webhooks/$1" >/dev/null && return
		sleep 1
	done
	return 1
}

# wrk_run NAME CONNECTIONS URL [wrk options...]: 10 s of wrk (WRK_DURATION)
# appended to $raw under "WRK NAME"; fails when any answer is not 2xx.
wrk_run() {
	local out
	log "wrk $1"
	out=$(wrk -t2 -c"$2" -d"${WRK_DURATION:-10s}" --latency "${@:4}" "$3")
	printf 'WRK %s\n%s\n' "$1" "$out" | tee -a "$raw" >&2
	if grep -q 'Non-2xx' <<<"$out"; then
		log "wrk $1: answers other than 2xx; the figures would be meaningless"
		exit 1
	fi
}

# wrk_rps NAME: requests per second of a wrk run (unformatted).
wrk_rps() { awk -v n="WRK $1" '$0 == n { on = 1 } on && /^Requests\/sec/ { print $2; exit }' "$raw"; }

# wrk_p99 NAME: the 99th percentile latency of a wrk run.
wrk_p99() { awk -v n="WRK $1" '$0 == n { on = 1 } on && $1 == "99%" { print $2; exit }' "$raw"; }

# median_secs NAME: median of the "BULK NAME seconds" lines of $raw.
median_secs() {
	awk -v op="$1" '$1 == "BULK" && $2 == op { print $3 }' "$raw" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# calibrate ADMIN_URL: pgbench's primary-key selects (-S, 20 clients, 5 s)
# on a scratch database, appended to $raw as "PGBENCH tps".
calibrate() {
	if ! command -v pgbench >/dev/null; then
		log "pgbench not installed: no calibration figure"
		return
	fi
	log "pgbench calibration"
	local db="bench_pgbench_$$" url
	url=${1%/*}/$db${1##*/postgres}
	psql "$1" -qc "CREATE DATABASE $db" >/dev/null
	pgbench -q -i -s 10 "$url" >/dev/null 2>&1
	echo "PGBENCH $(pgbench -n -S -c 20 -j 2 -T 5 "$url" 2>/dev/null | awk '/^tps/ { printf "%.0f", $3; exit }')" | tee -a "$raw" >&2
	psql "$1" -qc "DROP DATABASE $db" >/dev/null
}

# machine: one line on the machine, Go, PostgreSQL and the load average.
machine() {
	printf '%s cores (%s), %s; %s; PostgreSQL %s on the same machine' "$(nproc)" \
		"$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
		"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" "$(go version | awk '{ print $3 }')" \
		"$(psql "$1" -tAc 'SHOW server_version' | awk '{ print $1 }')"
}

# replace_section FILE MARKER TEXT: puts TEXT between <!-- MARKER:start -->
# and <!-- MARKER:end --> in FILE.
replace_section() {
	SECTION_TEXT="$3" awk -v s="<!-- $2:start -->" -v e="<!-- $2:end -->" '
		$0 == s { print; print ENVIRON["SECTION_TEXT"]; skip = 1; next }
		$0 == e { skip = 0 }
		!skip { print }
	' "$1" >"$1.new"
	mv "$1.new" "$1"
}

# fmt_int N: N rounded, with thousands separators.
fmt_int() { awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else printf "%\047.0f", v }'; }

# ratio A B [lower-is-better]: A / B (or B / A), two decimals.
ratio() {
	awk -v a="$1" -v b="$2" -v low="${3:-0}" 'BEGIN { gsub(/[^0-9.]/, "", a); gsub(/[^0-9.]/, "", b)
		if (a == "" || b == "" || a + 0 == 0 || b + 0 == 0) print "n/a"; else printf "%.2f", low ? b / a : a / b }'
}
