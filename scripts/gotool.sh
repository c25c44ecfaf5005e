#!/usr/bin/env bash
# gotool.sh PACKAGE@VERSION - print the path of a Go command-line tool at a pinned version,
# installing it first when missing.
#
# Tools live in <repo>/.data/bin/<name>@<version>/<name>, never in GOBIN or GOPATH/bin, so
# nothing depends on whether those are set or on PATH, and two versions never overwrite
# each other. Stdout: exactly one line, the tool's absolute path; progress goes to stderr.
#   staticcheck="$(scripts/gotool.sh honnef.co/go/tools/cmd/staticcheck@v0.8.2)"
set -euo pipefail

die() { printf 'gotool: ERROR: %s\n' "$*" >&2; exit 1; }

spec="${1:-}"
[[ "$spec" =~ ^[A-Za-z0-9._~/-]+@v[0-9][A-Za-z0-9.+-]*$ ]] ||
	die "usage: gotool.sh PACKAGE@VERSION (a pinned version such as v1.2.3, got '$spec')"
pkg="${spec%@*}"
version="${spec##*@}"
# The binary is named after the last path element, skipping a major-version suffix (/v2).
name="${pkg##*/}"
if [[ "$name" =~ ^v[0-9]+$ ]]; then
	rest="${pkg%/*}"
	name="${rest##*/}"
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
dir="$root/.data/bin/$name@$version"
if [[ ! -x "$dir/$name" ]]; then
	printf 'gotool: installing %s into %s\n' "$spec" "$dir" >&2
	GOBIN="$dir" go install "$spec" >&2
	[[ -x "$dir/$name" ]] || die "go install $spec did not produce $dir/$name"
fi
printf '%s\n' "$dir/$name"
