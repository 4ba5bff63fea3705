//asynciovet:file-ignore droppedcancel the queue probes yield with Sleep(tk, 0) to order the tasks; the event log checks each outcome

package asyncio

// Probes of Queue edges against CPython 3.13 (expectations are the output
// of the equivalent Python programs).

import (
	"fmt"
	"strings"
	"testing"
)

// qst is the state line the Python probes print: qsize, full, empty and
// the unfinished-task count.
func qst[V any](q *Queue[V]) string {
	return fmt.Sprintf("qsize=%d full=%v empty=%v unfinished=%d", q.Len(), q.Full(), q.Empty(), q.unfinished)
}

func qGetter[V any](tk *T, r *eventLog, q *Queue[V], name string) *Task[struct{}] {
	return startTask(tk, name, func(x *T) error {
		v, err := q.Get(x)
		if err != nil {
			r.log("%s get: %s", name, describe(err))
			return nil
		}
		r.log("%s got %v", name, v)
		return nil
	})
}

func qPutter[V any](tk *T, r *eventLog, q *Queue[V], name string, v V) *Task[struct{}] {
	return startTask(tk, name, func(x *T) error {
		if err := q.Put(x, v); err != nil {
			r.log("%s put: %s", name, describe(err))
			return nil
		}
		r.log("%s put %v", name, v)
		return nil
	})
}

// A putter woken for a slot and cancelled before it runs passes the slot
// to the next putter, for each kind of queue.
func TestProbeQueue_PutterCancelledAfterPromise(t *testing.T) {
	kinds := []func() *Queue[int]{
		func() *Queue[int] { return NewQueue[int](1) },
		func() *Queue[int] { return NewLifoQueue[int](1) },
		func() *Queue[int] { return NewPriorityQueue(1, func(a, b int) bool { return a < b }) },
	}
	for _, mk := range kinds {
		q := mk()
		t.Run(q.kind, func(t *testing.T) {
			r, err := runMain(t, func(tk *T, r *eventLog) error {
				_ = q.PutNowait(0)
				ps := []*Task[struct{}]{qPutter(tk, r, q, "P1", 1), qPutter(tk, r, q, "P2", 2), qPutter(tk, r, q, "P3", 3)}
				Sleep(tk, 0)
				r.log("blocked %s %d", qst(q), q.putters.len())
				v, _ := q.GetNowait() // wakes P1
				r.log("get %d %s", v, qst(q))
				ps[0].Cancel()
				Sleep(tk, 0)
				r.log("after %s %d", qst(q), q.putters.len())
				Sleep(tk, 0)
				r.log("after2 %s %d", qst(q), q.putters.len())
				v, err := q.GetNowait()
				r.log("get %d %s", v, describe(err))
				Sleep(tk, 0)
				v, err = q.GetNowait()
				r.log("get %d %s", v, describe(err))
				Sleep(tk, 0)
				r.log("end %s %v %v %v", qst(q), ps[0].Done(), ps[1].Done(), ps[2].Done())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkEvents(t, []string{
				"0s blocked qsize=1 full=true empty=false unfinished=1 3",
				"0s get 0 qsize=0 full=false empty=true unfinished=1",
				`0s P1 put: CancelledError("")`,
				"0s after qsize=0 full=false empty=true unfinished=1 1",
				"0s P2 put 2",
				"0s after2 qsize=1 full=true empty=false unfinished=2 1",
				"0s get 2 <nil>",
				"0s P3 put 3",
				"0s get 3 <nil>",
				"0s end qsize=0 full=false empty=true unfinished=3 true true true",
			}, r)
		})
	}
}

// Getters woken and then cancelled pass their item on; a getter cancelled
// before being woken is skipped.
func TestProbeQueue_GetterCancelledAfterWake(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[string](0)
		var gs []*Task[struct{}]
		for _, n := range []string{"G0", "G1", "G2", "G3"} {
			gs = append(gs, qGetter(tk, r, q, n))
		}
		Sleep(tk, 0)
		_ = q.PutNowait("a")
		_ = q.PutNowait("b")
		gs[0].Cancel()
		gs[2].Cancel()
		Sleep(tk, 0)
		Sleep(tk, 0)
		r.log("end %s %d", qst(q), q.getters.len())
		_ = q.PutNowait("c")
		Sleep(tk, 0)
		r.log("end %s %d", qst(q), q.getters.len())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`0s G0 get: CancelledError("")`,
		"0s G1 got a",
		`0s G2 get: CancelledError("")`,
		"0s G3 got b",
		"0s end qsize=0 full=false empty=true unfinished=2 0",
		"0s end qsize=1 full=false empty=false unfinished=3 0",
	}, r)
}

// shutdown(): putters wake with QueueShutDown, items stay gettable, getters
// beyond them get QueueShutDown, join waits for task_done.
func TestProbeQueue_ShutdownNotImmediate(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[int](2)
		_ = q.PutNowait(1)
		_ = q.PutNowait(2)
		qPutter(tk, r, q, "P", 3)
		j := startTask(tk, "j", func(x *T) error { return q.Join(x) })
		Sleep(tk, 0)
		q.Shutdown(false)
		r.log("shut %s %s", qst(q), strings.SplitN(repr(q), " maxsize", 2)[1])
		Sleep(tk, 0)
		r.log("put_nowait: %s", describe(q.PutNowait(9)))
		v, _ := q.GetNowait()
		r.log("get_nowait %d", v)
		for _, n := range []string{"G0", "G1", "G2"} {
			qGetter(tk, r, q, n)
		}
		Sleep(tk, 0)
		r.log("j done? %v %s", j.Done(), qst(q))
		_ = q.TaskDone()
		_ = q.TaskDone()
		Sleep(tk, 0)
		r.log("j done? %v %s", j.Done(), qst(q))
		r.log("td: %s", describe(q.TaskDone()))
		q.Shutdown(true)
		r.log("again %s", qst(q))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s shut qsize=2 full=true empty=false unfinished=2 =2 _queue=[1, 2] tasks=2 shutdown>",
		"0s P put: QueueShutDown",
		"0s put_nowait: QueueShutDown",
		"0s get_nowait 1",
		"0s G0 got 2",
		"0s G1 get: QueueShutDown",
		"0s G2 get: QueueShutDown",
		"0s j done? false qsize=0 full=false empty=true unfinished=2",
		"0s j done? true qsize=0 full=false empty=true unfinished=0",
		`0s td: ValueError("task_done() called too many times")`,
		"0s again qsize=0 full=false empty=true unfinished=0",
	}, r)
}

// shutdown(immediate=True): queued items are discarded and counted done,
// items already taken stay unfinished, so join waits for their task_done.
func TestProbeQueue_ShutdownImmediate(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[int](3)
		for i := range 3 {
			_ = q.PutNowait(i)
		}
		v, _ := q.GetNowait()
		r.log("get %d %s", v, qst(q))
		_ = q.PutNowait(3)
		qPutter(tk, r, q, "P", 9)
		Sleep(tk, 0)
		j := startTask(tk, "j", func(x *T) error { return q.Join(x) })
		j2 := startTask(tk, "j2", func(x *T) error { return q.Join(x) })
		Sleep(tk, 0)
		r.log("before %s %d", qst(q), q.putters.len())
		q.Shutdown(true)
		r.log("after %s", qst(q))
		Sleep(tk, 0)
		r.log("j %v %s", j.Done(), qst(q))
		_, err := q.GetNowait()
		r.log("get_nowait: %s", describe(err))
		qGetter(tk, r, q, "G")
		Sleep(tk, 0)
		_ = q.TaskDone()
		Sleep(tk, 0)
		r.log("j %v %v %s", j.Done(), j2.Done(), qst(q))
		if err := q.Join(tk); err == nil {
			r.log("join ok")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s get 0 qsize=2 full=false empty=false unfinished=3",
		"0s before qsize=3 full=true empty=false unfinished=4 1",
		"0s after qsize=0 full=false empty=true unfinished=1",
		"0s P put: QueueShutDown",
		"0s j false qsize=0 full=false empty=true unfinished=1",
		"0s get_nowait: QueueShutDown",
		"0s G get: QueueShutDown",
		"0s j true true qsize=0 full=false empty=true unfinished=0",
		"0s join ok",
	}, r)
}

// A getter woken by a put, then the item discarded by an immediate
// shutdown: both getters get QueueShutDown. Without immediate, a woken
// getter cancelled passes the item on, the last one gets QueueShutDown.
func TestProbeQueue_ShutdownWithWokenGetter(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[string](0)
		qGetter(tk, r, q, "G1")
		qGetter(tk, r, q, "G2")
		Sleep(tk, 0)
		_ = q.PutNowait("x")
		q.Shutdown(true)
		r.log("shut %s", qst(q))
		Sleep(tk, 0)
		r.log("end %s", qst(q))

		q = NewQueue[string](0)
		g1 := qGetter(tk, r, q, "H1")
		qGetter(tk, r, q, "H2")
		qGetter(tk, r, q, "H3")
		Sleep(tk, 0)
		_ = q.PutNowait("x")
		g1.Cancel()
		q.Shutdown(false)
		Sleep(tk, 0)
		r.log("end %s", qst(q))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s shut qsize=0 full=false empty=true unfinished=0",
		"0s G1 get: QueueShutDown",
		"0s G2 get: QueueShutDown",
		"0s end qsize=0 full=false empty=true unfinished=0",
		`0s H1 get: CancelledError("")`,
		"0s H2 got x",
		"0s H3 get: QueueShutDown",
		"0s end qsize=0 full=false empty=true unfinished=1",
	}, r)
}

// A woken putter whose slot a put_nowait takes waits again at the back.
func TestProbeQueue_StolenSlotPutterRequeues(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[int](1)
		_ = q.PutNowait(0)
		qPutter(tk, r, q, "P1", 1)
		qPutter(tk, r, q, "P2", 2)
		Sleep(tk, 0)
		q.GetNowait()
		_ = q.PutNowait(99)
		Sleep(tk, 0)
		r.log("stolen %s %d", qst(q), q.putters.len())
		for range 3 {
			v, _ := q.GetNowait()
			r.log("get %d", v)
			Sleep(tk, 0)
		}
		r.log("end %s", qst(q))

		// maxsize 0: put never blocks; a cancelled join leaves the counts.
		u := NewQueue[int](0)
		for i := range 5 {
			_ = u.Put(tk, i)
		}
		r.log("%s", qst(u))
		j := startTask(tk, "j", func(x *T) error { return u.Join(x) })
		Sleep(tk, 0)
		j.Cancel()
		if err := tk.Await(j); IsCancelled(err) {
			r.log("join cancelled %s", qst(u))
		}
		for !u.Empty() {
			u.GetNowait()
			_ = u.TaskDone()
		}
		if err := u.Join(tk); err == nil {
			r.log("joined %s", qst(u))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s stolen qsize=1 full=true empty=false unfinished=2 2",
		"0s get 99",
		"0s P2 put 2",
		"0s get 2",
		"0s P1 put 1",
		"0s get 1",
		"0s end qsize=0 full=false empty=true unfinished=4",
		"0s qsize=5 full=false empty=false unfinished=5",
		"0s join cancelled qsize=5 full=false empty=false unfinished=5",
		"0s joined qsize=0 full=false empty=true unfinished=0",
	}, r)
}
