package cpython

// CPython 3.13 Lib/test/test_asyncio/test_queues.py. The join and shutdown
// tests, which CPython runs for Queue, LifoQueue and PriorityQueue, run for
// the three kinds here too. Private state (q._getters, q._putters,
// q._format()) is read from the repr, which shows it.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// queueKinds is QueueJoinTests / LifoQueueJoinTests / PriorityQueueJoinTests
// (and the Shutdown variants): q_class(maxsize).
var queueKinds = []struct {
	name string
	make func(maxsize int) *asyncio.Queue[any]
}{
	{"Queue", func(n int) *asyncio.Queue[any] { return asyncio.NewQueue[any](n) }},
	{"LifoQueue", func(n int) *asyncio.Queue[any] { return asyncio.NewLifoQueue[any](n) }},
	{"PriorityQueue", func(n int) *asyncio.Queue[any] {
		return asyncio.NewPriorityQueue[any](n, func(a, b any) bool { return fmt.Sprint(a) < fmt.Sprint(b) })
	}},
}

// forEachKind runs body as a subtest for each queue kind.
func forEachKind(t *testing.T, body func(t *testing.T, newQ func(maxsize int) *asyncio.Queue[any])) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) { body(t, k.make) })
	}
}

func TestQueues_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		check(t, strings.HasPrefix(q.String(), "<Queue"), q)
		check(t, strings.Contains(q.String(), fmt.Sprintf("%p", q)), "the id appears: ", q)
		// getters
		q = asyncio.NewQueue[int](0)
		var getter *asyncio.Task[int]
		noErr(t, asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			// Start a task that waits to get.
			getter = spawn(t, g, q.Get)
			// Let it start waiting.
			asyncio.Sleep(tk, 0)
			check(t, strings.Contains(q.String(), "_getters[1]"), q)
			q.PutNowait(0)
			return nil
		}))
		eq(t, result(t, getter), 0)
		// putters
		q = asyncio.NewQueue[int](1)
		var putter *asyncio.Task[struct{}]
		noErr(t, asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			q.PutNowait(1)
			// Start a task that waits to put.
			putter = spawn(t, g, fn0(func(tk *asyncio.T) error { return q.Put(tk, 2) }))
			// Let it start waiting.
			asyncio.Sleep(tk, 0)
			check(t, strings.Contains(q.String(), "_putters[1]"), q)
			q.GetNowait()
			return nil
		}))
		check(t, putter.Done(), "putter done")
		q = asyncio.NewQueue[int](0)
		q.PutNowait(1)
		check(t, strings.Contains(q.String(), "_queue=[1]"), q)
		return nil
	})
}

func TestQueues_test_empty(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		check(t, q.Empty(), "empty")
		noErr(t, q.Put(tk, 1))
		check(t, !q.Empty(), "not empty")
		v, err := q.Get(tk)
		noErr(t, err)
		eq(t, v, 1)
		check(t, q.Empty(), "empty")
		return nil
	})
}

func TestQueues_test_full(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		check(t, !q.Full(), "not full")
		q = asyncio.NewQueue[int](1)
		noErr(t, q.Put(tk, 1))
		check(t, q.Full(), "full")
		return nil
	})
}

// getOrder puts 1, 3, 2 and gets three items.
func getOrder(t *testing.T, tk *asyncio.T, q *asyncio.Queue[int]) []int {
	for _, i := range []int{1, 3, 2} {
		noErr(t, q.Put(tk, i))
	}
	var items []int
	for range 3 {
		v, err := q.Get(tk)
		noErr(t, err)
		items = append(items, v)
	}
	return items
}

func TestQueues_QueueBasicTests_test_order(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		eq(t, getOrder(t, tk, asyncio.NewQueue[int](0)), []int{1, 3, 2})
		return nil
	})
}

func TestQueues_LifoQueueTests_test_order(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		eq(t, getOrder(t, tk, asyncio.NewLifoQueue[int](0)), []int{2, 3, 1})
		return nil
	})
}

func TestQueues_PriorityQueueTests_test_order(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		eq(t, getOrder(t, tk, asyncio.NewPriorityQueue[int](0, func(a, b int) bool { return a < b })), []int{1, 2, 3})
		return nil
	})
}

func TestQueues_test_maxsize(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](2)
		eq(t, q.Cap(), 2)
		var haveBeenPut []int
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			for i := range 3 {
				if err := q.Put(tk, i); err != nil {
					return false, err
				}
				haveBeenPut = append(haveBeenPut, i)
			}
			return true, nil
		})
		for range 2 {
			asyncio.Sleep(tk, 0)
		}
		// The putter is blocked after putting two items.
		eq(t, haveBeenPut, []int{0, 1})
		v, _ := q.Get(tk)
		eq(t, v, 0)
		// Let the putter resume and put last item.
		asyncio.Sleep(tk, 0)
		eq(t, haveBeenPut, []int{0, 1, 2})
		v, _ = q.Get(tk)
		eq(t, v, 1)
		v, _ = q.Get(tk)
		eq(t, v, 2)
		check(t, task.Done() && result2(task), "done with True")
		return nil
	})
}

func TestQueues_test_blocking_get(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		q.PutNowait(1)
		v, err := q.Get(tk)
		noErr(t, err)
		eq(t, v, 1)
		return nil
	})
}

func TestQueues_test_get_with_putters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](1)
		noErr(t, q.Put(tk, 1))
		// q._putters.append(waiter): a real putter waits instead.
		putter := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return q.Put(tk, 2) }))
		asyncio.Sleep(tk, 0)
		check(t, strings.Contains(q.String(), "_putters[1]"), q)
		v, err := q.Get(tk)
		noErr(t, err)
		eq(t, v, 1)
		// The waiter was woken (done) and left _putters.
		check(t, !strings.Contains(q.String(), "_putters"), q)
		_, err = putter.Await(tk)
		noErr(t, err)
		return nil
	})
}

func TestQueues_test_blocking_get_wait(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		started := asyncio.NewEvent()
		finished := false
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (int, error) {
			started.Set()
			res, err := q.Get(tk)
			finished = true
			return res, err
		})
		started.Wait(tk)
		check(t, !finished, "not finished")
		tk.Loop().CallLater(10*ms, func() { q.PutNowait(1) })
		res, err := task.Await(tk)
		noErr(t, err)
		check(t, finished, "finished")
		eq(t, res, 1)
		return nil
	})
}

func TestQueues_test_nonblocking_get(t *testing.T) {
	q := asyncio.NewQueue[int](0)
	q.PutNowait(1)
	v, err := q.GetNowait()
	noErr(t, err)
	eq(t, v, 1)
}

func TestQueues_test_nonblocking_get_exception(t *testing.T) {
	_, err := asyncio.NewQueue[int](0).GetNowait()
	check(t, err == asyncio.ErrQueueEmpty, "QueueEmpty, got ", err)
}

func TestQueues_test_get_cancelled_race(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[string](0)
		t1 := asyncio.CreateTask(tk, q.Get)
		t2 := asyncio.CreateTask(tk, q.Get)
		asyncio.Sleep(tk, 0)
		t1.Cancel()
		asyncio.Sleep(tk, 0)
		check(t, t1.Done(), "t1 done")
		noErr(t, q.Put(tk, "a"))
		asyncio.Sleep(tk, 0)
		v, err := t2.Await(tk)
		noErr(t, err)
		eq(t, v, "a")
		return nil
	})
}

func TestQueues_test_get_with_waiting_putters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[string](1)
		asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return q.Put(tk, "a") }))
		asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return q.Put(tk, "b") }))
		v, _ := q.Get(tk)
		eq(t, v, "a")
		v, _ = q.Get(tk)
		eq(t, v, "b")
		return nil
	})
}

func TestQueues_test_why_are_getters_waiting(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		const n = 5
		q := asyncio.NewQueue[int](1)
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, fn0(func(tk *asyncio.T) error { // producer
				for i := range n {
					if err := q.Put(tk, i); err != nil {
						return err
					}
				}
				return nil
			}))
			spawn(t, g, fn0(func(tk *asyncio.T) error { // consumer
				for range n {
					if _, err := q.Get(tk); err != nil {
						return err
					}
				}
				return nil
			}))
			return nil
		})
	})
}

func TestQueues_test_cancelled_getters_not_being_held_in_self_getters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		queue := asyncio.NewQueue[int](5)
		_, err := asyncio.WaitForFunc(tk, 100*ms, queue.Get)
		raises(t, err, "TimeoutError")
		check(t, !strings.Contains(queue.String(), "_getters"), "len(queue._getters) == 0: ", queue)
		return nil
	})
}

func TestQueues_test_blocking_put(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		// No maxsize, won't block.
		noErr(t, q.Put(tk, 1))
		v, _ := q.Get(tk)
		eq(t, v, 1)
		return nil
	})
}

func TestQueues_test_blocking_put_wait(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](1)
		started := asyncio.NewEvent()
		finished := false
		tk.Loop().CallLater(10*ms, func() { q.GetNowait() })
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			started.Set()
			if err := q.Put(tk, 1); err != nil {
				return err
			}
			if err := q.Put(tk, 2); err != nil {
				return err
			}
			finished = true
			return nil
		}))
		started.Wait(tk)
		check(t, !finished, "not finished")
		_, err := task.Await(tk)
		noErr(t, err)
		check(t, finished, "finished")
		return nil
	})
}

func TestQueues_test_nonblocking_put(t *testing.T) {
	q := asyncio.NewQueue[int](0)
	noErr(t, q.PutNowait(1))
	v, _ := q.GetNowait()
	eq(t, v, 1)
}

func TestQueues_test_get_cancel_drop_one_pending_reader(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		reader := asyncio.CreateTask(tk, q.Get)
		asyncio.Sleep(tk, 0)
		q.PutNowait(1)
		q.PutNowait(2)
		reader.Cancel()
		if _, err := reader.Await(tk); asyncio.IsCancelled(err) {
			// try again
			reader = asyncio.CreateTask(tk, q.Get)
			reader.Await(tk)
		}
		// if we get 2, it means 1 got dropped!
		eq(t, result(t, reader), 1)
		return nil
	})
}

func TestQueues_test_get_cancel_drop_many_pending_readers(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		var reader2, reader3 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			reader1 := spawn(t, g, q.Get)
			reader2 = spawn(t, g, q.Get)
			reader3 = spawn(t, g, q.Get)
			asyncio.Sleep(tk, 0)
			q.PutNowait(1)
			q.PutNowait(2)
			reader1.Cancel()
			_, err := reader1.Await(tk)
			cancelled(t, err)
			_, err = reader3.Await(tk)
			return err
		})
		noErr(t, err)
		// It is undefined in which order concurrent readers receive results.
		got := []int{result(t, reader2), result(t, reader3)}
		slices.Sort(got)
		eq(t, got, []int{1, 2})
		return nil
	})
}

func TestQueues_test_put_cancel_drop(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](1)
		q.PutNowait(1)
		// putting a second item in the queue has to block (qsize=1)
		put2 := fn0(func(tk *asyncio.T) error { return q.Put(tk, 2) })
		writer := asyncio.CreateTask(tk, put2)
		asyncio.Sleep(tk, 0)
		value1, _ := q.GetNowait()
		eq(t, value1, 1)
		writer.Cancel()
		if _, err := writer.Await(tk); asyncio.IsCancelled(err) {
			// try again
			writer = asyncio.CreateTask(tk, put2)
			writer.Await(tk)
		}
		value2, _ := q.GetNowait()
		eq(t, value2, 2)
		eq(t, q.Len(), 0)
		return nil
	})
}

func TestQueues_test_nonblocking_put_exception(t *testing.T) {
	q := asyncio.NewQueue[int](1)
	q.PutNowait(1)
	check(t, q.PutNowait(2) == asyncio.ErrQueueFull, "QueueFull")
}

func TestQueues_test_put_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[int](0)
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			if err := q.Put(tk, 1); err != nil {
				return false, err
			}
			return true, nil
		})
		v, _ := q.Get(tk)
		eq(t, v, 1)
		check(t, task.Done() && result2(task), "done with True")
		return nil
	})
}

func TestQueues_test_put_cancelled_race(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[string](1)
		put := func(v string) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error { return q.Put(tk, v) })
		}
		putA := asyncio.CreateTask(tk, put("a"))
		putB := asyncio.CreateTask(tk, put("b"))
		putC := asyncio.CreateTask(tk, put("X"))
		asyncio.Sleep(tk, 0)
		check(t, putA.Done(), "put_a done")
		check(t, !putB.Done(), "put_b not done")
		putC.Cancel()
		asyncio.Sleep(tk, 0)
		check(t, putC.Done(), "put_c done")
		v, _ := q.GetNowait()
		eq(t, v, "a")
		asyncio.Sleep(tk, 0)
		v, _ = q.GetNowait()
		eq(t, v, "b")
		_, err := putB.Await(tk)
		return err
	})
}

func TestQueues_test_put_with_waiting_getters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		q := asyncio.NewQueue[string](0)
		task := asyncio.CreateTask(tk, q.Get)
		asyncio.Sleep(tk, 0)
		noErr(t, q.Put(tk, "a"))
		v, err := task.Await(tk)
		noErr(t, err)
		eq(t, v, "a")
		return nil
	})
}

func TestQueues_test_why_are_putters_waiting(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		queue := asyncio.NewQueue[int](2)
		putter := func(item int) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error { return queue.Put(tk, item) })
		}
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, fn0(func(tk *asyncio.T) error { // getter
				asyncio.Sleep(tk, 0)
				num := queue.Len()
				for range num {
					queue.GetNowait()
				}
				return nil
			}))
			for i := range 4 {
				spawn(t, g, putter(i))
			}
			return nil
		})
	})
}

func TestQueues_test_cancelled_puts_not_being_held_in_self_putters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Full queue.
		queue := asyncio.NewQueue[int](1)
		queue.PutNowait(1)
		// Task waiting for space to put an item in the queue.
		putTask := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return queue.Put(tk, 1) }))
		asyncio.Sleep(tk, 0)
		// The putter is removed from queue._putters when the task is
		// cancelled.
		check(t, strings.Contains(queue.String(), "_putters[1]"), queue)
		putTask.Cancel()
		_, err := putTask.Await(tk)
		cancelled(t, err)
		check(t, !strings.Contains(queue.String(), "_putters"), queue)
		return nil
	})
}

func TestQueues_test_cancelled_put_silence_value_error_exception(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// Full Queue.
		queue := asyncio.NewQueue[int](1)
		queue.PutNowait(1)
		// Task waiting for space to put a item in the queue.
		putTask := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return queue.Put(tk, 1) }))
		asyncio.Sleep(tk, 0)
		// get_nowait() removes the future of put_task from queue._putters;
		// then the cancelled put removes it again: no error but the
		// CancelledError.
		queue.GetNowait()
		putTask.Cancel()
		_, err := putTask.Await(tk)
		cancelled(t, err)
		return nil
	})
}

func TestQueues_test_task_done_underflow(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		raises(t, newQ(0).TaskDone(), "*asyncio.ValueError")
	})
}

func TestQueues_test_task_done(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(0)
			for i := range 100 {
				q.PutNowait(i)
			}
			accumulator := 0
			// Two workers get items from the queue and call task_done after
			// each. Join the queue and assert all items have been processed.
			running := true
			worker := fn0(func(tk *asyncio.T) error {
				for running {
					item, err := q.Get(tk)
					if err != nil {
						return err
					}
					accumulator += item.(int)
					q.TaskDone()
				}
				return nil
			})
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				tasks := []*asyncio.Task[struct{}]{spawn(t, g, worker), spawn(t, g, worker)}
				if err := q.Join(tk); err != nil {
					return err
				}
				eq(t, accumulator, 4950)
				// close running generators
				running = false
				for range tasks {
					q.PutNowait(0)
				}
				return nil
			})
		})
	})
}

func TestQueues_test_join_empty_queue(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(0)
			// A queue join()s successfully, and before anything else (done
			// twice for insurance).
			noErr(t, q.Join(tk))
			noErr(t, q.Join(tk))
			return nil
		})
	})
}

// format is q._format(): the repr between the id and ">".
func format(s fmt.Stringer) string {
	r := s.String()
	i := strings.Index(r, "maxsize=")
	return strings.TrimSuffix(r[i:], ">")
}

func TestQueues__QueueJoinTestMixin_test_format(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		q := newQ(0)
		eq(t, format(q), "maxsize=0")
		// q._unfinished_tasks = 2: two items put and taken.
		q.PutNowait(1)
		q.PutNowait(2)
		q.GetNowait()
		q.GetNowait()
		eq(t, format(q), "maxsize=0 tasks=2")
	})
}

func TestQueues__QueueShutdownTestMixin_test_format(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		q := newQ(0)
		q.Shutdown(false)
		eq(t, format(q), "maxsize=0 shutdown")
	})
}

// shutDown is assertRaisesShutdown.
func shutDown(t *testing.T, err error, what string) {
	t.Helper()
	check(t, err == asyncio.ErrQueueShutDown, what, ": Didn't appear to shut-down queue, got ", err)
}

// allShutDown checks that put, put_nowait, get and get_nowait raise
// QueueShutDown.
func allShutDown(t *testing.T, tk *asyncio.T, q *asyncio.Queue[any]) {
	t.Helper()
	shutDown(t, q.Put(tk, "data"), "put")
	shutDown(t, q.PutNowait("data"), "put_nowait")
	_, err := q.Get(tk)
	shutDown(t, err, "get")
	_, err = q.GetNowait()
	shutDown(t, err, "get_nowait")
}

func TestQueues_test_shutdown_empty(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(0)
			getTask := asyncio.CreateTask(tk, q.Get)
			asyncio.Sleep(tk, 0) // want get task pending before shutdown
			q.Shutdown(false)    // unfinished tasks: 0 -> 0
			eq(t, q.Len(), 0)
			// Ensure join() task successfully finishes
			noErr(t, q.Join(tk))
			// Ensure get() task is finished, and raised ShutDown
			asyncio.Sleep(tk, 0)
			check(t, getTask.Done(), "get task done")
			_, err := getTask.Await(tk)
			shutDown(t, err, "get task")
			allShutDown(t, tk, q)
			return nil
		})
	})
}

func TestQueues_test_shutdown_nonempty(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(1)
			q.PutNowait("data")
			joinTask := asyncio.CreateTask(tk, fn0(q.Join))
			putTask := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return q.Put(tk, "data2") }))
			// Ensure put() task is not finished
			asyncio.Sleep(tk, 0)
			check(t, !putTask.Done(), "put task not done")
			q.Shutdown(false) // unfinished tasks: 1 -> 1
			eq(t, q.Len(), 1)
			// Ensure put() task is finished, and raised ShutDown
			asyncio.Sleep(tk, 0)
			check(t, putTask.Done(), "put task done")
			_, err := putTask.Await(tk)
			shutDown(t, err, "put task")
			// Ensure get() succeeds on enqueued item
			v, err := q.Get(tk)
			noErr(t, err)
			eq(t, v, any("data"))
			// Ensure join() task is not finished
			asyncio.Sleep(tk, 0)
			check(t, !joinTask.Done(), "join task not done")
			allShutDown(t, tk, q)
			// Ensure there is 1 unfinished task, and join() task succeeds
			noErr(t, q.TaskDone())
			asyncio.Sleep(tk, 0)
			check(t, joinTask.Done(), "join task done")
			_, err = joinTask.Await(tk)
			noErr(t, err)
			raises(t, q.TaskDone(), "*asyncio.ValueError", "Didn't appear to mark all tasks done")
			return nil
		})
	})
}

func TestQueues_test_shutdown_immediate(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(0)
			q.PutNowait("data")
			joinTask := asyncio.CreateTask(tk, fn0(q.Join))
			q.Shutdown(true) // unfinished tasks: 1 -> 0
			eq(t, q.Len(), 0)
			// Ensure join() task has successfully finished
			asyncio.Sleep(tk, 0)
			check(t, joinTask.Done(), "join task done")
			_, err := joinTask.Await(tk)
			noErr(t, err)
			allShutDown(t, tk, q)
			// Ensure there are no unfinished tasks
			raises(t, q.TaskDone(), "*asyncio.ValueError", "Didn't appear to mark all tasks done")
			return nil
		})
	})
}

func TestQueues_test_shutdown_immediate_with_unfinished(t *testing.T) {
	forEachKind(t, func(t *testing.T, newQ func(int) *asyncio.Queue[any]) {
		run(t, func(tk *asyncio.T) error {
			q := newQ(0)
			q.PutNowait("data")
			q.PutNowait("data")
			joinTask := asyncio.CreateTask(tk, fn0(q.Join))
			v, err := q.Get(tk)
			noErr(t, err)
			eq(t, v, any("data"))
			q.Shutdown(true) // unfinished tasks: 2 -> 1
			eq(t, q.Len(), 0)
			// Ensure join() task is not finished
			asyncio.Sleep(tk, 0)
			check(t, !joinTask.Done(), "join task not done")
			allShutDown(t, tk, q)
			// Ensure there is 1 unfinished task
			noErr(t, q.TaskDone())
			raises(t, q.TaskDone(), "*asyncio.ValueError", "Didn't appear to mark all tasks done")
			// Ensure join() task has successfully finished
			asyncio.Sleep(tk, 0)
			check(t, joinTask.Done(), "join task done")
			_, err = joinTask.Await(tk)
			noErr(t, err)
			return nil
		})
	})
}
