//go:build unix

package aio

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Before any loop runs, so that no goroutine reads it while it is set.
	sockFaults = testFaults
	// The runtime opens its own poller's descriptors the first time a
	// pipe or socket needs them; open them now, so that the tests' checks
	// for leaked descriptors (clean) do not see them.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	goleak.VerifyTestMain(m)
}
