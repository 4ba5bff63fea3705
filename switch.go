//go:build !asyncio_chanswitch

package asyncio

import (
	"iter"
)

// taskSwitch moves control between the goroutine running the loop (the
// one in RunForever) and a task's goroutine. This implementation uses
// iter.Pull's coroutines: resuming a task and its giving control back are
// direct goroutine switches that bypass the scheduler (about 4x cheaper
// than a channel handoff on our machines). Build with -tags
// asyncio_chanswitch for the channel implementation, to measure one
// against the other (switch_chan.go).
type taskSwitch struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
}

// resume runs t until its step ends (it suspends or finishes). It is
// called only by the goroutine in RunForever; t's first resume starts t's
// function on a new coroutine.
func (t *T) resume() {
	if t.sw.next == nil {
		t.sw.next, t.sw.stop = iter.Pull(func(yield func(struct{}) bool) {
			t.sw.yield = yield
			t.main()
		})
	}
	t.sw.next()
}

// suspend gives control back to the goroutine that resumed t and waits to
// be resumed. It returns false when t is being killed (Close).
func (t *T) suspend() bool {
	return t.sw.yield(struct{}{}) && !t.killed
}

// kill unwinds the goroutine of a task still pending when its loop is
// closed: its deferred calls run, then the goroutine exits. The task ends
// with runtime.Goexit (see park), which iter.Pull propagates to whoever
// calls stop, so stop runs on a goroutine of its own that may exit that
// way instead of the caller of Close.
func (t *T) kill() {
	t.killed = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.sw.stop()
	}()
	<-done
}

// created reports whether the task's goroutine was ever started.
func (s *taskSwitch) created() bool { return s.next != nil }
