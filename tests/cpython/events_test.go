//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_events.py. CPython runs
// EventLoopTestsMixin once per selector (and on the proactor on Windows);
// here the loop's selector is the platform's, once. The loop tests run on a
// virtual-time loop (asyncio.NewTestLoop); where a signal or another
// goroutine must reach the loop, the loop holds ExpectExternal until it
// has. The loop, handle, reader/writer and signal tests are here; the
// socket tests in events_net_test.go, the datagram ones in
// events_dgram_test.go, TLS in events_ssl_test.go, pipes in
// events_pipe_test.go, ptys in events_pty_linux_test.go and
// SubprocessTestsMixin in events_subprocess_linux_test.go. Unix-only, as
// most of CPython's are (signals, socketpairs, pipes).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// panicErr runs f and returns the error it panics with (nil if it does not
// panic): assertRaises around a call that panics in Go.
func panicErr(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = errors.New("non-error panic")
			}
		}
	}()
	f()
	return nil
}

func isRuntimeError(t *testing.T, err error, what ...any) {
	t.Helper()
	var re *asyncio.RuntimeError
	if !errors.As(err, &re) && !errors.Is(err, asyncio.ErrRuntime) && !errors.Is(err, asyncio.ErrLoopClosed) {
		t.Errorf("%v: got %v (%T), want a RuntimeError", what, err, err)
	}
}

func TestEvents_test_run_until_complete_nesting(t *testing.T) {
	l := newLoop(t)
	r := (&recorder{}).handle(l)
	var inner error
	coro2 := asyncio.CreateTaskErr(l, func(tk *asyncio.T) error {
		check(t, l.IsRunning(), "loop.is_running()")
		coro1 := asyncio.CreateTaskErr(l, func(tk *asyncio.T) error { return asyncio.Sleep(tk, 0) })
		inner = l.RunUntilComplete(coro1)
		return inner
	})
	err := l.RunUntilComplete(coro2)
	isRuntimeError(t, err, "run_until_complete(coro2())")
	isRuntimeError(t, inner, "nested run_until_complete")
	if inner != nil {
		check(t, inner.Error() == "This event loop is already running", inner.Error())
	}
	// RuntimeWarning "coroutine ... was never awaited": coro1 never ran
	noErr(t, l.Close())
	eq(t, r.messages(), []string{"Task was destroyed but it is pending!"})
}

func TestEvents_test_run_until_complete(t *testing.T) {
	l := newLoop(t)
	delay := 100 * ms
	t0 := l.Time()
	noErr(t, l.RunUntilComplete(asyncio.CreateTask(l, sleepFn(delay))))
	dt := l.Time() - t0
	check(t, dt >= delay, "dt ", dt, " >= ", delay)
}

func TestEvents_test_run_until_complete_stopped(t *testing.T) {
	l := newLoop(t)
	(&recorder{}).handle(l) // the task is still pending at close
	task := asyncio.CreateTaskErr(l, func(tk *asyncio.T) error {
		l.Stop()
		return asyncio.Sleep(tk, 100*ms)
	})
	err := l.RunUntilComplete(task)
	isRuntimeError(t, err)
	if err != nil {
		eq(t, err.Error(), "Event loop stopped before Future completed.")
	}
}

func TestEvents_test_call_later(t *testing.T) {
	l := newLoop(t)
	var results []string
	l.CallLater(100*ms, func() {
		results = append(results, "hello world")
		l.Stop()
	})
	t0 := l.Time()
	noErr(t, l.RunForever())
	eq(t, results, []string{"hello world"})
	check(t, l.Time()-t0 >= 100*ms, "the callback ran 0.1 s later")
}

func TestEvents_test_call_soon(t *testing.T) {
	l := newLoop(t)
	type pair struct{ a, b string }
	var results []pair
	callback := func(arg1, arg2 string) {
		results = append(results, pair{arg1, arg2})
		l.Stop()
	}
	l.CallSoon(func() { callback("hello", "world") })
	noErr(t, l.RunForever())
	eq(t, results, []pair{{"hello", "world"}})
}

func TestEvents_test_call_soon_threadsafe(t *testing.T) {
	l := newLoop(t)
	var results []string
	callback := func(arg string) {
		results = append(results, arg)
		if len(results) >= 2 {
			l.Stop()
		}
	}
	// lock: the goroutine's call_soon_threadsafe happens before the loop
	// runs; the loop holds ExpectExternal until the goroutine has scheduled
	// its callback.
	lock := make(chan struct{})
	release := l.ExpectExternal()
	go func() {
		defer release()
		_, err := l.CallSoonThreadsafe(func() { callback("hello") })
		noErr(t, err)
		close(lock)
	}()
	<-lock
	l.CallSoon(func() { callback("world") })
	noErr(t, l.RunForever())
	eq(t, results, []string{"hello", "world"})
}

func TestEvents_test_call_soon_threadsafe_same_thread(t *testing.T) {
	l := newLoop(t)
	var results []string
	callback := func(arg string) {
		results = append(results, arg)
		if len(results) >= 2 {
			l.Stop()
		}
	}
	_, err := l.CallSoonThreadsafe(func() { callback("hello") })
	noErr(t, err)
	l.CallSoon(func() { callback("world") })
	noErr(t, l.RunForever())
	eq(t, results, []string{"hello", "world"})
}

func TestEvents_test_run_in_executor(t *testing.T) {
	l := newLoop(t)
	loopG := make(chan bool, 1)
	f2 := asyncio.RunInExecutor(l, func(ctx context.Context) (string, error) {
		loopG <- l.OnLoopGoroutine()
		return "yo", nil
	})
	noErr(t, l.RunUntilComplete(f2))
	eq(t, result[string](t, f2), "yo")
	check(t, !<-loopG, "the function ran on another goroutine than the loop's")
}

func TestEvents_test_run_in_executor_cancel(t *testing.T) {
	l := newLoop(t)
	r := (&recorder{}).handle(l)
	f2 := asyncio.RunInExecutor(l, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, nil
	})
	f2.Cancel()
	noErr(t, l.RunUntilComplete(asyncio.CreateTaskErr(l, asyncio.ShutdownDefaultExecutor)))
	noErr(t, l.Close())
	// the job finished without scheduling anything on the closed loop (it
	// would panic or report): its future stays cancelled
	check(t, f2.Cancelled(), "f2.cancelled()")
	eq(t, r.messages(), []string(nil))
}

func TestEvents_test_close_running_event_loop(t *testing.T) {
	l := newLoop(t)
	var closeErr error
	err := l.RunUntilComplete(asyncio.CreateTaskErr(l, func(tk *asyncio.T) error {
		closeErr = l.Close()
		return closeErr
	}))
	isRuntimeError(t, err, "run_until_complete(close_loop())")
	isRuntimeError(t, closeErr, "loop.close() in the loop")
	check(t, !l.IsClosed(), "the loop is still open")
}

func TestEvents_EventLoopTestsMixin_test_close(t *testing.T) {
	l := newLoop(t)
	noErr(t, l.Close())
	fn := func() {}

	// operation blocked when the loop is closed
	isRuntimeError(t, l.RunForever(), "run_forever")
	isRuntimeError(t, l.RunUntilComplete(asyncio.NewFuture[int](l)), "create_future + run_until_complete")
	isRuntimeError(t, panicErr(func() { l.CallSoon(fn) }), "call_soon")
	_, err := l.CallSoonThreadsafe(fn)
	isRuntimeError(t, err, "call_soon_threadsafe")
	isRuntimeError(t, panicErr(func() { l.CallLater(time.Second, fn) }), "call_later")
	isRuntimeError(t, panicErr(func() { l.CallAt(l.Time(), fn) }), "call_at")
	isRuntimeError(t, panicErr(func() {
		asyncio.CreateTaskErr(l, func(*asyncio.T) error { return nil })
	}), "create_task")
	isRuntimeError(t, l.AddSignalHandler(syscall.SIGTERM, fn), "add_signal_handler")
	isRuntimeError(t, panicErr(func() {
		asyncio.RunInExecutor(l, func(context.Context) (bool, error) { return false, nil })
	}), "run_in_executor")
}

func TestEvents_test_handle(t *testing.T) {
	l := newLoop(t)
	h := l.CallSoon(func() {})
	check(t, !h.Cancelled(), "not h.cancelled()")
	h.Cancel()
	check(t, h.Cancelled(), "h.cancelled()")
}

func TestEvents_test_callback_with_exception(t *testing.T) {
	l := newLoop(t)
	r := (&recorder{}).handle(l)
	h := l.CallSoon(func() { panic(exc("ValueError")) })
	l.CallSoon(l.Stop)
	noErr(t, l.RunForever())
	if len(r.contexts) != 1 {
		t.Fatalf("exception handler called %d times, want 1", len(r.contexts))
	}
	c := r.contexts[0]
	check(t, regexp.MustCompile(`^Exception in callback.*`).MatchString(c.Message), c.Message)
	check(t, c.Err != nil, "'exception': mock.ANY")
	check(t, c.Handle == h, "'handle': h")
}

func TestEvents_test_when(t *testing.T) {
	l := newLoop(t)
	when := l.Time() + 3*time.Second
	h := l.CallAt(when, func() {})
	eq(t, h.When(), when)
	h.Cancel()
}

func TestEvents_test_timer(t *testing.T) {
	l := newLoop(t)
	ran := false
	h := l.CallAt(l.Time(), func() { ran = true })
	check(t, !h.Cancelled(), "not h.cancelled()")
	// cancel
	h.Cancel()
	check(t, h.Cancelled(), "h.cancelled()")
	l.CallSoon(l.Stop)
	noErr(t, l.RunForever())
	check(t, !ran, "a cancelled timer's callback does not run")
	// TimerHandle(None, callback, args, loop) raises AssertionError
	var valueErr *asyncio.ValueError
	check(t, errors.As(panicErr(func() { l.CallAt(l.Time(), nil) }), &valueErr), "a nil callback is a ValueError")
}

// socketpair is socket.socketpair(): two connected Unix stream sockets,
// closed at the end of the test unless closed before (the returned close
// functions are sock.close()).
func socketpair(t *testing.T) (r, w int, closeR, closeW func()) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	closer := func(fd int) func() {
		closed := false
		f := func() {
			if !closed {
				closed = true
				syscall.Close(fd)
			}
		}
		t.Cleanup(f)
		return f
	}
	return fds[0], fds[1], closer(fds[0]), closer(fds[1])
}

// runUntil is test_utils.run_until(loop, pred): run the loop until pred
// holds.
func runUntil(t *testing.T, l *asyncio.Loop, pred func() bool) {
	t.Helper()
	var poll func()
	poll = func() {
		if pred() {
			l.Stop()
			return
		}
		l.CallSoon(poll)
	}
	l.CallSoon(poll)
	noErr(t, l.RunForever(), "run_until")
}

func TestEvents_test_reader_callback(t *testing.T) {
	l := newLoop(t)
	r, w, closeR, closeW := socketpair(t)
	noErr(t, syscall.SetNonblock(r, true))
	var bytesRead []byte
	reader := func() {
		buf := make([]byte, 1024)
		n, err := syscall.Read(r, buf)
		if err == syscall.EAGAIN {
			// Spurious readiness notifications are possible
			return
		}
		noErr(t, err)
		if n > 0 {
			bytesRead = append(bytesRead, buf[:n]...)
		} else {
			check(t, l.RemoveReader(r), "loop.remove_reader(r)")
			closeR()
		}
	}
	noErr(t, l.AddReader(r, reader))
	send := func(b string) func() {
		return func() { _, err := syscall.Write(w, []byte(b)); noErr(t, err) }
	}
	l.CallSoon(send("abc"))
	runUntil(t, l, func() bool { return len(bytesRead) >= 3 })
	l.CallSoon(send("def"))
	runUntil(t, l, func() bool { return len(bytesRead) >= 6 })
	l.CallSoon(closeW)
	l.CallSoon(l.Stop)
	noErr(t, l.RunForever())
	eq(t, string(bytesRead), "abcdef")
}

func TestEvents_test_writer_callback(t *testing.T) {
	l := newLoop(t)
	r, w, closeR, closeW := socketpair(t)
	noErr(t, syscall.SetNonblock(w, true))
	writer := func(data []byte) {
		_, err := syscall.Write(w, data)
		noErr(t, err)
		l.Stop()
	}
	data := bytes.Repeat([]byte("x"), 1024)
	noErr(t, l.AddWriter(w, func() { writer(data) }))
	noErr(t, l.RunForever())

	check(t, l.RemoveWriter(w), "loop.remove_writer(w)")
	check(t, !l.RemoveWriter(w), "not loop.remove_writer(w)")

	closeW()
	read := make([]byte, len(data)*2)
	n, err := syscall.Read(r, read)
	noErr(t, err)
	closeR()
	eq(t, string(read[:n]), string(data))
}

func TestEvents_test_remove_fds_after_closing(t *testing.T) {
	l := newLoop(t)
	callback := func() {}
	r, w, _, _ := socketpair(t)
	noErr(t, l.AddReader(r, callback))
	noErr(t, l.AddWriter(w, callback))
	noErr(t, l.Close())
	check(t, !l.RemoveReader(r), "not loop.remove_reader(r)")
	check(t, !l.RemoveWriter(w), "not loop.remove_writer(w)")
}

func TestEvents_test_add_fds_after_closing(t *testing.T) {
	l := newLoop(t)
	callback := func() {}
	r, w, _, _ := socketpair(t)
	noErr(t, l.Close())
	isRuntimeError(t, l.AddReader(r, callback), "add_reader")
	isRuntimeError(t, l.AddWriter(w, callback), "add_writer")
}

func TestEvents_test_prompt_cancellation(t *testing.T) {
	l := newLoop(t)
	r, _, _, _ := socketpair(t)
	noErr(t, syscall.SetNonblock(r, true))
	f := asyncio.CreateTask(l, func(tk *asyncio.T) ([]byte, error) { return aio.SockRecv(tk, r, 1) })
	main := asyncio.CreateTask(l, func(tk *asyncio.T) (string, error) {
		defer l.Stop()
		l.CallSoon(func() { f.Cancel() })
		if _, err := f.Await(tk); asyncio.IsCancelled(err) {
			return "cancelled", nil
		}
		return "", nil
	})
	noErr(t, l.RunForever())
	eq(t, result[string](t, main), "cancelled")
	_, err := f.Result()
	cancelled(t, err, "f.result()")
	// the reader is gone with the cancellation (loop._stop_serving(r))
	check(t, !l.RemoveReader(r), "no reader left on r")
}

func TestEvents_TestServer_test_get_loop(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyProto(t, tk)
		server, err := aio.CreateServer(tk, func() aio.Protocol { return proto }, "0.0.0.0", 0)
		if err != nil {
			return err
		}
		check(t, server.Loop() == tk.Loop(), "server.get_loop() == loop")
		server.Close()
		return server.WaitClosed(tk)
	})
}

// nsig is signal.NSIG: one more than the highest signal number.
func nsig() syscall.Signal {
	if runtime.GOOS == "linux" {
		return 65
	}
	return 32
}

func TestEvents_test_add_signal_handler(t *testing.T) {
	l := newLoop(t)
	caught := 0
	myHandler := func() { caught++ }

	// Check error behavior first. (add_signal_handler('boom'): a Go
	// os.Signal cannot be a string.)
	var valueErr *asyncio.ValueError
	for _, sig := range []syscall.Signal{nsig() + 1, 0, -1} {
		check(t, errors.As(l.AddSignalHandler(sig, myHandler), &valueErr), "add_signal_handler(", int(sig), ") is a ValueError")
		removed, err := l.RemoveSignalHandler(sig)
		check(t, !removed && errors.As(err, &valueErr), "remove_signal_handler(", int(sig), ") is a ValueError")
	}
	isRuntimeError(t, l.AddSignalHandler(syscall.SIGKILL, myHandler), "add_signal_handler(SIGKILL)")
	// Removing SIGKILL doesn't raise, since we don't call signal().
	removed, err := l.RemoveSignalHandler(syscall.SIGKILL)
	check(t, !removed && err == nil, "not remove_signal_handler(SIGKILL)")
	// Now set a handler and handle it.
	release := l.ExpectExternal() // until the signal has come
	noErr(t, l.AddSignalHandler(syscall.SIGINT, func() { myHandler(); release() }))

	noErr(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	runUntil(t, l, func() bool { return caught > 0 })

	// Removing it should restore the default handler.
	removed, err = l.RemoveSignalHandler(syscall.SIGINT)
	check(t, removed && err == nil, "remove_signal_handler(SIGINT)")
	check(t, !signal.Ignored(syscall.SIGINT), "SIGINT has its default disposition")
	// Removing again returns False.
	removed, err = l.RemoveSignalHandler(syscall.SIGINT)
	check(t, !removed && err == nil, "not remove_signal_handler(SIGINT) again")
}

func TestEvents_test_signal_handling_while_selecting(t *testing.T) {
	// Test with a signal actually arriving while the loop polls.
	l := newLoop(t)
	caught := 0
	release := l.ExpectExternal() // until the signal has come
	noErr(t, l.AddSignalHandler(syscall.SIGALRM, func() {
		caught++
		release()
		l.Stop()
	}))
	// signal.setitimer(ITIMER_REAL, 0.01): send SIGALRM once, from
	// outside the loop, while it waits
	go func() { noErr(t, syscall.Kill(os.Getpid(), syscall.SIGALRM)) }()
	l.CallLater(60*time.Second, l.Stop)
	noErr(t, l.RunForever())
	eq(t, caught, 1)
}

func TestEvents_test_signal_handling_args(t *testing.T) {
	l := newLoop(t)
	someArgs := []any{42}
	caught := 0
	release := l.ExpectExternal()
	myHandler := func(args ...any) {
		caught++
		eq(t, args, someArgs)
		release()
		l.Stop()
	}
	noErr(t, l.AddSignalHandler(syscall.SIGALRM, func() { myHandler(someArgs...) }))
	go func() { noErr(t, syscall.Kill(os.Getpid(), syscall.SIGALRM)) }()
	l.CallLater(60*time.Second, l.Stop)
	noErr(t, l.RunForever())
	eq(t, caught, 1)
}
