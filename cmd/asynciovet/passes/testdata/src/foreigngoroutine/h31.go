package foreigngoroutine

import (
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06).

// A coroutine of the program (it takes the task's handle) run on another
// goroutine: a port of threading.Thread(target=...). Its awaits and loop
// calls race with the loop as surely as the library's would.
func poll(t *asyncio.T, every time.Duration) error {
	for {
		if err := asyncio.Sleep(t, every); err != nil {
			return err
		}
	}
}

func coroutineOnAGoroutine(t *asyncio.T) {
	go poll(t, time.Second) // want `foreigngoroutine.poll is given the task's handle t on a goroutine started by the task`
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = poll(t, time.Second) // want `foreigngoroutine.poll is given the task's handle t on a function that sync.WaitGroup.Go runs on another goroutine`
	})
	wg.Wait()
}

// Not reported: a handle the goroutine does not take from the task, or a
// function that takes no handle.
func notTheTasksHandle(t *asyncio.T, every time.Duration) {
	go func() {
		_, _ = asyncio.Run(func(own *asyncio.T) (struct{}, error) {
			return struct{}{}, poll(own, every) // its own loop and task
		})
	}()
	go tick(every)
}

func tick(d time.Duration) { time.Sleep(d) }
