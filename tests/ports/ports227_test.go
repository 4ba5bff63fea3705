//go:build unix

package ports_test

// Ports p227 onward (h46): programs taken from what people post about
// asyncio (tutorials, Q&A answers, blog posts; each .py names its source
// at the top), adapted only to be deterministic: a producer/consumer
// with one sentinel per worker in a TaskGroup, asyncio.wait
// FIRST_COMPLETED and cancelling the pending set, a capacity guarded by
// a Condition, Timeout.reschedule, except* over a TaskGroup, Event start
// signals (reused with clear, and set from call_later), two rate
// limiters (a token bucket under a Lock, a semaphore released a period
// late), shield against a shutdown, communicate() under wait_for with a
// kill, a shutdown Event set by a "signal handler" that cancels only the
// program's own tasks, PriorityQueue workers (and the tuple-comparison
// pitfall), and run_in_executor (ports227_bubble_test.go). Same
// conventions as ports_test.go.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p227_queue_sentinel_taskgroup.py

func TestPortQueueSentinelTaskGroup(t *testing.T) {
	runPort(t, cpythonTrace("p227_queue_sentinel_taskgroup"), func(p *probe, tk *asyncio.T) error {
		const numWorkers = 3
		work := []time.Duration{200 * ms, 700 * ms, 500 * ms}

		producer := func(q *asyncio.Queue[*int], n int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for i := range n {
					if err := q.Put(t, &i); err != nil {
						return err
					}
					p.log("put %d qsize %d", i, q.Len())
				}
				for range numWorkers {
					if err := q.Put(t, nil); err != nil { // sentinel per worker
						return err
					}
				}
				p.log("producer done")
				return nil
			}
		}
		consumer := func(name string, q *asyncio.Queue[*int], work time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				handled := 0
				for {
					item, err := q.Get(t)
					if err != nil {
						return 0, err
					}
					if item == nil {
						break
					}
					p.log("%s got %d", name, *item)
					if err := asyncio.Sleep(t, work); err != nil {
						return 0, err
					}
					handled++
				}
				p.log("%s saw the sentinel after %d items", name, handled)
				return handled, nil
			}
		}

		p.restart()
		q := asyncio.NewQueue[*int](3)
		var workers []*asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			if _, err := asyncio.SpawnErr(g, producer(q, 8)); err != nil {
				return err
			}
			for i := range numWorkers {
				w, err := asyncio.Spawn(g, consumer(fmt.Sprintf("w%d", i), q, work[i]))
				if err != nil {
					return err
				}
				workers = append(workers, w)
			}
			return nil
		})
		if err != nil {
			return err
		}
		var handled []int
		for _, w := range workers {
			n, err := w.Result()
			if err != nil {
				return err
			}
			handled = append(handled, n)
		}
		p.log("all done %s empty %s", pints(handled), pb(q.Empty()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p228_first_completed_cancel.py

func TestPortFirstCompletedCancel(t *testing.T) {
	runPort(t, cpythonTrace("p228_first_completed_cancel"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("Task %s: Starting...", name)
				if err := asyncio.Sleep(t, delay); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("Task %s: cancelled while sleeping", name)
					}
					return "", err
				}
				p.log("Task %s: Finished!", name)
				return "Result from " + name, nil
			}
		}

		p.restart()
		task1 := asyncio.CreateTask(tk, worker("A", 300*ms))
		task2 := asyncio.CreateTask(tk, worker("B", 100*ms))
		task3 := asyncio.CreateTask(tk, worker("C", 200*ms))
		tasks := []*asyncio.Task[string]{task1, task2, task3}

		done, pending, err := asyncio.Wait(tk, tasks, asyncio.Never, asyncio.FirstCompleted)
		if err != nil {
			return err
		}
		firstResult, err := done[0].Result()
		if err != nil {
			return err
		}
		p.log("First task completed with result: %s", firstResult)
		p.log("pending %d", len(pending))

		for _, task := range tasks {
			if slices.Contains(pending, task) {
				task.Cancel()
			}
		}
		for _, task := range tasks {
			if slices.Contains(pending, task) {
				if _, err := task.Await(tk); asyncio.IsCancelled(err) {
					p.log("awaited a cancelled task: %s %s", pd(err), pb(task.Cancelled()))
				} else if err != nil {
					return err
				}
			}
		}
		p.log("states %s", pbools(task1.Cancelled(), task2.Cancelled(), task3.Cancelled()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p229_condition_capacity.py

// sharedResource is the program's SharedResource.
type sharedResource struct {
	capacity, inUse, peak int
	condition             *asyncio.Condition
}

func (r *sharedResource) acquire(t *asyncio.T) error {
	return asyncio.WithLock(t, r.condition, func() error {
		if err := r.condition.WaitFor(t, func() bool { return r.inUse < r.capacity }); err != nil {
			return err
		}
		r.inUse++
		r.peak = max(r.peak, r.inUse)
		return nil
	})
}

func (r *sharedResource) release(t *asyncio.T) error {
	return asyncio.WithLock(t, r.condition, func() error {
		r.inUse--
		return r.condition.Notify(1)
	})
}

func TestPortConditionCapacity(t *testing.T) {
	runPort(t, cpythonTrace("p229_condition_capacity"), func(p *probe, tk *asyncio.T) error {
		hold := []time.Duration{200 * ms, 300 * ms, 400 * ms, 500 * ms, 300 * ms}
		p.restart()
		resource := &sharedResource{capacity: 2, condition: asyncio.NewCondition(nil)}

		worker := func(workerID int) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				p.log("Worker %d trying to acquire", workerID)
				if err := resource.acquire(t); err != nil {
					return noValue, err
				}
				p.log("Worker %d acquired resource, in use %d", workerID, resource.inUse)
				if err := asyncio.Sleep(t, hold[workerID]); err != nil {
					return noValue, err
				}
				if err := resource.release(t); err != nil {
					return noValue, err
				}
				p.log("Worker %d released resource", workerID)
				return noValue, nil
			}
		}
		var fns []func(*asyncio.T) (struct{}, error)
		for i := range 5 {
			fns = append(fns, worker(i))
		}
		if _, err := asyncio.GatherFuncs(tk, fns...).Await(tk); err != nil {
			return err
		}
		p.log("in use %d peak %d", resource.inUse, resource.peak)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p230_timeout_reschedule.py

func TestPortTimeoutReschedule(t *testing.T) {
	runPort(t, cpythonTrace("p230_timeout_reschedule"), func(p *probe, tk *asyncio.T) error {
		longTask := func(duration time.Duration) error {
			p.log("Task starting, will run for %.1f seconds.", duration.Seconds())
			if err := asyncio.Sleep(tk, duration); err != nil {
				return err
			}
			p.log("Task finished.")
			return nil
		}
		loop := tk.Loop()
		p.restart()

		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, time.Second, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("Initial deadline: %s", p.rel(s.When()))
			if err := longTask(300 * ms); err != nil {
				return err
			}
			newDeadline := loop.Time() + 500*ms
			if err := s.Reschedule(newDeadline); err != nil {
				return err
			}
			p.log("New deadline set to: %s", p.rel(newDeadline))
			return longTask(400 * ms)
		})
		if err != nil {
			return err
		}
		p.log("Context manager exited gracefully. expired %s", pb(cm.Expired()))

		err = asyncio.Timeout(tk, time.Second, func(s *asyncio.TimeoutScope) error {
			cm = s
			if err := s.Reschedule(500 * ms); err != nil { // BAD: meant as 0.5 s from now
				return err
			}
			p.log("rescheduled to 0.5, in the past: %s", pb(s.When() < loop.Time()))
			return longTask(200 * ms)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("the bad reschedule timed out at once: %s expired %s", pd(err), pb(cm.Expired()))
		} else if err != nil {
			return err
		}

		err = asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("no deadline: %s", p.rel(s.When()))
			if err := longTask(100 * ms); err != nil {
				return err
			}
			if err := s.Reschedule(loop.Time() + 200*ms); err != nil {
				return err
			}
			p.log("deadline now %s", p.rel(s.When()))
			return longTask(500 * ms)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("second part cut short: %s expired %s", pd(err), pb(cm.Expired()))
		} else if err != nil {
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p231_taskgroup_except_star.py

func TestPortTaskGroupExceptStar(t *testing.T) {
	runPort(t, cpythonTrace("p231_taskgroup_except_star"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, delay time.Duration, fail func(string) error) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("Task %s started. Will sleep for %s seconds.", name, pySecs(delay))
				if err := asyncio.Sleep(t, delay); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("Task %s cancelled", name)
					}
					return "", err
				}
				if fail != nil {
					return "", fail(name + " encountered an error!")
				}
				p.log("Task %s finished.", name)
				return "Result from " + name, nil
			}
		}
		mainTaskGroup := func(failures map[string]func(string) error, delays [3]time.Duration) error {
			keys := make([]string, 0, len(failures))
			for k := range failures {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			p.log("Starting TaskGroup example... %s", pstrs(keys))
			var taskA, taskC *asyncio.Task[string]
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				var err error
				if taskA, err = asyncio.Spawn(g, worker("Task A", delays[0], failures["A"])); err != nil {
					return err
				}
				if _, err = asyncio.Spawn(g, worker("Task B", delays[1], failures["B"])); err != nil {
					return err
				}
				taskC, err = asyncio.Spawn(g, worker("Task C", delays[2], failures["C"]))
				return err
			})
			if err == nil {
				a, _ := taskA.Result()
				c, _ := taskC.Result()
				p.log("Task A result: %s", a)
				p.log("Task C result: %s", c)
			}
			err = asyncio.ExceptStar(err,
				asyncio.Except[*valueError](func(eg *asyncio.ExceptionGroup) error {
					p.log("Caught an ExceptionGroup with ValueErrors: %s", pd(eg))
					for _, exc := range eg.Errs {
						p.log("- %s", exc.(*valueError).msg)
					}
					return nil
				}),
				asyncio.Except[*keyError](func(eg *asyncio.ExceptionGroup) error {
					p.log("Caught KeyErrors: %s", pd(eg))
					return nil
				}))
			if err != nil {
				return err
			}
			p.log("TaskGroup example finished. A cancelled %s C cancelled %s", pb(taskA.Cancelled()), pb(taskC.Cancelled()))
			return nil
		}

		standard := [3]time.Duration{300 * ms, 100 * ms, 70 * ms}
		p.restart()
		if err := mainTaskGroup(map[string]func(string) error{"B": newValueError}, standard); err != nil {
			return err
		}
		p.restart()
		if err := mainTaskGroup(map[string]func(string) error{"B": newValueError, "C": newKeyError}, [3]time.Duration{300 * ms, 0, 0}); err != nil {
			return err
		}
		p.restart()
		return mainTaskGroup(map[string]func(string) error{}, standard)
	})
}

// pySecs is str() of a float number of seconds: "0.3", "0" for sleep(0)
// (the program passes the int 0).
func pySecs(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return fmt.Sprint(d.Seconds())
}

// ---------------------------------------------------------------------------
// p232_event_start_signal.py

func TestPortEventStartSignal(t *testing.T) {
	runPort(t, cpythonTrace("p232_event_start_signal"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, i int, ready *asyncio.Event, rounds int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				for r := range rounds {
					p.log("%s: waiting for start signal (round %d)", name, r)
					if err := ready.Wait(t); err != nil {
						return "", err
					}
					p.log("%s: started work", name)
					if err := asyncio.Sleep(t, 100*ms+time.Duration(i)*5*ms); err != nil {
						return "", err
					}
					p.log("%s: done", name)
					// wait for the controller to clear the event before the next round
					for r < rounds-1 && ready.IsSet() {
						if err := asyncio.Sleep(t, 10*ms); err != nil {
							return "", err
						}
					}
				}
				return name, nil
			}
		}

		p.restart()
		ready := asyncio.NewEvent()
		var tasks []*asyncio.Task[string]
		for i := range 3 {
			tasks = append(tasks, asyncio.CreateTask(tk, worker(fmt.Sprintf("W%d", i), i, ready, 2)))
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil { // simulate startup delay
			return err
		}
		p.log("Controller: firing start signal")
		ready.Set() // unblocks ALL waiting coroutines at once
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		p.log("Controller: is_set %s clearing", pb(ready.IsSet()))
		ready.Clear()
		if err := asyncio.Sleep(tk, 230*ms); err != nil {
			return err
		}
		p.log("Controller: firing again")
		ready.Set()
		results, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("results %s", pstrs(results))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p233_event_call_later.py

func TestPortEventCallLater(t *testing.T) {
	runPort(t, cpythonTrace("p233_event_call_later"), func(p *probe, tk *asyncio.T) error {
		setEvent := func(event *asyncio.Event) {
			p.log("setting event in callback")
			event.Set()
		}
		coro := func(name string, event *asyncio.Event) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s waiting for event", name)
				if err := event.Wait(t); err != nil {
					return "", err
				}
				p.log("%s triggered", name)
				return name, nil
			}
		}
		loop := tk.Loop()

		p.restart()
		event := asyncio.NewEvent()
		p.log("event start state: %s", pb(event.IsSet()))
		handle := loop.CallLater(100*ms, func() { setEvent(event) })
		tasks := []*asyncio.Task[string]{asyncio.CreateTask(tk, coro("coro2", event)), asyncio.CreateTask(tk, coro("coro1", event))}
		done, pending, err := asyncio.Wait(tk, tasks, asyncio.Never, asyncio.AllCompleted)
		if err != nil {
			return err
		}
		p.log("event end state: %s", pb(event.IsSet()))
		var names []string
		for _, d := range done {
			name, err := d.Result()
			if err != nil {
				return err
			}
			names = append(names, name)
		}
		sort.Strings(names)
		p.log("done %s pending %d handle cancelled %s", pstrs(names), len(pending), pb(handle.Cancelled()))
		// a second wait, with a timeout shorter than the callback's delay
		event.Clear()
		loop.CallLater(300*ms, func() { setEvent(event) })
		waiter := asyncio.CreateTask(tk, coro("coro1", event))
		done, pending, err = asyncio.Wait(tk, []*asyncio.Task[string]{waiter}, 200*ms, asyncio.AllCompleted)
		if err != nil {
			return err
		}
		p.log("after the timeout: done %d pending %d", len(done), len(pending))
		if _, err := waiter.Await(tk); err != nil {
			return err
		}
		p.log("event end state: %s", pb(event.IsSet()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p234_token_bucket.py

// lockedTokenBucket is the program's RateLimiter. The times are the
// loop's (time.Duration, README "Where Go differs": loop.time() is float
// seconds), so elapsed is exact: with float seconds 0.6 - 0.4 is a hair
// under 0.2 and the bucket a hair under a token, where CPython's clock has
// always moved a little more than asked.
type lockedTokenBucket struct {
	rate       float64
	period     float64
	tokens     float64
	lastRefill time.Duration
	lock       *asyncio.Lock
	waits      int
	loop       *asyncio.Loop
}

func (b *lockedTokenBucket) refill() {
	now := b.loop.Time()
	elapsed := (now - b.lastRefill).Seconds()
	b.tokens = min(b.rate, b.tokens+elapsed*(b.rate/b.period))
	b.lastRefill = now
}

func (b *lockedTokenBucket) acquire(t *asyncio.T) error {
	return asyncio.WithLock(t, b.lock, func() error {
		b.refill()
		for b.tokens < 1 {
			b.waits++
			if err := asyncio.Sleep(t, pyDuration((1-b.tokens)*(b.period/b.rate))); err != nil {
				return err
			}
			b.refill()
		}
		b.tokens--
		return nil
	})
}

// pyDuration is a float number of seconds as asyncio.sleep takes it,
// rounded up to the nanosecond: asyncio.sleep never ends early, and on
// virtual time a sleep cut short by the rounding would leave the bucket a
// hair under a token, for a further sleep of 0 ns (CPython's real clock
// always moves a little more than asked).
func pyDuration(secs float64) time.Duration {
	return time.Duration(math.Ceil(secs * float64(time.Second)))
}

func TestPortLockedTokenBucket(t *testing.T) {
	runPort(t, cpythonTrace("p234_token_bucket"), func(p *probe, tk *asyncio.T) error {
		makeRequest := func(limiter *lockedTokenBucket, i int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				p.log("request %d: waiting for a token", i)
				if err := limiter.acquire(t); err != nil {
					return 0, err
				}
				p.log("request %d: sent, whole tokens left %d", i, int(limiter.tokens))
				if err := asyncio.Sleep(t, 5*ms); err != nil {
					return 0, err
				}
				return i, nil
			}
		}

		p.restart()
		loop := tk.Loop()
		limiter := &lockedTokenBucket{rate: 3, period: 0.6, tokens: 3, lastRefill: loop.Time(), lock: asyncio.NewLock(), loop: loop}
		var tasks []*asyncio.Task[int]
		for i := range 6 {
			tasks = append(tasks, asyncio.CreateTask(tk, makeRequest(limiter, i)))
		}
		results, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("results %s waits %d locked %s", pints(results), limiter.waits, pb(limiter.lock.Locked()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p235_semaphore_period.py

func TestPortSemaphorePeriod(t *testing.T) {
	runPort(t, cpythonTrace("p235_semaphore_period"), func(p *probe, tk *asyncio.T) error {
		semaphore := asyncio.NewSemaphore(3)
		const period = 540 * ms
		// limited is `async with limiter: body`: __aexit__ sleeps the
		// period, then releases.
		limited := func(t *asyncio.T, body func() error) error {
			if err := semaphore.Acquire(t); err != nil {
				return err
			}
			bodyErr := body()
			if err := asyncio.Sleep(t, period); err != nil {
				return err
			}
			if err := semaphore.Release(); err != nil {
				return err
			}
			return bodyErr
		}
		server := func(t *asyncio.T, i int) (string, error) {
			if err := asyncio.Sleep(t, time.Duration(i)*10*ms); err != nil {
				return "", err
			}
			return fmt.Sprintf("%.1f", (t.Loop().Time() - p.t0).Seconds()), nil
		}
		call := func(i int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				var stamp string
				err := limited(t, func() error {
					var err error
					if stamp, err = server(t, i); err != nil {
						return err
					}
					p.log("call %d answered at %s, semaphore locked %s", i, stamp, pb(semaphore.Locked()))
					return nil
				})
				return stamp, err
			}
		}

		p.restart()
		var fns []func(*asyncio.T) (string, error)
		for i := range 7 {
			fns = append(fns, call(i))
		}
		stamps, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		if err != nil {
			return err
		}
		p.log("stamps %s", pstrs(stamps))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p236_shield_shutdown.py

func TestPortShieldShutdown(t *testing.T) {
	p := &probe{}
	var late []string
	mainReturned := false
	say := func(msg string) {
		if mainReturned {
			late = append(late, msg)
		} else {
			p.log("%s", msg)
		}
	}
	worker := func(n int) func(*asyncio.T) error {
		return func(t *asyncio.T) error {
			say(fmt.Sprintf("[%d] Started!", n))
			// this is a task that shouldn't be canceled in the middle
			if err := asyncio.Sleep(t, 500*ms+time.Duration(n)*5*ms); asyncio.IsCancelled(err) {
				say(fmt.Sprintf("[%d] Canceled (this is bad)!", n))
			} else if err != nil {
				return err
			} else {
				say(fmt.Sprintf("[%d] Successfully done!", n))
			}
			return nil
		}
	}
	example1 := func(t *asyncio.T) error {
		var tasks []*asyncio.Task[struct{}]
		for n := range 3 {
			tasks = append(tasks, asyncio.CreateTaskErr(t, worker(n)))
		}
		_, err := asyncio.Gather(t, asyncio.Awaitables(tasks)...).Await(t)
		return err
	}
	example2 := func(t *asyncio.T) error {
		var tasks []asyncio.AwaitableOf[struct{}]
		for n := range 3 {
			tasks = append(tasks, asyncio.Shield[struct{}](asyncio.CreateTaskErr(t, worker(n))))
		}
		_, err := asyncio.Gather(t, tasks...).Await(t)
		return err
	}
	example3 := func(t *asyncio.T) error {
		var tasks []*asyncio.Task[struct{}]
		for n := range 3 {
			tasks = append(tasks, asyncio.CreateTaskErr(t, worker(n)))
		}
		var shielded []asyncio.AwaitableOf[struct{}]
		for _, task := range tasks {
			shielded = append(shielded, asyncio.Shield[struct{}](task))
		}
		_, err := asyncio.Gather(t, shielded...).Await(t)
		if asyncio.IsCancelled(err) {
			p.log("main cancelled: waiting for the workers")
			done, pending, werr := asyncio.Wait(t, tasks, asyncio.Never, asyncio.AllCompleted)
			if werr != nil {
				return werr
			}
			p.log("workers finished %d pending %d", len(done), len(pending))
		}
		return err
	}
	interrupt := func(tk *asyncio.T, app func(*asyncio.T) error, after time.Duration) error {
		task := asyncio.CreateTaskErr(tk, app)
		if err := asyncio.Sleep(tk, after); err != nil {
			return err
		}
		p.log("^C")
		task.Cancel()
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("App was interrupted")
		} else if err != nil {
			return err
		} else {
			p.log("App was finished gracefully")
		}
		return nil
	}

	for _, ex := range []struct {
		name string
		fn   func(*asyncio.T) error
	}{{"example1", example1}, {"example2", example2}, {"example3", example3}} {
		fmt.Fprintf(&p.b, "--- %s\n", ex.name)
		late = nil
		mainReturned = false
		_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
			p.l = tk.Loop()
			p.restart()
			if err := interrupt(tk, ex.fn, 200*ms); err != nil {
				return noValue, err
			}
			p.log("main returns")
			mainReturned = true
			return noValue, nil
		}, asyncio.WithVirtualTime())
		if err != nil {
			t.Fatalf("%s: %v\ntrace so far:\n%s", ex.name, err, p.b.String())
		}
		sort.Strings(late)
		fmt.Fprintf(&p.b, "after asyncio.run: %s\n", pstrs(late))
	}
	if want, got := cpythonTrace("p236_shield_shutdown"), p.b.String(); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p237_communicate_timeout.py

func TestPortCommunicateTimeout(t *testing.T) {
	runPort(t, cpythonTrace("p237_communicate_timeout"), func(p *probe, tk *asyncio.T) error {
		type output struct{ stdout, stderr string }
		runWithTimeout := func(command string, timeout time.Duration) (output, error) {
			secs := "None"
			if timeout != asyncio.Never {
				secs = fmt.Sprintf("%.1f", timeout.Seconds())
			}
			p.log("Executing: %s with a %s second timeout...", command, secs)
			proc, err := aio.CreateSubprocessShell(tk, command, aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
			if err != nil {
				return output{}, err
			}
			out, err := asyncio.WaitForFunc(tk, timeout, func(t *asyncio.T) (output, error) {
				stdout, stderr, err := proc.Communicate(t, nil)
				return output{strings.TrimSpace(string(stdout)), strings.TrimSpace(string(stderr))}, err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("Timeout! Killing process...")
				if err := proc.Kill(); err != nil {
					return output{}, err
				}
				// It's good practice to wait for it to actually terminate after killing
				rc, werr := proc.Wait(tk)
				if werr != nil {
					return output{}, werr
				}
				p.log("killed, return code %d", rc)
				return output{}, err
			} else if err != nil {
				return output{}, err
			}
			rc, _ := proc.ReturnCode()
			p.log("Process finished with return code: %d", rc)
			return out, nil
		}

		p.restart()
		// The commands that finish at once have no timeout: on virtual time a
		// pending timeout next to a real child fires at once (README,
		// "Virtual time for tests"), as in p102.
		out, err := runWithTimeout("echo 'Hello'", asyncio.Never)
		if err != nil {
			return err
		}
		p.log("STDOUT: %s", out.stdout)
		p.restart()
		if _, err := runWithTimeout("echo partial; exec sleep 30", 200*ms); errors.Is(err, asyncio.ErrTimeout) {
			p.log("Caught the timeout: %s", pd(err))
		} else if err != nil {
			return err
		}
		p.restart()
		out, err = runWithTimeout("echo out; echo oops >&2; exit 3", asyncio.Never)
		if err != nil {
			return err
		}
		p.log("STDOUT: %s STDERR: %s", out.stdout, out.stderr)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p238_shutdown_event.py

// libraryClient is the program's LibraryClient: a third-party library
// with a task of its own.
type libraryClient struct {
	flushed int
	task    *asyncio.Task[struct{}]
}

func newLibraryClient(tk *asyncio.T) *libraryClient {
	c := &libraryClient{}
	c.task = asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
		for {
			if err := asyncio.Sleep(t, 110*ms); err != nil {
				return err
			}
			c.flushed++
		}
	})
	return c
}

func (c *libraryClient) close(p *probe, tk *asyncio.T) error {
	c.task.Cancel()
	if _, err := c.task.Await(tk); err != nil && !asyncio.IsCancelled(err) {
		return err
	}
	p.log("library closed after %d flushes", c.flushed)
	return nil
}

func TestPortShutdownEvent(t *testing.T) {
	runPort(t, cpythonTrace("p238_shutdown_event"), func(p *probe, tk *asyncio.T) (err error) {
		handleSignal := func(s string, e *asyncio.Event) {
			p.log("signal %s received: setting the shutdown event", s)
			e.Set() // just signal, don't execute
		}
		worker := func(name string, period time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				n := 0
				for {
					err := asyncio.Sleep(t, period)
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled after %d ticks, cleaning up", name, n)
						if err := asyncio.Sleep(t, 20*ms); err != nil {
							return err
						}
						p.log("%s clean", name)
						return err
					} else if err != nil {
						return err
					}
					n++
					p.log("%s tick %d", name, n)
				}
			}
		}

		p.restart()
		loop := tk.Loop()
		event := asyncio.NewEvent()
		loop.CallLater(360*ms, func() { handleSignal("SIGTERM", event) })
		lib := newLibraryClient(tk)
		defer func() {
			if cerr := lib.close(p, tk); err == nil {
				err = cerr
			}
		}()
		var tasks []*asyncio.Task[struct{}]
		err = asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, w := range []struct {
				name   string
				period time.Duration
			}{{"fast", 100 * ms}, {"slow", 220 * ms}} {
				task, err := asyncio.SpawnErr(g, worker(w.name, w.period))
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			if err := event.Wait(tk); err != nil {
				return err
			}
			// signal received, now it's time to execute the shutdown
			p.log("shutting down %d tasks; library task done: %s", len(tasks), pb(lib.task.Done()))
			for _, task := range tasks {
				task.Cancel() // <- the solution, cancel just our own tasks
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.log("task group exited %s", pbools(tasks[0].Cancelled(), tasks[1].Cancelled()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p239_priority_queue_workers.py

// prioItem is a (priority, task) tuple; job stands for a dict in the
// second place, which Python cannot order.
type prioItem struct {
	priority int
	task     string
	job      map[string]string
}

// prioLess is tuple comparison: the priorities, then the second elements
// (two dicts: TypeError, raised from inside heappush).
func prioLess(a, b prioItem) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.job != nil || b.job != nil {
		panic(newTypeError("'<' not supported between instances of 'dict' and 'dict'"))
	}
	return a.task < b.task
}

func TestPortPriorityQueueWorkers(t *testing.T) {
	runPort(t, cpythonTrace("p239_priority_queue_workers"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, queue *asyncio.Queue[prioItem], work time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					item, err := queue.Get(t)
					if err != nil {
						return err
					}
					p.log("Worker %s is processing task: '%s' with priority %d", name, item.task, item.priority)
					if err := asyncio.Sleep(t, work); err != nil { // Simulate some work
						return err
					}
					if err := queue.TaskDone(); err != nil {
						return err
					}
				}
			}
		}
		putNowait := func(queue *asyncio.Queue[prioItem], item prioItem) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = r.(error)
				}
			}()
			return queue.PutNowait(item)
		}

		p.restart()
		queue := asyncio.NewPriorityQueue[prioItem](0, prioLess)
		p.log("Putting tasks into the queue...")
		for _, it := range []prioItem{{10, "Low Priority Task", nil}, {1, "High Priority Task", nil}, {5, "Medium Priority Task", nil}, {1, "Another High Priority Task", nil}} {
			if err := putNowait(queue, it); err != nil {
				return err
			}
		}
		workers := []*asyncio.Task[struct{}]{
			asyncio.CreateTaskErr(tk, worker("A", queue, 200*ms)),
			asyncio.CreateTaskErr(tk, worker("B", queue, 310*ms)),
		}
		if err := asyncio.Sleep(tk, 260*ms); err != nil {
			return err
		}
		p.log("second batch, qsize %d", queue.Len())
		if err := putNowait(queue, prioItem{3, "Urgent Report", nil}); err != nil {
			return err
		}
		if err := putNowait(queue, prioItem{0, "Critical Fix", nil}); err != nil {
			return err
		}
		if err := queue.Join(tk); err != nil {
			return err
		}
		p.log("All tasks processed, qsize %d", queue.Len())
		for _, w := range workers {
			w.Cancel()
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(workers)...).Await(tk)
		if err != nil {
			return err
		}
		var ds []string
		for _, r := range results {
			ds = append(ds, pd(r.Err))
		}
		p.log("workers %s", pstrs(ds))

		// the pitfall: a tie on priority compares the second elements
		if err := putNowait(queue, prioItem{2, "", map[string]string{"job": "a"}}); err != nil {
			return err
		}
		if err := putNowait(queue, prioItem{2, "", map[string]string{"job": "b"}}); err != nil {
			var te *typeError
			if !errors.As(err, &te) {
				return err
			}
			p.log("TypeError: %s", te.msg)
		}
		p.log("qsize after the failed put %d", queue.Len())
		return nil
	})
}
