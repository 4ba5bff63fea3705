package asyncio

import (
	"sync"

	"github.com/go-asyncio/asyncio/internal/gid"
	"github.com/go-asyncio/asyncio/internal/hooks"
)

// The loops running now, so that asyncio.Run can tell that its caller is
// a task (or callback) of a running loop: asyncio.run() raises
// "asyncio.run() cannot be called from a running event loop" (RUN-1).
// Registered for the time RunForever runs: a mutex and a map operation
// per run, none per step.
var runningLoops struct {
	mu  sync.Mutex
	set map[*Loop]struct{}
}

func registerRunning(l *Loop) {
	runningLoops.mu.Lock()
	if runningLoops.set == nil {
		runningLoops.set = map[*Loop]struct{}{}
	}
	runningLoops.set[l] = struct{}{}
	runningLoops.mu.Unlock()
}

func unregisterRunning(l *Loop) {
	runningLoops.mu.Lock()
	delete(runningLoops.set, l)
	runningLoops.mu.Unlock()
}

// callerRunsALoop reports whether the calling goroutine holds a running
// loop (it runs one of its tasks or callbacks).
func callerRunsALoop() bool {
	tok := gid.Token()
	runningLoops.mu.Lock()
	defer runningLoops.mu.Unlock()
	for l := range runningLoops.set {
		if l.holder.Load() == tok {
			return true
		}
	}
	return false
}

func init() { hooks.RegisterCallerRunsALoop(callerRunsALoop) }
