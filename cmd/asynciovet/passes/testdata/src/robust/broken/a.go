// Package broken does not type-check: the analyzers must not crash, and
// report only what they can still resolve.
package broken

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func task(t *asyncio.T) (int, error) {
	time.Sleep(time.Second) // want `blockingcall: time.Sleep inside a task`
	x := undefined(t)
	<-x
	var y int = "not an int"
	asyncio.CreateTask(t, nosuchfunc) // want `unawaitedtask: the task started by CreateTask is never awaited`
	go func() {
		x.Stop()
		y.Foo(t)
	}()
	return y.Bar(), nil
}

func unknownHandle(t *asyncio.Nope, ch chan int) int { return <-ch }
