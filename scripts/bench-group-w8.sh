#!/usr/bin/env bash
# bench-group-w8.sh: W8 echo (../shared/bench/WORKLOADS.md) served by one loop and by a LoopGroup of 2
# loops in both server modes, interleaved, with the shared load generator (issue 18 item 6).
#
#   scripts/bench-group-w8.sh                  # REPEATS=3, 100,000 round trips of 64 B per run
#   REPEATS=5 TOTAL=200000 SIZE=4096 scripts/bench-group-w8.sh
#
# The shared driver pins every W8 server to CPU 0, which leaves a second loop no core; here the server
# may use both CPUs and the load generator is pinned to CPU 1, so on a 2-core machine the second loop
# shares a core with the load generator: read server CPU per request (what a loop costs per request)
# before req/s. All traffic is on 127.0.0.1, bounded by TOTAL and a 40 s limit per run.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="${ASYNCIO_SHARED:-$REPO/../shared}"
[ -d "$SHARED/bench/loadgen" ] || { echo "no load generator at $SHARED/bench/loadgen (set ASYNCIO_SHARED)" >&2; exit 2; }
export PATH="$PATH:/usr/local/go/bin"
REPEATS="${REPEATS:-3}" TOTAL="${TOTAL:-100000}" SIZE="${SIZE:-64}" CONNS="${CONNS:-50}"

TMP="$(mktemp -d /tmp/go-asyncio-group-w8.XXXXXX)"
SPID=""
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
( cd "$REPO" && go build -o "$TMP/gobench" ./tests/bench )
( cd "$SHARED/bench/loadgen" && go build -o "$TMP/loadgen" . )

configs=("1 -" "2 reuseport" "2 roundrobin")
OUT="$TMP/runs.jsonl"
for rep in $(seq 1 "$REPEATS"); do
  for variant in streams protocol; do
    for cfg in "${configs[@]}"; do
      set -- $cfg
      loops=$1 mode=$2
      args=(-w echo-server -variant "$variant" -size "$SIZE")
      [ "$loops" -gt 1 ] && args+=(-loops "$loops" -group-mode "$mode")
      "$TMP/gobench" "${args[@]}" > "$TMP/srv.out" 2>&1 &
      SPID=$!
      PORT=""
      for _ in $(seq 1 250); do
        PORT=$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out" 2>/dev/null || true)
        [ -n "$PORT" ] && break
        sleep 0.02
      done
      [ -n "$PORT" ] || { echo "server did not start: ${args[*]}" >&2; cat "$TMP/srv.out" >&2; exit 1; }
      label="loops$loops"; [ "$loops" -gt 1 ] && label="loops$loops-$mode"
      timeout 40 taskset -c 1 "$TMP/loadgen" -addr "127.0.0.1:$PORT" -c "$CONNS" -size "$SIZE" \
        -total "$TOTAL" -timeout 30s -impl go-asyncio -variant "$variant-$label" -server-pid "$SPID" \
        >> "$OUT"
      kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
      echo "  rep $rep $variant $label" >&2
    done
  done
done

python3 - "$OUT" "$SIZE" "$TOTAL" <<'EOF'
import json, statistics, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        runs[r["variant"]].append(r)
def med(rs, key):
    vals = [r[key] for r in rs if isinstance(r.get(key), (int, float))]
    return statistics.median(vals) if vals else float("nan")
print(f"W8 echo on a LoopGroup, {sys.argv[2]} B, {sys.argv[3]} round trips per run, medians of {min(len(v) for v in runs.values())}")
print()
print("| server (variant-loops-mode-size) | req/s | server CPU µs/req | server cores | p99 µs |")
print("|---|---:|---:|---:|---:|")
for v in sorted(runs):
    rs = runs[v]
    print(f"| {v} | {med(rs, 'ops_per_s'):,.0f} | {med(rs, 'server_cpu_us_per_req'):.2f} | {med(rs, 'server_cpu'):.2f} | {med(rs, 'p99_us'):,.0f} |")
EOF
