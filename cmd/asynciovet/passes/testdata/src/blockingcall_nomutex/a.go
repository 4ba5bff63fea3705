package blockingcall_nomutex

import (
	"sync"

	"github.com/go-asyncio/asyncio"
)

type counter struct {
	mu sync.Mutex
	rw sync.RWMutex
	wg sync.WaitGroup
	n  int
}

func (c *counter) bump(t *asyncio.T) error {
	c.mu.Lock() // silenced by -blockingcall.mutex=false
	c.n++
	c.mu.Unlock()
	c.rw.RLock()
	c.rw.RUnlock()
	c.wg.Wait() // want `sync.WaitGroup.Wait inside a task`
	return nil
}
