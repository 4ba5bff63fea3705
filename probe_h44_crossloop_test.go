//go:build linux

package asyncio

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// Cross-loop calls closed at every moment. Loop A's main calls loop B in
// turn with CallFuncOn, CallOn and SubmitTo, and takes from a CrossQueue
// that a task on B fills. The probe stops and closes, at B's k-th
// iteration, the target (A goes on: every call in flight fails with
// ErrLoopClosed, and a call whose function ran on B is never reported as
// undone: exactly as many returns as effects); at A's k-th iteration, the
// caller (B goes on: the remote task is cancelled; at most the call in
// flight has an effect A never heard of); and, in a LoopGroup, the group
// (main returns at loop 0's k-th iteration, LoopGroup.Close cancels what
// is left on both loops). Each time no goroutine is left and both loops
// are closed.
func TestH44_CrossLoopClosedAtEveryMoment(t *testing.T) {
	for _, mode := range []string{"target", "caller", "group"} {
		t.Run(mode, func(t *testing.T) {
			for k := 1; ; k++ {
				if k > 1000 {
					t.Fatal("the scenario did not complete within 1000 iterations")
				}
				var completed bool
				t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) { completed = h44CrossLoopAt(t, mode, k) })
				if completed || t.Failed() {
					t.Logf("completed normally at k=%d", k)
					return
				}
			}
		})
	}
}

// h44Cross is the accounting of one run.
type h44Cross struct {
	funcEffects, funcReturned atomic.Int64 // CallFuncOn
	taskEffects, taskReturned atomic.Int64 // CallOn
	subEffects, subReturned   atomic.Int64 // SubmitTo
	put, got                  atomic.Int64 // the CrossQueue
	lastErr                   error        // what ended A's main early
}

const h44CrossN = 4

// scenario is A's main; b is the target.
func (c *h44Cross) scenario(tk *T, b *Loop) error {
	q := NewCrossQueue[int](1)
	producer, err := SubmitTo(tk, b, func(tk *T) (struct{}, error) { // the producer on B
		for j := 0; j < h44CrossN; j++ {
			if err := q.Put(tk, j); err != nil {
				return struct{}{}, err
			}
			c.put.Add(1)
		}
		return struct{}{}, nil
	})
	if err != nil {
		return err
	}
	// Its end is the accounting's, not an error to report.
	producer.AddDoneCallback(func() { _ = producer.Err() })
	defer func() {
		if producer.Done() { // before its callback, when the loop stops next
			_ = producer.Err()
		}
	}()
	for i := 0; i < h44CrossN; i++ {
		v, err := CallFuncOn(tk, b, func() (int, error) { c.funcEffects.Add(1); return i, nil })
		if err != nil {
			return err
		}
		c.funcReturned.Add(1)
		if v != i {
			return fmt.Errorf("CallFuncOn: %d", v)
		}
		v, err = CallOn(tk, b, func(tk *T) (int, error) {
			if err := Sleep(tk, 0); err != nil {
				return 0, err
			}
			c.taskEffects.Add(1)
			return i, nil
		})
		if err != nil {
			return err
		}
		c.taskReturned.Add(1)
		if v != i {
			return fmt.Errorf("CallOn: %d", v)
		}
		f, err := SubmitTo(tk, b, func(tk *T) (int, error) { c.subEffects.Add(1); return i, nil })
		if err != nil {
			return err
		}
		if v, err = f.Await(tk); err != nil {
			return err
		}
		c.subReturned.Add(1)
		if v != i {
			return fmt.Errorf("SubmitTo: %d", v)
		}
		if _, err := q.Get(tk); err != nil {
			return err
		}
		c.got.Add(1)
	}
	return nil
}

// h44CrossLoopAt is one run; it reports whether A's main completed
// normally with nothing stopped.
func h44CrossLoopAt(t *testing.T, mode string, k int) bool {
	ignore := goleak.IgnoreCurrent()
	defer func() {
		if err := goleak.Find(ignore); err != nil {
			t.Error(err)
		}
	}()
	c := &h44Cross{}
	var reports []string
	handler := func(_ *Loop, ec ExceptionContext) {
		msg := ec.Message
		if ec.Err != nil {
			msg += ": " + ec.Err.Error()
		}
		if ec.CreatedAt != "" {
			msg += " (created at " + ec.CreatedAt + ")"
		}
		reports = append(reports, msg)
	}
	// stopped is written by the closing loop's hook, which in target
	// mode runs on B's goroutine, possibly after A's main ended and while
	// this goroutine reads it.
	var stoppedFlag atomic.Bool
	stopped := stoppedFlag.Load
	var a, b *Loop
	var main *Task[struct{}]
	if mode == "group" {
		g := NewLoopGroup(WithLoops(2))
		a, b = g.Loop(0), g.Loop(1)
		a.SetExceptionHandler(handler)
		var bReports []string
		b.SetExceptionHandler(func(_ *Loop, ec ExceptionContext) { bReports = append(bReports, ec.Message) })
		_, err := RunGroup(g, func(tk *T) (struct{}, error) {
			stop := NewFuture[struct{}](tk)
			iter := 0
			a.SetBeforePoll(func() {
				if iter++; iter == k && !stop.Done() {
					stoppedFlag.Store(true)
					stop.SetResult(struct{}{})
				}
			})
			main = CreateTaskErr(tk, func(tk *T) error { return c.scenario(tk, b) })
			_, _, err := Wait(tk, []Awaitable{main, stop}, Never, FirstCompleted)
			return struct{}{}, err
		})
		if err != nil {
			t.Fatalf("RunGroup: %v", err)
		}
		completed := main.Done() && !stopped()
		if err := g.Close(); err != nil {
			t.Errorf("LoopGroup.Close: %v", err)
		}
		if !a.IsClosed() || !b.IsClosed() {
			t.Errorf("a loop of the group is not closed")
		}
		if !main.Done() {
			t.Errorf("main not done after LoopGroup.Close")
		}
		c.check(t, mode, completed)
		h44CrossReports(t, mode, append(reports, bReports...))
		return completed
	}

	a, b = NewLoop(), NewLoop()
	a.SetExceptionHandler(handler)
	var bReports []string
	b.SetExceptionHandler(func(_ *Loop, ec ExceptionContext) { bReports = append(bReports, ec.Message) })
	closing := b // target: B closes at its k-th iteration
	if mode == "caller" {
		closing = a
	}
	iter := 0
	closing.SetBeforePoll(func() {
		if iter++; iter == k {
			stoppedFlag.Store(true)
			closing.Stop()
		}
	})
	main = CreateTaskErr(a, func(tk *T) error { return c.scenario(tk, b) })
	main.AddDoneCallback(func() { a.Stop() })
	// B runs until told to stop (or stops itself in target mode).
	var bRun sync.WaitGroup
	bRun.Add(1)
	go func() {
		defer bRun.Done()
		if err := b.RunForever(); err != nil {
			t.Errorf("B: RunForever: %v", err)
		}
		if mode == "target" && stopped() {
			if err := b.Close(); err != nil {
				t.Errorf("B: Close: %v", err)
			}
		}
	}()
	if err := a.RunForever(); err != nil {
		t.Fatalf("A: RunForever: %v", err)
	}
	stoppedAtEnd := stopped() // once: B may still reach its k-th iteration
	completed := main.Done() && !stoppedAtEnd
	if mode == "target" && main.Done() && stoppedAtEnd {
		// A went on after B closed: main ends with ErrLoopClosed, or
		// completed if B closed after the last call.
		if err := main.Err(); err != nil && !errors.Is(err, ErrLoopClosed) {
			t.Errorf("main after the target closed: %v", err)
		}
		c.lastErr = main.Err()
	}
	if err := a.Close(); err != nil {
		t.Errorf("A: Close: %v", err)
	}
	if !(mode == "target" && stopped()) {
		// B still runs: stop it (in caller mode it has had A's Close
		// cancellations queued by now) and close it.
		if _, err := b.CallSoonThreadsafe(b.Stop); err != nil && !errors.Is(err, ErrLoopClosed) {
			t.Errorf("B: CallSoonThreadsafe: %v", err)
		}
	}
	bRun.Wait()
	if !b.IsClosed() {
		if err := b.Close(); err != nil {
			t.Errorf("B: Close: %v", err)
		}
	}
	c.check(t, mode, completed)
	h44CrossReports(t, mode, append(reports, bReports...))
	return completed
}

// h44CrossReports fails on reports other than pending tasks at Close and,
// when the target closes first, calls that failed with that: the
// producer's SubmitTo future, its done callback dropped by A's Close
// (as CPython's would be, to be reported when collected), or, in a group
// whose loops close concurrently, a call A's cleanup makes after B
// closed ("unhandled exception during asyncio.run() shutdown").
func h44CrossReports(t *testing.T, mode string, reports []string) {
	t.Helper()
	for _, r := range reports {
		if strings.HasPrefix(r, "Task was destroyed but it is pending!") {
			continue
		}
		if mode != "caller" && strings.Contains(r, "the target loop") {
			continue
		}
		t.Errorf("reported: %s", r)
	}
}

// check is the accounting once both loops are closed.
func (c *h44Cross) check(t *testing.T, mode string, completed bool) {
	t.Helper()
	for _, p := range []struct {
		name              string
		effects, returned *atomic.Int64
	}{
		{"CallFuncOn", &c.funcEffects, &c.funcReturned},
		{"CallOn", &c.taskEffects, &c.taskReturned},
		{"SubmitTo", &c.subEffects, &c.subReturned},
	} {
		e, r := p.effects.Load(), p.returned.Load()
		switch {
		case completed && (e != h44CrossN || r != h44CrossN):
			t.Errorf("%s: completed with %d effects, %d returns", p.name, e, r)
		case mode == "target" && e != r:
			// The caller outlived the target: an effect on B is always
			// reported back, never as ErrLoopClosed.
			t.Errorf("%s: %d effects on the target, %d returned to the caller (last error %v)", p.name, e, r, c.lastErr)
		case e != r && e != r+1:
			t.Errorf("%s: %d effects, %d returns", p.name, e, r)
		}
	}
	if c.got.Load() > c.put.Load() {
		t.Errorf("CrossQueue: %d got, %d put", c.got.Load(), c.put.Load())
	}
}
