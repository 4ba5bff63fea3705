//asynciovet:file-ignore blockingcall,droppedcancel a list names several checks

package fileignore

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func both(t *asyncio.T) {
	time.Sleep(time.Millisecond)
	asyncio.Sleep(t, 0)
}
