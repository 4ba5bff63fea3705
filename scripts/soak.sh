#!/usr/bin/env bash
# Soak run (not in CI): one loop under mixed load for SOAK_DURATION
# (default 10m) — echo over TCP and TLS with random disconnects, fan-out
# with timeouts and cancellations, executor jobs, timers, task groups
# failing at random — then checks bytes in = bytes out, no descriptor or
# goroutine left after close, every deferred call ran, RSS flat after the
# warm-up. Exit status non-zero if a check fails. See tests/soak/main.go
# and docs/soak.md for the figures of a run.
#   scripts/soak.sh
#   SOAK_DURATION=1h scripts/soak.sh -clients 64 -seed 7
# Extra arguments go to the soak program (-clients, -sample, -seed).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
bin="$(mktemp -d)/soak"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./tests/soak
SOAK_DURATION="${SOAK_DURATION:-10m}" "$bin" "$@"
