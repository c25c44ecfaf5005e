# contactbook developer tasks (GNU make).
#   make run | migrate   run against a dev database (scripts/devdb.sh finds/creates one)
#   make db-stop         stop the private development cluster make run may have started
#   make db-reset        delete the development database (and the private cluster)
#   make test            lint + race tests; GOTEST_FLAGS='-run TestX -v' to narrow down
#   make bench           every benchmark, table in docs/benchmarks.md
#   make bench-listmonk LISTMONK=<listmonk checkout>   side by side with listmonk
#   make build | lint | docker | clean
#   make web             rebuild the dashboard (web/app/dist, committed) after changing its sources
#   make test-web        the dashboard's unit and browser tests (installs chromium and npm packages if missing)
#   make bench-web       the dashboard's budgets (first load, 100,000-contact table, search) in the browser
#
# Nothing here depends on GOBIN, GOPATH/bin or PATH beyond go itself: the tools are
# installed at pinned versions under .data/bin by scripts/gotool.sh and called by path.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GOTEST_FLAGS ?=
# Parallel tests of one package at a time. The tests wait on PostgreSQL more than they
# use the CPU (each has its own service and database), so more than the core count pays:
# the API package takes 73 s at 6 against 99 s at the default of 2 on two cores. Each test
# service holds at most 8 connections, so 2 packages x 6 stay under PostgreSQL's 100.
TEST_PARALLEL ?= 6
IMAGE ?= contactbook

STATICCHECK_VERSION := v0.8.2
# Keep in step with stripeMockVersion in internal/billing/main_test.go.
STRIPE_MOCK_VERSION := v0.203.0

# Go files to gofmt-check: tracked + untracked-but-not-ignored files, or (outside a git
# checkout) everything except data/build directories. Deleted-but-tracked files are skipped.
GO_FILES := { git ls-files --cached --others --exclude-standard -- '*.go' 2>/dev/null \
	|| find . \( -path ./.git -o -path ./.data -o -path ./data -o -path ./tmp -o -path ./bin -o -path ./vendor \) -prune \
		-o -type f -name '*.go' -print; } \
	| while IFS= read -r f; do if [ -f "$$f" ]; then printf '%s\0' "$$f"; fi; done

# Shared by `lint` and `test` (kept in a variable rather than a recursive make so that
# `make -n test` stays a dry run).
# Commands are joined with ';' (not '&&') so that `set -e` aborts on the first failure even
# when more commands follow in the same recipe line.
LINT_CMDS := staticcheck="$$(scripts/gotool.sh honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION))"; \
	go vet ./...; \
	"$$staticcheck" ./...; \
	unformatted="$$($(GO_FILES) | xargs -0 -r gofmt -l)"; \
	if [ -n "$$unformatted" ]; then \
		printf 'gofmt: these files are not formatted (run gofmt -w):\n%s\n' "$$unformatted" >&2; exit 1; \
	fi

.PHONY: run build migrate db-stop db-reset lint test bench bench-listmonk reliability docker clean web web-deps test-web bench-web

# The binary is built, then exec'd: signals from the terminal reach the server itself, and
# make sees its exit status (0 after Ctrl-C and a clean stop). `go run` would exit 1.
run: build
	url="$$(scripts/devdb.sh contactbook)"; \
	DATABASE_URL="$$url" exec bin/contactbook serve

migrate: build
	url="$$(scripts/devdb.sh contactbook)"; \
	DATABASE_URL="$$url" bin/contactbook migrate

build:
	@echo "building bin/contactbook (the first build downloads the modules and compiles everything: 1-2 minutes; later builds take seconds)"
	CGO_ENABLED=0 go build -trimpath -o bin/contactbook ./cmd/contactbook

db-stop:
	scripts/devdb.sh --stop

db-reset:
	scripts/devdb.sh --reset contactbook

lint:
	$(LINT_CMDS)

# The dashboard's tests run beside the Go tests, which spend most of their time waiting on
# PostgreSQL: together they take about two minutes less than one after the other. The
# dashboard's output is printed in full once the Go tests are done; either failing fails.
test:
	STRIPE_MOCK_BIN="$$(scripts/gotool.sh github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION))"; \
	DATABASE_URL="$$(scripts/devdb.sh contactbook_test)"; \
	export STRIPE_MOCK_BIN DATABASE_URL; \
	scripts/pooler-tools.sh; \
	scripts/dav-tools.sh; \
	$(LINT_CMDS); \
	web_log="$$(mktemp)"; \
	scripts/test-web.sh >"$$web_log" 2>&1 & web_pid=$$!; \
	go_status=0; go test -race -count=1 -p 2 -parallel $(TEST_PARALLEL) -timeout 10m $(GOTEST_FLAGS) ./... || go_status=$$?; \
	web_status=0; wait "$$web_pid" || web_status=$$?; \
	echo "make test: the dashboard's tests (run beside the Go tests; exit status $$web_status):"; \
	cat "$$web_log"; rm -f "$$web_log"; \
	if [ "$$go_status" -ne 0 ]; then echo "make test: the Go tests failed (exit status $$go_status)" >&2; fi; \
	[ "$$go_status" -eq 0 ] && [ "$$web_status" -eq 0 ]

bench:
	scripts/bench/run.sh

# contactbook beside listmonk on the same machine: LISTMONK is the path of a
# listmonk source checkout, which is built into a temporary directory.
bench-listmonk:
	scripts/bench/listmonk.sh "$(LISTMONK)"

# Reliability suite (internal/reliability, build tag "reliability"): runs the real binary
# under faults and load. RELIABILITY_LOAD_SECONDS sets the load test's duration (60 here);
# figures are appended to RELIABILITY_REPORT (default .data/reliability-report.txt).
RELIABILITY_LOAD_SECONDS ?= 60
RELIABILITY_REPORT ?= $(CURDIR)/.data/reliability-report.txt
reliability:
	mkdir -p "$$(dirname '$(RELIABILITY_REPORT)')"
	scripts/pooler-tools.sh
	DATABASE_URL="$$(scripts/devdb.sh contactbook_test)"; \
	export DATABASE_URL; \
	RELIABILITY_LOAD_SECONDS=$(RELIABILITY_LOAD_SECONDS) RELIABILITY_REPORT='$(RELIABILITY_REPORT)' \
	go test -tags reliability -count=1 -p 1 -v -timeout 15m $(GOTEST_FLAGS) ./internal/reliability/

docker:
	docker build -t $(IMAGE) .

# The dashboard (web/app). Its build output is committed and embedded, so only changes to
# its sources need Node (20.19+ or 22.12+); web/app's Go test fails when dist/ is stale.
WEB := web/app
web-deps:
	scripts/web-deps.sh

web: web-deps
	cd $(WEB) && npm run build

# Browser tests drive Debian's chromium (CHROMIUM_PATH to use another) with playwright-core
# against the real binary and a fresh database next to DATABASE_URL's.
test-web:
	scripts/test-web.sh

bench-web: web-deps
	DATABASE_URL="$$(scripts/devdb.sh contactbook_test)"; export DATABASE_URL; \
	cd $(WEB) && npm run bench:browser

clean:
	rm -rf bin/
