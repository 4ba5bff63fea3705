package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func TestDroppedCancel(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), passes.DroppedCancel, "droppedcancel")
}
