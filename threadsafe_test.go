package asyncio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A foreign goroutine's CallSoonThreadsafe must wake a loop that is blocked
// waiting for a far-away real timer (THREAD-1).
func TestTHREAD1_CallSoonThreadsafeWakesBlockedLoop(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	far := l.CallLater(time.Hour, r.logFn("far timer"))
	blocked := make(chan struct{})
	l.CallSoon(func() { close(blocked) })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-blocked
		waitUntilSleeping(l)
		l.CallSoonThreadsafe(func() { r.log("woken"); l.Stop() })
	}()
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	far.Cancel()
	if l.Time() > time.Minute {
		t.Errorf("loop woke after %v", l.Time())
	}
	checkEvents(t, []string{"woken"}, &r)
}

// A wake-up left in wakeCh (a waker that raced a timed wait's timeout
// leaves one, and the loop no longer relocks to say it is awake after a
// wake-up) only makes a later wait return early: the loop looks at its
// queues again and waits anew, and calls queued later still wake it.
func TestWaitWakeup_LeftoverWakeUpIsOnlySpurious(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	l.wakeCh <- struct{}{} // the leftover
	started := make(chan struct{})
	l.CallSoon(func() { close(started) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-started
		for i := range 3 {
			waitUntilSleeping(l)
			fired := make(chan struct{})
			l.CallSoonThreadsafe(func() { r.log("call %d", i); close(fired) })
			<-fired
		}
		l.CallSoonThreadsafe(l.Stop)
	}()
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	<-done
	checkEvents(t, []string{"call 0", "call 1", "call 2"}, &r)
}

// THREAD-4: run_coroutine_threadsafe from another goroutine: result, error,
// and cancellation of the task through the concurrent future.
func TestTHREAD4_RunCoroutineThreadsafe(t *testing.T) {
	l := NewLoop()
	loopDone := make(chan error)
	go func() { loopDone <- l.RunForever() }()

	ok := RunCoroutineThreadsafe(l, func(tk *T) (string, error) {
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		return "hi from " + tk.Name(), nil
	})
	v, err := ok.Result()
	if err != nil || !strings.HasPrefix(v, "hi from Task-") || !ok.Done() || ok.Cancelled() {
		t.Errorf("ok: %q %v", v, err)
	}
	bad := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { return 0, errors.New("bad") })
	if _, err := bad.Result(); err == nil || err.Error() != "bad" {
		t.Errorf("bad: %v", err)
	}

	entered, taskErr := make(chan struct{}), make(chan error, 1)
	slow := RunCoroutineThreadsafe(l, func(tk *T) (int, error) {
		close(entered)
		err := Sleep(tk, time.Hour)
		taskErr <- err
		return 0, err
	})
	<-entered
	if !slow.Cancel() {
		t.Error("Cancel of a pending future returned false")
	}
	if _, err := slow.Result(); !IsCancelled(err) {
		t.Errorf("cancelled: %v", err)
	}
	if err := <-taskErr; !IsCancelled(err) {
		t.Errorf("task saw %v, want a CancelledError", err)
	}
	if !slow.Cancel() || ok.Cancel() {
		t.Error("Cancel: want true on a cancelled future, false on a finished one")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ok.Wait(ctx); err != nil {
		t.Errorf("Wait on a done future: %v", err)
	}
	neverEnded := make(chan struct{})
	never := RunCoroutineThreadsafe(l, func(tk *T) (int, error) {
		defer close(neverEnded)
		return 0, Sleep(tk, time.Hour)
	})
	if err := never.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled ctx: %v", err)
	}
	never.Cancel() // possibly before the task exists: it is cancelled when created
	<-neverEnded

	_, _ = l.CallSoonThreadsafe(l.Stop)
	if err := <-loopDone; err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	closed := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { return 1, nil })
	if _, err := closed.Result(); !errors.Is(err, ErrLoopClosed) {
		t.Errorf("closed loop: %v", err)
	}
}

// THREAD-5: chaining copies the outcome only into a destination that is not
// cancelled. A cancelled concurrent future stays cancelled even if the task
// swallows the cancellation and returns a value.
func TestTHREAD5_CancelledDestinationIsNotOverwritten(t *testing.T) {
	l := NewLoop()
	loopDone := make(chan error)
	go func() { loopDone <- l.RunForever() }()

	entered, returned := make(chan struct{}), make(chan string, 1)
	cf := RunCoroutineThreadsafe(l, func(tk *T) (string, error) {
		close(entered)
		err := Sleep(tk, time.Hour)
		returned <- describe(err)
		return "swallowed", nil
	})
	<-entered
	cf.Cancel()
	if got := <-returned; got != `CancelledError("")` {
		t.Errorf("task saw %s", got)
	}
	if _, err := cf.Result(); !IsCancelled(err) || !cf.Cancelled() {
		t.Errorf("concurrent future: %v, want it to stay cancelled", err)
	}

	_, _ = l.CallSoonThreadsafe(l.Stop)
	if err := <-loopDone; err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
}

// Threadsafe: a goroutine that is not running the loop waits for a task
// with Wait(ctx) and reads its result; a future already done is copied at
// once; cancelling the ConcurrentFuture cancels the task (THREAD-5); a
// closed loop fails at once; a nil awaitable or a nil Wait context panics
// with a *ValueError.
func TestThreadsafeWaitFromForeignGoroutine(t *testing.T) {
	var r eventLog
	type views struct {
		task   *ConcurrentFuture[string]
		done   *ConcurrentFuture[string]
		cancel *ConcurrentFuture[int]
	}
	viewsCh := make(chan views)
	foreignDone := make(chan struct{})
	go func() {
		defer close(foreignDone)
		v := <-viewsCh
		err := v.task.Wait(context.Background())
		s, rerr := v.task.Result()
		r.log("foreign: wait %v, result %q %v", err, s, rerr)
		s, rerr = v.done.Result()
		r.log("foreign: done future %q %v", s, rerr)
		r.log("foreign: cancel %v", v.cancel.Cancel())
		ctx, stop := context.WithCancel(context.Background())
		stop()
		r.log("foreign: wait on a cancelled ctx of a done future: %v", v.done.Wait(ctx))
	}()
	_, err := Run(func(tk *T) (struct{}, error) {
		release := NewFuture[struct{}](tk)
		task := CreateTask(tk, func(x *T) (string, error) {
			if _, err := release.Await(x); err != nil {
				return "", err
			}
			return "task result", nil
		})
		victim := CreateTask(tk, func(x *T) (int, error) { return 0, Sleep(x, time.Hour) })
		v := views{task: Threadsafe[string](task), done: Threadsafe[string](doneFuture(tk, "ready")), cancel: Threadsafe[int](victim)}
		if err := Send(tk, viewsCh, v); err != nil {
			return struct{}{}, err
		}
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		release.SetResult(struct{}{})
		_, err := victim.Await(tk)
		r.log("victim: %s", describe(err))
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		_, _ = Go(tk, func(context.Context) (int, error) { <-foreignDone; return 0, nil })
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-foreignDone
	lines := r.snapshot()
	slices.Sort(lines) // the foreign goroutine and the loop log concurrently
	checkEvents(t, []string{
		`foreign: cancel true`,
		`foreign: done future "ready" <nil>`,
		`foreign: wait <nil>, result "task result" <nil>`,
		`foreign: wait on a cancelled ctx of a done future: <nil>`,
		`victim: CancelledError("")`,
	}, &eventLog{events: lines})

	l := NewTestLoop()
	f := NewFuture[int](l)
	mustClose(t, l)
	if _, err := Threadsafe[int](f).Result(); !errors.Is(err, ErrLoopClosed) {
		t.Errorf("closed loop: %v", err)
	}
	mustPanic(t, "Threadsafe(nil)", func() { Threadsafe[int](nil) })
	//lint:ignore SA1012 the test checks that a nil ctx panics
	mustPanic(t, "Wait(nil)", func() { newConcurrentFuture[int](l).Wait(nil) })
}

// A nil coroutine function is a programming error: it panics in the
// caller with a message naming it, instead of returning a future that
// never completes (issue 11, breakage 7).
func TestTHREAD4_NilCoroutinePanicsInCaller(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	defer func() {
		var ve *ValueError
		if r := recover(); r == nil || !errors.As(r.(error), &ve) || !strings.Contains(ve.Msg, "nil coroutine function") {
			t.Fatalf("recovered %v, want a *ValueError naming the nil coroutine function", r)
		}
		if l.threadsafeFlag.Load() {
			t.Error("something was scheduled")
		}
	}()
	RunCoroutineThreadsafe[int](l, nil)
}

// A loop that closes while a RunCoroutineThreadsafe task is pending, or
// while its creation is still queued, completes the ConcurrentFuture with
// an error wrapping ErrLoopClosed, after the task's deferred calls ran: a
// foreign goroutine waiting in Result must not wait forever (issue 11,
// breakage 7).
func TestTHREAD4_CloseCompletesPendingConcurrentFutures(t *testing.T) {
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var r eventLog
	pending := RunCoroutineThreadsafe(l, func(tk *T) (int, error) {
		defer r.log("pending task deferred")
		return 0, Sleep(tk, time.Hour)
	})
	runOne(t, l) // creates the task
	runOne(t, l) // its first step: it sleeps
	queued := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { r.log("queued task ran"); return 1, nil })
	results := make(chan string, 2)
	for name, cf := range map[string]*ConcurrentFuture[int]{"pending": pending, "queued": queued} {
		go func() {
			_, err := cf.Result()
			results <- fmt.Sprintf("%s: %v loop closed=%v", name, err, errors.Is(err, ErrLoopClosed))
		}()
	}
	mustClose(t, l)
	if !pending.Done() || !queued.Done() {
		t.Fatalf("after Close: pending done=%v, queued done=%v", pending.Done(), queued.Done())
	}
	got := []string{<-results, <-results}
	slices.Sort(got)
	checkLines(t, []string{
		"pending: Event loop is closed loop closed=true",
		"queued: Event loop is closed loop closed=true",
	}, got)
	checkEvents(t, []string{"pending task deferred"}, &r)
	if n := len(l.threadsafeFutures); n != 0 {
		t.Errorf("%d futures still tracked", n)
	}
	after := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { return 1, nil })
	if _, err := after.Result(); !errors.Is(err, ErrLoopClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// Completed and cancelled futures are forgotten at once: a long-lived loop
// does not accumulate them.
func TestTHREAD4_DoneConcurrentFuturesAreForgotten(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	done := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { return 1, nil })
	cancelled := RunCoroutineThreadsafe(l, func(tk *T) (int, error) { return 2, Sleep(tk, time.Hour) })
	cancelled.Cancel()
	l.CallLater(time.Second, l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if v, err := done.Result(); v != 1 || err != nil {
		t.Fatalf("done: %v %v", v, err)
	}
	if n := len(l.threadsafeFutures); n != 0 {
		t.Errorf("%d futures still tracked", n)
	}
}
