# contactbook developer tasks (GNU make).
#   make run | migrate   run against a dev database (scripts/devdb.sh finds/creates one)
#   make test            lint + race tests; GOTEST_FLAGS='-run TestX -v' to narrow down
#   make bench           every benchmark, table in docs/benchmarks.md
#   make bench-listmonk LISTMONK=<listmonk checkout>   side by side with listmonk
#   make build | lint | docker | clean

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GOTEST_FLAGS ?=
IMAGE ?= contactbook

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
LINT_CMDS := go install honnef.co/go/tools/cmd/staticcheck@v0.8.2; \
	go vet ./...; \
	"$$(go env GOPATH)/bin/staticcheck" ./...; \
	unformatted="$$($(GO_FILES) | xargs -0 -r gofmt -l)"; \
	if [ -n "$$unformatted" ]; then \
		printf 'gofmt: these files are not formatted (run gofmt -w):\n%s\n' "$$unformatted" >&2; exit 1; \
	fi

.PHONY: run build migrate lint test bench bench-listmonk reliability docker clean

run:
	url="$$(scripts/devdb.sh contactbook)"; \
	DATABASE_URL="$$url" go run ./cmd/contactbook serve

migrate:
	url="$$(scripts/devdb.sh contactbook)"; \
	DATABASE_URL="$$url" go run ./cmd/contactbook migrate

build:
	CGO_ENABLED=0 go build -trimpath -o bin/contactbook ./cmd/contactbook

lint:
	$(LINT_CMDS)

test:
	go install github.com/stripe/stripe-mock@v0.203.0
	DATABASE_URL="$$(scripts/devdb.sh contactbook_test)"; \
	export DATABASE_URL; \
	$(LINT_CMDS); \
	go test -race -count=1 -p 2 -timeout 10m $(GOTEST_FLAGS) ./...

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
	DATABASE_URL="$$(scripts/devdb.sh contactbook_test)"; \
	export DATABASE_URL; \
	RELIABILITY_LOAD_SECONDS=$(RELIABILITY_LOAD_SECONDS) RELIABILITY_REPORT='$(RELIABILITY_REPORT)' \
	go test -tags reliability -count=1 -p 1 -v -timeout 15m $(GOTEST_FLAGS) ./internal/reliability/

docker:
	docker build -t $(IMAGE) .

clean:
	rm -rf bin/
