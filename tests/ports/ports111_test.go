//go:build unix

package ports_test

// Ports p111 onward (h32): a supervisor restarting workers with backoff,
// a circuit breaker, request coalescing, Queue.shutdown in both modes,
// nested TaskGroups under the eager factory, a request multiplexer over
// one connection, a stream heartbeat, a chat server that kicks, a
// STARTTLS service, a Unix control socket, loop.sock_* code, a foreign
// event source on add_reader, a sendfile asset server and pipes as
// streams. Same conventions as ports_test.go, ports50_test.go (network,
// on the simulated network) and ports97_test.go; p120 to p124 use real
// sockets, files and pipes, as their Python programs do.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p111_supervisor_backoff.py

type crashError struct{ pyExc }

func newCrash(m string) error { return &crashError{pyExc{"Crash", m}} }

func TestPortSupervisorBackoff(t *testing.T) {
	runPort(t, cpythonTrace("p111_supervisor_backoff"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		plans := map[string][]time.Duration{
			"alpha": {100 * ms, 80 * ms},
			"beta":  {190 * ms},
			"gamma": {0, 0, 0, 0, 0},
		}
		const base, maxRestarts = 130 * ms, 3
		worker := func(name string, attempt int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				plan := plans[name]
				if attempt < len(plan) {
					if plan[attempt] == 0 {
						return "", newCrash(fmt.Sprintf("%s#%d at start", name, attempt))
					}
					if err := asyncio.Sleep(t, plan[attempt]); err != nil {
						return "", err
					}
					return "", newCrash(fmt.Sprintf("%s#%d", name, attempt))
				}
				if name == "beta" {
					if err := asyncio.Sleep(t, 150*ms); err != nil {
						return "", err
					}
					return name + " done", nil
				}
				defer p.log("%s attempt %d stopping", name, attempt)
				return "", asyncio.Sleep(t, 10*time.Second)
			}
		}
		tasks := map[string]*asyncio.Task[string]{}
		timers := map[string]*asyncio.TimerHandle{}
		var history []string
		gaveUp := asyncio.NewEvent()
		var start func(name string, attempt int)
		onDone := func(name string, attempt int, task *asyncio.Task[string]) {
			if tasks[name] == task {
				delete(tasks, name)
			}
			if task.Cancelled() {
				history = append(history, name+":stopped")
				return
			}
			exc := task.Err()
			if exc == nil {
				v, _ := task.Result()
				p.log("%s finished '%s'", task.Name(), v)
				history = append(history, name+":ok")
				return
			}
			history = append(history, name+":"+pd(exc))
			if attempt >= maxRestarts {
				p.log("%s crashed %s - giving up", task.Name(), pd(exc))
				gaveUp.Set()
				return
			}
			delay := base << attempt
			timers[name] = loop.CallLater(delay, func() { start(name, attempt+1) })
			p.log("%s crashed %s - restart in %.2f", task.Name(), pd(exc), delay.Seconds())
		}
		start = func(name string, attempt int) {
			delete(timers, name)
			task := asyncio.CreateTask(tk.Loop(), worker(name, attempt), asyncio.WithName(fmt.Sprintf("%s-%d", name, attempt)))
			tasks[name] = task
			task.AddDoneCallback(func() { onDone(name, attempt, task) })
			p.log("started %s", task.Name())
		}
		liveNames := func() string {
			var ns []string
			for _, t := range tasks {
				ns = append(ns, t.Name())
			}
			sort.Strings(ns)
			return pstrs(ns)
		}
		stop := func() error {
			names := make([]string, 0, len(timers))
			for n := range timers {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				timers[n].Cancel()
				p.log("cancelled restart of %s", n)
			}
			names = names[:0]
			for n := range tasks {
				names = append(names, n)
			}
			sort.Strings(names)
			var ts []*asyncio.Task[string]
			var tnames, res []string
			for _, n := range names {
				ts = append(ts, tasks[n])
				tnames = append(tnames, tasks[n].Name())
				tasks[n].Cancel()
			}
			outs, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(ts)...).Await(tk)
			if err != nil {
				return err
			}
			for _, o := range outs {
				if o.Err != nil {
					res = append(res, pd(o.Err))
				} else {
					res = append(res, "'"+o.Value+"'")
				}
			}
			p.log("stopped %s %s", pstrs(tnames), pstrs(res))
			return nil
		}

		p.restart()
		for _, name := range []string{"alpha", "beta", "gamma"} {
			start(name, 0)
		}
		p.log("live %s", liveNames())
		if err := gaveUp.Wait(tk); err != nil {
			return err
		}
		p.log("gamma gave up; live %s", liveNames())
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return err
		}
		plans["alpha"] = append(plans["alpha"], 100*ms, 100*ms, 100*ms)
		tasks["alpha"].Cancel()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		start("alpha", 2)
		if err := asyncio.Sleep(tk, 150*ms); err != nil {
			return err
		}
		if err := stop(); err != nil {
			return err
		}
		p.log("history %s", pstrs(history))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p112_circuit_breaker.py

type circuitOpen struct{ pyExc }
type backendError struct{ pyExc }

type breaker struct {
	p                   *probe
	loop                *asyncio.Loop
	threshold, failures int
	resetAfter, timeout time.Duration
	state               string
	openedAt            time.Duration
	verdict             *asyncio.Event
}

func (b *breaker) open() {
	b.state = "open"
	b.openedAt = b.loop.Time()
	b.p.log("breaker opens")
}

func (b *breaker) call(t *asyncio.T, who string, fn func(*asyncio.T) (string, error)) (string, error) {
	switch b.state {
	case "open":
		if b.loop.Time()-b.openedAt < b.resetAfter {
			return "", &circuitOpen{pyExc{"CircuitOpen", who}}
		}
		b.state = "half-open"
		b.verdict = asyncio.NewEvent()
		b.p.log("%s probes", who)
		return b.run(t, fn, true)
	case "half-open":
		b.p.log("%s waits for the probe", who)
		if err := b.verdict.Wait(t); err != nil {
			return "", err
		}
		return b.call(t, who, fn)
	}
	return b.run(t, fn, false)
}

func (b *breaker) run(t *asyncio.T, fn func(*asyncio.T) (string, error), probe bool) (string, error) {
	if probe {
		defer b.verdict.Set()
	}
	var result string
	err := asyncio.Timeout(t, b.timeout, func(*asyncio.TimeoutScope) error {
		var err error
		result, err = fn(t)
		return err
	})
	var be *backendError
	if errors.As(err, &be) || errors.Is(err, asyncio.ErrTimeout) {
		b.failures++
		if probe || b.failures >= b.threshold {
			b.open()
		}
		return "", err
	}
	if err != nil {
		return "", err
	}
	b.failures = 0
	if probe {
		b.state = "closed"
		b.p.log("breaker closes")
	}
	return result, nil
}

func TestPortCircuitBreaker(t *testing.T) {
	runPort(t, cpythonTrace("p112_circuit_breaker"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		br := &breaker{p: p, loop: tk.Loop(), threshold: 2, resetAfter: 300 * ms, timeout: 100 * ms, state: "closed"}
		backend := func(delay time.Duration, fail bool, value string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				if fail {
					return "", &backendError{pyExc{"BackendError", value}}
				}
				return value, nil
			}
		}
		attempt := func(who string, fn func(*asyncio.T) (string, error)) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				r, err := br.call(t, who, fn)
				switch {
				case asyncio.IsCancelled(err):
					p.log("%s cancelled", who)
					return err
				case err != nil:
					p.log("%s -> %s state %s", who, pd(err), br.state)
				default:
					p.log("%s -> %s", who, r)
				}
				return nil
			}
		}
		for _, c := range []struct {
			who string
			fn  func(*asyncio.T) (string, error)
		}{
			{"c1", backend(10*ms, false, "a")},
			{"c2", backend(10*ms, true, "boom")},
			{"c3", backend(500*ms, false, "ok")},
			{"c4", backend(10*ms, false, "ok")},
		} {
			if err := attempt(c.who, c.fn)(tk); err != nil {
				return err
			}
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		if err := attempt("c5", backend(10*ms, false, "ok"))(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 140*ms); err != nil {
			return err
		}
		p.restart()
		probe := asyncio.CreateTaskErr(tk, attempt("p1", backend(60*ms, true, "still down")))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		w1 := asyncio.CreateTaskErr(tk, attempt("w1", backend(10*ms, false, "ok")))
		w2 := asyncio.CreateTaskErr(tk, attempt("w2", backend(10*ms, false, "ok")))
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return err
		}
		w2.Cancel()
		if _, err := asyncio.GatherOutcomes(tk, probe, w1, w2).Await(tk); err != nil {
			return err
		}
		p.log("after failed probe %s w2 cancelled %s", br.state, pb(w2.Cancelled()))
		if err := asyncio.Sleep(tk, 310*ms); err != nil {
			return err
		}
		p.restart()
		probe = asyncio.CreateTaskErr(tk, attempt("p2", backend(70*ms, false, "back")))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		ts := []*asyncio.Task[struct{}]{probe}
		for _, i := range []int{3, 4} {
			ts = append(ts, asyncio.CreateTaskErr(tk, attempt(fmt.Sprintf("w%d", i), backend(time.Duration(i)*10*ms, false, fmt.Sprintf("r%d", i)))))
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(ts)...).Await(tk); err != nil {
			return err
		}
		p.log("final %s failures %d", br.state, br.failures)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p113_singleflight.py

type loadError struct{ pyExc }

type flightGroup struct {
	p       *probe
	flights map[string]*asyncio.Task[string]
	waiters map[*asyncio.Task[string]]int
}

type flightResult struct {
	value  string
	shared bool
}

func (g *flightGroup) do(t *asyncio.T, key string, fn func(string) func(*asyncio.T) (string, error)) (flightResult, error) {
	task, shared := g.flights[key], true
	if task == nil {
		task = asyncio.CreateTask(t, fn(key), asyncio.WithName("load-"+key))
		g.flights[key] = task
		g.waiters[task] = 0
		task.AddDoneCallback(func() { g.forget(key, task) })
		shared = false
	}
	g.waiters[task]++
	defer func() {
		g.waiters[task]--
		if g.waiters[task] == 0 {
			delete(g.waiters, task)
		}
		if _, ok := g.waiters[task]; !ok && !task.Done() {
			g.p.log("last waiter of %s gone: cancelling the load", key)
			task.Cancel()
		}
	}()
	v, err := asyncio.Shield[string](task).Await(t)
	if err != nil {
		return flightResult{}, err
	}
	return flightResult{v, shared}, nil
}

func (g *flightGroup) forget(key string, task *asyncio.Task[string]) {
	if g.flights[key] == task {
		delete(g.flights, key)
	}
	state := "done"
	if task.Cancelled() {
		state = "cancelled"
	}
	g.p.log("forgot %s %s", key, state)
}

func TestPortSingleflight(t *testing.T) {
	runPort(t, cpythonTrace("p113_singleflight"), func(p *probe, tk *asyncio.T) error {
		var loads []string
		fetch := func(key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				loads = append(loads, key)
				d := 200 * ms
				if key == "slow" {
					d = time.Second
				}
				if err := asyncio.Sleep(t, d); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("load %s cancelled", key)
					}
					return "", err
				}
				if strings.HasPrefix(key, "bad") {
					return "", &loadError{pyExc{"LoadError", key}}
				}
				return strings.ToUpper(key), nil
			}
		}
		p.restart()
		g := &flightGroup{p: p, flights: map[string]*asyncio.Task[string]{}, waiters: map[*asyncio.Task[string]]int{}}
		var errs []error
		caller := func(name, key string, delay, timeout time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				r, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (flightResult, error) { return g.do(t, key, fetch) })
				var le *loadError
				switch {
				case err == nil:
					p.log("%s got %s shared %s", name, r.value, pb(r.shared))
				case errors.As(err, &le) || errors.Is(err, asyncio.ErrTimeout):
					errs = append(errs, err)
					p.log("%s failed %s", name, pd(err))
				case asyncio.IsCancelled(err):
					p.log("%s cancelled", name)
				default:
					return err
				}
				return nil
			}
		}
		never := asyncio.Never
		callers := []*asyncio.Task[struct{}]{
			asyncio.CreateTaskErr(tk, caller("a1", "a", 0, never)),
			asyncio.CreateTaskErr(tk, caller("a2", "a", 50*ms, never)),
			asyncio.CreateTaskErr(tk, caller("a3", "a", 60*ms, 50*ms)),
			asyncio.CreateTaskErr(tk, caller("b1", "bad", 0, never)),
			asyncio.CreateTaskErr(tk, caller("b2", "bad", 100*ms, never)),
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(callers)...).Await(tk); err != nil {
			return err
		}
		p.log("same error object %s loads %s", pb(errs[len(errs)-2] == errs[len(errs)-1]), pstrs(loads))

		s1 := asyncio.CreateTaskErr(tk, caller("s1", "slow", 0, never))
		s2 := asyncio.CreateTaskErr(tk, caller("s2", "slow", 100*ms, never))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		s1.Cancel()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		_, inFlight := g.flights["slow"]
		p.log("slow still in flight %s", pb(inFlight))
		s2.Cancel()
		if _, err := asyncio.Gather(tk, s1, s2).Await(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		_, inFlight = g.flights["slow"]
		p.log("slow in flight after last waiter %s", pb(inFlight))
		if err := caller("s3", "slow", 0, 100*ms)(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("loads %s", pstrs(loads))

		c1 := asyncio.CreateTaskErr(tk, caller("c1", "c", 0, never))
		if err := asyncio.Sleep(tk, 190*ms); err != nil {
			return err
		}
		if ct, ok := g.flights["c"]; ok {
			p.log("c in flight True done %s", pb(ct.Done()))
		} else {
			p.log("c in flight False done None")
		}
		if err := caller("c2", "c", 0, never)(tk); err != nil {
			return err
		}
		if _, err := c1.Await(tk); err != nil {
			return err
		}
		p.log("loads %s", pstrs(loads))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p114_queue_shutdown_modes.py

func TestPortQueueShutdownModes(t *testing.T) {
	runPort(t, cpythonTrace("p114_queue_shutdown_modes"), func(p *probe, tk *asyncio.T) error {
		consumer := func(name string, q *asyncio.Queue[int], out *[]string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				for {
					item, err := q.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("%s sees shutdown, qsize %d", name, q.Len())
						return name, nil
					}
					if err != nil {
						return "", err
					}
					err = asyncio.Sleep(t, delay)
					if err == nil {
						*out = append(*out, fmt.Sprintf("%s:%d", name, item))
					}
					if tdErr := q.TaskDone(); tdErr != nil {
						return "", tdErr
					}
					if err != nil {
						return "", err
					}
				}
			}
		}
		producer := func(q *asyncio.Queue[int], n int, gap time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				sent := 0
				for item := range n {
					err := q.Put(t, item)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("producer stopped by shutdown after %d", sent)
						break
					}
					if err != nil {
						return sent, err
					}
					sent++
					if err := asyncio.Sleep(t, gap); err != nil {
						return sent, err
					}
				}
				return sent, nil
			}
		}

		// graceful()
		p.restart()
		q := asyncio.NewQueue[int](2)
		var out []string
		var cons []*asyncio.Task[string]
		for i := range 2 {
			cons = append(cons, asyncio.CreateTask(tk, consumer(fmt.Sprintf("c%d", i), q, &out, 100*ms)))
		}
		sent, err := producer(q, 6, 10*ms)(tk)
		if err != nil {
			return err
		}
		p.log("produced %d qsize %d shutting down", sent, q.Len())
		q.Shutdown(false)
		if err := q.PutNowait(99); errors.Is(err, asyncio.ErrQueueShutDown) {
			p.log("put_nowait after shutdown: QueueShutDown")
		}
		if err := q.Join(tk); err != nil {
			return err
		}
		p.log("join returned, processed %d", len(out))
		names, err := asyncio.Gather(tk, asyncio.Awaitables(cons)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("consumers %s", pstrs(names))
		if _, err := q.GetNowait(); errors.Is(err, asyncio.ErrQueueShutDown) {
			p.log("get_nowait on empty shut queue: QueueShutDown")
		}
		p.log("out %s", pstrs(out))

		// abort()
		p.restart()
		q = asyncio.NewQueue[int](3)
		out = nil
		prod := asyncio.CreateTask(tk, producer(q, 20, 0))
		slow := asyncio.CreateTask(tk, consumer("slow", q, &out, 200*ms))
		idle := asyncio.NewQueue[int](0)
		var idlers []*asyncio.Task[string]
		for i := range 2 {
			idlers = append(idlers, asyncio.CreateTask(tk, consumer(fmt.Sprintf("idle%d", i), idle, &out, 0)))
		}
		joiner := asyncio.CreateTaskErr(tk, q.Join)
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("before abort qsize %d full %s out %s", q.Len(), pb(q.Full()), pstrs(out))
		q.Shutdown(true)
		idle.Shutdown(true)
		p.log("after abort qsize %d empty %s", q.Len(), pb(q.Empty()))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("joiner done %s", pb(joiner.Done()))
		if sent, err = prod.Await(tk); err != nil {
			return err
		}
		p.log("producer sent %d", sent)
		sname, err := slow.Await(tk)
		if err != nil {
			return err
		}
		inames, err := asyncio.Gather(tk, asyncio.Awaitables(idlers)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("slow consumer %s idlers %s", sname, pstrs(inames))
		var ve *asyncio.ValueError
		if err := q.TaskDone(); errors.As(err, &ve) {
			p.log("extra task_done: ValueError(%s)", ve.Msg)
		}
		if _, err := joiner.Await(tk); err != nil {
			return err
		}
		p.log("out %s", pstrs(out))

		// other_kinds()
		p.restart()
		for _, k := range []struct {
			name string
			q    *asyncio.Queue[int]
		}{
			{"LifoQueue", asyncio.NewLifoQueue[int](0)},
			{"PriorityQueue", asyncio.NewPriorityQueue(0, func(a, b int) bool { return a < b })},
		} {
			q := k.q
			for _, x := range []int{3, 1, 2} {
				if err := q.PutNowait(x); err != nil {
					return err
				}
			}
			q.Shutdown(false)
			var got []int
			for {
				v, err := q.GetNowait()
				if errors.Is(err, asyncio.ErrQueueShutDown) {
					break
				}
				if err != nil {
					return err
				}
				got = append(got, v)
			}
			p.log("%s drained %s", k.name, pyInts(got))
			if err := q.Put(tk, 4); errors.Is(err, asyncio.ErrQueueShutDown) {
				p.log("%s put after shutdown: QueueShutDown", k.name)
			}
			q.Shutdown(true)
			for range got {
				if err := q.TaskDone(); err != nil {
					return err
				}
			}
			if err := q.Join(tk); err != nil {
				return err
			}
			p.log("%s joined", k.name)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p115_nested_groups_eager.py

type badPage struct{ pyExc }

type pageSpec struct {
	path  string
	delay time.Duration
}

type sectionSpec struct {
	name     string
	pages    []pageSpec
	tolerant bool
}

// The program sets eager_task_factory first thing in main; the port's
// loop is made WithEagerTasks (see TestPortEagerFactoryMix).
//
// CPython 3.13.0's TaskGroup.create_task handles a child that finished in
// its eager step right there (gh-104144); Go always goes through the
// child's done callback, as CPython's fix for gh-128550 does (README,
// "Where Go differs": a TaskGroup child that fails in its eager step;
// docs/rules.md TG-5, TASK-10). So section b, whose only page was cached,
// still has its group's done callback to run when Spawn returns (not
// done), and a page failing in its eager step aborts its group one
// iteration later: until the section's body awaits, the next Spawn is
// accepted (its task is then cancelled by the abort) instead of refused.
// Only those lines differ; the groups' outcomes are the same.
var wantNestedGroupsEagerGo = goism(cpythonTrace("p115_nested_groups_eager"),
	[2]string{"0.0 outer created ['a', 'b'] done [False, True]", "0.0 outer created ['a', 'b'] done [False, False]"},
	[2]string{"0.0 d create_task refused: RuntimeError(TaskGroup <TaskGroup tasks=1 errors=1 cancelling> is shutting down)", "0.0 d created /d/3 done False"},
	[2]string{"0.0 d body ends with 2 tasks", "0.0 d body ends with 3 tasks"},
	[2]string{"0.0 pages done [] cancelled ['/c/1', '/c/2', '/d/1', '/e/1']", "0.0 pages done [] cancelled ['/c/1', '/c/2', '/d/1', '/d/3', '/e/1']"},
	[2]string{"0.0 f create_task refused: RuntimeError(TaskGroup <TaskGroup tasks=1 errors=1 cancelling> is shutting down)", "0.0 f created /f/3 done False"},
	[2]string{"0.0 f body ends with 2 tasks", "0.0 f body ends with 3 tasks"},
	[2]string{"0.2 pages done ['/g/1', '/g/2'] cancelled ['/f/1']", "0.2 pages done ['/g/1', '/g/2'] cancelled ['/f/1', '/f/3']"},
)

func TestPortNestedGroupsEager(t *testing.T) {
	runPortOn(t, wantNestedGroupsEagerGo, []asyncio.LoopOption{asyncio.WithEagerTasks()}, func(p *probe, tk *asyncio.T) error {
		cache := map[string]string{"/a/1": "A1", "/b/1": "B1"}
		var donePages, cancelledFetches []string
		fetch := func(path string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if v, ok := cache[path]; ok {
					donePages = append(donePages, path)
					return v, nil
				}
				if strings.HasSuffix(path, "!") {
					return "", &badPage{pyExc{"BadPage", path}}
				}
				if err := asyncio.Sleep(t, delay); err != nil {
					if asyncio.IsCancelled(err) {
						cancelledFetches = append(cancelledFetches, path)
					}
					return "", err
				}
				donePages = append(donePages, path)
				return strings.ToUpper(path), nil
			}
		}
		section := func(s sectionSpec) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				results := "{}"
				var tasks []*asyncio.Task[string]
				err := asyncio.TaskGroup(t, func(tg *asyncio.Group) error {
					for i, pg := range s.pages {
						tsk, err := asyncio.Spawn(tg, fetch(pg.path, pg.delay), asyncio.WithName(fmt.Sprintf("%s-%d", s.name, i)))
						var re *asyncio.RuntimeError
						if errors.As(err, &re) {
							p.log("%s create_task refused: %s", s.name, pd(err))
							break
						} else if err != nil {
							return err
						}
						tasks = append(tasks, tsk)
						p.log("%s created %s done %s", s.name, pg.path, pb(tsk.Done()))
					}
					p.log("%s body ends with %d tasks", s.name, len(tasks))
					return nil
				})
				if err == nil {
					var parts []string
					for _, tsk := range tasks {
						v, _ := tsk.Result()
						parts = append(parts, fmt.Sprintf("'%s': '%s'", tsk.Name(), v))
					}
					results = "{" + strings.Join(parts, ", ") + "}"
				}
				err = asyncio.ExceptStar(err, asyncio.Except[*badPage](func(eg *asyncio.ExceptionGroup) error {
					if !s.tolerant {
						return eg
					}
					p.log("%s tolerates %s", s.name, pd(eg))
					return nil
				}))
				return results, err
			}
		}
		crawl := func(sections []sectionSpec) error {
			p.restart()
			donePages, cancelledFetches = nil, nil
			var ts []*asyncio.Task[string]
			err := asyncio.TaskGroup(tk, func(outer *asyncio.Group) error {
				var names []string
				var dones []bool
				for _, s := range sections {
					tsk, err := asyncio.Spawn(outer, section(s), asyncio.WithName(s.name))
					if err != nil {
						return err
					}
					ts = append(ts, tsk)
				}
				for _, tsk := range ts {
					names = append(names, tsk.Name())
					dones = append(dones, tsk.Done())
				}
				p.log("outer created %s done %s", pstrs(names), pbools(dones...))
				return nil
			})
			if err == nil {
				var rs []string
				for _, tsk := range ts {
					v, _ := tsk.Result()
					rs = append(rs, v)
				}
				p.log("crawl ok [%s]", strings.Join(rs, ", "))
			}
			err = asyncio.ExceptStar(err, asyncio.Except[*badPage](func(eg *asyncio.ExceptionGroup) error {
				var cancelled []string
				for _, tsk := range ts {
					if tsk.Cancelled() {
						cancelled = append(cancelled, tsk.Name())
					}
				}
				p.log("crawl failed %s cancelled sections %s", pd(eg), pstrs(cancelled))
				return nil
			}))
			if err != nil {
				return err
			}
			sort.Strings(donePages)
			sort.Strings(cancelledFetches)
			p.log("pages done %s cancelled %s", pstrs(donePages), pstrs(cancelledFetches))
			return nil
		}
		if err := crawl([]sectionSpec{
			{"a", []pageSpec{{"/a/1", 0}, {"/a/2", 100 * ms}}, false},
			{"b", []pageSpec{{"/b/1", 0}}, false},
		}); err != nil {
			return err
		}
		if err := crawl([]sectionSpec{
			{"c", []pageSpec{{"/c/1", 100 * ms}, {"/c/2", 200 * ms}}, false},
			{"d", []pageSpec{{"/d/1", 100 * ms}, {"/d/2!", 0}, {"/d/3", 100 * ms}}, false},
			{"e", []pageSpec{{"/e/1", 300 * ms}}, false},
		}); err != nil {
			return err
		}
		return crawl([]sectionSpec{
			{"f", []pageSpec{{"/f/1", 100 * ms}, {"/f/2!", 0}, {"/f/3", 100 * ms}}, true},
			{"g", []pageSpec{{"/g/1", 150 * ms}, {"/g/2", 200 * ms}}, false},
		})
	})
}

// ---------------------------------------------------------------------------
// p116_request_mux.py

type mux struct {
	p       *probe
	r       *aio.StreamReader
	w       *aio.StreamWriter
	nextID  int
	pending map[int]*asyncio.Future[string]
	closed  error
	router  *asyncio.Task[struct{}]
}

func (m *mux) route(t *asyncio.T) error {
	for {
		line, err := m.r.ReadLine(t)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			break
		}
		rid, reply, _ := strings.Cut(string(line), " ")
		id, err := strconv.Atoi(rid)
		if err != nil {
			return err
		}
		fut, ok := m.pending[id]
		delete(m.pending, id)
		if !ok {
			m.p.log("mux drops reply for %s %s", rid, strings.TrimSpace(reply))
		} else if err := fut.SetResult(strings.TrimSpace(reply)); err != nil {
			return err
		}
	}
	m.closed = &connectionError{pyExc{"ConnectionError", "connection lost"}}
	m.p.log("mux: EOF with %d pending", len(m.pending))
	ids := slices.Sorted(maps.Keys(m.pending))
	for _, id := range ids {
		fut := m.pending[id]
		delete(m.pending, id)
		if err := fut.SetException(m.closed); err != nil {
			return err
		}
	}
	return nil
}

func (m *mux) request(t *asyncio.T, op, arg string) (string, error) {
	if m.closed != nil {
		return "", m.closed
	}
	rid := m.nextID
	m.nextID++
	fut := asyncio.NewFuture[string](t)
	m.pending[rid] = fut
	if err := m.w.Write(fmt.Appendf(nil, "%d %s %s\n", rid, op, arg)); err != nil {
		return "", err
	}
	defer delete(m.pending, rid)
	return fut.Await(t)
}

func TestPortRequestMux(t *testing.T) {
	runPort(t, cpythonTrace("p116_request_mux"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			answer := func(rid, op, arg string) func(*asyncio.T) error {
				return func(t *asyncio.T) error {
					secs, err := strconv.ParseFloat(arg, 64)
					if err != nil {
						return err
					}
					if err := asyncio.Sleep(t, time.Duration(secs*float64(time.Second))); err != nil {
						return err
					}
					return w.Write(fmt.Appendf(nil, "%s %s:%s\n", rid, strings.ToUpper(op), arg))
				}
			}
			pending := map[*asyncio.Task[struct{}]]bool{}
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				f := strings.Fields(string(line))
				rid, op, arg := f[0], f[1], f[2]
				if op == "die" {
					p.log("server drops the connection")
					w.Transport().Abort()
					break
				}
				if op == "bogus" {
					if err := w.Write([]byte("999 ???\n")); err != nil {
						return err
					}
					continue
				}
				task := asyncio.CreateTaskErr(t, answer(rid, op, arg))
				pending[task] = true
				task.AddDoneCallback(func() { delete(pending, task) })
			}
			for task := range pending {
				task.Cancel()
			}
			return nil
		}
		p.restart()
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(server), sim)
		if err != nil {
			return err
		}
		m := &mux{p: p, r: reader, w: writer, nextID: 1, pending: map[int]*asyncio.Future[string]{}}
		m.router = asyncio.CreateTaskErr(tk, m.route)

		call := func(op, arg string, timeout time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (string, error) { return m.request(t, op, arg) })
				var ce *connectionError
				switch {
				case err == nil:
					p.log("%s %s -> %s", op, arg, r)
					return r, nil
				case errors.As(err, &ce) || errors.Is(err, asyncio.ErrTimeout):
					p.log("%s %s failed %s", op, arg, pd(err))
					return pd(err), nil
				}
				return "", err
			}
		}
		res, err := asyncio.GatherFuncs(tk, call("a", "0.3", asyncio.Never), call("b", "0.1", asyncio.Never),
			call("c", "0.2", asyncio.Never), call("slow", "0.5", 260*ms)).Await(tk)
		if err != nil {
			return err
		}
		p.log("gathered %s pending %d", pstrs(res), len(m.pending))
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		if err := writer.Write([]byte("0 bogus 0\n")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 40*ms); err != nil {
			return err
		}
		var calls []*asyncio.Task[string]
		for _, op := range []string{"x", "y"} {
			calls = append(calls, asyncio.CreateTask(tk, call(op, "0.4", asyncio.Never)))
		}
		if err := asyncio.Sleep(tk, 70*ms); err != nil {
			return err
		}
		if err := writer.Write([]byte("0 die 0\n")); err != nil {
			return err
		}
		results, err := asyncio.Gather(tk, asyncio.Awaitables(calls)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("results %s", pstrs(results))
		if _, err := m.router.Await(tk); err != nil {
			return err
		}
		late, err := call("z", "0.1", asyncio.Never)(tk)
		if err != nil {
			return err
		}
		p.log("late request: %s", late)
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p117_heartbeat.py

func TestPortHeartbeat(t *testing.T) {
	runPort(t, cpythonTrace("p117_heartbeat"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		loop := tk.Loop()
		serve := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			strikes := 0
			for {
				line, err := asyncio.WaitForFunc(t, 260*ms, r.ReadLine)
				if errors.Is(err, asyncio.ErrTimeout) {
					strikes++
					p.log("server: %s timeout, strike %d", name, strikes)
					if strikes < 2 && name == "split" {
						continue
					}
					if err := w.Write([]byte("BYE idle\n")); err != nil {
						return err
					}
					break
				}
				if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("server: %s EOF", name)
					break
				}
				strikes = 0
				f := strings.Fields(string(line))
				if err := w.Write(fmt.Appendf(nil, "PONG %s\n", f[1])); err != nil {
					return err
				}
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: %s closed", name)
			return nil
		}
		pinger := func(port, pings int, pause time.Duration) error {
			r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
			if err != nil {
				return err
			}
			if err := w.Write([]byte("pinger\n")); err != nil {
				return err
			}
			var got []string
			sender := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
				for n := range pings {
					if err := w.Write(fmt.Appendf(nil, "PING %d\n", n)); err != nil {
						return err
					}
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return err
					}
				}
				return asyncio.Sleep(t, pause)
			})
			err = asyncio.Timeout(tk, 500*ms, func(cm *asyncio.TimeoutScope) error {
				for {
					line, err := r.ReadLine(tk)
					if err != nil {
						return err
					}
					if len(line) == 0 {
						return nil
					}
					got = append(got, strings.TrimSpace(string(line)))
					if err := cm.Reschedule(loop.Time() + 500*ms); err != nil {
						return err
					}
				}
			})
			switch {
			case err == nil:
				pongs := 0
				for _, g := range got {
					if strings.HasPrefix(g, "PONG") {
						pongs++
					}
				}
				p.log("client: EOF after %s pongs %d", pstrs(got[len(got)-3:]), pongs)
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("client: no pong in time")
			default:
				return err
			}
			sender.Cancel()
			outs, err := asyncio.GatherOutcomes(tk, sender).Await(tk)
			if err != nil {
				return err
			}
			p.log("client: sender cancelled %s", pb(outs[0].Err != nil))
			w.Close()
			return w.WaitClosed(tk)
		}
		splitter := func(port int) error {
			r, w, err := aio.OpenConnection(tk, "127.0.0.1", port, sim)
			if err != nil {
				return err
			}
			readLog := func() error {
				line, err := r.ReadLine(tk)
				if err != nil {
					return err
				}
				p.log("split got %s", pbytes(line))
				return nil
			}
			if err := w.Write([]byte("split\nPING 1\n")); err != nil {
				return err
			}
			if err := readLog(); err != nil {
				return err
			}
			if err := w.Write([]byte("PI")); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 300*ms); err != nil {
				return err
			}
			if err := w.Write([]byte("NG 2\n")); err != nil {
				return err
			}
			if err := readLog(); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 600*ms); err != nil {
				return err
			}
			l1, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			l2, err := r.ReadLine(tk)
			if err != nil {
				return err
			}
			p.log("split got %s %s", pbytes(l1), pbytes(l2))
			w.Close()
			return w.WaitClosed(tk)
		}
		p.restart()
		server, err := aio.StartServer(tk, serve, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		if err := pinger(port, 3, 500*ms); err != nil {
			return err
		}
		p.restart()
		if err := splitter(port); err != nil {
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
// p118_chat_kick.py

func TestPortChatKick(t *testing.T) {
	runPort(t, cpythonTrace("p118_chat_kick"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		clients := map[string]*aio.StreamWriter{}
		var left []string
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			name := strings.TrimSpace(string(first))
			clients[name] = w
			p.log("server: %s joined", name)
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				msg := strings.TrimSpace(string(line))
				switch {
				case strings.HasPrefix(msg, "/kick "):
					victim := strings.Fields(msg)[1]
					vw := clients[victim]
					delete(clients, victim)
					if err := vw.Write([]byte("kicked by " + name + "\n")); err != nil {
						return err
					}
					vw.Close()
					p.log("server: %s kicked, is_closing %s", victim, pb(vw.IsClosing()))
					if err := vw.Write([]byte("late line\n")); err != nil {
						p.log("server: write after kick: %s", nd(err))
					}
					if err := vw.Drain(t); err == nil {
						p.log("server: drain after kick ok")
					} else if errors.Is(err, syscall.ECONNRESET) {
						p.log("server: drain after kick: %s", nd(err))
					} else {
						return err
					}
					if err := vw.WaitClosed(t); err != nil {
						return err
					}
					p.log("server: kicked writer closed")
				case msg == "/who":
					names := slices.Sorted(maps.Keys(clients))
					if err := w.Write([]byte("who " + strings.Join(names, " ") + "\n")); err != nil {
						return err
					}
				default:
					for _, other := range slices.Sorted(maps.Keys(clients)) {
						if other != name {
							if err := clients[other].Write(fmt.Appendf(nil, "%s: %s\n", name, msg)); err != nil {
								return err
							}
						}
					}
				}
			}
			if clients[name] == w {
				delete(clients, name)
				left = append(left, name)
			} else {
				p.log("server: %s handler sees EOF after kick", name)
			}
			w.Close()
			return w.WaitClosed(t)
		}
		type step struct {
			delay time.Duration
			line  string
		}
		type result struct {
			name string
			got  []string
		}
		client := func(port int, name string, script []step) func(*asyncio.T) (result, error) {
			return func(t *asyncio.T) (result, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if err != nil {
					return result{}, err
				}
				if err := w.Write([]byte(name + "\n")); err != nil {
					return result{}, err
				}
				var got []string
				rd := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
					for {
						line, err := r.ReadLine(t)
						if err != nil {
							return err
						}
						if len(line) == 0 {
							break
						}
						got = append(got, strings.TrimSpace(string(line)))
					}
					if name == "bob" {
						p.log("%s EOF, got %s", name, pstrs(got))
					}
					return nil
				})
				for _, s := range script {
					if err := asyncio.Sleep(t, s.delay); err != nil {
						return result{}, err
					}
					if err := w.Write([]byte(s.line + "\n")); err != nil {
						return result{}, err
					}
				}
				if _, err := rd.Await(t); err != nil {
					return result{}, err
				}
				w.Close()
				if err := w.WaitClosed(t); err != nil {
					return result{}, err
				}
				return result{name, got}, nil
			}
		}
		p.restart()
		server, err := aio.StartServer(tk, handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		tasks := []*asyncio.Task[result]{
			asyncio.CreateTask(tk, client(port, "admin", []step{{100 * ms, "hello all"}, {100 * ms, "/kick bob"}, {100 * ms, "/who"}})),
			asyncio.CreateTask(tk, client(port, "bob", []step{{50 * ms, "hi admin"}})),
			asyncio.CreateTask(tk, client(port, "carol", []step{{250 * ms, "bye bob"}})),
		}
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		p.log("main closes the server, clients %s", pstrs(slices.Sorted(maps.Keys(clients))))
		server.Close()
		server.CloseClients()
		results, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		for _, r := range results {
			p.log("%s done, got %s", r.name, pstrs(r.got))
		}
		slices.Sort(left)
		p.log("handlers left %s", pstrs(left))
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed, clients {}")
		if len(clients) != 0 {
			return fmt.Errorf("clients left: %v", clients)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p119_starttls_service.py

// portTLSConfigs is the program's contexts(): a server context with a
// fresh self-signed certificate for localhost and 127.0.0.1, a client
// context trusting it, and a default client context (the system's roots,
// which do not). server_hostname="localhost" is the clients' ServerName.
func portTLSConfigs(t *testing.T) (server, client, untrusting *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return server, &tls.Config{RootCAs: pool, ServerName: "localhost"}, &tls.Config{ServerName: "localhost"}
}

func TestPortStartTLSService(t *testing.T) {
	serverCfg, clientCfg, untrustingCfg := portTLSConfigs(t)
	runPort(t, cpythonTrace("p119_starttls_service"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		events := 0
		mail := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if err := w.Write([]byte("220 ready\n")); err != nil {
				return err
			}
			tlsOn := false
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				cmd := strings.TrimSpace(string(line))
				if cmd == "STARTTLS" {
					if err := w.Write([]byte("220 go ahead\n")); err != nil {
						return err
					}
					if err := w.Drain(t); err != nil {
						return err
					}
					if err := w.StartTLS(t, serverCfg, ""); err != nil {
						return err
					}
					tlsOn = true
					p.log("server: upgraded, ssl_object %s", pb(aio.TLSConn(w) != nil))
				} else if strings.HasPrefix(cmd, "AUTH") {
					reply := "530 must issue STARTTLS first\n"
					if tlsOn {
						reply = "235 ok\n"
					}
					if err := w.Write([]byte(reply)); err != nil {
						return err
					}
				} else if cmd == "QUIT" {
					if err := w.Write([]byte("221 bye\n")); err != nil {
						return err
					}
					break
				}
			}
			p.log("server: session ends, tls %s", pb(tlsOn))
			w.Close()
			return w.WaitClosed(t)
		}
		tlsOnly := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			events++
			p.log("server: TLS client, can_write_eof %s", pb(w.CanWriteEOF()))
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				if err := w.Write(append([]byte("pong "), line...)); err != nil {
					return err
				}
			}
			p.log("server: TLS client EOF")
			w.Close()
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: TLS client closed")
			return nil
		}
		p.restart()
		mailSrv, err := aio.StartServer(tk, mail, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		tlsSrv, err := aio.StartServer(tk, tlsOnly, "127.0.0.1", 0, sim, aio.WithTLS(serverCfg))
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(mailSrv), sim)
		if err != nil {
			return err
		}
		say := func(line string) error {
			if line != "" {
				if err := writer.Write([]byte(line + "\n")); err != nil {
					return err
				}
			}
			reply, err := reader.ReadLine(tk)
			if err != nil {
				return err
			}
			if line == "" {
				line = "(connect)"
			}
			p.log("client: %s -> %s", line, pbytes(reply))
			return nil
		}
		for _, l := range []string{"", "AUTH secret", "STARTTLS"} {
			if err := say(l); err != nil {
				return err
			}
		}
		if err := writer.StartTLS(tk, clientCfg, "localhost"); err != nil {
			return err
		}
		p.restart()
		p.log("client: upgraded, ssl_object %s", pb(aio.TLSConn(writer) != nil))
		for _, l := range []string{"AUTH secret", "QUIT"} {
			if err := say(l); err != nil {
				return err
			}
		}
		rest, err := reader.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client: then %s", pbytes(rest))
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		p.log("client: mail session closed")

		port := portOf(tlsSrv)
		_, _, err = aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(untrustingCfg))
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			return fmt.Errorf("untrusting client: %v, want a certificate verification error", err)
		}
		p.log("untrusting client: certificate verify failed")
		p.restart()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("handler calls so far %d", events)
		p.restart()
		reader, writer, err = aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(clientCfg))
		if err != nil {
			return err
		}
		for _, word := range []string{"a", "b"} {
			if err := writer.Write([]byte(word + "\n")); err != nil {
				return err
			}
			line, err := reader.ReadLine(tk)
			if err != nil {
				return err
			}
			p.log("client: TLS %s", pbytes(line))
		}
		writer.Close()
		p.log("client: closing %s", pb(writer.IsClosing()))
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		p.log("client: TLS wait_closed returned")
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}

		reader, writer, err = aio.OpenConnection(tk, "127.0.0.1", port, sim, aio.WithTLS(clientCfg))
		if err != nil {
			return err
		}
		p.restart()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		tlsSrv.Close()
		tlsSrv.CloseClients()
		line, err := reader.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("client: after close_clients %s at_eof %s", pbytes(line), pb(reader.AtEOF()))
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		p.log("client: closed")
		for _, srv := range []*aio.Server{mailSrv, tlsSrv} {
			srv.Close()
			if err := srv.WaitClosed(tk); err != nil {
				return err
			}
		}
		p.log("servers closed, handler calls %d", events)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p120_unix_control_socket.py

// od is the program's od(e): the OSError subclass and its errno's name.
func od(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Sprintf("%T(%v)", err, err)
	}
	switch errno {
	case syscall.ECONNREFUSED:
		return "ConnectionRefusedError(ECONNREFUSED)"
	case syscall.ENOENT:
		return "FileNotFoundError(ENOENT)"
	case syscall.EADDRINUSE:
		return "OSError(EADDRINUSE)"
	}
	return fmt.Sprintf("OSError(%d)", int(errno))
}

func pathExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// The program runs on real Unix sockets in a temporary directory, as the
// Python program does.
func TestPortUnixControlSocket(t *testing.T) {
	tmp := t.TempDir()
	runPort(t, cpythonTrace("p120_unix_control_socket"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		path := filepath.Join(tmp, "ctl.sock")
		stale, err := net.Listen("unix", path)
		if err != nil {
			return err
		}
		stale.(*net.UnixListener).SetUnlinkOnClose(false) // a crashed run: the file stays
		if err := stale.Close(); err != nil {
			return err
		}
		p.log("stale socket file exists %s", pb(pathExists(path)))

		ctl := func(tk *asyncio.T, cmd, where string) (string, error) {
			r, w, err := aio.OpenUnixConnection(tk, where)
			if err != nil {
				return "", err
			}
			if err := w.Write([]byte(cmd)); err != nil {
				return "", err
			}
			if err := w.WriteEOF(); err != nil {
				return "", err
			}
			reply, err := r.Read(tk, -1)
			if err != nil {
				return "", err
			}
			w.Close()
			if err := w.WaitClosed(tk); err != nil {
				return "", err
			}
			return string(reply), nil
		}
		if _, err := ctl(tk, "status", path); err != nil {
			p.log("ctl before start: %s", od(err))
		}
		if _, err := ctl(tk, "status", filepath.Join(tmp, "missing.sock")); err != nil {
			p.log("ctl to a missing path: %s", od(err))
		}

		stop := asyncio.NewEvent()
		reloads, served := 0, 0
		control := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			b, err := r.Read(t, -1)
			if err != nil {
				return err
			}
			cmd := string(b)
			served++
			var reply string
			switch cmd {
			case "status":
				sn := aio.SockName(w)
				reply = fmt.Sprintf("ok reloads=%d sockname_is_path=%s", reloads, pb(sn != nil && sn.String() == path))
			case "reload":
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				reloads++
				reply = "reloaded"
			case "stop":
				reply = "stopping"
				stop.Set()
			default:
				reply = fmt.Sprintf("unknown command '%s'", cmd)
			}
			if err := w.Write([]byte(reply)); err != nil {
				return err
			}
			if err := w.Drain(t); err != nil {
				return err
			}
			w.Close()
			return w.WaitClosed(t)
		}
		server, err := aio.StartUnixServer(tk, control, path)
		if err != nil {
			return err
		}
		p.log("serving over the stale file %s %s", pb(server.IsServing()), pb(pathExists(path)))

		blocker := filepath.Join(tmp, "plain-file")
		//asynciovet:ignore blockingcall the program creates the empty file on the loop too (open(blocker, "w").close())
		if err := os.WriteFile(blocker, nil, 0o600); err != nil {
			return err
		}
		if srv, err := aio.StartUnixServer(tk, control, blocker); err != nil {
			p.log("server on a regular file: %s names the path %s", od(err), pb(strings.Contains(err.Error(), blocker)))
		} else {
			srv.Close()
			return errors.New("a server on a regular file")
		}

		status := func() error {
			s, err := ctl(tk, "status", path)
			if err != nil {
				return err
			}
			p.log("status: %s", s)
			return nil
		}
		if err := status(); err != nil {
			return err
		}
		res, err := asyncio.GatherFuncs(tk,
			func(t *asyncio.T) (string, error) { return ctl(t, "reload", path) },
			func(t *asyncio.T) (string, error) { return ctl(t, "status", path) },
			func(t *asyncio.T) (string, error) { return ctl(t, "frobnicate", path) }).Await(tk)
		if err != nil {
			return err
		}
		parts := make([]string, len(res))
		for i, s := range res {
			parts[i] = pyStrRepr(s)
		}
		p.log("concurrent: [%s]", strings.Join(parts, ", "))
		if err := status(); err != nil {
			return err
		}
		s, err := ctl(tk, "stop", path)
		if err != nil {
			return err
		}
		p.log("stop: %s", s)
		if err := stop.Wait(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("closed, served %d socket file exists %s plain file exists %s", served, pb(pathExists(path)), pb(pathExists(blocker)))
		if _, err := ctl(tk, "status", path); err != nil {
			p.log("ctl after stop: %s", od(err))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p121_sock_api_echo.py

// boundPort is a socket bound to 127.0.0.1:0 and its port.
func boundPort() (fd, port int, err error) {
	fd, err = aio.NewSocket("tcp4")
	if err != nil {
		return -1, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

// The program runs on real loopback sockets, as the Python program does.
func TestPortSockAPIEcho(t *testing.T) {
	runPort(t, cpythonTrace("p121_sock_api_echo"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		lsock, port, err := boundPort()
		if err != nil {
			return err
		}
		defer syscall.Close(lsock)
		if err := syscall.Listen(lsock, 128); err != nil {
			return err
		}
		var handlers []*asyncio.Task[struct{}]
		echo := func(conn, i int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				defer syscall.Close(conn)
				pieces := 0
				for {
					data, err := aio.SockRecv(t, conn, 4)
					if err != nil {
						return err
					}
					if len(data) == 0 {
						break
					}
					pieces++
					if err := aio.SockSendall(t, conn, bytes.ToUpper(data)); err != nil {
						return err
					}
				}
				p.log("server: conn %d EOF after %d pieces", i, pieces)
				return nil
			}
		}
		acceptor := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			i := 0
			for {
				conn, addr, err := aio.SockAccept(t, lsock)
				if asyncio.IsCancelled(err) {
					p.log("server: accept loop cancelled after %d", i)
				}
				if err != nil {
					return err
				}
				p.log("server: accepted %d from %s", i, addr.(*net.TCPAddr).IP)
				handlers = append(handlers, asyncio.CreateTaskErr(t, echo(conn, i)))
				i++
			}
		})
		addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
		connect := func() (int, error) {
			fd, err := aio.NewSocket("tcp4")
			if err != nil {
				return -1, err
			}
			if err := aio.SockConnect(tk, fd, addr); err != nil {
				syscall.Close(fd)
				return -1, err
			}
			return fd, nil
		}

		a, err := connect()
		if err != nil {
			return err
		}
		if err := aio.SockSendall(tk, a, []byte("hello, world")); err != nil {
			return err
		}
		if err := syscall.Shutdown(a, syscall.SHUT_WR); err != nil {
			return err
		}
		var got []byte
		for {
			chunk, err := aio.SockRecv(tk, a, 1024)
			if err != nil {
				return err
			}
			if len(chunk) == 0 {
				break
			}
			got = append(got, chunk...)
		}
		p.log("client a got %s", pbytes(got))
		syscall.Close(a)

		b, err := connect()
		if err != nil {
			return err
		}
		if _, err := asyncio.WaitForFunc(tk, 100*ms, func(t *asyncio.T) ([]byte, error) { return aio.SockRecv(t, b, 100) }); errors.Is(err, asyncio.ErrTimeout) {
			p.log("client b: nothing to read yet")
		} else {
			return fmt.Errorf("client b's first read: %v", err)
		}
		if err := aio.SockSendall(tk, b, []byte("late")); err != nil {
			return err
		}
		buf := make([]byte, 3)
		var parts []string
		for len(parts) < 2 {
			n, err := aio.SockRecvInto(tk, b, buf)
			if err != nil {
				return err
			}
			parts = append(parts, pbytes(buf[:n]))
		}
		p.log("client b got [%s]", strings.Join(parts, ", "))
		if err := syscall.Shutdown(b, syscall.SHUT_WR); err != nil {
			return err
		}
		rest, err := aio.SockRecv(tk, b, 100)
		if err != nil {
			return err
		}
		p.log("client b then %s", pbytes(rest))
		syscall.Close(b)

		c, err := aio.NewSocket("tcp4")
		if err != nil {
			return err
		}
		l2, closedPort, err := boundPort()
		if err != nil {
			return err
		}
		syscall.Close(l2)
		err = aio.SockConnect(tk, c, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: closedPort})
		if errors.Is(err, syscall.ECONNREFUSED) {
			p.log("client c: ConnectionRefusedError")
		} else {
			return fmt.Errorf("client c: %v", err)
		}
		syscall.Close(c)

		if _, err := asyncio.Gather(tk, asyncio.Awaitables(handlers)...).Await(tk); err != nil {
			return err
		}
		acceptor.Cancel()
		if _, err := asyncio.GatherOutcomes(tk, acceptor).Await(tk); err != nil {
			return err
		}
		p.log("done, handlers %d", len(handlers))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p122_foreign_fd_events.py

func TestPortForeignFDEvents(t *testing.T) {
	runPort(t, cpythonTrace("p122_foreign_fd_events"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		var reports []string
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			words := strings.SplitN(ctx.Message, " ", 3)
			reports = append(reports, fmt.Sprintf("('%s %s', %s)", words[0], words[1], pyStrRepr(pexc(ctx.Err))))
		})
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		rsock, wsock := fds[0], fds[1]
		defer syscall.Close(rsock)
		defer syscall.Close(wsock)
		if err := syscall.SetNonblock(rsock, true); err != nil {
			return err
		}
		recv := func(n int) []byte {
			buf := make([]byte, n)
			k, err := syscall.Read(rsock, buf)
			if err != nil {
				panic(err)
			}
			return buf[:k]
		}
		send := func(b string) {
			if _, err := syscall.Write(wsock, []byte(b)); err != nil {
				panic(err)
			}
		}
		var received []byte
		type waiter struct {
			n   int
			fut *asyncio.Future[[]byte]
		}
		var waiters []waiter
		waitForBytes := func(n int) *asyncio.Future[[]byte] {
			fut := asyncio.NewFuture[[]byte](tk)
			waiters = append(waiters, waiter{n, fut})
			return fut
		}
		onReadable := func() {
			received = append(received, recv(100)...)
			for _, w := range slices.Clone(waiters) {
				if len(received) >= w.n && !w.fut.Done() {
					_ = w.fut.SetResult(slices.Clone(received[:w.n]))
					waiters = slices.DeleteFunc(waiters, func(x waiter) bool { return x == w })
				}
			}
		}
		if err := loop.AddReader(rsock, onReadable); err != nil {
			return err
		}
		fut := waitForBytes(3)
		v, err := asyncio.ToThread(tk, func(context.Context) (string, error) {
			for _, b := range []string{"a", "b", "c"} {
				if _, err := syscall.Write(wsock, []byte(b)); err != nil {
					return "", err
				}
			}
			return "signalled", nil
		})
		if err != nil {
			return err
		}
		p.log("thread: %s", v)
		events, err := fut.Await(tk)
		if err != nil {
			return err
		}
		p.log("events %s", pbytes(events))

		var calls []string
		if err := loop.AddReader(rsock, func() {
			calls = append(calls, "replacement")
			recv(100)
		}); err != nil {
			return err
		}
		send("x")
		if err := asyncio.Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		p.log("after replacing the reader %s", pstrs(calls))

		n := 0
		if err := loop.AddReader(rsock, func() {
			data := recv(100)
			n++
			if n == 1 {
				panic(newValueError("bad event " + pbytes(data)))
			}
			calls = append(calls, "flaky got "+pbytes(data))
		}); err != nil {
			return err
		}
		send("1")
		if err := asyncio.Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		send("2")
		if err := asyncio.Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		callReprs := make([]string, len(calls))
		for i, c := range calls {
			callReprs[i] = pyStrRepr(c)
		}
		p.log("reports [%s] calls [%s]", strings.Join(reports, ", "), strings.Join(callReprs, ", "))

		r1 := loop.RemoveReader(rsock)
		r2 := loop.RemoveReader(rsock)
		p.log("remove_reader %s %s", pb(r1), pb(r2))
		send("unseen")
		if err := asyncio.Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		p.log("left in the socket %s calls %d", pbytes(recv(100)), len(calls))

		if err := syscall.SetNonblock(wsock, true); err != nil {
			return err
		}
		if err := loop.AddWriter(wsock, func() {
			calls = append(calls, "writable")
			p.log("writer callback, remove_writer %s", pb(loop.RemoveWriter(wsock)))
		}); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, time.Millisecond); err != nil {
			return err
		}
		p.log("calls %s remove_writer again %s", pstrs(calls[len(calls)-1:]), pb(loop.RemoveWriter(wsock)))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p123_sendfile_assets.py

// The program runs on real loopback sockets and a file in a temporary
// directory, as the Python program does (the native sendfile(2) path).
func TestPortSendfileAssets(t *testing.T) {
	tmp := t.TempDir()
	runPort(t, cpythonTrace("p123_sendfile_assets"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		data := bytes.Repeat(func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(), 4096)
		path := filepath.Join(tmp, "asset.bin")
		//asynciovet:ignore blockingcall the program writes its asset file on the loop too (open/write in main), before serving
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
		done := asyncio.NewEvent()
		serve := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			sendOne := func(offset, count int64, countRepr string) error {
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				defer f.Close()
				var expect int64
				if offset >= 0 {
					end := int64(len(data))
					if count != 0 {
						end = min(end, offset+count)
					}
					expect = max(0, end-offset)
				}
				if err := w.Write(fmt.Appendf(nil, "LEN %d\n", expect)); err != nil {
					return err
				}
				if err := w.Drain(t); err != nil {
					return err
				}
				job := asyncio.CreateTask(t, func(t *asyncio.T) (int64, error) {
					return aio.Sendfile(t, w.Transport(), f, offset, count, true)
				})
				if err := asyncio.Sleep(t, 0); err != nil {
					return err
				}
				if !job.Done() {
					var re *asyncio.RuntimeError
					if err := w.Write([]byte("interleaved")); errors.As(err, &re) {
						p.log("server: write during sendfile: %s", pd(err))
					} else {
						return fmt.Errorf("write during sendfile: %v", err)
					}
				}
				sent, err := job.Await(t)
				var ve *asyncio.ValueError
				if errors.As(err, &ve) {
					p.log("server: ValueError(%s)", ve.Msg)
					return nil
				} else if err != nil {
					return err
				}
				pos, err := f.Seek(0, io.SeekCurrent)
				if err != nil {
					return err
				}
				p.log("server: sent %d of %d %s file position %d", sent, offset, countRepr, pos)
				return nil
			}
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				f := strings.Fields(string(line))
				offset, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil {
					return err
				}
				var count int64 // None
				countRepr := "None"
				if f[1] != "-" {
					if count, err = strconv.ParseInt(f[1], 10, 64); err != nil {
						return err
					}
					countRepr = f[1]
				}
				if err := sendOne(offset, count, countRepr); err != nil {
					return err
				}
			}
			w.Close()
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			var re *asyncio.RuntimeError
			if _, err := aio.Sendfile(t, w.Transport(), f, 0, 0, true); errors.As(err, &re) {
				p.log("server: after close: %s", pd(err))
			} else {
				return fmt.Errorf("sendfile after close: %v", err)
			}
			if err := w.WaitClosed(t); err != nil {
				return err
			}
			done.Set()
			return nil
		}
		server, err := aio.StartServer(tk, serve, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "127.0.0.1", portOf(server))
		if err != nil {
			return err
		}
		for _, rq := range []struct {
			offset int
			count  string
		}{{0, "-"}, {1000, "5000"}, {2000000, "10"}, {len(data) - 7, "100"}, {-1, "10"}} {
			if err := writer.Write(fmt.Appendf(nil, "%d %s\n", rq.offset, rq.count)); err != nil {
				return err
			}
			header, err := reader.ReadLine(tk)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(strings.Fields(string(header))[1])
			if err != nil {
				return err
			}
			body, err := reader.ReadExactly(tk, n)
			if err != nil {
				return err
			}
			ok := rq.offset < 0 || bytes.Equal(body, data[min(rq.offset, len(data)):min(rq.offset+n, len(data))])
			p.log("client: %d %s -> %s matches %s", rq.offset, rq.count, pbytes(bytes.TrimSpace(header)), pb(ok))
		}
		writer.Close()
		if err := done.Wait(tk); err != nil {
			return err
		}
		rest, err := reader.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("client: then %s", pbytes(rest))
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		server.Close()
		return server.WaitClosed(tk)
	})
}

// ---------------------------------------------------------------------------
// p124_pipe_streams.py

// pipePair is the program's pipe_pair(): both ends of an os.Pipe as a
// StreamReader and a StreamWriter.
func pipePair(tk *asyncio.T) (*aio.StreamReader, aio.ReadTransport, *aio.StreamWriter, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	reader := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
	rtr, _, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return aio.NewStreamReaderProtocol(reader) }, r)
	if err != nil {
		return nil, nil, nil, err
	}
	wproto := aio.NewStreamReaderProtocol(aio.NewStreamReader(tk, aio.DefaultStreamLimit))
	wtr, _, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return wproto }, w)
	if err != nil {
		return nil, nil, nil, err
	}
	return reader, rtr, aio.NewStreamWriter(wtr, wproto, nil), nil
}

func TestPortPipeStreams(t *testing.T) {
	runPort(t, cpythonTrace("p124_pipe_streams"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		reader, rtr, writer, err := pipePair(tk)
		if err != nil {
			return err
		}
		produce := func(t *asyncio.T) error {
			for i := range 3 {
				if err := writer.Write(fmt.Appendf(nil, "line %d\n", i)); err != nil {
					return err
				}
				if err := writer.Drain(t); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
			}
			p.log("producer: can_write_eof %s", pb(writer.CanWriteEOF()))
			if err := writer.WriteEOF(); err != nil {
				return err
			}
			p.log("producer: is_closing %s", pb(writer.IsClosing()))
			return nil
		}
		consume := func(t *asyncio.T) error {
			n := 0
			for line, err := range reader.Lines(t) {
				if err != nil {
					return err
				}
				n++
				p.log("consumer got %s", pbytes(line))
			}
			p.log("consumer: EOF %d at_eof %s", n, pb(reader.AtEOF()))
			return nil
		}
		if _, err := asyncio.GatherFuncs(tk,
			func(t *asyncio.T) (struct{}, error) { return struct{}{}, produce(t) },
			func(t *asyncio.T) (struct{}, error) { return struct{}{}, consume(t) }).Await(tk); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("read transport closing %s", pb(rtr.IsClosing()))

		p.restart()
		r2, w2, err := os.Pipe()
		if err != nil {
			return err
		}
		wproto := aio.NewStreamReaderProtocol(aio.NewStreamReader(tk, aio.DefaultStreamLimit))
		wtr, _, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return wproto }, w2)
		if err != nil {
			return err
		}
		writer2 := aio.NewStreamWriter(wtr, wproto, nil)
		if err := writer2.Write([]byte("first\n")); err != nil {
			return err
		}
		if err := writer2.Drain(tk); err != nil {
			return err
		}
		buf := make([]byte, 100)
		//asynciovet:ignore blockingcall the program's os.read(r2, 100) on the loop: the pipe holds the line already, so the read returns at once
		n, err := r2.Read(buf)
		if err != nil {
			return err
		}
		p.log("reader end has %s", pbytes(buf[:n]))
		if err := r2.Close(); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("after the reader left: is_closing %s", pb(writer2.IsClosing()))
		if err := writer2.Write([]byte("dropped\n")); err != nil {
			p.log("write after the reader left: %s", nd(err))
		}
		if err := writer2.Drain(tk); err == nil {
			p.log("drain ok")
		} else if errors.Is(err, syscall.ECONNRESET) {
			p.log("drain: %s", nd(err))
		} else {
			return err
		}

		p.restart()
		reader3, rtr3, writer3, err := pipePair(tk)
		if err != nil {
			return err
		}
		rtr3.PauseReading()
		p.log("paused, is_reading %s", pb(rtr3.IsReading()))
		if err := writer3.Write([]byte("held\n")); err != nil {
			return err
		}
		if err := writer3.Drain(tk); err != nil {
			return err
		}
		if _, err := asyncio.WaitForFunc(tk, 100*ms, reader3.ReadLine); errors.Is(err, asyncio.ErrTimeout) {
			p.log("nothing while paused")
		} else {
			return fmt.Errorf("read while paused: %v", err)
		}
		rtr3.ResumeReading()
		line, err := reader3.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("resumed %s", pbytes(line))
		writer3.Close()
		if err := writer3.WaitClosed(tk); err != nil {
			return err
		}
		rest, err := reader3.Read(tk, -1)
		if err != nil {
			return err
		}
		p.log("writer3 closed; reader3 then %s at_eof %s", pbytes(rest), pb(reader3.AtEOF()))
		return nil
	})
}
