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
//
// A task's goroutine is pooled: when its function has returned, the
// goroutine parks in its loop's pool (at most maxPooledWorkers of them)
// instead of exiting, and hosts the next task whose first step comes up, so
// a new task costs no goroutine start and no first stack growth. Close
// releases the pool. A task's name, its stack in snapshots and its pprof
// labels are the same as on a fresh goroutine: the stack's frames below
// the task's function are the library's (dropped from snapshots), and a
// goroutine whose labels the loop set (WithTaskLabels, debug mode) exits
// instead of being pooled, so no task inherits another's label. Labels a
// task's own code sets on its goroutine stay on it for the next task that
// goroutine hosts.
type taskSwitch struct{ w *worker }

// worker is a task goroutine: an iter.Pull coroutine running one task's
// function after another.
type worker struct {
	next     func() (struct{}, bool)
	stop     func()
	yield    func(struct{}) bool
	task     *T   // the task it runs now
	labelled bool // the loop set its pprof labels: do not pool it
}

// maxPooledWorkers bounds the parked task goroutines a loop keeps.
const maxPooledWorkers = 256

// resume runs t until its step ends (it suspends or finishes). It is
// called only by the goroutine in RunForever (and, for an eager first
// step, by the creator); t's first resume runs t's function on a pooled
// goroutine, or on a new one.
func (t *T) resume() {
	w := t.sw.w
	if w == nil {
		l := t.fut.loop
		if n := len(l.workers); n > 0 {
			w = l.workers[n-1]
			l.workers[n-1] = nil
			l.workers = l.workers[:n-1]
		} else {
			w = newWorker()
		}
		w.task, t.sw.w = t, w
	}
	w.next()
}

// newWorker starts a task goroutine (parked until its first next).
func newWorker() *worker {
	w := &worker{}
	w.next, w.stop = iter.Pull(func(yield func(struct{}) bool) {
		w.yield = yield
		for {
			t := w.task
			t.main()
			// t is done. Park in the pool, to be resumed with the next
			// task, unless the pool is full or the labels are t's; stop
			// (Close) ends the goroutine.
			w.task = nil
			l := t.fut.loop
			if w.labelled || l.closed || len(l.workers) >= maxPooledWorkers {
				return
			}
			l.workers = append(l.workers, w)
			if !yield(struct{}{}) {
				return
			}
		}
	})
	return w
}

// releaseWorkers ends the pooled goroutines (Close).
func (l *Loop) releaseWorkers() {
	for _, w := range l.workers {
		w.stop()
	}
	l.workers = nil
}

// labelled records that the loop set t's goroutine's pprof labels.
func (s *taskSwitch) labelled() { s.w.labelled = true }

// suspend gives control back to the goroutine that resumed t and waits to
// be resumed. It returns false when t is being killed (Close).
func (t *T) suspend() bool {
	return t.sw.w.yield(struct{}{}) && !t.killed
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
		t.sw.w.stop()
	}()
	<-done
}

// created reports whether the task's goroutine was ever started.
func (s *taskSwitch) created() bool { return s.w != nil }
