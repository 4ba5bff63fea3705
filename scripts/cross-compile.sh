#!/usr/bin/env bash
# Cross-compiles every package and its tests for each GOOS/GOARCH we claim,
# so that a change that breaks macOS, the BSDs or Windows fails here on
# Linux: go vet compiles every package for the target and type-checks it
# with its tests (and checks the assembly against its Go declarations),
# and the test binaries of the
# packages with assembly or runtime-specific code (the core and
# internal/gid) are linked, which is where a missing symbol would show.
# Linking every package's test binary for every target took most of this
# script's five minutes in CI and can find nothing more: the other
# packages are pure Go. The core (package asyncio) builds everywhere;
# package aio and the network examples are Unix-only and absent on
# Windows (build-constrained away).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64 freebsd/arm64 illumos/amd64 windows/amd64 windows/arm64"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for target in $targets; do
  export GOOS=${target%/*} GOARCH=${target#*/}
  echo "-- $GOOS/$GOARCH"
  go vet ./...
  go test -c -o "$out/" . ./internal/gid >/dev/null
done
