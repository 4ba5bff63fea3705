// Package h48_threadsafe: the Loop methods documented for any goroutine,
// called from a goroutine the task starts (a signal handler that dumps
// the task tree, a watchdog).
package h48_threadsafe

import (
	"log"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

func dumpOnSignal(t *asyncio.T, sigs chan os.Signal) {
	l := t.Loop()
	go func() {
		for range sigs {
			if err := l.WriteDump(os.Stderr, time.Second); err != nil {
				log.Print(err)
			}
		}
	}()
}

func watchdog(t *asyncio.T, stop chan struct{}) {
	l := t.Loop()
	go func() {
		for l.IsRunning() && !l.OnLoopGoroutine() {
			if s := l.SnapshotThreadsafe(time.Second, asyncio.SnapshotOptions{}); s.Blocked {
				log.Print("loop blocked")
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	}()
}

// The other Loop methods are still the loop's own.
func stillReported(t *asyncio.T) {
	l := t.Loop()
	go func() {
		l.Stop() // want `foreigngoroutine: asyncio.Loop.Stop is called on l`
	}()
}
