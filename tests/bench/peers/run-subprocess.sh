#!/usr/bin/env bash
# run-subprocess.sh: the subprocess workloads of tests/bench (spawn: 1,000
# `true` processes, 100 at a time; cat: 64 MiB through cat with
# Communicate) for go-asyncio, asyncio and uvloop, REPEATS times
# interleaved, then the medians and the ratios to uvloop.
#
#   tests/bench/peers/run-subprocess.sh          # REPEATS=5
#   REPEATS=1 tests/bench/peers/run-subprocess.sh
#
# Needs Debian's /usr/bin/python3 with python3-uvloop, and go on PATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPEATS="${REPEATS:-5}"
PY=/usr/bin/python3
BIN="$(mktemp -d)/gobench"
trap 'rm -rf "$(dirname "$BIN")"' EXIT
(cd "$HERE/.." && go build -o "$BIN" .)
OUT="$(mktemp)"
for r in $(seq "$REPEATS"); do
  for w in spawn cat; do
    "$BIN" -w "$w" | sed 's/^/go-asyncio /' >>"$OUT"
    for impl in asyncio uvloop; do
      "$PY" "$HERE/subprocess_peers.py" "$impl" "$w" | sed "s/^/$impl /" >>"$OUT"
    done
  done
  echo "round $r of $REPEATS done" >&2
done
"$PY" - "$OUT" <<'PYEOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    impl, js = line.split(" ", 1)
    r = json.loads(js)
    key = "mb_per_s" if r["workload"] == "cat" else "ns_per_op"
    runs.setdefault((r["workload"], impl), []).append(r[key])
print("| workload | go-asyncio | asyncio | uvloop | go-asyncio vs uvloop | go-asyncio vs asyncio |")
print("|---|---:|---:|---:|---:|---:|")
for w, unit in (("spawn", "ns/process"), ("cat", "MB/s")):
    m = {impl: statistics.median(runs[(w, impl)]) for impl in ("go-asyncio", "asyncio", "uvloop")}
    # Ratios say how many times faster go-asyncio is (> 1: faster).
    if w == "cat":
        ru, ra = m["go-asyncio"] / m["uvloop"], m["go-asyncio"] / m["asyncio"]
    else:
        ru, ra = m["uvloop"] / m["go-asyncio"], m["asyncio"] / m["go-asyncio"]
    n = len(runs[(w, "go-asyncio")])
    print(f"| {w} ({unit}, median of {n}) | {m['go-asyncio']:,.0f} | {m['asyncio']:,.0f} | {m['uvloop']:,.0f} | {ru:.2f}x | {ra:.2f}x |")
PYEOF
rm -f "$OUT"
