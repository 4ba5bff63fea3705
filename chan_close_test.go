package asyncio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// A Recv whose helper took a value after the loop stopped, before Close:
// the value is the task's. Close unwinds the task, and its Recv returns
// the value (the receive happened), and the task is unwound (its deferred
// calls run) at its next await.
func TestChanRecvTakenBeforeCloseIsReturned(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {}) // "destroyed but pending" is expected
	ch := make(chan int)
	var got []string
	CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
		defer func() { got = append(got, "unwound") }()
		v, ok, err := Recv(tk, ch)
		got = append(got, describeRecv(v, ok, err))
		err = Sleep(tk, 0)
		got = append(got, "after the next await: "+describe(err))
		return v, err
	})
	mustRunOnce(t, l) // the task waits in Recv; the loop stops
	ch <- 42          // the helper takes it; its answer cannot run now
	mustClose(t, l)
	want := []string{"recv 42 true <nil>", "unwound"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A Send whose value a receiver took after the loop stopped, before
// Close: Send reports it sent.
func TestChanSendTakenBeforeCloseIsReportedSent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	ch := make(chan int)
	got := errors.New("Send did not return")
	CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
		got = Send(tk, ch, 7)
		return 0, got
	})
	mustRunOnce(t, l)
	if v := <-ch; v != 7 {
		t.Fatalf("received %d", v)
	}
	mustClose(t, l)
	if got != nil {
		t.Errorf("Send = %v, want nil: the value was received", got)
	}
}

// mustRunOnce runs l until the tasks created so far have started and
// suspended (a task that yields once finishes after them).
func mustRunOnce(t *testing.T, l *Loop) {
	t.Helper()
	if err := l.RunUntilComplete(CreateTask(l, func(tk *T) (int, error) { return 0, Sleep(tk, 0) })); err != nil {
		t.Fatal(err)
	}
}

func describeRecv(v int, ok bool, err error) string {
	return fmt.Sprintf("recv %d %v %s", v, ok, describe(err))
}

// awaitQueuedThreadsafe waits until a CallSoonThreadsafe callback is
// queued on l (a stopped loop): an outside operation's answer is on its way.
func awaitQueuedThreadsafe(l *Loop) {
	for {
		l.threadsafeMu.Lock()
		n := len(l.threadsafePending)
		l.threadsafeMu.Unlock()
		if n > 0 {
			return
		}
		runtime.Gosched()
	}
}

// A Go call, a ToThread job and a RunInExecutorOn job that returned after
// the loop stopped, before Close: their effect happened, so the await of
// the task Close unwinds returns the outcome; the unwinding comes at the
// task's next await.
func TestOutsideOutcomeBeforeCloseIsReturned(t *testing.T) {
	for _, form := range []string{"Go", "ToThread", "RunInExecutorOn"} {
		t.Run(form, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			l := NewTestLoop()
			l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
			release := make(chan struct{})
			fn := func(context.Context) (int, error) { <-release; return 42, nil }
			ex := goExecutor{}
			var got []string
			CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
				defer func() { got = append(got, "unwound") }()
				var v int
				var err error
				switch form {
				case "Go":
					v, err = Go(tk, fn)
				case "ToThread":
					v, err = ToThread(tk, fn)
				default:
					v, err = RunInExecutorOn(tk, ex, fn).Await(tk)
				}
				got = append(got, fmt.Sprintf("%d %s", v, describe(err)))
				err = Sleep(tk, 0)
				got = append(got, "after the next await: "+describe(err))
				return v, err
			})
			mustRunOnce(t, l)
			close(release)
			awaitQueuedThreadsafe(l)
			mustClose(t, l)
			want := []string{"42 <nil>", "unwound"}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// A cross-loop call that ended on its target after the calling loop
// stopped, before that loop's Close: the task Close unwinds gets the
// outcome (the remote effect happened), and is unwound at its next await.
func TestCrossCallOutcomeBeforeCloseIsReturned(t *testing.T) {
	for _, form := range []string{"CallOn", "CallFuncOn"} {
		t.Run(form, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			b := NewLoop()
			bDone := make(chan error, 1)
			go func() { bDone <- b.RunForever() }()
			a := NewTestLoop()
			a.SetExceptionHandler(func(*Loop, ExceptionContext) {})
			release := make(chan struct{})
			var got []string
			CreateTask(a, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
				defer func() { got = append(got, "unwound") }()
				var v int
				var err error
				if form == "CallOn" {
					v, err = CallOn(tk, b, func(rt *T) (int, error) {
						_, _, err := Recv(rt, release)
						return 42, err
					})
				} else {
					v, err = CallFuncOn(tk, b, func() (int, error) {
						<-release //asynciovet:ignore blockingcall holds b until a has stopped: the outcome must come back to a stopped loop
						return 42, nil
					})
				}
				got = append(got, fmt.Sprintf("%d %s", v, describe(err)))
				err = Sleep(tk, 0)
				got = append(got, "after the next await: "+describe(err))
				return v, err
			})
			mustRunOnce(t, a)
			close(release)
			awaitQueuedThreadsafe(a) // the outcome is on its way back
			mustClose(t, a)
			want := []string{"42 <nil>", "unwound"}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("got %q, want %q", got, want)
			}
			_, _ = b.CallSoonThreadsafe(b.Stop)
			if err := <-bDone; err != nil {
				t.Error(err)
			}
			mustClose(t, b)
		})
	}
}

// A task that ignores the errors of its awaits (a ported `except
// Exception: continue`) still ends at Close after its await returned a
// value taken before: the next await unwinds it instead of returning a
// CancelledError it would ignore for ever.
func TestChanRecvTakenBeforeCloseThenALoopIgnoringErrorsEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	ch := make(chan int)
	var got []int
	CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
		for {
			v, ok, err := Recv(tk, ch)
			if err != nil || !ok {
				continue //asynciovet:ignore droppedcancel the misuse under test: a loop that ignores every error
			}
			got = append(got, v)
		}
	})
	mustRunOnce(t, l)
	ch <- 42
	mustClose(t, l)
	if len(got) != 1 || got[0] != 42 {
		t.Errorf("got %v, want [42]", got)
	}
}
