package fileignore

//asynciovet:file-ignore blockingcall,droppedcancel after the package clause it does not count

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

// The directive in a.go covers a.go only.
func otherFile(t *asyncio.T) {
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep`
	asyncio.Sleep(t, 0)          // want `droppedcancel: the error of asyncio.Sleep is discarded`
}
