//go:build unix

package ports_test

// Ports p97 onward (h30): loop exception handler reports, timer ordering,
// threads with context variables, async generators as iterators,
// as_completed, subprocess build tools, line-protocol servers on aio's
// simulated network, idle timeouts with reschedule, a token bucket on
// call_at. Same conventions as ports_test.go, ports50_test.go (network)
// and ports70_test.go (children).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// pexc is d(ctx.get("exception")): a panic that escaped a callback is
// the Python exception it raised.
func pexc(err error) string {
	var pe *asyncio.PanicError
	if errors.As(err, &pe) {
		if e, ok := pe.Value.(error); ok {
			return pd(e)
		}
		return fmt.Sprint(pe.Value)
	}
	return pd(err)
}

// pstrList is repr() of a list of str.
func pstrList(ss []string) string { return pstrs(ss) }

// ---------------------------------------------------------------------------
// p97_exception_handler_reports.py

func TestPortExceptionHandlerReports(t *testing.T) {
	runPort(t, cpythonTrace("p97_exception_handler_reports"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		var reports []string
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if strings.HasPrefix(msg, "Exception in callback") {
				msg = "Exception in callback"
			}
			// docs/rules.md FUT-10: Go's message adds the task's name.
			if strings.HasPrefix(msg, "Task exception was never retrieved") {
				msg = "Task exception was never retrieved"
			}
			reports = append(reports, msg)
			if msg == "explode" {
				panic(&runtimeError{pyExc{"RuntimeError", "handler bug"}})
			}
			handle := "-"
			if ctx.Handle != nil {
				handle = "handle"
			}
			p.log("handler: %s %s %s", msg, pexc(ctx.Err), handle)
		})
		failingJob := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return noValue, err
				}
				p.log("%s fails", name)
				return noValue, newKeyError(name)
			}
		}
		p.restart()
		var order []string
		step := func(name string) func() {
			return func() {
				order = append(order, name)
				if name == "bad" {
					panic(newValueError("bad step"))
				}
			}
		}
		for _, name := range []string{"first", "bad", "third"} {
			loop.CallSoon(step(name))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("callbacks ran %s", pstrList(order))

		loop.CallLater(100*ms, func() {
			p.log("tick")
			panic(&pyExc{"ZeroDivisionError", "tick"})
		})
		loop.CallLater(200*ms, step("after-tick"))
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("after timers %s", pstrList(order))

		fut := asyncio.NewFuture[string](tk)
		fut.AddDoneCallback(func() {
			v, _ := fut.Result()
			p.log("done callback 1 sees %s", v)
			panic(newTypeError("callback bug"))
		})
		fut.AddDoneCallback(func() {
			v, _ := fut.Result()
			p.log("done callback 2 sees %s", v)
		})
		if err := fut.SetResult("ready"); err != nil {
			return err
		}
		p.log("result set")
		for range 2 {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}

		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "custom report", Err: &pyExc{"OSError", "disk full"}})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "explode"})
		p.log("handler raised, loop goes on")
		loop.CallSoon(step("after-explode"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s", pstrList(order))

		p.restart()
		jobs := []*asyncio.Task[struct{}]{asyncio.CreateTask(tk, failingJob("orphan"))}
		ok := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return "fine", asyncio.Sleep(t, 60*ms)
		})
		v, err := ok.Await(tk)
		if err != nil {
			return err
		}
		p.log("ok result %s", v)
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("orphan done %s reports so far %d", pb(jobs[0].Done()), len(reports))
		clear(jobs) // jobs.clear(): Go reports the orphan at the loop's close (FUT-10)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p98_timer_wheel.py

// Timers due at one deadline run here in the order they were scheduled;
// asyncio's heapq gives ties no order (it depends on the shape of the
// heap, other timers included), so CPython's two lines of ties differ
// (README, "Where Go differs": timers at one deadline).
func TestPortTimerWheel(t *testing.T) {
	want := goism(cpythonTrace("p98_timer_wheel"),
		[2]string{"0.3 three at one deadline ['c', 'a', 'b']", "0.3 three at one deadline ['a', 'b', 'c']"},
		[2]string{"0.6 five at one deadline ['w1', 'w3', 'w2', 'w4', 'w5']", "0.6 five at one deadline ['w1', 'w2', 'w3', 'w4', 'w5']"},
	)
	runPort(t, want, func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		t0 := loop.Time()
		var ran []string
		job := func(name string) func() {
			return func() {
				ran = append(ran, name)
				p.log("job %s", name)
			}
		}
		handles := map[string]*asyncio.TimerHandle{}
		type sched struct {
			name string
			at   time.Duration
		}
		for _, s := range []sched{{"backup", 300 * ms}, {"report", 100 * ms}, {"cleanup", 200 * ms}, {"rotate", 160 * ms}} {
			handles[s.name] = loop.CallAt(t0+s.at, job(s.name))
		}
		var pairs []string
		for n, h := range handles {
			pairs = append(pairs, fmt.Sprintf("('%s', '%s')", p.rel(h.When()), n))
		}
		slices.Sort(pairs)
		p.log("scheduled [%s]", strings.Join(pairs, ", "))
		loop.CallAt(t0+260*ms, func() {
			handles["backup"].Cancel()
			p.log("cancelled backup, cancelled %s", pb(handles["backup"].Cancelled()))
			loop.CallSoon(job("soon-after-cancel"))
		})
		if err := asyncio.Sleep(tk, 400*ms); err != nil {
			return err
		}
		p.log("ran %s", pstrs(ran))

		p.restart()
		t0 = loop.Time()
		ran = nil
		var beats []string
		var beat func(n int, when time.Duration) func()
		beat = func(n int, when time.Duration) func() {
			return func() {
				beats = append(beats, p.rel(when))
				if n < 3 {
					nxt := when + 100*ms
					loop.CallAt(nxt, beat(n+1, nxt))
				}
			}
		}
		loop.CallAt(t0+100*ms, beat(1, t0+100*ms))
		if err := asyncio.Sleep(tk, 460*ms); err != nil {
			return err
		}
		p.log("beats at %s", pstrs(beats))

		p.restart()
		t0 = loop.Time()
		var order []string
		appendf := func(name string) func() { return func() { order = append(order, name) } }
		tick := t0 + 200*ms
		for _, name := range []string{"a", "b", "c"} {
			loop.CallAt(tick, appendf(name))
		}
		hx := loop.CallAt(tick, appendf("x"))
		loop.CallAt(t0+100*ms, hx.Cancel)
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("three at one deadline %s", pstrs(order))

		order = nil
		tick = loop.Time() + 200*ms
		for _, name := range []string{"w1", "w2", "w3", "w4", "w5"} {
			loop.CallAt(tick, appendf(name))
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("five at one deadline %s", pstrs(order))

		order = nil
		tick = loop.Time() + 100*ms
		var hs []*asyncio.TimerHandle
		for n := range 4 {
			hs = append(hs, loop.CallAt(tick, appendf(fmt.Sprint(n))))
		}
		var cancelled []bool
		for _, h := range hs {
			h.Cancel()
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		for _, h := range hs {
			cancelled = append(cancelled, h.Cancelled())
		}
		p.log("all cancelled %s %s", pstrs(order), pbools(cancelled...))

		order = nil
		loop.CallSoon(appendf("soon1"))
		loop.CallLater(0, appendf("later0"))
		loop.CallSoon(appendf("soon2"))
		loop.CallAt(loop.Time()-time.Second, appendf("past"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		order = append(order, "main")
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("zero delays %s", pstrs(order))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p99_thread_context.py

func TestPortThreadContext(t *testing.T) {
	requestID := asyncio.NewContextVar("request_id", "-")
	tenant := asyncio.NewContextVar("tenant", "none")
	var seen []string
	lookup := func(key string) func(ctx context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			if key == "missing" {
				return "", newKeyError(key)
			}
			return fmt.Sprintf("%s@%s/%s", key, requestID.Value(ctx), tenant.Value(ctx)), nil
		}
	}
	p := &probe{}
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		loop := tk.Loop()
		p.restart()
		tenant.Set(tk, "acme")
		handle := func(rid, key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				requestID.Set(t, rid)
				v, err := asyncio.ToThread(t, lookup(key))
				var ke *keyError
				if errors.As(err, &ke) {
					return "error " + pd(err), nil
				}
				return v, err
			}
		}
		results, err := asyncio.GatherFuncs(tk, handle("r1", "a"), handle("r2", "b"), handle("r3", "missing")).Await(tk)
		if err != nil {
			return noValue, err
		}
		p.log("results %s", pstrs(results))
		p.log("main still has %s %s", requestID.Get(tk), tenant.Get(tk))

		batch := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			requestID.Set(t, "batch-1")
			var first, second *asyncio.Task[string]
			err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				var err error
				first, err = asyncio.Spawn(g, func(t *asyncio.T) (string, error) { return asyncio.ToThread(t, lookup("x")) })
				if err != nil {
					return err
				}
				requestID.Set(t, "batch-2")
				second, err = asyncio.Spawn(g, func(t *asyncio.T) (string, error) { return asyncio.ToThread(t, lookup("y")) })
				return err
			})
			if err != nil {
				return err
			}
			a, _ := first.Result()
			b, _ := second.Result()
			p.log("batch %s %s", a, b)
			return nil
		})
		if _, err := batch.Await(tk); err != nil {
			return noValue, err
		}

		gate := make(chan struct{})
		started := asyncio.NewEvent()
		export := func(ctx context.Context) (string, error) {
			if _, err := loop.CallSoonThreadsafe(started.Set); err != nil {
				return "", err
			}
			<-gate
			seen = append(seen, requestID.Value(ctx))
			return "exported", nil
		}
		job := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			requestID.Set(t, "job-7")
			v, err := asyncio.ToThread(t, export)
			if asyncio.IsCancelled(err) {
				p.log("job cancelled: %s", pd(err))
			}
			return v, err
		})
		if err := started.Wait(tk); err != nil {
			return noValue, err
		}
		p.log("export started, cancelling")
		job.Cancel("shutdown")
		if _, err := job.Await(tk); asyncio.IsCancelled(err) {
			p.log("main: job cancelled %s thread saw %s", pb(job.Cancelled()), pstrs(seen))
		}
		close(gate)
		p.log("main returns")
		return noValue, nil
	}, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatalf("main failed: %v\n%s", err, p.b.String())
	}
	fmt.Fprintf(&p.b, "after run: thread saw %s\n", pstrs(seen))
	if got, want := p.b.String(), cpythonTrace("p99_thread_context"); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p100_async_pagination.py

// The async generators are iter.Seq2 functions whose body awaits (README:
// "async generators"); contextlib.aclosing is the range loop itself, which
// closes the iterator when the loop ends. Python's items() closes its
// pages() at its `async with` exit, after its own finally: the port calls
// that finally where the body leaves the loop, before the range closes
// pages.
func TestPortAsyncPagination(t *testing.T) {
	type page struct {
		items []string
		next  string
	}
	pagesData := map[string]page{
		"p1": {[]string{"a1", "a2"}, "p2"},
		"p2": {[]string{"b1", "b2"}, "p3"},
		"p3": {[]string{"c1"}, ""},
		"e1": {[]string{"x1"}, "bad"},
	}
	runPort(t, cpythonTrace("p100_async_pagination"), func(p *probe, tk *asyncio.T) error {
		fetchPage := func(t *asyncio.T, token string) (page, error) {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return page{}, err
			}
			if token == "bad" {
				return page{}, &connectionError{pyExc{"ConnectionError", "page bad"}}
			}
			p.log("fetched %s", token)
			return pagesData[token], nil
		}
		pages := func(t *asyncio.T, start, name string) iter.Seq2[[]string, error] {
			return func(yield func([]string, error) bool) {
				token := start
				finally := func() error {
					if err := asyncio.Sleep(t, 20*ms); err != nil {
						return err
					}
					p.log("%s session closed", name)
					return nil
				}
				for token != "" {
					pg, err := fetchPage(t, token)
					if err != nil {
						if asyncio.IsCancelled(err) {
							p.log("%s cancelled while fetching %s", name, token)
						}
						if ferr := finally(); ferr != nil {
							err = ferr
						}
						yield(nil, err)
						return
					}
					token = pg.next
					if !yield(pg.items, nil) {
						_ = finally() // aclose(): an error here would be raised by aclose
						return
					}
				}
				if err := finally(); err != nil {
					yield(nil, err)
				}
			}
		}
		items := func(t *asyncio.T, start, name string) iter.Seq2[string, error] {
			return func(yield func(string, error) bool) {
				finally := func() { p.log("%s items closing", name) }
				for pg, err := range pages(t, start, name+"/pages") {
					if err != nil {
						finally()
						yield("", err)
						return
					}
					for _, it := range pg {
						if !yield(it, nil) {
							finally()
							return
						}
					}
				}
				finally()
			}
		}

		p.restart()
		var got []string
		for it, err := range items(tk, "p1", "all") {
			if err != nil {
				return err
			}
			got = append(got, it)
		}
		p.log("all items %s", pstrs(got))

		p.restart()
		for it, err := range items(tk, "p1", "find") {
			if err != nil {
				return err
			}
			if strings.HasPrefix(it, "b") {
				p.log("found %s", it)
				break
			}
		}
		p.log("after find")

		p.restart()
		var seen []string
		task := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for pg, err := range pages(t, "p1", "slow") {
				if err != nil {
					return err
				}
				seen = append(seen, pg...)
				if err := asyncio.Sleep(t, 50*ms); err != nil {
					return err // leaving the loop closes the generator (aclosing)
				}
			}
			return nil
		})
		if err := asyncio.Sleep(tk, 240*ms); err != nil {
			return err
		}
		p.log("cancelling consumer, seen %s", pstrs(seen))
		task.Cancel("user left")
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("consumer %s cancelled %s", pd(err), pb(task.Cancelled()))
		}

		p.restart()
		got = nil
		for it, err := range items(tk, "e1", "broken") {
			if err != nil {
				var ce *connectionError
				if !errors.As(err, &ce) {
					return err
				}
				p.log("broken listing: %s got %s", pd(err), pstrs(got))
				break
			}
			got = append(got, it)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p101_as_completed_crawler.py

// plinks is repr() of a list of links.
func plinks(ss []string) string { return pstrs(ss) }

func TestPortAsCompletedCrawler(t *testing.T) {
	type entry struct {
		delay time.Duration
		links []string // nil: the fetch fails
	}
	site := map[string]entry{
		"/":     {100 * ms, []string{"/a", "/b"}},
		"/a":    {300 * ms, []string{"/a/1"}},
		"/b":    {200 * ms, []string{}},
		"/slow": {900 * ms, []string{}},
		"/down": {160 * ms, nil},
	}
	runPort(t, cpythonTrace("p101_as_completed_crawler"), func(p *probe, tk *asyncio.T) error {
		fetch := func(path string) func(*asyncio.T) ([]string, error) {
			return func(t *asyncio.T) ([]string, error) {
				e := site[path]
				if err := asyncio.Sleep(t, e.delay); err != nil {
					return nil, err
				}
				if e.links == nil {
					return nil, &connectionError{pyExc{"ConnectionError", path}}
				}
				return e.links, nil
			}
		}
		p.restart()
		cached := asyncio.CreateTask(tk, func(t *asyncio.T) ([]string, error) {
			return []string{"/cached-link"}, asyncio.Sleep(t, 0)
		}, asyncio.WithName("/cached"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		var tasks []*asyncio.Task[[]string]
		for _, path := range []string{"/slow", "/a", "/down", "/", "/b"} {
			tasks = append(tasks, asyncio.CreateTask(tk, fetch(path), asyncio.WithName(path)))
		}
		tasks = slices.Insert(tasks, 2, cached)
		var found []string
		for tsk, err := range asyncio.AsCompleted(tk, tasks, 500*ms) {
			if errors.Is(err, asyncio.ErrTimeout) {
				var left []string
				for _, x := range tasks {
					if !x.Done() {
						left = append(left, x.Name())
					}
				}
				p.log("crawl timed out, pending %s", pstrs(left))
				for _, x := range tasks {
					x.Cancel()
				}
				if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk); err != nil {
					return err
				}
				var cancelled []string
				for _, x := range tasks {
					if x.Cancelled() {
						cancelled = append(cancelled, x.Name())
					}
				}
				p.log("cancelled %s", pstrs(cancelled))
				break
			}
			if err != nil {
				return err
			}
			if e := tsk.Err(); e != nil {
				p.log("failed %s %s", tsk.Name(), pd(e))
				continue
			}
			links, err := tsk.Await(tk)
			if err != nil {
				return err
			}
			found = append(found, links...)
			p.log("page %s links %s", tsk.Name(), plinks(links))
		}
		slices.Sort(found)
		p.log("found %s", pstrs(found))

		p.restart()
		tasks = nil
		for _, path := range []string{"/a", "/", "/b"} {
			tasks = append(tasks, asyncio.CreateTask(tk, fetch(path), asyncio.WithName(path)))
		}
		for tsk, err := range asyncio.AsCompleted(tk, tasks, asyncio.Never) {
			if err != nil {
				return err
			}
			links, _ := tsk.Result()
			p.log("second pass %s %s", tsk.Name(), plinks(links))
			if slices.Contains(links, "/b") {
				p.log("wanted link found")
				break
			}
		}
		for _, x := range tasks {
			x.Cancel()
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range res {
			if o.Err != nil {
				outs = append(outs, "'"+pd(o.Err)+"'")
			} else {
				outs = append(outs, plinks(o.Value))
			}
		}
		p.log("second pass outcomes [%s]", strings.Join(outs, ", "))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p102_build_runner.py

func TestPortBuildRunner(t *testing.T) {
	steps := [][2]string{
		{"compile", "echo compiling; echo 'warning: unused x' >&2; echo done"},
		{"lint", "echo 'lint: 2 problems' >&2; exit 3"},
		{"test", "printf 'ok 1\\nok 2\\n'"},
	}
	type result struct {
		name  string
		rc    int
		lines []string
	}
	runPort(t, cpythonTrace("p102_build_runner"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		sem := asyncio.NewSemaphore(2)
		var started []string
		runStep := func(name, cmd string, budget time.Duration) func(*asyncio.T) (result, error) {
			return func(t *asyncio.T) (res result, err error) {
				err = asyncio.WithLock(t, sem, func() error {
					started = append(started, name)
					proc, err := aio.CreateSubprocessShell(t, cmd, aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Stdout))
					if err != nil {
						return err
					}
					out, err := asyncio.WaitForFunc(t, budget, func(t *asyncio.T) ([]byte, error) {
						out, _, err := proc.Communicate(t, nil)
						return out, err
					})
					if errors.Is(err, asyncio.ErrTimeout) {
						p.log("%s timed out, killing", name)
						if err := proc.Kill(); err != nil {
							return err
						}
						rc, err := proc.Wait(t)
						res = result{name, rc, []string{"(timed out)"}}
						return err
					}
					if err != nil {
						return err
					}
					rc, _ := proc.ReturnCode()
					res = result{name, rc, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")}
					return nil
				})
				return res, err
			}
		}
		var fns []func(*asyncio.T) (result, error)
		for _, s := range steps {
			fns = append(fns, runStep(s[0], s[1], asyncio.Never))
		}
		results, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		if err != nil {
			return err
		}
		p.log("start order %s", pstrs(started))
		var failed []string
		for _, r := range results {
			p.log("%-8s rc=%d %s", r.name, r.rc, pstrs(r.lines))
			if r.rc != 0 {
				failed = append(failed, r.name)
			}
		}
		p.log("failed steps %s", pstrs(failed))
		r, err := runStep("deploy", "echo started; exec sleep 30", 500*ms)(tk)
		if err != nil {
			return err
		}
		p.log("%s rc %d %s", r.name, r.rc, pstrs(r.lines))

		data := bytes.Repeat([]byte("x"), 300_000)
		proc, err := aio.CreateSubprocessExec(tk, "wc", []string{"-c"}, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		out, stderr, err := proc.Communicate(tk, data)
		if err != nil {
			return err
		}
		p.log("wc read %s rc %s stderr %s", strings.TrimSpace(string(out)), prc(proc), pbytesOrNone(stderr))

		watcher, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", "echo watching; exec sleep 30"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		line, err := watcher.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("watcher says %s returncode %s", pbytes(line), prc(watcher))
		if err := watcher.Terminate(); err != nil {
			return err
		}
		rc, err := watcher.Wait(tk)
		if err != nil {
			return err
		}
		p.log("watcher stopped %d", rc)
		return nil
	})
}

// pbytesOrNone is repr() of communicate()'s stream that was not a pipe.
func pbytesOrNone(b []byte) string {
	if b == nil {
		return "None"
	}
	return pbytes(b)
}

// ---------------------------------------------------------------------------
// p103_kv_pipeline.py

func TestPortKVPipeline(t *testing.T) {
	runPort(t, cpythonTrace("p103_kv_pipeline"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		store := map[string]string{}
		conns, cmds := 0, 0
		execute := func(parts []string) string {
			cmd := ""
			if len(parts) > 0 {
				cmd = strings.ToUpper(parts[0])
			}
			switch {
			case cmd == "SET" && len(parts) == 3:
				store[parts[1]] = parts[2]
				return "OK"
			case cmd == "GET" && len(parts) == 2:
				if v, ok := store[parts[1]]; ok {
					return v
				}
				return "(nil)"
			case cmd == "DEL" && len(parts) == 2:
				_, ok := store[parts[1]]
				delete(store, parts[1])
				if ok {
					return "1"
				}
				return "0"
			case cmd == "INCR" && len(parts) == 2:
				v, ok := store[parts[1]]
				if !ok {
					v = "0"
				}
				n, err := strconv.Atoi(v)
				if err != nil {
					return "ERR not an integer"
				}
				store[parts[1]] = strconv.Itoa(n + 1)
				return store[parts[1]]
			}
			return fmt.Sprintf("ERR unknown command '%s'", cmd)
		}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) (err error) {
			conns++
			peer := fmt.Sprintf("c%d", conns)
			p.log("server: %s connected", peer)
			defer func() {
				w.Close()
				if werr := w.WaitClosed(t); err == nil {
					err = werr
				}
				p.log("server: %s closed", peer)
			}()
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("server: %s EOF", peer)
					return nil
				}
				cmds++
				parts := strings.Fields(string(line))
				if len(parts) > 0 && strings.ToUpper(parts[0]) == "QUIT" {
					w.Write([]byte("BYE\n"))
					if err := w.Drain(t); err != nil {
						return err
					}
					p.log("server: %s quits", peer)
					return nil
				}
				w.Write([]byte(execute(parts) + "\n"))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		readLine := func(r *aio.StreamReader) ([]byte, error) { return r.ReadLine(tk) }
		r1, w1, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		batch := []string{"SET a 1", "SET b hello", "INCR a", "INCR b", "GET a", "FLY x", "DEL b", "GET b"}
		w1.Write([]byte(strings.Join(batch, "\n") + "\n"))
		if err := w1.Drain(tk); err != nil {
			return err
		}
		var replies []string
		for range batch {
			line, err := readLine(r1)
			if err != nil {
				return err
			}
			replies = append(replies, strings.TrimSpace(string(line)))
		}
		quoted := make([]string, len(replies))
		for i, r := range replies {
			if strings.Contains(r, "'") {
				quoted[i] = `"` + r + `"`
			} else {
				quoted[i] = "'" + r + "'"
			}
		}
		p.log("pipelined replies [%s]", strings.Join(quoted, ", "))

		w1.Write([]byte("GE"))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("half a request sent")
		w1.Write([]byte("T a\n"))
		line, err := readLine(r1)
		if err != nil {
			return err
		}
		p.log("split request reply %s", pbytes(line))

		r2, w2, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		w2.Write([]byte("INCR a\n"))
		if line, err = readLine(r2); err != nil {
			return err
		}
		p.log("c2 INCR a %s", pbytes(line))
		w1.Write([]byte("GET a\n"))
		if line, err = readLine(r1); err != nil {
			return err
		}
		p.log("c1 GET a %s", pbytes(line))

		w2.Write([]byte("QUIT\n"))
		bye, err := readLine(r2)
		if err != nil {
			return err
		}
		rest, err := r2.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("c2 got %s then %s at_eof %s", pbytes(bye), pbytes(rest), pb(r2.AtEOF()))
		w2.Close()
		if err := w2.WaitClosed(tk); err != nil {
			return err
		}

		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		w1.Close()
		if err := w1.WaitClosed(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		var items []string
		for k, v := range store {
			items = append(items, fmt.Sprintf("('%s', '%s')", k, v))
		}
		slices.Sort(items)
		p.log("stats {'conns': %d, 'cmds': %d} store [%s]", conns, cmds, strings.Join(items, ", "))
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p104_pubsub_broker.py

type pubsubSub struct {
	topic, name string
	delay       time.Duration
	w           *aio.StreamWriter
	queue       *asyncio.Queue[string]
	sender      *asyncio.Task[struct{}]
}

func TestPortPubSubBroker(t *testing.T) {
	runPort(t, cpythonTrace("p104_pubsub_broker"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		var subs []*pubsubSub
		newSub := func(t *asyncio.T, topic, name string, delay time.Duration, w *aio.StreamWriter) *pubsubSub {
			s := &pubsubSub{topic: topic, name: name, delay: delay, w: w, queue: asyncio.NewQueue[string](2)}
			s.sender = asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
				err := func() error {
					for {
						msg, err := s.queue.Get(t)
						if err != nil {
							return err
						}
						s.w.Write([]byte(msg + "\n"))
						if err := s.w.Drain(t); err != nil {
							return err
						}
						if err := asyncio.Sleep(t, s.delay); err != nil {
							return err
						}
					}
				}()
				if asyncio.IsCancelled(err) {
					p.log("broker: dropping %s queued %d", s.name, s.queue.Len())
					s.w.Write([]byte("DROPPED\n"))
					s.w.Close()
				}
				return noValue, err
			})
			return s
		}
		publish := func(topic, message string) int {
			n := 0
			var matching []*pubsubSub
			for _, s := range subs {
				if s.topic == topic {
					matching = append(matching, s)
				}
			}
			for _, s := range matching {
				if err := s.queue.PutNowait(message); errors.Is(err, asyncio.ErrQueueFull) {
					subs = slices.DeleteFunc(subs, func(x *pubsubSub) bool { return x == s })
					s.sender.Cancel()
					continue
				}
				n++
			}
			return n
		}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			var me *pubsubSub
			for line, err := range r.Lines(t) {
				if err != nil {
					return err
				}
				parts := strings.SplitN(strings.TrimSpace(string(line)), " ", 4)
				switch parts[0] {
				case "SUB":
					secs, err := strconv.ParseFloat(parts[3], 64)
					if err != nil {
						return err
					}
					me = newSub(t, parts[1], parts[2], time.Duration(secs*float64(time.Second)), w)
					subs = append(subs, me)
					p.log("broker: %s subscribed to %s", me.name, me.topic)
				case "PUB":
					w.Write(fmt.Appendf(nil, "PUB %d\n", publish(parts[1], strings.TrimSpace(parts[2]))))
				}
			}
			if me != nil {
				if slices.Contains(subs, me) {
					subs = slices.DeleteFunc(subs, func(x *pubsubSub) bool { return x == me })
					me.sender.Cancel()
					p.log("broker: %s disconnected", me.name)
				}
				if _, err := me.sender.Await(t); err != nil && !asyncio.IsCancelled(err) {
					return err
				}
			}
			w.Close()
			return w.WaitClosed(t)
		}
		subscriber := func(port int, name, delay string, got *[]string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return noValue, err
				}
				w.Write(fmt.Appendf(nil, "SUB news %s %s\n", name, delay))
				err = func() error {
					for line, err := range r.Lines(t) {
						if err != nil {
							return err
						}
						*got = append(*got, strings.TrimSpace(string(line)))
						p.log("%s got %s", name, (*got)[len(*got)-1])
					}
					p.log("%s EOF", name)
					return nil
				}()
				w.Close() // finally
				if cerr := w.WaitClosed(t); err == nil {
					err = cerr
				}
				return noValue, err
			}
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		p.restart()
		var fastGot, slowGot []string
		fast := asyncio.CreateTask(tk, subscriber(port, "fast", "0", &fastGot))
		slow := asyncio.CreateTask(tk, subscriber(port, "slow", "0.35", &slowGot))
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		pr, pw, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
		if err != nil {
			return err
		}
		for i := 1; i <= 5; i++ {
			pw.Write(fmt.Appendf(nil, "PUB news m%d\n", i))
			line, err := pr.ReadLine(tk)
			if err != nil {
				return err
			}
			p.log("publisher: m%d reached %s", i, strings.TrimSpace(string(line)))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		if _, err := slow.Await(tk); err != nil {
			return err
		}
		p.log("slow got %s", pstrs(slowGot))
		fast.Cancel()
		if _, err := fast.Await(tk); asyncio.IsCancelled(err) {
			p.log("fast subscriber stopped %s", pd(err))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		pw.Write([]byte("PUB news m6\n"))
		line, err := pr.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("publisher: m6 reached %s subs left %d", strings.TrimSpace(string(line)), len(subs))
		pw.Close()
		if err := pw.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("broker closed, fast got %s", pstrs(fastGot))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p105_conn_pool_health.py

type poolConn struct {
	name string
	r    *aio.StreamReader
	w    *aio.StreamWriter
}

func TestPortConnPoolHealth(t *testing.T) {
	runPort(t, cpythonTrace("p105_conn_pool_health"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		serverConns := 0
		backend := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			serverConns++
			me := fmt.Sprintf("s%d", serverConns)
			var stall time.Duration
			for {
				line, err := asyncio.WaitForFunc(t, 300*ms, func(t *asyncio.T) ([]byte, error) { return r.ReadLine(t) })
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("backend: %s idle, closing", me)
					break
				}
				if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("backend: %s EOF", me)
					break
				}
				cmd, arg, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
				if stall > 0 {
					if err := asyncio.Sleep(t, stall); err != nil {
						return err
					}
				}
				switch cmd {
				case "PING":
					w.Write([]byte("PONG\n"))
				case "ECHO":
					w.Write([]byte(arg + "\n"))
				case "STALL":
					stall = 500 * ms
					w.Write([]byte("OK\n"))
				}
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartServer(tk, backend, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)

		sem := asyncio.NewSemaphore(2)
		var idle []poolConn
		opened := 0
		healthy := func(t *asyncio.T, c poolConn) (bool, error) {
			c.w.Write([]byte("PING\n"))
			line, err := asyncio.WaitForFunc(t, 200*ms, func(t *asyncio.T) ([]byte, error) { return c.r.ReadLine(t) })
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("pool: check of %s failed %s", c.name, pd(err))
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if string(line) != "PONG\n" {
				p.log("pool: check of %s got %s", c.name, pbytes(line))
				return false, nil
			}
			return true, nil
		}
		acquire := func(t *asyncio.T) (poolConn, error) {
			if err := sem.Acquire(t); err != nil {
				return poolConn{}, err
			}
			for len(idle) > 0 {
				c := idle[len(idle)-1]
				idle = idle[:len(idle)-1]
				ok, err := healthy(t, c)
				if err != nil {
					return poolConn{}, err
				}
				if ok {
					return c, nil
				}
				c.w.Close()
				if err := c.w.WaitClosed(t); err != nil {
					return poolConn{}, err
				}
				p.log("pool: dropped %s", c.name)
			}
			opened++
			name := fmt.Sprintf("conn%d", opened)
			r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
			if err != nil {
				return poolConn{}, err
			}
			p.log("pool: opened %s", name)
			return poolConn{name, r, w}, nil
		}
		release := func(c poolConn) {
			idle = append(idle, c)
			_ = sem.Release()
		}
		idleNames := func() string {
			var names []string
			for _, c := range idle {
				names = append(names, c.name)
			}
			return pstrs(names)
		}
		request := func(cmd string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				c, err := acquire(t)
				if err != nil {
					return noValue, err
				}
				defer release(c)
				c.w.Write([]byte(cmd + "\n"))
				line, err := c.r.ReadLine(t)
				if err != nil {
					return noValue, err
				}
				p.log("request %s via %s -> %s", cmd, c.name, strings.TrimSpace(string(line)))
				return noValue, nil
			}
		}
		p.restart()
		if _, err := asyncio.GatherFuncs(tk, request("ECHO a"), request("ECHO b"), request("ECHO c")).Await(tk); err != nil {
			return err
		}
		p.log("idle %s", idleNames())
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if _, err := request("ECHO d")(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 360*ms); err != nil {
			return err
		}
		p.log("after the backend's idle timeout")
		for _, cmd := range []string{"ECHO e", "STALL", "ECHO f"} {
			if _, err := request(cmd)(tk); err != nil {
				return err
			}
		}
		p.log("idle %s opened %d", idleNames(), opened)
		for len(idle) > 0 {
			c := idle[len(idle)-1]
			idle = idle[:len(idle)-1]
			c.w.Close()
			if err := c.w.WaitClosed(tk); err != nil {
				return err
			}
			p.log("pool: closed %s", c.name)
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p106_idle_session_timeout.py

func TestPortIdleSessionTimeout(t *testing.T) {
	runPort(t, cpythonTrace("p106_idle_session_timeout"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		session := func(name string, gaps []time.Duration) error {
			const idle, hard = 260 * ms, time.Second
			p.restart()
			q := asyncio.NewQueue[string](0)
			feeder := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
				for i, gap := range gaps {
					if err := asyncio.Sleep(t, gap); err != nil {
						return err
					}
					msg := fmt.Sprintf("m%d", i)
					if i == len(gaps)-1 && name == "polite" {
						msg = "bye"
					}
					if err := q.PutNowait(msg); err != nil {
						return err
					}
				}
				return nil
			})
			var got []string
			var hardCM, idleCM *asyncio.TimeoutScope
			err := asyncio.TimeoutAt(tk, loop.Time()+hard, func(s *asyncio.TimeoutScope) error {
				hardCM = s
				err := asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
					idleCM = s
					for {
						msg, err := q.Get(tk)
						if err != nil {
							return err
						}
						got = append(got, msg)
						if msg == "bye" {
							return nil
						}
						if err := s.Reschedule(loop.Time() + idle); err != nil {
							return err
						}
					}
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("%s idle timeout, expired %s when %s", name, pb(idleCM.Expired()), p.rel(idleCM.When()))
					return nil
				}
				return err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("%s hard deadline at %s outer expired %s inner expired %s", name, p.rel(hardCM.When()), pb(hardCM.Expired()), pb(idleCM.Expired()))
				err = nil
			}
			feeder.Cancel() // finally
			if err != nil {
				return err
			}
			p.log("%s got %s scopes expired %s %s idle when %s", name, pstrs(got), pb(hardCM.Expired()), pb(idleCM.Expired()), p.rel(idleCM.When()))
			return nil
		}
		rep := func(d time.Duration, n int) []time.Duration {
			var ds []time.Duration
			for range n {
				ds = append(ds, d)
			}
			return ds
		}
		if err := session("quiet", []time.Duration{100 * ms, 100 * ms, 400 * ms}); err != nil {
			return err
		}
		if err := session("chatty", rep(160*ms, 10)); err != nil {
			return err
		}
		return session("polite", []time.Duration{100 * ms, 200 * ms, 200 * ms})
	})
}

// ---------------------------------------------------------------------------
// p107_token_bucket.py

type bucketWaiter struct {
	who string
	fut *asyncio.Future[struct{}]
}

type tokenBucket struct {
	p                *probe
	loop             *asyncio.Loop
	interval         time.Duration
	capacity, tokens int
	updated          time.Duration
	waiters          []bucketWaiter
	timer            *asyncio.TimerHandle
}

func (b *tokenBucket) refill() {
	now := b.loop.Time()
	n := int((now - b.updated + time.Microsecond) / b.interval)
	if n > 0 {
		b.tokens = min(b.capacity, b.tokens+n)
		if b.tokens == b.capacity {
			b.updated = now
		} else {
			b.updated += time.Duration(n) * b.interval
		}
	}
}

func (b *tokenBucket) arm() {
	if b.timer == nil && len(b.waiters) > 0 {
		b.timer = b.loop.CallAt(b.updated+b.interval, b.wake)
		b.p.log("timer armed for %s", b.p.rel(b.timer.When()))
	}
}

func (b *tokenBucket) wake() {
	b.timer = nil
	b.refill()
	for b.tokens > 0 && len(b.waiters) > 0 {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		_ = w.fut.SetResult(struct{}{})
		b.tokens--
	}
	b.arm()
}

func (b *tokenBucket) acquire(t *asyncio.T, who string) error {
	b.refill()
	if b.tokens > 0 && len(b.waiters) == 0 {
		b.tokens--
		return nil
	}
	fut := asyncio.NewFuture[struct{}](t)
	b.waiters = append(b.waiters, bucketWaiter{who, fut})
	b.arm()
	_, err := fut.Await(t)
	if asyncio.IsCancelled(err) {
		if fut.Done() && !fut.Cancelled() {
			b.tokens++
			b.p.log("%s gives its token back", who)
		} else {
			b.waiters = slices.DeleteFunc(b.waiters, func(w bucketWaiter) bool { return w.fut == fut })
		}
		if len(b.waiters) == 0 && b.timer != nil {
			b.timer.Cancel()
			b.timer = nil
			b.p.log("timer cancelled, tokens %d", b.tokens)
		}
	}
	return err
}

func TestPortTokenBucket(t *testing.T) {
	runPort(t, cpythonTrace("p107_token_bucket"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		b := &tokenBucket{p: p, loop: tk.Loop(), interval: 200 * ms, capacity: 3, tokens: 3, updated: tk.Loop().Time()}
		call := func(who string, patience time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				_, err := asyncio.WaitForFunc(t, patience, func(t *asyncio.T) (struct{}, error) { return noValue, b.acquire(t, who) })
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("%s gave up waiting", who)
					return noValue, nil
				}
				if err != nil {
					return noValue, err
				}
				p.log("%s granted, tokens left %d", who, b.tokens)
				return noValue, nil
			}
		}
		var calls []func(*asyncio.T) (struct{}, error)
		for i := 1; i <= 6; i++ {
			patience := asyncio.Never
			if i == 5 {
				patience = 300 * ms
			}
			calls = append(calls, call(fmt.Sprintf("r%d", i), patience))
		}
		if _, err := asyncio.GatherFuncs(tk, calls...).Await(tk); err != nil {
			return err
		}
		p.log("burst done, waiters %d", len(b.waiters))

		if err := asyncio.Sleep(tk, time.Second); err != nil {
			return err
		}
		p.restart()
		b.refill()
		p.log("after idle, tokens %d", b.tokens)
		calls = nil
		for i := 1; i <= 3; i++ {
			calls = append(calls, call(fmt.Sprintf("s%d", i), asyncio.Never))
		}
		if _, err := asyncio.GatherFuncs(tk, calls...).Await(tk); err != nil {
			return err
		}
		ptimer := func() string {
			if b.timer == nil {
				return "None"
			}
			return "<TimerHandle>"
		}
		lone := asyncio.CreateTask(tk, call("lone", asyncio.Never))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		lone.Cancel()
		if _, err := lone.Await(tk); asyncio.IsCancelled(err) {
			p.log("lone %s waiters %d timer %s", pd(err), len(b.waiters), ptimer())
		}

		late := asyncio.CreateTask(tk, call("late", asyncio.Never))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		b.loop.CallAt(b.timer.When(), func() { late.Cancel() })
		if _, err := late.Await(tk); asyncio.IsCancelled(err) {
			p.log("late cancelled after its grant, tokens %d timer %s", b.tokens, ptimer())
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p108_subprocess_protocol.py

type tailProto struct {
	exited    *asyncio.Future[int]
	transport aio.SubprocessTransport
	lines     map[int][]string
	partial   map[int][]byte
	events    []string
}

func (p *tailProto) ConnectionMade(tr aio.SubprocessTransport) { p.transport = tr }

func (p *tailProto) PipeDataReceived(fd int, data []byte) {
	buf := append(p.partial[fd], data...)
	parts := bytes.Split(buf, []byte("\n"))
	complete := parts[:len(parts)-1]
	p.partial[fd] = parts[len(parts)-1]
	for _, line := range complete {
		if bytes.HasPrefix(line, []byte("bad")) {
			panic(newValueError(string(line)))
		}
		p.lines[fd] = append(p.lines[fd], string(line))
	}
}

func (p *tailProto) PipeConnectionLost(fd int, err error) {
	p.events = append(p.events, fmt.Sprintf("pipe %d closed", fd))
}

func (p *tailProto) ProcessExited() {
	p.events = append(p.events, "exited")
	rc, _ := p.transport.ReturnCode()
	_ = p.exited.SetResult(rc)
}

func (p *tailProto) ConnectionLost(err error) { p.events = append(p.events, "lost") }

func TestPortSubprocessProtocol(t *testing.T) {
	runPort(t, cpythonTrace("p108_subprocess_protocol"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		var reports []string
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if strings.HasPrefix(msg, "Exception in callback") {
				msg = "Exception in callback"
			}
			handle := "-"
			if ctx.Handle != nil {
				handle = "handle"
			}
			reports = append(reports, fmt.Sprintf("%s %s %s", msg, pexc(ctx.Err), handle))
		})
		p.restart()
		prc := func(tr aio.SubprocessTransport) string {
			if rc, ok := tr.ReturnCode(); ok {
				return strconv.Itoa(rc)
			}
			return "None"
		}
		newTail := func(exited *asyncio.Future[int]) func() aio.SubprocessProtocol {
			return func() aio.SubprocessProtocol {
				return &tailProto{exited: exited, lines: map[int][]string{}, partial: map[int][]byte{1: {}, 2: {}}}
			}
		}
		exited := asyncio.NewFuture[int](tk)
		script := `printf 'one\nbad line\ntwo\ntail'; echo warn >&2; exit 2`
		tr, proto, err := aio.SubprocessExec(tk, newTail(exited), "sh", []string{"-c", script}, aio.WithStdin(aio.Inherit))
		if err != nil {
			return err
		}
		tail := proto.(*tailProto)
		rc, err := exited.Await(tk)
		if err != nil {
			return err
		}
		for !slices.Contains(tail.events, "lost") {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}
		p.log("exit status %d transport says %s", rc, prc(tr))
		p.log("stdout lines %s partial %s", pstrs(tail.lines[1]), pbytes(tail.partial[1]))
		p.log("stderr lines %s", pstrs(tail.lines[2]))
		p.log("reports %s", pstrs(reports))
		var pipes []string
		for _, e := range tail.events {
			if strings.HasPrefix(e, "pipe") {
				pipes = append(pipes, e)
			}
		}
		slices.Sort(pipes)
		p.log("last event %s pipes closed %s", tail.events[len(tail.events)-1], pstrs(pipes))
		tr.Close()

		exited = asyncio.NewFuture[int](tk)
		tr, _, err = aio.SubprocessExec(tk, newTail(exited), "sleep", []string{"30"}, aio.WithStdin(aio.Inherit))
		if err != nil {
			return err
		}
		p.log("sleeper running %s", prc(tr))
		if err := tr.Kill(); err != nil {
			return err
		}
		if rc, err = exited.Await(tk); err != nil {
			return err
		}
		p.log("sleeper killed %d %s", rc, prc(tr))
		tr.Close()
		return nil
	})
}

// ---------------------------------------------------------------------------
// p109_handler_crashes.py

// ctxKeys is sorted(ctx) of an exception handler's context.
func ctxKeys(ctx asyncio.ExceptionContext) string {
	keys := []string{"message"}
	if ctx.Err != nil {
		keys = append(keys, "exception")
	}
	if ctx.Future != nil {
		keys = append(keys, "future")
	}
	if ctx.Task != nil {
		keys = append(keys, "task")
	}
	if ctx.Handle != nil {
		keys = append(keys, "handle")
	}
	if ctx.Transport != nil {
		keys = append(keys, "transport")
	}
	if ctx.Protocol != nil {
		keys = append(keys, "protocol")
	}
	slices.Sort(keys)
	return pstrs(keys)
}

func TestPortHandlerCrashes(t *testing.T) {
	runPort(t, cpythonTrace("p109_handler_crashes"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		handlers := map[*asyncio.T]bool{}
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			p.log("report: %s %s %s", ctx.Message, pexc(ctx.Err), ctxKeys(ctx))
		})
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			handlers[t] = true
			defer delete(handlers, t)
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				cmd := strings.TrimSpace(string(line))
				switch {
				case cmd == "div0":
					return &pyExc{"ZeroDivisionError", "division by zero"}
				case strings.HasPrefix(cmd, "late"):
					if err := asyncio.Sleep(t, 200*ms); err != nil {
						return err
					}
					return &runtimeError{pyExc{"RuntimeError", "crashed late"}}
				case cmd == "wait":
					if err := asyncio.Sleep(t, 10*time.Second); err != nil {
						return err
					}
				}
				w.Write([]byte("ok " + cmd + "\n"))
				if err := w.Drain(t); err != nil {
					return err
				}
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		client := func(name string, lines []string, pause time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return noValue, err
				}
				for _, line := range lines {
					w.Write([]byte(line + "\n"))
				}
				var got []string
				if pause > 0 {
					if err := asyncio.Sleep(t, pause); err != nil {
						return noValue, err
					}
					w.Close()
					if err := w.WaitClosed(t); err != nil {
						return noValue, err
					}
					p.log("%s left early", name)
					return noValue, nil
				}
				eof := false
				for range lines {
					line, err := r.ReadLine(t)
					if err != nil {
						return noValue, err
					}
					if len(line) == 0 {
						p.log("%s read %s then EOF", name, pstrs(got))
						eof = true
						break
					}
					got = append(got, strings.TrimSpace(string(line)))
				}
				if !eof {
					p.log("%s read %s", name, pstrs(got))
				}
				w.Close()
				return noValue, w.WaitClosed(t)
			}
		}
		p.restart()
		if _, err := client("a", []string{"one", "two", "div0", "three"}, 0)(tk); err != nil {
			return err
		}
		if _, err := asyncio.GatherFuncs(tk, client("b", []string{"late"}, 100*ms), client("c", []string{"x", "y"}, 0)).Await(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("handlers left %d", len(handlers))

		waiting := asyncio.CreateTask(tk, client("d", []string{"first", "wait"}, 0))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		for h := range handlers {
			h.Cancel()
		}
		if _, err := waiting.Await(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("handlers left %d", len(handlers))
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p110_executor_queue.py

// serialExecutor is ThreadPoolExecutor(max_workers=1): one goroutine runs
// the jobs in the order they were submitted.
type serialExecutor struct {
	mu       sync.Mutex
	jobs     chan func()
	shutdown bool
	done     chan struct{}
}

func newSerialExecutor() *serialExecutor {
	ex := &serialExecutor{jobs: make(chan func(), 16), done: make(chan struct{})}
	go func() {
		defer close(ex.done)
		for job := range ex.jobs {
			job()
		}
	}()
	return ex
}

func (ex *serialExecutor) Submit(fn func()) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.shutdown {
		return &runtimeError{pyExc{"RuntimeError", "cannot schedule new futures after shutdown"}}
	}
	ex.jobs <- fn
	return nil
}

// Shutdown is shutdown(wait=True).
func (ex *serialExecutor) Shutdown() {
	ex.mu.Lock()
	if !ex.shutdown {
		ex.shutdown = true
		close(ex.jobs)
	}
	ex.mu.Unlock()
	<-ex.done
}

func TestPortExecutorQueue(t *testing.T) {
	runPort(t, cpythonTrace("p110_executor_queue"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		ex := newSerialExecutor()
		defer ex.Shutdown()
		var mu sync.Mutex
		var ran []string
		gates := map[string]chan struct{}{}
		started := map[string]*asyncio.Event{}
		for _, n := range []string{"a", "b", "c", "d"} {
			gates[n] = make(chan struct{})
			started[n] = asyncio.NewEvent()
		}
		job := func(name string) func(context.Context) (string, error) {
			return func(context.Context) (string, error) {
				if _, err := loop.CallSoonThreadsafe(func() {
					p.log("thread starts %s", name)
					started[name].Set()
				}); err != nil {
					return "", err
				}
				<-gates[name]
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				return strings.ToUpper(name), nil
			}
		}
		ranNow := func() string {
			mu.Lock()
			defer mu.Unlock()
			return pstrs(ran)
		}
		fa := asyncio.RunInExecutorOn(tk, ex, job("a"))
		fb := asyncio.RunInExecutorOn(tk, ex, job("b"))
		fc := asyncio.RunInExecutorOn(tk, ex, job("c"))
		if err := started["a"].Wait(tk); err != nil {
			return err
		}
		fc.Cancel()
		fa.Cancel()
		p.log("cancelled a (running) and c (queued): %s %s", pb(fa.Cancelled()), pb(fc.Cancelled()))
		close(gates["a"])
		if err := started["b"].Wait(tk); err != nil {
			return err
		}
		p.log("b started, ran so far %s", ranNow())
		close(gates["b"])
		v, err := fb.Await(tk)
		if err != nil {
			return err
		}
		p.log("b result %s", v)
		if _, err := fa.Await(tk); asyncio.IsCancelled(err) {
			p.log("a awaited: %s", pd(err))
		}
		ex.Shutdown()
		p.log("executor shut down, ran %s c started %s", ranNow(), pb(started["c"].IsSet()))
		fd := asyncio.RunInExecutorOn(tk, ex, job("d"))
		if _, err := fd.Await(tk); err != nil {
			var re *runtimeError
			if !errors.As(err, &re) {
				return err
			}
			p.log("after shutdown: %s", pd(err))
		}
		return nil
	})
}
