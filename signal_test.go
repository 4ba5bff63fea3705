//go:build unix

package asyncio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Signal tests send real signals to the test process. SIGUSR1 and SIGUSR2
// do nothing in a Go program that does not ask for them, so a signal that
// arrives after its handler is gone cannot hurt the test binary; the
// dispositions of SIGTERM and SIGINT are checked in helper processes.

// raise sends sig to the test process.
func raise(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

// A handler runs as a callback on the loop: in debug mode, where every
// scheduling call checks that it comes from the goroutine running the
// loop, it may schedule; it is not a task step; and it runs once per
// arrival.
func TestSignal_HandlerRunsAsLoopCallback(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (struct{}, error) {
		l := tk.Loop()
		arrivals := []*Future[int]{NewFuture[int](tk), NewFuture[int](tk)}
		n := 0
		if err := l.AddSignalHandler(syscall.SIGUSR1, func() {
			n++
			r.log("handler %d: in a task: %v", n, CurrentTask(l) != nil)
			k := n
			l.CallSoon(func() { arrivals[k-1].SetResult(k) }) // panics if not on the loop's goroutine
		}); err != nil {
			return struct{}{}, err
		}
		for _, f := range arrivals {
			raise(t, syscall.SIGUSR1)
			v, err := f.Await(tk)
			if err != nil {
				return struct{}{}, err
			}
			r.log("arrival %d handled", v)
		}
		r.log("removed: %v, again: %v", removeSignal(t, l, syscall.SIGUSR1), removeSignal(t, l, syscall.SIGUSR1))
		return struct{}{}, nil
	}, WithDebug())
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"handler 1: in a task: false",
		"arrival 1 handled",
		"handler 2: in a task: false",
		"arrival 2 handled",
		"removed: true, again: false",
	}, &r)
}

// Adding a handler for a signal that has one replaces it; after removal
// the signal no longer reaches the loop.
func TestSignal_ReplaceAndRemove(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (struct{}, error) {
		l := tk.Loop()
		second := NewFuture[struct{}](tk)
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(l.AddSignalHandler(syscall.SIGUSR2, func() { r.log("first handler") }))
		must(l.AddSignalHandler(syscall.SIGUSR2, func() {
			r.log("second handler")
			second.SetResult(struct{}{})
		}))
		raise(t, syscall.SIGUSR2)
		if _, err := second.Await(tk); err != nil {
			return struct{}{}, err
		}
		r.log("removed: %v", removeSignal(t, l, syscall.SIGUSR2))
		r.log("watching: %v", l.hasSignalHandler(syscall.SIGUSR2))
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"second handler", "removed: true", "watching: false"}, &r)
}

// A panic in a handler is reported like a panic in any callback, under
// the handler's name (it was the name of the loop's own dispatch closure),
// and the loop goes on.
func TestSignal_PanicInHandlerIsReported(t *testing.T) {
	var r eventLog
	l := NewLoop()
	handlerLog(l, &r)
	done := NewFuture[struct{}](l)
	if err := l.AddSignalHandler(syscall.SIGUSR1, panickingSignalHandler); err != nil {
		t.Fatal(err)
	}
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		r.log("handler: %s: %v", strings.Fields(c.Message)[0], c.Err)
		if !strings.HasSuffix(c.Message, "Exception in callback github.com/go-asyncio/asyncio.panickingSignalHandler") {
			t.Errorf("report names %q, want the handler", c.Message)
		}
		done.SetResult(struct{}{})
	})
	raise(t, syscall.SIGUSR1)
	if err := l.RunUntilComplete(done); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	checkEvents(t, []string{"handler: Exception: asyncio: panic: in handler"}, &r)
}

func panickingSignalHandler() { panic("in handler") }

// asyncio's errors, in its order (the signal is checked before the loop),
// each before anything changes.
func TestSignal_BadInput(t *testing.T) {
	var r eventLog
	l := NewLoop()
	try := func(name string, sig os.Signal, fn func()) {
		r.log("%s: %s", name, describe(l.AddSignalHandler(sig, fn)))
	}
	nop := func() {}
	try("0", syscall.Signal(0), nop)
	try("65", syscall.Signal(65), nop)
	try("-1", syscall.Signal(-1), nop)
	try("SIGKILL", syscall.SIGKILL, nop)
	try("SIGSTOP", syscall.SIGSTOP, nop)
	try("not a syscall.Signal", fakeSignal{}, nop)
	try("nil handler", syscall.SIGUSR1, nil)
	r.log("nothing registered: %v", l.signals == nil)
	r.log("remove SIGKILL: %v", removeSignal(t, l, syscall.SIGKILL))
	for _, sig := range []os.Signal{syscall.Signal(0), syscall.Signal(65), fakeSignal{}} {
		removed, err := l.RemoveSignalHandler(sig)
		r.log("remove %v: %v %s", sig, removed, describe(err))
	}
	mustClose(t, l)
	removed, err := l.RemoveSignalHandler(syscall.SIGUSR1)
	r.log("remove on the closed loop: %v %v", removed, err)
	try("closed loop", syscall.SIGUSR1, nop)
	try("closed loop, invalid signal", syscall.Signal(0), nop)
	err = l.AddSignalHandler(syscall.SIGUSR1, nop)
	r.log("closed: is ErrLoopClosed %v", errors.Is(err, ErrLoopClosed))
	checkEvents(t, []string{
		`0: ValueError("invalid signal number 0")`,
		`65: ValueError("invalid signal number 65")`,
		`-1: ValueError("invalid signal number -1")`,
		`SIGKILL: RuntimeError("sig 9 cannot be caught")`,
		`SIGSTOP: RuntimeError("sig 19 cannot be caught")`,
		`not a syscall.Signal: ValueError("invalid signal number fake")`,
		`nil handler: ValueError("AddSignalHandler(user defined signal 1): nil handler")`,
		"nothing registered: true",
		"remove SIGKILL: false",
		`remove signal 0: false ValueError("invalid signal number 0")`,
		`remove signal 65: false ValueError("invalid signal number 65")`,
		`remove fake: false ValueError("invalid signal number fake")`,
		"remove on the closed loop: false <nil>",
		`closed loop: RuntimeError("Event loop is closed")`,
		`closed loop, invalid signal: ValueError("invalid signal number 0")`,
		"closed: is ErrLoopClosed true",
	}, &r)
}

type fakeSignal struct{}

func (fakeSignal) String() string { return "fake" }
func (fakeSignal) Signal()        {}

// A foreign goroutine adding a handler panics before the loop's table
// changes (asyncio: RuntimeError outside the main thread), in every mode.
func TestSignal_ForeignGoroutinePanics(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (struct{}, error) {
		out := make(chan any)
		go func() {
			defer func() { out <- recover() }()
			//asynciovet:ignore foreigngoroutine calling it from a foreign goroutine is the misuse under test: it must panic
			tk.Loop().AddSignalHandler(syscall.SIGUSR1, func() {})
		}()
		//asynciovet:ignore blockingcall receives the panic of a goroutine that fails at once: blocks for an instant
		r.log("panic: %v", <-out)
		r.log("registered: %v", tk.Loop().hasSignalHandler(syscall.SIGUSR1))
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"panic: AddSignalHandler called from a goroutine that is not running the loop " +
			"(only the goroutine in RunForever and the loop's running task may call it; " +
			"from another goroutine use CallSoonThreadsafe or RunCoroutineThreadsafe)",
		"registered: false",
	}, &r)
}

// Close removes every handler and stops its goroutine (goleak checks the
// goroutines at the end of the package's tests).
func TestSignal_CloseRemovesHandlers(t *testing.T) {
	l := NewLoop()
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2} {
		if err := l.AddSignalHandler(sig, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, l)
	if n := len(l.signals.handlers); n != 0 {
		t.Fatalf("%d handlers left after Close", n)
	}
	if removeSignal(t, l, syscall.SIGUSR1) {
		t.Fatal("a handler was still registered")
	}
}

// The OS disposition comes back on removal and on Close: a helper process
// handles SIGTERM, gives it up, and sends itself SIGTERM, which must then
// end it as it ends any Go program. The control scenario keeps its handler
// and survives.
func TestSignal_DispositionRestored(t *testing.T) {
	for _, c := range []struct {
		scenario string
		killed   bool
	}{
		{"sigterm-handled", false},
		{"sigterm-removed", true},
		{"sigterm-loop-closed", true},
	} {
		out, err := runHelper(c.scenario)
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM
		if killed != c.killed || (!c.killed && err != nil) {
			t.Errorf("%s: %v, output %q; want killed by SIGTERM: %v", c.scenario, err, out, c.killed)
		}
	}
}

func init() {
	// setup returns the loop with a SIGTERM handler that logs.
	setup := func() *Loop {
		l := NewLoop()
		if err := l.AddSignalHandler(syscall.SIGTERM, func() { fmt.Println("handler ran") }); err != nil {
			panic(err)
		}
		return l
	}
	// raiseAndWait sends SIGTERM to the process and runs l until the
	// handler ran (or forever, if the process dies first).
	raiseAndWait := func(l *Loop) int {
		done := NewFuture[struct{}](l)
		l.signals.handlers[syscall.SIGTERM].fn = func() { done.SetResult(struct{}{}) }
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if err := l.RunUntilComplete(done); err != nil {
			return 2
		}
		fmt.Println("survived")
		return 0
	}
	helperProcesses["sigterm-handled"] = func() int {
		l := setup()
		defer l.Close()
		return raiseAndWait(l)
	}
	helperProcesses["sigterm-removed"] = func() int {
		l := setup()
		_, _ = l.RemoveSignalHandler(syscall.SIGTERM)
		return raiseAndSurvive()
	}
	helperProcesses["sigterm-loop-closed"] = func() int {
		setup().Close()
		return raiseAndSurvive()
	}
}

// raiseAndSurvive sends SIGTERM to the process, which should end it; if
// the process is still there once the signal had every chance to arrive,
// it says so.
func raiseAndSurvive() int {
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	waitForPendingSignals()
	fmt.Println("survived")
	return 0
}
