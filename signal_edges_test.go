//go:build unix

package asyncio

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Signal and Ctrl-C edge cases of a hostile run. As the other signal
// tests, these send real signals to the test process, SIGINT only while
// something (a Run's watch, or a channel of the test's own) catches it.

// untilForwarded spins, on the loop, until a signal sent to the process
// has been handed to l from another goroutine (l's threadsafe queue is not
// empty). Synchronisation, not timing: the bound only guards a hang.
func untilForwarded(t *testing.T, l *Loop) {
	t.Helper()
	guard := time.After(time.Minute)
	for !l.threadsafeFlag.Load() {
		select {
		case <-guard:
			t.Fatal("the signal never reached the loop")
		default:
			runtime.Gosched()
		}
	}
}

// A Ctrl-C that reaches the loop after main is done but before RunWith's
// wait is over is not lost: asyncio's _on_sigint raises KeyboardInterrupt
// when main is already done (a SIGINT sent from a callback run after main
// returned, or by main as its last act, makes asyncio.run raise
// KeyboardInterrupt). It was dropped: Run returned main's result and the
// Ctrl-C did nothing at all.
func TestSignalEdges_SIGINTAfterMainIsDoneIsNotLost(t *testing.T) {
	sigintAtDefault(t)
	var r eventLog
	v, err := Run(func(tk *T) (int, error) {
		l := tk.Loop()
		// Runs in the iteration after main's last step, with the
		// RunUntilComplete stop: the arrival is queued after that
		// iteration took its snapshot, so the loop stops first.
		l.CallSoon(func() {
			raise(t, syscall.SIGINT)
			untilForwarded(t, l)
			r.log("SIGINT forwarded, main done: %v", tk.fut.done())
		})
		return 1, nil
	})
	r.log("Run: %d is(ErrInterrupted)=%v", v, errors.Is(err, ErrInterrupted))
	checkEvents(t, []string{
		"SIGINT forwarded, main done: true",
		"Run: 0 is(ErrInterrupted)=true",
	}, &r)
}

// The same for the second Ctrl-C: one that arrives while main's cleanup
// ends is not lost either (RunWith returns ErrInterrupted, which it does
// anyway for the first; the point is that the next run is not disturbed
// by a stale arrival).
func TestSignalEdges_StaleSIGINTDoesNotReachTheNextRun(t *testing.T) {
	sigintAtDefault(t)
	rn := NewRunner()
	defer rn.Close()
	_, err := RunWith(rn, func(tk *T) (int, error) {
		l := tk.Loop()
		l.CallSoon(func() {
			raise(t, syscall.SIGINT)
			untilForwarded(t, l)
		})
		return 1, nil
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("first run: %v, want ErrInterrupted", err)
	}
	// The stale arrival's callback is still queued: it runs in the next
	// run and must not cancel that run's main.
	v, err := RunWith(rn, func(tk *T) (int, error) { return 2, Sleep(tk, 0) })
	if v != 2 || err != nil {
		t.Errorf("second run: %d %v, want 2 <nil>", v, err)
	}
}

// SIGINT sent before main's first step (from a callback queued before
// RunWith): main is cancelled and RunWith says interrupted. (asyncio
// cancels the task before its first step, so its body never runs; here
// the SIGINT reaches the loop through CallSoonThreadsafe, after main's
// first step was queued: the body starts and sees the cancellation at its
// first await.)
func TestSignalEdges_SIGINTBeforeMainsFirstStep(t *testing.T) {
	sigintAtDefault(t)
	var r eventLog
	rn := NewRunner()
	l := rn.Loop()
	l.CallSoon(func() {
		raise(t, syscall.SIGINT)
		untilForwarded(t, l)
		r.log("SIGINT forwarded")
	})
	_, err := RunWith(rn, func(tk *T) (int, error) {
		r.log("main starts")
		_, err := never(tk).Await(tk)
		r.log("main sees %s", describe(err))
		return 0, err
	})
	r.log("RunWith: is(ErrInterrupted)=%v", errors.Is(err, ErrInterrupted))
	r.log("Close: %v", rn.Close())
	checkEvents(t, []string{
		"SIGINT forwarded",
		"main starts",
		`main sees CancelledError("")`,
		"RunWith: is(ErrInterrupted)=true",
		"Close: <nil>",
	}, &r)
}

// A main that swallows the cancellation and then ends cancelled by
// something else after Uncancel brought its count back to 0: asyncio's
// Runner.run calls uncancel() (0 at 0) and raises KeyboardInterrupt.
func TestSignalEdges_SwallowedThenCancelledElsewhere(t *testing.T) {
	sigintAtDefault(t)
	v, err := Run(func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		if !IsCancelled(err) {
			return 0, fmt.Errorf("not cancelled: %v", err)
		}
		n := tk.Uncancel() // swallowed: as a timeout block does
		f := never(tk)
		f.Cancel("elsewhere")
		_, err = f.Await(tk)
		return n, err
	})
	if !errors.Is(err, ErrInterrupted) || v != 0 {
		t.Errorf("Run = %d %v, want 0 and ErrInterrupted", v, err)
	}
}

// A user's own signal.Notify channel gets SIGINT during Run (as well as
// Run's watch) and after it: Run's signal.Stop takes nothing away from it.
func TestSignalEdges_UsersNotifyChannelKeepsSIGINT(t *testing.T) {
	user := make(chan os.Signal, 4)
	signal.Notify(user, os.Interrupt)
	defer signal.Stop(user)
	_, err := Run(func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		return 0, err
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("Run: %v, want ErrInterrupted", err)
	}
	<-user // the one sent during Run
	raise(t, syscall.SIGINT)
	<-user // after Run: still delivered (the process would have died otherwise)
	// A second Run still watches SIGINT.
	_, err = Run(func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		return 0, err
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("second Run: %v, want ErrInterrupted", err)
	}
	<-user
}

// SIGINT while RunEach runs a main on every loop: every main is
// cancelled, every cleanup (which awaits) runs to its end before RunEach
// returns, and the error, a LoopError per loop, matches ErrInterrupted.
func TestSignalEdges_GroupEveryMainInterrupted(t *testing.T) {
	sigintAtDefault(t)
	const n = 4
	g := NewLoopGroup(WithLoops(n))
	defer g.Close()
	ready := make(chan int, n)
	cleaned := make([]string, n) // each main writes its own
	go func() {
		for range n {
			<-ready
		}
		raise(t, syscall.SIGINT)
	}()
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		ready <- i
		_, err := never(tk).Await(tk)
		if serr := Sleep(tk, 0); serr != nil {
			return 0, serr
		}
		cleaned[i] = describe(err)
		return 0, err
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("RunEach: %v, want ErrInterrupted", err)
	}
	// Which loops are listed depends on which saw the SIGINT before the
	// failure policy cancelled them for another loop's interruption (a
	// main cancelled by the group is left out): every one listed is an
	// interruption.
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || len(j.Unwrap()) == 0 {
		t.Fatalf("RunEach: %v, want LoopErrors joined", err)
	}
	for _, e := range j.Unwrap() {
		var le *LoopError
		if !errors.As(e, &le) || !errors.Is(le.Err, ErrInterrupted) {
			t.Errorf("RunEach lists %v, want an interrupted loop", e)
		}
	}
	for i := range n {
		if cleaned[i] != `CancelledError("")` {
			t.Errorf("loop %d cleanup: %q", i, cleaned[i])
		}
	}
}

// A second SIGINT during the group's cleanup (every main's cleanup hangs)
// stops waiting: RunEach returns ErrInterrupted with the mains pending,
// and Close cancels them again and waits for them.
func TestSignalEdges_GroupSecondSIGINTDuringCleanup(t *testing.T) {
	sigintAtDefault(t)
	const n = 3
	g := NewLoopGroup(WithLoops(n))
	ready, cleaning := make(chan int, n), make(chan int, n)
	ends := make([]string, n) // each main writes its own
	go func() {
		for range n {
			<-ready
		}
		raise(t, syscall.SIGINT)
		for range n { // every loop has taken the first one
			<-cleaning
		}
		raise(t, syscall.SIGINT)
	}()
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		ready <- i
		_, err := never(tk).Await(tk)
		cleaning <- i
		_, err2 := never(tk).Await(tk) // a cleanup that hangs
		ends[i] = describe(err) + " then " + describe(err2)
		return 0, err2
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("RunEach: %v, want ErrInterrupted", err)
	}
	for i, e := range ends { // the mains are pending until Close
		if e != "" {
			t.Errorf("loop %d: cleanup ended before Close: %q", i, e)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i := range n {
		if want := `CancelledError("") then CancelledError("")`; ends[i] != want {
			t.Errorf("loop %d: %q, want %q", i, ends[i], want)
		}
	}
}

// The same signal handled on two loops: one arrival runs both handlers;
// removing one leaves the other working.
func TestSignalEdges_SameSignalOnTwoLoops(t *testing.T) {
	a, b := NewLoop(), NewLoop()
	defer mustClose(t, a)
	defer mustClose(t, b)
	var r eventLog
	fa, fb := NewFuture[struct{}](a), NewFuture[struct{}](b)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.AddSignalHandler(syscall.SIGUSR1, func() { r.log("a"); fa.SetResult(struct{}{}) }))
	must(b.AddSignalHandler(syscall.SIGUSR1, func() { r.log("b"); _ = fb.SetResult(struct{}{}) }))
	raise(t, syscall.SIGUSR1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); must(b.RunUntilComplete(fb)) }()
	must(a.RunUntilComplete(fa))
	wg.Wait()
	r.log("removed a: %v", removeSignal(t, a, syscall.SIGUSR1))
	fb = NewFuture[struct{}](b)
	raise(t, syscall.SIGUSR1)
	must(b.RunUntilComplete(fb))
	got := r.snapshot()
	if len(got) != 4 || got[2] != "removed a: true" || got[3] != "b" ||
		!(got[0] == "a" && got[1] == "b" || got[0] == "b" && got[1] == "a") {
		t.Errorf("events %q", got)
	}
}

// RemoveSignalHandler inside the handler itself returns (it waits for the
// handler's forwarding goroutine, which is not waiting for the loop), and
// a handler may add another in its place.
func TestSignalEdges_RemoveInsideHandler(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (int, error) {
		l := tk.Loop()
		first, second := NewFuture[struct{}](tk), NewFuture[struct{}](tk)
		if err := l.AddSignalHandler(syscall.SIGUSR2, func() {
			r.log("first: removed %v", removeSignal(t, l, syscall.SIGUSR2))
			r.log("re-added: %v", l.AddSignalHandler(syscall.SIGUSR2, func() {
				r.log("second")
				_ = second.SetResult(struct{}{})
			}))
			_ = first.SetResult(struct{}{})
		}); err != nil {
			return 0, err
		}
		raise(t, syscall.SIGUSR2)
		if _, err := first.Await(tk); err != nil {
			return 0, err
		}
		raise(t, syscall.SIGUSR2)
		if _, err := second.Await(tk); err != nil {
			return 0, err
		}
		r.log("removed at the end: %v", removeSignal(t, l, syscall.SIGUSR2))
		return 0, nil
	}, WithDebug())
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"first: removed true", "re-added: <nil>", "second", "removed at the end: true"}, &r)
}

// A handler that panics, on every arrival: each panic goes to the
// exception handler and the loop goes on handling the next arrival.
func TestSignalEdges_PanickingHandlerEveryTime(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (int, error) {
		l := tk.Loop()
		var arrived *Future[struct{}]
		l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
			r.log("reported: %v", c.Err)
			_ = arrived.SetResult(struct{}{})
		})
		n := 0
		if err := l.AddSignalHandler(syscall.SIGUSR1, func() { n++; panic(fmt.Sprint("arrival ", n)) }); err != nil {
			return 0, err
		}
		for range 2 {
			arrived = NewFuture[struct{}](tk)
			raise(t, syscall.SIGUSR1)
			if _, err := arrived.Await(tk); err != nil {
				return 0, err
			}
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"reported: asyncio: panic: arrival 1", "reported: asyncio: panic: arrival 2"}, &r)
}

// Bad input leaves an installed handler as it was: SIGKILL, SIGSTOP, an
// invalid number (Linux's reserved 32 and 33 included, 34 is valid), a nil
// handler for the signal that has one.
func TestSignalEdges_BadInputChangesNothing(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (int, error) {
		l := tk.Loop()
		arrived := NewFuture[struct{}](tk)
		if err := l.AddSignalHandler(syscall.SIGUSR1, func() { _ = arrived.SetResult(struct{}{}) }); err != nil {
			return 0, err
		}
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP, 0, 65, 32, 33} {
			if runtime.GOOS != "linux" && (sig == 32 || sig == 33) {
				continue
			}
			r.log("%d: %s", int(sig), describe(l.AddSignalHandler(sig, func() {})))
		}
		r.log("nil: %s", describe(l.AddSignalHandler(syscall.SIGUSR1, nil)))
		r.log("handlers: %d", len(l.signals.handlers))
		raise(t, syscall.SIGUSR1)
		_, err := arrived.Await(tk)
		r.log("old handler still runs")
		return 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`9: RuntimeError("sig 9 cannot be caught")`,
		fmt.Sprintf(`%d: RuntimeError("sig %d cannot be caught")`, int(syscall.SIGSTOP), int(syscall.SIGSTOP)),
		`0: ValueError("invalid signal number 0")`,
		`65: ValueError("invalid signal number 65")`,
	}
	if runtime.GOOS == "linux" {
		want = append(want, `32: ValueError("invalid signal number 32")`, `33: ValueError("invalid signal number 33")`)
	}
	want = append(want, `nil: ValueError("AddSignalHandler(user defined signal 1): nil handler")`, "handlers: 1", "old handler still runs")
	checkEvents(t, want, &r)
}

// A loop closed (by Run) with handlers installed, one of them for SIGINT
// added during the run, removes them all: SIGINT is Run's again for the
// next run, and no forwarding goroutine is left (goleak).
func TestSignalEdges_RunClosesWithHandlersInstalled(t *testing.T) {
	sigintAtDefault(t)
	var l *Loop
	_, err := Run(func(tk *T) (int, error) {
		l = tk.Loop()
		for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGINT} {
			if err := l.AddSignalHandler(sig, func() {}); err != nil {
				return 0, err
			}
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.signals.handlers); n != 0 || l.sigintHandled.Load() {
		t.Errorf("after Run: %d handlers, SIGINT handled %v", n, l.sigintHandled.Load())
	}
	_, err = Run(func(tk *T) (int, error) {
		raise(t, syscall.SIGINT)
		_, err := never(tk).Await(tk)
		return 0, err
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("next Run: %v, want ErrInterrupted", err)
	}
}
