#!/usr/bin/env bash
# check-rule-ids.sh: every rule ID cited in the module's Go files must be
# defined in docs/rules.md (as an anchor <a id="LOOP-4"></a>).
#
# Cited means anywhere in a .go file (comments, strings, identifiers):
#   - the dash form LOOP-4; a sub-ID LOOP-1.3 counts as LOOP-1;
#   - test, benchmark, example and fuzz names: TestLOCK3_..., TestTG6a_...
#     (a scenario letter is dropped), TestLOOP10_LOOP11_... (one ID per part).
# Exit status 1, listing each undefined ID with where it is cited, if any is
# missing; 1 also if an ID is defined twice. Needs only grep, sed and sort.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

rules=docs/rules.md
if [ ! -f "$rules" ]; then
	echo "check-rule-ids: $rules not found" >&2
	exit 1
fi

# PREFIX-N tokens that are not rule IDs (add prefixes here if a comment
# needs, say, "SHA-256").
not_rule='^(UTF|ISO|RFC|SHA|CVE|IEEE|MD|AES|RSA|TLS|HTTP|IPV|ECDSA|ED)-'

defined=$(grep -oE '<a id="[A-Z]+-[0-9]+"></a>' "$rules" | sed -E 's/^<a id="([^"]+)".*/\1/' | sort)
dups=$(printf '%s\n' "$defined" | uniq -d)
if [ -n "$dups" ]; then
	echo "check-rule-ids: defined more than once in $rules:" >&2
	printf '  %s\n' $dups >&2
	exit 1
fi

go_grep() { grep -rhoE --include='*.go' --exclude-dir=.git --exclude-dir=vendor "$1" . || true; }

dash_re='\b[A-Z][A-Z]+-[0-9]+'
test_re='\b(Test|Benchmark|Example|Fuzz)([A-Z][A-Z]+[0-9]+[a-z]?_)*[A-Z][A-Z]+[0-9]+[a-z]?(_|\b)'

cited=$(
	{
		go_grep "$dash_re"
		go_grep "$test_re" |
			sed -E 's/^(Test|Benchmark|Example|Fuzz)//; s/_+$//' | tr '_' '\n' |
			sed -E 's/^([A-Z]+)([0-9]+)[a-z]?$/\1-\2/'
	} | { grep -vE "$not_rule" || true; } | sort -u
)

missing=$(printf '%s\n' "$cited" | grep -vxF -f <(printf '%s\n' "$defined") | grep . || true)
if [ -n "$missing" ]; then
	echo "check-rule-ids: rule IDs cited in Go files but not defined in $rules:" >&2
	for id in $missing; do
		prefix=${id%-*} num=${id##*-}
		where=$(grep -rnoE --include='*.go' --exclude-dir=.git --exclude-dir=vendor \
			"\b$id\b|\b(Test|Benchmark|Example|Fuzz)([A-Z]+[0-9]+[a-z]?_)*$prefix$num[a-z]?(_|\b)" . |
			cut -d: -f1,2 | head -n 3 | tr '\n' ' ' | sed 's/ $//' || true)
		echo "  $id   ($where)" >&2
	done
	exit 1
fi
echo "check-rule-ids: $(printf '%s\n' "$cited" | grep -c .) cited rule IDs, all defined in $rules ($(printf '%s\n' "$defined" | grep -c .) defined)"
