package asyncio

import (
	"iter"
	"slices"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// taskSwitch moves control between the goroutine running the loop (the
// one in RunForever) and a task's goroutine. This implementation uses
// iter.Pull's coroutines: resuming a task and its giving control back are
// direct goroutine switches that bypass the scheduler (about 4x cheaper
// than a channel handoff on our machines; the channel implementation kept
// for that measurement was removed once it no longer kept the guarantees
// below, see DESIGN.md).
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
	// lockKey is the loop's lockKey when the goroutine was started: only
	// a goroutine in the same thread-lock state may resume or stop it
	// (see "Locked threads" below).
	lockKey uint64
}

// # Locked threads
//
// The runtime lets a coroutine be switched to only from a goroutine in the
// thread-lock state of the one that created it: created by a goroutine
// locked to its OS thread (runtime.LockOSThread), it must be resumed and
// stopped on that thread; created unlocked, never from a locked goroutine.
// Anything else is a fatal error that no recover can catch. The loop
// therefore records, for each RunForever, whether its driver is locked
// (Loop.lockKey: 0, or the locked driver's token) and, in each task
// goroutine, the key it was started under:
//   - RunForever refuses to run (an error, nothing changed) when a task
//     started under another key is still pending: Go cannot resume it.
//     The lock state is read once per driver goroutine (~3 µs), so a
//     goroutine that locks or unlocks between two runs, or a new one that
//     reuses an exited driver's runtime descriptor (gid.Token), is taken
//     to be in the state first read;
//   - the pool hands out only goroutines of the current key, and a locked
//     run releases its pooled goroutines before it returns;
//   - Close unwinds an unlocked task goroutine from a goroutine of its own
//     (always unlocked), and a locked one from the calling goroutine when
//     that is the locked driver (with a panic the task's main recovers,
//     since a Goexit would end the caller too); from any other goroutine a
//     locked task goroutine cannot be unwound: it is reported and left
//     parked.

// maxPooledWorkers bounds the parked task goroutines a loop keeps.
const maxPooledWorkers = 256

// resume runs t until its step ends (it suspends or finishes). It is
// called by the goroutine running the loop: the driver in RunForever, a
// task whose step just ended (runReady), or, for an eager first step, the
// creator; t's first resume runs t's function on a pooled goroutine, or on
// a new one.
func (t *T) resume() {
	w := t.sw.w
	if w == nil {
		l := t.fut.loop
		if n := len(l.workers); n > 0 && l.workers[n-1].lockKey == l.lockKey {
			w = l.workers[n-1]
			l.workers[n-1] = nil
			l.workers = l.workers[:n-1]
		} else {
			w = newWorker(l.lockKey)
			if len(l.workerKeys) == 0 || l.workerKeys[len(l.workerKeys)-1] != l.lockKey {
				l.noteWorkerKey()
			}
		}
		w.task, t.sw.w = t, w
	}
	w.next()
}

// newWorker starts a task goroutine (parked until its first next).
func newWorker(lockKey uint64) *worker {
	w := &worker{lockKey: lockKey}
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
			if w.labelled || l.closed || t.killed || len(l.workers) >= maxPooledWorkers {
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

// releaseWorkers ends the pooled goroutines (Close). The unlocked ones
// are stopped from a goroutine of their own, since the caller may be
// locked to its thread; a locked one only from its own locked driver.
func (l *Loop) releaseWorkers() {
	var unlocked []*worker
	for _, w := range l.workers {
		if w.lockKey == 0 {
			unlocked = append(unlocked, w)
		} else if callerHoldsLock(w.lockKey) {
			w.stop()
		}
	}
	l.workers = nil
	if len(unlocked) > 0 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, w := range unlocked {
				w.stop()
			}
		}()
		<-done
	}
}

// releaseLockedWorkers ends the pooled goroutines of key, on the locked
// driver before its RunForever returns: no other goroutine could.
func (l *Loop) releaseLockedWorkers(key uint64) {
	kept := l.workers[:0]
	for _, w := range l.workers {
		if w.lockKey == key {
			w.stop()
		} else {
			kept = append(kept, w)
		}
	}
	clear(l.workers[len(kept):])
	l.workers = kept
}

// callerHoldsLock reports whether the calling goroutine is the locked
// goroutine of key.
func callerHoldsLock(key uint64) bool { return key == gid.Token() && gid.Locked() }

// lockKeyOfCaller is the calling goroutine's lock key: its token if it is
// locked to its thread, else 0.
func lockKeyOfCaller() uint64 {
	if gid.Locked() {
		return gid.Token()
	}
	return 0
}

// noteWorkerKey records that a task goroutine was started under the
// current lockKey.
func (l *Loop) noteWorkerKey() {
	if !slices.Contains(l.workerKeys, l.lockKey) {
		l.workerKeys = append(l.workerKeys, l.lockKey)
	}
}

// mixedLockKeys reports whether a task goroutine may have been started
// under another lock key than key: only then can a pending task be one Go
// cannot resume (RunForever scans the tasks).
func (l *Loop) mixedLockKeys(key uint64) bool {
	return len(l.workerKeys) > 1 || (len(l.workerKeys) == 1 && l.workerKeys[0] != key)
}

// unresumable returns a pending task started under another lock key than
// key, and that key; nil if there is none.
func (l *Loop) unresumable(key uint64) (*T, uint64) {
	for _, t := range l.tasks {
		if w := t.sw.w; w != nil && w.lockKey != key && !t.fut.done() {
			return t, w.lockKey
		}
	}
	return nil, 0
}

// lockedUnwind is the panic that unwinds a locked task goroutine at Close
// (see kill); T.main recovers it.
type lockedUnwind struct{}

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
	if key := t.sw.w.lockKey; key != 0 {
		if !callerHoldsLock(key) {
			l := t.fut.loop
			l.CallExceptionHandler(ExceptionContext{
				Message: "Task " + quoteText(t.Name()) + " cannot be unwound: its goroutine was started by a goroutine " +
					"locked to its OS thread (runtime.LockOSThread), and Go resumes it only there; close the loop from that goroutine",
				Task: t,
			})
			return
		}
		t.killed = true
		t.sw.w.stop() // park panics with lockedUnwind, main recovers it
		return
	}
	t.killed = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.sw.w.stop()
	}()
	<-done
}

// locked reports whether the task's goroutine was started by a goroutine
// locked to its thread.
func (s *taskSwitch) locked() bool { return s.w.lockKey != 0 }

// created reports whether the task's goroutine was ever started.
func (s *taskSwitch) created() bool { return s.w != nil }
