//asynciovet:file-ignore droppedcancel the replayed programs log every outcome, and CPython's output is the expectation

package asyncio

// Differential probes: random queue, TaskGroup and timeout programs, run on
// CPython 3.13.0 by testdata/probe_qtg/gen.py (which documents them), are
// replayed here and must log exactly what CPython logged.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func loadProbeCases(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/probe_qtg/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pyExcName is the Python exception class a queue operation's error is.
func pyExcName(err error) string {
	switch {
	case IsCancelled(err):
		return "CancelledError"
	case errors.Is(err, ErrQueueShutDown):
		return "QueueShutDown"
	case errors.Is(err, ErrQueueFull):
		return "QueueFull"
	case errors.Is(err, ErrQueueEmpty):
		return "QueueEmpty"
	case errors.Is(err, ErrValue):
		return "ValueError"
	}
	return fmt.Sprintf("%T", err)
}

// TestProbeQueue_DifferentialCPython replays the queue programs, plain and
// eager (getters and putters run their first step in CreateTask).
func TestProbeQueue_DifferentialCPython(t *testing.T) {
	for _, mode := range []string{"", "_eager"} {
		t.Run("mode"+mode, func(t *testing.T) {
			var cases []struct {
				Kind    string
				Maxsize int
				Ops     [][]any
				Out     []string
			}
			loadProbeCases(t, "queue"+mode+"_ops.json", &cases)
			for ci, c := range cases {
				got := replayQueueProgram(t, probeLoop(mode), c.Kind, c.Maxsize, c.Ops)
				if d := cmp.Diff(c.Out, got); d != "" {
					t.Errorf("case %d: %s(%d) ops=%v (-cpython +go):\n%s", ci, c.Kind, c.Maxsize, c.Ops, d)
				}
			}
		})
	}
}

func replayQueueProgram(t *testing.T, l *Loop, kind string, maxsize int, ops [][]any) []string {
	var out []string
	lg := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	var q *Queue[int]
	switch kind {
	case "Queue":
		q = NewQueue[int](maxsize)
	case "LifoQueue":
		q = NewLifoQueue[int](maxsize)
	default:
		q = NewPriorityQueue(maxsize, func(a, b int) bool { return a < b })
	}
	st := func() string {
		return fmt.Sprintf("q=%d f=%d e=%d u=%d", q.Len(), b2i(q.Full()), b2i(q.Empty()), q.unfinished)
	}
	waiter := func(tk *T, i int, op func(x *T) (string, error), what string) *Task[struct{}] {
		return CreateTask(tk, func(x *T) (struct{}, error) {
			s, err := op(x)
			if err != nil {
				lg("T%d %s %s", i, what, pyExcName(err))
				if IsCancelled(err) {
					return struct{}{}, err
				}
				return struct{}{}, nil
			}
			lg("T%d %s", i, s)
			return struct{}{}, nil
		})
	}
	main := CreateTask(l, func(tk *T) (int, error) {
		var tasks []*Task[struct{}]
		for _, op := range ops {
			i := len(tasks)
			switch op[0].(string) {
			case "getter":
				tasks = append(tasks, waiter(tk, i, func(x *T) (string, error) {
					v, err := q.Get(x)
					return fmt.Sprintf("got %d", v), err
				}, "get"))
			case "putter":
				v := int(op[1].(float64))
				tasks = append(tasks, waiter(tk, i, func(x *T) (string, error) {
					return fmt.Sprintf("put %d", v), q.Put(x, v)
				}, "put"))
			case "joiner":
				tasks = append(tasks, waiter(tk, i, func(x *T) (string, error) {
					return "joined", q.Join(x)
				}, "join"))
			case "cancel":
				if j := int(op[1].(float64)); j < len(tasks) {
					lg("cancel T%d %d", j, b2i(tasks[j].Cancel()))
				}
			case "put_nowait":
				v := int(op[1].(float64))
				if err := q.PutNowait(v); err != nil {
					lg("put_nowait %d %s", v, pyExcName(err))
				} else {
					lg("put_nowait %d ok", v)
				}
			case "get_nowait":
				if v, err := q.GetNowait(); err != nil {
					lg("get_nowait %s", pyExcName(err))
				} else {
					lg("get_nowait %d", v)
				}
			case "task_done":
				if err := q.TaskDone(); err != nil {
					lg("task_done %s", pyExcName(err))
				} else {
					lg("task_done ok")
				}
			case "shutdown":
				imm := op[1].(bool)
				q.Shutdown(imm)
				lg("shutdown %d", b2i(imm))
			case "yield":
				Sleep(tk, 0)
				lg("yield %s g=%d p=%d", st(), q.getters.len(), q.putters.len())
			}
		}
		for _, x := range tasks {
			x.Cancel()
		}
		for _, x := range tasks {
			tk.Await(x)
		}
		lg("end %s", st())
		return 0, nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	cancelTheRest(t, l)
	mustClose(t, l)
	return out
}

// pyErr is a Python exception raised by the replayed TaskGroup programs.
type pyErr struct{ cls, arg string }

func (e *pyErr) Error() string { return e.cls + "(" + e.arg + ")" }

// pyShort renders err as gen.py's d() does.
func pyShort(err error) string {
	if err == nil {
		return "nil"
	}
	var eg *ExceptionGroup
	if errors.As(err, &eg) && eg == err {
		var s []string
		for _, m := range eg.Errs {
			s = append(s, pyShort(m))
		}
		return "EG(" + strings.Join(s, ",") + ")"
	}
	switch e := err.(type) {
	case *CancelledError:
		return "CE(" + e.Msg + ")"
	case *TimeoutError:
		return "Timeout"
	case *pyErr:
		return e.Error()
	}
	return fmt.Sprintf("%T(%v)", err, err)
}

type tgProgram struct {
	Children [][]any
	Body     []any
	Outside  [][]any
	Timeout  []any
	Out      []string
}

// TestProbeTG_DifferentialCPython replays the TaskGroup programs, and on a
// WithEagerTasks loop those CPython ran with eager_task_factory. The
// "_main" programs ran CPython main's TaskGroup, whose cancel() Group.Cancel
// ports (TG-8): children and bodies there also cancel their group, some
// children in their eager step (gh-155418).
func TestProbeTG_DifferentialCPython(t *testing.T) {
	for _, mode := range []string{"", "_eager", "_main", "_main_eager"} {
		t.Run("mode"+mode, func(t *testing.T) {
			var cases []tgProgram
			loadProbeCases(t, "taskgroup"+mode+"_ops.json", &cases)
			for ci, c := range cases {
				got := replayTGProgram(t, probeLoop(mode), c)
				if d := cmp.Diff(c.Out, got); d != "" {
					t.Errorf("case %d: children=%v body=%v outside=%v timeout=%v (-cpython +go):\n%s",
						ci, c.Children, c.Body, c.Outside, c.Timeout, d)
				}
			}
		})
	}
}

// probeLoop is a virtual-time loop, with eager tasks for the "_eager" modes.
func probeLoop(mode string) *Loop {
	if strings.HasSuffix(mode, "_eager") {
		return NewLoop(WithVirtualTime(), WithEagerTasks())
	}
	return NewTestLoop()
}

func replayTGProgram(t *testing.T, l *Loop, sc tgProgram) []string {
	var out []string
	log := func(f string, a ...any) {
		out = append(out, fmt.Sprintf("%g ", l.Time().Seconds())+fmt.Sprintf(f, a...))
	}
	sec := func(x any) time.Duration { return time.Duration(x.(float64)) * time.Second }
	spawnLogged := func(g *Group, i string, fn func(*T) (int, error)) {
		if _, err := Spawn(g, fn); err != nil {
			log("c%s spawn %s", i, err.(*RuntimeError).Msg)
		} else {
			log("c%s spawned", i)
		}
	}
	var child func(i string, delay time.Duration, action string, g *Group) func(*T) (int, error)
	child = func(i string, delay time.Duration, action string, g *Group) func(*T) (int, error) {
		return func(c *T) (int, error) {
			if action == "groupcancel" && delay == 0 {
				log("c%s cancels group at once", i)
				g.Cancel()
			}
			err := Sleep(c, delay)
			if err == nil && action == "groupcancel" {
				log("c%s cancels group", i)
				g.Cancel()
			}
			if err == nil && action == "spawn" {
				spawnLogged(g, i, child(i+"s", time.Second, "ok", g))
			}
			if err != nil {
				switch action {
				case "conv":
					log("c%s conv", i)
					return 0, &pyErr{"KeyError", "c" + i}
				case "swallow":
					log("c%s swallow", i)
					return 0, nil
				case "swallowspawn":
					spawnLogged(g, i, child(i+"s", time.Second, "ok", g))
					return 0, nil
				case "slowcancel":
					log("c%s slowcancel", i)
					Sleep(c, time.Second)
					log("c%s slowcancel done", i)
				}
				log("c%s cancelled", i)
				return 0, err
			}
			if action == "fail" {
				log("c%s fail", i)
				return 0, &pyErr{"ValueError", "c" + i}
			}
			log("c%s ok", i)
			return 0, nil
		}
	}
	body := func(tk *T, g *Group) error {
		for i, ch := range sc.Children {
			if _, err := Spawn(g, child(fmt.Sprint(i), sec(ch[0]), ch[1].(string), g)); err != nil {
				return &pyErr{"RuntimeError", err.(*RuntimeError).Msg} // create_task raises
			}
		}
		delay, action := sec(sc.Body[0]), sc.Body[1].(string)
		if action == "nested" {
			err := TaskGroup(tk, func(g2 *Group) error {
				for i, ch := range sc.Body[2].([]any) {
					ch := ch.([]any)
					if _, err := Spawn(g2, child(fmt.Sprintf("n%d", i), sec(ch[0]), ch[1].(string), g2)); err != nil {
						return &pyErr{"RuntimeError", err.(*RuntimeError).Msg}
					}
				}
				return Sleep(tk, delay)
			})
			if err != nil {
				log("nested %s c=%d", pyShort(err), tk.Cancelling())
				return err
			}
			log("nested done")
			return nil
		}
		err := Sleep(tk, delay)
		if err == nil && action == "groupcancel" {
			log("body cancels group")
			g.Cancel()
			err = Sleep(tk, time.Second)
		}
		if err != nil {
			log("body %s", pyShort(err))
			switch action {
			case "catchraise":
				return &pyErr{"OSError", "body"}
			case "swallow":
				if err := Sleep(tk, time.Second); err != nil {
					return err
				}
				log("body swallowed c=%d", tk.Cancelling())
				return nil
			}
			return err
		}
		if action == "raise" {
			return &pyErr{"OSError", "body"}
		}
		log("body done")
		return nil
	}
	group := func(tk *T) error {
		return TaskGroup(tk, func(g *Group) error {
			if sc.Timeout != nil && sc.Timeout[0] == "inner" {
				var s *TimeoutScope
				err := Timeout(tk, sec(sc.Timeout[1]), func(x *TimeoutScope) error { s = x; return body(tk, g) })
				log("inner tmo expired=%d", b2i(s.Expired()))
				return err
			}
			return body(tk, g)
		})
	}
	wt := CreateTask(l, func(me *T) (int, error) {
		var err error
		if sc.Timeout != nil && sc.Timeout[0] == "outer" {
			var s *TimeoutScope
			err = Timeout(me, sec(sc.Timeout[1]), func(x *TimeoutScope) error { s = x; return group(me) })
			log("outer tmo expired=%d", b2i(s.Expired()))
		} else {
			err = group(me)
		}
		log("w result %s c=%d", pyShort(err), me.Cancelling())
		if err := Sleep(me, 0); err != nil {
			log("w next %s c=%d", pyShort(err), me.Cancelling())
			return 0, err
		}
		log("w next ok")
		return 0, nil
	})
	// Scheduled before w's first step, as gen.py's call_at calls are.
	for _, o := range sc.Outside {
		msg := o[1].(string)
		l.CallAt(sec(o[0]), func() { wt.Cancel(msg) })
	}
	main := CreateTask(l, func(tk *T) (int, error) {
		if _, err := wt.Await(tk); err != nil {
			log("wt %s cancelled=%d c=%d", pyShort(err), b2i(wt.Cancelled()), wt.Cancelling())
		} else {
			log("wt ok c=%d", wt.Cancelling())
		}
		return 0, nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	cancelTheRest(t, l)
	mustClose(t, l)
	return out
}

// TestProbeTMO_DifferentialCPython replays the timeout programs, plain and
// eager (wait_for(coro, 0)'s task then runs its eager step); the "_tasks"
// programs also pass wait_for a task (WaitFor) instead of a coroutine.
func TestProbeTMO_DifferentialCPython(t *testing.T) {
	for _, mode := range []string{"", "_eager", "_tasks", "_tasks_eager"} {
		t.Run("mode"+mode, func(t *testing.T) {
			var cases []tmoProgram
			loadProbeCases(t, "timeout"+mode+"_ops.json", &cases)
			for ci, c := range cases {
				got := replayTmoProgram(t, probeLoop(mode), c)
				if d := cmp.Diff(c.Out, got); d != "" {
					t.Errorf("case %d: levels=%v sleep=%v action=%v outside=%v (-cpython +go):\n%s",
						ci, c.Levels, c.Sleep, c.Action, c.Outside, d)
				}
			}
		})
	}
}

type tmoProgram struct {
	Levels  [][]any
	Sleep   float64
	Action  string
	Outside [][]any
	Out     []string
}

func replayTmoProgram(t *testing.T, l *Loop, sc tmoProgram) []string {
	var out []string
	log := func(f string, a ...any) {
		out = append(out, fmt.Sprintf("%g ", l.Time().Seconds())+fmt.Sprintf(f, a...))
	}
	tick := func(x any) time.Duration {
		if x == nil {
			return Never
		}
		return time.Duration(x.(float64)) * time.Second
	}
	inner := func(me *T) error {
		if err := Sleep(me, tick(sc.Sleep)); err != nil {
			log("inner %s c=%d", pyShort(err), me.Cancelling())
			switch sc.Action {
			case "swallow":
				if err := Sleep(me, time.Second); err != nil {
					return err
				}
				log("swallowed")
				return nil
			case "uncancel":
				me.Uncancel()
				log("uncancelled c=%d", me.Cancelling())
				return nil
			}
			return err
		}
		log("sleep done")
		return nil
	}
	var level func(me *T, i int) error
	level = func(me *T, i int) error {
		if i == len(sc.Levels) {
			return inner(me)
		}
		kind, dl, rs := sc.Levels[i][0].(string), sc.Levels[i][1], sc.Levels[i][2]
		var s *TimeoutScope
		var err error
		switch kind {
		case "waitfor":
			_, err = WaitForFunc(me, tick(dl), func(x *T) (int, error) { return 0, level(x, i+1) })
		case "waitfor_task":
			inner := CreateTask(me, func(x *T) (int, error) { return 0, level(x, i+1) })
			_, err = WaitFor(me, tick(dl), inner)
		default:
			bodyFn := func(x *TimeoutScope) error {
				s = x
				if rs != nil {
					r := rs.([]any)
					nw := tick(r[1])
					l.CallAt(tick(r[0]), func() {
						if err := s.Reschedule(nw); err != nil {
							log("L%d resched %s", i, err.(*RuntimeError).Msg)
						} else {
							log("L%d resched %s ok", i, pyNone(r[1]))
						}
					})
				}
				return level(me, i+1)
			}
			if kind == "timeout" {
				err = Timeout(me, tick(dl), bodyFn)
			} else {
				err = TimeoutAt(me, tick(dl), bodyFn)
			}
		}
		exp := "-"
		if s != nil {
			exp = fmt.Sprint(b2i(s.Expired()))
		}
		if err != nil {
			log("L%d %s exp=%s c=%d", i, pyShort(err), exp, me.Cancelling())
		} else {
			log("L%d nil exp=%s c=%d", i, exp, me.Cancelling())
		}
		return err
	}
	wt := CreateTask(l, func(me *T) (int, error) {
		if err := level(me, 0); err != nil {
			log("w got %s", pyShort(err))
		}
		if err := Sleep(me, 0); err != nil {
			log("w next %s c=%d", pyShort(err), me.Cancelling())
			return 0, err
		}
		log("w next ok c=%d", me.Cancelling())
		return 0, nil
	})
	for _, o := range sc.Outside {
		msg := o[1].(string)
		l.CallAt(tick(o[0]), func() { wt.Cancel(msg) })
	}
	main := CreateTask(l, func(tk *T) (int, error) {
		if _, err := wt.Await(tk); err != nil {
			log("wt %s cancelled=%d c=%d", pyShort(err), b2i(wt.Cancelled()), wt.Cancelling())
		} else {
			log("wt ok c=%d", wt.Cancelling())
		}
		return 0, nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	cancelTheRest(t, l)
	mustClose(t, l)
	return out
}

// pyNone prints a deadline as Python does: None or the number.
func pyNone(x any) string {
	if x == nil {
		return "None"
	}
	return fmt.Sprint(x)
}

// cancelTheRest is asyncio.run's last step: the tasks still pending (an
// eager wait_for(coro, 0) task that swallowed its cancellation, say) are
// cancelled and awaited.
func cancelTheRest(t *testing.T, l *Loop) {
	rest := AllTasks(l)
	if len(rest) == 0 {
		return
	}
	for _, x := range rest {
		x.Cancel()
	}
	all := CreateTask(l, func(tk *T) (int, error) {
		for _, x := range rest {
			tk.Await(x)
		}
		return 0, nil
	})
	if err := l.RunUntilComplete(all); err != nil {
		t.Fatalf("RunUntilComplete: %v", err)
	}
}
