// A file directive without a reason is not honoured.
//
//asynciovet:file-ignore blockingcall
package fileignore

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func noReason(t *asyncio.T) {
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`
	asyncio.Sleep(t, 0)          // want `droppedcancel: the error of asyncio.Sleep is discarded`
}
