#!/usr/bin/env bash
# trace-figure.sh: draw docs/trace-fanout.png, the asyncio tasks of one run of examples/fanout as
# runtime/trace records them (one row per task: its life as a line, each step as a bar, cancel
# requests and deliveries as marks), from `go tool trace -d=parsed` (issue 14).
#
#   scripts/trace-figure.sh            # needs gnuplot (installed if missing)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
if ! command -v gnuplot >/dev/null; then
  echo "== installing gnuplot-nox" >&2
  apt-get update && apt-get install -y gnuplot-nox
fi
TMP="$(mktemp -d /tmp/go-asyncio-trace.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT

( cd "$REPO" && go run ./examples/fanout -n 12 -limit 4 -timeout 100ms -trace "$TMP/trace.out" )
go tool trace -d=parsed "$TMP/trace.out" > "$TMP/parsed.txt"

# One row per asyncio task, in order of creation: life (begin..end), steps
# (regions), cancel requests and deliveries (logs), times in ms.
python3 - "$TMP" <<'PY'
import re, sys
tmp = sys.argv[1]
ev = re.compile(r'^M=\S+ P=\S+ G=\S+ (\w+) Time=(\d+) (.*)$')
tasks, order, t0 = {}, [], None
open_regions = {}
for line in open(f"{tmp}/parsed.txt"):
    m = ev.match(line)
    if not m:
        continue
    kind, ts, rest = m.group(1), int(m.group(2)), m.group(3)
    if kind not in ("TaskBegin", "TaskEnd", "Log", "RegionBegin", "RegionEnd"):
        continue
    if t0 is None:
        t0 = ts
    ms = (ts - t0) / 1e6
    if kind == "TaskBegin":
        tid = re.search(r'ID=(\d+)', rest).group(1)
        tasks[tid] = {"name": tid, "begin": ms, "end": None, "steps": [], "cancel": [], "delivered": []}
        order.append(tid)
        continue
    tid = (re.search(r'Task=(\d+)', rest) or re.search(r'ID=(\d+)', rest)).group(1)
    t = tasks.get(tid)
    if t is None:
        continue
    if kind == "TaskEnd":
        t["end"] = ms
    elif kind == "Log":
        cat = re.search(r'Category="([^"]*)"', rest).group(1)
        msg = re.search(r'Message="(.*)"', rest).group(1)
        if cat == "asyncio.name":
            t["name"] = msg
        elif cat == "asyncio.cancel":
            t["cancel"].append(ms)
        elif cat == "asyncio.cancel.delivered":
            t["delivered"].append(ms)
    elif kind == "RegionBegin":
        open_regions[tid] = ms
    elif kind == "RegionEnd" and tid in open_regions:
        t["steps"].append((open_regions.pop(tid), ms))
last = max(max([t["end"] or 0 for t in tasks.values()] + [s[1] for t in tasks.values() for s in t["steps"]]), 1)
rows = [tasks[i] for i in order]
with open(f"{tmp}/life.dat", "w") as f, open(f"{tmp}/steps.dat", "w") as g, \
     open(f"{tmp}/cancel.dat", "w") as c, open(f"{tmp}/delivered.dat", "w") as d, open(f"{tmp}/labels.gp", "w") as lab:
    ticks = []
    for y, t in enumerate(rows):
        y = len(rows) - y
        f.write(f"{t['begin']} {y} {(t['end'] or last) - t['begin']}\n")
        for a, b in t["steps"]:
            g.write(f"{a} {y} {max(b - a, last / 800)}\n")
        for x in t["cancel"]:
            c.write(f"{x} {y}\n")
        for x in t["delivered"]:
            d.write(f"{x} {y}\n")
        ticks.append(f'"{t["name"]}" {y}')
    lab.write("set ytics (" + ", ".join(ticks) + ")\n")
    lab.write(f"set yrange [0:{len(rows) + 1}]\nset xrange [0:{last * 1.02}]\n")
PY

gnuplot <<GP
set terminal pngcairo size 1400,$((22 * $(wc -l < "$TMP/life.dat") + 140)) font "Sans,10"
set output "$REPO/docs/trace-fanout.png"
set title "examples/fanout under runtime/trace: one row per asyncio task (go tool trace -d=parsed)"
set xlabel "time since the first task (ms)"
set grid xtics
set key outside top center horizontal
load "$TMP/labels.gp"
plot "$TMP/life.dat" using 1:2:3:(0) with vectors nohead lw 1 lc rgb "#9aa7b8" title "alive (trace task)", \
     "$TMP/steps.dat" using 1:2:3:(0) with vectors nohead lw 9 lc rgb "#1f6fb4" title "step (trace region)", \
     "$TMP/cancel.dat" using 1:2 with points pt 7 ps 1.2 lc rgb "#d62728" title "cancel requested (log)", \
     "$TMP/delivered.dat" using 1:2 with points pt 6 ps 1.8 lc rgb "#ff7f0e" title "CancelledError delivered (log)"
GP
echo "wrote $REPO/docs/trace-fanout.png" >&2
