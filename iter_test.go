package asyncio

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Items yields a queue's items in order, waiting for more, and ends
// without an error once the queue is shut down and empty.
func TestQueueItems_UntilShutdown(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[int](0)
		q.PutNowait(1)
		q.PutNowait(2)
		startTask(tk, "producer", func(tk *T) error {
			if err := Sleep(tk, time.Second); err != nil {
				return err
			}
			q.PutNowait(3)
			q.Shutdown(false)
			return nil
		})
		for v, err := range q.Items(tk) {
			if err != nil {
				return err
			}
			r.log("item %d", v)
		}
		r.log("range ended")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s item 1", "0s item 2", "1s item 3", "1s range ended"}, r)
}

// A cancellation while Items waits arrives as the sequence's error, once,
// and ends the range; the task ends cancelled when it returns it.
func TestQueueItems_CancellationIsTheSequencesError(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[string](0)
		q.PutNowait("a")
		worker := startTask(tk, "worker", func(tk *T) error {
			for v, err := range q.Items(tk) {
				if err != nil {
					r.log("error %s", describe(err))
					return err
				}
				r.log("item %s", v)
			}
			r.log("not reached")
			return nil
		})
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		worker.Cancel("stop")
		_, err := worker.Await(tk)
		r.log("worker: %s", describe(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s item a", `1s error CancelledError("stop")`, `1s worker: CancelledError("stop")`}, r)
}

// Breaking out of Items leaves the rest of the queue in place.
func TestQueueItems_Break(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		q := NewQueue[int](0)
		for i := range 3 {
			q.PutNowait(i)
		}
		for v, err := range q.Items(tk) {
			if err != nil || v == 1 {
				break
			}
		}
		if q.Len() != 1 {
			t.Errorf("left %d items, want 1", q.Len())
		}
		return nil
	})
}

// WithLock holds the lock (or semaphore, or condition) for the body and
// releases it however the body ends: a return, an error, a panic.
func TestWithLock_ReleasesHoweverTheBodyEnds(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		for _, lk := range []Locker{NewLock(), NewSemaphore(1), NewBoundedSemaphore(1), NewCondition(nil)} {
			err := WithLock(tk, lk, func() error {
				r.log("held: %v", lk.(interface{ Locked() bool }).Locked())
				return boom
			})
			r.log("after error: %v, locked: %v", errors.Is(err, boom), lk.(interface{ Locked() bool }).Locked())
		}
		lk := NewLock()
		func() {
			defer func() { r.log("recovered %v, locked: %v", recover(), lk.Locked()) }()
			//asynciovet:ignore droppedcancel the body panics: no error comes back, the recover is what the test checks
			WithLock(tk, lk, func() error { panic("in the body") })
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for range 4 {
		want = append(want, "0s held: true", "0s after error: true, locked: false")
	}
	want = append(want, "0s recovered in the body, locked: false")
	checkEvents(t, want, r)
}

// A task cancelled while WithLock waits for the lock gets the
// cancellation; its body never runs and the lock stays its holder's.
func TestWithLock_CancelledWhileAcquiring(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lk := NewLock()
		if err := lk.Acquire(tk); err != nil {
			return err
		}
		waiter := startTask(tk, "waiter", func(tk *T) error {
			return WithLock(tk, lk, func() error { r.log("body ran"); return nil })
		})
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		waiter.Cancel()
		_, err := waiter.Await(tk)
		r.log("waiter: %s, locked: %v", describe(err), lk.Locked())
		lk.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`1s waiter: CancelledError(""), locked: true`}, r)
}

// Releasing the lock inside the body is a programming error WithLock
// reports: the release's *RuntimeError.
func TestWithLock_BodyReleased(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		err := WithLock(tk, lk, lk.Release)
		if !errors.Is(err, ErrRuntime) {
			t.Errorf("err = %v, want the release's RuntimeError", err)
		}
		//asynciovet:ignore droppedcancel WithLock panics on the nil function before it acquires anything
		mustPanic(t, "nil function", func() { WithLock(tk, lk, nil) })

		// The release's error replaces the body's, as an exception raised
		// by __aexit__ replaces the one in flight: a failing body, and a
		// cancelled one (the task then fails instead of ending cancelled).
		err = WithLock(tk, lk, func() error {
			_ = lk.Release()
			return &ValueError{Msg: "body"}
		})
		if !errors.Is(err, ErrRuntime) || err.Error() != "Lock is not acquired." {
			t.Errorf("failing body: %v, want the release's RuntimeError", err)
		}
		bs := NewBoundedSemaphore(1)
		err = WithLock(tk, bs, func() error {
			_ = bs.Release()
			return &RuntimeError{Msg: "body"}
		})
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "BoundedSemaphore released too many times") {
			t.Errorf("bounded semaphore: %v, want the over-release ValueError", err)
		}
		task := CreateTaskErr(tk, func(ct *T) error {
			return WithLock(ct, lk, func() error {
				_ = lk.Release()
				ct.Cancel("in body")
				return Sleep(ct, 0)
			})
		})
		_, err = task.Await(tk)
		if !errors.Is(err, ErrRuntime) || task.Cancelled() {
			t.Errorf("cancelled body: %v (cancelled %v), want the task failed with the release's RuntimeError", err, task.Cancelled())
		}
		return nil
	})
}

// AsCompletedFuncs' calls take completions in order, whichever function
// is called; a call cancelled while waiting takes nothing, and the
// completion goes to the next call; an awaitable's error is its call's.
func TestAsCompletedFuncs_CompletionOrder(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		slow := CreateTask(tk, sleeper(r, "slow", 3*time.Second, 3))
		fast := CreateTask(tk, failer(r, "fast", time.Second, boom))
		mid := CreateTask(tk, sleeper(r, "mid", 2*time.Second, 2))
		fns := AsCompletedFuncs(tk, []AwaitableOf[int]{slow, fast, mid}, Never)
		waiter := CreateTask(tk, func(t *T) (int, error) { return fns[0](t) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		waiter.Cancel()
		_, err := waiter.Await(tk)
		r.log("cancelled call: %v", IsCancelled(err))
		for _, i := range []int{2, 1} {
			v, err := fns[i](tk)
			r.log("fns[%d]: %d %v", i, v, err)
		}
		mustPanic(t, "nil awaitable", func() { AsCompletedFuncs[int](tk, []AwaitableOf[int]{nil}, Never) })
		_, err = slow.Await(tk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s slow start", "0s fast start", "0s mid start",
		"0s cancelled call: true",
		"1s fast fails",
		"1s fns[2]: 0 boom",
		"2s mid done",
		"2s fns[1]: 2 <nil>",
		"3s slow done",
	}, r)
}

// as_completed(aws, timeout=1.5): the timer starts at the call; a
// completion before it is still handed out (here to a call made after
// the timer fired), every call for an awaitable pending then returns a
// *TimeoutError, and the awaitables are not cancelled. CPython 3.13 prints
// the same: 2.0 1 / 2.0 timeout / 2.0 timeout / 3 True False.
func TestAsCompletedFuncs_Timeout(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		a := CreateTask(tk, sleeper(r, "a", time.Second, 1))
		b := CreateTask(tk, sleeper(r, "b", 3*time.Second, 3))
		c := CreateTask(tk, sleeper(r, "c", 2*time.Second, 2))
		fns := AsCompletedFuncs(tk, []AwaitableOf[int]{a, b, c, a}, 1500*time.Millisecond)
		if err := Sleep(tk, 2*time.Second); err != nil {
			return err
		}
		for _, f := range fns {
			v, err := f(tk)
			var te *TimeoutError
			r.log("got %d timeout=%v", v, errors.As(err, &te))
		}
		v, err := b.Await(tk)
		r.log("b %d %v, c done %v, b cancelled %v", v, err, c.Done(), b.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s a start", "0s b start", "0s c start",
		"1s a done",
		"2s got 1 timeout=false", "2s got 0 timeout=true", "2s got 0 timeout=true",
		"2s c done", // its timer was set after main's Sleep's
		"3s b done", "3s b 3 <nil>, c done true, b cancelled false",
	}, r)
}

// as_completed(aws) makes one coroutine per distinct awaitable
// (set(aws)): a duplicate is handed out once.
func TestAsCompletedFuncs_DuplicatesCountOnce(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		a := CreateTask(tk, sleeper(r, "a", time.Second, 1))
		b := CreateTask(tk, sleeper(r, "b", 2*time.Second, 2))
		fns := AsCompletedFuncs(tk, []AwaitableOf[int]{a, b, a, a}, Never)
		r.log("functions: %d", len(fns))
		for _, f := range fns {
			v, err := f(tk)
			r.log("got %d %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s functions: 2", "0s a start", "0s b start",
		"1s a done", "1s got 1 <nil>",
		"2s b done", "2s got 2 <nil>",
	}, r)
}
