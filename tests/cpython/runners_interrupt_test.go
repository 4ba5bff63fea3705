//go:build unix

package cpython

// test_runners.py's Ctrl-C tests (RUN-4): interrupt_self is SIGINT sent to
// the test process while RunWith watches it; KeyboardInterrupt out of
// runner.run is asyncio.ErrInterrupted. The signal is raised from a loop
// callback at once (CPython's call_later(0.1) only lets the main task
// reach its await first: the interrupt arrives through the signal
// watcher's goroutine, after the callback), on a real-clock loop, which
// waits for the arrival however long it takes.

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// interruptSelf is test_runners' interrupt_self: raise SIGINT.
func interruptSelf(t *testing.T) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Error(err)
	}
}

// sigintAtDefault catches SIGINT for the test on a channel of its own,
// which also un-ignores it if the binary inherited SIG_IGN (a background
// job): the Runner only watches a SIGINT that is not ignored. The Runner
// stops watching when RunWith returns, which can be before the signal
// arrives (Go delivers it asynchronously); the cleanup waits until the
// test's channel has it, so it never meets the default action.
func sigintAtDefault(t *testing.T) {
	keep := make(chan os.Signal, 1)
	signal.Notify(keep, os.Interrupt)
	t.Cleanup(func() {
		select {
		case <-keep:
		case <-time.After(time.Minute): // a bound, not a timing
			t.Error("the SIGINT never arrived")
		}
		signal.Stop(keep)
	})
}

func TestRunners_test_interrupt_call_soon(t *testing.T) {
	// The only case when the task is not suspended waiting on a future or
	// another task: it loops on sleep(0).
	sigintAtDefault(t)
	r := asyncio.NewRunner()
	defer r.Close()
	r.Loop().CallSoon(func() { interruptSelf(t) })
	_, err := asyncio.RunWith(r, func(tk *asyncio.T) (struct{}, error) {
		for {
			if err := asyncio.Sleep(tk, 0); err != nil {
				cancelled(t, err, "the loop of sleep(0) raises CancelledError")
				return struct{}{}, &asyncio.CancelledError{}
			}
		}
	})
	check(t, errors.Is(err, asyncio.ErrInterrupted), "KeyboardInterrupt:", err)
}

func TestRunners_test_interrupt_wait(t *testing.T) {
	// Interrupting while waiting on a future cancels both the future and
	// the main task.
	sigintAtDefault(t)
	r := asyncio.NewRunner()
	defer r.Close()
	fut := asyncio.NewFuture[struct{}](r.Loop())
	r.Loop().CallSoon(func() { interruptSelf(t) })
	_, err := asyncio.RunWith(r, func(tk *asyncio.T) (struct{}, error) {
		_, err := fut.Await(tk)
		cancelled(t, err, "await fut raises CancelledError")
		return struct{}{}, &asyncio.CancelledError{}
	})
	check(t, errors.Is(err, asyncio.ErrInterrupted), "KeyboardInterrupt:", err)
	check(t, fut.Cancelled(), "fut.cancelled()")
}

func TestRunners_test_interrupt_cancelled_task(t *testing.T) {
	// Interrupting a main task cancelled already does not raise
	// KeyboardInterrupt: run() raises the CancelledError.
	//
	// CPython's handler runs inside interrupt_self, so the interrupt
	// finds main pending with one request and adds a second. Go delivers
	// the signal later, through the watcher's goroutine; a SIGINT that
	// arrives once main is done is a late Ctrl-C, which rightly raises
	// KeyboardInterrupt. So main ends only once the interrupt's request
	// has reached it (Cancelling() == 2), an explicit signal, not a
	// timing; the deadline only bounds a signal that never comes.
	sigintAtDefault(t)
	r := asyncio.NewRunner()
	defer r.Close()
	_, err := asyncio.RunWith(r, func(tk *asyncio.T) (struct{}, error) {
		main := asyncio.CurrentTask(tk)
		asyncio.CreateTask(tk, fn0(func(st *asyncio.T) error {
			if err := asyncio.Sleep(st, 0); err != nil {
				return err
			}
			main.Cancel()
			interruptSelf(t)
			return nil
		}))
		err := asyncio.Sleep(tk, 10_000*ms)
		cancelled(t, err, "await sleep(10) raises CancelledError")
		bound := time.Now().Add(time.Minute)
		for main.Cancelling() < 2 && time.Now().Before(bound) {
			_ = asyncio.Sleep(tk, 0) // let the loop take the interrupt
		}
		check(t, main.Cancelling() == 2, "the interrupt cancelled main a second time:", main.Cancelling())
		return struct{}{}, err
	})
	cancelled(t, err, "run() raises CancelledError")
	check(t, !errors.Is(err, asyncio.ErrInterrupted), "not KeyboardInterrupt:", err)
}
