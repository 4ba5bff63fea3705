package asyncio

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedLoop runs l with a main task that waits on release, and blocks
// the loop in a callback until the returned unblock is called.
func blockedLoop(t *testing.T, l *Loop) (unblock func(), stop func()) {
	t.Helper()
	l.SetBlockedThreshold(-1) // the block is the test's: no watchdog report
	release := NewFuture[struct{}](l)
	running := make(chan struct{})
	main := startTask(l, "main", func(tk *T) error {
		close(running)
		_, err := release.Await(tk)
		return err
	})
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(main) }()
	<-running
	blocked, unblockCh := make(chan struct{}), make(chan struct{})
	//asynciovet:ignore blockingcall blocks the loop on purpose: the requests must find it blocked
	if _, err := l.CallSoonThreadsafe(func() { close(blocked); <-unblockCh }); err != nil {
		t.Fatal(err)
	}
	<-blocked
	var once sync.Once
	unblock = func() { once.Do(func() { close(unblockCh) }) }
	return unblock, func() {
		unblock()
		if _, err := l.CallSoonThreadsafe(func() { release.SetResult(struct{}{}) }); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
		mustClose(t, l)
	}
}

// roundTrip waits until the loop has run every callback queued before it.
func roundTrip(t *testing.T, l *Loop) {
	t.Helper()
	ch := make(chan struct{})
	if _, err := l.CallSoonThreadsafe(func() { close(ch) }); err != nil {
		t.Fatal(err)
	}
	<-ch
}

// Issue 19 item 3: 300 requests that time out while the loop is blocked
// cost the loop nothing once it comes back: it takes no snapshot for them.
// A request after that is answered with one snapshot.
func TestSnapshotThreadsafe_AbandonedRequestsTakeNoSnapshot(t *testing.T) {
	l := NewLoop(WithTaskStacks())
	unblock, stop := blockedLoop(t, l)
	defer stop()
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := SnapshotOptions{MaxTasks: -1}
			if i%2 == 1 {
				opts.MaxTasks = 5 // mixed options: busy answers and abandoned ones
			}
			if s := l.SnapshotThreadsafe(time.Millisecond, opts); !s.Blocked {
				t.Errorf("request %d on a blocked loop: %+v", i, s)
			}
		}()
	}
	wg.Wait()
	unblock()
	roundTrip(t, l)
	if n := l.snapReq.taken.Load(); n != 0 {
		t.Fatalf("the loop took %d snapshots for abandoned requests, want 0", n)
	}
	if s := l.SnapshotThreadsafe(time.Minute, SnapshotOptions{MaxTasks: -1}); s.Blocked || len(s.Tasks) != 1 {
		t.Errorf("snapshot after the block: %+v", s)
	}
	if n := l.snapReq.taken.Load(); n != 1 {
		t.Errorf("%d snapshots taken, want 1", n)
	}
}

// Issue 19 item 3: concurrent requests with the same options share one
// snapshot; a request with other options is told at once the loop is busy,
// without asking the loop.
func TestSnapshotThreadsafe_ConcurrentRequestsShareOneSnapshot(t *testing.T) {
	l := NewLoop()
	unblock, stop := blockedLoop(t, l)
	defer stop()
	const n = 50
	results := make(chan *LoopSnapshot, n)
	for range n {
		go func() { results <- l.SnapshotThreadsafe(time.Hour, SnapshotOptions{}) }()
	}
	for { // every caller has joined the one request
		l.snapReq.mu.Lock()
		w := 0
		if l.snapReq.cur != nil {
			w = l.snapReq.cur.waiters
		}
		l.snapReq.mu.Unlock()
		if w == n {
			break
		}
		runtime.Gosched()
	}
	s := l.SnapshotThreadsafe(time.Hour, SnapshotOptions{MaxTasks: -1})
	if !s.Blocked || !s.Busy || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "another snapshot of this loop (MaxTasks 0) is in flight") {
		t.Errorf("request with other options: %+v", s)
	}
	unblock()
	first := <-results
	for range n - 1 {
		if s := <-results; s != first {
			t.Errorf("two snapshots for concurrent requests")
		}
	}
	if first.Blocked || len(first.Tasks) != 1 {
		t.Errorf("shared snapshot: %+v", first)
	}
	if got := l.snapReq.taken.Load(); got != 1 {
		t.Errorf("%d snapshots taken, want 1", got)
	}
}
