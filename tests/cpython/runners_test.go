package cpython

// CPython 3.13 Lib/test/test_asyncio/test_runners.py. asyncio.run(main())
// is asyncio.Run(main, opts...); asyncio.Runner(debug=...) is
// asyncio.NewRunner(opts...) with RunWith and Close.

import (
	"errors"
	"regexp"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// vt is the loop option of every run here: the virtual clock.
var vt = asyncio.WithVirtualTime()

func TestRunners_test_asyncio_run_return(t *testing.T) {
	v, err := asyncio.Run(func(tk *asyncio.T) (int, error) {
		asyncio.Sleep(tk, 0)
		return 42, nil
	}, vt)
	noErr(t, err)
	eq(t, v, 42)
}

func TestRunners_test_asyncio_run_raises(t *testing.T) {
	_, err := asyncio.Run(func(tk *asyncio.T) (int, error) {
		asyncio.Sleep(tk, 0)
		return 0, exc("ValueError", "spam")
	}, vt)
	raisesRegex(t, err, "ValueError", "spam")
}

func TestRunners_test_asyncio_run_debug(t *testing.T) {
	main := func(expected bool) func(*asyncio.T) (int, error) {
		return func(tk *asyncio.T) (int, error) {
			eq(t, tk.Loop().Debug(), expected, "loop.get_debug()")
			return 0, nil
		}
	}
	asyncio.Run(main(false), vt)
	asyncio.Run(main(true), vt, asyncio.WithDebug())
}

func TestRunners_test_asyncio_run_cancels_hanging_tasks(t *testing.T) {
	var loTask *asyncio.Task[struct{}]
	v, err := asyncio.Run(func(tk *asyncio.T) (int, error) {
		loTask = asyncio.CreateTask(tk, sleepFn(100*ms))
		return 123, nil
	}, vt)
	noErr(t, err)
	eq(t, v, 123)
	check(t, loTask.Done(), "lo_task done")
}

func TestRunners_test_asyncio_run_reports_hanging_tasks_errors(t *testing.T) {
	var loTask *asyncio.Task[struct{}]
	rec := &recorder{}
	v, err := asyncio.Run(func(tk *asyncio.T) (int, error) {
		rec.handle(tk.Loop()) // loop.call_exception_handler = mock
		loTask = asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := asyncio.Sleep(tk, 100*ms); asyncio.IsCancelled(err) {
				return zeroDivision()
			}
			return nil
		}))
		return 123, nil
	}, vt)
	noErr(t, err)
	eq(t, v, 123)
	check(t, loTask.Done(), "lo_task done")
	if eq(t, len(rec.contexts), 1, "call_exception_handler calls"); len(rec.contexts) == 1 {
		c := rec.contexts[0]
		check(t, regexp.MustCompile(`asyncio.run.*shutdown`).MatchString(c.Message), c.Message)
		check(t, c.Task == loTask.T(), "task is lo_task")
		raises(t, c.Err, "ZeroDivisionError")
	}
}

func TestRunners_test_non_debug(t *testing.T) {
	runner := asyncio.NewRunner(vt)
	defer runner.Close()
	check(t, !runner.Loop().Debug(), "not debug")
}

func TestRunners_test_debug(t *testing.T) {
	runner := asyncio.NewRunner(vt, asyncio.WithDebug())
	defer runner.Close()
	check(t, runner.Loop().Debug(), "debug")
}

// runnerClosed checks that get_loop() raises RuntimeError "Runner is
// closed" (r.Loop() panics with it).
func runnerClosed(t *testing.T, runner *asyncio.Runner) {
	t.Helper()
	defer func() {
		err, _ := recover().(error)
		check(t, errors.Is(err, asyncio.ErrRuntime) && regexp.MustCompile("Runner is closed").MatchString(err.Error()),
			"get_loop() raises Runner is closed, got ", err)
	}()
	runner.Loop()
}

func TestRunners_test_run(t *testing.T) {
	runner := asyncio.NewRunner(vt)
	v, err := asyncio.RunWith(runner, func(tk *asyncio.T) (string, error) {
		asyncio.Sleep(tk, 0)
		return "done", nil
	})
	noErr(t, err)
	eq(t, v, "done")
	loop := runner.Loop()
	noErr(t, runner.Close())
	runnerClosed(t, runner)
	check(t, loop.IsClosed(), "loop closed")
}

func TestRunners_test_explicit_close(t *testing.T) {
	runner := asyncio.NewRunner(vt)
	loop := runner.Loop()
	runner.Close()
	runnerClosed(t, runner)
	check(t, loop.IsClosed(), "loop closed")
}

func TestRunners_test_double_close(t *testing.T) {
	runner := asyncio.NewRunner(vt)
	loop := runner.Loop()
	noErr(t, runner.Close())
	check(t, loop.IsClosed(), "loop closed")
	// the second call is no-op
	noErr(t, runner.Close())
	check(t, loop.IsClosed(), "loop closed")
}

func TestRunners_test_second_with_block_raises(t *testing.T) {
	var ret []int
	f := func(arg int) func(*asyncio.T) (int, error) {
		return func(*asyncio.T) (int, error) { ret = append(ret, arg); return 0, nil }
	}
	runner := asyncio.NewRunner(vt)
	asyncio.RunWith(runner, f(1))
	runner.Close()
	_, err := asyncio.RunWith(runner, f(2))
	raisesRegex(t, err, "*asyncio.RuntimeError", "Runner is closed")
	eq(t, ret, []int{1})
}

func TestRunners_test_recursive_run(t *testing.T) {
	runner := asyncio.NewRunner(vt)
	defer runner.Close()
	gRan := false
	_, err := asyncio.RunWith(runner, func(tk *asyncio.T) (int, error) {
		return asyncio.RunWith(runner, func(*asyncio.T) (int, error) { gRan = true; return 0, nil })
	})
	raisesRegex(t, err, "*asyncio.RuntimeError", regexp.QuoteMeta("Runner.run() cannot be called from a running event loop"))
	check(t, !gRan, "g never ran (never awaited)")
}

// myResult counts the calls of its String method (its __repr__).
type myResult struct{ reprCount int }

func (m *myResult) String() string { m.reprCount++; return "<MyResult>" }

func TestRunners_test_no_repr_is_call_on_the_task_result(t *testing.T) {
	// See https://github.com/python/cpython/issues/112559.
	runner := asyncio.NewRunner(vt)
	result, err := asyncio.RunWith(runner, func(*asyncio.T) (*myResult, error) { return &myResult{}, nil })
	runner.Close()
	noErr(t, err)
	eq(t, result.reprCount, 0)
}

func TestRunners_test_asyncio_run_from_running_loop(t *testing.T) {
	var inner error
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		_, inner = asyncio.Run(func(*asyncio.T) (int, error) {
			t.Error("the nested main ran")
			return 0, nil
		})
		return struct{}{}, inner
	}, vt)
	raisesRegex(t, err, "*asyncio.RuntimeError", "cannot be called from a running")
}
