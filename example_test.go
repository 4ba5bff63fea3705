package asyncio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Run is asyncio.run: it runs main as a task on a new loop, then cancels
// and drains whatever is left and closes the loop.
func ExampleRun() {
	v, err := asyncio.Run(func(t *asyncio.T) (string, error) {
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return "", err
		}
		return "done", nil
	})
	fmt.Println(v, err)
	// Output: done <nil>
}

// Tasks start in creation order, one step at a time; Sleep(t, 0) is one
// bare yield that lets every other ready task take a step.
func ExampleCreateTask() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		worker := func(name string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				for i := range 2 {
					fmt.Println(name, "step", i)
					if err := asyncio.Sleep(t, 0); err != nil {
						return 0, err
					}
				}
				return len(name), nil
			}
		}
		a := asyncio.CreateTask(t, worker("a"))
		b := asyncio.CreateTask(t, worker("bb"))
		x, err := a.Await(t)
		if err != nil {
			return struct{}{}, err
		}
		y, err := b.Await(t)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Println("sum", x+y)
		return struct{}{}, nil
	})
	// Output:
	// a step 0
	// bb step 0
	// a step 1
	// bb step 1
	// sum 3
}

// Cancelling a task delivers a CancelledError, carrying the message, at
// the await where the task is suspended; deferred calls run as the task
// unwinds.
func ExampleTask_Cancel() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		task := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			defer fmt.Println("cleanup")
			return 0, asyncio.Sleep(t, time.Hour)
		})
		if err := asyncio.Sleep(t, 0); err != nil { // let it start
			return struct{}{}, err
		}
		fmt.Println("cancel:", task.Cancel("enough"))
		_, err := task.Await(t)
		var ce *asyncio.CancelledError
		fmt.Println(errors.As(err, &ce), ce.Msg, task.Cancelled())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// cancel: true
	// cleanup
	// true enough true
}

// A future's done callbacks are scheduled with CallSoon, in registration
// order, never run inside SetResult.
func ExampleFuture() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	fut := asyncio.NewFuture[int](l)
	fut.AddDoneCallback(func() { v, _ := fut.Result(); fmt.Println("callback sees", v) })
	l.CallSoon(func() {
		fut.SetResult(42)
		fmt.Println("SetResult returned")
	})
	l.RunUntilComplete(fut)
	// Output:
	// SetResult returned
	// callback sees 42
}

// On virtual time a day of sleeping takes no real time at all.
func ExampleNewTestLoop() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (time.Duration, error) {
		err := asyncio.Sleep(t, 24*time.Hour)
		return t.Loop().Time(), err
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	// Output: 24h0m0s <nil>
}

// A test of a 30-second timeout runs in microseconds on virtual time: the
// loop jumps straight to the deadline, where the timeout cancels the
// sleeping body and turns the cancellation into a TimeoutError.
func ExampleNewTestLoop_timeout() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	realStart := time.Now()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (string, error) {
		err := asyncio.Timeout(t, 30*time.Second, func(s *asyncio.TimeoutScope) error {
			return asyncio.Sleep(t, time.Minute) // too slow
		})
		return fmt.Sprintf("at %v: timeout=%v cancelled=%v", t.Loop().Time(),
			errors.Is(err, asyncio.ErrTimeout), asyncio.IsCancelled(err)), nil
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	fmt.Println("real time under a second:", time.Since(realStart) < time.Second)
	// Output:
	// at 30s: timeout=true cancelled=false <nil>
	// real time under a second: true
}

// TaskGroup is "async with asyncio.TaskGroup() as g": the first child
// failure cancels its siblings and the body, and TaskGroup returns every
// failure in an *ExceptionGroup once all children are done.
func ExampleTaskGroup() {
	errDisk := errors.New("disk full")
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			asyncio.Spawn(g, func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, time.Hour); err != nil {
					fmt.Println("slow child:", err)
					return 0, err
				}
				return 1, nil
			})
			asyncio.Spawn(g, func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, time.Second); err != nil {
					return 0, err
				}
				return 0, errDisk
			})
			return asyncio.Sleep(t, time.Hour) // the body is cancelled too
		})
		var eg *asyncio.ExceptionGroup
		fmt.Println(errors.As(err, &eg), errors.Is(err, errDisk), len(eg.Errs))
		fmt.Println(err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// slow child: asyncio: cancelled
	// true true 1
	// unhandled errors in a TaskGroup (1 sub-exception)
}

// Timeout is "async with asyncio.timeout(d)": the deadline cancels the task,
// and the scope turns that cancellation into a *TimeoutError.
func ExampleTimeout() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		err := asyncio.Timeout(t, time.Second, func(s *asyncio.TimeoutScope) error {
			fmt.Println(s)
			return asyncio.Sleep(t, time.Hour)
		})
		fmt.Println(t.Loop().Time(), err, errors.Is(err, asyncio.ErrTimeout), asyncio.IsCancelled(err))
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// <Timeout [active] when=1.0>
	// 1s asyncio: timeout true false
}

// WaitFor is asyncio.wait_for: await with a timeout; on expiry the awaited
// task is cancelled and awaited before the *TimeoutError is returned.
func ExampleWaitFor() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		fast := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "fast", asyncio.Sleep(t, time.Second)
		})
		slow := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "slow", asyncio.Sleep(t, time.Hour)
		})
		fmt.Println(asyncio.WaitFor(t, 2*time.Second, fast))
		_, err := asyncio.WaitFor(t, 2*time.Second, slow)
		fmt.Println(err, slow.Cancelled())
		v, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (int, error) {
			return 42, nil // runs inside the calling task
		})
		fmt.Println(v, err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// fast <nil>
	// asyncio: timeout true
	// 42 <nil>
}

// Gather is asyncio.gather: results in argument order, whatever the
// completion order; GatherOutcomes is return_exceptions=True.
func ExampleGather() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		after := func(d time.Duration, v int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) { return v, asyncio.Sleep(t, d) }
		}
		vs, err := asyncio.GatherFuncs(t, after(3*time.Second, 1), after(time.Second, 2), after(2*time.Second, 3)).Await(t)
		fmt.Println(vs, err)

		bad := asyncio.CreateTask(t, func(*asyncio.T) (int, error) { return 0, errors.New("bad") })
		good := asyncio.CreateTask(t, after(0, 7))
		outs, err := asyncio.GatherOutcomes[int](t, bad, good).Await(t)
		if err != nil { // only a cancellation of the gather itself
			return struct{}{}, err
		}
		fmt.Println(outs)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// [1 2 3] <nil>
	// [{0 bad} {7 <nil>}]
}

// Shield is asyncio.shield: cancelling the waiter does not cancel the
// shielded task.
func ExampleShield() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		save := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "saved", asyncio.Sleep(t, 2*time.Second)
		})
		_, err := asyncio.WaitFor(t, time.Second, asyncio.Shield[string](save))
		fmt.Println(err)
		fmt.Println(save.Await(t))
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// asyncio: timeout
	// saved <nil>
}

// Wait is asyncio.wait: it splits the awaitables into done and pending,
// and never cancels anything.
func ExampleWait() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		a := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, time.Second) })
		b := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 2, asyncio.Sleep(t, time.Hour) })
		done, pending, err := asyncio.Wait(t, []asyncio.Awaitable{a, b}, asyncio.Never, asyncio.FirstCompleted)
		fmt.Println(len(done), len(pending), done[0] == asyncio.Awaitable(a), err)
		b.Cancel()
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output: 1 1 true <nil>
}

// AsCompleted is "async for f in asyncio.as_completed(aws, timeout=...)":
// the awaitables in completion order, then a *TimeoutError if the timeout
// passes first.
func ExampleAsCompleted() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		after := func(d time.Duration, v string) *asyncio.Task[string] {
			return asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { return v, asyncio.Sleep(t, d) })
		}
		aws := []asyncio.AwaitableOf[string]{after(3*time.Second, "c"), after(time.Second, "a"), after(time.Hour, "never")}
		for aw, err := range asyncio.AsCompletedOf(t, aws, 5*time.Second) {
			if err != nil {
				fmt.Println(t.Loop().Time(), err)
				break
			}
			v, _ := aw.Result()
			fmt.Println(t.Loop().Time(), v)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// 1s a
	// 3s c
	// 5s asyncio: timeout
}

// Lock is asyncio.Lock: one holder at a time, waiters served in FIFO
// order.
func ExampleLock() {
	_, _ = asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		lock := asyncio.NewLock()
		var order []string
		worker := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := lock.Acquire(t); err != nil {
					return struct{}{}, err
				}
				defer lock.Release()
				order = append(order, name+" in")
				if err := asyncio.Sleep(t, 0); err != nil { // others queue up meanwhile
					return struct{}{}, err
				}
				order = append(order, name+" out")
				return struct{}{}, nil
			}
		}
		a := asyncio.CreateTask(t, worker("a"))
		b := asyncio.CreateTask(t, worker("b"))
		if err := t.Await(a); err != nil {
			return struct{}{}, err
		}
		if err := t.Await(b); err != nil {
			return struct{}{}, err
		}
		fmt.Println(order)
		return struct{}{}, nil
	})
	// Output: [a in a out b in b out]
}

// Semaphore is asyncio.Semaphore: at most n holders at a time.
func ExampleSemaphore() {
	_, _ = asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		sem := asyncio.NewSemaphore(2) // at most two workers at a time
		active, peak := 0, 0
		var tasks []*asyncio.Task[struct{}]
		for range 5 {
			tasks = append(tasks, asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
				if err := sem.Acquire(t); err != nil {
					return struct{}{}, err
				}
				defer sem.Release()
				active++
				peak = max(peak, active)
				if err := asyncio.Sleep(t, 0); err != nil {
					return struct{}{}, err
				}
				active--
				return struct{}{}, nil
			}))
		}
		for _, task := range tasks {
			if err := t.Await(task); err != nil {
				return struct{}{}, err
			}
		}
		fmt.Println("peak concurrency:", peak)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output: peak concurrency: 2
}

// Queue is asyncio.Queue: Join waits until every item got is marked done,
// and Shutdown wakes a blocked Get with ErrQueueShutDown.
func ExampleQueue() {
	_, _ = asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		q := asyncio.NewQueue[string](1) // a put waits while the queue is full
		consumer := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
			for {
				item, err := q.Get(t)
				if errors.Is(err, asyncio.ErrQueueShutDown) {
					fmt.Println("consumer: queue shut down")
					return struct{}{}, nil
				}
				fmt.Println("got", item)
				_ = q.TaskDone()
			}
		})
		for _, item := range []string{"a", "b", "c"} {
			if err := q.Put(t, item); err != nil {
				return struct{}{}, err
			}
		}
		if err := q.Join(t); err != nil { // every item processed
			return struct{}{}, err
		}
		q.Shutdown(false)
		return struct{}{}, t.Await(consumer)
	}, asyncio.WithVirtualTime())
	// Output:
	// got a
	// got b
	// got c
	// consumer: queue shut down
}

// ToThread is asyncio.to_thread: fn runs on the loop's default executor
// while the loop goes on.
func ExampleToThread() {
	sum, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		// A blocking computation runs on the loop's default executor; the
		// loop keeps running other tasks meanwhile.
		return asyncio.ToThread(t, func(ctx context.Context) (int, error) {
			total := 0
			for i := 1; i <= 100; i++ {
				total += i
			}
			return total, nil
		})
	})
	fmt.Println(sum, err)
	// Output: 5050 <nil>
}

// The watchdog reports a task step that holds the loop with a blocking
// call, while it is still blocked, with the stack of the goroutine making
// that call. Here the step blocks on a channel until the report itself
// arrives (a real program would await the call with asyncio.Go or
// asyncio.ToThread).
func ExampleLoop_SetBlockedThreshold() {
	l := asyncio.NewLoop()
	defer l.Close()
	l.SetBlockedThreshold(50 * time.Millisecond) // default: 1 s
	reports := make(chan asyncio.ExceptionContext, 1)
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		select {
		case reports <- c: // runs on the watchdog's goroutine: do not block
		default:
		}
	})
	task := asyncio.CreateTask(l, func(t *asyncio.T) (bool, error) {
		//asynciovet:ignore blockingcall the example blocks the loop on purpose: the watchdog reports it
		c := <-reports // blocks the loop: every other task waits too
		l.SetBlockedThreshold(0)
		fmt.Println(c.Message[:len("Event loop blocked")])
		return strings.Contains(c.Stack, "ExampleLoop_SetBlockedThreshold"), nil
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	// Output:
	// Event loop blocked
	// true <nil>
}

// OnLoopGoroutine tells code that may run anywhere whether it may call the
// loop directly or must go through CallSoonThreadsafe.
func ExampleLoop_OnLoopGoroutine() {
	l := asyncio.NewLoop()
	defer l.Close()
	schedule := func(fn func()) {
		if l.OnLoopGoroutine() {
			l.CallSoon(fn)
		} else {
			l.CallSoonThreadsafe(fn)
		}
	}
	done := asyncio.NewFuture[string](l)
	task := asyncio.CreateTask(l, func(t *asyncio.T) (string, error) {
		fmt.Println("in the task:", l.OnLoopGoroutine())
		go func() {
			fmt.Println("in a goroutine:", l.OnLoopGoroutine())
			schedule(func() { done.SetResult("scheduled from a goroutine") })
		}()
		return done.Await(t)
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	// Output:
	// in the task: true
	// in a goroutine: false
	// scheduled from a goroutine <nil>
}

// Go awaits a blocking Go call without holding the loop. Its ctx is
// cancelled when the awaiting task is, here by a timeout, and the call
// returns the cancellation at once.
func ExampleGo() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		v, err := asyncio.Go(t, func(ctx context.Context) (string, error) {
			return "a blocking call's result", nil
		})
		fmt.Println(v, err)
		_, err = asyncio.WaitForFunc(t, 10*time.Millisecond, func(t *asyncio.T) (int, error) {
			return asyncio.Go(t, func(ctx context.Context) (int, error) {
				<-ctx.Done() // stands for a call that honours ctx
				return 0, ctx.Err()
			})
		})
		fmt.Println("timed out:", errors.Is(err, asyncio.ErrTimeout))
		return struct{}{}, nil
	})
	// Output:
	// a blocking call's result <nil>
	// timed out: true
}

// net/http, the supported way: http.Client inside Go, with the request
// bound to ctx so that cancelling the task stops it.
func ExampleGo_httpClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	body, err := asyncio.Run(func(t *asyncio.T) (string, error) {
		return asyncio.Go(t, func(ctx context.Context) (string, error) {
			req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/x", nil)
			if err != nil {
				return "", err
			}
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		})
	})
	fmt.Println(body, err)
	// Output: hello from /x <nil>
}

// RunContext cancels main when its context is done: with
// signal.NotifyContext(context.Background(), os.Interrupt) this is Ctrl-C
// handling. The error matches both a cancellation and the cause.
func ExampleRunContext() {
	errInterrupt := errors.New("interrupt")
	ctx, cancel := context.WithCancelCause(context.Background())
	_, err := asyncio.RunContext(ctx, func(t *asyncio.T) (int, error) {
		go cancel(errInterrupt) // stands for the signal
		return 0, asyncio.Sleep(t, time.Hour)
	})
	fmt.Println(err, asyncio.IsCancelled(err), errors.Is(err, errInterrupt))
	// Output: asyncio: cancelled: interrupt true true
}

// A ContextVar is contextvars.ContextVar: a task starts with the values
// its creator had when it was created; Go code reads them from the
// context it is handed.
func ExampleContextVar() {
	requestID := asyncio.NewContextVar("request_id", "-")
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		handle := func() (string, error) {
			return asyncio.Go(t, func(ctx context.Context) (string, error) {
				return "handled " + requestID.Value(ctx), nil
			})
		}
		requestID.Set(t, "a")
		first := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, 0); err != nil {
				return "", err
			}
			return "child sees " + requestID.Get(t), nil
		})
		requestID.Set(t, "b") // the child keeps "a"
		s, err := first.Await(t)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Println(s)
		fmt.Println(handle())
		return struct{}{}, nil
	})
	// Output:
	// child sees a
	// handled b <nil>
}

// Recv receives from a Go channel as an await; a closed channel gives
// ok == false.
func ExampleRecv() {
	squares := make(chan int)
	go func() {
		for i := range 3 {
			squares <- i * i
		}
		close(squares)
	}()
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		for {
			v, ok, err := asyncio.Recv(t, squares)
			if err != nil || !ok {
				return struct{}{}, err
			}
			fmt.Println(v)
		}
	})
	// Output:
	// 0
	// 1
	// 4
}

// Threadsafe lets a goroutine that is not running the loop wait for a
// task and read its result.
func ExampleThreadsafe() {
	l := asyncio.NewLoop()
	defer l.Close()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (string, error) {
		return "hello", asyncio.Sleep(t, time.Millisecond)
	})
	cf := asyncio.Threadsafe[string](task)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cf.Wait(context.Background()); err == nil {
			v, err := cf.Result()
			fmt.Println("goroutine got", v, err)
		}
	}()
	l.RunUntilComplete(task)
	<-done
	// Output: goroutine got hello <nil>
}

// ExpectExternal tells a virtual-time loop that a goroutine of yours will
// complete a future: it waits for it (no time passes) instead of jumping
// to the timeout or reporting a deadlock.
func ExampleLoop_ExpectExternal() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	fut := asyncio.NewFuture[string](l)
	release := l.ExpectExternal()
	go func() {
		defer release()
		l.CallSoonThreadsafe(func() { fut.SetResult("computed elsewhere") })
	}()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (string, error) { return asyncio.WaitFor(t, time.Hour, fut) })
	l.RunUntilComplete(task)
	v, err := task.Result()
	fmt.Println(v, err, l.Time())
	// Output: computed elsewhere <nil> 0s
}

// goroutineExecutor is an Executor that runs each job on a new goroutine.
type goroutineExecutor struct{}

func (goroutineExecutor) Submit(job func()) error { go job(); return nil }

// RunInExecutorOn is loop.run_in_executor(executor, fn) with an executor
// of your own.
func ExampleRunInExecutorOn() {
	v, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		return asyncio.RunInExecutorOn(t, goroutineExecutor{}, func(ctx context.Context) (int, error) {
			return 6 * 7, nil
		}).Await(t)
	})
	fmt.Println(v, err)
	// Output: 42 <nil>
}

// Wait and AsCompleted take a []*Task[V] as it is, and give tasks back;
// Gather takes it through Awaitables. CreateTaskErr makes a task of a
// function with no value.
func ExampleAwaitables() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		tasks := make([]*asyncio.Task[int], 3)
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
				return i, asyncio.Sleep(t, time.Duration(3-i)*time.Second)
			})
		}
		done, pending, err := asyncio.Wait(t, tasks, asyncio.Never, asyncio.FirstCompleted)
		if err != nil {
			return struct{}{}, err
		}
		first, _ := done[0].Result()
		fmt.Println("first done:", first, "still pending:", len(pending))
		all, err := asyncio.Gather(t, asyncio.Awaitables(tasks)...).Await(t)
		fmt.Println(all, err)
		logger := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
			fmt.Println("a task with no value")
			return nil
		})
		_, err = logger.Await(t)
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	// Output:
	// first done: 2 still pending: 2
	// [0 1 2] <nil>
	// a task with no value
}

// Split divides an ExceptionGroup as except* does: the leaves a predicate
// selects, and the rest, nested groups kept.
func ExampleExceptionGroup_Split() {
	eg := &asyncio.ExceptionGroup{Msg: "unhandled errors in a TaskGroup", Errs: []error{
		fs.ErrNotExist,
		errors.New("boom"),
		&asyncio.ExceptionGroup{Msg: "inner", Errs: []error{fs.ErrPermission, fs.ErrNotExist}},
	}}
	notFound, rest := eg.Split(func(err error) bool { return errors.Is(err, fs.ErrNotExist) })
	fmt.Println(notFound)     // Python's str(eg)
	fmt.Printf("%+v\n", rest) // the members, as a traceback lists them
	// Output:
	// unhandled errors in a TaskGroup (2 sub-exceptions)
	// unhandled errors in a TaskGroup (2 sub-exceptions)
	//   1: boom
	//   2: inner (1 sub-exception)
	//     1: permission denied
}

// ExceptStar is a try statement's except* clauses: each handles the
// leaves it matches, and what none handled is returned.
func ExampleExceptStar() {
	err := asyncio.ExceptionGroup{Msg: "unhandled errors in a TaskGroup", Errs: []error{
		fs.ErrNotExist,
		&asyncio.ValueError{Msg: "bad port"},
		fs.ErrPermission,
	}}
	rest := asyncio.ExceptStar(&err,
		asyncio.Except[*asyncio.ValueError](func(eg *asyncio.ExceptionGroup) error {
			fmt.Println("ValueError:", eg.Errs)
			return nil
		}),
		asyncio.ExceptIs(fs.ErrNotExist, func(eg *asyncio.ExceptionGroup) error {
			fmt.Println("not found:", eg.Errs)
			return nil
		}),
	)
	fmt.Printf("%+v\n", rest)
	// Output:
	// ValueError: [asyncio: bad port]
	// not found: [file does not exist]
	// unhandled errors in a TaskGroup (1 sub-exception)
	//   1: permission denied
}

// SetDefaultExecutor is loop.set_default_executor: ToThread and
// RunInExecutor then run their jobs on your executor.
func ExampleLoop_SetDefaultExecutor() {
	v, err := asyncio.Run(func(t *asyncio.T) (string, error) {
		if err := t.Loop().SetDefaultExecutor(goroutineExecutor{}); err != nil {
			return "", err
		}
		return asyncio.ToThread(t, func(ctx context.Context) (string, error) {
			return "ran on a goroutine of the executor", nil
		})
	})
	fmt.Println(v, err)
	// Output: ran on a goroutine of the executor <nil>
}
