package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func TestForeignGoroutine(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), passes.ForeignGoroutine, "foreigngoroutine")
}

// TestForeignGoroutineLibraryTests runs the check over the stub library's
// own test file: its unexported helpers are not reported.
func TestForeignGoroutineLibraryTests(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), passes.ForeignGoroutine, "github.com/go-asyncio/asyncio")
}
