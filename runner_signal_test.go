//go:build unix

package asyncio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C as asyncio.Runner handles it (RUN-4). The tests send SIGINT to
// the test process only while RunWith watches it, so it never reaches the
// default action; what happens outside that window is checked in helper
// processes.

// sigintAtDefault makes sure SIGINT is not ignored during the test: a test
// binary started in the background by a shell inherits SIG_IGN, and Go
// cannot give an ignored signal its default back (signal.Reset leaves it
// ignored), but a channel of its own un-ignores it until signal.Stop.
func sigintAtDefault(t *testing.T) {
	if signal.Ignored(os.Interrupt) {
		keep := make(chan os.Signal, 1)
		signal.Notify(keep, os.Interrupt)
		t.Cleanup(func() { signal.Stop(keep) })
	}
}

// never returns a future nobody completes.
func never(tk *T) *Future[struct{}] { return NewFuture[struct{}](tk) }

func TestRUN4_FirstSIGINTCancelsMainAndRunSaysInterrupted(t *testing.T) {
	sigintAtDefault(t)
	var r eventLog
	v, err := Run(func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		r.log("main sees %s", describe(err))
		// Cleanup may await.
		r.log("cleanup sleep: %v", Sleep(tk, 0))
		return 1, err
	})
	r.log("Run: %d is(ErrInterrupted)=%v cancelled=%v", v, errors.Is(err, ErrInterrupted), IsCancelled(err))
	checkEvents(t, []string{
		`main sees CancelledError("")`,
		"cleanup sleep: <nil>",
		"Run: 0 is(ErrInterrupted)=true cancelled=false",
	}, &r)
}

// What main makes of the cancellation decides, as in asyncio: swallowed,
// Run returns main's result; another error is returned as it is; a
// cancellation main also asked for itself (Uncancel does not reach 0)
// stays a cancellation.
func TestRUN4_MainDecidesTheOutcome(t *testing.T) {
	sigintAtDefault(t)
	errOwn := errors.New("cleanup failed")
	for _, c := range []struct {
		name string
		main func(tk *T, err error) (int, error)
		want string
	}{
		{"swallows", func(tk *T, err error) (int, error) { return 42, nil }, "42 <nil>"},
		{"fails", func(tk *T, err error) (int, error) { return 0, errOwn }, "0 " + describe(errOwn)},
		{"cancelled twice", func(tk *T, err error) (int, error) {
			tk.Cancel("own")
			return 0, Sleep(tk, 0)
		}, `0 CancelledError("own")`},
	} {
		v, err := Run(func(tk *T) (int, error) {
			raise(t, syscall.SIGINT)
			_, err := never(tk).Await(tk)
			return c.main(tk, err)
		})
		if got := fmt.Sprintf("%d %s", v, describe(err)); got != c.want {
			t.Errorf("%s: Run = %s, want %s", c.name, got, c.want)
		}
	}
}

// A second SIGINT while main's cleanup runs stops waiting for it: RunWith
// returns ErrInterrupted at once (asyncio raises KeyboardInterrupt out of
// run_until_complete) and Close cancels main again and waits for it.
func TestRUN4_SecondSIGINTStopsWaiting(t *testing.T) {
	sigintAtDefault(t)
	var r eventLog
	rn := NewRunner()
	_, err := RunWith(rn, func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		r.log("main sees %s", describe(err))
		raise(t, syscall.SIGINT)
		_, err = never(tk).Await(tk) // a cleanup that hangs
		r.log("cleanup sees %s", describe(err))
		return 0, err
	})
	r.log("RunWith: is(ErrInterrupted)=%v", errors.Is(err, ErrInterrupted))
	r.log("Close: %v", rn.Close())
	checkEvents(t, []string{
		`main sees CancelledError("")`,
		"RunWith: is(ErrInterrupted)=true",
		`cleanup sees CancelledError("")`,
		"Close: <nil>",
	}, &r)
}

// A SIGINT handler of the loop's own takes SIGINT away from the Runner, as
// a handler installed with add_signal_handler does in asyncio: when it is
// there before RunWith, RunWith does not watch SIGINT at all; when it
// comes during RunWith, the Runner's watch steps aside.
func TestRUN4_LoopHandlerTakesSIGINT(t *testing.T) {
	sigintAtDefault(t)
	var r eventLog
	rn := NewRunner()
	defer rn.Close()
	handled := func(tk *T) *Future[struct{}] {
		f := NewFuture[struct{}](tk)
		if err := tk.Loop().AddSignalHandler(syscall.SIGINT, func() {
			r.log("loop handler ran")
			f.SetResult(struct{}{})
		}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	v, err := RunWith(rn, func(tk *T) (int, error) {
		f := handled(tk)
		r.log("runner watches SIGINT: %v", rn.interrupts.ch != nil)
		raise(t, syscall.SIGINT)
		_, err := f.Await(tk)
		return 1, err
	})
	r.log("first run: %d %v", v, err)
	v, err = RunWith(rn, func(tk *T) (int, error) {
		r.log("runner watches SIGINT: %v", rn.interrupts.ch != nil)
		raise(t, syscall.SIGINT)
		_, err := rn.Loop().signalHandlersFuture(tk).Await(tk)
		r.log("removed: %v", removeSignal(t, tk.Loop(), syscall.SIGINT))
		return 2, err
	})
	r.log("second run: %d %v", v, err)
	checkEvents(t, []string{
		"runner watches SIGINT: true",
		"loop handler ran",
		"first run: 1 <nil>",
		"runner watches SIGINT: false",
		"loop handler ran",
		"removed: true",
		"second run: 2 <nil>",
	}, &r)
}

// signalHandlersFuture replaces the SIGINT handler's function with one
// that logs nothing and completes the returned future (test helper for a
// handler registered in an earlier run).
func (l *Loop) signalHandlersFuture(tk *T) *Future[struct{}] {
	f := NewFuture[struct{}](tk)
	w := l.signals.handlers[syscall.SIGINT]
	old := w.fn
	w.fn = func() { old(); f.SetResult(struct{}{}) }
	return f
}

// A SIGINT that is ignored (a program started in the background, or after
// signal.Ignore) is not at its default disposition: RunWith leaves it
// alone. In a helper process, as an ignored signal stays ignored for the
// rest of the process.
func TestRUN4_IgnoredSIGINTIsNotWatched(t *testing.T) {
	out, err := runHelper("sigint-ignored")
	if err != nil || out != "watched: false\n" {
		t.Fatalf("%v, output %q; want SIGINT left alone", err, out)
	}
}

// interrupt is the hook any other source of interruption uses (a done
// context, say): the first one cancels main and its reason is what Run
// returns; later ones change nothing.
func TestRUN4_InterruptHookFirstReasonWins(t *testing.T) {
	errFirst, errSecond := errors.New("first reason"), errors.New("second reason")
	var r eventLog
	rn := NewRunner(WithVirtualTime())
	_, err := RunWith(rn, func(tk *T) (int, error) {
		tk.Loop().CallSoon(func() {
			rn.interrupts.interrupt(errFirst)
			rn.interrupts.interrupt(errSecond)
		})
		_, err := never(tk).Await(tk)
		r.log("main sees %s, cancelling %d", describe(err), tk.Cancelling())
		return 0, err
	})
	r.log("RunWith: %v", err)
	r.log("Close: %v", rn.Close())
	checkEvents(t, []string{`main sees CancelledError(""), cancelling 1`, "RunWith: first reason", "Close: <nil>"}, &r)
}

// Outside RunWith, SIGINT is back at its default (it ends the process);
// and once two SIGINTs have arrived, a third ends the process even when a
// task blocks the loop so that it never handles the first two.
func TestRUN4_SIGINTDispositionAroundRun(t *testing.T) {
	for _, scenario := range []string{"sigint-after-run", "sigint-blocked-loop", "sigint-after-goexit"} {
		out, err := runHelper(scenario)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("%s: %v, output %q; want killed by SIGINT", scenario, err, out)
		}
	}
}

// SIGINTs taken by a SIGINT handler of the loop's own are not the Ctrl-Cs
// after which Run's watch steps aside: once that handler is removed, the
// next Ctrl-C still cancels main (with two SIGINTs taken by the handler
// first, it killed the process).
func TestRUN4_CtrlCAfterTheLoopsOwnHandlerWasRemoved(t *testing.T) {
	out, err := runHelper("sigint-after-handler-removed")
	if err != nil || !strings.Contains(out, "interrupted: true") {
		t.Errorf("%v, output %q; want main interrupted by the third SIGINT", err, out)
	}
}

func init() {
	helperProcesses["sigint-after-handler-removed"] = func() int {
		_, err := Run(func(tk *T) (int, error) {
			seen := 0
			var arrived *Future[struct{}]
			if err := tk.Loop().AddSignalHandler(os.Interrupt, func() {
				seen++
				_ = arrived.SetResult(struct{}{})
			}); err != nil {
				return 0, err
			}
			for seen < 2 { // one at a time: signals that arrive together merge
				arrived = NewFuture[struct{}](tk)
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				if _, err := arrived.Await(tk); err != nil {
					return 0, err
				}
			}
			_, _ = tk.Loop().RemoveSignalHandler(os.Interrupt)
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			return 0, Sleep(tk, time.Hour) // until the Ctrl-C cancels it
		})
		fmt.Printf("interrupted: %v\n", errors.Is(err, ErrInterrupted))
		return 0
	}
	helperProcesses["sigint-ignored"] = func() int {
		signal.Ignore(os.Interrupt)
		rn := NewRunner(WithVirtualTime())
		defer rn.Close()
		watched, err := RunWith(rn, func(tk *T) (bool, error) { return rn.interrupts.ch != nil, nil })
		if err != nil {
			return 2
		}
		fmt.Printf("watched: %v\n", watched)
		return 0
	}
	// RunWith ended by a runtime.Goexit in its main task (t.FailNow in a
	// test) must not leave SIGINT watched.
	helperProcesses["sigint-after-goexit"] = func() int {
		rn := NewRunner()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = RunWith(rn, func(tk *T) (int, error) {
				runtime.Goexit()
				return 0, nil
			})
		}()
		<-done
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		waitForPendingSignals()
		fmt.Println("survived")
		return 0
	}
	helperProcesses["sigint-after-run"] = func() int {
		if _, err := Run(func(tk *T) (int, error) { return 0, Sleep(tk, 0) }); err != nil {
			return 2
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		waitForPendingSignals()
		fmt.Println("survived")
		return 0
	}
	helperProcesses["sigint-blocked-loop"] = func() int {
		Run(func(tk *T) (int, error) {
			// The loop never runs again: every SIGINT's callback stays
			// queued. Keep sending until the default action comes back.
			for range 200 {
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				//asynciovet:ignore blockingcall the loop never runs again here: this only paces the signals the test sends
				time.Sleep(10 * time.Millisecond)
			}
			fmt.Println("survived")
			os.Exit(0)
			return 0, nil
		})
		return 3
	}
}
