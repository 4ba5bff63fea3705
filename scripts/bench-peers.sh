#!/usr/bin/env bash
# bench-peers.sh: build tests/bench (the project's W1-W10, impl "go-asyncio") and run it beside
# CPython asyncio, uvloop and raw Go with the shared driver (../shared/bench/run-peers.sh), which
# prints the median table and the project-vs-peers ratio table (issue 6).
#
#   scripts/bench-peers.sh                                  # full run, REPEATS=3 (~4-5 min, 2 cores)
#   REPEATS=1 QUICK=1 scripts/bench-peers.sh                # smoke test
#   REPEATS=3 ONLY='W1|W2|W3|W4|W5|W6|W7|W10' scripts/bench-peers.sh
#
# REPEATS, QUICK, ONLY and PROJECT_TIMEOUT are passed through to the driver. The shared directory
# is ${ASYNCIO_SHARED:-<repo>/../shared} (in a linked git worktree: beside the main checkout). Needs python3-uvloop (installed here if missing), taskset.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="${ASYNCIO_SHARED:-$REPO/../shared}"
if [ -z "${ASYNCIO_SHARED:-}" ] && [ ! -d "$SHARED" ]; then
  # A linked worktree: look beside the main checkout instead.
  SHARED="$(cd "$REPO" && cd "$(git rev-parse --git-common-dir)/.." && pwd)/../shared"
fi
DRIVER="$SHARED/bench/run-peers.sh"
[ -x "$DRIVER" ] || [ -f "$DRIVER" ] || { echo "no driver at $DRIVER (set ASYNCIO_SHARED)" >&2; exit 2; }
export PATH="$PATH:/usr/local/go/bin"

if ! /usr/bin/python3 -c 'import uvloop' 2>/dev/null; then
  echo "== installing python3-uvloop" >&2
  apt-get update && apt-get install -y python3-uvloop
fi

TMP="$(mktemp -d /tmp/go-asyncio-bench.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
BIN="$TMP/gobench"
echo "== building $BIN from $REPO/tests/bench" >&2
( cd "$REPO" && go build -o "$BIN" ./tests/bench )

rc=0
PROJECT_BIN="$BIN" REPEATS="${REPEATS:-3}" QUICK="${QUICK:-0}" ONLY="${ONLY:-.}" \
  bash "$DRIVER" || rc=$?

# The driver's summarize.py stops at the project's W11 rows (KeyError: '1'); print W11 and W12
# against their goals from the same run's records.
RES="${BENCH_RESULTS:-}"
if [ -z "$RES" ]; then
  if [ -w "$(dirname "$DRIVER")" ]; then RES="$(dirname "$DRIVER")/results"; else RES="${TMPDIR:-/tmp}/go-asyncio-bench/results"; fi
fi
RUN="$(ls -t "$RES"/run-*.jsonl 2>/dev/null | head -1)"
if [ -n "$RUN" ] && grep -q '"W1[12]"' "$RUN"; then
  echo
  echo "W11 and W12 ($RUN):"
  echo
  /usr/bin/python3 "$REPO/scripts/bench-w11-w12.py" "$RUN" || true
fi
exit "$rc"
