package ports_test

// Ports p30 onward: a differential probe of structured-concurrency edge
// cases, small programs that make cancellations, timeouts, failures,
// wakeups and releases land in the same iteration, sweeping the offset
// with sleep(0) so CPython's trace is deterministic. Same conventions as
// ports_test.go.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// yields is `for _ in range(n): await asyncio.sleep(0)`.
func yields(t *asyncio.T, n int) error {
	for range n {
		if err := asyncio.Sleep(t, 0); err != nil {
			return err
		}
	}
	return nil
}

// pstate is the programs' state(prim): the bracketed tail of the
// primitive's repr, "[unlocked, waiters:1]>".
func pstate(s fmt.Stringer) string {
	parts := strings.SplitN(s.String(), "[", 2)
	if len(parts) != 2 {
		return "?" + s.String()
	}
	return "[" + parts[1]
}

// ---------------------------------------------------------------------------
// p30_tg_cancel_vs_child_failure.py

func TestPortTGCancelVsChildFailure(t *testing.T) {
	runPort(t, cpythonTrace("p30_tg_cancel_vs_child_failure"), func(p *probe, tk *asyncio.T) error {
		parent := func(me *asyncio.T) (string, error) {
			fail := func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 0); err != nil {
					return err
				}
				return newValueError("boom")
			}
			err := asyncio.TaskGroup(me, func(g *asyncio.Group) error {
				if _, err := asyncio.SpawnErr(g, fail); err != nil {
					return err
				}
				return asyncio.Sleep(me, time.Second)
			})
			if err != nil {
				p.log("  group raised %s cancelling %d", pd(err), me.Cancelling())
				if asyncio.IsCancelled(err) {
					return "", err
				}
			}
			if err := asyncio.Sleep(me, 0); err != nil {
				p.log("  next await %s cancelling %d", pd(err), me.Cancelling())
				return "", err
			}
			p.log("  next await fine")
			return "done", nil
		}
		p.restart()
		for k := range 6 {
			task := asyncio.CreateTask(tk, parent)
			if err := yields(tk, k); err != nil {
				return err
			}
			p.log("k %d cancel -> %s done %s", k, pb(task.Cancel("ext")), pb(task.Done()))
			v, err := task.Await(tk)
			switch {
			case err == nil:
				p.log("  result %s", v)
			case asyncio.IsCancelled(err):
				p.log("  cancelled %s cancelling %d", pd(err), task.Cancelling())
			default:
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p31_timeout_vs_result.py

func TestPortTimeoutVsResult(t *testing.T) {
	runPort(t, cpythonTrace("p31_timeout_vs_result"), func(p *probe, tk *asyncio.T) error {
		body := func(order string) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				loop := me.Loop()
				fut := asyncio.NewFuture[string](loop)
				deliver := func() {
					if !fut.Done() {
						_ = fut.SetResult("value")
					}
				}
				if order == "result first" {
					loop.CallSoon(deliver)
				}
				if order == "ext first" {
					loop.CallSoon(func() { me.Cancel("ext") })
				}
				var cm *asyncio.TimeoutScope
				err := asyncio.Timeout(me, 0, func(s *asyncio.TimeoutScope) error {
					cm = s
					if order == "timeout first" {
						loop.CallSoon(deliver)
					}
					if order == "ext second" {
						loop.CallSoon(func() { me.Cancel("ext") })
					}
					p.log("  body awaits")
					v, err := fut.Await(me)
					if err != nil {
						return err
					}
					p.log("  body got %s", v)
					return nil
				})
				if err != nil {
					p.log("  raised %s expired %s cancelling %d", pd(err), pb(cm.Expired()), me.Cancelling())
					if asyncio.IsCancelled(err) {
						me.Uncancel()
					}
				}
				state := "cancelled"
				if !fut.Cancelled() {
					state, _ = fut.Result()
				}
				p.log("  fut %s cancelling %d", state, me.Cancelling())
				return nil
			}
		}
		p.restart()
		for _, order := range []string{"result first", "timeout first", "ext first", "ext second"} {
			p.log("%s", order)
			if _, err := asyncio.CreateTaskErr(tk, body(order)).Await(tk); err != nil {
				return err
			}
		}
		err := asyncio.Timeout(tk, 0, func(cm *asyncio.TimeoutScope) error {
			p.log("no await, expired %s", pb(cm.Expired()))
			return nil
		})
		if err == nil {
			err = asyncio.Sleep(tk, 0)
		}
		if err != nil {
			p.log("  raised %s cancelling %d", pd(err), tk.Cancelling())
		} else {
			p.log("  next await fine, cancelling %d", tk.Cancelling())
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p32_uncancel_nested_scopes.py

func TestPortUncancelNestedScopes(t *testing.T) {
	runPort(t, cpythonTrace("p32_uncancel_nested_scopes"), func(p *probe, tk *asyncio.T) error {
		fail := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
			return newValueError("boom")
		}
		caseK := func(k int) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				loop := me.Loop()
				var scopes []*asyncio.TimeoutScope
				trig := asyncio.CreateTaskErr(me, func(t *asyncio.T) error {
					if err := yields(t, k); err != nil {
						return err
					}
					for _, s := range scopes {
						if err := s.Reschedule(loop.Time()); err != nil {
							p.log("  trigger %s", pd(err))
						}
					}
					return nil
				})
				var outer, inner *asyncio.TimeoutScope
				err := asyncio.Timeout(me, asyncio.Never, func(s *asyncio.TimeoutScope) error {
					outer = s
					scopes = append(scopes, s)
					err := asyncio.TaskGroup(me, func(g *asyncio.Group) error {
						if _, err := asyncio.SpawnErr(g, fail); err != nil {
							return err
						}
						return asyncio.Timeout(me, asyncio.Never, func(s *asyncio.TimeoutScope) error {
							inner = s
							scopes = append(scopes, s)
							return asyncio.Sleep(me, time.Second)
						})
					})
					if err != nil {
						p.log("  group %s inner expired %s cancelling %d", pd(err), pb(inner.Expired()), me.Cancelling())
					}
					return err
				})
				if err != nil {
					p.log("  outer %s expired %s cancelling %d", pd(err), pb(outer.Expired()), me.Cancelling())
				}
				if err := asyncio.Sleep(me, 0); err != nil {
					if !asyncio.IsCancelled(err) {
						return err
					}
					p.log("  next await %s cancelling %d", pd(err), me.Cancelling())
				} else {
					p.log("  next await fine, cancelling %d", me.Cancelling())
				}
				_, err = trig.Await(me)
				return err
			}
		}
		p.restart()
		for k := range 5 {
			p.log("deadlines after %d", k)
			if _, err := asyncio.CreateTaskErr(tk, caseK(k)).Await(tk); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p33_shield_inner_cancelled.py

func TestPortShieldInnerCancelled(t *testing.T) {
	runPort(t, cpythonTrace("p33_shield_inner_cancelled"), func(p *probe, tk *asyncio.T) error {
		work := func(n int, value string, fail error) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := yields(t, n); err != nil {
					return "", err
				}
				if fail != nil {
					return "", fail
				}
				return value, nil
			}
		}
		waiter := func(outer asyncio.AwaitableOf[string], name string) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				v, err := outer.Await(me)
				if err != nil {
					p.log("  %s raised %s cancelling %d", name, pd(err), me.Cancelling())
				} else {
					p.log("  %s got %s", name, v)
				}
				return nil
			}
		}
		p.restart()
		inner := asyncio.CreateTask(tk, work(3, "inner value", nil))
		outer := asyncio.Shield[string](inner)
		w := asyncio.CreateTaskErr(tk, waiter(outer, "w1"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("cancel inner -> %s", pb(inner.Cancel("direct")))
		if _, err := w.Await(tk); err != nil {
			return err
		}
		p.log("outer cancelled %s inner cancelled %s", pb(outer.Cancelled()), pb(inner.Cancelled()))

		inner = asyncio.CreateTask(tk, work(1, "", newValueError("late")))
		outer = asyncio.Shield[string](inner)
		if err := yields(tk, 2); err != nil {
			return err
		}
		p.log("inner done %s outer done %s", pb(inner.Done()), pb(outer.Done()))
		if err := waiter(outer, "w2")(tk); err != nil {
			return err
		}
		p.log("shield of done is same %s", pb(asyncio.Shield[string](inner) == asyncio.AwaitableOf[string](inner)))

		for k := range 4 {
			inner := asyncio.CreateTask(tk, work(2, fmt.Sprintf("v%d", k), nil))
			w := asyncio.CreateTaskErr(tk, waiter(asyncio.Shield[string](inner), fmt.Sprintf("w3.%d", k)))
			if err := yields(tk, k+1); err != nil {
				return err
			}
			p.log("k %d inner done %s cancel waiter -> %s", k, pb(inner.Done()), pb(w.Cancel("stop")))
			if _, err := w.Await(tk); err != nil {
				return err
			}
			v, err := inner.Await(tk)
			if err != nil {
				return err
			}
			p.log("  inner %s", v)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p34_gather_cancel_finishing.py

func TestPortGatherCancelFinishing(t *testing.T) {
	runPort(t, cpythonTrace("p34_gather_cancel_finishing"), func(p *probe, tk *asyncio.T) error {
		child := func(name string, n int, mode string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := yields(t, n); err != nil {
					if !asyncio.IsCancelled(err) {
						return "", err
					}
					p.log("    %s cancelled %s", name, pd(err))
					switch mode {
					case "swallow":
						return name + " swallowed", nil
					case "own":
						return "", &asyncio.CancelledError{Msg: name + " own"}
					}
					return "", err
				}
				return name, nil
			}
		}
		p.restart()
		for _, order := range []string{"xyz", "zyx"} {
			for k := range 4 {
				for _, rex := range []bool{true, false} {
					ts := map[rune]*asyncio.Task[string]{}
					ts['x'] = asyncio.CreateTask(tk, child("x", 3, "own"))
					ts['y'] = asyncio.CreateTask(tk, child("y", 1, "plain"))
					ts['z'] = asyncio.CreateTask(tk, child("z", 2, "swallow"))
					var aws []asyncio.AwaitableOf[string]
					for _, n := range order {
						aws = append(aws, ts[n])
					}
					var g interface {
						Cancel(...string) bool
						Cancelled() bool
					}
					var await func() ([]string, error)
					if rex {
						f := asyncio.GatherOutcomes(tk, aws...)
						g = f
						await = func() ([]string, error) {
							res, err := f.Await(tk)
							var out []string
							for _, o := range res {
								if o.Err != nil {
									out = append(out, pd(o.Err))
								} else {
									out = append(out, o.Value)
								}
							}
							return out, err
						}
					} else {
						f := asyncio.Gather(tk, aws...)
						g = f
						await = func() ([]string, error) { return f.Await(tk) }
					}
					if err := yields(tk, k); err != nil {
						return err
					}
					p.log("%s k %d rex %s cancel -> %s", order, k, pb(rex), pb(g.Cancel("stop")))
					res, err := await()
					switch {
					case err == nil:
						p.log("  result %s", pstrs(res))
					case asyncio.IsCancelled(err):
						p.log("  raised %s g.cancelled %s", pd(err), pb(g.Cancelled()))
					default:
						return err
					}
					if _, err := asyncio.GatherOutcomes(tk, ts['x'], ts['y'], ts['z']).Await(tk); err != nil {
						return err
					}
					var states strings.Builder
					for _, n := range order {
						if ts[n].Cancelled() {
							states.WriteByte('C')
						} else {
							states.WriteByte('D')
						}
					}
					p.log("  states %s", states.String())
				}
			}
		}
		a := asyncio.CreateTask(tk, child("a", 1, "plain"))
		g := asyncio.GatherOutcomes[string](tk, a, a)
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("dup cancel -> %s a done %s", pb(g.Cancel()), pb(a.Done()))
		if _, err := g.Await(tk); err != nil {
			if !asyncio.IsCancelled(err) {
				return err
			}
			p.log("  raised %s", pd(err))
		} else {
			p.log("  result (unexpected)")
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p35_wait_done_duplicates.py

func TestPortWaitDoneDuplicates(t *testing.T) {
	runPort(t, cpythonTrace("p35_wait_done_duplicates"), func(p *probe, tk *asyncio.T) error {
		type task = *asyncio.Task[string]
		names := func(fs []task) string {
			var ns []string
			for _, f := range fs {
				ns = append(ns, f.Name())
			}
			slices.Sort(ns)
			return pstrs(ns)
		}
		job := func(n int, value string, fail error) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := yields(t, n); err != nil {
					return "", err
				}
				if fail != nil {
					return "", fail
				}
				return value, nil
			}
		}
		named := func(fn func(*asyncio.T) (string, error), name string) task {
			return asyncio.CreateTask(tk, fn, asyncio.WithName(name))
		}
		p.restart()
		ok := named(job(0, "ok", nil), "ok")
		bad := named(job(0, "", newValueError("bad")), "bad")
		gone := named(job(5, "x", nil), "gone")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		gone.Cancel()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		slow := named(job(7, "slow", nil), "slow")
		soon := named(job(0, "", newValueError("soon")), "soon")
		for _, when := range []asyncio.ReturnWhen{asyncio.FirstCompleted, asyncio.FirstException, asyncio.AllCompleted} {
			for _, fs := range [][]task{{slow, ok, slow}, {gone, slow, gone}, {slow, soon, slow}, {bad, bad}} {
				done, pending, err := asyncio.Wait(tk, fs, asyncio.Never, when)
				if err != nil {
					return err
				}
				p.log("%v %s done %s pending %s", when, names(fs), names(done), names(pending))
			}
		}
		var fresh []task
		for _, n := range []int{2, 0, 1} {
			fresh = append(fresh, named(job(n, fmt.Sprint(n), nil), fmt.Sprintf("f%d", n)))
		}
		done, pending, err := asyncio.Wait(tk, append(slices.Clone(fresh), fresh...), asyncio.Never, asyncio.FirstCompleted)
		if err != nil {
			return err
		}
		p.log("fresh done %s pending %s", names(done), names(pending))
		if _, _, err := asyncio.Wait(tk, fresh, asyncio.Never, asyncio.AllCompleted); err != nil {
			return err
		}

		late := named(job(3, "late", nil), "late")
		now := named(job(0, "now", nil), "now")
		var got []string
		for f, err := range asyncio.AsCompleted(tk, []task{late, ok, gone, now, ok}, 0) {
			if errors.Is(err, asyncio.ErrTimeout) {
				got = append(got, "timeout")
				break
			}
			if err != nil {
				return err
			}
			got = append(got, f.Name())
		}
		p.log("as_completed %s late done %s", pstrs(got), pb(late.Done()))
		got = nil
		for f, err := range asyncio.AsCompleted(tk, []task{late, bad, late}, asyncio.Never) {
			if err != nil {
				return err
			}
			v, err := f.Await(tk)
			if err != nil {
				got = append(got, pd(err))
			} else {
				got = append(got, v)
			}
		}
		p.log("as_completed %s soon %s", pstrs(got), pd(soon.Err()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p36_condition_notify_cancel.py

func TestPortConditionNotifyCancel(t *testing.T) {
	runPort(t, cpythonTrace("p36_condition_notify_cancel"), func(p *probe, tk *asyncio.T) error {
		waiter := func(cond *asyncio.Condition, name string, got *[]string) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				return asyncio.WithLock(me, cond, func() error {
					if err := cond.Wait(me); err != nil {
						if asyncio.IsCancelled(err) {
							p.log("    %s cancelled %s holds lock %s cancelling %d", name, pd(err), pb(cond.Locked()), me.Cancelling())
						}
						return err
					}
					*got = append(*got, name)
					p.log("    %s notified", name)
					return nil
				})
			}
		}
		p.restart()
		for _, when := range []string{"before notify", "after notify", "after release", "both notified"} {
			cond := asyncio.NewCondition(nil)
			var got []string
			var ws []*asyncio.Task[struct{}]
			for i := range 3 {
				ws = append(ws, asyncio.CreateTaskErr(tk, waiter(cond, fmt.Sprintf("w%d", i), &got)))
			}
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			p.log("%s", when)
			err := asyncio.WithLock(tk, cond, func() error {
				if when == "before notify" {
					ws[0].Cancel("c")
				}
				n := 1
				if when == "both notified" {
					n = 2
				}
				if err := cond.Notify(n); err != nil {
					return err
				}
				if when == "after notify" || when == "both notified" {
					ws[0].Cancel("c")
				}
				return nil
			})
			if err != nil {
				return err
			}
			if when == "after release" {
				ws[0].Cancel("c")
			}
			if err := yields(tk, 3); err != nil {
				return err
			}
			p.log("  got %s %s", pstrs(got), pstate(cond))
			for _, w := range ws {
				w.Cancel()
			}
			if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables[struct{}](ws)...).Await(tk); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p37_lock_sem_cancel_after_release.py

// primitive is what p37 needs of a Lock and a Semaphore.
type primitive interface {
	asyncio.Locker
	Locked() bool
	String() string
}

func TestPortLockSemCancelAfterRelease(t *testing.T) {
	runPort(t, cpythonTrace("p37_lock_sem_cancel_after_release"), func(p *probe, tk *asyncio.T) error {
		user := func(prim primitive, name string, order *[]string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := prim.Acquire(t); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s", name, pd(err))
					}
					return err
				}
				*order = append(*order, name)
				if err := asyncio.Sleep(t, 0); err != nil {
					return err
				}
				return prim.Release()
			}
		}
		run := func(prim primitive, label, cancelAt string) error {
			var order []string
			if err := prim.Acquire(tk); err != nil {
				return err
			}
			var ws []*asyncio.Task[struct{}]
			for i := range 3 {
				ws = append(ws, asyncio.CreateTaskErr(tk, user(prim, fmt.Sprintf("w%d", i), &order)))
			}
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			if cancelAt == "before" {
				ws[0].Cancel()
			}
			if err := prim.Release(); err != nil {
				return err
			}
			switch cancelAt {
			case "after":
				ws[0].Cancel()
			case "two after":
				ws[0].Cancel()
				ws[1].Cancel()
			}
			late := asyncio.CreateTaskErr(tk, user(prim, "late", &order))
			p.log("%s %s locked %s %s", label, cancelAt, pb(prim.Locked()), pstate(prim))
			if _, err := asyncio.GatherOutcomes(tk, append(asyncio.Awaitables[struct{}](ws), late)...).Await(tk); err != nil {
				return err
			}
			p.log("  order %s locked %s %s", pstrs(order), pb(prim.Locked()), pstate(prim))
			return nil
		}
		p.restart()
		for _, cancelAt := range []string{"before", "after", "two after"} {
			if err := run(asyncio.NewLock(), "lock", cancelAt); err != nil {
				return err
			}
			if err := run(asyncio.NewSemaphore(1), "sem", cancelAt); err != nil {
				return err
			}
		}
		sem := asyncio.NewSemaphore(0)
		var order []string
		var ws []*asyncio.Task[struct{}]
		for i := range 4 {
			ws = append(ws, asyncio.CreateTaskErr(tk, user(sem, fmt.Sprintf("s%d", i), &order)))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := errors.Join(sem.Release(), sem.Release()); err != nil {
			return err
		}
		ws[1].Cancel()
		ws[0].Cancel()
		p.log("sem0 two released, two cancelled, locked %s %s", pb(sem.Locked()), pstate(sem))
		if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables[struct{}](ws)...).Await(tk); err != nil {
			return err
		}
		p.log("  order %s %s", pstrs(order), pstate(sem))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p38_queue_cancel_after_wakeup.py

func TestPortQueueCancelAfterWakeup(t *testing.T) {
	runPort(t, cpythonTrace("p38_queue_cancel_after_wakeup"), func(p *probe, tk *asyncio.T) error {
		type pair struct{ name, item string }
		pgot := func(got []pair) string {
			parts := make([]string, len(got))
			for i, g := range got {
				parts[i] = fmt.Sprintf("('%s', '%s')", g.name, g.item)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		getter := func(q *asyncio.Queue[string], name string, got *[]pair) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				v, err := q.Get(t)
				if err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s qsize %d", name, pd(err), q.Len())
					}
					return err
				}
				*got = append(*got, pair{name, v})
				return nil
			}
		}
		putter := func(q *asyncio.Queue[string], name, item string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := q.Put(t, item); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s qsize %d", name, pd(err), q.Len())
					}
					return err
				}
				p.log("    %s put %s", name, item)
				return nil
			}
		}
		gatherAll := func(ts []*asyncio.Task[struct{}]) error {
			_, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables[struct{}](ts)...).Await(tk)
			return err
		}
		p.restart()
		for _, n := range []int{1, 2} {
			q := asyncio.NewQueue[string](0)
			var got []pair
			var gs []*asyncio.Task[struct{}]
			for i := range n {
				gs = append(gs, asyncio.CreateTaskErr(tk, getter(q, fmt.Sprintf("g%d", i), &got)))
			}
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			if err := q.PutNowait("item"); err != nil {
				return err
			}
			gs[0].Cancel("late")
			if err := gatherAll(gs); err != nil {
				return err
			}
			p.log("%d getters: got %s qsize %d", n, pgot(got), q.Len())
		}
		q := asyncio.NewQueue[string](0)
		var got []pair
		var gs []*asyncio.Task[struct{}]
		for i := range 3 {
			gs = append(gs, asyncio.CreateTaskErr(tk, getter(q, fmt.Sprintf("h%d", i), &got)))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := errors.Join(q.PutNowait("a"), q.PutNowait("b")); err != nil {
			return err
		}
		gs[1].Cancel()
		gs[0].Cancel()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("two puts, two woken cancelled: got %s qsize %d", pgot(got), q.Len())
		if err := q.PutNowait("c"); err != nil {
			return err
		}
		if err := gatherAll(gs); err != nil {
			return err
		}
		p.log("  got %s qsize %d", pgot(got), q.Len())

		q = asyncio.NewQueue[string](1)
		if err := q.PutNowait("full"); err != nil {
			return err
		}
		var ps []*asyncio.Task[struct{}]
		for i := range 2 {
			ps = append(ps, asyncio.CreateTaskErr(tk, putter(q, fmt.Sprintf("p%d", i), fmt.Sprintf("x%d", i))))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		v, err := q.GetNowait()
		if err != nil {
			return err
		}
		p.log("took %s", v)
		ps[0].Cancel()
		if err := gatherAll(ps); err != nil {
			return err
		}
		n := q.Len()
		v, err = q.GetNowait()
		if err != nil {
			return err
		}
		p.log("  qsize %d item %s", n, v)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p39_barrier_cancel_mid_wait.py

func TestPortBarrierCancelMidWait(t *testing.T) {
	runPort(t, cpythonTrace("p39_barrier_cancel_mid_wait"), func(p *probe, tk *asyncio.T) error {
		party := func(b *asyncio.Barrier, name string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				i, err := b.Wait(t)
				if err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s n_waiting %d", name, pd(err), b.Waiting())
					}
					return 0, err
				}
				p.log("    %s passed as %d", name, i)
				return i, nil
			}
		}
		gatherAll := func(ts ...*asyncio.Task[int]) error {
			_, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables[int](ts)...).Await(tk)
			return err
		}
		p.restart()
		b := asyncio.NewBarrier(3)
		a1 := asyncio.CreateTask(tk, party(b, "a1"))
		a2 := asyncio.CreateTask(tk, party(b, "a2"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("waiting %d", b.Waiting())
		a1.Cancel("leave")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("after cancel waiting %d broken %s", b.Waiting(), pb(b.Broken()))
		a3 := asyncio.CreateTask(tk, party(b, "a3"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("waiting %d", b.Waiting())
		a4 := asyncio.CreateTask(tk, party(b, "a4"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		a2.Cancel("too late")
		if err := gatherAll(a1, a2, a3, a4); err != nil {
			return err
		}
		p.log("round 1 waiting %d broken %s", b.Waiting(), pb(b.Broken()))

		c := []*asyncio.Task[int]{asyncio.CreateTask(tk, party(b, "c0")), asyncio.CreateTask(tk, party(b, "c1"))}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		c[0].Cancel()
		last := asyncio.CreateTask(tk, party(b, "last"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("waiting %d", b.Waiting())
		b.Abort()
		if err := gatherAll(c[0], c[1], last); err != nil {
			return err
		}
		var outs []string
		for _, x := range []*asyncio.Task[int]{c[0], c[1], last} {
			if x.Cancelled() {
				outs = append(outs, "C")
			} else {
				outs = append(outs, pd(x.Err()))
			}
		}
		p.log("aborted %s %s", pb(b.Broken()), pstrs(outs))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p40_event_timeout_vs_set.py

func TestPortEventTimeoutVsSet(t *testing.T) {
	runPort(t, cpythonTrace("p40_event_timeout_vs_set"), func(p *probe, tk *asyncio.T) error {
		waiter := func(ev *asyncio.Event, order string) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				loop := me.Loop()
				if order == "set first" {
					loop.CallSoon(ev.Set)
				}
				err := asyncio.Timeout(me, 0, func(*asyncio.TimeoutScope) error {
					if order == "timeout first" {
						loop.CallSoon(ev.Set)
					}
					if err := ev.Wait(me); err != nil {
						return err
					}
					p.log("  woke, set %s", pb(ev.IsSet()))
					return nil
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("  timed out, set %s cancelling %d %s", pb(ev.IsSet()), me.Cancelling(), pstate(ev))
					return nil
				}
				return err
			}
		}
		evWait := func(ev *asyncio.Event) func(*asyncio.T) (bool, error) {
			return func(t *asyncio.T) (bool, error) { return true, ev.Wait(t) }
		}
		p.restart()
		for _, order := range []string{"set first", "timeout first"} {
			ev := asyncio.NewEvent()
			p.log("%s", order)
			if _, err := asyncio.CreateTaskErr(tk, waiter(ev, order)).Await(tk); err != nil {
				return err
			}
		}
		ev := asyncio.NewEvent()
		for _, st := range []string{"unset", "set"} {
			if st == "set" {
				ev.Set()
			}
			v, err := asyncio.WaitForFunc(tk, 0, evWait(ev))
			switch {
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("wait_for 0 %s timeout %s", st, pstate(ev))
			case err != nil:
				return err
			default:
				p.log("wait_for 0 %s %s", st, pb(v))
			}
		}
		ev.Clear()
		w := asyncio.CreateTask(tk, func(t *asyncio.T) (bool, error) {
			return asyncio.WaitForFunc(t, 10*time.Second, evWait(ev))
		})
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		ev.Set()
		ev.Clear()
		w.Cancel("now")
		v, err := w.Await(tk)
		switch {
		case asyncio.IsCancelled(err):
			p.log("set+clear+cancel: %s set %s %s", pd(err), pb(ev.IsSet()), pstate(ev))
		case err != nil:
			return err
		default:
			p.log("set+clear+cancel: %s", pb(v))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p41_gather_awaiter_cancel_vs_failure.py

func TestPortGatherAwaiterCancelVsFailure(t *testing.T) {
	runPort(t, cpythonTrace("p41_gather_awaiter_cancel_vs_failure"), func(p *probe, tk *asyncio.T) error {
		child := func(name string, n int, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := yields(t, n); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s", name, pd(err))
					}
					return "", err
				}
				if fail {
					return "", newValueError(name)
				}
				return name, nil
			}
		}
		awaiter := func(g *asyncio.Future[[]string]) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				v, err := g.Await(me)
				if err != nil {
					p.log("  awaiter %s cancelling %d g.done %s", pd(err), me.Cancelling(), pb(g.Done()))
					return err
				}
				p.log("  got %s", pstrs(v))
				return nil
			}
		}
		p.restart()
		for k := range 5 {
			a := asyncio.CreateTask(tk, child("a", 1, true))
			b := asyncio.CreateTask(tk, child("b", 4, false))
			g := asyncio.Gather[string](tk, a, b)
			w := asyncio.CreateTaskErr(tk, awaiter(g))
			if err := yields(tk, k); err != nil {
				return err
			}
			p.log("k %d a done %s g done %s cancel awaiter -> %s", k, pb(a.Done()), pb(g.Done()), pb(w.Cancel("w")))
			r, err := asyncio.GatherOutcomes[struct{}](tk, w).Await(tk)
			if err != nil {
				return err
			}
			if _, err := asyncio.GatherOutcomes[string](tk, a, b).Await(tk); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			_ = g.Err()
			bs := "C"
			if !b.Cancelled() {
				bs, _ = b.Result()
			}
			wr := "None"
			if r[0].Err != nil {
				wr = pd(r[0].Err)
			}
			p.log("  w %s b %s", wr, bs)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p42_condition_reacquire_cancels.py

func TestPortConditionReacquireCancels(t *testing.T) {
	runPort(t, cpythonTrace("p42_condition_reacquire_cancels"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		cond := asyncio.NewCondition(nil)
		waiter := func(name string) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				return asyncio.WithLock(me, cond, func() error {
					err := cond.WaitFor(me, func() bool { return false })
					if asyncio.IsCancelled(err) {
						p.log("  %s raised %s locked %s cancelling %d", name, pd(err), pb(cond.Locked()), me.Cancelling())
					}
					return err
				})
			}
		}
		w := asyncio.CreateTaskErr(tk, waiter("w"))
		v := asyncio.CreateTaskErr(tk, waiter("v"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := cond.Acquire(tk); err != nil {
			return err
		}
		if err := cond.NotifyAll(); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		for _, msg := range []string{"first", "second", "third"} {
			p.log("cancel %s -> %s v.cancel -> %s", msg, pb(w.Cancel(msg)), pb(v.Cancel(msg+"-v")))
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}
		p.log("still holding, w done %s cancelling %d", pb(w.Done()), w.Cancelling())
		if err := cond.Release(); err != nil {
			return err
		}
		if _, err := asyncio.GatherOutcomes[struct{}](tk, w, v).Await(tk); err != nil {
			return err
		}
		ws := "C"
		if !w.Cancelled() {
			ws = pd(w.Err())
		}
		p.log("after locked %s w %s", pb(cond.Locked()), ws)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p43_tg_rogue_cancel_vs_failure.py

func TestPortTGRogueCancelVsFailure(t *testing.T) {
	runPort(t, cpythonTrace("p43_tg_rogue_cancel_vs_failure"), func(p *probe, tk *asyncio.T) error {
		caseK := func(k int) func(*asyncio.T) error {
			return func(me *asyncio.T) error {
				rogue := func(t *asyncio.T) error {
					if err := yields(t, k); err != nil {
						return err
					}
					p.log("  rogue cancels parent -> %s", pb(me.Cancel("rogue")))
					return nil
				}
				fail := func(t *asyncio.T) error {
					if err := yields(t, 2); err != nil {
						return err
					}
					return newValueError("boom")
				}
				spawner := func(g *asyncio.Group) func(*asyncio.T) error {
					return func(t *asyncio.T) error {
						err := asyncio.Sleep(t, time.Second)
						if asyncio.IsCancelled(err) {
							_, serr := asyncio.SpawnErr(g, func(t *asyncio.T) error { return asyncio.Sleep(t, 0) })
							if serr == nil {
								p.log("  spawner started a sibling")
							} else {
								p.log("  spawner %s", pd(serr))
							}
						}
						return err
					}
				}
				err := asyncio.TaskGroup(me, func(g *asyncio.Group) error {
					for _, fn := range []func(*asyncio.T) error{rogue, fail, spawner(g)} {
						if _, err := asyncio.SpawnErr(g, fn); err != nil {
							return err
						}
					}
					return asyncio.Sleep(me, time.Second)
				})
				if err != nil {
					p.log("  group %s cancelling %d", pd(err), me.Cancelling())
				}
				if err := asyncio.Sleep(me, 0); err != nil {
					if !asyncio.IsCancelled(err) {
						return err
					}
					p.log("  next await %s cancelling %d", pd(err), me.Cancelling())
				} else {
					p.log("  next await fine")
				}
				return nil
			}
		}
		p.restart()
		for k := range 5 {
			p.log("rogue after %d", k)
			if _, err := asyncio.CreateTaskErr(tk, caseK(k)).Await(tk); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p44_uncancel_withdraws.py

func TestPortUncancelWithdraws(t *testing.T) {
	runPort(t, cpythonTrace("p44_uncancel_withdraws"), func(p *probe, tk *asyncio.T) error {
		sleeper := func(name string) func(*asyncio.T) (string, error) {
			return func(me *asyncio.T) (string, error) {
				err := asyncio.Sleep(me, 0)
				if err == nil {
					p.log("  %s first await fine, cancelling %d", name, me.Cancelling())
					err = asyncio.Timeout(me, 0, func(*asyncio.TimeoutScope) error {
						return asyncio.Sleep(me, time.Second)
					})
				}
				if err != nil {
					p.log("  %s raised %s cancelling %d", name, pd(err), me.Cancelling())
					return "", err
				}
				return name, nil
			}
		}
		p.restart()
		for _, c := range []struct {
			nCancel, nUncancel int
			runFirst           bool
		}{{1, 1, false}, {2, 1, false}, {1, 1, true}, {2, 2, true}, {1, 2, true}} {
			name := fmt.Sprintf("c%du%d", c.nCancel, c.nUncancel)
			if c.runFirst {
				name += "r"
			}
			task := asyncio.CreateTask(tk, sleeper(name))
			if c.runFirst {
				if err := asyncio.Sleep(tk, 0); err != nil {
					return err
				}
			}
			for i := range c.nCancel {
				task.Cancel(fmt.Sprintf("m%d", i))
			}
			var counts []string
			for range c.nUncancel {
				counts = append(counts, fmt.Sprint(task.Uncancel()))
			}
			p.log("cancel %d uncancel [%s]", c.nCancel, strings.Join(counts, ", "))
			r, err := asyncio.GatherOutcomes[string](tk, task).Await(tk)
			if err != nil {
				return err
			}
			out := r[0].Value
			if r[0].Err != nil {
				out = pd(r[0].Err)
			}
			p.log("  -> %s cancelling %d", out, task.Cancelling())
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p45_timeout_task_shield.py

func TestPortTimeoutTaskShield(t *testing.T) {
	runPort(t, cpythonTrace("p45_timeout_task_shield"), func(p *probe, tk *asyncio.T) error {
		inner := func(name string, n int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := yields(t, n); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s", name, pd(err))
					}
					return "", err
				}
				return name, nil
			}
		}
		p.restart()
		for n := range 3 {
			for _, created := range []string{"before", "inside"} {
				for _, shielded := range []bool{false, true} {
					kind := "p"
					if shielded {
						kind = "s"
					}
					name := fmt.Sprintf("n%d-%s-%s", n, created, kind)
					var task *asyncio.Task[string]
					if created == "before" {
						task = asyncio.CreateTask(tk, inner(name, n))
					}
					err := asyncio.Timeout(tk, 0, func(*asyncio.TimeoutScope) error {
						if task == nil {
							task = asyncio.CreateTask(tk, inner(name, n))
						}
						var aw asyncio.AwaitableOf[string] = task
						if shielded {
							aw = asyncio.Shield[string](task)
						}
						v, err := aw.Await(tk)
						if err != nil {
							return err
						}
						p.log("%s got %s", name, v)
						return nil
					})
					if errors.Is(err, asyncio.ErrTimeout) {
						state := "running"
						switch {
						case task.Cancelled():
							state = "C"
						case task.Done():
							state = "done"
						}
						p.log("%s timeout, inner %s cancelling %d", name, state, tk.Cancelling())
					} else if err != nil {
						return err
					}
					if !task.Cancelled() {
						if _, err := task.Await(tk); err != nil {
							return err
						}
					}
				}
			}
		}
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 0, func(s *asyncio.TimeoutScope) error {
			cm = s
			err := asyncio.Sleep(tk, time.Second)
			if rerr := s.Reschedule(asyncio.Never); rerr != nil {
				p.log("reschedule: %s %v", pd(rerr), s)
			}
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("timeout %v", cm)
		} else if err != nil {
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p46_semaphore_many_woken.py

func TestPortSemaphoreManyWoken(t *testing.T) {
	runPort(t, cpythonTrace("p46_semaphore_many_woken"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		sem := asyncio.NewSemaphore(0)
		var order []string
		user := func(name string, hold int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := sem.Acquire(t); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("    %s cancelled %s %s", name, pd(err), pstate(sem))
					}
					return err
				}
				order = append(order, name)
				p.log("    %s acquired %s", name, pstate(sem))
				if err := yields(t, hold); err != nil {
					return err
				}
				return sem.Release()
			}
		}
		var ws []*asyncio.Task[struct{}]
		for i := range 5 {
			ws = append(ws, asyncio.CreateTaskErr(tk, user(fmt.Sprintf("u%d", i), i)))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		for range 3 {
			if err := sem.Release(); err != nil {
				return err
			}
		}
		p.log("released 3 %s", pstate(sem))
		ws[0].Cancel("a")
		ws[2].Cancel("b")
		late := asyncio.CreateTaskErr(tk, user("late", 0))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("after one iteration %s order %s", pstate(sem), pstrs(order))
		if _, err := asyncio.GatherOutcomes(tk, append(asyncio.Awaitables[struct{}](ws), late)...).Await(tk); err != nil {
			return err
		}
		p.log("order %s %s", pstrs(order), pstate(sem))
		return nil
	})
}
