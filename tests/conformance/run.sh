#!/usr/bin/env bash
# Run the asyncio conformance harness against the Go library:
# the hand-written corpus, then COUNT (default 300) random scenarios for
# each seed in SEEDS (default "1 2 3").
#   tests/conformance/run.sh            (from anywhere inside the repository)
#   SEEDS="11 12 13" COUNT=2000 tests/conformance/run.sh
# The shared directory is $ASYNCIO_SHARED, else ../shared next to the repo root.
#
# Random scenarios get their expected traces from the shared CPython 3.11
# reference run with CPython 3.12's gather() (ref312/gather312.py): we
# implement 3.12+ semantics, and GATHER-7 is the one 3.11/3.12 difference
# the generator does not screen out. The corpus uses its recorded traces.
# Exit status: non-zero if any run had a failing case.
set -u
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
shared="${ASYNCIO_SHARED:-$repo/../shared}"
check="$shared/conformance/check.sh"
if [ ! -x "$check" ] && [ ! -f "$check" ]; then
    echo "run.sh: $check not found (set ASYNCIO_SHARED)" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/conformance-go"
(cd "$repo" && go build -o "$bin" ./tests/conformance/scenario) || exit 2

status=0
echo "== corpus"
bash "$check" "$bin" "$shared/conformance/cases" || status=1
# Extra cases found by random testing (traces from the CPython reference).
echo "== extra cases (tests/conformance/cases)"
bash "$check" "$bin" "$repo/tests/conformance/cases" || status=1
export JOBS="${JOBS:-2}"
for seed in ${SEEDS:-1 2 3}; do
    echo "== random seed $seed (${COUNT:-300} scenarios, reference with 3.12 gather)"
    PYTHON="$repo/tests/conformance/ref312/python3" bash "$check" --random "$seed" "${COUNT:-300}" "$bin" || status=1
done
exit $status
