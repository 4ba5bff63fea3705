package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// TestH48 runs every check over the cases of the hostile probe h48
// (2026-12-06): realistic asyncio-style code, one package per theme, whose
// every finding is a "want" and whose every other line must stay silent.
func TestH48(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), combined, "h48_...")
}
