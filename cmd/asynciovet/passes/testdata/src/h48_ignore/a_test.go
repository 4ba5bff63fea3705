//asynciovet:file-ignore droppedcancel,unawaitedtask the test checks the scheduler's order with bare yields

package h48_ignore

import (
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

func TestOrder(tt *testing.T) {
	if _, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		asyncio.CreateTask(t, func(c *asyncio.T) (int, error) { return 0, nil })
		asyncio.Sleep(t, 0)
		// Only the named checks are off in this file.
		time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`
		return 0, nil
	}); err != nil {
		tt.Fatal(err)
	}
}
