package ports_test

// Ports p139 onward (h35): contextvars in depth, AsyncExitStack-style
// cleanup under cancellation, async generators left early, a TTL cache
// with single-flight refreshes, priority and LIFO work schedulers,
// rescheduled timeouts, rendezvous on Events and Conditions, timer
// handles cancelled from callbacks, custom executors, a Runner's context
// across runs, uncancel() counting, nested TaskGroups under a timeout,
// task bookkeeping and done-callback ordering. Same conventions as
// ports_test.go and ports111_test.go.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// ---------------------------------------------------------------------------
// p139_context_scopes.py

func TestPortContextScopes(t *testing.T) {
	user := asyncio.NewContextVar("user", "anon")
	trace := asyncio.NewContextVarNoDefault[string]("trace")
	getOr := func(v string, ok bool, def string) string {
		if !ok {
			return def
		}
		return v
	}
	// run_coroutine_threadsafe's task is created by a callback, and a
	// callback runs in no context (CTX-1): the task starts with none of
	// the values the thread's ctx carries (pass them in a closure).
	want := goism(cpythonTrace("p139_context_scopes"), [2]string{"0.4 hook saw grace/req-9", "0.4 hook saw anon/none"})
	runPort(t, want, func(p *probe, tk *asyncio.T) error {
		audit := func(tag string, delay time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				v, ok := trace.Lookup(t)
				p.log("%s starts as %s %s", tag, user.Get(t), getOr(v, ok, "no-trace"))
				trace.Set(t, tag)
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				user.Set(t, "auditor")
				p.log("%s done", tag)
				return nil
			}
		}
		child := func(name string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				user.Set(t, name)
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				v, ok := trace.Lookup(t)
				p.log("%s sees %s %s", name, user.Get(t), getOr(v, ok, "no-trace"))
				return name, nil
			}
		}
		blocking := func(what string) func(ctx context.Context) (string, error) {
			return func(ctx context.Context) (string, error) {
				v, ok := trace.LookupValue(ctx)
				return fmt.Sprintf("%s:%s/%s", what, user.Value(ctx), getOr(v, ok, "none")), nil
			}
		}
		p.restart()
		user.Set(tk, "alice")
		ctx := asyncio.CopyContext(tk)
		user.Set(tk, "bob")
		p.log("ctx has %s main has %s", user.Value(ctx.Context()), user.Get(tk))
		t1 := asyncio.CreateTaskErr(tk, audit("audit-1", 100*ms), asyncio.WithVarContext(ctx))
		if _, err := t1.Await(tk); err != nil {
			return err
		}
		tv, tok := trace.LookupValue(ctx.Context())
		mv, mok := trace.Lookup(tk)
		p.log("after audit: ctx %s %s main %s %s", user.Value(ctx.Context()), getOr(tv, tok, "None"), user.Get(tk), getOr(mv, mok, "unset"))
		p.log("get_context is ctx %s", pb(t1.T().VarContext() == ctx))
		t2 := asyncio.CreateTaskErr(tk, audit("audit-2", 60*ms), asyncio.WithVarContext(ctx))
		if _, err := t2.Await(tk); err != nil {
			return err
		}
		tv, tok = trace.LookupValue(ctx.Context())
		p.log("ctx now %s %s", user.Value(ctx.Context()), getOr(tv, tok, "None"))
		trace.Set(tk, "req-9")
		var a, b *asyncio.Task[string]
		if err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			var err error
			if a, err = asyncio.Spawn(g, child("carol", 200*ms)); err != nil {
				return err
			}
			b, err = asyncio.Spawn(g, child("dave", 100*ms))
			return err
		}); err != nil {
			return err
		}
		ar, _ := a.Result()
		br, _ := b.Result()
		p.log("main after group %s %s", user.Get(tk), pstrs([]string{ar, br}))
		token := user.Set(tk, "eve")
		r, err := asyncio.ToThread(tk, blocking("t1"))
		if err != nil {
			return err
		}
		p.log("thread saw %s", r)
		if err := user.Reset(tk, token); err != nil {
			return err
		}
		p.log("after reset %s", user.Get(tk))
		t3 := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return asyncio.ToThread(t, blocking("t2"))
		}, asyncio.WithVarContext(ctx))
		r, err = t3.Await(tk)
		if err != nil {
			return err
		}
		p.log("thread in ctx saw %s", r)
		own := asyncio.CreateTask(tk, child("frank", 50*ms))
		if _, err := own.Await(tk); err != nil {
			return err
		}
		p.log("frank's context %s main %s", user.Value(own.T().VarContext().Context()), user.Get(tk))

		loop := tk.Loop()
		lookupUser := func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, 10*ms); err != nil {
				return "", err
			}
			v, ok := trace.Lookup(t)
			return fmt.Sprintf("%s/%s", user.Get(t), getOr(v, ok, "none")), nil
		}
		legacyHook := func(ctx context.Context) (string, error) {
			cf := asyncio.RunCoroutineThreadsafe(loop, lookupUser)
			if err := cf.Wait(ctx); err != nil {
				return "", err
			}
			r, err := cf.Result()
			return "hook saw " + r, err
		}
		// Context.run(var.set, v) has no Go form (no code runs "in" a
		// VarContext but a task): a task created WithVarContext sets it.
		jobCtx := asyncio.NewVarContext(context.Background())
		if _, err := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			user.Set(t, "batch")
			return nil
		}, asyncio.WithVarContext(jobCtx)).Await(tk); err != nil {
			return err
		}
		p.log("fresh ctx has %s main %s", user.Value(jobCtx.Context()), user.Get(tk))
		r, err = asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return asyncio.ToThread(t, blocking("t3"))
		}, asyncio.WithVarContext(jobCtx)).Await(tk)
		if err != nil {
			return err
		}
		p.log("job saw %s", r)

		token = user.Set(tk, "grace")
		r, err = asyncio.ToThread(tk, legacyHook)
		if err != nil {
			return err
		}
		p.log("%s", r)
		return user.Reset(tk, token)
	})
}

// ---------------------------------------------------------------------------
// p140_exit_stack_cleanup.py

// exitStack is contextlib.AsyncExitStack: each exit sees the error in
// flight and returns what goes on unwinding (nil: suppressed, another
// error: raised in its place); close runs them last-in first-out.
type exitStack struct {
	exits []func(err error) error
}

func (s *exitStack) push(exit func(err error) error) { s.exits = append(s.exits, exit) }

func (s *exitStack) close(err error) error {
	for i := len(s.exits) - 1; i >= 0; i-- {
		err = s.exits[i](err)
	}
	s.exits = nil
	return err
}

func TestPortExitStackCleanup(t *testing.T) {
	runPort(t, cpythonTrace("p140_exit_stack_cleanup"), func(p *probe, tk *asyncio.T) error {
		// Conn's __aenter__ and __aexit__.
		connEnter := func(t *asyncio.T, name string) (func(error) error, error) {
			if err := asyncio.Sleep(t, 20*ms); err != nil {
				return nil, err
			}
			p.log("%s open", name)
			return func(e error) error {
				p.log("%s closing after %s", name, pd(e))
				if err := asyncio.Sleep(t, 120*ms); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("%s close interrupted %s", name, pd(err))
					}
					return err
				}
				p.log("%s closed", name)
				return e
			}, nil
		}
		suppressLookup := func(name string) func(error) error {
			return func(e error) error {
				var ke *keyError
				if errors.As(e, &ke) {
					p.log("%s suppressed %s", name, pd(e))
					return nil
				}
				return e
			}
		}
		flush := func(t *asyncio.T, name string) error {
			if err := asyncio.Sleep(t, 30*ms); err != nil {
				return err
			}
			p.log("flushed %s", name)
			return nil
		}
		handler := func(name string, lock *asyncio.Lock, work func(*asyncio.T, string) error) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				var stack exitStack
				err := func() error {
					if err := lock.Acquire(t); err != nil {
						return err
					}
					stack.push(func(e error) error {
						if err := lock.Release(); err != nil {
							return err
						}
						return e
					})
					p.log("%s has lock", name)
					stack.push(func(e error) error {
						if err := flush(t, name); err != nil {
							return err
						}
						return e
					})
					exit, err := connEnter(t, name+"-conn")
					if err != nil {
						return err
					}
					stack.push(exit)
					stack.push(suppressLookup(name))
					if err := work(t, name); err != nil {
						return err
					}
					p.log("%s body done", name)
					return nil
				}()
				if err := stack.close(err); err != nil {
					return "", err
				}
				p.log("%s stack closed, lock %s", name, pb(lock.Locked()))
				return name, nil
			}
		}
		ok := func(t *asyncio.T, name string) error { return asyncio.Sleep(t, 40*ms) }
		missing := func(t *asyncio.T, name string) error {
			if err := asyncio.Sleep(t, 30*ms); err != nil {
				return err
			}
			return newKeyError(name)
		}
		slow := func(t *asyncio.T, name string) error { return asyncio.Sleep(t, time.Second) }

		p.restart()
		lock := asyncio.NewLock()
		t1 := asyncio.CreateTask(tk, handler("a", lock, ok))
		t2 := asyncio.CreateTask(tk, handler("b", lock, missing))
		t3 := asyncio.CreateTask(tk, handler("c", lock, slow))
		done, err := asyncio.Gather(tk, t1, t2).Await(tk)
		if err != nil {
			return err
		}
		p.log("a and b returned %s", pstrs(done))
		if err := asyncio.Sleep(tk, 190*ms); err != nil {
			return err
		}
		p.log("main cancels c")
		t3.Cancel("shutdown")
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		p.log("main cancels c again, cancelling %d", t3.T().Cancelling())
		t3.Cancel("hurry")
		if _, err := t3.Await(tk); asyncio.IsCancelled(err) {
			p.log("c ended %s lock %s cancelling %d", pd(err), pb(lock.Locked()), t3.T().Cancelling())
		} else {
			return fmt.Errorf("c: %v, want a cancellation", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p141_reading_stream.py

// The async generator is an iter.Seq2 whose body awaits in the consumer's
// task (README: "async generators"); aclosing is the range loop itself:
// when the loop body breaks, yield returns false and the generator runs
// its finally before the range ends. GeneratorExit is not a cancellation,
// so the except CancelledError branch is only taken on a real one.
func TestPortReadingStream(t *testing.T) {
	runPort(t, cpythonTrace("p141_reading_stream"), func(p *probe, tk *asyncio.T) error {
		// An item of "" is None.
		readings := func(t *asyncio.T, name string, q *asyncio.Queue[string]) iter.Seq2[string, error] {
			return func(yield func(string, error) bool) {
				n := 0
				finally := func(err error) error {
					if serr := asyncio.Sleep(t, 10*ms); serr != nil {
						return serr
					}
					p.log("%s closed after %d", name, n)
					return err
				}
				for {
					item, err := q.Get(t)
					if err != nil {
						if asyncio.IsCancelled(err) {
							p.log("%s cancelled after %d %s", name, n, pd(err))
						}
						yield("", finally(err))
						return
					}
					if item == "" {
						if err := finally(nil); err != nil {
							yield("", err)
						}
						return
					}
					if item == "bad" {
						yield("", finally(newValueError(name+" bad reading")))
						return
					}
					n++
					if !yield(item, nil) {
						_ = finally(nil) // aclose(): an error here would be raised by aclose
						return
					}
				}
			}
		}
		feed := func(q *asyncio.Queue[string], items []string, gap time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for _, it := range items {
					if err := asyncio.Sleep(t, gap); err != nil {
						return err
					}
					if err := q.PutNowait(it); err != nil {
						return err
					}
				}
				return nil
			}
		}

		p.restart()
		q := asyncio.NewQueue[string](0)
		feeder := asyncio.CreateTaskErr(tk, feed(q, []string{"a", "b", "STOP", "c"}, 100*ms))
		for item, err := range readings(tk, "r1", q) {
			if err != nil {
				return err
			}
			p.log("r1 got %s", item)
			if item == "STOP" {
				break
			}
		}
		p.log("after r1, queue %d", q.Len())
		if _, err := feeder.Await(tk); err != nil {
			return err
		}
		p.log("feeder done, queue %d", q.Len())

		q2 := asyncio.NewQueue[string](0)
		feeder = asyncio.CreateTaskErr(tk, feed(q2, []string{"x", "y"}, 120*ms))
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 300*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			for item, err := range readings(tk, "r2", q2) {
				if err != nil {
					return err
				}
				p.log("r2 got %s", item)
			}
			return nil
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("r2 timed out, expired %s", pb(cm.Expired()))
		} else if err != nil {
			return err
		}
		p.log("feeder done %s", pb(feeder.Done()))

		q3 := asyncio.NewQueue[string](0)
		for _, it := range []string{"1", "2", "bad", "3"} {
			if err := q3.PutNowait(it); err != nil {
				return err
			}
		}
		err = func() error {
			var got []string
			for x, err := range readings(tk, "r3", q3) {
				if err != nil {
					return err
				}
				got = append(got, x)
			}
			p.log("r3 got %s", pstrs(got))
			return nil
		}()
		var ve *valueError
		if errors.As(err, &ve) {
			p.log("r3 failed %s left %d", pd(err), q3.Len())
		} else if err != nil {
			return err
		}

		q4 := asyncio.NewQueue[string](0)
		for _, it := range []string{"p", "q", ""} {
			if err := q4.PutNowait(it); err != nil {
				return err
			}
		}
		var got []string
		for x, err := range readings(tk, "r4", q4) {
			if err != nil {
				return err
			}
			got = append(got, strings.ToUpper(x))
		}
		p.log("r4 %s", pstrs(got))

		// burst's `async with timeout()` spans its yields: the Timeout's
		// body is where the generator yields; a yield returning false is
		// GeneratorExit, which leaves the body as a normal return.
		burst := func(t *asyncio.T, tag string) iter.Seq2[int, error] {
			return func(yield func(int, error) bool) {
				var cm *asyncio.TimeoutScope
				closed := false
				err := asyncio.Timeout(t, 100*ms, func(s *asyncio.TimeoutScope) error {
					cm = s
					if !yield(1, nil) {
						closed = true
						return nil
					}
					if err := asyncio.Sleep(t, 50*ms); err != nil {
						return err
					}
					closed = !yield(2, nil)
					return nil
				})
				switch {
				case closed:
					p.log("%s burst closed, expired %s", tag, pb(cm.Expired()))
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("%s burst timed out", tag)
					yield(0, err)
				case err != nil:
					yield(0, err)
				}
			}
		}
		consumeBurst := func(tag string, pause time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := func() error {
					for x, err := range burst(t, tag) {
						if err != nil {
							return err
						}
						p.log("%s got %d", tag, x)
						if err := asyncio.Sleep(t, pause); err != nil {
							return err
						}
					}
					p.log("%s done", tag)
					return nil
				}()
				if err != nil {
					p.log("%s consumer leaves with %s cancelling %d", tag, pd(err), t.Cancelling())
				}
				return err
			}
		}
		for _, c := range []struct {
			tag   string
			pause time.Duration
		}{{"s1", 80 * ms}, {"s2", 150 * ms}} {
			task := asyncio.CreateTaskErr(tk, consumeBurst(c.tag, c.pause))
			if _, err := task.Await(tk); err != nil {
				p.log("%s task -> %s cancelled %s", c.tag, pd(err), pb(task.Cancelled()))
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p142_ttl_cache.py

func TestPortTTLCache(t *testing.T) {
	type entry struct {
		value   string
		expires time.Duration
	}
	var calls []string
	backend := func(t *asyncio.T, key string) (string, error) {
		calls = append(calls, key)
		n := 0
		for _, c := range calls {
			if c == key {
				n++
			}
		}
		if err := asyncio.Sleep(t, 200*ms); err != nil {
			return "", err
		}
		if key == "bad" {
			return "", &connectionError{pyExc{"ConnectionError", key + " unavailable"}}
		}
		return fmt.Sprintf("%s-v%d", key, n), nil
	}
	runPort(t, cpythonTrace("p142_ttl_cache"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		const ttl = 500 * ms
		entries := map[string]entry{}
		inflight := map[string]*asyncio.Future[string]{}
		filling := map[*asyncio.Task[struct{}]]bool{}
		fetches := 0
		fill := func(key string, fut *asyncio.Future[string]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				fetches++
				defer delete(inflight, key)
				value, err := backend(t, key)
				switch {
				case asyncio.IsCancelled(err):
					p.log("fill %s cancelled", key)
					fut.Cancel()
					return err
				case err != nil:
					return fut.SetException(err)
				}
				if err := fut.SetResult(value); err != nil {
					return err
				}
				entries[key] = entry{value, loop.Time() + ttl}
				return nil
			}
		}
		start := func(t *asyncio.T, key string) *asyncio.Future[string] {
			fut := asyncio.NewFuture[string](t)
			inflight[key] = fut
			task := asyncio.CreateTaskErr(t, fill(key, fut), asyncio.WithName("fill-"+key))
			filling[task] = true
			task.AddDoneCallback(func() { delete(filling, task) })
			return fut
		}
		get := func(t *asyncio.T, key string) (string, string, error) {
			now := loop.Time()
			if e, ok := entries[key]; ok {
				if now < e.expires {
					return e.value, "hit", nil
				}
				if _, ok := inflight[key]; !ok {
					start(t, key)
				}
				return e.value, "stale", nil
			}
			fut := inflight[key]
			how := "joined"
			if fut == nil {
				fut = start(t, key)
				how = "miss"
			}
			v, err := asyncio.Shield[string](fut).Await(t)
			return v, how, err
		}
		closeCache := func(t *asyncio.T) error {
			var tasks []*asyncio.Task[struct{}]
			for task := range filling {
				task.Cancel()
				tasks = append(tasks, task)
			}
			_, err := asyncio.GatherOutcomes(t, asyncio.Awaitables(tasks)...).Await(t)
			return err
		}

		p.restart()
		show := func(key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				v, how, err := get(t, key)
				if asyncio.IsCancelled(err) {
					return "", err
				}
				if err != nil {
					return fmt.Sprintf("%s failed %s", key, pd(err)), nil
				}
				return fmt.Sprintf("%s=%s %s", key, v, how), nil
			}
		}
		sortedKeys := func(m map[string]bool) []string {
			return slices.Sorted(maps.Keys(m))
		}
		r, err := asyncio.GatherFuncs(tk, show("a"), show("a"), show("bad"), show("a"), show("bad")).Await(tk)
		if err != nil {
			return err
		}
		p.log("round 1 %s", pstrs(r))
		cached, flying := map[string]bool{}, map[string]bool{}
		for k := range entries {
			cached[k] = true
		}
		for k := range inflight {
			flying[k] = true
		}
		p.log("fetches %d cached %s inflight %s", fetches, pstrs(sortedKeys(cached)), pstrs(sortedKeys(flying)))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		logShow := func(key, format string, args ...any) error {
			s, err := show(key)(tk)
			if err != nil {
				return err
			}
			p.log("%s"+format, append([]any{s}, args...)...)
			return nil
		}
		if err := logShow("a", ""); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 530*ms); err != nil {
			return err
		}
		if err := logShow("a", ""); err != nil {
			return err
		}
		s, err := show("a")(tk)
		if err != nil {
			return err
		}
		p.log("%s fetches %d", s, fetches)
		waiter := asyncio.CreateTask(tk, show("c"))
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		waiter.Cancel()
		if _, err := waiter.Await(tk); asyncio.IsCancelled(err) {
			_, ok := inflight["c"]
			p.log("waiter cancelled, c in flight %s", pb(ok))
		}
		if err := asyncio.Sleep(tk, 30*ms); err != nil {
			return err
		}
		if err := logShow("c", ""); err != nil {
			return err
		}
		s, err = show("a")(tk)
		if err != nil {
			return err
		}
		p.log("%s filling %d", s, len(filling))
		if err := asyncio.Sleep(tk, 600*ms); err != nil {
			return err
		}
		s, err = show("a")(tk)
		if err != nil {
			return err
		}
		var names []string
		for task := range filling {
			names = append(names, task.Name())
		}
		slices.Sort(names)
		p.log("%s filling %s", s, pstrs(names))
		if err := closeCache(tk); err != nil {
			return err
		}
		flying = map[string]bool{}
		for k := range inflight {
			flying[k] = true
		}
		p.log("closed: filling %d inflight %s a %s", len(filling), pstrs(sortedKeys(flying)), entries["a"].value)
		p.log("backend calls %s", pstrs(calls))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p143_priority_scheduler.py

func TestPortPriorityScheduler(t *testing.T) {
	duration := map[string]time.Duration{"build": 120 * ms, "test": 200 * ms, "lint": 40 * ms, "deploy": 170 * ms, "flaky": 80 * ms, "hotfix": 40 * ms, "docs": 60 * ms}
	type item struct {
		prio, seq int
		job       string
	}
	runPort(t, cpythonTrace("p143_priority_scheduler"), func(p *probe, tk *asyncio.T) error {
		seqN := 0
		seq := func() int { seqN++; return seqN - 1 }
		worker := func(name string, q *asyncio.Queue[item], retried map[string]bool, done *[]string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					it, err := q.Get(t)
					if err != nil {
						return err
					}
					err = func() error {
						defer q.TaskDone()
						p.log("%s runs %s prio %d left %d", name, it.job, it.prio, q.Len())
						if err := asyncio.Sleep(t, duration[it.job]); err != nil {
							return err
						}
						if it.job == "flaky" && !retried[it.job] {
							retried[it.job] = true
							if err := q.PutNowait(item{it.prio + 10, seq(), it.job}); err != nil {
								return err
							}
							p.log("%s requeued %s", name, it.job)
						} else {
							*done = append(*done, it.job)
						}
						return nil
					}()
					if err != nil {
						return err
					}
				}
			}
		}

		p.restart()
		q := asyncio.NewPriorityQueue(0, func(a, b item) bool {
			if a.prio != b.prio {
				return a.prio < b.prio
			}
			return a.seq < b.seq
		})
		for _, it := range []item{{5, 0, "docs"}, {2, 0, "build"}, {3, 0, "test"}, {2, 0, "flaky"}, {4, 0, "lint"}, {3, 0, "deploy"}} {
			it.seq = seq()
			if err := q.PutNowait(it); err != nil {
				return err
			}
		}
		retried, done := map[string]bool{}, []string{}
		var workers []*asyncio.Task[struct{}]
		for i := range 2 {
			workers = append(workers, asyncio.CreateTaskErr(tk, worker(fmt.Sprintf("w%d", i), q, retried, &done)))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := q.PutNowait(item{0, seq(), "hotfix"}); err != nil {
			return err
		}
		p.log("hotfix queued, qsize %d", q.Len())
		if err := q.Join(tk); err != nil {
			return err
		}
		p.log("joined, done %s", pstrs(done))
		for _, w := range workers {
			w.Cancel()
		}
		r, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(workers)...).Await(tk)
		if err != nil {
			return err
		}
		var ds []string
		for _, o := range r {
			ds = append(ds, "'"+pd(o.Err)+"'")
		}
		p.log("workers [%s]", strings.Join(ds, ", "))

		p.restart()
		undo := asyncio.NewLifoQueue[string](2)
		record := func(t *asyncio.T) error {
			for _, op := range []string{"type a", "type b", "delete", "paste"} {
				if err := undo.Put(t, op); err != nil {
					return err
				}
				p.log("recorded %s full %s", op, pb(undo.Full()))
				if err := asyncio.Sleep(t, 10*ms); err != nil {
					return err
				}
			}
			return nil
		}
		rollback := func(t *asyncio.T) error {
			for {
				op, err := undo.Get(t)
				if err != nil {
					return err
				}
				p.log("undo %s", op)
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				if err := undo.TaskDone(); err != nil {
					return err
				}
			}
		}
		rec := asyncio.CreateTaskErr(tk, record)
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		rb := asyncio.CreateTaskErr(tk, rollback)
		if _, err := rec.Await(tk); err != nil {
			return err
		}
		p.log("recording finished, qsize %d", undo.Len())
		if err := undo.Join(tk); err != nil {
			return err
		}
		p.log("undo joined")
		rb.Cancel()
		if err := undo.TaskDone(); err != nil {
			p.log("extra task_done: %s", pdv125(err))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p144_deadline_extension.py

func TestPortDeadlineExtension(t *testing.T) {
	runPort(t, cpythonTrace("p144_deadline_extension"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		download := func(name string, gaps []time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				got := 0
				var cm *asyncio.TimeoutScope
				err := asyncio.Timeout(t, 250*ms, func(s *asyncio.TimeoutScope) error {
					cm = s
					for _, gap := range gaps {
						if err := asyncio.Sleep(t, gap); err != nil {
							return err
						}
						got++
						if err := s.Reschedule(loop.Time() + 260*ms); err != nil {
							return err
						}
						p.log("%s chunk %d deadline %s", name, got, p.rel(s.When()))
					}
					return nil
				})
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("%s stalled after %d expired %s", name, got, pb(cm.Expired()))
				case err != nil:
					return noValue, err
				default:
					p.log("%s complete %d expired %s", name, got, pb(cm.Expired()))
				}
				return noValue, nil
			}
		}
		slow := func(name string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled", name)
					}
					return "", err
				}
				return name, nil
			}
		}

		p.restart()
		if _, err := asyncio.GatherFuncs(tk, download("d1", []time.Duration{100 * ms, 200 * ms, 170 * ms}), download("d2", []time.Duration{120 * ms, 300 * ms, 100 * ms})).Await(tk); err != nil {
			return err
		}

		p.restart()
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("armed %s", p.rel(s.When()))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			if err := s.Reschedule(loop.Time() - time.Second); err != nil {
				return err
			}
			p.log("rescheduled into the past %s expired %s", p.rel(s.When()), pb(s.Expired()))
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			p.log("not reached")
			return nil
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("past deadline fired, expired %s", pb(cm.Expired()))
		} else if err != nil {
			return err
		}
		if err := cm.Reschedule(loop.Time() + time.Second); err != nil {
			p.log("reschedule after expiry: %s", pd(err))
		}

		p.restart()
		var outer *asyncio.TimeoutScope
		if err := asyncio.Timeout(tk, 500*ms, func(s *asyncio.TimeoutScope) error {
			outer = s
			_, err := asyncio.WaitForFunc(tk, 200*ms, slow("inner", time.Second))
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("wait_for timed out inside, outer expired %s", pb(s.Expired()))
			} else if err != nil {
				return err
			}
			r, err := asyncio.WaitForFunc(tk, 200*ms, slow("quick", 100*ms))
			if err != nil {
				return err
			}
			p.log("quick returned %s", r)
			return nil
		}); err != nil {
			return err
		}
		p.log("outer left, expired %s", pb(outer.Expired()))

		p.restart()
		err = asyncio.Timeout(tk, 300*ms, func(s *asyncio.TimeoutScope) error {
			outer = s
			_, err := asyncio.WaitForFunc(tk, 600*ms, slow("long", time.Second))
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("outer fired over wait_for, expired %s", pb(outer.Expired()))
		} else if err != nil {
			return err
		}

		p.restart()
		var inner *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, 300*ms, func(s *asyncio.TimeoutScope) error {
			outer = s
			return asyncio.Timeout(tk, 100*ms, func(s *asyncio.TimeoutScope) error {
				inner = s
				if err := s.Reschedule(loop.Time() + 500*ms); err != nil {
					return err
				}
				_, err := slow("nested", time.Second)(tk)
				return err
			})
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("outer fired, inner expired %s outer expired %s inner when %s", pb(inner.Expired()), pb(outer.Expired()), p.rel(inner.When()))
		} else if err != nil {
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p145_timer_handles.py

func TestPortTimerHandles(t *testing.T) {
	runPort(t, cpythonTrace("p145_timer_handles"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()

		var pending *asyncio.TimerHandle
		var flushed []string
		flush := func(text string) func() {
			return func() {
				flushed = append(flushed, text)
				p.log("flush '%s'", text)
			}
		}
		text := ""
		for _, k := range []struct {
			ch  string
			gap time.Duration
		}{{"h", 30 * ms}, {"e", 40 * ms}, {"l", 20 * ms}, {"l", 150 * ms}, {"o", 50 * ms}} {
			if err := asyncio.Sleep(tk, k.gap); err != nil {
				return err
			}
			text += k.ch
			if pending != nil {
				pending.Cancel()
			}
			pending = loop.CallLater(100*ms, flush(text))
		}
		p.log("typing done, flush due %s", p.rel(pending.When()))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("pending cancelled %s", pb(pending.Cancelled()))
		pending.Cancel()
		p.log("cancel after it ran: cancelled %s flushed %s", pb(pending.Cancelled()), pstrs(flushed))

		p.restart()
		var order []string
		handles := map[string]*asyncio.TimerHandle{}
		when := loop.Time() + 100*ms
		appendOrder := func(s string) func() { return func() { order = append(order, s) } }
		fire := func(name string) func() {
			return func() {
				order = append(order, name)
				p.log("timer %s", name)
				if name == "a" {
					handles["b"].Cancel()
					loop.CallSoon(appendOrder("soon-from-a"))
					handles["past"] = loop.CallAt(loop.Time()-time.Second, appendOrder("past-from-a"))
					loop.CallSoon(appendOrder("soon2-from-a"))
					loop.CallLater(0, appendOrder("later0-from-a"))
				}
			}
		}
		for _, name := range []string{"a", "b", "c"} {
			handles[name] = loop.CallAt(when, fire(name))
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("order %s b cancelled %s past when %s", pstrs(order), pb(handles["b"].Cancelled()), p.rel(handles["past"].When()))

		p.restart()
		var dog *asyncio.TimerHandle
		var worker *asyncio.Task[struct{}]
		onWatchdog := func() {
			p.log("watchdog fired, cancelling worker")
			dog.Cancel()
			worker.Cancel("watchdog")
		}
		dog = loop.CallLater(200*ms, onWatchdog)
		worker = asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for i := range 5 {
				gap := 300 * ms
				if i < 2 {
					gap = 80 * ms
				}
				if err := asyncio.Sleep(t, gap); err != nil {
					return err
				}
				dog.Cancel()
				dog = loop.CallLater(200*ms, onWatchdog)
				p.log("heartbeat %d watchdog at %s", i, p.rel(dog.When()))
			}
			return nil
		})
		if _, err := worker.Await(tk); asyncio.IsCancelled(err) {
			p.log("worker %s dog cancelled %s", pd(err), pb(dog.Cancelled()))
		} else {
			return fmt.Errorf("worker: %v, want a cancellation", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p146_response_listeners.py

// A Go callback has no error to return: the listener that raises panics,
// and the handler's Err is the *PanicError holding what it panicked with.
func TestPortResponseListeners(t *testing.T) {
	runPort(t, cpythonTrace("p146_response_listeners"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		var order []string
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			order = append(order, "handler")
			err := ctx.Err
			var pe *asyncio.PanicError
			if errors.As(err, &pe) {
				err, _ = pe.Value.(error)
			}
			p.log("handler: %s %s", pb(strings.HasPrefix(ctx.Message, "Exception in callback")), pd(err))
		})
		cb := func(name string, f interface {
			Cancelled() bool
			Result() (string, error)
		}) func() {
			return func() {
				if f.Cancelled() {
					order = append(order, name+":cancelled")
					return
				}
				v, _ := f.Result()
				order = append(order, name+":"+v)
			}
		}
		appendOrder := func(s string) func() { return func() { order = append(order, s) } }

		fut := asyncio.NewFuture[string](tk)
		fut.AddDoneCallback(cb("first", fut))
		second := fut.AddDoneCallback(cb("second", fut))
		fut.AddDoneCallback(cb("third", fut))
		p.log("removed second %d", fut.RemoveDoneCallback(second))
		p.log("removed again %d", fut.RemoveDoneCallback(second))
		waiter := func(name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				r, err := fut.Await(t)
				if err != nil {
					return err
				}
				order = append(order, fmt.Sprintf("%s woke with %s", name, r))
				return nil
			}
		}
		w1 := asyncio.CreateTaskErr(tk, waiter("w1"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		boom := func() {
			order = append(order, "boom")
			panic(newValueError("listener broke"))
		}
		fut.AddDoneCallback(boom)
		fut.AddDoneCallback(cb("fourth", fut))
		loop.CallSoon(appendOrder("queued before result"))
		if err := fut.SetResult("r1"); err != nil {
			return err
		}
		order = append(order, "after set_result")
		fut.AddDoneCallback(cb("late", fut))
		loop.CallSoon(appendOrder("queued after result"))
		if _, err := w1.Await(tk); err != nil {
			return err
		}
		p.log("order %s", pstrs(order))

		p.restart()
		order = nil
		fut2 := asyncio.NewFuture[string](tk)
		fut2.AddDoneCallback(cb("c1", fut2))
		c2 := fut2.AddDoneCallback(cb("c2", fut2))
		fut2.Cancel("nope")
		p.log("remove after cancel %d", fut2.RemoveDoneCallback(c2))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s", pstrs(order))

		order = nil
		job := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return "", err
			}
			return "job-result", nil
		}, asyncio.WithName("job"))
		job.AddDoneCallback(func() {
			v, _ := job.Result()
			order = append(order, fmt.Sprintf("%s done %s", job.Name(), v))
		})
		if _, err := job.Await(tk); err != nil {
			return err
		}
		order = append(order, "main resumed")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s", pstrs(order))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p147_thumbnail_pool.py

// onePool is concurrent.futures.ThreadPoolExecutor(max_workers=1): one
// goroutine runs the submitted jobs in order; after Shutdown, Submit
// refuses with the pool's RuntimeError.
type onePool struct {
	mu   sync.Mutex
	jobs chan func()
	shut bool
	done chan struct{}
}

func newOnePool() *onePool {
	p := &onePool{jobs: make(chan func(), 16), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for job := range p.jobs {
			job()
		}
	}()
	return p
}

// Submit queues fn for the worker; it does not block.
func (p *onePool) Submit(fn func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut {
		return &runtimeError{pyExc{"RuntimeError", "cannot schedule new futures after shutdown"}}
	}
	p.jobs <- fn
	return nil
}

// Shutdown is shutdown(wait=True).
func (p *onePool) Shutdown() {
	p.mu.Lock()
	if !p.shut {
		p.shut = true
		close(p.jobs)
	}
	p.mu.Unlock()
	<-p.done
}

func TestPortThumbnailPool(t *testing.T) {
	requestID := asyncio.NewContextVar("request_id", "no-request")
	var ranMu sync.Mutex
	var ran []string
	ranNow := func() []string {
		ranMu.Lock()
		defer ranMu.Unlock()
		return slices.Clone(ran)
	}
	runPort(t, cpythonTrace("p147_thumbnail_pool"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		makeJob := func(name string, started *asyncio.Event, gate chan struct{}) func(context.Context) (string, error) {
			return func(context.Context) (string, error) {
				if _, err := loop.CallSoonThreadsafe(started.Set); err != nil {
					return "", err
				}
				<-gate
				ranMu.Lock()
				ran = append(ran, name)
				ranMu.Unlock()
				return strings.ToUpper(name), nil
			}
		}
		pool := newOnePool()
		gates := map[string]chan struct{}{}
		started := map[string]*asyncio.Event{}
		futs := map[string]*asyncio.Future[string]{}
		for _, n := range []string{"a", "b", "c"} {
			gates[n] = make(chan struct{})
			started[n] = asyncio.NewEvent()
		}
		for _, n := range []string{"a", "b", "c"} {
			futs[n] = asyncio.RunInExecutorOn(tk, pool, makeJob(n, started[n], gates[n]))
		}
		if err := started["a"].Wait(tk); err != nil {
			return err
		}
		p.log("a running; cancelling b (queued) and a (running)")
		cb := futs["b"].Cancel()
		ca := futs["a"].Cancel()
		p.log("cancel b %s cancel a %s", pb(cb), pb(ca))
		close(gates["a"])
		if err := started["c"].Wait(tk); err != nil {
			return err
		}
		p.log("c started, ran %s", pstrs(ranNow()))
		close(gates["c"])
		r, err := futs["c"].Await(tk)
		if err != nil {
			return err
		}
		p.log("c result %s", r)
		p.log("cancelled %s ran %s", pbools(futs["a"].Cancelled(), futs["b"].Cancelled(), futs["c"].Cancelled()), pstrs(ranNow()))

		requestID.Set(tk, "req-7")
		getRequestID := func(ctx context.Context) (string, error) { return requestID.Value(ctx), nil }
		inPool, err := asyncio.RunInExecutorOn(tk, pool, getRequestID).Await(tk)
		if err != nil {
			return err
		}
		inThread, err := asyncio.ToThread(tk, getRequestID)
		if err != nil {
			return err
		}
		p.log("pool job sees %s to_thread sees %s", inPool, inThread)
		sum, err := asyncio.ToThread(tk, func(context.Context) (int, error) { return 1 + 2 + 3, nil })
		if err != nil {
			return err
		}
		p.log("to_thread %d", sum)
		if err := asyncio.ShutdownDefaultExecutor(tk); err != nil {
			return err
		}
		one := func(context.Context) (int, error) { return 1, nil }
		if _, err := asyncio.RunInExecutor(tk, one).Await(tk); err != nil {
			p.log("after shutdown_default_executor: %s", pd(err))
		}
		pool.Shutdown()
		if _, err := asyncio.RunInExecutorOn(tk, pool, one).Await(tk); err != nil {
			p.log("pool shut down: %s", pd(err))
		}
		close(gates["b"])
		p.log("ran %s", pstrs(ranNow()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p148_cli_runner_steps.py

// ptuple is repr() of a tuple of str.
func ptuple(ss []string) string {
	if len(ss) == 1 {
		return "('" + ss[0] + "',)"
	}
	s := pstrs(ss)
	return "(" + s[1:len(s)-1] + ")"
}

func TestPortCLIRunnerSteps(t *testing.T) {
	session := asyncio.NewContextVar("session", "None")
	steps := asyncio.NewContextVar[[]string]("steps", nil)
	addStep := func(t *asyncio.T, s string) { steps.Set(t, slices.Concat(steps.Get(t), []string{s})) }
	p := &probe{}
	var bg *asyncio.Task[struct{}]
	login := func(user string) func(*asyncio.T) (struct{}, error) {
		return func(t *asyncio.T) (struct{}, error) {
			p.l = t.Loop()
			p.restart()
			session.Set(t, user)
			addStep(t, "login")
			p.log("logged in %s", user)
			return noValue, nil
		}
	}
	syncBg := func(t *asyncio.T) error {
		n := 0
		for {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				if asyncio.IsCancelled(err) {
					p.log("bg cancelled after %d", n)
					if err := asyncio.Sleep(t, 0); err != nil {
						return err
					}
					p.log("bg cleaned up")
				}
				return err
			}
			n++
			p.log("bg tick %d session %s", n, session.Get(t))
		}
	}
	startBg := func(t *asyncio.T) (struct{}, error) {
		bg = asyncio.CreateTaskErr(t, syncBg, asyncio.WithName("bg"))
		addStep(t, "bg")
		if err := asyncio.Sleep(t, 160*ms); err != nil {
			return noValue, err
		}
		p.log("start_bg done")
		return noValue, nil
	}
	snapshot := func(t *asyncio.T) (*asyncio.VarContext, error) { return asyncio.CopyContext(t), nil }
	fetch := func(what string) func(*asyncio.T) (string, error) {
		return func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, 230*ms); err != nil {
				return "", err
			}
			addStep(t, what)
			p.log("fetched %s as %s steps %s", what, session.Get(t), ptuple(steps.Get(t)))
			return what, nil
		}
	}
	err := func() (err error) {
		runner := asyncio.NewRunner(asyncio.WithVirtualTime())
		defer func() {
			if cerr := runner.Close(); err == nil {
				err = cerr
			}
		}()
		if _, err := asyncio.RunWith(runner, login("ann")); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(runner, startBg); err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "between runs: bg done %s loop running %s\n", pb(bg.Done()), pb(runner.Loop().IsRunning()))
		snap, err := asyncio.RunWith(runner, snapshot)
		if err != nil {
			return err
		}
		if _, err := asyncio.RunWith(runner, fetch("drafts"), asyncio.WithVarContext(snap)); err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "snapshot steps %s\n", ptuple(steps.Value(snap.Context())))
		if _, err := asyncio.RunWith(runner, fetch("inbox")); err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "outside the runner: session %s\n", session.Value(context.Background()))
		return nil
	}()
	if err != nil {
		t.Fatalf("main failed: %v\n%s", err, p.b.String())
	}
	fmt.Fprintf(&p.b, "after close: bg cancelled %s\n", pb(bg.Cancelled()))
	if got, want := p.b.String(), cpythonTrace("p148_cli_runner_steps"); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p149_record_importer.py

func TestPortRecordImporter(t *testing.T) {
	runPort(t, cpythonTrace("p149_record_importer"), func(p *probe, tk *asyncio.T) error {
		importer := func(name string, records []string, saved *[]string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				i := 0
				for i < len(records) {
					err := asyncio.Sleep(t, 100*ms)
					if err == nil {
						*saved = append(*saved, name+":"+records[i])
						i++
						continue
					}
					if !asyncio.IsCancelled(err) {
						return 0, err
					}
					p.log("%s cancel requested %s cancelling %d", name, pd(err), t.Cancelling())
					if err2 := asyncio.Sleep(t, 50*ms); err2 != nil {
						if asyncio.IsCancelled(err2) {
							p.log("%s cleanup interrupted %s cancelling %d", name, pd(err2), t.Cancelling())
						}
						return 0, err2
					}
					*saved = append(*saved, name+":"+records[i]+"*")
					p.log("%s finished %s", name, records[i])
					n := t.Cancelling()
					for t.Uncancel() != 0 {
					}
					p.log("%s absorbed %d now %d", name, n, t.Cancelling())
					return i + 1, nil
				}
				return i, nil
			}
		}
		failSoon := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 60*ms); err != nil {
				return err
			}
			return newValueError("bad row")
		}
		stubborn := func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, time.Second); asyncio.IsCancelled(err) {
				p.log("stubborn ignores %s cancelling %d", pd(err), t.Cancelling())
			} else if err != nil {
				return "", err
			}
			err := asyncio.Timeout(t, 100*ms, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(t, time.Second) })
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("stubborn timed out, cancelling %d", t.Cancelling())
			} else if err != nil {
				return "", err
			}
			err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				if _, err := asyncio.SpawnErr(g, failSoon); err != nil {
					return err
				}
				return asyncio.Sleep(t, time.Second)
			})
			var eg *asyncio.ExceptionGroup
			if errors.As(err, &eg) {
				p.log("stubborn group failed %s cancelling %d", pd(eg), t.Cancelling())
			} else if err != nil {
				return "", err
			}
			if err := asyncio.Sleep(t, 10*ms); asyncio.IsCancelled(err) {
				p.log("stubborn re-cancelled after the group %s cancelling %d", pd(err), t.Cancelling())
			} else if err != nil {
				return "", err
			}
			return "stubborn done", nil
		}

		p.restart()
		var saved []string
		a := asyncio.CreateTask(tk, importer("a", []string{"p", "q", "r", "s", "t"}, &saved))
		if err := asyncio.Sleep(tk, 260*ms); err != nil {
			return err
		}
		c1 := a.Cancel("stop-1")
		c2 := a.Cancel("stop-2")
		p.log("main cancels a twice: %s %s cancelling %d", pb(c1), pb(c2), a.T().Cancelling())
		n, err := a.Await(tk)
		if err != nil {
			return err
		}
		p.log("a returned %d cancelled %s saved %s", n, pb(a.Cancelled()), pstrs(saved))

		p.restart()
		saved = nil
		b := asyncio.CreateTask(tk, importer("b", []string{"x", "y", "z"}, &saved))
		if err := asyncio.Sleep(tk, 160*ms); err != nil {
			return err
		}
		b.Cancel("stop-b1")
		if err := asyncio.Sleep(tk, 30*ms); err != nil {
			return err
		}
		p.log("main cancels b during cleanup")
		b.Cancel("stop-b2")
		if _, err := b.Await(tk); asyncio.IsCancelled(err) {
			p.log("b ended %s cancelling %d saved %s", pd(err), b.T().Cancelling(), pstrs(saved))
		} else {
			return fmt.Errorf("b: %v, want a cancellation", err)
		}

		p.restart()
		s := asyncio.CreateTask(tk, stubborn)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		s.Cancel("go away")
		r, err := s.Await(tk)
		if err != nil {
			return err
		}
		p.log("stubborn returned %s cancelling %d cancelled %s", r, s.T().Cancelling(), pb(s.Cancelled()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p150_report_sections.py

func TestPortReportSections(t *testing.T) {
	type query struct {
		name        string
		delay       time.Duration
		fail        error
		cleanupFail bool
	}
	type section struct {
		name    string
		budget  time.Duration
		queries []query
	}
	runPort(t, cpythonTrace("p150_report_sections"), func(p *probe, tk *asyncio.T) error {
		var cancelled []string
		runQuery := func(q query) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, q.delay); err != nil {
					if asyncio.IsCancelled(err) {
						cancelled = append(cancelled, q.name)
						if q.cleanupFail {
							return "", &runtimeError{pyExc{"RuntimeError", q.name + " cleanup failed"}}
						}
					}
					return "", err
				}
				if q.fail != nil {
					return "", q.fail
				}
				p.log("%s ok", q.name)
				return q.name, nil
			}
		}
		runSection := func(s section) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				var cm *asyncio.TimeoutScope
				err := asyncio.Timeout(t, s.budget, func(sc *asyncio.TimeoutScope) error {
					cm = sc
					return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
						for _, q := range s.queries {
							if _, err := asyncio.Spawn(g, runQuery(q)); err != nil {
								return err
							}
						}
						return nil
					})
				})
				if err != nil {
					p.log("%s leaves with %s expired %s", s.name, pd(err), pb(cm.Expired()))
					if cerr := asyncio.Sleep(t, 0); cerr != nil {
						if asyncio.IsCancelled(cerr) {
							p.log("%s metrics flush cancelled %s", s.name, pd(cerr))
						}
						return cerr
					}
					return err
				}
				p.log("%s done", s.name)
				return nil
			}
		}
		report := func(label string, sections []section, sibling *query) {
			p.restart()
			cancelled = nil
			var tasks []*asyncio.Task[struct{}]
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				for _, s := range sections {
					task, err := asyncio.SpawnErr(g, runSection(s))
					if err != nil {
						return err
					}
					tasks = append(tasks, task)
				}
				if sibling != nil {
					if _, err := asyncio.Spawn(g, runQuery(*sibling)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				p.log("%s -> %s", label, pd(err))
			} else {
				var cs []bool
				for _, task := range tasks {
					cs = append(cs, task.Cancelled())
				}
				p.log("%s finished, sections cancelled %s", label, pbools(cs...))
			}
			slices.Sort(cancelled)
			p.log("%s cancelled queries %s", label, pstrs(cancelled))
		}
		report("r1", []section{{"s1", 500 * ms, []query{{"q1", 100 * ms, newValueError("q1 bad"), false}, {"q2", 300 * ms, nil, false}}}},
			&query{"sib1", 400 * ms, newKeyError("sib1"), false})
		report("r2", []section{{"s2", 200 * ms, []query{{"q3", 500 * ms, nil, false}, {"q4", 600 * ms, nil, false}}}, {"s3", 400 * ms, []query{{"q5", 330 * ms, nil, false}}}}, nil)
		report("r3", []section{{"s4", 300 * ms, []query{{"q6", 500 * ms, nil, false}, {"q7", 600 * ms, nil, false}}}},
			&query{"sib2", 100 * ms, newKeyError("sib2"), false})
		report("r4", []section{{"s5", 200 * ms, []query{{"q8", 500 * ms, nil, true}, {"q9", 600 * ms, nil, false}}}, {"s6", 500 * ms, []query{{"q10", 360 * ms, nil, false}}}}, nil)
		report("r5", []section{{"s7", 200 * ms, []query{{"q11", 500 * ms, nil, true}}}, {"s8", 300 * ms, []query{{"q12", 120 * ms, newTypeError("q12 bad"), false}}}}, nil)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p151_task_registry.py

func TestPortTaskRegistry(t *testing.T) {
	runPort(t, cpythonTrace("p151_task_registry"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		names := func() string {
			var ns []string
			for _, task := range asyncio.AllTasks(loop) {
				ns = append(ns, task.Name())
			}
			slices.Sort(ns)
			return pstrs(ns)
		}
		conn := func(name string, life time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				err := asyncio.Sleep(t, life)
				if asyncio.IsCancelled(err) {
					if err := asyncio.Sleep(t, 50*ms); err != nil {
						return err
					}
					p.log("%s closed after cancel", name)
					return err
				}
				if err != nil {
					return err
				}
				p.log("%s closed normally", name)
				return nil
			}
		}
		pnone := func(cur *asyncio.T) string {
			if cur == nil {
				return "None"
			}
			return "'" + cur.Name() + "'"
		}

		p.restart()
		me := asyncio.CurrentTask(loop)
		me.SetName("supervisor")
		p.log("start %s", names())
		whoami := func(tag string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, 10*ms); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s:%s", tag, pb(asyncio.CurrentTask(loop) == me)), nil
			}
		}
		tasks := map[string]*asyncio.Task[struct{}]{}
		for _, c := range []struct {
			n    string
			life time.Duration
		}{{"c1", 300 * ms}, {"c2", time.Second}, {"c3", 100 * ms}} {
			tasks[c.n] = asyncio.CreateTaskErr(tk, conn(c.n, c.life), asyncio.WithName(c.n))
		}
		p.log("started %s c1 listed %s", names(), pb(slices.Contains(asyncio.AllTasks(loop), tasks["c1"].T())))
		var seen []string
		loop.CallSoon(func() { seen = append(seen, fmt.Sprintf("('soon', %s)", pnone(asyncio.CurrentTask(loop)))) })
		tasks["c3"].AddDoneCallback(func() {
			seen = append(seen, fmt.Sprintf("('done-cb', '%s', %s)", tasks["c3"].Name(), pnone(asyncio.CurrentTask(loop))))
			tasks["c3b"] = asyncio.CreateTaskErr(loop, conn("c3b", 500*ms), asyncio.WithName("c3b"))
			seen = append(seen, fmt.Sprintf("('replacement listed', %s)", pb(strings.Contains(names(), "'c3b'"))))
		})
		if err := asyncio.Sleep(tk, 120*ms); err != nil {
			return err
		}
		p.log("after c3 ended %s seen [%s]", names(), strings.Join(seen, ", "))
		tasks["c2"].Cancel()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("c2 cancelled: listed %s done %s", pb(strings.Contains(names(), "'c2'")), pb(tasks["c2"].Done()))
		tasks["c2"].SetName("c2-closing")
		p.log("renamed %s", names())
		r, err := asyncio.WaitForFunc(tk, time.Second, whoami("wait_for"))
		if err != nil {
			return err
		}
		g, err := asyncio.GatherFuncs(tk, whoami("gather1"), whoami("gather2")).Await(tk)
		if err != nil {
			return err
		}
		p.log("whoami %s %s", r, pstrs(g))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("after c2 finished %s c2 cancelled %s", names(), pb(tasks["c2"].Cancelled()))
		var all []*asyncio.Task[struct{}]
		for _, n := range []string{"c1", "c2", "c3", "c3b"} {
			all = append(all, tasks[n])
		}
		if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(all)...).Await(tk); err != nil {
			return err
		}
		p.log("all finished %s current %s", names(), asyncio.CurrentTask(loop).Name())
		return nil
	})
}

// ---------------------------------------------------------------------------
// p152_checkin_rendezvous.py

func TestPortCheckinRendezvous(t *testing.T) {
	runPort(t, cpythonTrace("p152_checkin_rendezvous"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		cond := asyncio.NewCondition(nil)
		allIn := asyncio.NewEvent()
		roster := map[string]bool{}
		expected := 4
		sortedRoster := func() string { return pstrs(slices.Sorted(maps.Keys(roster))) }
		check := func(name string) bool {
			ok := len(roster) >= expected
			p.log("%s checks %d/%d %s", name, len(roster), expected, pb(ok))
			return ok
		}
		worker := func(name string, arrive time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, arrive); err != nil {
					return "", err
				}
				err := asyncio.WithLock(t, cond, func() error {
					roster[name] = true
					p.log("%s checked in %d", name, len(roster))
					if len(roster) >= expected {
						cond.NotifyAll()
						allIn.Set()
					}
					if err := cond.WaitFor(t, func() bool { return check(name) }); err != nil {
						if asyncio.IsCancelled(err) {
							p.log("%s cancelled while waiting %s lock held %s", name, pd(err), pb(cond.Locked()))
							delete(roster, name)
						}
						return err
					}
					p.log("%s released", name)
					return nil
				})
				if err != nil {
					return "", err
				}
				return name, nil
			}
		}
		var ws []*asyncio.Task[string]
		for _, w := range []struct {
			n string
			a time.Duration
		}{{"w1", 100 * ms}, {"w2", 200 * ms}, {"w3", 300 * ms}, {"w4", 600 * ms}} {
			ws = append(ws, asyncio.CreateTask(tk, worker(w.n, w.a)))
		}
		if err := asyncio.Sleep(tk, 260*ms); err != nil {
			return err
		}
		ws[1].Cancel("w2 unplugged")
		if _, err := ws[1].Await(tk); asyncio.IsCancelled(err) {
			p.log("w2 out %s roster %s", pd(err), sortedRoster())
		} else {
			return fmt.Errorf("w2: %v, want a cancellation", err)
		}
		if err := asyncio.WithLock(tk, cond, func() error {
			expected = 3
			p.log("coordinator expects %d", expected)
			cond.NotifyAll()
			return nil
		}); err != nil {
			return err
		}
		if err := allIn.Wait(tk); err != nil {
			return err
		}
		p.log("all in %s", sortedRoster())
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(ws)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range res {
			outs = append(outs, outcomeRepr(o))
			if o.Err != nil { // d(r) is a str
				outs[len(outs)-1] = "'" + pd(o.Err) + "'"
			}
		}
		p.log("workers [%s]", strings.Join(outs, ", "))

		p.restart()
		goEv := asyncio.NewEvent()
		runner := func(name string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := goEv.Wait(t); err != nil {
					return err
				}
				p.log("%s running", name)
				return nil
			}
		}
		var rs []*asyncio.Task[struct{}]
		for i := range 3 {
			rs = append(rs, asyncio.CreateTaskErr(tk, runner(fmt.Sprintf("r%d", i))))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		goEv.Set()
		goEv.Clear()
		p.log("set then clear: is_set %s", pb(goEv.IsSet()))
		rs[2].Cancel("late cancel")
		rres, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(rs)...).Await(tk)
		if err != nil {
			return err
		}
		outs = nil
		for _, o := range rres {
			outs = append(outs, "'"+pd(o.Err)+"'")
		}
		p.log("runners [%s]", strings.Join(outs, ", "))
		return nil
	})
}
