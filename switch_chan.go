//go:build asyncio_chanswitch

package asyncio

import "runtime"

// taskSwitch, channel implementation: one buffered channel each way. It
// exists to measure against the coroutine switch (switch.go), which
// is the default; build with -tags asyncio_chanswitch to use it.
type taskSwitch struct {
	resumeCh, backCh chan struct{}
	goexited         bool
}

func (t *T) resume() {
	if t.sw.resumeCh == nil {
		t.sw.resumeCh, t.sw.backCh = make(chan struct{}, 1), make(chan struct{}, 1)
		go func() {
			returned := false
			defer func() {
				t.sw.goexited = !returned && !t.killed
				t.sw.backCh <- struct{}{}
			}()
			t.main()
			returned = true
		}()
	} else {
		t.sw.resumeCh <- struct{}{}
	}
	<-t.sw.backCh
	if t.sw.goexited {
		runtime.Goexit() // propagate, as iter.Pull does
	}
}

func (t *T) suspend() bool {
	t.sw.backCh <- struct{}{}
	<-t.sw.resumeCh
	return !t.killed
}

func (t *T) kill() {
	t.killed = true
	t.sw.resumeCh <- struct{}{}
	<-t.sw.backCh
}

func (s *taskSwitch) created() bool { return s.resumeCh != nil }

// The channel implementation does not pool goroutines, and its goroutines
// may be resumed from any thread.
func (l *Loop) releaseWorkers()                 {}
func (l *Loop) releaseLockedWorkers(uint64)     {}
func (l *Loop) unresumable(uint64) (*T, uint64) { return nil, 0 }
func (l *Loop) mixedLockKeys(uint64) bool       { return false }
func (s *taskSwitch) locked() bool              { return false }
func lockKeyOfCaller() uint64                   { return 0 }
func (s *taskSwitch) labelled()                 {}

// worker is the pooled goroutine of switch.go; this implementation has
// none, so Loop.workers stays empty.
type worker struct{}

type lockedUnwind struct{}
