//go:build go1.25

package asyncio_test

import (
	"os"
	"testing"
	"testing/synctest"
)

// capture runs fn with os.Stdout sent to a file and returns what it wrote.
func capture(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = saved }()
	fn()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every runnable example of the package prints the same inside a synctest
// bubble as outside one.
func TestSynctestExamples(t *testing.T) {
	examples := []struct {
		name string
		fn   func()
	}{
		{"ExampleBoundedTaskGroup", ExampleBoundedTaskGroup},
		{"ExampleGatherBounded", ExampleGatherBounded},
		{"ExampleAsCompletedBounded", ExampleAsCompletedBounded},
		{"ExampleLimiter", ExampleLimiter},
		{"ExampleRetry", ExampleRetry},
		{"ExampleHedge", ExampleHedge},
		{"ExampleFirstSuccess", ExampleFirstSuccess},
		{"ExampleSnapshot", ExampleSnapshot},
		{"ExampleDeadlockError", ExampleDeadlockError},
		{"ExampleCaptureCallGraph", ExampleCaptureCallGraph},
		{"ExampleLoop_SetBeforePoll", ExampleLoop_SetBeforePoll},
		{"ExampleWithOutsideGrace", ExampleWithOutsideGrace},
		{"ExampleRun", ExampleRun},
		{"ExampleCreateTask", ExampleCreateTask},
		{"ExampleTask_Cancel", ExampleTask_Cancel},
		{"ExampleFuture", ExampleFuture},
		{"ExampleNewTestLoop", ExampleNewTestLoop},
		{"ExampleNewTestLoop_timeout", ExampleNewTestLoop_timeout},
		{"ExampleTaskGroup", ExampleTaskGroup},
		{"ExampleTimeout", ExampleTimeout},
		{"ExampleWaitFor", ExampleWaitFor},
		{"ExampleGather", ExampleGather},
		{"ExampleShield", ExampleShield},
		{"ExampleWait", ExampleWait},
		{"ExampleAsCompleted", ExampleAsCompleted},
		{"ExampleLock", ExampleLock},
		{"ExampleSemaphore", ExampleSemaphore},
		{"ExampleQueue", ExampleQueue},
		{"ExampleToThread", ExampleToThread},
		{"ExampleLoop_SetBlockedThreshold", ExampleLoop_SetBlockedThreshold},
		{"ExampleLoop_OnLoopGoroutine", ExampleLoop_OnLoopGoroutine},
		{"ExampleGo", ExampleGo},
		{"ExampleGo_httpClient", ExampleGo_httpClient},
		{"ExampleRunContext", ExampleRunContext},
		{"ExampleContextVar", ExampleContextVar},
		{"ExampleRecv", ExampleRecv},
		{"ExampleThreadsafe", ExampleThreadsafe},
		{"ExampleLoop_ExpectExternal", ExampleLoop_ExpectExternal},
		{"ExampleRunInExecutorOn", ExampleRunInExecutorOn},
		{"ExampleAwaitables", ExampleAwaitables},
		{"ExampleExceptionGroup_Split", ExampleExceptionGroup_Split},
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			want := capture(t, ex.fn)
			var got string
			synctest.Test(t, func(t *testing.T) { got = capture(t, ex.fn) })
			if got != want {
				t.Errorf("inside a bubble it printed\n%s\noutside\n%s", got, want)
			}
		})
	}
}
