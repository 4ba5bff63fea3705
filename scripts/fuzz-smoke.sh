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
  log="${TMPDIR:-/tmp}/fuzz-$name.log"
  run() { go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$parallel" "$pkg" >"$log" 2>&1; }
  ok=1
  if ! run; then
    # The fuzzing engine sometimes ends a run at its own deadline with
    # "context deadline exceeded" and no failing input: a race in Go's
    # fuzz coordinator between the -fuzztime context and its workers'
    # (go.dev/issue/75804, fixed in Go 1.27; this module is on 1.26). It
    # strikes more often on a loaded machine (twice in a row in one CI run
    # on 2026-12-05). That is not a finding: try up to twice more. A real
    # finding names a failing input under testdata/fuzz.
    ok=0
    for attempt in 2 3; do
      if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
        echo "(the fuzz coordinator's deadline race, go.dev/issue/75804, no failing input: attempt $attempt)"
        if run; then
          ok=1
          break
        fi
      else
        break
      fi
    done
  fi
  if [ "$ok" -eq 0 ]; then
    cat "$log"
    echo "FAIL: $name"
    status=1
  else
    grep '^fuzz: elapsed' "$log" | tail -1
  fi
done < <(grep -rn --include='*_test.go' '^func Fuzz' . | sed 's|^\./||' | sort)
if [ "$n" -eq 0 ]; then
  echo "fuzz-smoke: no fuzz target found" >&2
  exit 2
fi
exit $status
