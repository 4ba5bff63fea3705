#!/usr/bin/env bash
# Run the asyncio conformance harness against the Go library: the
# hand-written corpus, our extra cases, then COUNT (default 300) random
# scenarios for each seed in SEEDS (default "1 2 3") with the CPython 3.11
# reference, and MODERN_COUNT (default COUNT) for each seed in MODERN_SEEDS
# (default "101 102") with the CPython 3.13 reference (python-modern).
#   tests/conformance/run.sh            (from anywhere inside the repository)
#   SEEDS="11 12 13" COUNT=2000 tests/conformance/run.sh
# The shared directory is $ASYNCIO_SHARED, else ../shared next to the repo root.
#
# Every reference run goes through ref/gather312.py: the shared reference
# with CPython's own gather() (3.12+ algorithm, GATHER-7; the outer
# cancellation error of the last listed child, GATHER-5). The corpus uses
# its recorded traces, except those in overrides/ (see the README there),
# which are checked first to be what that reference prints.
# python-modern: CPython 3.13 with the 3.11-vs-3.13 version hazards allowed
# (ref/python-modern, as ../shared/conformance/ref/python-modern), so the
# random scenarios reach the TaskGroup/uncancel corners the 3.11 run skips.
# Exit status: non-zero if any run had a failing case.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
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
echo "== overrides (traces CPython's gather gives where the shared corpus differs)"
cases="$tmp/cases"
mkdir "$cases"
cp "$shared"/conformance/cases/*.json "$shared"/conformance/cases/*.trace "$cases"/
for o in "$here"/overrides/*.trace; do
    [ -f "$o" ] || continue
    name="$(basename "$o" .trace)"
    json="$shared/conformance/cases/$name.json"
    if [ ! -f "$json" ]; then
        echo "FAIL override $name: no such shared case"; status=1; continue
    fi
    if cmp -s "$o" "$shared/conformance/cases/$name.trace"; then
        echo "FAIL override $name: the shared trace is the same now: delete the override"; status=1
    fi
    for py in "$here/ref/python3" "$here/ref/python-modern"; do
        if ! "$py" "$shared/conformance/ref/asyncio_ref.py" "$json" 2>/dev/null | cmp -s - "$o"; then
            echo "FAIL override $name: $(basename "$py") with CPython's gather prints another trace"; status=1
        fi
    done
    cp "$o" "$cases/$name.trace"
    echo "ok $name"
done
echo "== corpus"
bash "$check" "$bin" "$cases" || status=1
# Extra cases found by random testing (traces from the CPython reference).
echo "== extra cases (tests/conformance/cases)"
bash "$check" "$bin" "$here/cases" || status=1
export JOBS="${JOBS:-2}"
for seed in ${SEEDS:-1 2 3}; do
    echo "== random seed $seed (${COUNT:-300} scenarios, CPython 3.11 reference with CPython's 3.12+ gather)"
    PYTHON="$here/ref/python3" bash "$check" --random "$seed" "${COUNT:-300}" "$bin" || status=1
done
for seed in ${MODERN_SEEDS:-101 102}; do
    echo "== python-modern seed $seed (${MODERN_COUNT:-${COUNT:-300}} scenarios, CPython 3.13 reference, version hazards allowed)"
    PYTHON="$here/ref/python-modern" bash "$check" --random "$seed" "${MODERN_COUNT:-${COUNT:-300}}" "$bin" || status=1
done
# Issue 18 item 7: the same cases and random scenarios on loop 0 of a LoopGroup whose two other loops
# are busy handing items to each other through CrossQueues (busygroup.go): a loop of a group is an
# unchanged asyncio loop, so every trace must still be CPython's.
export ASYNCIO_SCENARIO_BUSY_GROUP=1
echo "== busy group: corpus and extra cases on loop 0 of a busy 3-loop group"
bash "$check" "$bin" "$cases" || status=1
bash "$check" "$bin" "$here/cases" || status=1
for seed in ${GROUP_SEEDS:-4}; do
    echo "== busy group: random seed $seed (${GROUP_COUNT:-${COUNT:-300}} scenarios, CPython 3.11 reference with CPython's 3.12+ gather)"
    PYTHON="$here/ref/python3" bash "$check" --random "$seed" "${GROUP_COUNT:-${COUNT:-300}}" "$bin" || status=1
done
for seed in ${GROUP_MODERN_SEEDS:-103}; do
    echo "== busy group: python-modern seed $seed (${GROUP_COUNT:-${COUNT:-300}} scenarios, CPython 3.13 reference)"
    PYTHON="$here/ref/python-modern" bash "$check" --random "$seed" "${GROUP_COUNT:-${COUNT:-300}}" "$bin" || status=1
done
unset ASYNCIO_SCENARIO_BUSY_GROUP
exit $status
