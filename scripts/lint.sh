#!/usr/bin/env bash
# lint.sh builds cmd/asynciovet (its own module, so the library does not
# depend on golang.org/x/tools) and runs it with go vet over the module's
# packages, tests and examples included. It exits non-zero when the
# analyzer reports anything or fails to run.
#
# Usage: scripts/lint.sh [packages...]   (default: ./... but tests/cpython)
#
# A line that breaks a rule on purpose (a test of the scheduler that
# blocks the loop or drops a cancellation deliberately) carries, or
# follows a line carrying, the documented exception
#
#	//asynciovet:ignore <check>[,<check>...] <reason>
#
# which the analyzers honour themselves; a directive without a reason
# does not count. A test file whose every case breaks one rule on purpose
# may instead carry, before its package clause,
#
#	//asynciovet:file-ignore <check>[,<check>...] <reason>
#
# See cmd/asynciovet/README.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$root/cmd/asynciovet" && go build -o "$tmp/asynciovet" .)

cd "$root"
if [ "$#" -eq 0 ]; then
	# Every package but tests/cpython: its ports mirror CPython's
	# test_asyncio line by line, and those tests drop errors and block on
	# purpose (the behaviour under test), so they are not linted.
	mapfile -t pkgs < <(go list ./... | grep -v '/tests/cpython$')
	set -- "${pkgs[@]}"
fi
if ! go vet -vettool="$tmp/asynciovet" "$@"; then
	echo "lint.sh: asynciovet reported findings (or failed); fix them or add a documented //asynciovet:ignore" >&2
	exit 1
fi
