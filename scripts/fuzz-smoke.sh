#!/usr/bin/env bash
# Run every fuzz target in the repository (each `func FuzzX` in a
# *_test.go file) for FUZZTIME (default 20s), one at a time (the fuzzer
# uses FUZZPARALLEL workers, default 1: CI machines are small). A finding
# fails the script; Go writes the failing input under the package's
# testdata/fuzz/FuzzX/ — keep it there as a regression once fixed.
#   scripts/fuzz-smoke.sh
#   FUZZTIME=10m scripts/fuzz-smoke.sh          (a longer run, e.g. before a release)
#   FUZZTIME=1m scripts/fuzz-smoke.sh FuzzScenario FuzzStreamReader   (only these)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
fuzztime="${FUZZTIME:-20s}"
parallel="${FUZZPARALLEL:-1}"
status=0
n=0
while IFS=: read -r file _ decl; do
  name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"$decl")"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  pkg="./$(dirname "$file")"
  n=$((n + 1))
  echo "== $name ($pkg, $fuzztime)"
  # The last stats line says how many inputs ran and how many were new.
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$parallel" "$pkg" >"${TMPDIR:-/tmp}/fuzz-$name.log" 2>&1; then
    cat "${TMPDIR:-/tmp}/fuzz-$name.log"
    echo "FAIL: $name"
    status=1
  else
    grep '^fuzz: elapsed' "${TMPDIR:-/tmp}/fuzz-$name.log" | tail -1
  fi
done < <(grep -rn --include='*_test.go' '^func Fuzz' . | sed 's|^\./||' | sort)
if [ "$n" -eq 0 ]; then
  echo "fuzz-smoke: no fuzz target found" >&2
  exit 2
fi
exit $status
