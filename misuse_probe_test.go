//asynciovet:file-ignore droppedcancel every dropped error here belongs to a call that must panic before it returns (the misuse under test); misusePanic checks the panic

package asyncio

// Hostile probe h33: bad input and misuse across the exported API. Each
// misuse must get a clear error naming it (a *ValueError for an argument
// or a value not made by its constructor, a *RuntimeError for a misuse
// of the loop, as asyncio raises), before any state changes. The cases
// marked "defect" failed before the fix next to them (CHANGELOG, h33);
// the others held and stay as regression tests.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio/internal/misusetest"
)

// The probe's two checks (internal/misusetest).
var (
	misusePanic = misusetest.Panic
	misuseErr   = misusetest.Err
)

// unchanged fails the test if state() after differs from before.
func unchanged(t *testing.T, name, before, after string) {
	t.Helper()
	if before != after {
		t.Errorf("%s: state changed by the refused call: %s -> %s", name, before, after)
	}
}

// Values not made by their constructor (defects: each was a nil-pointer
// dereference, an index out of range, a close of a nil channel, a wait
// for ever, or a misleading message; a zero Queue's Shutdown and a zero
// Barrier's Abort changed their state before crashing).
func TestMisuseZeroValuesAreValueErrors(t *testing.T) {
	var ve *ValueError
	runVirtual(t, func(tk *T) error {
		qState := func(q *Queue[int]) func() string {
			return func() string { return fmt.Sprint(q.isShutdown, q.unfinished, q.getters.len(), q.putters.len()) }
		}
		for _, c := range []struct {
			name string
			call func(q *Queue[int])
		}{
			{"Put", func(q *Queue[int]) { _ = q.Put(tk, 1) }},
			{"PutNowait", func(q *Queue[int]) { _ = q.PutNowait(1) }},
			{"Get", func(q *Queue[int]) { _, _ = q.Get(tk) }},
			{"GetNowait", func(q *Queue[int]) { _, _ = q.GetNowait() }},
			{"TaskDone", func(q *Queue[int]) { _ = q.TaskDone() }},
			{"Join", func(q *Queue[int]) { _ = q.Join(tk) }},
			{"Shutdown", func(q *Queue[int]) { q.Shutdown(true) }},
			{"Len", func(q *Queue[int]) { _ = q.Len() }},
			{"Empty", func(q *Queue[int]) { _ = q.Empty() }},
			{"Full", func(q *Queue[int]) { _ = q.Full() }},
			{"Items", func(q *Queue[int]) { _ = q.Items(tk) }},
		} {
			var q Queue[int]
			before := qState(&q)()
			misusePanic(t, "zero Queue."+c.name, "Queue."+c.name+": zero Queue", &ve, func() { c.call(&q) })
			unchanged(t, "zero Queue."+c.name, before, qState(&q)())
		}
		var q Queue[int]
		if s := q.String(); !strings.Contains(s, "zero Queue") {
			t.Errorf("zero Queue String = %q", s)
		}

		for _, c := range []struct {
			name string
			call func(b *Barrier)
		}{
			{"Wait", func(b *Barrier) { _, _ = b.Wait(tk) }},
			{"Reset", func(b *Barrier) { b.Reset() }},
			{"Abort", func(b *Barrier) { b.Abort() }},
		} {
			var b Barrier
			misusePanic(t, "zero Barrier."+c.name, "Barrier."+c.name+": zero Barrier", &ve, func() { c.call(&b) })
			if b.Broken() || b.state != barrierFilling || b.count != 0 {
				t.Errorf("zero Barrier.%s: state changed: %v", c.name, &b)
			}
		}

		var w LatencyWindow
		misusePanic(t, "zero LatencyWindow.Add", "zero LatencyWindow", &ve, func() { w.Add(time.Second) })
		if w.Len() != 0 {
			t.Errorf("zero LatencyWindow.Add: Len %d after the refused call", w.Len())
		}

		var lim Limiter
		misusePanic(t, "zero Limiter.Acquire", "Limiter.AcquireN: zero Limiter", &ve, func() { _ = lim.Acquire(tk) })
		misusePanic(t, "zero Limiter.TryAcquire", "Limiter.TryAcquire: zero Limiter", &ve, func() { _ = lim.TryAcquire(tk, 1) })
		if lim.binding.loop.Load() != nil || lim.Waiters() != 0 {
			t.Errorf("zero Limiter: bound or queued by the refused calls")
		}

		var f Future[int]
		misusePanic(t, "zero Future.SetResult", "Future.SetResult: no loop", &ve, func() { _ = f.SetResult(1) })
		misusePanic(t, "zero Future.SetException", "Future.SetException: no loop", &ve, func() { _ = f.SetException(errBoom) })
		misusePanic(t, "zero Future.Cancel", "Future.Cancel: no loop", &ve, func() { f.Cancel() })
		misusePanic(t, "zero Future.AddDoneCallback", "AddDoneCallback: no loop", &ve, func() { f.AddDoneCallback(func() {}) })
		misusePanic(t, "zero Future.Await", "Await: no loop", &ve, func() { _, _ = f.Await(tk) })
		misusePanic(t, "T.Await(zero Future)", "Await: no loop", &ve, func() { _ = tk.Await(&f) })
		if f.Done() || f.extras != nil || f.waiter != nil {
			t.Errorf("zero Future: changed by the refused calls: %v", &f)
		}
		var task Task[int]
		misusePanic(t, "zero Task.Cancel", "Task.Cancel: no loop", &ve, func() { task.Cancel() })
		misusePanic(t, "zero Task.Await", "Await: no loop", &ve, func() { _, _ = task.Await(tk) })
		if tk.Cancelling() != 0 || tk.stepErr != nil {
			t.Errorf("the awaiting task was changed by the refused awaits: cancelling %d, stepErr %v", tk.Cancelling(), tk.stepErr)
		}

		var cf ConcurrentFuture[int]
		misusePanic(t, "zero ConcurrentFuture.Cancel", "ConcurrentFuture.Cancel: zero ConcurrentFuture", &ve, func() { cf.Cancel() })
		misusePanic(t, "zero ConcurrentFuture.Result", "ConcurrentFuture.Result: zero ConcurrentFuture", &ve, func() { _, _ = cf.Result() })
		misusePanic(t, "zero ConcurrentFuture.Wait", "ConcurrentFuture.Wait: zero ConcurrentFuture", &ve, func() { _ = cf.Wait(context.Background()) })
		if cf.Cancelled() || cf.Done() { // Cancelled would block for ever had Cancel kept the mutex
			t.Errorf("zero ConcurrentFuture: changed by the refused Cancel")
		}

		misusePanic(t, "WithVarContext(zero VarContext)", "zero VarContext", &ve, func() { WithVarContext(&VarContext{}) })
		return nil
	})
}

// The zero Condition is asyncio.Condition(): it has a Lock of its own
// (defect: it dereferenced its nil lock).
func TestMisuseZeroConditionUsable(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		var c Condition
		waiter := startTask(tk, "waiter", func(t *T) error {
			return WithLock(t, &c, func() error {
				r.log("waiter waits (locked %v)", c.Locked())
				err := c.Wait(t)
				r.log("waiter woken: %v, locked %v", err, c.Locked())
				return err
			})
		})
		if err := Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		if err := c.Acquire(tk); err != nil {
			return err
		}
		if err := c.NotifyAll(); err != nil {
			return err
		}
		if err := c.Release(); err != nil {
			return err
		}
		_, err := waiter.Await(tk)
		return err
	})
	checkEvents(t, []string{"waiter waits (locked true)", "waiter woken: <nil>, locked true"}, &r)
}

// Nil options (defect: a nil-pointer dereference inside CreateTask,
// NewLoop and NewLoopGroup; a nil loop option given to NewRunner crashed
// only at its first RunWith).
func TestMisuseNilOptionsAreValueErrors(t *testing.T) {
	var ve *ValueError
	misusePanic(t, "NewLoop(nil)", "NewLoop: nil LoopOption at index 1", &ve, func() { NewLoop(WithVirtualTime(), nil) })
	misusePanic(t, "NewRunner(nil)", "NewRunner: nil LoopOption at index 0", &ve, func() { NewRunner(nil) })
	misusePanic(t, "NewLoopGroup(nil)", "NewLoopGroup: nil GroupOption at index 0", &ve, func() { NewLoopGroup(nil) })
	misusePanic(t, "NewLoopGroup(WithGroupLoopOptions(nil))", "WithGroupLoopOptions: nil LoopOption at index 0", &ve,
		func() { NewLoopGroup(WithLoops(1), WithGroupLoopOptions(nil)) })
	runVirtual(t, func(tk *T) error {
		before := len(AllTasks(tk))
		misusePanic(t, "CreateTask(..., nil)", "CreateTask: nil TaskOption at index 1", &ve, func() {
			//asynciovet:ignore unawaitedtask CreateTask must panic here (misuse under test): no task is created
			CreateTask(tk, func(*T) (int, error) { return 1, nil }, WithName("x"), nil)
		})
		if n := len(AllTasks(tk)); n != before {
			t.Errorf("CreateTask(nil option): %d tasks listed, %d before", n, before)
		}
		return nil
	})
}

// A zero Loop (&Loop{}) is not a loop (defect: CallSoon queued on it,
// RunForever said it was made in a testing/synctest bubble).
func TestMisuseZeroLoop(t *testing.T) {
	var ve *ValueError
	l := &Loop{}
	misusePanic(t, "zero Loop.CallSoon", "zero Loop", &ve, func() { l.CallSoon(func() {}) })
	misusePanic(t, "zero Loop.CallLater", "zero Loop", &ve, func() { l.CallLater(time.Second, func() {}) })
	misusePanic(t, "CreateTask(zero Loop)", "zero Loop", &ve, func() {
		//asynciovet:ignore unawaitedtask CreateTask must panic here (misuse under test): no task is created
		CreateTask(l, func(*T) (int, error) { return 1, nil })
	})
	_, err := l.CallSoonThreadsafe(func() {})
	misuseErr(t, "zero Loop.CallSoonThreadsafe", "zero Loop", &ve, err)
	_, err = RunCoroutineThreadsafe(l, func(*T) (int, error) { return 1, nil }).Result()
	misuseErr(t, "RunCoroutineThreadsafe(zero Loop)", "zero Loop", &ve, err)
	if len(l.threadsafePending) != 0 {
		t.Errorf("zero Loop: %d callbacks queued by the refused threadsafe calls", len(l.threadsafePending))
	}
	misuseErr(t, "zero Loop.RunForever", "zero Loop", &ve, l.RunForever())
	misuseErr(t, "zero Loop.RunUntilComplete", "zero Loop", &ve, l.RunUntilComplete(doneFuture(NewTestLoop(), "x")))
	if l.ready.len() != 0 || len(l.tasks) != 0 || l.running.Load() {
		t.Errorf("zero Loop: changed by the refused calls")
	}
}

// Nil writers, graphs, runners and clauses (defects: nil-pointer
// dereferences; PrintCallGraph captured the graph first).
func TestMisuseNilArgumentsOfDiagnosticsAndRunners(t *testing.T) {
	var ve *ValueError
	misusePanic(t, "RunWith(nil Runner)", "RunWith: nil Runner", &ve, func() {
		_, _ = RunWith(nil, func(*T) (int, error) { return 1, nil })
	})
	misusePanic(t, "FormatCallGraph(nil)", "FormatCallGraph: nil graph", &ve, func() { _ = FormatCallGraph(nil) })
	l := NewTestLoop()
	defer mustClose(t, l)
	misusePanic(t, "WriteDump(nil)", "WriteDump: nil writer", &ve, func() { _ = l.WriteDump(nil, time.Second) })
	runVirtual(t, func(tk *T) error {
		misusePanic(t, "PrintCallGraph(nil)", "PrintCallGraph: nil writer", &ve, func() { _ = PrintCallGraph(nil, tk) })
		var ran bool
		good := ExceptIs(errBoom, func(*ExceptionGroup) error { ran = true; return nil })
		misusePanic(t, "ExceptStar(zero clause)", "ExceptStar: clause 1 is the zero ExceptClause", &ve, func() {
			_ = ExceptStar(errBoom, good, ExceptClause{})
		})
		misusePanic(t, "ExceptStar(nil err, zero clause)", "clause 0 is the zero ExceptClause", &ve, func() {
			_ = ExceptStar(nil, ExceptClause{})
		})
		if ran {
			t.Errorf("ExceptStar ran a handler before refusing the zero clause")
		}
		return nil
	})
}

// What held: bad values given to constructors and policies, nil
// arguments, and misuse of a loop, checked before anything changes.
func TestMisuseHeldRegression(t *testing.T) {
	var ve *ValueError
	var re *RuntimeError
	nan := func() float64 { var z float64; return z / z }()
	misusePanic(t, "NewLimiter(NaN)", "NewLimiter: rate must be a finite number", &ve, func() { NewLimiter(nan, 1) })
	misusePanic(t, "NewLimiter(burst 0)", "NewLimiter: burst must be > 0", &ve, func() { NewLimiter(1, 0) })
	misusePanic(t, "NewLatencyWindow(0)", "NewLatencyWindow: size must be > 0", &ve, func() { NewLatencyWindow(0) })
	misusePanic(t, "Percentile(NaN)", "p must be in (0, 100]", &ve, func() { NewLatencyWindow(1).Percentile(nan) })
	misusePanic(t, "NewCrossQueue(-1)", "NewCrossQueue: capacity -1", &ve, func() { NewCrossQueue[int](-1) })
	misusePanic(t, "NewBarrier(0)", "parties must be > 0", &ve, func() { NewBarrier(0) })
	misusePanic(t, "NewSemaphore(-1)", "Semaphore initial value must be >= 0", &ve, func() { NewSemaphore(-1) })
	misusePanic(t, "NewPriorityQueue(nil)", "nil less function", &ve, func() { NewPriorityQueue[int](0, nil) })
	misusePanic(t, "WithContext(nil)", "WithContext: nil context", &ve, func() {
		//lint:ignore SA1012 the nil context is the misuse under test
		WithContext(nil)
	})
	misusePanic(t, "WithLoops(0)", "WithLoops: 0 loops", &ve, func() { WithLoops(0) })
	misusePanic(t, "WithOutsideGrace(-1)", "negative grace period", &ve, func() { WithOutsideGrace(-1) })
	misusePanic(t, "Run(nil)", "RunWith: nil main function", &ve, func() { _, _ = Run[int](nil) })

	closed := NewTestLoop()
	mustClose(t, closed)
	misusePanic(t, "CallLater on a closed loop", "Event loop is closed", &re, func() { closed.CallLater(1, func() {}) })
	if _, err := closed.CallSoonThreadsafe(func() {}); !errors.Is(err, ErrLoopClosed) {
		t.Errorf("CallSoonThreadsafe on a closed loop: %v, want ErrLoopClosed", err)
	}
	misuseErr(t, "RunForever on a closed loop", "Event loop is closed", &re, closed.RunForever())
	if err := closed.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	a, b := NewTestLoop(), NewTestLoop()
	defer mustClose(t, a)
	defer mustClose(t, b)
	fa := NewFuture[int](a)
	misuseErr(t, "RunUntilComplete(another loop's future)", "belongs to a different loop", &ve, b.RunUntilComplete(fa))
	if fa.extras != nil || fa.waiter != nil {
		t.Errorf("RunUntilComplete(another loop's future) left a callback on it")
	}

	_, err := Run(func(tk *T) (int, error) {
		misusePanic(t, "Timeout(nil body)", "Timeout: nil body", &ve, func() { _ = Timeout(tk, time.Second, nil) })
		misusePanic(t, "GatherBounded(0)", "limit must be > 0", &ve, func() { _, _ = GatherBounded[int](tk, 0) })
		misusePanic(t, "Recv(nil)", "Recv: nil channel", &ve, func() { _, _, _ = Recv[int](tk, nil) })
		misusePanic(t, "Retry(NaN multiplier)", "Multiplier must be a finite number >= 1", &ve, func() {
			_, _ = Retry(tk, RetryPolicy{MaxAttempts: 2, Multiplier: nan}, func(*T, Attempt) (int, error) { return 1, nil })
		})
		misusePanic(t, "Hedge(NaN percentile)", "Percentile must be in (0, 100]", &ve, func() {
			_, _ = Hedge(tk, HedgePolicy{Percentile: nan, Window: NewLatencyWindow(2)}, func(*T, int) (int, error) { return 1, nil })
		})
		misusePanic(t, "T.Await(nil)", "T.Await: nil awaitable", &ve, func() { _ = tk.Await(nil) })
		before := len(AllTasks(tk))
		misuseErr(t, "RunUntilComplete inside a task", "already running", &re, LoopOf(tk).RunUntilComplete(doneFuture(tk, "x")))
		misuseErr(t, "Close inside a task", "Cannot close a running event loop", &re, LoopOf(tk).Close())
		_, err := Run(func(*T) (int, error) { return 1, nil })
		misuseErr(t, "Run inside Run", "cannot be called from a running event loop", &re, err)
		if n := len(AllTasks(tk)); n != before {
			t.Errorf("refused nested runs changed the task list: %d -> %d", before, n)
		}
		cv, other := NewContextVar("a", 1), NewContextVar("b", 1)
		tok := cv.Set(tk, 2)
		misuseErr(t, "Reset(another var's token)", "Token was created by a different ContextVar", &ve, other.Reset(tk, tok))
		if got := cv.Get(tk); got != 2 {
			t.Errorf("a refused Reset changed the variable: %d", got)
		}
		if err := cv.Reset(tk, tok); err != nil {
			return 0, err
		}
		misuseErr(t, "Reset twice", "Token has already been used once", &re, cv.Reset(tk, tok))
		var buf bytes.Buffer
		if err := PrintCallGraph(&buf, tk); err != nil || !strings.Contains(buf.String(), "Task(") {
			t.Errorf("PrintCallGraph: %v %q", err, buf.String())
		}
		return 0, nil
	}, WithVirtualTime())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// The non-awaiting methods of a primitive a task has waited on, called
// from a goroutine not running its loop, panic before they change it
// (defect: they changed it, then the wake-up's Future.SetResult panicked:
// a Lock was left unlocked with its waiter asleep, an Event set, a
// Semaphore's value taken, a Queue's item stored and counted, a Barrier
// broken). Debug mode, so that the check holds on every architecture.
func TestMisuseWakeFromAnotherGoroutineChangesNothing(t *testing.T) {
	var re *RuntimeError
	_, err := Run(func(tk *T) (struct{}, error) {
		ev, q, jq, lk := NewEvent(), NewQueue[int](1), NewQueue[int](0), NewLock()
		sem, bsem, cond, bar := NewSemaphore(0), NewBoundedSemaphore(1), NewCondition(nil), NewBarrier(2)
		if err := lk.Acquire(tk); err != nil {
			return struct{}{}, err
		}
		if err := bsem.Acquire(tk); err != nil {
			return struct{}{}, err
		}
		if err := jq.PutNowait(1); err != nil {
			return struct{}{}, err
		}
		var waiters []*Task[struct{}]
		for _, w := range []func(t *T) error{
			ev.Wait,
			func(t *T) error { _, err := q.Get(t); return err },
			jq.Join,
			lk.Acquire,
			sem.Acquire,
			bsem.Acquire,
			func(t *T) error { return WithLock(t, cond, func() error { return cond.Wait(t) }) },
			func(t *T) error { _, err := bar.Wait(t); return err },
		} {
			waiters = append(waiters, startTask(tk, "waiter", w))
		}
		if err := Sleep(tk, time.Millisecond); err != nil {
			return struct{}{}, err
		}
		state := func() string {
			return fmt.Sprint(ev.IsSet(), ev.waiters.len(), q.Len(), q.unfinished, q.isShutdown, jq.unfinished,
				lk.Locked(), lk.waiters.len(), sem.value, bsem.sem.value, cond.waiters.len(), bar.state, bar.count)
		}
		before := state()
		for _, c := range []struct {
			op   string
			call func()
		}{
			{"Event.Set", ev.Set},
			{"Event.Clear", ev.Clear},
			{"Queue.PutNowait", func() { _ = q.PutNowait(2) }},
			{"Queue.GetNowait", func() { _, _ = q.GetNowait() }},
			{"Queue.TaskDone", func() { _ = jq.TaskDone() }},
			{"Queue.Shutdown", func() { q.Shutdown(true) }},
			{"Lock.Release", func() { _ = lk.Release() }},
			{"Semaphore.Release", func() { _ = sem.Release() }},
			{"BoundedSemaphore.Release", func() { _ = bsem.Release() }},
			{"Condition.Notify", func() { _ = cond.Notify(1) }},
			{"Barrier.Reset", bar.Reset},
			{"Barrier.Abort", bar.Abort},
		} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				misusePanic(t, c.op+" from another goroutine", c.op+" called from a goroutine that is not running the loop", &re, c.call)
			}()
			//asynciovet:ignore blockingcall the loop must stay held while the other goroutine makes the refused call, so that the call is the foreign one under test
			<-done
			unchanged(t, c.op+" from another goroutine", before, state())
		}
		for _, w := range waiters {
			w.Cancel()
		}
		if err := lk.Release(); err != nil {
			return struct{}{}, err
		}
		for _, w := range waiters {
			if _, err := w.Await(tk); !IsCancelled(err) {
				t.Errorf("waiter: %v, want the cancellation", err)
			}
		}
		return struct{}{}, nil
	}, WithVirtualTime(), WithDebug())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// Wait and AsCompleted refuse an awaitable of another loop, with the
// *ValueError asyncio's as_completed and gather raise, before anything is
// registered (defect: Wait and AsCompleted registered a done callback on
// the other loop's future from this one and waited for ever, or until
// their timeout; Gather and AsCompletedFuncs already refused it).
func TestMisuseWaitOnAnotherLoopsFuture(t *testing.T) {
	var ve *ValueError
	other := NewTestLoop()
	defer mustClose(t, other)
	fo := NewFuture[int](other)
	runVirtual(t, func(tk *T) error {
		mine := NewFuture[int](tk)
		_, _, err := Wait(tk, []*Future[int]{mine, fo}, Never, FirstCompleted)
		misuseErr(t, "Wait(another loop's future)", "The future belongs to a different loop", &ve, err)
		misusePanic(t, "AsCompleted(another loop's future)", "The future belongs to a different loop", &ve, func() {
			_ = AsCompleted(tk, []*Future[int]{mine, fo}, Never)
		})
		misusePanic(t, "Gather(another loop's future)", "The future belongs to a different loop", &ve, func() {
			_ = Gather[int](tk, mine, fo)
		})
		misusePanic(t, "AsCompletedFuncs(another loop's future)", "AsCompletedFuncs: an awaitable of another loop", &ve, func() {
			_ = AsCompletedFuncs[int](tk, []AwaitableOf[int]{mine, fo}, Never)
		})
		for _, f := range []*Future[int]{mine, fo} {
			if f.extras != nil || f.waiter != nil {
				t.Errorf("%v: a callback was registered by the refused calls", f)
			}
		}
		return nil
	})
}
