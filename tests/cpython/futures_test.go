package cpython

// CPython 3.13 Lib/test/test_asyncio/test_futures.py. BaseFutureTests and
// BaseFutureDoneCallbackTests run once (CPython runs them for the C and
// the Python Future and a C subclass). remove_done_callback(fn) removes
// every registration of fn and counts them; Go funcs are not comparable, so
// AddDoneCallback returns an id per registration and the ports remove a
// function's registrations by their ids. wrap_future(executor.submit(fn))
// is RunInExecutor(owner, fn).

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/gid"
)

// newLoop is the test case's self.loop: a virtual-time loop closed at the
// end of the test.
func newLoop(t *testing.T, opts ...asyncio.LoopOption) *asyncio.Loop {
	l := asyncio.NewLoop(append([]asyncio.LoopOption{asyncio.WithVirtualTime()}, opts...)...)
	t.Cleanup(func() { l.Close() })
	return l
}

// runBriefly is test_utils.run_briefly: run the loop until a task that
// returns at once is done (two iterations).
func runBriefly(l *asyncio.Loop) {
	l.RunUntilComplete(asyncio.CreateTask(l, func(*asyncio.T) (struct{}, error) { return struct{}{}, nil }))
}

func TestFutures_test_initial_state(t *testing.T) {
	f := asyncio.NewFuture[int](newLoop(t))
	check(t, !f.Cancelled(), "not cancelled")
	check(t, !f.Done(), "not done")
	f.Cancel()
	check(t, f.Cancelled(), "cancelled")
}

func TestFutures_test_constructor_use_running_loop(t *testing.T) {
	loop := newLoop(t)
	task := asyncio.CreateTask(loop, func(tk *asyncio.T) (*asyncio.Future[int], error) {
		return asyncio.NewFuture[int](tk), nil
	})
	noErr(t, loop.RunUntilComplete(task))
	f, _ := task.Result()
	check(t, f.Loop() == loop, "f.get_loop() is self.loop")
}

func TestFutures_test_future_cancel_message_getter(t *testing.T) {
	loop := newLoop(t)
	f := asyncio.NewFuture[int](loop)
	f.Cancel("my message")
	err := loop.RunUntilComplete(f)
	var ce *asyncio.CancelledError
	check(t, errors.As(err, &ce), "CancelledError, got ", err)
	eq(t, ce.Msg, "my message", "f._cancel_message")
}

func TestFutures_test_cancel(t *testing.T) {
	f := asyncio.NewFuture[int](newLoop(t))
	check(t, f.Cancel(), "cancel() is True")
	check(t, f.Cancelled(), "cancelled")
	check(t, f.Done(), "done")
	_, err := f.Result()
	cancelled(t, err, "result()")
	cancelled(t, f.Err(), "exception()")
	check(t, errors.Is(f.SetResult(0), asyncio.ErrInvalidState), "set_result: InvalidStateError")
	check(t, errors.Is(f.SetException(exc("RuntimeError")), asyncio.ErrInvalidState), "set_exception: InvalidStateError")
	check(t, !f.Cancel(), "cancel() is False")
}

func TestFutures_test_result(t *testing.T) {
	f := asyncio.NewFuture[int](newLoop(t))
	_, err := f.Result()
	check(t, errors.Is(err, asyncio.ErrInvalidState), "result(): InvalidStateError")
	f.SetResult(42)
	check(t, !f.Cancelled(), "not cancelled")
	check(t, f.Done(), "done")
	v, err := f.Result()
	eq(t, v, 42)
	noErr(t, err)
	noErr(t, f.Err(), "exception() is None")
	check(t, errors.Is(f.SetResult(0), asyncio.ErrInvalidState), "set_result: InvalidStateError")
	check(t, errors.Is(f.SetException(exc("RuntimeError")), asyncio.ErrInvalidState), "set_exception: InvalidStateError")
	check(t, !f.Cancel(), "cancel() is False")
}

func TestFutures_test_exception(t *testing.T) {
	e := exc("RuntimeError")
	f := asyncio.NewFuture[int](newLoop(t))
	check(t, errors.Is(f.Err(), asyncio.ErrInvalidState), "exception(): InvalidStateError")
	f.SetException(e)
	check(t, !f.Cancelled(), "not cancelled")
	check(t, f.Done(), "done")
	_, err := f.Result()
	raises(t, err, "RuntimeError", "result()")
	check(t, f.Err() == e, "exception() is exc")
	check(t, errors.Is(f.SetResult(0), asyncio.ErrInvalidState), "set_result: InvalidStateError")
	check(t, errors.Is(f.SetException(e), asyncio.ErrInvalidState), "set_exception: InvalidStateError")
	check(t, !f.Cancel(), "cancel() is False")
}

// neverRetrieved runs make, which creates a future and drops it, next to a
// control future whose exception is never retrieved; it collects garbage
// until the control is reported and returns the messages the exception
// handler got, and the errors.
func neverRetrieved(t *testing.T, debug bool, make func(l *asyncio.Loop)) ([]string, []error) {
	var opts []asyncio.LoopOption
	if debug {
		opts = append(opts, asyncio.WithDebug())
	}
	l := newLoop(t, opts...)
	var msgs []string
	var errs []error
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		msgs = append(msgs, c.Message)
		errs = append(errs, c.Err)
	})
	control := exc("ControlError")
	func() {
		make(l)
		asyncio.NewFuture[int](l).SetException(control)
	}()
	runBriefly(l)
	// The report is handed to the loop from the cleanup's goroutine.
	for i := 0; i < 100 && !containsErr(errs, control); i++ {
		runtime.GC()
		runBriefly(l)
	}
	check(t, containsErr(errs, control), "the control future was reported")
	for range 3 {
		runtime.GC()
		runBriefly(l)
	}
	var outMsgs []string
	var outErrs []error
	for i, e := range errs {
		if e != control {
			outMsgs = append(outMsgs, msgs[i])
			outErrs = append(outErrs, e)
		}
	}
	return outMsgs, outErrs
}

func containsErr(errs []error, e error) bool {
	for _, x := range errs {
		if x == e {
			return true
		}
	}
	return false
}

// tbLoggerNotCalled is the body of the test_tb_logger_* tests that expect
// no report.
func tbLoggerNotCalled(t *testing.T, make func(l *asyncio.Loop)) {
	msgs, _ := neverRetrieved(t, false, make)
	eq(t, msgs, []string(nil), "logger.error called")
}

func TestFutures_test_tb_logger_abandoned(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) { asyncio.NewFuture[int](l) })
}

func TestFutures_test_tb_logger_not_called_after_cancel(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) {
		f := asyncio.NewFuture[int](l)
		f.SetException(exc("Exception"))
		f.Cancel()
	})
}

func TestFutures_test_tb_logger_result_unretrieved(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) { asyncio.NewFuture[int](l).SetResult(42) })
}

func TestFutures_test_tb_logger_result_retrieved(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) {
		f := asyncio.NewFuture[int](l)
		f.SetResult(42)
		f.Result()
	})
}

func TestFutures_test_tb_logger_exception_unretrieved(t *testing.T) {
	boom := exc("RuntimeError", "boom")
	msgs, errs := neverRetrieved(t, false, func(l *asyncio.Loop) { asyncio.NewFuture[int](l).SetException(boom) })
	eq(t, msgs, []string{"Future exception was never retrieved"})
	check(t, len(errs) == 1 && errs[0] == boom, "the error is reported")
}

func TestFutures_test_tb_logger_exception_retrieved(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) {
		f := asyncio.NewFuture[int](l)
		f.SetException(exc("RuntimeError", "boom"))
		f.Err()
	})
}

func TestFutures_test_tb_logger_exception_result_retrieved(t *testing.T) {
	tbLoggerNotCalled(t, func(l *asyncio.Loop) {
		f := asyncio.NewFuture[int](l)
		f.SetException(exc("RuntimeError", "boom"))
		_, err := f.Result()
		raises(t, err, "RuntimeError")
	})
}

// checkFutureExceptionNeverRetrieved is
// check_future_exception_never_retrieved.
func checkFutureExceptionNeverRetrieved(t *testing.T, debug bool) {
	memoryError := exc("MemoryError")
	msgs, errs := neverRetrieved(t, debug, func(l *asyncio.Loop) {
		asyncio.NewFuture[int](l).SetException(memoryError)
	})
	eq(t, msgs, []string{"Future exception was never retrieved"})
	check(t, len(errs) == 1 && errs[0] == memoryError, "exc_info is the exception")
}

func TestFutures_test_future_exception_never_retrieved(t *testing.T) {
	checkFutureExceptionNeverRetrieved(t, false)
}

func TestFutures_test_future_exception_never_retrieved_debug(t *testing.T) {
	checkFutureExceptionNeverRetrieved(t, true)
}

type identResult struct {
	arg   string
	ident uint64
}

func TestFutures_BaseFutureTests_test_wrap_future(t *testing.T) {
	loop := newLoop(t)
	f2 := asyncio.RunInExecutor(loop, func(context.Context) (identResult, error) {
		return identResult{"oi", gid.Current()}, nil
	})
	noErr(t, loop.RunUntilComplete(f2))
	res, _ := f2.Result()
	eq(t, res.arg, "oi")
	check(t, res.ident != gid.Current(), "ran on another goroutine")
}

func TestFutures_test_wrap_future_use_running_loop(t *testing.T) {
	loop := newLoop(t)
	task := asyncio.CreateTask(loop, func(tk *asyncio.T) (*asyncio.Future[string], error) {
		return asyncio.RunInExecutor(tk, func(context.Context) (string, error) { return "oi", nil }), nil
	})
	noErr(t, loop.RunUntilComplete(task))
	f2, _ := task.Result()
	check(t, f2.Loop() == loop, "f2._loop is self.loop")
	noErr(t, loop.RunUntilComplete(f2))
}

func TestFutures_test_wrap_future_cancel(t *testing.T) {
	loop := newLoop(t)
	ran := make(chan error, 1)
	f2 := asyncio.RunInExecutor(loop, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		ran <- ctx.Err()
		return 0, ctx.Err()
	})
	f2.Cancel()
	runBriefly(loop)
	check(t, f2.Cancelled(), "f2 cancelled")
	// f1.cancelled(): the job either never starts or sees its context
	// cancelled.
	select {
	case err := <-ran:
		check(t, errors.Is(err, context.Canceled), "the job's context is cancelled")
	default:
	}
}

func TestFutures_test_wrap_future_cancel2(t *testing.T) {
	loop := newLoop(t)
	finished := make(chan int, 1)
	f2 := asyncio.RunInExecutor(loop, func(ctx context.Context) (int, error) {
		finished <- 42
		return 42, nil
	})
	// f1.set_result(42): the job has finished, with 42, before the cancel.
	eq(t, <-finished, 42, "f1.result()")
	f2.Cancel()
	runBriefly(loop)
	check(t, f2.Cancelled(), "f2 cancelled")
}

func TestFutures_test_callbacks_remove_first_callback(t *testing.T) {
	removeCallbacks(t, []int{0, 0}, []int{17, 100})
}

func TestFutures_test_callbacks_remove_first_and_second_callback(t *testing.T) {
	removeCallbacks(t, []int{0, 1, 0}, []int{100})
}

func TestFutures_test_callbacks_remove_third_callback(t *testing.T) {
	removeCallbacks(t, []int{2, 2}, []int{42, 17})
}

// removeCallbacks registers callbacks appending 42, 17 and 100, removes the
// registrations listed (by index, repeats included), completes the future
// and checks the bag.
func removeCallbacks(t *testing.T, remove []int, want []int) {
	loop := newLoop(t)
	var bag []int
	f := asyncio.NewFuture[string](loop)
	var ids []asyncio.CallbackID
	for _, thing := range []int{42, 17, 100} {
		ids = append(ids, f.AddDoneCallback(func() { bag = append(bag, thing) }))
	}
	for _, i := range remove {
		f.RemoveDoneCallback(ids[i])
	}
	eq(t, bag, []int(nil))
	f.SetResult("foo")
	runBriefly(loop)
	eq(t, bag, want)
	eq(t, result(t, f), "foo")
}

func TestFutures_test_callbacks_invoked_on_set_result(t *testing.T) {
	loop := newLoop(t)
	var bag []int
	f := asyncio.NewFuture[string](loop)
	f.AddDoneCallback(func() { bag = append(bag, 42) })
	f.AddDoneCallback(func() { bag = append(bag, 17) })
	eq(t, bag, []int(nil))
	f.SetResult("foo")
	runBriefly(loop)
	eq(t, bag, []int{42, 17})
	eq(t, result(t, f), "foo")
}

func TestFutures_test_callbacks_invoked_on_set_exception(t *testing.T) {
	loop := newLoop(t)
	var bag []int
	f := asyncio.NewFuture[string](loop)
	f.AddDoneCallback(func() { bag = append(bag, 100) })
	eq(t, bag, []int(nil))
	e := exc("RuntimeError")
	f.SetException(e)
	runBriefly(loop)
	eq(t, bag, []int{100})
	check(t, f.Err() == e, "exception() is exc")
}

func TestFutures_test_remove_done_callback(t *testing.T) {
	loop := newLoop(t)
	var bag []int
	f := asyncio.NewFuture[string](loop)
	cb := func(n int) func() { return func() { bag = append(bag, n) } }
	// Add one cb1 and one cb2.
	cb1 := []asyncio.CallbackID{f.AddDoneCallback(cb(1))}
	cb2 := f.AddDoneCallback(cb(2))
	// One instance of cb2 removed. Now there's only one cb1.
	eq(t, f.RemoveDoneCallback(cb2), 1)
	// Never had any cb3 in there (an id never handed out).
	eq(t, f.RemoveDoneCallback(cb2+1000), 0)
	// After this there will be 6 instances of cb1 and one of cb2.
	f.AddDoneCallback(cb(2))
	for range 5 {
		cb1 = append(cb1, f.AddDoneCallback(cb(1)))
	}
	// Remove all instances of cb1. One cb2 remains.
	removed := 0
	for _, id := range cb1 {
		removed += f.RemoveDoneCallback(id)
	}
	eq(t, removed, 6)
	eq(t, bag, []int(nil))
	f.SetResult("foo")
	runBriefly(loop)
	eq(t, bag, []int{2})
	eq(t, result(t, f), "foo")
}

func TestFutures_test_schedule_callbacks_list_mutation_1(t *testing.T) {
	// see http://bugs.python.org/issue28963: a callback that removes
	// other callbacks while they are being scheduled.
	loop := newLoop(t)
	fut := asyncio.NewFuture[int](loop)
	var strIDs []asyncio.CallbackID
	ran := 0
	removed := -1
	fut.AddDoneCallback(func() {
		removed = 0
		for _, id := range strIDs {
			removed += fut.RemoveDoneCallback(id)
		}
	})
	strIDs = append(strIDs, fut.AddDoneCallback(func() { ran++ }), fut.AddDoneCallback(func() { ran++ }))
	fut.SetResult(1)
	runBriefly(loop)
	eq(t, removed, 0, "nothing left to remove once scheduled")
	eq(t, ran, 2, "the scheduled callbacks ran")
}
