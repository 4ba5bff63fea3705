// Scheduler tests yield with a discarded Sleep(t, 0) on purpose.
//
//asynciovet:file-ignore droppedcancel every yield here is deliberate
package fileignore

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func yields(t *asyncio.T, ch chan int) int {
	asyncio.Sleep(t, 0)
	_ = asyncio.Sleep(t, 0)
	// Only the named check is off in this file.
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`
	return <-ch                  // want `blockingcall: channel receive`
}
