package asyncio

// Hostile edge cases of LoopGroup (group.go, group_snapshot.go) and of the
// cross-loop calls its loops make (crossloop.go). The loops run on real
// time; nothing waits on the real clock for synchronisation: every wait is
// for an explicit signal. Where a documented promise, if broken, would
// hang the test binary, the wait is bounded by groupEdgeHang, a generous
// real-time bound that only turns a hang into a failure.

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// groupEdgeHang bounds a wait that only a bug keeps from ending.
const groupEdgeHang = 10 * time.Second

// waitOrHang waits for ch; if it is not closed or sent on within
// groupEdgeHang, it fails the test naming what hung and returns false.
func waitOrHang[C any](t *testing.T, ch <-chan C, what string) (C, bool) {
	t.Helper()
	select {
	case v := <-ch:
		return v, true
	case <-time.After(groupEdgeHang):
		t.Errorf("hang: %s did not happen within %v", what, groupEdgeHang)
		var zero C
		return zero, false
	}
}

// quietGroup silences the exception handler of every loop of g (tasks a
// test leaves behind are reported at Close).
func quietGroup(g *LoopGroup) {
	for _, l := range g.Loops() {
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	}
}

// valueErrorPanic reports whether v, a recovered panic value, is a
// *ValueError whose message contains want.
func valueErrorPanic(v any, want string) bool {
	err, _ := v.(error)
	var ve *ValueError
	return errors.As(err, &ve) && strings.Contains(ve.Msg, want)
}

// "WithLoops sets the number of loops of the group ... n < 1 panics with a
// *ValueError." A negative count, and the smallest, are refused with a
// message naming the count.
func TestGroupEdge_WithLoopsNegativePanicsWithValueError(t *testing.T) {
	for _, n := range []int{0, -1, -1 << 40} {
		v := mustPanic(t, "WithLoops", func() { WithLoops(n) })
		if !valueErrorPanic(v, "WithLoops") {
			t.Errorf("WithLoops(%d) panicked with %#v, want a *ValueError naming WithLoops", n, v)
		}
	}
	g := NewLoopGroup(WithLoops(1))
	defer g.Close()
	if g.Len() != 1 {
		t.Errorf("WithLoops(1): Len %d", g.Len())
	}
}

// "Loop returns loop i (0 <= i < Len); any other i panics with a
// *ValueError." and "Index returns l's index in the group, or -1 if l is
// not one of its loops."
func TestGroupEdge_LoopAndIndexOutOfRange(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	h := NewLoopGroup(WithLoops(1))
	defer h.Close()
	for _, i := range []int{-1, 2, 1 << 40, -1 << 40} {
		v := mustPanic(t, "Loop", func() { g.Loop(i) })
		if !valueErrorPanic(v, "out of range") {
			t.Errorf("Loop(%d) panicked with %#v, want a *ValueError", i, v)
		}
	}
	if i := g.Index(nil); i != -1 {
		t.Errorf("Index(nil) = %d", i)
	}
	if i := g.Index(h.Loop(0)); i != -1 {
		t.Errorf("Index of another group's loop 0 = %d", i)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	// Still answered once the group is closed.
	if g.Index(g.Loop(1)) != 1 || !g.Loop(1).IsClosed() {
		t.Errorf("after Close: Index %d closed %v", g.Index(g.Loop(1)), g.Loop(1).IsClosed())
	}
}

// "A nil main panics with a *ValueError." (RunGroup), "before any state
// changes": the group is not left marked running.
func TestGroupEdge_RunGroupNilMainChangesNothing(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	v := mustPanic(t, "RunGroup(nil)", func() { _, _ = RunGroup[int](g, nil) })
	if !valueErrorPanic(v, "nil main") {
		t.Errorf("RunGroup(nil) panicked with %#v", v)
	}
	v = mustPanic(t, "RunEach(nil)", func() { _, _ = RunEach[int](g, nil) })
	if !valueErrorPanic(v, "nil main") {
		t.Errorf("RunEach(nil) panicked with %#v", v)
	}
	if g.Running() {
		t.Errorf("Running after a refused nil main")
	}
	if v, err := RunGroup(g, func(*T) (int, error) { return 3, nil }); v != 3 || err != nil {
		t.Errorf("RunGroup after the refusals: %d, %v", v, err)
	}
}

// "RunEach [and RunGroup] returns an error, running nothing, when g is
// closed". RunGroup after Close: an error naming the closed group, main
// never called, nil main still a *ValueError.
func TestGroupEdge_RunGroupAfterClose(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	ran := false
	_, err := RunGroup(g, func(*T) (int, error) { ran = true; return 0, nil })
	if ran || err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("RunGroup on a closed group: ran %v, %v", ran, err)
	}
	_, err = RunEach(g, func(*T, int) (int, error) { ran = true; return 0, nil })
	if ran || err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("RunEach on a closed group: ran %v, %v", ran, err)
	}
	if g.Running() {
		t.Errorf("Running after refused runs")
	}
}

// "RunEach returns an error, running nothing, when g is ... already
// running" — also when the second run is made concurrently from another
// goroutine (not from inside a main): it is refused and the first run is
// undisturbed.
func TestGroupEdge_ConcurrentRunsOneIsRefused(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	ready := make(chan int, 2)
	release := make(chan struct{})
	out := make(chan error, 1)
	go func() {
		vals, err := RunEach(g, func(tk *T, i int) (int, error) {
			ready <- i
			_, _, err := Recv(tk, release)
			return i + 10, err
		})
		if err == nil && (vals[0] != 10 || vals[1] != 11) {
			err = errors.New("wrong values")
		}
		out <- err
	}()
	<-ready
	<-ready
	ran := false
	_, err := RunEach(g, func(*T, int) (int, error) { ran = true; return 0, nil })
	if ran || err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("concurrent RunEach: ran %v, %v", ran, err)
	}
	_, err = RunGroup(g, func(*T) (int, error) { ran = true; return 0, nil })
	if ran || err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("concurrent RunGroup: ran %v, %v", ran, err)
	}
	if !g.Running() {
		t.Errorf("the first run no longer counts as running")
	}
	close(release)
	if err, ok := waitOrHang(t, out, "the first RunEach returning"); ok && err != nil {
		t.Errorf("first RunEach: %v", err)
	}
}

// "Called from a task or callback of one of the group's loops it returns
// an error and changes nothing (it would wait for itself)." From a plain
// callback (CallSoon), a done callback, and a CallFuncOn function (a
// callback on another loop of the group): each gets the error, and the
// group can run again afterwards.
func TestGroupEdge_CloseFromCallbacksIsAnErrorAndChangesNothing(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	var mu sync.Mutex
	var errs []error
	record := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	_, err := RunGroup(g, func(tk *T) (int, error) {
		done := NewFuture[struct{}](tk)
		tk.Loop().CallSoon(func() { record(g.Close()) })
		f := NewFuture[int](tk)
		f.AddDoneCallback(func() { record(g.Close()); _ = done.SetResult(struct{}{}) })
		_ = f.SetResult(1)
		if _, err := done.Await(tk); err != nil {
			return 0, err
		}
		return CallFuncOn(tk, g.Loop(1), func() (int, error) { record(g.Close()); return 0, nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 3 {
		t.Fatalf("%d Close calls recorded, want 3", len(errs))
	}
	for k, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "called from loop") {
			t.Errorf("Close %d from a callback: %v", k, err)
		}
	}
	for i, l := range g.Loops() {
		if l.IsClosed() {
			t.Errorf("loop %d closed by a refused Close", i)
		}
	}
	if v, err := RunGroup(g, func(tk *T) (int, error) {
		return CallOn(tk, g.Loop(1), func(*T) (int, error) { return 4, nil })
	}); v != 4 || err != nil {
		t.Errorf("a run after the refused Closes: %d, %v", v, err)
	}
}

// "When a main fails, the group's FailurePolicy decides whether the other
// mains are cancelled (the default) or go on." RunEach reports a main that
// ends its goroutine with runtime.Goexit (t.FailNow) as a failure of its
// loop ("the main of loop %d ended its goroutine"), so under
// CancelGroupOnFailure the other mains must be cancelled: otherwise a main
// waiting for the lost one keeps RunEach waiting for ever.
func TestGroupEdge_GoexitInAMainCancelsTheOthersUnderTheDefaultPolicy(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	quietGroup(g)
	defer func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			if i == 1 {
				runtime.Goexit()
			}
			return NewFuture[int](tk).Await(tk) // done only by a cancellation
		})
		out <- err
	}()
	err, ok := waitOrHang(t, out, "RunEach returning after main 1's Goexit (main 0 cancelled by the policy)")
	if !ok {
		// Let the run end so that the group can close.
		_, _ = g.Loop(0).CallSoonThreadsafe(func() {
			for _, x := range AllTasks(g.Loop(0)) {
				x.Cancel()
			}
		})
		<-out
		return
	}
	var le *LoopError
	if !errors.As(err, &le) || le.Index != 1 || strings.Contains(err.Error(), "loop 0") {
		t.Errorf("RunEach: %v", err)
	}
}

// "nothing a loop owns (goroutines ...) outlives Close": a RunEach main
// that ends its goroutine with runtime.Goexit leaves no goroutine behind
// once the group is closed — in particular not the Runner's SIGINT watch
// (no signal handler on the loop here, unlike group_signal_test.go).
func TestGroupEdge_GoexitInAMainLeavesNoGoroutine(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	g := NewLoopGroup(WithLoops(2), WithFailurePolicy(IsolateFailure))
	quietGroup(g)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			runtime.Goexit()
		}
		return 0, nil
	})
	if !strings.Contains(errString(err), "Goexit") {
		t.Errorf("RunEach: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := goleak.Find(opts); err != nil {
		t.Errorf("goroutines left after Close: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// "Close ... which any goroutine may call at any time" and "Called from a
// task or callback of one of the group's loops it returns an error and
// changes nothing (it would wait for itself)". A function registered with
// OnClose on a loop of the group runs inside that loop's Close, on the
// goroutine of the group's Close: a g.Close there must not wait for the
// Close it is part of.
func TestGroupEdge_CloseFromAnOnCloseHookDoesNotWaitForItself(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	hook := make(chan error, 1)
	g.Loop(1).OnClose(func() { hook <- g.Close() })
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	if err, ok := waitOrHang(t, closed, "the group's Close returning (its loop 1's OnClose hook calls g.Close)"); ok && err != nil {
		t.Errorf("Close: %v", err)
	}
	// The hook ran inside that Close: its own Close was refused at once.
	select {
	case err := <-hook:
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "loop 1") {
			t.Errorf("Close from the OnClose hook: %v; want a *RuntimeError naming loop 1", err)
		}
	default:
		t.Errorf("the OnClose hook did not run during the group's Close")
	}
}

// "Called from a task or callback of one of the group's loops it returns
// an error and changes nothing": a task left pending after the run, whose
// cleanup (when Close cancels it) calls g.Close, gets the error, and the
// group's Close still closes every loop.
func TestGroupEdge_CloseFromACleanupDuringCloseIsAnError(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	inner := make(chan error, 2)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		//asynciovet:ignore unawaitedtask left pending on purpose: Close cancels it
		CreateTask(tk, func(ct *T) (int, error) {
			_, err := NewFuture[int](ct).Await(ct)
			inner <- g.Close()
			return 0, err
		})
		return 0, Sleep(tk, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	if err, ok := waitOrHang(t, closed, "Close returning"); ok && err != nil {
		t.Errorf("Close: %v", err)
	}
	for k := 0; k < 2; k++ {
		if err := <-inner; err == nil || !strings.Contains(err.Error(), "called from loop") {
			t.Errorf("Close from a cleanup during Close: %v", err)
		}
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d open", i)
		}
	}
}

// "If a run is in progress (from another goroutine), Close first cancels
// every main and waits for the run to return", and "A loop whose main is
// done goes on running, to serve the other loops' calls, until every main
// is done": a main whose cleanup (after Close cancelled it) calls another
// loop of the group, whose own main already ended cancelled, still gets
// its answer.
func TestGroupEdge_CleanupAfterCloseCanStillCallTheOtherLoops(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	ready := make(chan int, 3)
	type res struct {
		vals []int
		err  error
	}
	out := make(chan res, 1)
	go func() {
		vals, err := RunEach(g, func(tk *T, i int) (int, error) {
			ready <- i
			_, err := NewFuture[int](tk).Await(tk)
			if i != 0 {
				return 0, err
			}
			// Main 0's cleanup: call both other loops, whose mains end at once.
			sum := 0
			for j := 1; j < 3; j++ {
				v, cerr := CallOn(tk, g.Loop(j), func(rt *T) (int, error) { return g.Index(rt.Loop()), Sleep(rt, 0) })
				if cerr != nil {
					return 0, cerr
				}
				sum += v
			}
			return sum, nil // swallows the cancellation: a success
		})
		out <- res{vals, err}
	}()
	for k := 0; k < 3; k++ {
		<-ready
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	r, ok := waitOrHang(t, out, "RunEach returning")
	if !ok {
		return
	}
	if r.vals[0] != 3 {
		t.Errorf("main 0's cleanup calls summed %d (want 3); RunEach: %v", r.vals[0], r.err)
	}
	if !errors.Is(r.err, ErrGroupCancelled) || strings.Contains(errString(r.err), "loop 0") {
		t.Errorf("RunEach: %v", r.err)
	}
}

// "a panic inside a task or callback never takes the loop down": a panic
// in a callback sent to a serving loop (CallSoonThreadsafe), and one in a
// CallFuncOn function, leave the serving loop serving.
func TestGroupEdge_PanicsOnAServingLoopDoNotStopIt(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	var mu sync.Mutex
	var reports []string
	g.Loop(1).SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		//asynciovet:ignore blockingcall a test-only mutex held for a few instructions (the reports are read from the test's goroutine)
		mu.Lock()
		reports = append(reports, c.Message)
		mu.Unlock()
	})
	v, err := RunGroup(g, func(tk *T) (int, error) {
		b := g.Loop(1)
		if _, err := b.CallSoonThreadsafe(func() { panic("callback breaks") }); err != nil {
			return 0, err
		}
		_, perr := CallFuncOn(tk, b, func() (int, error) { panic("func breaks") })
		var pe *PanicError
		if !errors.As(perr, &pe) || pe.Value != "func breaks" {
			t.Errorf("CallFuncOn that panics: %v", perr)
		}
		_, perr = CallOn(tk, b, func(*T) (int, error) { panic("task breaks") })
		if !errors.As(perr, &pe) || pe.Value != "task breaks" {
			t.Errorf("CallOn that panics: %v", perr)
		}
		return CallOn(tk, b, func(rt *T) (int, error) { return 7, Sleep(rt, 0) })
	})
	if v != 7 || err != nil {
		t.Errorf("RunGroup: %d, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) == 0 {
		t.Errorf("the panicking callback was not reported")
	}
}

// "SnapshotThreadsafe takes a snapshot of every loop of g, from any
// goroutine": on a closed group every part is marked Closed, and the
// renderings and Stats work on it. "A timeout <= 0 panics with a
// *ValueError."
func TestGroupEdge_SnapshotOfAClosedGroup(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	for _, d := range []time.Duration{0, -1} {
		v := mustPanic(t, "timeout", func() { g.SnapshotThreadsafe(d, SnapshotOptions{}) })
		if !valueErrorPanic(v, "timeout") {
			t.Errorf("SnapshotThreadsafe(%v) panicked with %#v", d, v)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	s := g.SnapshotThreadsafe(time.Hour, SnapshotOptions{})
	for i, ls := range s.Loops {
		if ls.Index != i || ls.Name != g.Loop(i).Name() || ls.LoopSnapshot == nil || !ls.Closed {
			t.Errorf("part %d: %+v", i, ls)
		}
	}
	var b strings.Builder
	if err := s.WritePS(&b); err != nil {
		t.Errorf("WritePS: %v", err)
	}
	if err := s.WriteTree(&b); err != nil {
		t.Errorf("WriteTree: %v", err)
	}
	if len(s.Stats()) != 2 {
		t.Errorf("Stats: %v", s.Stats())
	}
}

// "a loop that does not answer within timeout is marked Blocked": one loop
// held by a step that blocks, the other idle; the blocked loop's part is
// Blocked, and once it is released the run ends and the abandoned request
// costs nothing ("an abandoned one costs nothing", DESIGN.md).
func TestGroupEdge_SnapshotWhileOneLoopIsBlocked(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	blocked := make(chan struct{})
	release := make(chan struct{})
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			if i == 1 {
				close(blocked)
				//asynciovet:ignore blockingcall holds loop 1 on purpose, for the snapshot to find it blocked
				<-release
			}
			return 0, nil
		})
		out <- err
	}()
	<-blocked
	before := g.Loop(1).snapReq.taken.Load()
	s := g.SnapshotThreadsafe(50*time.Millisecond, SnapshotOptions{})
	if !s.Loops[1].Blocked {
		t.Errorf("loop 1 held by a blocking step: part %+v", s.Loops[1].LoopSnapshot)
	}
	if s.Loops[0].Blocked {
		t.Logf("loop 0 (idle, serving) did not answer within 50ms either (a loaded machine?)")
	}
	var b strings.Builder
	if err := s.WritePS(&b); err != nil {
		t.Errorf("WritePS: %v", err)
	}
	close(release)
	if err, ok := waitOrHang(t, out, "RunEach returning"); ok && err != nil {
		t.Errorf("RunEach: %v", err)
	}
	if n := g.Loop(1).snapReq.taken.Load(); n != before {
		t.Errorf("the abandoned snapshot request was taken anyway (%d -> %d)", before, n)
	}
}

// "a loop that does not answer within timeout is marked Blocked" / a
// closed loop's part is Closed: a snapshot asked of a group that is not
// running waits on its loops; when the group closes meanwhile, the
// closed loops can never answer, so the caller should learn it then,
// not only when its whole timeout has passed.
func TestGroupEdge_SnapshotPendingWhenTheGroupCloses(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	const timeout = time.Hour // the answer must come from Close, not the timeout
	out := make(chan *GroupSnapshot, 1)
	go func() { out <- g.SnapshotThreadsafe(timeout, SnapshotOptions{}) }()
	for _, l := range g.Loops() { // both requests queued
		for {
			l.snapReq.mu.Lock()
			queued := l.snapReq.cur != nil
			l.snapReq.mu.Unlock()
			if queued {
				break
			}
			runtime.Gosched()
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	s, ok := waitOrHang(t, out, "the snapshot asked before Close returning after it")
	if !ok {
		return
	}
	for i, ls := range s.Loops {
		if !ls.Closed || ls.Blocked {
			t.Errorf("part %d of a snapshot asked before the group closed: Closed %v Blocked %v; want Closed", i, ls.Closed, ls.Blocked)
		}
	}
}

// "Close shuts every loop of g down" and "a caller whose target closed
// gets an error wrapping ErrLoopClosed": a task left on loop 0 whose
// cleanup (when the group's Close cancels it) keeps calling loop 1, which
// closes at the same time, sees every call either answered or failed with
// ErrLoopClosed, and Close returns.
func TestGroupEdge_CallsIntoALoopClosingConcurrently(t *testing.T) {
	for round := 0; round < 20; round++ {
		g := NewLoopGroup(WithLoops(2))
		quietGroup(g)
		var outcomes []error
		finished := make(chan struct{})
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			if i == 1 {
				return 0, nil
			}
			//asynciovet:ignore unawaitedtask left pending on purpose: the group's Close cancels it
			CreateTask(tk, func(ct *T) (int, error) {
				defer close(finished)
				_, err := NewFuture[int](ct).Await(ct)
				for k := 0; k < 200; k++ {
					var cerr error
					if k%2 == 0 {
						_, cerr = CallFuncOn(ct, g.Loop(1), func() (int, error) { return k, nil })
					} else {
						_, cerr = CallOn(ct, g.Loop(1), func(rt *T) (int, error) { return k, Sleep(rt, 0) })
					}
					outcomes = append(outcomes, cerr)
					if cerr != nil {
						break
					}
				}
				return 0, err
			})
			return 0, Sleep(tk, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		if _, ok := waitOrHang(t, closed, "Close returning"); !ok {
			return
		}
		<-finished
		for k, err := range outcomes {
			if err != nil && !errors.Is(err, ErrLoopClosed) {
				t.Errorf("round %d call %d into the closing loop: %s", round, k, describe(err))
			}
		}
	}
}

// "Close shuts every loop of g down" — also when a loop was closed on its
// own (g.Loop(i).Close(), which a Loop's API allows): RunGroup and RunEach
// then fail loudly in the caller ("scheduling on a closed loop [panics]
// (the panic value wraps ErrLoopClosed)", DESIGN.md), with nothing left
// running and the group not marked running, and the group's Close still
// closes the other loops.
func TestGroupEdge_ALoopClosedOnItsOwn(t *testing.T) {
	for _, closedLoop := range []int{0, 1, 2} {
		g := NewLoopGroup(WithLoops(3))
		if err := g.Loop(closedLoop).Close(); err != nil {
			t.Fatal(err)
		}
		for _, run := range []struct {
			name string
			fn   func() error
		}{
			{"RunGroup", func() error {
				_, err := RunGroup(g, func(tk *T) (int, error) { return 0, nil })
				return err
			}},
			{"RunEach", func() error {
				_, err := RunEach(g, func(tk *T, i int) (int, error) { return 0, nil })
				return err
			}},
		} {
			var err error
			p := func() (p any) {
				defer func() { p = recover() }()
				err = run.fn()
				return nil
			}()
			if !errors.Is(err, ErrLoopClosed) || p != nil ||
				!strings.Contains(err.Error(), fmt.Sprintf("loop %d of the group is closed", closedLoop)) {
				t.Errorf("%s with loop %d closed on its own: err %v, panic %v; want an error naming the loop, "+
					"matching ErrLoopClosed, before anything runs", run.name, closedLoop, err, p)
			}
			if g.Running() {
				t.Errorf("%s left the group marked running", run.name)
			}
			for i, l := range g.Loops() {
				if l.IsRunning() {
					t.Errorf("%s with loop %d closed: loop %d left running", run.name, closedLoop, i)
				}
			}
		}
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for i, l := range g.Loops() {
			if !l.IsClosed() {
				t.Errorf("loop %d not closed by the group's Close", i)
			}
		}
	}
}

// The same with WithLockOSThread, where loop 0's work runs on the loop's
// own locked goroutine: the misuse must still reach the caller as a panic
// or an error, not crash the process from the group's goroutine ("a panic
// ... never takes the loop down"; "misuse is loud" is for the caller to
// see). Run in a helper process, since a crash ends the process.
func TestGroupEdge_ALoopClosedOnItsOwnWithLockOSThread(t *testing.T) {
	out, err := runHelper("group-edge-locked-loop0-closed")
	if err != nil || !strings.Contains(out, "caller saw: ") {
		t.Errorf("RunGroup on a WithLockOSThread group whose loop 0 was closed on its own: %v\n%s", err, out)
	}
}

func init() {
	helperProcesses["group-edge-locked-loop0-closed"] = func() int {
		g := NewLoopGroup(WithLoops(2), WithLockOSThread())
		defer g.Close()
		if err := g.Loop(0).Close(); err != nil {
			fmt.Println("Close:", err)
			return 1
		}
		var err error
		p := func() (p any) {
			defer func() { p = recover() }()
			_, err = RunGroup(g, func(tk *T) (int, error) { return 0, nil })
			return nil
		}()
		fmt.Printf("caller saw: err %v, panic %v\n", err, p)
		return 0
	}
}

// "On virtual time an idle serving loop waits for calls instead of
// reporting ErrDeadlock" (RunGroup) — RunEach's loops whose main is done
// serve the same way ("A loop whose main is done goes on running, to serve
// the other loops' calls"): a virtual-time loop whose main returned at
// once still answers a call made an hour of virtual time later.
func TestGroupEdge_VirtualTimeRunEachDoneLoopServes(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithGroupLoopOptions(WithVirtualTime()))
	defer g.Close()
	out := make(chan error, 1)
	var vals []int
	go func() {
		var err error
		vals, err = RunEach(g, func(tk *T, i int) (int, error) {
			if i == 1 {
				return 1, nil
			}
			if err := Sleep(tk, time.Hour); err != nil {
				return 0, err
			}
			return CallOn(tk, g.Loop(1), func(rt *T) (int, error) {
				if err := Sleep(rt, time.Minute); err != nil {
					return 0, err
				}
				return int(rt.Loop().Time() / time.Minute), nil
			})
		})
		out <- err
	}()
	if err, ok := waitOrHang(t, out, "RunEach returning"); ok && (err != nil || vals[0] != 1) {
		t.Errorf("RunEach = %v, %v (want loop 1's clock at 1 minute)", vals, err)
	}
}

// FailurePolicy: "what a LoopGroup does when the main of one of its loops
// fails (returns an error other than a cancellation caused by the group,
// or panics)". A main that returns an ErrGroupCancelled of its own making
// (say from a nested group it ran) was not cancelled by this group. Once
// the policy has dealt with main 1's end (testHookMainDone), a callback
// queued on loop 0 after the policy's own sees whether main 0 was asked to
// stop.
func TestGroupEdge_MainReturningErrGroupCancelledItself(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	quietGroup(g)
	defer g.Close()
	mine := fmt.Errorf("a nested group: %w", ErrGroupCancelled)
	cancelled := make(chan bool, 1)
	testHookMainDone = func(i int) {
		if i != 1 {
			return
		}
		l := g.Loop(0)
		_, _ = l.CallSoonThreadsafe(func() {
			// Cancelled by the policy: still cancelling, or already ended
			// cancelled (then RunWith has uncancelled it). Nothing else
			// cancels it before this check.
			main := g.mains[0]
			cancelled <- main.Cancelling() > 0 || main.Cancelled()
			main.Cancel() // end the run either way
		})
	}
	defer func() { testHookMainDone = nil }()
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			return 0, mine
		}
		return NewFuture[int](tk).Await(tk)
	})
	if !<-cancelled {
		t.Errorf("a main returning another group's ErrGroupCancelled is not treated as a failure: the other mains are not cancelled")
	}
	listed := false
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			var le *LoopError
			listed = listed || errors.As(e, &le) && le.Index == 1 && errors.Is(le.Err, mine)
		}
	}
	if !listed {
		t.Errorf("RunEach: %v; want loop 1's own error listed as its failure", err)
	}
}

// "a loop of g that is closed fails its share with an error wrapping
// ErrLoopClosed" (Spread), from a loop outside the closed group.
func TestGroupEdge_SpreadOverAClosedGroup(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Run(func(tk *T) (int, error) {
		vals, err := Spread(tk, g, 3, func(*T, int) (int, error) { return 1, nil })
		if len(vals) != 3 || !errors.Is(err, ErrLoopClosed) || !strings.Contains(err.Error(), "task 2") {
			t.Errorf("Spread over a closed group: %v, %v", vals, err)
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// "WithLockOSThread ... Close must then be called, or the goroutines (and
// threads) stay" — and once it is, none stay, also after a second Close
// and Closes from several goroutines at once.
func TestGroupEdge_LockedGroupClosedTwiceLeavesNoGoroutine(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	g := NewLoopGroup(WithLoops(2), WithLockOSThread())
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		return CallFuncOn(tk, g.Loop(1-i), func() (int, error) { return i, nil })
	})
	if err != nil || vals[0] != 0 || vals[1] != 1 {
		t.Errorf("RunEach: %v, %v", vals, err)
	}
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
	if err := g.Close(); err != nil {
		t.Errorf("a later Close: %v", err)
	}
	if err := goleak.Find(opts); err != nil {
		t.Errorf("goroutines left after Close: %v", err)
	}
}

// "Cross-loop calls still in flight end: a caller whose target closed gets
// an error wrapping ErrLoopClosed": a caller outside the group (a loop of
// its own) whose remote task on the group's loop 1 is pending when the
// group closes.
func TestGroupEdge_OutsideCallerOfAClosingGroupGetsErrLoopClosed(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	runOut := make(chan error, 1)
	serving := make(chan struct{})
	go func() {
		_, err := RunGroup(g, func(tk *T) (int, error) {
			close(serving)
			return NewFuture[int](tk).Await(tk)
		})
		runOut <- err
	}()
	<-serving
	remoteUp := make(chan struct{})
	closed := make(chan error, 1)
	_, err := Run(func(tk *T) (int, error) {
		caller := CreateTask(tk, func(ct *T) (int, error) {
			return CallOn(ct, g.Loop(1), func(rt *T) (int, error) {
				close(remoteUp)
				return NewFuture[int](rt).Await(rt)
			})
		})
		if _, _, err := Recv(tk, remoteUp); err != nil {
			return 0, err
		}
		go func() { closed <- g.Close() }()
		_, err := caller.Await(tk)
		if !errors.Is(err, ErrLoopClosed) {
			t.Errorf("the outside caller, its target closed: %s", describe(err))
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err, ok := waitOrHang(t, closed, "Close returning"); ok && err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-runOut; !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunGroup: %v", err)
	}
}

// Close, snapshots and cross-loop traffic at once, a few rounds: "Close,
// which any goroutine may call at any time"; SnapshotThreadsafe "from any
// goroutine". Nothing hangs, races or panics; every part of a snapshot
// taken after Close is Closed.
func TestGroupEdge_CloseSnapshotsAndTrafficTogether(t *testing.T) {
	for round := 0; round < 5; round++ {
		g := NewLoopGroup(WithLoops(3))
		quietGroup(g)
		busy := make(chan int, 3)
		runOut := make(chan error, 1)
		go func() {
			_, err := RunEach(g, func(tk *T, i int) (int, error) {
				//asynciovet:ignore blockingcall buffered with room for every main: it never blocks
				busy <- i
				for k := 0; ; k++ {
					other := g.Loop((i + 1 + k%2) % 3)
					if _, err := CallFuncOn(tk, other, func() (int, error) { return k, nil }); err != nil {
						return 0, err
					}
					if _, err := CallOn(tk, other, func(rt *T) (int, error) { return k, Sleep(rt, 0) }); err != nil {
						return 0, err
					}
				}
			})
			runOut <- err
		}()
		for k := 0; k < 3; k++ {
			<-busy
		}
		stop := make(chan struct{})
		snapsDone := make(chan struct{})
		go func() {
			defer close(snapsDone)
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := g.SnapshotThreadsafe(100*time.Millisecond, SnapshotOptions{MaxTasks: 5})
				var b strings.Builder
				_ = s.WritePS(&b)
				_ = s.Stats()
			}
		}()
		closeErrs := make(chan error, 2)
		for k := 0; k < 2; k++ {
			go func() { closeErrs <- g.Close() }()
		}
		for k := 0; k < 2; k++ {
			if err, ok := waitOrHang(t, closeErrs, "Close returning"); !ok {
				return
			} else if err != nil {
				t.Errorf("round %d: Close: %v", round, err)
			}
		}
		close(stop)
		<-snapsDone
		if err := <-runOut; !errors.Is(err, ErrGroupCancelled) {
			t.Errorf("round %d: RunEach: %v", round, err)
		}
		for i, ls := range g.SnapshotThreadsafe(time.Second, SnapshotOptions{}).Loops {
			if !ls.Closed {
				t.Errorf("round %d: part %d of a snapshot after Close: %+v", round, i, ls.LoopSnapshot)
			}
		}
	}
}
