#!/usr/bin/env python3
"""W11 and W12 against their goals, from one run of the shared driver.

The shared summarize.py stops with KeyError: '1' when it reaches the project's W11 rows (its W11
branch rebinds the name of its loop's key), so its ratio table never has W11 or W12. This reads the
run's JSON lines (results/run-<stamp>.jsonl) the same way, medians over the repeats, and prints those
rows: W11 the aggregate ns per handoff with 1 and 2 loops (the project's scaling, and the peers in 1
and 2 processes), W12 the cross-loop call round trip against uvloop and the raw-Go channel round trip.

    scripts/bench-w11-w12.py RESULTS/run-<stamp>.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

PROJECT = "go-asyncio"


def medians(path):
    groups = defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            if "error" in d or d.get("workload") not in ("W11", "W12"):
                continue
            groups[(d["workload"], d["impl"], d.get("variant", ""))].append(d["ns_per_op"])
    return {k: statistics.median(v) for k, v in groups.items()}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        sys.exit(2)
    m = medians(sys.argv[1])
    if not m:
        print("no W11 or W12 records in", sys.argv[1], file=sys.stderr)
        sys.exit(1)

    def ns(w, impl, var=""):
        return m.get((w, impl, var))

    def ratio(a, b):  # > 1: the second is faster
        return f"{a / b:.2f}×" if a and b else "-"

    def fmt(v):
        return f"{v:,.1f}" if v is not None else "-"

    print("| workload | go-asyncio ns/op | goal | this run |")
    print("|---|---:|---|---|")
    one, two = ns("W11", PROJECT, "loops1"), ns("W11", PROJECT, "loops2")
    raw1, raw2 = ns("W11", "rawgo", "raw-go-pairs-loops1-gmp2"), ns("W11", "rawgo", "raw-go-pairs-loops2-gmp2")
    print(f"| W11 1 loop | {fmt(one)} | | {ratio(ns('W11', 'uvloop', 'loops1'), one)} uvloop, "
          f"{ratio(ns('W11', 'asyncio', 'loops1'), one)} asyncio |")
    print(f"| W11 2 loops | {fmt(two)} | ≥ 1.8× our 1 loop; ahead of uvloop in 2 processes | "
          f"{ratio(one, two)} our 1 loop (raw-Go pairs {ratio(raw1, raw2)}); "
          f"{ratio(ns('W11', 'uvloop', 'loops2'), two)} uvloop in 2 processes |")
    call = ns("W12", PROJECT, "task")
    print(f"| W12 cross-loop call (task) | {fmt(call)} | within 2× of a channel round trip; ≥ 10× uvloop | "
          f"{ratio(call, ns('W12', 'rawgo', 'raw-go-chan-roundtrip-gmp2'))} the raw-Go round trip; "
          f"{ratio(ns('W12', 'uvloop'), call)} uvloop |")


if __name__ == "__main__":
    main()
