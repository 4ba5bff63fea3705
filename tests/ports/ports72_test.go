package ports_test

// Ports p72 onward: programs from the areas the earlier ports cover least
// (Queue.shutdown in a pipeline, as_completed's plain-for form and
// timeout_at, tasks started eagerly one by one, a TaskGroup under a
// timeout whose child withdraws its cancellation, a service run and shut
// down in an asyncio.Runner).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// ---------------------------------------------------------------------------
// p72_pipeline_shutdown.py

func TestPortPipelineShutdown(t *testing.T) {
	runPort(t, cpythonTrace("p72_pipeline_shutdown"), func(p *probe, tk *asyncio.T) error {
		producer := func(raw *asyncio.Queue[string]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for i := range 6 {
					if err := raw.Put(t, fmt.Sprintf("r%d", i)); err != nil {
						return err
					}
					p.log("produced r%d qsize %d", i, raw.Len())
					if err := asyncio.Sleep(t, 60*ms); err != nil {
						return err
					}
				}
				raw.Shutdown(false)
				p.log("producer shut raw down, qsize %d", raw.Len())
				if err := raw.Put(t, "late"); errors.Is(err, asyncio.ErrQueueShutDown) {
					p.log("late put refused")
				} else if err != nil {
					return err
				}
				return nil
			}
		}
		parser := func(name string, raw, parsed *asyncio.Queue[string]) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				n := 0
				for {
					rec, err := raw.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("%s raw shut down after %d", name, n)
						return n, nil
					}
					if err != nil {
						return 0, err
					}
					err = asyncio.Sleep(t, 130*ms)
					if err == nil {
						err = parsed.Put(t, strings.ToUpper(rec))
						if err == nil {
							p.log("%s passed %s parsed qsize %d", name, rec, parsed.Len())
						}
					}
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("%s parsed shut down holding %s", name, rec)
						return n, raw.TaskDone()
					}
					if err != nil {
						return 0, err
					}
					n++
					if err := raw.TaskDone(); err != nil {
						return 0, err
					}
				}
			}
		}
		writer := func(parsed *asyncio.Queue[string], out *[]string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					item, err := parsed.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("writer stops, qsize %d", parsed.Len())
						return nil
					}
					if err != nil {
						return err
					}
					p.log("writer got %s", item)
					err = asyncio.Sleep(t, 350*ms)
					if err == nil {
						*out = append(*out, item)
					}
					if tdErr := parsed.TaskDone(); err == nil {
						err = tdErr
					}
					if err != nil {
						return err
					}
				}
			}
		}

		p.restart()
		raw := asyncio.NewQueue[string](2)
		parsed := asyncio.NewQueue[string](2)
		var out []string
		w := asyncio.CreateTaskErr(tk, writer(parsed, &out))
		ps := []*asyncio.Task[int]{
			asyncio.CreateTask(tk, parser("p0", raw, parsed)),
			asyncio.CreateTask(tk, parser("p1", raw, parsed)),
		}
		prod := asyncio.CreateTaskErr(tk, producer(raw))
		if _, err := prod.Await(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 330*ms); err != nil {
			return err
		}
		p.log("shutting parsed down: qsize %d full %s", parsed.Len(), pb(parsed.Full()))
		parsed.Shutdown(true)
		p.log("after immediate shutdown qsize %d empty %s", parsed.Len(), pb(parsed.Empty()))
		if _, err := parsed.GetNowait(); errors.Is(err, asyncio.ErrQueueShutDown) {
			p.log("get_nowait refused")
		}
		j := asyncio.CreateTaskErr(tk, parsed.Join)
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("join done %s", pb(j.Done()))
		counts, err := asyncio.Gather(tk, asyncio.Awaitables(ps)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("parsers %s", pyInts(counts))
		if _, err := w.Await(tk); err != nil {
			return err
		}
		if _, err := j.Await(tk); err != nil {
			return err
		}
		p.log("join returned, out %s", pstrs(out))
		var ve *asyncio.ValueError
		if err := parsed.TaskDone(); errors.As(err, &ve) {
			p.log("extra task_done: %s", ve.Msg)
		}
		if err := raw.Join(tk); err != nil {
			return err
		}
		p.log("raw joined, qsize %d", raw.Len())
		return nil
	})
}

// ---------------------------------------------------------------------------
// p73_mirror_race.py

func TestPortMirrorRace(t *testing.T) {
	runPort(t, cpythonTrace("p73_mirror_race"), func(p *probe, tk *asyncio.T) error {
		type spec struct {
			name  string
			delay time.Duration
			fail  bool
		}
		mirror := func(s spec) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, s.delay); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled", s.name)
					}
					return "", err
				}
				if s.fail {
					return "", newConnectionError(s.name)
				}
				return fmt.Sprintf("%s:%d", s.name, s.delay/(10*ms)), nil
			}
		}
		start := func(specs []spec) []*asyncio.Task[string] {
			var tasks []*asyncio.Task[string]
			for _, s := range specs {
				tasks = append(tasks, asyncio.CreateTask(tk, mirror(s), asyncio.WithName(s.name)))
			}
			return tasks
		}

		p.restart()
		tasks := start([]spec{{"eu", 330 * ms, false}, {"us", 120 * ms, true}, {"ap", 510 * ms, false}, {"sa", 210 * ms, false}})
		var got []string
		// as_completed's plain form hands out coroutines; AsCompletedFuncs
		// hands out functions, which are not tasks either.
		for i, c := range asyncio.AsCompletedFuncs(tk, asyncio.Awaitables(append(tasks, tasks[0])), 400*ms) {
			p.log("item %d is a task: %s", i, pb(false))
			r, err := c(tk)
			var ce *connectionError
			if errors.As(err, &ce) {
				p.log("failed %s", pd(ce))
				continue
			}
			if errors.Is(err, asyncio.ErrTimeout) {
				var pending []string
				for _, t := range tasks {
					if !t.Done() {
						pending = append(pending, t.Name())
					}
				}
				p.log("timed out at item %d pending %s", i, pstrs(pending))
				break
			}
			if err != nil {
				return err
			}
			got = append(got, r)
			p.log("result %s", r)
		}
		p.log("got %s ap cancelled %s", pstrs(got), pb(tasks[2].Cancelled()))
		late, err := tasks[2].Await(tk)
		if err != nil {
			return err
		}
		p.log("ap late %s", late)

		p.restart()
		tasks = start([]spec{{"n1", 430 * ms, false}, {"n2", 260 * ms, false}, {"n3", 830 * ms, false}, {"n4", 140 * ms, true}})
		byName := map[string]*asyncio.Task[string]{}
		for _, t := range tasks {
			byName[t.Name()] = t
		}
		first := ""
		var cm *asyncio.TimeoutScope
		err = asyncio.TimeoutAt(tk, tk.Loop().Time()+300*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("deadline %s", p.rel(cm.When()))
			for t, err := range asyncio.AsCompleted(tk, tasks, asyncio.Never) {
				if err != nil {
					return err
				}
				p.log("completed %s is the task: %s", t.Name(), pb(t == byName[t.Name()]))
				if t.Err() != nil {
					p.log("skip %s", pd(t.Err()))
					continue
				}
				r, _ := t.Result()
				if first == "" {
					first = r
					if err := cm.Reschedule(cm.When() + 200*ms); err != nil {
						return err
					}
					p.log("first %s deadline now %s", first, p.rel(cm.When()))
				} else {
					p.log("also %s", r)
				}
			}
			return nil
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("deadline passed, expired %s", pb(cm.Expired()))
		} else if err != nil {
			return err
		}
		var left []*asyncio.Task[string]
		var names []string
		for _, t := range tasks {
			if !t.Done() {
				left = append(left, t)
				names = append(names, t.Name())
			}
		}
		for _, t := range left {
			t.Cancel()
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(left)...).Await(tk)
		if err != nil {
			return err
		}
		outs := make([]string, len(res))
		for i, o := range res {
			outs[i] = pd(o.Err)
		}
		p.log("leftovers %s %s", pstrs(names), pstrs(outs))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p74_eager_coalescing.py

// pyStrRepr is repr(s) of a str: single quotes unless s holds one and no
// double quote.
func pyStrRepr(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

// pyAnyRepr is repr(v) of the program's values (ints and strs).
func pyAnyRepr(v any) string {
	if s, ok := v.(string); ok {
		return pyStrRepr(s)
	}
	return fmt.Sprint(v)
}

func TestPortEagerCoalescing(t *testing.T) {
	runPort(t, cpythonTrace("p74_eager_coalescing"), func(p *probe, tk *asyncio.T) error {
		type flight struct {
			owner *asyncio.T
			fut   *asyncio.Future[any]
		}
		inflight := map[string]flight{}
		cache := map[string]any{"a": 1}
		var calls []string
		backend := func(t *asyncio.T, key string) (any, error) {
			calls = append(calls, key)
			if err := asyncio.Sleep(t, time.Duration(len(key))*100*ms); err != nil {
				return nil, err
			}
			return strings.ToUpper(key), nil
		}
		lookup := func(key string) func(*asyncio.T) (any, error) {
			return func(t *asyncio.T) (any, error) {
				me := asyncio.CurrentTask(t)
				p.log("lookup %s in %s tasks %d", key, me.Name(), len(asyncio.AllTasks(t)))
				if v, ok := cache[key]; ok {
					return v, nil
				}
				if f, ok := inflight[key]; ok {
					p.log("%s joins %s", me.Name(), f.owner.Name())
					return asyncio.Shield[any](f.fut).Await(t)
				}
				fut := asyncio.NewFuture[any](t)
				inflight[key] = flight{me, fut}
				v, err := backend(t, key)
				if err != nil {
					fut.Cancel()
				}
				delete(inflight, key)
				if err != nil {
					return nil, err
				}
				cache[key] = v
				if err := fut.SetResult(v); err != nil {
					return nil, err
				}
				return v, nil
			}
		}
		request := func(fn func(*asyncio.T) (any, error), name string) *asyncio.Task[any] {
			task := asyncio.CreateTask(tk, fn, asyncio.WithName(name), asyncio.WithEagerStart())
			task.AddDoneCallback(func() {
				if task.Cancelled() {
					p.log("callback %s cancelled", task.Name())
				} else {
					v, _ := task.Result()
					p.log("callback %s %v", task.Name(), v)
				}
			})
			p.log("request %s returned, done %s", name, pb(task.Done()))
			return task
		}
		sortedKeys := func(m map[string]flight) []string {
			ks := slices.Collect(maps.Keys(m))
			slices.Sort(ks)
			return ks
		}
		giveUp := func(key string) func(*asyncio.T) (any, error) {
			return func(t *asyncio.T) (any, error) {
				me := asyncio.CurrentTask(t)
				me.Cancel("duplicate")
				p.log("%s cancelled itself, cancelling %d", me.Name(), me.Cancelling())
				v, err := lookup(key)(t)
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled at its await: %s inflight %s", me.Name(), pd(err), pstrs(sortedKeys(inflight)))
					return nil, err
				}
				if err != nil {
					return nil, err
				}
				p.log("%s got %v without suspending", me.Name(), v)
				return v, nil
			}
		}

		p.restart()
		r1 := request(lookup("a"), "r1")
		v, err := r1.Result()
		if err != nil {
			return err
		}
		p.log("r1 result %v", v)
		r2 := request(lookup("bb"), "r2")
		r3 := request(lookup("bb"), "r3")
		r5 := request(lookup("bb"), "r5")
		var fl []string
		for _, k := range sortedKeys(inflight) {
			fl = append(fl, fmt.Sprintf("('%s', '%s')", k, inflight[k].owner.Name()))
		}
		p.log("inflight [%s]", strings.Join(fl, ", "))
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		r5.Cancel()
		r4 := request(lookup("ccc"), "r4")
		r4.Cancel("caller gave up")
		p.log("r4 cancelling %d calls %s", r4.Cancelling(), pstrs(calls))
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables([]*asyncio.Task[any]{r2, r3, r4, r5})...).Await(tk)
		if err != nil {
			return err
		}
		outs := make([]string, len(res))
		for i, o := range res {
			if o.Err != nil {
				outs[i] = pyStrRepr(pd(o.Err))
			} else {
				outs[i] = pyStrRepr(pyAnyRepr(o.Value))
			}
		}
		cacheKeys := slices.Sorted(maps.Keys(cache))
		p.log("results [%s]", strings.Join(outs, ", "))
		p.log("inflight %s cache %s calls %s", pstrs(sortedKeys(inflight)), pstrs(cacheKeys), pstrs(calls))

		p.restart()
		u1 := request(giveUp("a"), "u1")
		p.log("u1 cancelled %s", pb(u1.Cancelled()))
		u2 := request(giveUp("dddd"), "u2")
		p.log("u2 done %s calls %s", pb(u2.Done()), pstrs(calls))
		if _, err := u2.Await(tk); asyncio.IsCancelled(err) {
			p.log("u2 %s cancelled %s", pd(err), pb(u2.Cancelled()))
		} else if err != nil {
			return err
		}
		p.log("cache %s", pstrs(slices.Sorted(maps.Keys(cache))))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p75_batch_deadline.py

func TestPortBatchDeadline(t *testing.T) {
	runPort(t, cpythonTrace("p75_batch_deadline"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, steps int, step, budget time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				done := 0
				err := asyncio.Timeout(t, budget, func(cm *asyncio.TimeoutScope) error {
					for range steps {
						if err := asyncio.Sleep(t, step); err != nil {
							return err
						}
						done++
						if err := cm.Reschedule(t.Loop().Time() + budget); err != nil {
							return err
						}
					}
					return nil
				})
				switch {
				case err == nil:
					p.log("%s finished %d", name, done)
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("%s own timeout after %d steps, cancelling %d", name, done, t.Cancelling())
				case asyncio.IsCancelled(err):
					p.log("%s cancelled after %d steps: %s cancelling %d", name, done, pd(err), t.Cancelling())
				}
				return done, err
			}
		}
		uploader := func(name string, chunks int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				sent := 0
				for sent < chunks {
					err := asyncio.Sleep(t, 130*ms)
					if asyncio.IsCancelled(err) {
						n := t.Uncancel()
						if err := asyncio.Sleep(t, 10*ms); err != nil {
							return sent, err
						}
						p.log("%s ignores cancel at chunk %d uncancel -> %d", name, sent, n)
						continue
					}
					if err != nil {
						return sent, err
					}
					sent++
				}
				p.log("%s uploaded %d cancelling %d", name, sent, t.Cancelling())
				return sent, nil
			}
		}
		job := func(t *asyncio.T) (string, error) {
			var up *asyncio.Task[int]
			err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				var err error
				if up, err = asyncio.Spawn(g, uploader("up2", 3)); err != nil {
					return err
				}
				_, err = asyncio.Spawn(g, worker("w-bg", 9, 110*ms, 300*ms))
				return err
			})
			if asyncio.IsCancelled(err) {
				p.log("job's group re-raised %s cancelling %d", pd(err), t.Cancelling())
				n := t.Uncancel()
				r, rerr := up.Result()
				if rerr != nil {
					return "", rerr
				}
				p.log("job uncancel -> %d upload result %d", n, r)
				return "partial", nil
			}
			if err != nil {
				return "", err
			}
			return "complete", nil
		}

		p.restart()
		var a, b, u *asyncio.Task[int]
		var outer *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 500*ms, func(s *asyncio.TimeoutScope) error {
			outer = s
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				var err error
				if a, err = asyncio.Spawn(g, worker("w-fast", 3, 100*ms, 150*ms)); err != nil {
					return err
				}
				if b, err = asyncio.Spawn(g, worker("w-slow", 10, 120*ms, 200*ms)); err != nil {
					return err
				}
				if u, err = asyncio.Spawn(g, uploader("up", 5)); err != nil {
					return err
				}
				p.log("body waits, deadline %s", p.rel(outer.When()))
				return nil
			})
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("batch timed out, expired %s cancelling %d", pb(outer.Expired()), tk.Cancelling())
		} else if err != nil {
			return err
		}
		av, aerr := a.Result()
		uv, uerr := u.Result()
		if aerr != nil || uerr != nil {
			return errors.Join(aerr, uerr)
		}
		p.log("a %d b cancelled %s u %d", av, pb(b.Cancelled()), uv)

		p.restart()
		var other *asyncio.Task[int]
		err = asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			if _, err := asyncio.Spawn(g, worker("w-stuck", 3, 300*ms, 200*ms)); err != nil {
				return err
			}
			var err error
			other, err = asyncio.Spawn(g, worker("w-other", 5, 90*ms, 200*ms))
			return err
		})
		err = asyncio.ExceptStar(err, asyncio.Except[*asyncio.TimeoutError](func(eg *asyncio.ExceptionGroup) error {
			p.log("group failed %s other cancelled %s cancelling %d", pd(eg), pb(other.Cancelled()), tk.Cancelling())
			return nil
		}))
		if err != nil {
			return err
		}

		p.restart()
		j := asyncio.CreateTask(tk, job)
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		j.Cancel("stop now")
		r, err := j.Await(tk)
		if err != nil {
			return err
		}
		p.log("job returned %s cancelled %s cancelling %d", r, pb(j.Cancelled()), j.Cancelling())
		return nil
	})
}

// ---------------------------------------------------------------------------
// p76_runner_service.py

// runRunnerPort is runPort for a program whose main() drives an
// asyncio.Runner itself: main gets the probe (its loop set to the
// runner's) and the runner, which runs on virtual time and is closed after.
func runRunnerPort(t *testing.T, want string, main func(p *probe, r *asyncio.Runner) error) {
	t.Helper()
	r := asyncio.NewRunner(asyncio.WithVirtualTime())
	p := &probe{l: r.Loop()}
	err := main(p, r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	got := p.b.String()
	if err != nil {
		t.Fatalf("main failed: %v (%s)\ntrace so far:\n%s", err, pd(err), got)
	}
	if got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

func TestPortRunnerService(t *testing.T) {
	runRunnerPort(t, cpythonTrace("p76_runner_service"), func(p *probe, r *asyncio.Runner) error {
		service := asyncio.NewContextVar("service", "-")
		requestID := asyncio.NewContextVar("request_id", "none")
		setup := func(t *asyncio.T) (struct{}, error) {
			p.restart()
			service.Set(t, "billing")
			p.log("setup sets service %s", service.Get(t))
			return noValue, nil
		}
		peek := func(label, set string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				p.log("%s sees service %s request_id %s", label, service.Get(t), requestID.Get(t))
				if set != "" {
					service.Set(t, set)
				}
				return noValue, nil
			}
		}
		type svcState struct {
			inflight  int
			committed bool
		}
		handle := func(cond *asyncio.Condition, state *svcState, rid string, cost time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				requestID.Set(t, rid)
				if err := asyncio.WithLock(t, cond, func() error { state.inflight++; return nil }); err != nil {
					return err
				}
				err := asyncio.Sleep(t, cost)
				switch {
				case err == nil:
					p.log("%s handled %s", service.Get(t), requestID.Get(t))
				case asyncio.IsCancelled(err):
					p.log("%s abandoned %s", service.Get(t), requestID.Get(t))
				}
				if lerr := asyncio.WithLock(t, cond, func() error {
					state.inflight--
					cond.NotifyAll()
					return nil
				}); err == nil {
					err = lerr
				}
				return err
			}
		}
		commit := func(state *svcState) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				p.log("commit starts")
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				state.committed = true
				p.log("commit done")
				return nil
			}
		}
		serve := func(t *asyncio.T) (string, error) {
			loop := t.Loop()
			stop := asyncio.NewEvent()
			cond := asyncio.NewCondition(nil)
			state := &svcState{}
			var beats []int
			var beat func(n int)
			beat = func(n int) {
				beats = append(beats, n)
				if !stop.IsSet() {
					loop.CallLater(150*ms, func() { beat(n + 1) })
				}
			}
			loop.CallLater(150*ms, func() { beat(1) })
			loop.CallLater(420*ms, stop.Set)
			var tasks []*asyncio.Task[struct{}]
			acceptor := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
				for i, cost := range []time.Duration{330 * ms, 520 * ms, 110 * ms, 740 * ms, 200 * ms} {
					tasks = append(tasks, asyncio.CreateTaskErr(t, handle(cond, state, fmt.Sprintf("req%d", i), cost)))
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						if asyncio.IsCancelled(err) {
							p.log("acceptor stopped after %d requests", len(tasks))
						}
						return err
					}
				}
				return nil
			})
			if err := stop.Wait(t); err != nil {
				return "", err
			}
			p.log("stop requested, inflight %d beats %s", state.inflight, pyInts(beats))
			acceptor.Cancel()
			err := asyncio.Timeout(t, 300*ms, func(*asyncio.TimeoutScope) error {
				if err := asyncio.WithLock(t, cond, func() error {
					return cond.WaitFor(t, func() bool { return state.inflight == 0 })
				}); err != nil {
					return err
				}
				p.log("drained")
				return nil
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("drain timed out, inflight %d", state.inflight)
				for _, tk := range tasks {
					tk.Cancel()
				}
				if _, err := asyncio.GatherOutcomes(t, asyncio.Awaitables(tasks)...).Await(t); err != nil {
					return "", err
				}
			} else if err != nil {
				return "", err
			}
			cancelled := make([]bool, len(tasks))
			for i, tk := range tasks {
				cancelled[i] = tk.Cancelled()
			}
			p.log("inflight %d cancelled %s", state.inflight, pbools(cancelled...))
			loop.CallLater(100*ms, func() { t.Cancel("second signal") })
			c := asyncio.CreateTaskErr(t, commit(state))
			if _, err := asyncio.Shield[struct{}](c).Await(t); asyncio.IsCancelled(err) {
				p.log("serve got %s commit done %s", pd(err), pb(c.Done()))
				if _, cerr := c.Await(t); cerr != nil {
					return "", cerr
				}
				p.log("committed %s cancelling %d", pb(state.committed), t.Cancelling())
				return "", err
			} else if err != nil {
				return "", err
			}
			return "clean", nil
		}

		ctx := asyncio.NewVarContext(context.Background())
		inCtx := asyncio.WithVarContext(ctx)
		if _, err := asyncio.RunWith(r, setup, inCtx); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(r, peek("run without context", "other")); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(r, peek("run in ctx", ""), inCtx); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(r, serve, inCtx); asyncio.IsCancelled(err) {
			fmt.Fprintf(&p.b, "serve raised %s\n", pd(err))
		} else if err != nil {
			return err
		}
		if _, err := asyncio.RunWith(r, peek("last run", "")); err != nil {
			return err
		}
		v, _ := service.LookupValue(ctx.Context())
		fmt.Fprintf(&p.b, "tasks left %d service in ctx %s\n", len(asyncio.AllTasks(r.Loop())), v)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p77_eager_factory_mix.py

// runPortOn is runPort with loop options besides virtual time.
func runPortOn(t *testing.T, want string, opts []asyncio.LoopOption, main func(p *probe, tk *asyncio.T) error) {
	t.Helper()
	p := &probe{}
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		return struct{}{}, main(p, tk)
	}, append([]asyncio.LoopOption{asyncio.WithVirtualTime()}, opts...)...)
	got := p.b.String()
	if err != nil {
		t.Fatalf("main failed: %v (%s)\ntrace so far:\n%s", err, pd(err), got)
	}
	if got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// The program sets eager_task_factory first thing in main, after main's
// own task was made: the port's loop is made WithEagerTasks, which
// Run's main task does not start eagerly either (the loop is not running
// when it is created). as_completed() over coroutines wraps each in a task
// (ensure_future, through the factory) before anything else; the port
// makes those tasks itself and hands them to AsCompletedFuncs.
func TestPortEagerFactoryMix(t *testing.T) {
	runPortOn(t, cpythonTrace("p77_eager_factory_mix"), []asyncio.LoopOption{asyncio.WithEagerTasks()}, func(p *probe, tk *asyncio.T) error {
		who := asyncio.NewContextVar("who", "main")
		mainTask := tk
		leaf := func(name string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s runs in its own task %s who %s", name, pb(asyncio.CurrentTask(t) != mainTask), who.Get(t))
				return name, nil
			}
		}
		outer := func(t *asyncio.T) (string, error) {
			who.Set(t, "outer")
			me := asyncio.CurrentTask(t)
			inner := asyncio.CreateTask(t, leaf("inner"), asyncio.WithName("inner"))
			p.log("outer after creating inner: done %s current is outer %s", pb(inner.Done()), pb(asyncio.CurrentTask(t) == me))
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return "", err
			}
			return inner.Result()
		}
		boom := func(t *asyncio.T) error {
			p.log("boom raising in its eager step")
			return newKeyError("k")
		}
		locker := func(name string, lock *asyncio.Lock, hold time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				p.log("%s wants the lock, locked %s", name, pb(lock.Locked()))
				if err := asyncio.WithLock(t, lock, func() error {
					p.log("%s has the lock", name)
					return asyncio.Sleep(t, hold)
				}); err != nil {
					return err
				}
				p.log("%s released", name)
				return nil
			}
		}
		step := func(name string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s starts", name)
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				p.log("%s ends", name)
				return name, nil
			}
		}

		p.restart()
		o := asyncio.CreateTask(tk, outer, asyncio.WithName("outer"))
		p.log("main sees who %s outer done %s", who.Get(tk), pb(o.Done()))
		r, err := o.Await(tk)
		if err != nil {
			return err
		}
		p.log("outer result %s", r)

		b := asyncio.CreateTaskErr(tk, boom, asyncio.WithName("boom"))
		p.log("boom done %s cancel -> %s exception %s", pb(b.Done()), pb(b.Cancel()), pd(b.Err()))

		lock := asyncio.NewLock()
		l1 := asyncio.CreateTaskErr(tk, locker("l1", lock, 200*ms))
		l2 := asyncio.CreateTaskErr(tk, locker("l2", lock, 100*ms))
		p.log("after creating lockers: locked %s l1 done %s", pb(lock.Locked()), pb(l1.Done()))
		if _, err := asyncio.Gather(tk, l1, l2).Await(tk); err != nil {
			return err
		}

		p.restart()
		g := asyncio.GatherFuncs(tk, step("g1", 200*ms), step("g2", 100*ms))
		p.log("gather returned")
		rs, err := g.Await(tk)
		if err != nil {
			return err
		}
		p.log("gather result %s", pstrs(rs))

		p.restart()
		cs := []*asyncio.Task[string]{asyncio.CreateTask(tk, step("c1", 300*ms)), asyncio.CreateTask(tk, step("c2", 100*ms))}
		fns := asyncio.AsCompletedFuncs(tk, asyncio.Awaitables(cs), asyncio.Never)
		p.log("as_completed returned")
		for _, c := range fns {
			r, err := c(tk)
			if err != nil {
				return err
			}
			p.log("next %s", r)
		}

		p.restart()
		var t1, t2 *asyncio.Task[string]
		err = asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			var err error
			if t1, err = asyncio.Spawn(g, step("tg1", 100*ms)); err != nil {
				return err
			}
			p.log("tg1 created, done %s", pb(t1.Done()))
			if t2, err = asyncio.Spawn(g, leaf("tg2")); err != nil {
				return err
			}
			p.log("tg2 created, done %s", pb(t2.Done()))
			return nil
		})
		if err != nil {
			return err
		}
		r1, _ := t1.Result()
		r2, _ := t2.Result()
		p.log("group done %s %s", r1, r2)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p78_fast_paths.py

func TestPortFastPaths(t *testing.T) {
	runPort(t, cpythonTrace("p78_fast_paths"), func(p *probe, tk *asyncio.T) error {
		ticks := 0
		p.restart()
		ticker := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for {
				ticks++
				if err := asyncio.Sleep(t, 0); err != nil {
					return err
				}
			}
		})
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		measure := func(label string, aw func() error) error {
			before := ticks
			if err := aw(); err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			p.log("%s ticks %d", label, ticks-before)
			return nil
		}
		sem := asyncio.NewSemaphore(2)
		ev := asyncio.NewEvent()
		ev.Set()
		lock := asyncio.NewLock()
		cond := asyncio.NewCondition(nil)
		q := asyncio.NewQueue[int](2)
		fut := asyncio.NewFuture[string](tk)
		if err := fut.SetResult("ready"); err != nil {
			return err
		}
		done := asyncio.CreateTask(tk, func(*asyncio.T) (string, error) { return "job", nil })
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		ignore := func(_ any, err error) error { return err }
		steps := []struct {
			label string
			aw    func() error
		}{
			{"sleep(0)", func() error { return asyncio.Sleep(tk, 0) }},
			{"semaphore acquire", func() error { return sem.Acquire(tk) }},
			{"event wait", func() error { return ev.Wait(tk) }},
			{"lock acquire", func() error {
				if err := lock.Acquire(tk); err != nil {
					return err
				}
				return lock.Release()
			}},
			{"condition wait_for", func() error {
				return asyncio.WithLock(tk, cond, func() error { return cond.WaitFor(tk, func() bool { return true }) })
			}},
			{"queue put", func() error { return q.Put(tk, 1) }},
			{"queue get", func() error {
				if _, err := q.Get(tk); err != nil {
					return err
				}
				return q.TaskDone()
			}},
			{"queue join", func() error { return q.Join(tk) }},
			{"finished future", func() error { return ignore(fut.Await(tk)) }},
			{"finished task", func() error { return ignore(done.Await(tk)) }},
			{"shield of finished", func() error { return ignore(asyncio.Shield[string](done).Await(tk)) }},
			{"wait_for finished", func() error { return ignore(asyncio.WaitFor[string](tk, time.Second, done)) }},
			{"timeout block", func() error {
				return asyncio.Timeout(tk, time.Second, func(*asyncio.TimeoutScope) error { return nil })
			}},
			{"gather finished", func() error {
				return ignore(asyncio.Gather(tk, asyncio.AwaitableOf[string](done), fut).Await(tk))
			}},
			{"gather nothing", func() error { return ignore(asyncio.Gather[string](tk).Await(tk)) }},
			{"wait finished", func() error {
				_, _, err := asyncio.Wait(tk, []*asyncio.Task[string]{done}, asyncio.Never, asyncio.AllCompleted)
				return err
			}},
			{"as_completed finished", func() error {
				for _, c := range asyncio.AsCompletedFuncs(tk, []asyncio.AwaitableOf[string]{done, fut}, asyncio.Never) {
					if _, err := c(tk); err != nil {
						return err
					}
				}
				return nil
			}},
			{"barrier of one", func() error { return ignore(asyncio.NewBarrier(1).Wait(tk)) }},
			{"to a sleeping task", func() error {
				return ignore(asyncio.CreateTaskErr(tk, func(t *asyncio.T) error { return asyncio.Sleep(t, 0) }).Await(tk))
			}},
		}
		for _, s := range steps {
			if err := measure(s.label, s.aw); err != nil {
				return err
			}
		}
		ticker.Cancel()
		p.log("sem locked %s qsize %d", pb(sem.Locked()), q.Len())
		return nil
	})
}

// ---------------------------------------------------------------------------
// p79_runner_leftovers.py

func TestPortRunnerLeftovers(t *testing.T) {
	runRunnerPort(t, cpythonTrace("p79_runner_leftovers"), func(p *probe, r *asyncio.Runner) error {
		var handled, closing []string
		bg := func(name string, period time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				n := 0
				for {
					err := asyncio.Sleep(t, period)
					if err == nil {
						n++
						continue
					}
					if !asyncio.IsCancelled(err) {
						return n, err
					}
					closing = append(closing, fmt.Sprintf("%s cancelled after %d beats", name, n))
					switch name {
					case "slow":
						if err := asyncio.Sleep(t, 70*ms); err != nil {
							return n, err
						}
						p.log("%s cleanup done", name)
					case "stubborn":
						t.Uncancel()
						return n, nil
					case "faulty":
						return n, newRuntimeError("cleanup failed")
					}
					return n, err
				}
			}
		}
		start := func(t *asyncio.T) (struct{}, error) {
			p.restart()
			loop := t.Loop()
			loop.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
				handled = append(handled, c.Message+": "+pd(c.Err))
			})
			for _, s := range []struct {
				name   string
				period time.Duration
			}{{"steady", 100 * ms}, {"slow", 130 * ms}, {"stubborn", 150 * ms}, {"faulty", 230 * ms}} {
				//asynciovet:ignore unawaitedtask background tasks left for the next runs and for Close to cancel, as the program's create_task calls are: that is what the port checks
				asyncio.CreateTask(t, bg(s.name, s.period), asyncio.WithName(s.name))
			}
			loop.CallLater(270*ms, func() { p.log("timer fired, tasks %d", len(asyncio.AllTasks(loop))) })
			if err := asyncio.Sleep(t, 40*ms); err != nil {
				return noValue, err
			}
			p.log("start returns, tasks %d", len(asyncio.AllTasks(t)))
			return noValue, nil
		}
		idle := func(d time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, d); err != nil {
					return noValue, err
				}
				p.log("idle %g done", d.Seconds())
				return noValue, nil
			}
		}
		fail := func(t *asyncio.T) (struct{}, error) {
			if err := asyncio.Sleep(t, 10*ms); err != nil {
				return noValue, err
			}
			return noValue, newValueError("bad request")
		}

		if _, err := asyncio.RunWith(r, start); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(r, idle(200*ms)); err != nil {
			return err
		}
		var ve *valueError
		if _, err := asyncio.RunWith(r, fail); errors.As(err, &ve) {
			fmt.Fprintf(&p.b, "run raised %s\n", pd(ve))
		} else {
			return fmt.Errorf("fail: %v", err)
		}
		if _, err := asyncio.RunWith(r, idle(80*ms)); err != nil {
			return err
		}
		loop := r.Loop()
		fmt.Fprintf(&p.b, "before close, tasks %d closed %s\n", len(asyncio.AllTasks(loop)), pb(loop.IsClosed()))
		if err := r.Close(); err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "closed %s handled %s\n", pb(loop.IsClosed()), pstrs(handled))
		slices.Sort(closing)
		fmt.Fprintf(&p.b, "closing %s\n", pstrs(closing))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p80_budget_retries.py

func TestPortBudgetRetries(t *testing.T) {
	runPort(t, cpythonTrace("p80_budget_retries"), func(p *probe, tk *asyncio.T) error {
		var runs []int
		attempt := func(n int, cost time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				runs = append(runs, n)
				p.log("attempt %d starts", n)
				if err := asyncio.Sleep(t, cost); err != nil {
					return "", err
				}
				if cost > 200*ms {
					return "", newConnectionError(fmt.Sprintf("slow %d", n))
				}
				return fmt.Sprintf("ok %d", n), nil
			}
		}
		callWithBudget := func(t *asyncio.T, budget time.Duration, costs []time.Duration) (string, error) {
			loop := t.Loop()
			deadline := loop.Time() + budget
			for n, cost := range costs {
				remaining := deadline - loop.Time()
				r, err := asyncio.WaitForFunc(t, remaining, attempt(n, cost))
				var ce *connectionError
				switch {
				case err == nil:
					return r, nil
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("attempt %d timed out, remaining was %.1f", n, max(remaining, 0).Seconds())
				case errors.As(err, &ce):
					p.log("attempt %d failed %s", n, pd(ce))
				default:
					return "", err
				}
			}
			return "gave up", nil
		}
		stubborn := func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, time.Second); asyncio.IsCancelled(err) {
				p.log("stubborn swallows the cancel")
			} else if err != nil {
				return "", err
			}
			return "partial", nil
		}

		p.restart()
		r, err := callWithBudget(tk, 500*ms, []time.Duration{300 * ms, 250 * ms, 100 * ms, 100 * ms})
		if err != nil {
			return err
		}
		p.log("result %s runs %s", r, pyInts(runs))

		p.restart()
		loop := tk.Loop()
		done := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, 10*ms); err != nil {
				return "", err
			}
			return "early", nil
		})
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return err
		}
		if r, err = asyncio.WaitFor[string](tk, 0, done); err != nil {
			return err
		}
		p.log("finished task, zero timeout: %s", r)
		s := asyncio.CreateTask(tk, stubborn)
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if r, err = asyncio.WaitFor[string](tk, 0, s); err != nil {
			return err
		}
		p.log("stubborn task, zero timeout: %s", r)
		_, err = asyncio.WaitForFunc(tk, -time.Second, func(t *asyncio.T) (struct{}, error) {
			return noValue, asyncio.Sleep(t, time.Second)
		})
		var te *asyncio.TimeoutError
		if !errors.As(err, &te) {
			return fmt.Errorf("negative timeout: %v", err)
		}
		p.log("negative timeout: %s cause %s", pd(te), pd(te.Cause))

		ev := asyncio.NewEvent()
		ev.Set()
		for _, c := range []struct {
			label string
			body  func() error
		}{
			{"no await", nil},
			{"set event", func() error { return ev.Wait(tk) }},
			{"sleep(0)", func() error { return asyncio.Sleep(tk, 0) }},
		} {
			var cm *asyncio.TimeoutScope
			err := asyncio.TimeoutAt(tk, loop.Time()-time.Second, func(s *asyncio.TimeoutScope) error {
				cm = s
				if c.body != nil {
					return c.body()
				}
				return nil
			})
			switch {
			case err == nil:
				p.log("past deadline, %s -> no timeout, expired %s", c.label, pb(cm.Expired()))
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("past deadline, %s -> TimeoutError, expired %s", c.label, pb(cm.Expired()))
			default:
				return err
			}
		}

		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, 100*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			if err := cm.Reschedule(asyncio.Never); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 200*ms); err != nil {
				return err
			}
			p.log("disarmed scope let 0.2 s pass, when %s", p.rel(cm.When()))
			if err := cm.Reschedule(loop.Time() - 5*time.Second); err != nil {
				return err
			}
			p.log("moved into the past, expired %s", pb(cm.Expired()))
			return asyncio.Sleep(tk, time.Second)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("fired at once, expired %s", pb(cm.Expired()))
		} else if err != nil {
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p81_happy_eyeballs.py

// eyeballsSpec is an address attempt of p81 and p87: connect() sleeps
// delay, then connects or is refused.
type eyeballsSpec struct {
	host  string
	delay time.Duration
	ok    bool
}

// eyeballsRace is p81's and p87's race(): staggered_race over the
// attempts, then the winner, its index and every attempt's exception;
// words are what a refused and a connected attempt log, and the prefix
// of every attempt's lines.
func eyeballsRace(p *probe, tk *asyncio.T, words [3]string, delay time.Duration, specs ...eyeballsSpec) error {
	attempt := func(s eyeballsSpec) func(*asyncio.T) (string, error) {
		return func(t *asyncio.T) (string, error) {
			p.log("%s%s starts", words[2], s.host)
			if err := asyncio.Sleep(t, s.delay); err != nil {
				if asyncio.IsCancelled(err) {
					p.log("%s%s cancelled", words[2], s.host)
				}
				return "", err
			}
			if !s.ok {
				p.log("%s%s %s", words[2], s.host, words[0])
				return "", newConnectionError(s.host)
			}
			p.log("%s%s %s", words[2], s.host, words[1])
			return s.host, nil
		}
	}
	p.restart()
	var fns []func(*asyncio.T) (string, error)
	for _, s := range specs {
		fns = append(fns, attempt(s))
	}
	winner, index, excs, err := asyncio.StaggeredRace(tk, delay, fns...)
	if err != nil {
		return err
	}
	w, i := "None", "None"
	if index >= 0 {
		w, i = winner, fmt.Sprint(index)
	}
	ds := make([]string, len(excs))
	for k, e := range excs {
		ds[k] = pd(e)
	}
	p.log("winner %s index %s exceptions %s", w, i, pstrs(ds))
	return nil
}

func TestPortHappyEyeballs(t *testing.T) {
	runPort(t, cpythonTrace("p81_happy_eyeballs"), func(p *probe, tk *asyncio.T) error {
		words := [3]string{"refused", "connected", "connect "}
		if err := eyeballsRace(p, tk, words, 210*ms, eyeballsSpec{"a", 720 * ms, true}, eyeballsSpec{"b", 100 * ms, false}, eyeballsSpec{"c", 300 * ms, true}, eyeballsSpec{"d", 150 * ms, true}); err != nil {
			return err
		}
		if err := eyeballsRace(p, tk, words, 200*ms, eyeballsSpec{"e", 380 * ms, false}, eyeballsSpec{"f", 100 * ms, false}, eyeballsSpec{"g", 120 * ms, false}); err != nil {
			return err
		}
		// delay=None
		return eyeballsRace(p, tk, words, asyncio.Never, eyeballsSpec{"h", 100 * ms, false}, eyeballsSpec{"i", 120 * ms, true}, eyeballsSpec{"j", 100 * ms, true})
	})
}

// ---------------------------------------------------------------------------
// p82_rpc_futures.py

type remoteError struct{ pyExc }

type rpcClient struct {
	p       *probe
	loop    *asyncio.Loop
	pending map[int]*asyncio.Future[any]
	nextID  int
}

// rpcReply is a reply: an error (set_exception) or a value.
type rpcReply struct {
	v   any
	err error
}

func rpcOutcome(f *asyncio.Future[any]) string {
	if f.Cancelled() {
		return "cancelled"
	}
	if err := f.Err(); err != nil {
		return pd(err)
	}
	v, _ := f.Result()
	return pyAnyRepr(v)
}

func (c *rpcClient) request(method string, replyAfter time.Duration, reply rpcReply) (int, *asyncio.Future[any]) {
	c.nextID++
	rid := c.nextID
	fut := asyncio.NewFuture[any](c.loop)
	c.pending[rid] = fut
	fut.AddDoneCallback(func() { c.p.log("done cb %d %s", rid, rpcOutcome(fut)) })
	c.loop.CallLater(replyAfter, func() { c.deliver(rid, reply) })
	c.p.log("sent %d %s", rid, method)
	return rid, fut
}

func (c *rpcClient) deliver(rid int, reply rpcReply) {
	fut, ok := c.pending[rid]
	if !ok {
		c.p.log("late reply for %d dropped", rid)
		return
	}
	delete(c.pending, rid)
	if reply.err != nil {
		_ = fut.SetException(reply.err)
	} else {
		_ = fut.SetResult(reply.v)
	}
}

func (c *rpcClient) connectionLost(err error) {
	ids := slices.Sorted(maps.Keys(c.pending))
	c.p.log("connection lost, failing %s", pyInts(ids))
	for _, id := range ids {
		if fut := c.pending[id]; !fut.Done() {
			_ = fut.SetException(err)
		}
	}
	clear(c.pending)
}

func TestPortRPCFutures(t *testing.T) {
	runPort(t, cpythonTrace("p82_rpc_futures"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		c := &rpcClient{p: p, loop: loop, pending: map[int]*asyncio.Future[any]{}}
		call := func(method string, replyAfter time.Duration, reply rpcReply, timeout time.Duration) (any, error) {
			rid, fut := c.request(method, replyAfter, reply)
			v, err := asyncio.WaitFor[any](tk, timeout, fut)
			if errors.Is(err, asyncio.ErrTimeout) {
				delete(c.pending, rid)
				p.log("call %d timed out, future cancelled %s", rid, pb(fut.Cancelled()))
			}
			return v, err
		}
		v, err := call("ping", 100*ms, rpcReply{v: "pong"}, time.Second)
		if err != nil {
			return err
		}
		p.log("ping -> %v", v)
		var re *remoteError
		if _, err := call("div", 100*ms, rpcReply{err: &remoteError{pyExc{"RemoteError", "division by zero"}}}, time.Second); errors.As(err, &re) {
			p.log("div failed %s", pd(re))
		} else {
			return fmt.Errorf("div: %v", err)
		}
		if _, err := call("slow", 500*ms, rpcReply{v: "late"}, 200*ms); errors.Is(err, asyncio.ErrTimeout) {
			p.log("slow gave up")
		} else {
			return fmt.Errorf("slow: %v", err)
		}

		_, fut := c.request("dup", 100*ms, rpcReply{v: 42})
		var ise *asyncio.InvalidStateError
		if _, err := fut.Result(); errors.As(err, &ise) {
			p.log("too early: InvalidStateError")
		}
		if err := fut.Err(); errors.As(err, &ise) {
			p.log("too early: InvalidStateError")
		}
		if v, err = fut.Await(tk); err != nil {
			return err
		}
		p.log("dup -> %v", v)
		if err := fut.SetResult(43); errors.As(err, &ise) {
			p.log("second reply: InvalidStateError")
		}
		g := asyncio.NewFuture[any](loop)
		g.Cancel("no longer needed")
		if err := g.SetResult(1); errors.As(err, &ise) {
			p.log("reply to cancelled: InvalidStateError")
		}
		if _, err := g.Result(); asyncio.IsCancelled(err) {
			p.log("result of cancelled: %s", pd(err))
		}

		_, f1 := c.request("a", 300*ms, rpcReply{v: 1})
		_, f2 := c.request("b", 400*ms, rpcReply{v: 2})
		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		loop.CallSoon(func() { c.connectionLost(newConnectionError("reset by peer")) })
		res, err := asyncio.GatherOutcomes[any](tk, f1, f2).Await(tk)
		if err != nil {
			return err
		}
		outs := make([]string, len(res))
		for i, o := range res {
			if o.Err != nil {
				outs[i] = pd(o.Err)
			} else {
				outs[i] = fmt.Sprint(o.Value)
			}
		}
		p.log("gathered %s", pstrs(outs))
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		p.log("pending {}")
		if len(c.pending) != 0 {
			return fmt.Errorf("pending %v", c.pending)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p83_cleanup_under_timeouts.py

func TestPortCleanupUnderTimeouts(t *testing.T) {
	runPort(t, cpythonTrace("p83_cleanup_under_timeouts"), func(p *probe, tk *asyncio.T) error {
		caseA := func(t *asyncio.T) error {
			var cm *asyncio.TimeoutScope
			err := asyncio.Timeout(t, 100*ms, func(s *asyncio.TimeoutScope) error {
				cm = s
				err := asyncio.Sleep(t, time.Second)
				if !asyncio.IsCancelled(err) {
					return err
				}
				p.log("A caught %s cancelling %d", pd(err), t.Cancelling())
				if err := asyncio.Sleep(t, 70*ms); err != nil {
					return err
				}
				p.log("A cleaned up")
				return nil
			})
			if err != nil {
				return err
			}
			p.log("A after block: expired %s cancelling %d", pb(cm.Expired()), t.Cancelling())
			return nil
		}
		caseB := func(t *asyncio.T) error {
			var cm *asyncio.TimeoutScope
			err := asyncio.Timeout(t, 100*ms, func(s *asyncio.TimeoutScope) error {
				cm = s
				if err := asyncio.Sleep(t, time.Second); asyncio.IsCancelled(err) {
					return newValueError("flush failed")
				} else if err != nil {
					return err
				}
				return nil
			})
			var ve *valueError
			if !errors.As(err, &ve) {
				return fmt.Errorf("B: %v", err)
			}
			p.log("B raised %s expired %s", pd(ve), pb(cm.Expired()))
			return nil
		}
		caseC := func(t *asyncio.T) error {
			loop := t.Loop()
			var cm *asyncio.TimeoutScope
			var cbErr error
			err := asyncio.Timeout(t, 200*ms, func(s *asyncio.TimeoutScope) error {
				cm = s
				loop.CallLater(100*ms, func() {
					cbErr = errors.Join(cbErr, cm.Reschedule(loop.Time()+500*ms))
					p.log("C pushed to %s", p.rel(cm.When()))
				})
				loop.CallLater(300*ms, func() {
					cbErr = errors.Join(cbErr, cm.Reschedule(loop.Time()+100*ms))
					p.log("C pulled to %s", p.rel(cm.When()))
				})
				return asyncio.Sleep(t, 2*time.Second)
			})
			if cbErr != nil {
				return cbErr
			}
			if !errors.Is(err, asyncio.ErrTimeout) {
				return fmt.Errorf("C: %v", err)
			}
			p.log("C timed out, expired %s", pb(cm.Expired()))
			return nil
		}
		caseD := func(t *asyncio.T) error {
			var log []string
			inner := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, 300*ms); err != nil {
					return "", err
				}
				log = append(log, "committed")
				p.log("D commit finished")
				return "tx-1", nil
			})
			err := asyncio.Timeout(t, 100*ms, func(*asyncio.TimeoutScope) error {
				_, err := asyncio.Shield[string](inner).Await(t)
				return err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("D timed out, commit done %s cancelled %s", pb(inner.Done()), pb(inner.Cancelled()))
			} else if err != nil {
				return err
			}
			r, err := inner.Await(t)
			if err != nil {
				return err
			}
			p.log("D awaited commit: %s %s", r, pstrs(log))
			return nil
		}
		caseE := func(t *asyncio.T) error {
			err := asyncio.Timeout(t, 100*ms, func(*asyncio.TimeoutScope) error {
				err := asyncio.Sleep(t, time.Second)
				if !asyncio.IsCancelled(err) {
					return err
				}
				p.log("E cleanup starts, cancelling %d", t.Cancelling())
				if err := asyncio.Sleep(t, 300*ms); asyncio.IsCancelled(err) {
					p.log("E cleanup cancelled %s cancelling %d", pd(err), t.Cancelling())
					return err
				} else if err != nil {
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			p.log("E not reached")
			return nil
		}

		for _, c := range []func(*asyncio.T) error{caseA, caseB, caseC, caseD} {
			p.restart()
			if err := c(tk); err != nil {
				return err
			}
		}
		p.restart()
		e := asyncio.CreateTaskErr(tk, caseE)
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		e.Cancel("shutdown")
		_, err := e.Await(tk)
		switch {
		case asyncio.IsCancelled(err):
			p.log("E ended %s cancelled %s", pd(err), pb(e.Cancelled()))
		case errors.Is(err, asyncio.ErrTimeout):
			p.log("E ended with TimeoutError")
		default:
			return fmt.Errorf("E: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p84_job_board.py

// pyJobs is repr() of the program's job list, whose items are strs or None
// (here "" stands for None).
func pyJobs(jobs []string) string {
	parts := make([]string, len(jobs))
	for i, j := range jobs {
		if j == "" {
			parts[i] = "None"
		} else {
			parts[i] = "'" + j + "'"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func TestPortJobBoard(t *testing.T) {
	runPort(t, cpythonTrace("p84_job_board"), func(p *probe, tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		var jobs []string
		worker := func(name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := func() error {
					for {
						var job string
						if err := asyncio.WithLock(t, cond, func() error {
							for len(jobs) == 0 {
								if err := cond.Wait(t); err != nil {
									return err
								}
								p.log("%s woke, jobs %s", name, pyJobs(jobs))
							}
							job, jobs = jobs[0], jobs[1:]
							return nil
						}); err != nil {
							return err
						}
						if job == "" {
							p.log("%s stops", name)
							return nil
						}
						p.log("%s works on %s", name, job)
						if err := asyncio.Sleep(t, 100*ms); err != nil {
							return err
						}
					}
				}()
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled %s holds lock %s", name, pd(err), pb(cond.Locked()))
				}
				return err
			}
		}
		impatient := func(name string, patience time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := asyncio.Timeout(t, patience, func(*asyncio.TimeoutScope) error {
					return asyncio.WithLock(t, cond, func() error {
						if err := cond.WaitFor(t, func() bool { return len(jobs) > 0 }); err != nil {
							return err
						}
						var job string
						job, jobs = jobs[0], jobs[1:]
						p.log("%s got %s", name, job)
						return nil
					})
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("%s gave up waiting", name)
					return nil
				}
				return err
			}
		}
		post := func(add ...string) error {
			return asyncio.WithLock(tk, cond, func() error {
				jobs = append(jobs, add...)
				if len(add) == 1 {
					return cond.Notify(1)
				}
				return cond.NotifyAll()
			})
		}

		p.restart()
		var ws []*asyncio.Task[struct{}]
		for i := range 3 {
			ws = append(ws, asyncio.CreateTaskErr(tk, worker(fmt.Sprintf("w%d", i))))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		ws[1].Cancel("not needed")
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := post("j1"); err != nil {
			return err
		}
		p.log("posted j1")
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		imp := asyncio.CreateTaskErr(tk, impatient("imp", 200*ms))
		if err := asyncio.Sleep(tk, 350*ms); err != nil {
			return err
		}
		if err := post("j2"); err != nil {
			return err
		}
		ws[2].Cancel()
		p.log("posted j2 and cancelled w2 (woken)")
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		if err := post("", ""); err != nil {
			return err
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(append(ws, imp))...).Await(tk)
		if err != nil {
			return err
		}
		outs := make([]string, len(res))
		for i, o := range res {
			outs[i] = pd(o.Err)
		}
		p.log("outcomes %s jobs left %s", pstrs(outs), pyJobs(jobs))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p85_log_shipper.py

func TestPortLogShipper(t *testing.T) {
	runPort(t, cpythonTrace("p85_log_shipper"), func(p *probe, tk *asyncio.T) error {
		put := func(q *asyncio.Queue[string], name, rec string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := q.Put(t, rec)
				switch {
				case err == nil:
					p.log("%s put %s", name, rec)
				case errors.Is(err, asyncio.ErrQueueShutDown):
					p.log("%s refused %s qsize %d", name, rec, q.Len())
				default:
					return err
				}
				return nil
			}
		}
		get := func(q *asyncio.Queue[string], name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				v, err := q.Get(t)
				switch {
				case err == nil:
					p.log("%s got %s", name, v)
				case errors.Is(err, asyncio.ErrQueueShutDown):
					p.log("%s shut down, qsize %d", name, q.Len())
				default:
					return err
				}
				return nil
			}
		}
		await := func(task *asyncio.Task[struct{}]) error {
			_, err := task.Await(tk)
			return err
		}

		p.restart()
		q := asyncio.NewQueue[string](2)
		if err := errors.Join(q.PutNowait("r1"), q.PutNowait("r2")); err != nil {
			return err
		}
		p3 := asyncio.CreateTaskErr(tk, put(q, "p3", "r3"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		q.Shutdown(false)
		p.log("shut down with qsize %d full %s", q.Len(), pb(q.Full()))
		if err := await(p3); err != nil {
			return err
		}
		var shipper []string
		for range 2 {
			v, err := q.Get(tk)
			if err != nil {
				return err
			}
			shipper = append(shipper, v)
		}
		p.log("shipper drained %s", pstrs(shipper))
		if err := get(q, "late getter")(tk); err != nil {
			return err
		}

		p.restart()
		q = asyncio.NewQueue[string](1)
		if err := q.PutNowait("a"); err != nil {
			return err
		}
		pt := asyncio.CreateTaskErr(tk, put(q, "pb", "b"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		v, err := q.GetNowait()
		if err != nil {
			return err
		}
		p.log("took %s so pb is woken; full %s", v, pb(q.Full()))
		q.Shutdown(false)
		if err := await(pt); err != nil {
			return err
		}
		p.log("qsize %d", q.Len())

		p.restart()
		for _, immediate := range []bool{false, true} {
			q := asyncio.NewQueue[string](0)
			g := asyncio.CreateTaskErr(tk, get(q, fmt.Sprintf("g(immediate=%s)", pb(immediate))))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			if err := q.PutNowait("x"); err != nil {
				return err
			}
			q.Shutdown(immediate)
			p.log("shutdown immediate %s qsize %d", pb(immediate), q.Len())
			if err := await(g); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p87_eyeballs_slow_failure.py

func TestPortEyeballsSlowFailure(t *testing.T) {
	runPort(t, cpythonTrace("p87_eyeballs_slow_failure"), func(p *probe, tk *asyncio.T) error {
		words := [3]string{"fails", "connects", ""}
		if err := eyeballsRace(p, tk, words, 200*ms, eyeballsSpec{"a0", 300 * ms, false}, eyeballsSpec{"a1", 500 * ms, true}, eyeballsSpec{"a2", 110 * ms, true}); err != nil {
			return err
		}
		return eyeballsRace(p, tk, words, 200*ms, eyeballsSpec{"b0", 330 * ms, false}, eyeballsSpec{"b1", 260 * ms, false}, eyeballsSpec{"b2", 270 * ms, true}, eyeballsSpec{"b3", 200 * ms, true})
	})
}

// ---------------------------------------------------------------------------
// p86_default_task_names.py

func TestPortDefaultTaskNames(t *testing.T) {
	runPort(t, cpythonTrace("p86_default_task_names"), func(p *probe, tk *asyncio.T) error {
		base, err := strconv.Atoi(strings.TrimPrefix(asyncio.CurrentTask(tk).Name(), "Task-"))
		if err != nil {
			return err
		}
		// name is the program's name(t): a default name's number relative
		// to main's.
		name := func(n string) string {
			if k, err := strconv.Atoi(strings.TrimPrefix(n, "Task-")); err == nil && strings.HasPrefix(n, "Task-") {
				return fmt.Sprintf("Task-%d", k-base+1)
			}
			return n
		}
		who := func(label string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s runs in %s", label, name(asyncio.CurrentTask(t).Name()))
				if err := asyncio.Sleep(t, 0); err != nil {
					return "", err
				}
				return label, nil
			}
		}
		slow := func(label string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s runs in %s", label, name(asyncio.CurrentTask(t).Name()))
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled", label)
					}
					return "", err
				}
				return label, nil
			}
		}
		p.restart()
		p.log("main is %s", name(asyncio.CurrentTask(tk).Name()))
		a := asyncio.CreateTask(tk, who("a"))
		n := asyncio.CreateTask(tk, who("named"), asyncio.WithName("worker-x"))
		b := asyncio.CreateTask(tk, who("b"))
		p.log("created %s %s %s", name(a.Name()), name(n.Name()), name(b.Name()))
		if _, err := asyncio.Gather(tk, asyncio.Awaitables([]*asyncio.Task[string]{a, n, b})...).Await(tk); err != nil {
			return err
		}
		if _, err := asyncio.GatherFuncs(tk, who("g1"), who("g2")).Await(tk); err != nil {
			return err
		}
		if _, err := asyncio.WaitForFunc(tk, 0, who("w0")); errors.Is(err, asyncio.ErrTimeout) {
			p.log("wait_for(coro, 0) timed out")
		} else {
			return fmt.Errorf("wait_for: %v", err)
		}
		//asynciovet:ignore unawaitedtask the program's create_task(...).get_name() never awaits it either; the sleep below lets it finish
		p.log("after it %s", name(asyncio.CreateTask(tk, who("c")).Name()))
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		var t1, t2 *asyncio.Task[string]
		if err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			var err error
			if t1, err = asyncio.Spawn(g, who("tg1")); err != nil {
				return err
			}
			t2, err = asyncio.Spawn(g, who("tg2"), asyncio.WithName("tg-named"))
			return err
		}); err != nil {
			return err
		}
		p.log("group made %s %s", name(t1.Name()), name(t2.Name()))
		// as_completed([coro]) wraps the coroutine in a task (ensure_future).
		ac := []asyncio.AwaitableOf[string]{asyncio.CreateTask(tk, who("ac1"))}
		for _, c := range asyncio.AsCompletedFuncs(tk, ac, asyncio.Never) {
			if _, err := c(tk); err != nil {
				return err
			}
		}
		if _, _, _, err := asyncio.StaggeredRace(tk, asyncio.Never, who("s1")); err != nil {
			return err
		}
		//asynciovet:ignore unawaitedtask as above: named, then left to finish during the sleep
		p.log("next default %s", name(asyncio.CreateTask(tk, who("d")).Name()))
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		w, _, _, err := asyncio.StaggeredRace(tk, 50*ms, slow("s2"), who("s3"))
		if err != nil {
			return err
		}
		//asynciovet:ignore unawaitedtask as above
		p.log("race won by %s next default %s", w, name(asyncio.CreateTask(tk, who("e")).Name()))
		return asyncio.Sleep(tk, 10*ms)
	})
}
