package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func TestUnawaitedTask(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), passes.UnawaitedTask, "unawaitedtask")
}
