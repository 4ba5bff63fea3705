#!/usr/bin/env bash
# Run the asyncio conformance harness against the Go library:
# the hand-written corpus, then 300 random scenarios for seeds 1, 2 and 3.
#   tests/conformance/run.sh            (from anywhere inside the repository)
# The shared directory is $ASYNCIO_SHARED, else ../shared next to the repo root.
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
for seed in 1 2 3; do
    echo "== random seed $seed (300 scenarios)"
    bash "$check" --random "$seed" 300 "$bin" || status=1
done
exit $status
