package asyncio

// What SnapshotThreadsafe asks of the loop, bounded: at most one snapshot
// request per loop is queued or being taken at a time; concurrent callers
// with the same options share it, callers with other options are told at
// once that the loop is busy; a request whose callers all gave up before
// the loop reached it costs the loop nothing (its callback sees nobody
// waits and takes no snapshot). Without this, 300 callers that time out
// on a blocked loop left 300 snapshots for the loop to take back to back
// once it came back (issue 19, item 3).

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// snapshotRequests is the loop's part (Loop.snapReq).
type snapshotRequests struct {
	mu  sync.Mutex
	cur *snapshotRequest // the request queued or being taken; nil: none
	// taken counts the snapshots taken for SnapshotThreadsafe (tests read
	// it: an abandoned request must not add to it).
	taken atomic.Uint64
}

// snapshotRequest is one snapshot asked of the loop by one or more callers.
type snapshotRequest struct {
	opts    SnapshotOptions
	waiters int           // guarded by mu: callers still waiting for it
	started bool          // guarded by mu: the loop has begun taking it
	done    chan struct{} // closed once result is set
	result  *LoopSnapshot
}

// join returns the request the caller waits on: the one in flight if it
// has the same options, else a new one, queued on the loop. It returns
// nil and a snapshot to return at once when the caller must not wait (the
// loop is closed, its queue refused the callback, or a request with other
// options is in flight).
func (l *Loop) joinSnapshot(opts SnapshotOptions) (*snapshotRequest, *LoopSnapshot) {
	q := &l.snapReq
	q.mu.Lock()
	defer q.mu.Unlock()
	if r := q.cur; r != nil {
		if r.opts != opts {
			return nil, &LoopSnapshot{Blocked: true, Busy: true, Tasks: []TaskInfo{}, Notes: []string{fmt.Sprintf(
				"another snapshot of this loop (MaxTasks %d) is in flight; one is taken at a time: ask again once it is done", r.opts.MaxTasks)}}
		}
		r.waiters++
		return r, nil
	}
	r := &snapshotRequest{opts: opts, waiters: 1, done: make(chan struct{})}
	if _, err := l.CallSoonThreadsafe(func() { l.takeSnapshotRequest(r) }); err != nil {
		if errors.Is(err, ErrLoopClosed) {
			return nil, &LoopSnapshot{Closed: true, Tasks: []TaskInfo{}}
		}
		return nil, &LoopSnapshot{Blocked: true, Tasks: []TaskInfo{}, Notes: []string{err.Error()}}
	}
	q.cur = r
	return r, nil
}

// takeSnapshotRequest runs on the loop: it takes r's snapshot unless every
// caller has given up.
func (l *Loop) takeSnapshotRequest(r *snapshotRequest) {
	q := &l.snapReq
	q.mu.Lock()
	if r.waiters == 0 { // abandoned: leaveSnapshot already cleared q.cur
		q.mu.Unlock()
		return
	}
	r.started = true
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		if r.result == nil { // the snapshot panicked; the loop reports it
			r.result = &LoopSnapshot{Blocked: true, Tasks: []TaskInfo{}, Notes: []string{"the snapshot failed: see the loop's exception handler"}}
		}
		close(r.done)
		if q.cur == r {
			q.cur = nil
		}
		q.mu.Unlock()
	}()
	s := l.snapshot(r.opts)
	q.taken.Add(1)
	r.result = s
}

// leaveSnapshot is a caller giving up on r when its timeout passed. It
// reports false if the loop has already begun taking the snapshot: the
// loop answered, and the caller should wait for r.done.
func (l *Loop) leaveSnapshot(r *snapshotRequest) bool {
	q := &l.snapReq
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.started {
		return false
	}
	r.waiters--
	if r.waiters == 0 && q.cur == r {
		q.cur = nil // a new caller queues a new request
	}
	return true
}

// closeSnapshotRequests answers the request still queued when l closes
// (Close dropped its callback with the thread-safe queue): its callers
// get a snapshot marked Closed at once instead of waiting out their
// timeout.
func (l *Loop) closeSnapshotRequests() {
	q := &l.snapReq
	q.mu.Lock()
	defer q.mu.Unlock()
	r := q.cur
	if r == nil || r.started {
		return
	}
	r.started = true
	r.result = &LoopSnapshot{Closed: true, Tasks: []TaskInfo{}}
	close(r.done)
	q.cur = nil
}
