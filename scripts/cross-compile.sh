#!/usr/bin/env bash
# Cross-compiles every package and its tests for each GOOS/GOARCH we claim
# (go vet, which type-checks the tests too, and go test -c), so a change
# that breaks macOS, the BSDs or Windows fails here on Linux. The core
# (package asyncio) builds everywhere; package aio and the network examples
# are Unix-only and absent on Windows (build-constrained away).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64 freebsd/arm64 windows/amd64 windows/arm64"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for target in $targets; do
  export GOOS=${target%/*} GOARCH=${target#*/}
  echo "-- $GOOS/$GOARCH"
  go vet ./...
  go test -c -o "$out/" ./... >/dev/null
done
