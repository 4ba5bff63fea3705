package tags

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func task(t *asyncio.T) (int, error) {
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep inside a task`
	return 0, nil
}
