package cpython

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// test_threads.py: asyncio.to_thread is asyncio.ToThread, which runs fn
// on the loop's default executor and awaits its result.

func TestThreads_test_to_thread(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		result, err := asyncio.ToThread(tk, func(context.Context) (int, error) {
			sum := 0
			for _, v := range []int{40, 2} {
				sum += v
			}
			return sum, nil
		})
		noErr(t, err)
		eq(t, result, 42)
		return nil
	})
}

func TestThreads_test_to_thread_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		raiseRuntime := func(context.Context) (struct{}, error) {
			return struct{}{}, &asyncio.RuntimeError{Msg: "test"}
		}
		_, err := asyncio.ToThread(tk, raiseRuntime)
		var re *asyncio.RuntimeError
		if check(t, errors.As(err, &re), "RuntimeError", err); re != nil {
			check(t, strings.Contains(re.Error(), "test"), re)
		}
		return nil
	})
}

func TestThreads_test_to_thread_once(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var calls atomic.Int32
		_, err := asyncio.ToThread(tk, func(context.Context) (struct{}, error) {
			calls.Add(1)
			return struct{}{}, nil
		})
		noErr(t, err)
		eq(t, calls.Load(), int32(1), "calls")
		return nil
	})
}

func TestThreads_test_to_thread_concurrent(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var calls atomic.Int32
		fn := func(context.Context) (struct{}, error) {
			calls.Add(1)
			return struct{}{}, nil
		}
		// asyncio.to_thread(func) is a coroutine; gather wraps each in a
		// task. Here each ToThread call is a task's body.
		var futs []asyncio.AwaitableOf[struct{}]
		for range 10 {
			futs = append(futs, asyncio.CreateTask(tk, func(tk *asyncio.T) (struct{}, error) {
				return asyncio.ToThread(tk, fn)
			}))
		}
		_, err := asyncio.Gather(tk, futs...).Await(tk)
		noErr(t, err)
		eq(t, calls.Load(), int32(10), "sum(calls)")
		return nil
	})
}

func TestThreads_test_to_thread_args_kwargs(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// to_thread(func, 'test', something=True): Go closes over the
		// arguments; the function is called once, with them.
		type call struct {
			arg       string
			something bool
		}
		var got []call
		fn := func(arg string, something bool) { got = append(got, call{arg, something}) }
		_, err := asyncio.ToThread(tk, func(context.Context) (struct{}, error) {
			fn("test", true)
			return struct{}{}, nil
		})
		noErr(t, err)
		eq(t, got, []call{{"test", true}}, "calls")
		return nil
	})
}

func TestThreads_test_to_thread_contextvars(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		testCtx := asyncio.NewContextVarNoDefault[string]("test_ctx")
		getCtx := func(ctx context.Context) (string, error) { return testCtx.Value(ctx), nil }
		testCtx.Set(tk, "parrot")
		result, err := asyncio.ToThread(tk, getCtx)
		noErr(t, err)
		eq(t, result, "parrot")
		return nil
	})
}
