//go:build unix

package aio

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A connect whose attempts all fail with different errors reads as
// asyncio's OSError: "Multiple exceptions: " and the attempts' texts
// joined with ", " (base_events.py create_connection), and still
// unwraps to each attempt's error.
func TestCreateConnectionMultipleExceptionsText(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		_, _, err := CreateConnection(at, func() Protocol { return &BaseProtocol{} }, "two.test", port,
			fakeResolver("127.0.0.1", "127.0.0.2"), WithHappyEyeballsDelay(0))
		want := fmt.Sprintf("Multiple exceptions: connect to 127.0.0.1:%d: connect: connection refused, connect to 127.0.0.2:%d: connect: connection refused", port, port)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("errors.Is(%v, ECONNREFUSED) = false", err)
		}
		return nil
	})
}
