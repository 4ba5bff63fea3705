package passes_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func TestBlockingCall(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), passes.BlockingCall, "blockingcall")
}

// TestBlockingCallMutexFlag checks that -blockingcall.mutex=false silences
// mutex locking and nothing else.
func TestBlockingCallMutexFlag(t *testing.T) {
	if err := passes.BlockingCall.Flags.Set("mutex", "false"); err != nil {
		t.Fatal(err)
	}
	defer passes.BlockingCall.Flags.Set("mutex", "true")
	analysistest.Run(t, analysistest.TestData(), passes.BlockingCall, "blockingcall_nomutex")
}
