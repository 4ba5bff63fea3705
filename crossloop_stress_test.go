package asyncio

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

// Item 7 of issue 18: cross-loop calls under load, with cancellation from
// both sides, and a fuzz target for call/cancel/close interleavings.

// The kinds of remote work a stress call does.
const (
	remoteValue      = iota // returns x+1 after a few yields
	remoteError             // returns errRemote
	remotePanic             // panics
	remoteSelfCancel        // ends cancelled with "self"
	remoteForever           // waits until cancelled: by the caller, or by a sibling on the target
	remoteKinds
)

// crossOp is one call of a stress or fuzz run.
type crossOp struct {
	from, to     int
	kind         int
	callback     bool // CallFuncOn (value, error and panic kinds only)
	yields       int  // the remote's yields before it answers
	cancelCaller int  // > 0: the caller's task is cancelled after that many yields
}

// crossOutcome tallies how calls ended.
type crossOutcome struct {
	closing bool // the group is closed mid-run: Runner.Close cancels tasks (no message)
	mu      sync.Mutex
	counts  map[string]int
	bad     []string
}

func (o *crossOutcome) add(op crossOp, v int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var pe *PanicError
	var ce *CancelledError
	what := ""
	switch {
	case errors.As(err, &ce) && ce.Msg == "caller":
		what = "cancelled by the caller"
	case op.kind == remoteValue && err == nil && v == 42:
		what = "value"
	case op.kind == remoteError && errors.Is(err, errRemote):
		what = "error"
	case op.kind == remotePanic && errors.As(err, &pe):
		what = "panic"
	case op.kind == remoteSelfCancel && errors.As(err, &ce) && ce.Msg == "self":
		what = "remote self-cancel"
	case op.kind == remoteForever && errors.As(err, &ce) && ce.Msg == "target side":
		what = "cancelled on the target"
	case errors.Is(err, ErrLoopClosed) || errors.Is(err, ErrGroupCancelled):
		what = "loop closed"
	case o.closing && errors.As(err, &ce) && ce.Msg == "":
		what = "cancelled by Close"
	default:
		o.bad = append(o.bad, fmt.Sprintf("%+v: got %d, %s", op, v, describe(err)))
		return
	}
	o.counts[what]++
}

// runCrossOps runs ops on a group of n loops: each loop's main runs the
// ops whose from is its index, each in a task of its own, then waits until
// every loop is done (its loop keeps serving the others meanwhile). With
// closeAfter >= 0 the group is closed from outside once closeAfter calls
// have started. It returns the outcomes and RunEach's error.
func runCrossOps(t testing.TB, n int, ops []crossOp, closeAfter int) (*crossOutcome, error) {
	g := NewLoopGroup(WithLoops(n))
	out := &crossOutcome{counts: map[string]int{}}
	allDone := make([]*Future[struct{}], n)
	for i := range allDone {
		allDone[i] = NewFuture[struct{}](g.Loop(i))
	}
	var left atomic.Int32
	left.Store(int32(n))
	var started atomic.Int32
	startedEnough := make(chan struct{})
	var once sync.Once
	if closeAfter < 0 || closeAfter >= len(ops) {
		closeAfter = -1
	}
	out.closing = closeAfter >= 0
	remote := func(op crossOp) func(*T) (int, error) {
		return func(rt *T) (int, error) {
			if int(started.Add(1)) == closeAfter+1 {
				once.Do(func() { close(startedEnough) })
			}
			for range op.yields {
				if err := Sleep(rt, 0); err != nil {
					return 0, err
				}
			}
			switch op.kind {
			case remoteError:
				return 0, errRemote
			case remotePanic:
				panic("remote panic")
			case remoteSelfCancel:
				return 0, &CancelledError{Msg: "self"}
			case remoteForever:
				if op.cancelCaller == 0 { // nobody on the caller's side will: a sibling on the target does
					//asynciovet:ignore unawaitedtask the sibling that cancels the remote task ends with it; the test checks the remote's outcome
					CreateTask(rt, func(st *T) (struct{}, error) {
						for range op.yields + 1 {
							if err := Sleep(st, 0); err != nil {
								return struct{}{}, err
							}
						}
						rt.Cancel("target side")
						return struct{}{}, nil
					})
				}
				return NewFuture[int](rt).Await(rt)
			}
			return 42, nil
		}
	}
	type result struct{ err error }
	res := make(chan result, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			var tasks []*Task[struct{}]
			for _, op := range ops {
				if op.from != i {
					continue
				}
				target := g.Loop(op.to)
				caller := CreateTask(tk, func(ct *T) (struct{}, error) {
					var v int
					var err error
					if op.callback && op.kind <= remotePanic {
						v, err = CallFuncOn(ct, target, func() (int, error) {
							r, err := remote(crossOp{kind: op.kind})(nil)
							return r, err
						})
					} else {
						v, err = CallOn(ct, target, remote(op))
					}
					out.add(op, v, err)
					return struct{}{}, nil
				})
				tasks = append(tasks, caller)
				if op.cancelCaller > 0 {
					//asynciovet:ignore unawaitedtask the canceller task only cancels the caller, whose outcome the test checks
					CreateTask(tk, func(kt *T) (struct{}, error) {
						for range op.cancelCaller {
							if err := Sleep(kt, 0); err != nil {
								return struct{}{}, err
							}
						}
						caller.Cancel("caller")
						return struct{}{}, nil
					})
				}
			}
			for _, c := range tasks {
				if _, err := c.Await(tk); err != nil && !IsCancelled(err) {
					return 0, err
				}
			}
			if left.Add(-1) == 0 {
				for j := range n {
					f := allDone[j]
					_, _ = g.Loop(j).CallSoonThreadsafe(func() { _ = f.SetResult(struct{}{}) })
				}
			}
			_, err := allDone[i].Await(tk)
			return 0, err
		})
		res <- result{err}
	}()
	if closeAfter >= 0 {
		select {
		case <-startedEnough:
			if err := g.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		case r := <-res:
			res <- r
		}
	}
	r := <-res
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, l := range g.Loops() {
		if n := l.external.Load(); n != 0 {
			t.Errorf("loop %d: outside work %d after Close", i, n)
		}
		if h := &l.grp.calls; h.next != nil && h.next != h {
			t.Errorf("loop %d: calls still listed after Close", i)
		}
	}
	return out, r.err
}

// randomCrossOps draws n ops over loops loops.
func randomCrossOps(rng *rand.Rand, n, loops int) []crossOp {
	ops := make([]crossOp, n)
	for k := range ops {
		from := rng.Intn(loops)
		to := (from + 1 + rng.Intn(loops-1)) % loops
		op := crossOp{from: from, to: to, kind: rng.Intn(remoteKinds), callback: rng.Intn(4) == 0, yields: rng.Intn(4)}
		if rng.Intn(3) == 0 {
			op.cancelCaller = 1 + rng.Intn(6)
		}
		ops[k] = op
	}
	return ops
}

func TestCrossLoop_StressThousandsOfCallsWithCancellationFromBothSides(t *testing.T) {
	const calls = 3000
	ops := randomCrossOps(rand.New(rand.NewSource(18)), calls, 3)
	out, err := runCrossOps(t, 3, ops, -1)
	if err != nil {
		t.Fatalf("RunEach: %v", err)
	}
	total := 0
	for _, c := range out.counts {
		total += c
	}
	if len(out.bad) > 0 || total != calls {
		t.Fatalf("%d calls ended, want %d; unexpected outcomes (first 5): %q", total, calls, out.bad[:min(5, len(out.bad))])
	}
	// Every path was taken.
	for _, what := range []string{"value", "error", "panic", "remote self-cancel", "cancelled by the caller", "cancelled on the target"} {
		if out.counts[what] == 0 {
			t.Errorf("no call ended as %q: %v", what, out.counts)
		}
	}
	t.Logf("%d calls: %v", calls, out.counts)
}

// FuzzCrossLoop: each byte pair is one call (from/to, kind, callback,
// yields, caller cancellation); the first byte says whether the group is
// closed from outside mid-run, and after how many calls have started.
// Whatever the interleaving: every call that ends, ends with an outcome
// its kind allows; RunEach returns; Close leaves no outside work, no call
// listed and (goleak, TestMain) no goroutine.
func FuzzCrossLoop(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0x10, 0x22, 0x33, 0x44, 0x05})
	f.Add([]byte{0x83, 0x04, 0x84, 0x14, 0x94, 0x24, 0xa4})
	f.Add([]byte{0x81, 0x40, 0x41, 0x42, 0x43})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 || len(data) > 81 {
			return
		}
		closeAfter := -1
		if data[0]&0x80 != 0 {
			closeAfter = int(data[0] & 0x0f)
		}
		var ops []crossOp
		for k := 1; k+1 < len(data); k += 2 {
			a, b := data[k], data[k+1]
			op := crossOp{from: int(a & 1), kind: int(a>>1) % remoteKinds, callback: a&0x80 != 0, yields: int(b & 3)}
			op.to = 1 - op.from
			if c := int(b>>2) & 7; c != 0 {
				op.cancelCaller = c
			}
			ops = append(ops, op)
		}
		out, err := runCrossOps(t, 2, ops, closeAfter)
		if err != nil && closeAfter < 0 {
			t.Fatalf("RunEach: %v", err)
		}
		if len(out.bad) > 0 {
			t.Fatalf("unexpected outcomes: %q", out.bad)
		}
	})
}
