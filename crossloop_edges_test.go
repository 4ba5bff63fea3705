package asyncio

// Edge cases of loops on many cores, found by a hostile run (group.go, crossloop.go,
// crossqueue.go). The loops run on real time; nothing waits on the real
// clock: every wait is for an explicit signal.

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// crossCallsListed counts l's cross-loop calls in flight (l's goroutine).
func crossCallsListed(l *Loop) int {
	h := &l.grp.calls
	n := 0
	if h.next != nil {
		for x := h.next; x != h; x = x.next {
			n++
		}
	}
	return n
}

// SubmitTo returns a plain *Future[V]: SetResult is allowed on it (it
// returns no error). "The call counts as outside work on A ... until its
// outcome is back or its future is cancelled": once the outcome is back,
// the call must no longer count as outside work nor stay listed, whoever
// completed the future first. Otherwise a virtual-time caller never moves
// its clock again (it waits for outside work that is over).
func TestCrossLoopEdge_SetResultOnASubmitToFutureReleasesTheCall(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		a := tk.Loop()
		up, signal := started(tk)
		var remote *T
		var gate *Future[struct{}]
		fut, err := SubmitTo(tk, b, func(rt *T) (int, error) {
			remote, gate = rt, NewFuture[struct{}](rt)
			signal()
			if _, err := gate.Await(rt); err != nil {
				return 0, err
			}
			return 1, nil
		})
		if err != nil {
			return err
		}
		if _, err := up.Await(tk); err != nil {
			return err
		}
		if err := fut.SetResult(5); err != nil {
			return err
		}
		if _, err := CallFuncOn(tk, b, func() (struct{}, error) { return struct{}{}, gate.SetResult(struct{}{}) }); err != nil {
			return err
		}
		// Wait on b for the remote task's end: its outcome was sent to a
		// (by a done callback registered before this await's) before this
		// call's own outcome, so it has been delivered when CallOn returns.
		if _, err := CallOn(tk, b, func(rt *T) (struct{}, error) { return struct{}{}, rt.Await(remote) }); err != nil {
			return err
		}
		if n, calls := a.external.Load(), crossCallsListed(a); n != 0 || calls != 0 {
			t.Errorf("after the outcome came back: outside work %d, calls listed %d; want 0, 0", n, calls)
		}
		if v, err := fut.Result(); v != 5 || err != nil {
			t.Errorf("the future given a result first: %d, %v; want 5 (the late outcome is dropped)", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Cancelled before it started on the target (the target not running yet):
// the function never runs, no task is left on the target, the caller's
// outside work is released, and the future is cancelled with the message.
func TestCrossLoopEdge_CancelledBeforeStartNeverRuns(t *testing.T) {
	b := NewLoop()
	var ran atomic.Bool
	bDone := make(chan error, 1)
	_, err := Run(func(tk *T) (struct{}, error) {
		fut, err := SubmitTo(tk, b, func(rt *T) (int, error) { ran.Store(true); return 1, nil })
		if err != nil {
			return struct{}{}, err
		}
		fut.Cancel("early")
		if _, err := fut.Await(tk); describe(err) != `CancelledError("early")` {
			t.Errorf("future: %s", describe(err))
		}
		if n := tk.Loop().external.Load(); n != 0 {
			t.Errorf("outside work after the cancel: %d", n)
		}
		go func() { bDone <- b.RunForever() }()
		// start was queued on b before this call: it has run when this
		// returns.
		left, err := CallFuncOn(tk, b, func() (int, error) { return len(AllTasks(b)), nil })
		if err != nil || left != 0 {
			t.Errorf("tasks on the target: %d, %v", left, err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = b.CallSoonThreadsafe(b.Stop)
	<-bDone
	mustClose(t, b)
	if ran.Load() {
		t.Error("the cancelled call's function ran")
	}
}

// DESIGN.md (issue 19): "when the future's outcome is an effect that
// already happened outside the loop (... a Go call or executor job that
// returned), the await returns that outcome and the cancellation stays
// pending for the task's next await; replacing it would lose data". A
// remote task that returned and whose outcome is back on the caller's loop
// is such an effect: a task cancelled after the outcome arrived but before
// it resumed must get the outcome (the cancellation at its next await),
// as it does for an executor job.
func TestCrossLoopEdge_OutcomeBackBeforeTheCallerResumesIsNotUndone(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		// The reference: an executor job.
		job := RunInExecutor(tk, func(context.Context) (int, error) { return 7, nil })
		var ecaller *Task[int]
		egot := 0
		job.AddDoneCallback(func() { ecaller.Cancel("late") })
		ecaller = CreateTask(tk, func(ct *T) (int, error) {
			v, err := job.Await(ct)
			egot = v
			if err != nil {
				return 0, err
			}
			return v, Sleep(ct, 0) // the cancellation, kept for this await
		})
		if _, err := ecaller.Await(tk); egot != 7 || describe(err) != `CancelledError("late")` {
			t.Errorf("reference (executor job): the await returned %d, then %s", egot, describe(err))
		}

		var effects atomic.Int32
		up, signal := started(tk)
		var gate *Future[struct{}]
		fut, err := SubmitTo(tk, b, func(rt *T) (int, error) {
			gate = NewFuture[struct{}](rt)
			signal()
			if _, err := gate.Await(rt); err != nil {
				return 0, err
			}
			effects.Add(1) // the remote effect happens
			return 7, nil
		})
		if err != nil {
			return err
		}
		var caller *Task[int]
		var got int
		fut.AddDoneCallback(func() { caller.Cancel("late") }) // runs before the caller's wakeup
		caller = CreateTask(tk, func(ct *T) (int, error) {
			v, err := fut.Await(ct)
			got = v
			if err != nil {
				return 0, err
			}
			return v, Sleep(ct, 0)
		})
		if _, err := up.Await(tk); err != nil {
			return err
		}
		if _, err := CallFuncOn(tk, b, func() (struct{}, error) { return struct{}{}, gate.SetResult(struct{}{}) }); err != nil {
			return err
		}
		_, cerr := caller.Await(tk)
		if effects.Load() != 1 || !fut.Done() || fut.Cancelled() {
			t.Fatalf("setup: effects %d, future done %v cancelled %v", effects.Load(), fut.Done(), fut.Cancelled())
		}
		if got != 7 {
			t.Errorf("the remote task returned 7 and its outcome was back, but the caller's await returned %d, %s "+
				"(an executor job in the same position returns its value)", got, describe(cerr))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Reentrancy: a call to b whose remote task calls back to a, whose remote
// task calls b again (CallOn, CallOn, CallFuncOn).
func TestCrossLoopEdge_NestedCallsBackAndForth(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		a := tk.Loop()
		v, err := CallOn(tk, b, func(rt *T) (int, error) {
			return CallOn(rt, a, func(rt2 *T) (int, error) {
				w, err := CallFuncOn(rt2, b, func() (int, error) { return 3, nil })
				return w + 1, err
			})
		})
		if v != 4 || err != nil {
			t.Errorf("nested calls: %d, %v", v, err)
		}
		if n, calls := a.external.Load(), crossCallsListed(a); n != 0 || calls != 0 {
			t.Errorf("after the calls: outside work %d, calls listed %d", n, calls)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SubmitTo with a *Loop owner from a plain callback on the calling loop,
// and from outside before either loop runs ("the caller may submit from
// outside before running it").
func TestCrossLoopEdge_SubmitFromACallbackAndBeforeRunning(t *testing.T) {
	a, b := NewLoop(), NewLoop()
	early, err := SubmitTo(a, b, func(rt *T) (int, error) { return 1, nil })
	if err != nil {
		t.Fatal(err)
	}
	bDone := make(chan error, 1)
	go func() { bDone <- b.RunForever() }()
	main := CreateTask(a, func(tk *T) (int, error) {
		var fromCB *Future[int]
		var cbErr error
		a.CallSoon(func() { fromCB, cbErr = SubmitTo(a, b, func(*T) (int, error) { return 10, nil }) })
		if err := Sleep(tk, 0); err != nil {
			return 0, err
		}
		if cbErr != nil {
			return 0, cbErr
		}
		x, err := early.Await(tk)
		if err != nil {
			return 0, err
		}
		y, err := fromCB.Await(tk)
		return x + y, err
	})
	if err := a.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if v, err := main.Result(); v != 11 || err != nil {
		t.Errorf("got %d, %v", v, err)
	}
	mustClose(t, a)
	_, _ = b.CallSoonThreadsafe(b.Stop)
	<-bDone
	mustClose(t, b)
}

// NewCrossQueue: "capacity < 1 panics with a *ValueError". Any other
// capacity is valid; a huge one (a user's "practically unbounded", since
// asyncio's maxsize 0 is refused) must not crash with a runtime error
// (make of the whole ring up front: makeslice, or for 1<<40 a fatal out
// of memory).
func TestCrossLoopEdge_CrossQueueHugeCapacity(t *testing.T) {
	v := func() (v any) {
		defer func() { v = recover() }()
		q := NewCrossQueue[int](math.MaxInt)
		if err := q.PutNowait(1); err != nil {
			t.Errorf("PutNowait on a huge queue: %v", err)
		}
		return nil
	}()
	var ve *ValueError
	if err, _ := v.(error); v != nil && !errors.As(err, &ve) {
		t.Errorf("NewCrossQueue(math.MaxInt) panicked with %v (%T); want it to work, or a *ValueError naming the capacity", v, v)
	}
}

// Put and Get called with a task that is not the running one panic before
// any state changes.
func TestCrossLoopEdge_CrossQueueMisuseChangesNothing(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		q := NewCrossQueue[int](1)
		other := CreateTask(tk, func(*T) (int, error) { return 0, nil })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		//asynciovet:ignore droppedcancel the call panics on its misuse before it can suspend; the panic is what the test checks
		mustPanic(t, "Get with another task", func() { _, _ = q.Get(other.T()) })
		_ = q.PutNowait(1)
		//asynciovet:ignore droppedcancel the call panics on its misuse before it can suspend; the panic is what the test checks
		mustPanic(t, "Put with another task", func() { _ = q.Put(other.T(), 2) })
		if q.Len() != 1 || len(q.getters) != 0 || len(q.putters) != 0 || tk.Loop().external.Load() != 0 {
			t.Errorf("state changed: len %d getters %d putters %d outside %d", q.Len(), len(q.getters), len(q.putters), tk.Loop().external.Load())
		}
		return nil
	})
}

// PutNowait, GetNowait, Len and Shutdown from foreign goroutines while
// tasks on two loops Put and Get: every item put is received exactly once.
func TestCrossLoopEdge_CrossQueueForeignGoroutinesLoseNothing(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	q := NewCrossQueue[int](3)
	const n, m = 1500, 500
	var mu sync.Mutex
	seen := make([]int, n+m)
	record := func(v int) {
		mu.Lock()
		seen[v]++
		mu.Unlock()
	}
	foreignPut := make(chan struct{})
	go func() { // a foreign producer
		defer close(foreignPut)
		for k := n; k < n+m; {
			switch err := q.PutNowait(k); {
			case err == nil:
				k++
			case errors.Is(err, ErrQueueFull):
				_ = q.Len()
				runtime.Gosched()
			default:
				t.Errorf("foreign PutNowait: %v", err)
				return
			}
		}
	}()
	foreignGet := make(chan struct{})
	go func() { // a foreign consumer
		defer close(foreignGet)
		for {
			v, err := q.GetNowait()
			switch {
			case err == nil:
				record(v)
			case errors.Is(err, ErrQueueShutDown):
				return
			case errors.Is(err, ErrQueueEmpty):
				runtime.Gosched()
			default:
				t.Errorf("foreign GetNowait: %v", err)
				return
			}
		}
	}()
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 0 {
			for k := range n {
				if err := q.Put(tk, k); err != nil {
					return 0, err
				}
			}
			if _, _, err := Recv(tk, foreignPut); err != nil {
				return 0, err
			}
			q.Shutdown(false)
			return 0, nil
		}
		for {
			v, err := q.Get(tk)
			if errors.Is(err, ErrQueueShutDown) {
				return 0, nil
			}
			if err != nil {
				return 0, err
			}
			record(v)
		}
	})
	<-foreignGet
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("item %d received %d times", k, c)
		}
	}
}

// A group closed while one loop waits in Put on a full queue and the
// other in Get on an empty one: both waiters leave their queues, nothing
// stays promised, the items stay.
func TestCrossLoopEdge_GroupCloseWithQueueWaiters(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	full, empty := NewCrossQueue[int](1), NewCrossQueue[int](1)
	_ = full.PutNowait(1)
	waiting := make(chan struct{}, 2)
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			//asynciovet:ignore blockingcall a buffered channel with room: the send never blocks
			tk.Loop().CallSoon(func() { waiting <- struct{}{} }) // once the Put or Get below waits
			if i == 0 {
				return 0, full.Put(tk, 2)
			}
			return empty.Get(tk)
		})
		out <- err
	}()
	<-waiting
	<-waiting
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-out; !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunEach: %v", err)
	}
	for name, q := range map[string]*CrossQueue[int]{"full": full, "empty": empty} {
		q.mu.Lock()
		if len(q.getters) != 0 || len(q.putters) != 0 || q.promisedItems != 0 || q.promisedSlots != 0 {
			t.Errorf("%s queue: getters %d putters %d promised items %d slots %d", name, len(q.getters), len(q.putters), q.promisedItems, q.promisedSlots)
		}
		q.mu.Unlock()
	}
	if full.Len() != 1 || empty.Len() != 0 {
		t.Errorf("lengths %d, %d", full.Len(), empty.Len())
	}
}

// Close from three goroutines at once while the group runs: every call
// returns nil, the run ends, every loop is closed.
func TestCrossLoopEdge_ConcurrentClosesWhileRunning(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	ready := make(chan struct{}, 2)
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			//asynciovet:ignore blockingcall a buffered channel with room: the send never blocks
			ready <- struct{}{}
			return NewFuture[int](tk).Await(tk)
		})
		out <- err
	}()
	<-ready
	<-ready
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for k := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[k] = g.Close() }()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("Close %d: %v", k, err)
		}
	}
	if err := <-out; !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunEach: %v", err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d open", i)
		}
	}
}

// Close called from a Go call's goroutine of a main (not a loop goroutine,
// so allowed): it cancels the mains, the Go call's await returns at once,
// and Close completes instead of waiting for itself.
func TestCrossLoopEdge_CloseFromAGoCallOfAMain(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	for _, l := range g.Loops() {
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	}
	closed := make(chan error, 1)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 0 {
			return Go(tk, func(context.Context) (int, error) {
				err := g.Close()
				closed <- err
				return 0, err
			})
		}
		return NewFuture[int](tk).Await(tk)
	})
	if !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunEach: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close from the Go call: %v", err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d open", i)
		}
	}
}

// A group run twice, then with RunGroup: the second run's failure cancels
// only its own mains; a panic with IsolateFailure is a *PanicError in
// the loop's *LoopError and the other main goes on.
func TestCrossLoopEdge_GroupRunAgainAndPanicIsolated(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	boom := errors.New("boom")
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		return CallFuncOn(tk, g.Loop(1-i), func() (int, error) { return i, nil })
	})
	if err != nil || vals[0] != 0 || vals[1] != 1 {
		t.Fatalf("first run: %v, %v", vals, err)
	}
	_, err = RunEach(g, func(tk *T, i int) (int, error) {
		if i == 0 {
			return 0, boom
		}
		return NewFuture[int](tk).Await(tk)
	})
	var le *LoopError
	if !errors.As(err, &le) || le.Index != 0 || !errors.Is(err, boom) || strings.Contains(err.Error(), "loop 1") {
		t.Errorf("second run: %v", err)
	}
	v, err := RunGroup(g, func(tk *T) (int, error) {
		return CallOn(tk, g.Loop(1), func(*T) (int, error) { return 9, nil })
	})
	if v != 9 || err != nil {
		t.Errorf("RunGroup: %d, %v", v, err)
	}

	h := NewLoopGroup(WithLoops(2), WithFailurePolicy(IsolateFailure))
	defer h.Close()
	vals, err = RunEach(h, func(tk *T, i int) (int, error) {
		if i == 0 {
			panic("main panic")
		}
		return 5, Sleep(tk, 0)
	})
	var pe *PanicError
	if !errors.As(err, &le) || le.Index != 0 || !errors.As(err, &pe) || pe.Value != "main panic" || vals[1] != 5 {
		t.Errorf("isolated panic: %v, %v", vals, err)
	}
}

// Spread: n = 0 gathers nothing; a negative n, a nil group or function
// panic with a *ValueError before anything is spread.
func TestCrossLoopEdge_SpreadEdges(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		fn := func(*T, int) (int, error) { return 1, nil }
		vals, err := Spread(tk, g, 0, fn)
		if len(vals) != 0 || err != nil {
			t.Errorf("Spread(0) = %v, %v", vals, err)
		}
		for what, f := range map[string]func(){
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			"n<0": func() { _, _ = Spread(tk, g, -1, fn) },
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			"nil g": func() { _, _ = Spread[int](tk, nil, 1, fn) },
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			"nil fn": func() { _, _ = Spread[int](tk, g, 1, nil) },
		} {
			v := mustPanic(t, what, f)
			var ve *ValueError
			if err, _ := v.(error); !errors.As(err, &ve) {
				t.Errorf("%s: panic %v", what, v)
			}
		}
		if n := tk.Loop().external.Load(); n != 0 {
			t.Errorf("outside work %d", n)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Close right after a run has started (Running already true, the loops
// maybe not yet started): the mains that start afterwards must still be
// cancelled, or Close waits for ever.
func TestCrossLoopEdge_CloseRightAfterTheRunStarts(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) { return NewFuture[int](tk).Await(tk) })
		out <- err
	}()
	for !g.Running() {
		runtime.Gosched()
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-out; err != nil && !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunEach: %v", err)
	}
}

// A waiting Get cancelled, and a woken Get cancelled, on virtual time: the
// loop's outside work is released both times, so its clock moves again.
func TestCrossLoopEdge_CrossQueueCancelledWaitersReleaseTheClock(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		q := NewCrossQueue[int](1)
		for _, woken := range []bool{false, true} {
			getter := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			if woken {
				_ = q.PutNowait(1)
			}
			getter.Cancel()
			if _, err := getter.Await(tk); !IsCancelled(err) {
				t.Errorf("woken=%v: getter %s", woken, describe(err))
			}
			if n := tk.Loop().external.Load(); n != 0 {
				t.Fatalf("woken=%v: outside work %d after the cancelled Get", woken, n)
			}
		}
		if err := Sleep(tk, 1e9); err != nil || tk.Loop().Time() != 1e9 || q.Len() != 1 {
			t.Errorf("Sleep: %v at %v, len %d", err, tk.Loop().Time(), q.Len())
		}
		return nil
	})
}

// A caller that outlives the loops it called: once a target has closed
// (and told the caller so), the caller must not keep it. Today the
// caller's grp.targets keeps every closed target (and its registration)
// reachable for the caller's whole life: a long-lived loop calling
// short-lived ones leaks them all.
func TestCrossLoopEdge_ClosedTargetsAreNotKeptByTheCaller(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		a := tk.Loop()
		for range 3 {
			b := NewLoop()
			closed := make(chan error, 1)
			go func() { // b is driven by this goroutine alone, as a separate program's loop would be
				//asynciovet:ignore foreigngoroutine b is not the task's loop: this goroutine is b's only driver, and closes it after
				err := b.RunForever()
				//asynciovet:ignore foreigngoroutine b's own driver closes it once RunForever returned
				if cerr := b.Close(); err == nil {
					err = cerr
				}
				closed <- err
			}()
			if _, err := CallFuncOn(tk, b, func() (int, error) { b.Stop(); return 1, nil }); err != nil {
				return struct{}{}, err
			}
			if _, _, err := Recv(tk, closed); err != nil {
				return struct{}{}, err
			}
		}
		// b's Close told a through a.CallSoonThreadsafe before it returned:
		// these yields run those callbacks.
		for range 3 {
			if err := Sleep(tk, 0); err != nil {
				return struct{}{}, err
			}
		}
		if n := len(a.grp.targets); n != 0 {
			t.Errorf("the caller still keeps %d closed target loops (grp.targets)", n)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A target with eager tasks: the remote task's first step runs inside
// start (with the call's mutex held); a function that finishes at once
// and one that suspends both come back, and a cancellation while the
// remote suspends reaches it.
func TestCrossLoopEdge_EagerTarget(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithGroupLoopOptions(WithEagerTasks()))
	defer g.Close()
	remoteErr := make(chan error, 1)
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		b := g.Loop(1)
		v, err := CallOn(tk, b, func(*T) (int, error) { return 5, nil })
		w, err2 := CallOn(tk, b, func(rt *T) (int, error) { return 6, Sleep(rt, 0) })
		if v != 5 || w != 6 || err != nil || err2 != nil {
			t.Errorf("eager remote: %d %v, %d %v", v, err, w, err2)
		}
		up, signal := started(tk)
		caller := CreateTask(tk, func(ct *T) (int, error) {
			return CallOn(ct, b, func(rt *T) (int, error) {
				signal()
				_, err := NewFuture[int](rt).Await(rt)
				remoteErr <- err
				return 0, err
			})
		})
		if _, err := up.Await(tk); err != nil {
			return struct{}{}, err
		}
		caller.Cancel("stop")
		if _, err := caller.Await(tk); describe(err) != `CancelledError("stop")` {
			t.Errorf("caller: %s", describe(err))
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-remoteErr; describe(err) != `CancelledError("stop")` {
		t.Errorf("remote: %s", describe(err))
	}
}
