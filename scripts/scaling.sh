#!/usr/bin/env bash
# scaling.sh: the scaling curves of issue 6 (item 4). Builds tests/bench and runs
#   bench -w scale-tasks  -n 1000|10000|100000|1000000   (parked tasks)
#   bench -w scale-timers -n 1000|10000|100000|1000000   (pending timers)
#   bench -w scale-conns  -n 10|100|1000|10000           (open loopback TCP connections)
# one size per process, REPEATS times (sizes interleaved), and writes the medians to
# docs/scaling.md (a table per dimension, date, machine, command), the raw JSON lines to
# docs/scaling.jsonl and the plot to docs/scaling.png (gnuplot; installed if missing).
#
#   scripts/scaling.sh              # REPEATS=3, about 1-2 minutes on 2 cores, ~3.5 GB RSS at 1M tasks
#   REPEATS=1 scripts/scaling.sh    # quicker, noisier
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPEATS="${REPEATS:-3}"
DOCS="$REPO/docs"
export PATH="$PATH:/usr/local/go/bin"

if ! command -v gnuplot >/dev/null; then
  echo "== installing gnuplot-nox" >&2
  apt-get update && apt-get install -y gnuplot-nox
fi

TMP="$(mktemp -d /tmp/go-asyncio-scaling.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
BIN="$TMP/gobench"
echo "== building $BIN from $REPO/tests/bench" >&2
( cd "$REPO" && go build -o "$BIN" ./tests/bench )

RAW="$TMP/scaling.jsonl"
: >"$RAW"
declare -A SIZES=(
  [scale-tasks]="1000 10000 100000 1000000"
  [scale-timers]="1000 10000 100000 1000000"
  [scale-conns]="10 100 1000 10000"
)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
T0=$SECONDS
if [ -n "${FROM_JSONL:-}" ]; then
  # Regenerate the docs from the raw lines of an earlier run (no benchmark runs).
  cp "$FROM_JSONL" "$RAW"
  START="${START_DATE:?FROM_JSONL needs START_DATE (and RUN_SECONDS), the date of that run}"
else
for w in scale-tasks scale-timers scale-conns; do
  reps=$REPEATS
  # The connection curve is cheap and the noisiest (kernel time, vCPU wakeups): twice the repeats.
  [ "$w" = scale-conns ] && reps=$((2 * REPEATS))
  for r in $(seq "$reps"); do
    for n in ${SIZES[$w]}; do
      echo "== $w -n $n (repeat $r/$reps)" >&2
      # A failed validation stops the script (set -e); a size above the descriptor limit
      # prints a note and a line with "skipped".
      timeout 300 "$BIN" -w "$w" -n "$n" | tee -a "$RAW" >&2
    done
  done
done
fi
ELAPSED=${RUN_SECONDS:-$((SECONDS - T0))}

MACHINE="$(nproc) vCPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(free -g | awk '/^Mem:/{print $2}') GiB RAM, Linux $(uname -r), $(go version | awk '{print $3}'), RLIMIT_NOFILE hard $(ulimit -Hn)"
mkdir -p "$DOCS"
cp "$RAW" "$DOCS/scaling.jsonl"
/usr/bin/python3 - "$RAW" "$DOCS/scaling.md" "$TMP" "$START" "$MACHINE" "$REPEATS" "$ELAPSED" <<'EOF'
import json, statistics, sys
raw, md_path, tmp, start, machine, repeats, elapsed = sys.argv[1:]
rows = {}
for line in open(raw):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        if r.get("server_cpu_ns_per_req"):
            r["server_kernel_pct"] = 100 * r["server_sys_ns_per_req"] / r["server_cpu_ns_per_req"]
        rows.setdefault((r["workload"], r["n"]), []).append(r)

def med(w, n, k):
    vals = [r[k] for r in rows.get((w, n), []) if k in r]
    return statistics.median(vals) if vals else None

def best(w, n, k):
    vals = [r[k] for r in rows.get((w, n), []) if k in r]
    return min(vals) if vals else None

def skipped(w, n):
    for r in rows.get((w, n), []):
        if "skipped" in r:
            return r["skipped"]
    return None

def fmt(v, scale=1.0, digits=0):
    if v is None:
        return "–"
    v = v / scale
    return f"{v:,.{digits}f}"

def cell(w, n, k, scale, digits):
    # Times are the best run (the machine is shared: a run that another job disturbed is slower, never
    # faster); "med:key" takes the median of the runs instead (memory, GC cycles).
    if k.startswith("med:"):
        return fmt(med(w, n, k[4:]), scale, digits)
    if k.startswith("max:"):
        vals = [r[k[4:]] for r in rows.get((w, n), []) if k[4:] in r]
        return fmt(max(vals) if vals else None, scale, digits)
    return fmt(best(w, n, k), scale, digits)

tables = {
    "scale-tasks": ("Parked tasks",
        "N tasks are created, each awaiting its own never-done future, then one `Sleep(t,0)` of the "
        "main task parks them all. With all N parked: 200,000 `Sleep(t,0)` rounds of the main task, "
        "then 10,000 (at most N) wakeups of tasks spread over the set (resolve its future, it finishes, "
        "the main task awaiting it resumes). Both are timed in 10 batches; the figure is the median batch.",
        [("spawn+park ns/task", "spawn_park_ns_per_task", 1, 0),
         ("CPU ns/task", "spawn_park_cpu_ns_per_task", 1, 0),
         ("GC cycles in spawn", "med:spawn_gc_cycles", 1, 0),
         ("bytes/task (RSS)", "med:bytes_per_task", 1, 0),
         ("stack B/task", "med:stack_bytes_per_task", 1, 0),
         ("heap B/task", "med:heap_bytes_per_task", 1, 0),
         ("Sleep(t,0) ns", "sleep0_ns", 1, 1),
         ("wakeup ns", "wakeup_ns", 1, 0),
         ("peak RSS MB", "med:peak_rss_mb", 1, 0)]),
    "scale-timers": ("Pending timers",
        "Pass 1: N `CallLater` with deadlines spread over the next 1 ms in random order (W5's splitmix64), "
        "the loop held until all are due, then the time for the loop to fire all N. Pass 2: N timers "
        "an hour away, `Cancel` on each, then one loop iteration that purges them (LOOP-4: rebuilt "
        "when more than half are cancelled). The cycle repeats max(3, 300,000/N) times in the run; each "
        "figure is the median cycle (the first cycle, which also grows the heap, is shown apart).",
        [("CallLater ns", "schedule_ns_per_timer", 1, 0),
         ("CallLater ns, 1st cycle", "schedule_first_ns_per_timer", 1, 0),
         ("CallLater ns (1 h away)", "schedule_far_ns_per_timer", 1, 0),
         ("fire ns/timer", "fire_ns_per_timer", 1, 0),
         ("Cancel ns", "cancel_ns_per_timer", 1, 1),
         ("purge ns/timer", "purge_ns_per_timer", 1, 1),
         ("heap B/timer", "med:heap_bytes_per_timer", 1, 0),
         ("peak RSS MB", "med:peak_rss_mb", 1, 0)]),
    "scale-conns": ("Open connections",
        "N loopback TCP connections to one go-asyncio loop (echo server, protocol variant, 64 B "
        "requests); the clients are plain Go sockets in a child process, so each process needs N "
        "descriptors. With all N open: 2,000 sequential round trips rotating over 10 connections (hot: "
        "their state stays in cache; the other N-10 idle), 2,000 more each on a different one of the N "
        "(cold), then max(2, 50,000/N) back-to-back requests on every connection at once (all active). "
        "The single-request phases are bimodal (~7 or ~60 µs per round trip) depending on whether "
        "another job holds a vCPU; twice the repeats: this curve is the noisiest. Loop CPU is the server process's user+system "
        "time per request in each phase (getrusage); on loopback the kernel's TCP work for both ends of "
        "a send is charged to the sender. The kernel share is the system part of it (a tick-sampled split, "
        "approximate).",
        [("connect µs/conn", "connect_ns_per_conn", 1000, 1),
         ("RTT µs, 10 hot conns", "hot_rtt_ns_median", 1000, 1),
         ("loop CPU ns/req, hot", "hot_rtt_server_cpu_ns_per_req", 1, 0),
         ("RTT µs, all N (cold)", "rtt_ns_median", 1000, 1),
         ("loop CPU ns/req, cold", "rtt_server_cpu_ns_per_req", 1, 0),
         ("ns/req, all active", "concurrent_ns_per_req", 1, 0),
         ("k req/s, all active", "max:concurrent_req_per_s", 1000, 0),
         ("loop CPU ns/req, all active", "server_cpu_ns_per_req", 1, 0),
         ("kernel % of it (median)", "med:server_kernel_pct", 1, 0),
         ("server peak RSS MB", "med:peak_rss_mb", 1, 0)]),
}
sizes = {"scale-tasks": [1000, 10000, 100000, 1000000], "scale-timers": [1000, 10000, 100000, 1000000],
         "scale-conns": [10, 100, 1000, 10000]}

out = ["# Scaling curves", "",
       f"How the cost per operation grows with the number of parked tasks, pending timers and open "
       f"connections (issue 6, item 4). One process per run, sizes interleaved, {repeats} runs per size "
       f"({2 * int(repeats)} for connections). Times are the best run, memory the median run: the machine "
       f"({machine}) was shared with another benchmark job, which only ever makes a run slower. "
       f"Every run is in scaling.jsonl.",
       "", f"Date: {start}; the run took {elapsed} s. Reproduce with:", "",
       "```sh", f"REPEATS={repeats} scripts/scaling.sh", "```", "",
       "Raw JSON lines (every run): [scaling.jsonl](scaling.jsonl). Plot: ![scaling curves](scaling.png)", ""]
for w, (title, desc, cols) in tables.items():
    out += [f"## {title} (`bench -w {w}`)", "", desc, ""]
    out.append("| N | " + " | ".join(c[0] for c in cols) + " |")
    out.append("|---:|" + "---:|" * len(cols))
    for n in sizes[w]:
        note = skipped(w, n)
        if note:
            out.append(f"| {n:,} | " + note + " |" + " |" * (len(cols) - 1))
            continue
        if (w, n) not in rows:
            out.append(f"| {n:,} | not run |" + " |" * (len(cols) - 1))
            continue
        out.append(f"| {n:,} | " + " | ".join(cell(w, n, k, s, d) for _, k, s, d in cols) + " |")
    out.append("")
out += ["## What grows with N, and why", "",
  "(Written from several runs of this script on the machine above; the tables are the latest run.)", "",
  "- **Parked tasks cost the loop nothing per iteration.** `Sleep(t,0)` stays at ~20 ns from 1k to 1M "
  "parked tasks: a parked task is in no queue and registers nothing with the selector. Memory per task is "
  "flat, ~3.3 KB (a 2 KB goroutine stack + ~1.15 KB of task, future and `iter.Pull` state). Spawn+park "
  "per task is roughly flat in wall time, but the GC cycles during the spawn grow (0 → 7) and each one "
  "scans every parked goroutine's stack (`runtime.scanstack`/`markroot`, ~1/3 of the CPU profile at 1M), "
  "which the CPU column (it includes the GC's workers on the other core) shows. A wakeup grows ~5× from "
  "1k to 1M: the woken task's stack, `T` and future are cold in cache and TLB once 3.3 KB × N is far past "
  "the last-level cache. That is memory latency, not an O(N) step.",
  "- **Timers.** `CallLater` (a 4-ary heap push, O(1) on average for random deadlines, plus a ~75 B "
  "handle) stays within ~50-110 ns from 1k to 1M; the differences between sizes are GC and noise, not a "
  "trend. Firing grows ~4× from 1k to 1M: each due timer is a pop (O(log₄ N) sift-down over a 24 B-per-"
  "timer array that no longer fits in cache past 100k) plus a callback on a cold handle. `Cancel` is a flag "
  "store, O(1); its few ns of growth are memory traffic over N handles. The purge (LOOP-4) is one O(N) "
  "rebuild, a few ns per timer, growing with the pointer chase to each cold handle.",
  "- **Idle connections cost the loop nothing.** With N open and the requests rotated over 10 hot "
  "connections, round trip and loop CPU per request are flat from 10 to 10k: epoll reports only ready "
  "descriptors and the loop's descriptor table is a map lookup. When each request hits a different "
  "connection (cold), or all N are active with only max(2, 50k/N) requests each, the round trip and the "
  "loop's CPU per request about double by 10k, and almost all of that is kernel time (on loopback the "
  "sender pays for the receiver's TCP path): every request touches another socket's kernel state, "
  "epoll item and transport, cold in cache. The loop's user-space share stays under ~1 µs per request.",
  "- **Noise.** The single-request round trip is bimodal (~7 µs, or ~60 µs while another job holds a "
  "vCPU and every hop waits for a vCPU to be woken); the best run is the one without that.",
  ""]
open(md_path, "w").write("\n".join(out))

# gnuplot data: one file per dimension, columns N then the plotted metrics (medians).
plots = {
    "scale-tasks": ["spawn_park_ns_per_task", "wakeup_ns", "sleep0_ns", "bytes_per_task"],
    "scale-timers": ["schedule_ns_per_timer", "fire_ns_per_timer", "cancel_ns_per_timer", "purge_ns_per_timer"],
    "scale-conns": ["hot_rtt_ns_median", "rtt_ns_median", "rtt_server_cpu_ns_per_req", "concurrent_ns_per_req", "server_cpu_ns_per_req"],
}
for w, keys in plots.items():
    with open(f"{tmp}/{w}.dat", "w") as f:
        for n in sizes[w]:
            if (w, n) in rows and not skipped(w, n):
                vals = [med(w, n, k) if k.endswith("bytes_per_task") else best(w, n, k) for k in keys]
                f.write(" ".join([str(n)] + [str(v) if v is not None else "NaN" for v in vals]) + "\n")
EOF

gnuplot <<EOF
set terminal pngcairo size 1500,680 font "Sans,10"
set output "$DOCS/scaling.png"
set multiplot layout 1,3 title "go-asyncio scaling curves ($START, best of $REPEATS runs; $(nproc) vCPUs, shared)"
set logscale x 10
set logscale y 10
set grid xtics ytics mytics
set key below vertical maxrows 5 spacing 1.1
set format x "10^{%L}"
set ylabel "ns per operation (log)"
set title "(a) N parked tasks"
set yrange [10:20000]
set xlabel "parked tasks"
set xrange [500:2000000]
set y2label "bytes per task"
set y2range [0:8000]
set y2tics
set ytics nomirror
plot "$TMP/scale-tasks.dat" u 1:2 w lp lw 2 pt 7 t "spawn+park ns/task", \
     "" u 1:3 w lp lw 2 pt 5 t "wakeup ns", \
     "" u 1:4 w lp lw 2 pt 9 t "Sleep(t,0) round ns", \
     "" u 1:5 axes x1y2 w lp lw 2 dt 2 pt 4 t "bytes/task (right axis)"
unset y2label
unset y2tics
set ytics mirror
set title "(b) N pending timers"
set yrange [1:2000]
set xlabel "pending timers"
plot "$TMP/scale-timers.dat" u 1:2 w lp lw 2 pt 7 t "CallLater ns", \
     "" u 1:3 w lp lw 2 pt 5 t "fire ns/timer", \
     "" u 1:4 w lp lw 2 pt 9 t "Cancel ns", \
     "" u 1:5 w lp lw 2 pt 11 t "purge ns/timer"
set title "(c) N open loopback TCP connections"
set xlabel "open connections"
set xrange [5:20000]
set yrange [1000:100000]
plot "$TMP/scale-conns.dat" u 1:2 w lp lw 2 pt 7 t "RTT ns, 1 active, 10 hot conns", \
     "" u 1:3 w lp lw 2 pt 6 t "RTT ns, 1 active, all N (cold)", \
     "" u 1:4 w lp lw 2 pt 4 dt 2 t "loop CPU ns/req, cold", \
     "" u 1:5 w lp lw 2 pt 5 t "ns/req, all N active", \
     "" u 1:6 w lp lw 2 pt 9 dt 2 t "loop CPU ns/req, all active"
unset multiplot
EOF
echo "== wrote $DOCS/scaling.md, $DOCS/scaling.jsonl, $DOCS/scaling.png (${ELAPSED}s of runs)" >&2
