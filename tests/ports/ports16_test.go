package ports_test

// Ports p16 onward: queues of every kind, loop callbacks, the executor,
// shield, eager tasks, context variables, lock misuse and task
// bookkeeping. Same conventions as ports_test.go.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// pdv is pd with the library's own *ValueError named as Python names it.
func pdv(err error) string {
	var ve *asyncio.ValueError
	if errors.As(err, &ve) {
		return "ValueError(" + ve.Msg + ")"
	}
	return pd(err)
}

func newRuntimeError(m string) error    { return &runtimeError{pyExc{"RuntimeError", m}} }
func newConnectionError(m string) error { return &connectionError{pyExc{"ConnectionError", m}} }

// ---------------------------------------------------------------------------
// p16_priority_jobs_drain.py

var wantPriorityJobsDrain = cpythonTrace("p16_priority_jobs_drain")

// prioJob is the programs' (prio, job) tuple, ordered as Python orders
// tuples.
type prioJob struct {
	prio int
	job  string
}

func prioJobLess(a, b prioJob) bool {
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.job < b.job
}

func TestPortPriorityJobsDrain(t *testing.T) {
	runPort(t, wantPriorityJobsDrain, func(p *probe, tk *asyncio.T) error {
		cost := map[string]time.Duration{"alert": 120 * ms, "page-oncall": 70 * ms, "backup": 200 * ms,
			"report": 50 * ms, "cleanup": 90 * ms, "hotfix": 30 * ms}
		q := asyncio.NewPriorityQueue[prioJob](0, prioJobLess)
		var done []string
		worker := func(name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					j, err := q.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("%s sees shutdown, qsize %d", name, q.Len())
						return nil
					}
					if err != nil {
						return err
					}
					p.log("%s runs %s prio %d", name, j.job, j.prio)
					if err := asyncio.Sleep(t, cost[j.job]); err != nil {
						return err
					}
					done = append(done, j.job)
					if err := q.TaskDone(); err != nil {
						return err
					}
				}
			}
		}
		for _, j := range []prioJob{{3, "report"}, {1, "page-oncall"}, {2, "backup"}, {1, "alert"}, {5, "cleanup"}} {
			if err := q.PutNowait(j); err != nil {
				return err
			}
		}
		p.log("queued %d", q.Len())
		workers := []*asyncio.Task[struct{}]{asyncio.CreateTaskErr(tk, worker("w0")), asyncio.CreateTaskErr(tk, worker("w1"))}
		if err := asyncio.Sleep(tk, 130*ms); err != nil {
			return err
		}
		if err := q.PutNowait(prioJob{0, "hotfix"}); err != nil {
			return err
		}
		p.log("hotfix queued, qsize %d", q.Len())
		if err := q.Join(tk); err != nil {
			return err
		}
		p.log("joined %s", pstrs(done))
		q.Shutdown(false)
		for _, w := range workers {
			if _, err := w.Await(tk); err != nil {
				return err
			}
		}

		undo := asyncio.NewLifoQueue[string](3)
		for _, step := range []string{"create", "resize", "attach"} {
			if err := undo.Put(tk, step); err != nil {
				return err
			}
		}
		p.log("undo full %s", pb(undo.Full()))
		if err := undo.PutNowait("extra"); errors.Is(err, asyncio.ErrQueueFull) {
			p.log("undo stack full")
		}
		for !undo.Empty() {
			v, err := undo.GetNowait()
			if err != nil {
				return err
			}
			p.log("undo %s", v)
		}
		if _, err := undo.GetNowait(); errors.Is(err, asyncio.ErrQueueEmpty) {
			p.log("undo stack empty")
		}

		p.restart()
		q2 := asyncio.NewQueue[int](2)
		producer := func(t *asyncio.T) error {
			i := 0
			for i = 0; i < 5; i++ {
				if err := q2.Put(t, i); err != nil {
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("producer refused at %d", i)
						return nil
					}
					return err
				}
				p.log("produced %d", i)
			}
			return nil
		}
		consumer := func(t *asyncio.T) error {
			for {
				item, err := q2.Get(t)
				if errors.Is(err, asyncio.ErrQueueShutDown) {
					p.log("consumer sees shutdown")
					return nil
				}
				if err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				p.log("consumed %d", item)
				if err := q2.TaskDone(); err != nil {
					return err
				}
			}
		}
		pt := asyncio.CreateTaskErr(tk, producer)
		ct := asyncio.CreateTaskErr(tk, consumer)
		if err := asyncio.Sleep(tk, 30*ms); err != nil {
			return err
		}
		p.log("shutdown, qsize %d full %s", q2.Len(), pb(q2.Full()))
		q2.Shutdown(false)
		if _, err := asyncio.Gather(tk, pt, ct).Await(tk); err != nil {
			return err
		}
		if err := q2.Join(tk); err != nil {
			return err
		}
		p.log("joined after drain")
		if err := q2.TaskDone(); errors.Is(err, asyncio.ErrValue) {
			p.log("extra task_done: %s", pdv(err))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p17_timer_callbacks.py

var wantTimerCallbacks = cpythonTrace("p17_timer_callbacks")

func TestPortTimerCallbacks(t *testing.T) {
	runPort(t, wantTimerCallbacks, func(p *probe, tk *asyncio.T) error {
		l := tk.Loop()
		var order []string
		// soon(name, then) is the program's soon with its arguments bound
		// (call_soon(soon, name, then)).
		var soon func(name, then string) func()
		soon = func(name, then string) func() {
			return func() {
				order = append(order, name)
				if then != "" {
					l.CallSoon(soon(then, ""))
				}
			}
		}
		l.CallSoon(soon("a", "c"))
		l.CallSoon(soon("b", ""))
		dropped := l.CallSoon(soon("dropped", ""))
		dropped.Cancel()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		order = append(order, "main")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s dropped cancelled %s", pstrs(order), pb(dropped.Cancelled()))

		order = order[:0]
		l.CallLater(-time.Second, soon("past-timer", ""))
		l.CallSoon(soon("soon", ""))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		order = append(order, "main")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s", pstrs(order))

		p.restart()
		t0 := l.Time()
		beats := 0
		var heartbeat func()
		heartbeat = func() {
			beats++
			p.log("beat %d", beats)
			if beats < 4 {
				l.CallLater(100*ms, heartbeat)
			}
		}
		retry := func() { p.log("retry fired") }
		var retryH *asyncio.TimerHandle
		ack := func() {
			retryH.Cancel()
			p.log("ack: retry cancelled %s was due at %s", pb(retryH.Cancelled()), p.rel(retryH.When()))
		}
		deadline := func() { p.log("deadline reached, beats so far %d", beats) }

		l.CallLater(100*ms, heartbeat)
		retryH = l.CallLater(300*ms, retry)
		l.CallLater(130*ms, ack)
		dl := l.CallAt(t0+260*ms, deadline)
		p.log("deadline at %s", p.rel(dl.When()))

		fut := asyncio.NewFuture[string](l)
		l.CallLater(370*ms, func() { fut.SetResult("pong") })
		p.log("awaiting pong")
		v, err := fut.Await(tk)
		if err != nil {
			return err
		}
		p.log("got %s", v)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("beats %d", beats)
		dl.Cancel()
		p.log("late cancel marks %s", pb(dl.Cancelled()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p18_executor_offload.py

var wantExecutorOffload = cpythonTrace("p18_executor_offload")

// The functions run on the executor ignore their ctx, as the Python ones
// (which have none) do: slow_export stays blocked on its gate after its
// awaiter is cancelled (README "Where Go differs": to_thread, THREAD-3 —
// the ctx cancellation changes nothing the program prints).
func TestPortExecutorOffload(t *testing.T) {
	runPort(t, wantExecutorOffload, func(p *probe, tk *asyncio.T) error {
		checksum := func(data []byte) func(context.Context) (int, error) {
			return func(context.Context) (int, error) {
				s := 0
				for _, b := range data {
					s += int(b)
				}
				return s % 251, nil
			}
		}
		parse := func(text string) func(context.Context) (int, error) {
			return func(context.Context) (int, error) {
				n := 0
				for _, c := range text {
					if c < '0' || c > '9' {
						return 0, newValueError(fmt.Sprintf("bad number '%s'", text))
					}
					n = n*10 + int(c-'0')
				}
				return n, nil
			}
		}
		v, err := asyncio.ToThread(tk, checksum([]byte("hello world")))
		if err != nil {
			return err
		}
		p.log("checksum %d", v)
		v, err = asyncio.RunInExecutor(tk, parse("42")).Await(tk)
		if err != nil {
			return err
		}
		p.log("parse %d", v)
		if _, err := asyncio.RunInExecutor(tk, parse("4x2")).Await(tk); err != nil {
			var ve *valueError
			if !errors.As(err, &ve) {
				return err
			}
			p.log("parse failed: %s", pd(err))
		}
		var fns []func(*asyncio.T) (int, error)
		for i := range 3 {
			data := make([]byte, 100)
			for j := range data {
				data[j] = byte(i + 1)
			}
			fns = append(fns, func(t *asyncio.T) (int, error) { return asyncio.ToThread(t, checksum(data)) })
		}
		results, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		if err != nil {
			return err
		}
		p.log("gathered %v", pyInts(results))
		outcomes, err := asyncio.GatherOutcomes[int](tk,
			asyncio.RunInExecutor(tk, parse("7")),
			asyncio.RunInExecutor(tk, parse("x"))).Await(tk)
		if err != nil {
			return err
		}
		var outs []any
		for _, o := range outcomes {
			if o.Err != nil {
				outs = append(outs, pd(o.Err))
			} else {
				outs = append(outs, o.Value)
			}
		}
		p.log("outcomes"+" %v %v", outs...)

		gate := make(chan struct{}) // threading.Event
		var finished atomic.Bool
		started := asyncio.NewEvent()
		l := tk.Loop()
		slowExport := func(context.Context) (string, error) {
			if _, err := l.CallSoonThreadsafe(started.Set); err != nil {
				return "", err
			}
			<-gate
			finished.Store(true)
			return "exported", nil
		}
		export := func(t *asyncio.T) (string, error) {
			v, err := asyncio.ToThread(t, slowExport)
			if asyncio.IsCancelled(err) {
				p.log("export cancelled %s thread finished: %s", pd(err), pb(finished.Load()))
			}
			return v, err
		}
		task := asyncio.CreateTask(tk, export)
		if err := started.Wait(tk); err != nil {
			return err
		}
		p.log("export running, cancelling it")
		task.Cancel("user abort")
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("main saw %s task cancelled %s", pd(err), pb(task.Cancelled()))
		} else {
			return fmt.Errorf("export: %v, want a cancellation", err)
		}
		close(gate)
		if err := asyncio.ShutdownDefaultExecutor(tk); err != nil {
			return err
		}
		p.log("executor shut down, thread finished: %s", pb(finished.Load()))
		if _, err := asyncio.ToThread(tk, checksum([]byte("late"))); errors.Is(err, asyncio.ErrRuntime) {
			p.log("after shutdown: %s", pd(err))
		}
		return nil
	})
}

// pyInts formats a []int as Python prints a list of ints.
func pyInts(vs []int) string {
	s := "["
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(v)
	}
	return s + "]"
}

// ---------------------------------------------------------------------------
// p19_shield_commit.py

var wantShieldCommit = cpythonTrace("p19_shield_commit")

func TestPortShieldCommit(t *testing.T) {
	runPort(t, wantShieldCommit, func(p *probe, tk *asyncio.T) error {
		var ledger []string
		commits := map[string]*asyncio.Task[string]{}
		commit := func(txn string, delay time.Duration, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("commit %s starts", txn)
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				if fail {
					return "", newRuntimeError(txn + " rejected")
				}
				ledger = append(ledger, txn)
				p.log("commit %s written", txn)
				return txn + "-ok", nil
			}
		}
		handle := func(txn string, delay time.Duration, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				inner := asyncio.CreateTask(t, commit(txn, delay, fail)) // ensure_future
				commits[txn] = inner
				v, err := asyncio.Shield[string](inner).Await(t)
				if asyncio.IsCancelled(err) {
					p.log("handler %s cancelled %s commit done %s", txn, pd(err), pb(inner.Done()))
				}
				return v, err
			}
		}
		h1 := asyncio.CreateTask(tk, handle("t1", 300*ms, false))
		h2 := asyncio.CreateTask(tk, handle("t2", 200*ms, true))
		h3 := asyncio.CreateTask(tk, handle("t3", 100*ms, false))
		h4 := asyncio.CreateTask(tk, handle("t4", 400*ms, false))
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return err
		}
		p.log("client disconnects")
		h1.Cancel("disconnect")
		h2.Cancel("disconnect")
		for _, h := range []*asyncio.Task[string]{h1, h2} {
			if _, err := h.Await(tk); asyncio.IsCancelled(err) {
				p.log("main saw %s cancelling %d", pd(err), h.Cancelling())
			} else {
				return fmt.Errorf("handler: %v, want a cancellation", err)
			}
		}
		v, err := h3.Await(tk)
		if err != nil {
			return err
		}
		p.log("h3 %s", v)
		commits["t4"].Cancel("operator")
		if _, err := h4.Await(tk); asyncio.IsCancelled(err) {
			p.log("h4 ended %s t4 cancelled %s", pd(err), pb(commits["t4"].Cancelled()))
		} else {
			return fmt.Errorf("h4: %v, want a cancellation", err)
		}
		for _, txn := range []string{"t1", "t2"} {
			v, err := commits[txn].Await(tk)
			var re *runtimeError
			switch {
			case err == nil:
				p.log("reconciled %s %s", txn, v)
			case errors.As(err, &re):
				p.log("reconcile %s failed %s", txn, pd(err))
			default:
				return err
			}
		}
		p.log("ledger %s", pstrs(ledger))

		p.restart()
		lookup := func(t *asyncio.T, delay time.Duration) (string, error) {
			if err := asyncio.Sleep(t, delay); err != nil {
				return "", err
			}
			return "found", nil
		}
		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, 100*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			_, err := lookup(tk, 200*ms)
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("lookup timed out, expired %s", pb(cm.Expired()))
		} else {
			return fmt.Errorf("lookup: %v, want a timeout", err)
		}
		err = asyncio.Timeout(tk, 100*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			if err := s.Reschedule(s.When() + 200*ms); err != nil {
				return err
			}
			p.log("extended to %s expired %s", p.rel(s.When()), pb(s.Expired()))
			v, err := lookup(tk, 200*ms)
			if err != nil {
				return err
			}
			p.log("slow lookup %s", v)
			return nil
		})
		if err != nil {
			return err
		}
		p.log("finished in time, expired %s", pb(cm.Expired()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p20_eager_cache.py

var wantEagerCache = cpythonTrace("p20_eager_cache")

// loop.set_task_factory(asyncio.eager_task_factory) and back to None in
// the middle of the program: the port passes WithEagerStart to each
// create_task made while the factory is set (WithEagerTasks is a loop
// option, chosen when the loop is made), as p02 does.
func TestPortEagerCache(t *testing.T) {
	runPort(t, wantEagerCache, func(p *probe, tk *asyncio.T) error {
		cache := map[string]int{"a": 1, "b": 2}
		fetch := func(key string, delay time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				me := asyncio.CurrentTask(t)
				p.log("fetch %s starts, current task set: %s", key, pb(me != nil))
				if v, ok := cache[key]; ok {
					return v, nil
				}
				if err := asyncio.Sleep(t, delay); err != nil {
					return 0, err
				}
				cache[key] = len(key) * 10
				p.log("fetch %s loaded in %s", key, me.Name())
				return cache[key], nil
			}
		}
		prefetch := func(keys []string, factory ...asyncio.TaskOption) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				p.log("prefetch starts")
				var tasks []*asyncio.Task[int]
				for i, k := range keys {
					opts := append([]asyncio.TaskOption{asyncio.WithName("pre-" + k)}, factory...)
					tasks = append(tasks, asyncio.CreateTask(t, fetch(k, time.Duration(i+1)*100*ms), opts...))
				}
				var dones []bool
				for _, tk := range tasks {
					dones = append(dones, tk.Done())
				}
				p.log("prefetch created %s", pbools(dones...))
				vals, err := asyncio.Gather(t, asyncio.Awaitables(tasks)...).Await(t)
				sum := 0
				for _, v := range vals {
					sum += v
				}
				return sum, err
			}
		}
		eager := asyncio.WithEagerStart() // set_task_factory(eager_task_factory)
		hit := asyncio.CreateTask(tk, fetch("a", 100*ms), asyncio.WithName("hit"), eager)
		hv, err := hit.Result()
		if err != nil {
			return fmt.Errorf("hit: %v", err)
		}
		p.log("hit done %s result %d", pb(hit.Done()), hv)
		miss := asyncio.CreateTask(tk, fetch("ccc", 100*ms), asyncio.WithName("miss"), eager)
		p.log("miss done %s tasks %d", pb(miss.Done()), len(asyncio.AllTasks(tk)))
		mv, err := miss.Await(tk)
		if err != nil {
			return err
		}
		p.log("miss result %d", mv)
		total, err := asyncio.CreateTask(tk, prefetch([]string{"b", "dd", "a", "eeee"}, eager), asyncio.WithName("prefetch"), eager).Await(tk)
		if err != nil {
			return err
		}
		p.log("prefetch total %d tasks %d", total, len(asyncio.AllTasks(tk)))

		p.restart()
		// set_task_factory(None)
		lazy := asyncio.CreateTask(tk, fetch("a", 100*ms), asyncio.WithName("lazy"))
		p.log("lazy done %s tasks %d", pb(lazy.Done()), len(asyncio.AllTasks(tk)))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("lazy done after a yield %s", pb(lazy.Done()))
		total, err = asyncio.CreateTask(tk, prefetch([]string{"b", "ff"}), asyncio.WithName("prefetch2")).Await(tk)
		if err != nil {
			return err
		}
		p.log("prefetch2 total %d", total)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p21_request_context.py

var wantRequestContext = cpythonTrace("p21_request_context")

func TestPortRequestContext(t *testing.T) {
	runPort(t, wantRequestContext, func(p *probe, tk *asyncio.T) error {
		requestID := asyncio.NewContextVar("request_id", "-")
		user := asyncio.NewContextVarNoDefault[string]("user")
		audit := func(action string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 10*ms); err != nil {
					return err
				}
				p.log("audit %s req %s user %s", action, requestID.Get(t), user.GetDefault(t, "anonymous"))
				return nil
			}
		}
		childOverrides := func(t *asyncio.T) error {
			requestID.Set(t, "child-override")
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
			p.log("child sees %s", requestID.Get(t))
			return nil
		}
		handler := func(rid string, delay time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				requestID.Set(t, rid)
				if err := asyncio.Sleep(t, delay); err != nil {
					return noValue, err
				}
				a := asyncio.CreateTaskErr(t, audit("read"))
				requestID.Set(t, rid+"-late")
				if _, err := a.Await(t); err != nil {
					return noValue, err
				}
				if _, err := asyncio.CreateTaskErr(t, childOverrides).Await(t); err != nil {
					return noValue, err
				}
				p.log("handler %s still has %s", rid, requestID.Get(t))
				return noValue, nil
			}
		}
		_, userSet := user.LookupValue(asyncio.CopyContext(tk).Context())
		p.log("main starts with %s user set %s", requestID.Get(tk), pb(userSet))
		if _, err := asyncio.GatherFuncs(tk, handler("r1", 100*ms), handler("r2", 200*ms)).Await(tk); err != nil {
			return err
		}
		p.log("main after handlers %s", requestID.Get(tk))

		tok := requestID.Set(tk, "batch")
		inner := requestID.Set(tk, "batch-step")
		p.log("nested %s", requestID.Get(tk))
		if err := requestID.Reset(tk, inner); err != nil {
			return err
		}
		p.log("after inner reset %s", requestID.Get(tk))
		if err := requestID.Reset(tk, tok); err != nil {
			return err
		}
		p.log("after outer reset %s", requestID.Get(tk))

		p.restart()
		ctx := asyncio.CopyContext(tk)
		login := func(name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				user.Set(t, name)
				requestID.Set(t, "login-"+name)
				return asyncio.Sleep(t, 100*ms)
			}
		}
		whoami := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 20*ms); err != nil {
				return err
			}
			p.log("whoami in shared ctx: %s %s", user.GetDefault(t, "anonymous"), requestID.Get(t))
			return nil
		}
		if _, err := asyncio.Gather(tk,
			asyncio.CreateTaskErr(tk, login("ana"), asyncio.WithVarContext(ctx)),
			asyncio.CreateTaskErr(tk, whoami, asyncio.WithVarContext(ctx))).Await(tk); err != nil {
			return err
		}
		u, _ := user.LookupValue(ctx.Context())
		r, ok := requestID.LookupValue(ctx.Context())
		if !ok {
			return errors.New("ctx[request_id]: KeyError")
		}
		p.log("ctx now has user %s req %s", u, r)
		p.log("main still %s %s", user.GetDefault(tk, "anonymous"), requestID.Get(tk))

		requestID.Set(tk, "group")
		if err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			if _, err := asyncio.SpawnErr(g, audit("spawned-first")); err != nil {
				return err
			}
			requestID.Set(tk, "group-later")
			_, err := asyncio.SpawnErr(g, audit("spawned-second"))
			return err
		}); err != nil {
			return err
		}
		p.log("group done %s", requestID.Get(tk))

		tok = requestID.Set(tk, "once")
		if err := requestID.Reset(tk, tok); err != nil {
			return err
		}
		if err := requestID.Reset(tk, tok); errors.Is(err, asyncio.ErrRuntime) {
			p.log("token reused: RuntimeError")
		}
		tok = requestID.Set(tk, "parent")
		foreignReset := func(t *asyncio.T) error {
			if err := requestID.Reset(t, tok); errors.Is(err, asyncio.ErrValue) {
				p.log("token from another context: ValueError, child sees %s", requestID.Get(t))
			}
			return nil
		}
		if _, err := asyncio.CreateTaskErr(tk, foreignReset).Await(tk); err != nil {
			return err
		}
		if err := user.Reset(tk, tok); errors.Is(err, asyncio.ErrValue) {
			p.log("token of another var: ValueError")
		}
		p.log("end %s", requestID.Get(tk))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p22_pool_lock_misuse.py

var wantPoolLockMisuse = cpythonTrace("p22_pool_lock_misuse")

func TestPortPoolLockMisuse(t *testing.T) {
	runPort(t, wantPoolLockMisuse, func(p *probe, tk *asyncio.T) error {
		useConn := func(name string, pool *asyncio.BoundedSemaphore, hold time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := asyncio.WithLock(t, pool, func() error {
					p.log("%s got a connection, pool locked %s", name, pb(pool.Locked()))
					if err := asyncio.Sleep(t, hold); err != nil {
						return err
					}
					if name == "bad" {
						return newConnectionError("reset by peer")
					}
					return nil
				})
				if err == nil {
					p.log("%s returned its connection", name)
				}
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled %s pool locked %s", name, pd(err), pb(pool.Locked()))
				}
				return err
			}
		}
		lock := asyncio.NewLock()
		if err := lock.Release(); errors.Is(err, asyncio.ErrRuntime) {
			p.log("release unlocked: %s", pd(err))
		}

		pool := asyncio.NewBoundedSemaphore(2)
		users := []*asyncio.Task[struct{}]{
			asyncio.CreateTaskErr(tk, useConn("u1", pool, 300*ms)),
			asyncio.CreateTaskErr(tk, useConn("bad", pool, 100*ms)),
			asyncio.CreateTaskErr(tk, useConn("u3", pool, 100*ms)),
			asyncio.CreateTaskErr(tk, useConn("u4", pool, 100*ms)),
		}
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return err
		}
		p.log("pool locked %s", pb(pool.Locked()))
		users[2].Cancel("gave up")
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		users[0].Cancel("shutdown")
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(users)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []any
		for _, r := range results {
			outs = append(outs, pd(r.Err))
		}
		p.log("results %s %s %s %s", outs...)
		p.log("pool locked %s", pb(pool.Locked()))
		if err := pool.Acquire(tk); err != nil {
			return err
		}
		if err := pool.Release(); err != nil {
			return err
		}
		if err := pool.Release(); errors.Is(err, asyncio.ErrValue) {
			p.log("bounded over-release: %s", pdv(err))
		}
		sem := asyncio.NewSemaphore(1)
		if err := sem.Release(); err != nil {
			return err
		}
		if err := sem.Acquire(tk); err != nil {
			return err
		}
		if err := sem.Acquire(tk); err != nil {
			return err
		}
		p.log("plain semaphore took two, locked %s", pb(sem.Locked()))

		p.restart()
		bookkeeper := func(name string, hold time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := asyncio.WithLock(t, lock, func() error {
					p.log("%s holds the lock", name)
					return asyncio.Sleep(t, hold)
				})
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled, lock locked %s", name, pb(lock.Locked()))
				}
				return err
			}
		}
		k1 := asyncio.CreateTaskErr(tk, bookkeeper("k1", 100*ms))
		k2 := asyncio.CreateTaskErr(tk, bookkeeper("k2", 100*ms))
		k3 := asyncio.CreateTaskErr(tk, bookkeeper("k3", 100*ms))
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return err
		}
		k2.Cancel()
		if _, err := asyncio.Gather(tk, k1, k3).Await(tk); err != nil {
			return err
		}
		p.log("k2 cancelled %s lock locked %s", pb(k2.Cancelled()), pb(lock.Locked()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p23_task_bookkeeping.py

var wantTaskBookkeeping = cpythonTrace("p23_task_bookkeeping")

// pyExcRepr is repr(e) of the programs' exceptions: ValueError('beta').
func pyExcRepr(err error) string {
	if e, ok := err.(interface{ pyRepr() (string, string) }); ok {
		k, m := e.pyRepr()
		return k + "('" + m + "')"
	}
	return fmt.Sprintf("%#v", err)
}

// A done callback receives no argument in Go (README's mapping of
// add_done_callback): on_done(tag) also takes the task the program's cb(t)
// receives. remove_done_callback takes the id add_done_callback returned.
func TestPortTaskBookkeeping(t *testing.T) {
	runPort(t, wantTaskBookkeeping, func(p *probe, tk *asyncio.T) error {
		l := tk.Loop()
		job := func(name string, delay time.Duration, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				me := asyncio.CurrentTask(t)
				p.log("%s running as %s", name, me.Name())
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				if fail {
					return "", newValueError(name)
				}
				return toUpper(name), nil
			}
		}
		mainTask := asyncio.CurrentTask(tk)
		mainTask.SetName("runner")
		var seen []string
		onDone := func(tag string, task *asyncio.Task[string]) func() {
			return func() {
				var state string
				switch {
				case task.Cancelled():
					state = "cancelled"
				case task.Err() != nil:
					state = "failed " + pyExcRepr(task.Err())
				default:
					v, _ := task.Result()
					state = "ok " + v
				}
				cur := "None"
				if c := asyncio.CurrentTask(l); c != nil {
					cur = c.String()
				}
				seen = append(seen, fmt.Sprintf("%s:%s:%s:current=%s", tag, task.Name(), state, cur))
			}
		}

		p.log("tasks at start %d", len(asyncio.AllTasks(tk)))
		a := asyncio.CreateTask(tk, job("alpha", 100*ms, false), asyncio.WithName("job-alpha"))
		b := asyncio.CreateTask(tk, job("beta", 200*ms, true), asyncio.WithName("job-beta"))
		c := asyncio.CreateTask(tk, job("gamma", 300*ms, false), asyncio.WithName("job-gamma"))
		p.log("tasks after create %d", len(asyncio.AllTasks(tk)))
		first := a.AddDoneCallback(onDone("first", a))
		second := a.AddDoneCallback(onDone("second", a))
		a.AddDoneCallback(onDone("third", a))
		p.log("removed %d", a.RemoveDoneCallback(second))
		p.log("removed again %d", a.RemoveDoneCallback(second))
		b.AddDoneCallback(onDone("b", b))
		c.AddDoneCallback(onDone("c", c))
		c.SetName("job-gamma-renamed")
		if err := asyncio.Sleep(tk, 130*ms); err != nil {
			return err
		}
		p.log("alpha done %s seen %s", pb(a.Done()), pstrs(seen))
		var names []string
		for _, t := range asyncio.AllTasks(tk) {
			names = append(names, t.Name())
		}
		sort.Strings(names)
		p.log("tasks now %d %s", len(names), pstrs(names))
		a.AddDoneCallback(onDone("late", a))
		p.log("late callback not yet run %d", len(seen))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("after a yield %s", seen[len(seen)-1])
		p.log("removed from done task %d", a.RemoveDoneCallback(first))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		c.Cancel()
		p.log("cancel requested, seen %d c done %s", len(seen), pb(c.Done()))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("c done %s seen %d", pb(c.Done()), len(seen))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		for _, s := range seen {
			p.log("%s", s)
		}
		p.log("tasks at end %d beta exception %s", len(asyncio.AllTasks(tk)), pyExcRepr(b.Err()))
		return nil
	})
}

func toUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
