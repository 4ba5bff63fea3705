package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func TestWrongHandle(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), passes.WrongHandle, "wronghandle")
}
