// Package blockinghelper is imported by the blockingcall testdata: the
// facts of its blocking helpers reach the tasks of another package.
package blockinghelper

import (
	"os"
	"sync"
	"time"
)

// Backoff sleeps: a task that calls it freezes the loop.
func Backoff(d time.Duration) { // want Backoff:"blocks: calls time.Sleep"
	time.Sleep(d)
}

// Config reads a file through a helper of its own package.
func Config() ([]byte, error) { // want Config:"blocks: calls blockinghelper.load, which calls os.ReadFile"
	return load("/etc/app.conf")
}

func load(name string) ([]byte, error) { // want load:"blocks: calls os.ReadFile"
	return os.ReadFile(name)
}

// Counter guards its state with a mutex: locking is not a blocking fact.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Add does not block.
func (c *Counter) Add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// Later sleeps on a goroutine of its own: no fact.
func Later(f func()) {
	go func() {
		time.Sleep(time.Second)
		f()
	}()
}
