//go:build unix

package aio

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Before any loop runs, so that no goroutine reads it while it is set.
	sockFaults = testFaults
	goleak.VerifyTestMain(m)
}
