package asyncio

import (
	"context"
	"iter"
	"runtime/pprof"

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
// instead of being pooled, so no task inherits another's label; once the
// loop has labelled a goroutine, a new task goroutine drops the labels it
// inherits from the goroutine that started it (a labelled task's, for a
// nested or eager resume). Labels a task's own code sets on its goroutine
// stay on it for the next task that goroutine hosts.
//
// Nothing is allocated per goroutine beyond what iter.Pull allocates: the
// two functions that switch to and from it live in the task it runs (and,
// while it is pooled, in the pool's slot), and every goroutine of a loop
// runs the loop's one workerBody.
type taskSwitch struct {
	next  func() (struct{}, bool) // resumes the task's goroutine
	yield func(struct{}) bool     // gives control back (on that goroutine)
}

// pooledWorker is a parked task goroutine in its loop's pool.
type pooledWorker struct {
	next  func() (struct{}, bool)
	yield func(struct{}) bool
	key   uint32 // its lock key's index in Loop.workerKeys
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
//     to be in the state first read. If that is wrong and a task started
//     under the other state is pending, resuming it is a fatal error of
//     the runtime (coro: OS thread locking must match), not an error
//     RunForever can return: do not switch a goroutine's lock state
//     between runs of a loop with pending tasks, and run a loop whose
//     driver was locked from that same goroutine until its tasks are done;
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
	if t.sw.next == nil {
		l := t.fut.loop
		key := l.workerKeyIndex()
		if n := len(l.workers); n > 0 && l.workers[n-1].key == key {
			w := l.workers[n-1]
			l.workers[n-1] = pooledWorker{}
			l.workers = l.workers[:n-1]
			t.sw = taskSwitch{next: w.next, yield: w.yield}
		} else {
			if l.workerBody == nil {
				l.workerBody = l.newWorkerBody()
			}
			t.sw.next, _ = iter.Pull(l.workerBody)
		}
		t.swKey = key
		l.hosting = t
	}
	t.sw.next()
}

// newWorkerBody returns the function every task goroutine of l runs (one
// per loop, so starting a goroutine allocates nothing of the loop's): it
// runs the task resume handed it (Loop.hosting), then, parked in the pool,
// the next one, until resumed with none (Close) or it cannot be pooled.
func (l *Loop) newWorkerBody() iter.Seq[struct{}] {
	return func(yield func(struct{}) bool) {
		if l.labelledEver {
			// A new goroutine inherits its creator's pprof labels, which
			// may be a labelled task's (a nested or eager resume) while
			// its own task is not labelled (debug mode turned off since):
			// it starts without them, so that no task runs, nor a pooled
			// goroutine waits, under another task's label.
			pprof.SetGoroutineLabels(context.Background())
		}
		for {
			t := l.hosting
			l.hosting = nil
			if t == nil {
				return // released (releaseWorkers)
			}
			t.sw.yield = yield
			t.main()
			// t is done. Park in the pool, to be resumed with the next
			// task, unless the pool is full or the labels are t's.
			if t.swLabelled || l.closed || t.killed || len(l.workers) >= maxPooledWorkers {
				return
			}
			l.workers = append(l.workers, pooledWorker{next: t.sw.next, yield: yield, key: t.swKey})
			yield(struct{}{})
		}
	}
}

// workerKeyIndex is the index in l.workerKeys of the current lockKey,
// recorded there at its first use.
func (l *Loop) workerKeyIndex() uint32 {
	for i, k := range l.workerKeys {
		if k == l.lockKey {
			return uint32(i)
		}
	}
	l.workerKeys = append(l.workerKeys, l.lockKey)
	return uint32(len(l.workerKeys) - 1)
}

// lockKeyOf is the lock key a task goroutine was started under.
func (l *Loop) lockKeyOf(t *T) uint64 { return l.workerKeys[t.swKey] }

// releaseWorkers ends the pooled goroutines (Close): each is resumed with
// no task to host. The unlocked ones are ended from a goroutine of their
// own, since the caller may be locked to its thread; a locked one only
// from its own locked driver.
func (l *Loop) releaseWorkers() {
	var unlocked []pooledWorker
	for _, w := range l.workers {
		if key := l.workerKeys[w.key]; key == 0 {
			unlocked = append(unlocked, w)
		} else if callerHoldsLock(key) {
			w.next()
		}
	}
	l.workers = nil
	if len(unlocked) > 0 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, w := range unlocked {
				w.next()
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
		if l.workerKeys[w.key] == key {
			w.next()
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
		if t.sw.next == nil || t.fut.done() {
			continue // no goroutine to resume
		}
		if k := l.lockKeyOf(t); k != key {
			return t, k
		}
	}
	return nil, 0
}

// lockedUnwind is the panic that unwinds a locked task goroutine at Close
// (see kill); T.main recovers it.
type lockedUnwind struct{}

// labelled records that the loop set t's goroutine's pprof labels: the
// goroutine exits with t instead of being pooled.
func (t *T) labelled() { t.swLabelled = true }

// suspend gives control back to the goroutine that resumed t and waits to
// be resumed. It returns false when t is being killed (Close).
func (t *T) suspend() bool {
	return t.sw.yield(struct{}{}) && !t.killed
}

// kill unwinds the goroutine of a task still pending when its loop is
// closed: its deferred calls run, then the goroutine exits. The task ends
// with runtime.Goexit (see park), which iter.Pull propagates to whoever
// resumed it, so it is resumed from a goroutine of its own that may exit
// that way instead of the caller of Close.
func (t *T) kill() {
	if key := t.fut.loop.lockKeyOf(t); key != 0 {
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
		t.sw.next() // park panics with lockedUnwind (main recovers it), or returns an outside outcome (outcomeAtKill)
		t.fut.loop.unwindNext = nil
		return
	}
	t.killed = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.sw.next()
	}()
	<-done
	t.fut.loop.unwindNext = nil // t returned without another await
}

// locked reports whether the task's goroutine was started by a goroutine
// locked to its thread.
func (t *T) locked() bool { return t.fut.loop.lockKeyOf(t) != 0 }

// created reports whether the task's goroutine was ever started.
func (s *taskSwitch) created() bool { return s.next != nil }
