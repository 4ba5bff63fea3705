//go:build unix && go1.25

package ports_test

// Ports p167 onward (h37): a bounded queue dropping its oldest item, an
// exception handler forwarding to the default one, sleep(0) round robin
// and call_soon/wakeup order, an SDK thread calling into the loop with
// run_coroutine_threadsafe (result(timeout=), cancel from either side),
// a gateway accepting with sock_accept and handing off with
// connect_accepted_socket next to create_server(start_serving=False), a
// storage loop in a thread of its own (a LoopGroup), an ingest pipeline
// between two loops, a socketpair worker on sock_recv_into, timers
// falling due together after an overrunning callback, a background loop
// driven from synchronous code, a crash reporter reading the never-
// retrieved report's future, sensor threads on call_soon_threadsafe,
// a CPU-heavy task yielding between chunks, and a dispatcher's
// PriorityQueue, LifoQueue and Queue used without waiting. Same
// conventions as ports_test.go and ports50_test.go (real loopback
// sockets as in p121). The ports with threads, or with a callback
// blocking the loop, run inside a testing/synctest bubble on the loop's
// real clock, so that a thread's timeout (concurrent.futures'
// result(timeout=)) or a blocking time.sleep runs on the same fake time
// as the loop. p177 found the never-retrieved reports without the
// future asyncio's context names (TestFUT10_ReportNamesTheFuture).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p167_drop_oldest_queue.py

func TestPortDropOldestQueue(t *testing.T) {
	runPort(t, cpythonTrace("p167_drop_oldest_queue"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		q := asyncio.NewQueue[string](3)
		var dropped, handled []string
		offer := func(sample string) error {
			err := q.PutNowait(sample)
			if errors.Is(err, asyncio.ErrQueueFull) {
				old, err := q.GetNowait()
				if err != nil {
					return err
				}
				if err := q.TaskDone(); err != nil {
					return err
				}
				dropped = append(dropped, old)
				if err := q.PutNowait(sample); err != nil {
					return err
				}
				p.log("full: dropped %s for %s qsize %d", old, sample, q.Len())
				return nil
			}
			return err
		}
		producer := func(t *asyncio.T) error {
			for i := range 8 {
				if err := offer(fmt.Sprintf("s%d", i)); err != nil {
					return err
				}
				if err := asyncio.Sleep(t, 60*ms); err != nil {
					return err
				}
			}
			p.log("producer done, qsize %d", q.Len())
			return nil
		}
		consumer := func(t *asyncio.T) error {
			for {
				s, err := q.Get(t)
				if err != nil {
					return err
				}
				p.log("consume %s qsize %d", s, q.Len())
				if err := asyncio.Sleep(t, 130*ms); err != nil {
					return err
				}
				handled = append(handled, s)
				if err := q.TaskDone(); err != nil {
					return err
				}
			}
		}
		cons := asyncio.CreateTaskErr(tk, consumer)
		prod := asyncio.CreateTaskErr(tk, producer)
		if _, err := prod.Await(tk); err != nil {
			return err
		}
		if err := q.Join(tk); err != nil {
			return err
		}
		p.log("joined; handled %s dropped %s", pstrs(handled), pstrs(dropped))
		if _, err := q.GetNowait(); errors.Is(err, asyncio.ErrQueueEmpty) {
			p.log("health: queue empty %s %s", pb(q.Empty()), pb(q.Full()))
		}
		if err := q.TaskDone(); errors.Is(err, asyncio.ErrValue) {
			p.log("extra ack refused: %s", pdValue(err))
		}
		if err := q.PutNowait("late"); err != nil {
			return err
		}
		if err := q.PutNowait("later"); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		p.log("consumer took late, qsize %d", q.Len())
		cons.Cancel()
		if _, err := cons.Await(tk); asyncio.IsCancelled(err) {
			p.log("consumer cancelled, qsize %d", q.Len())
		}
		full := asyncio.NewQueue[int](1)
		if err := full.PutNowait(1); err != nil {
			return err
		}
		_, err := asyncio.WaitForFunc(tk, 100*ms, func(t *asyncio.T) (struct{}, error) { return noValue, full.Put(t, 2) })
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("put on full queue timed out, qsize %d", full.Len())
		}
		v, err := full.GetNowait()
		if err != nil {
			return err
		}
		p.log("get_nowait %d then empty %s", v, pb(full.Empty()))
		return nil
	})
}

// pdValue is d(e) for the library's *asyncio.ValueError.
func pdValue(err error) string {
	var ve *asyncio.ValueError
	if errors.As(err, &ve) {
		return "ValueError(" + ve.Msg + ")"
	}
	return pd(err)
}

// ---------------------------------------------------------------------------
// p168_error_reporter.py

// reportCapture is the program's logging handler on the asyncio logger
// (the default exception handler logs through log/slog, docs/rules.md
// EXC-1): level, first line, and whether an exception came with it.
type reportCapture struct {
	mu     sync.Mutex
	logged []string
}

func (c *reportCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *reportCapture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *reportCapture) WithGroup(string) slog.Handler            { return c }
func (c *reportCapture) Handle(_ context.Context, r slog.Record) error {
	first, _, _ := strings.Cut(r.Message, "\n")
	for _, prefix := range []string{"Exception in callback", "Task exception was never retrieved"} {
		if strings.HasPrefix(first, prefix) {
			first = prefix
		}
	}
	exc := "-"
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "exception" {
			exc = "exc"
		}
		return true
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logged = append(c.logged, fmt.Sprintf("%s: %s %s", r.Level, first, exc))
	return nil
}

func (c *reportCapture) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.logged)
}

type osError struct{ pyExc }

// ptally is sorted(tally.items()).
func ptally(tally map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tally)) {
		parts = append(parts, fmt.Sprintf("('%s', %d)", k, tally[k]))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func TestPortErrorReporter(t *testing.T) {
	capture := &reportCapture{}
	saved := slog.Default()
	slog.SetDefault(slog.New(capture))
	defer slog.SetDefault(saved)

	tally := map[string]int{}
	p := &probe{}
	handler := func(loop *asyncio.Loop, ctx asyncio.ExceptionContext) {
		msg := ctx.Message
		for _, prefix := range []string{"Exception in callback", "Task exception was never retrieved"} {
			if strings.HasPrefix(msg, prefix) {
				msg = prefix
			}
		}
		tally[msg]++
		if strings.HasPrefix(msg, "ignore:") {
			p.log("handler: dropped %s", msg)
			return
		}
		p.log("handler: %s %s -> default", msg, pexc(ctx.Err))
		loop.DefaultExceptionHandler(ctx)
	}
	fails := func(name string, after time.Duration) func(*asyncio.T) error {
		return func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, after); err != nil {
				return err
			}
			return newKeyError(name)
		}
	}
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		loop := tk.Loop()
		loop.SetExceptionHandler(handler)
		p.restart()
		flaky := func(n int) func() {
			return func() {
				if n%2 == 1 {
					panic(newValueError(fmt.Sprintf("flaky %d", n)))
				}
				p.log("flaky %d ok", n)
			}
		}
		for n := range 3 {
			loop.CallSoon(flaky(n))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return noValue, err
		}
		p.log("logged %d", capture.len())

		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "ignore: cache miss storm"})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "disk almost full", Err: &osError{pyExc{"OSError", "28"}}})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "ignore: slow peer", Err: &asyncio.TimeoutError{}})
		p.log("after reports, logged %d", capture.len())

		loop.CallLater(120*ms, func() {
			p.log("timer fires")
			panic(newRuntimeError("timer bug"))
		})
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return noValue, err
		}

		read := asyncio.CreateTaskErr(tk, fails("read", 70*ms))
		read.AddDoneCallback(func() { p.log("watcher read %s", pd(read.Err())) })
		fut := asyncio.NewFuture[string](tk)
		fut.AddDoneCallback(func() {
			v, _ := fut.Result()
			p.log("on_done sees %s", v)
			panic(newTypeError("bad listener"))
		})
		loop.CallLater(100*ms, func() { _ = fut.SetResult("payload") })
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return noValue, err
		}
		p.log("tally %s", ptally(tally))

		loop.SetExceptionHandler(nil)
		loop.CallSoon(flaky(5))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return noValue, err
		}
		total := 0
		for _, n := range tally {
			total += n
		}
		p.log("default handler logged directly, tally unchanged %d", total)
		loop.SetExceptionHandler(handler)

		orphan := asyncio.CreateTaskErr(tk, fails("orphan", 100*ms))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return noValue, err
		}
		p.log("orphan done %s logged %d", pb(orphan.Done()), capture.len())
		return noValue, nil
	}, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatalf("main failed: %v\n%s", err, p.b.String())
	}
	p.b.WriteString("logged:\n")
	for _, line := range capture.logged {
		fmt.Fprintf(&p.b, "  %s\n", line)
	}
	fmt.Fprintf(&p.b, "tally %s\n", ptally(tally))
	if got, want := p.b.String(), cpythonTrace("p168_error_reporter"); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p169_round_robin_order.py

func TestPortRoundRobinOrder(t *testing.T) {
	runPort(t, cpythonTrace("p169_round_robin_order"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		var order []string
		push := func(s string) func() { return func() { order = append(order, s) } }
		late := func(t *asyncio.T) error {
			order = append(order, "late0")
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
			order = append(order, "late1")
			return nil
		}
		worker := func(name string, steps int) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				for i := range steps {
					order = append(order, fmt.Sprintf("%s%d", name, i))
					if name == "b" && i == 1 {
						loop := t.Loop()
						loop.CallSoon(push("cb1"))
						loop.CallSoon(push("cb2"))
						//asynciovet:ignore unawaitedtask the program's create_task(late()) keeps no reference: the task ends within the round robin, before gather returns
						asyncio.CreateTaskErr(t, late)
					}
					if err := asyncio.Sleep(t, 0); err != nil {
						return noValue, err
					}
				}
				order = append(order, name+"-end")
				return noValue, nil
			}
		}
		p.restart()
		if _, err := asyncio.GatherFuncs(tk, worker("a", 3), worker("b", 3), worker("c", 2)).Await(tk); err != nil {
			return err
		}
		p.log("round robin %s", pstrs(order))

		order = nil
		fut := asyncio.NewFuture[int](tk)
		w := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			v, err := fut.Await(t)
			if err != nil {
				return err
			}
			order = append(order, fmt.Sprintf("fut-%d", v))
			return nil
		})
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		loop.CallSoon(push("before"))
		loop.CallSoon(func() { _ = fut.SetResult(1) })
		loop.CallSoon(push("after"))
		loop.CallLater(0, push("later0"))
		loop.CallSoon(push("after2"))
		if _, err := w.Await(tk); err != nil {
			return err
		}
		p.log("future wakeup %s", pstrs(order))

		order = nil
		ev := asyncio.NewEvent()
		waiter := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := ev.Wait(t); err != nil {
					return noValue, err
				}
				order = append(order, "woke-"+name)
				return noValue, nil
			}
		}
		var ws []*asyncio.Task[struct{}]
		for _, n := range []string{"x", "y", "z"} {
			ws = append(ws, asyncio.CreateTask(tk, waiter(n)))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		ws = append(ws, asyncio.CreateTask(tk, waiter("w")))
		loop.CallSoon(push("cb-before-set"))
		ev.Set()
		order = append(order, "set")
		loop.CallSoon(push("cb-after-set"))
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(ws)...).Await(tk); err != nil {
			return err
		}
		p.log("event wakeup %s", pstrs(order))

		order = nil
		var handles []*asyncio.TimerHandle
		for i, delay := range []time.Duration{300 * ms, 100 * ms, 200 * ms, 50 * ms, 250 * ms} {
			handles = append(handles, loop.CallLater(delay, push(fmt.Sprintf("t%d", i))))
		}
		loop.CallLater(120*ms, func() { handles[2].Cancel(); order = append(order, "cancel-t2") })
		loop.CallLater(70*ms, func() { handles[0].Cancel(); order = append(order, "cancel-t0") })
		if err := asyncio.Sleep(tk, 400*ms); err != nil {
			return err
		}
		var cancelled []bool
		for _, h := range handles {
			cancelled = append(cancelled, h.Cancelled())
		}
		p.log("timers %s %s", pstrs(order), pbools(cancelled...))
		return nil
	})
}

// runPortBubble is runPort inside a testing/synctest bubble, with the
// loop on its real clock: the bubble's fake time moves the loop and the
// program's threads (goroutines) alike, so a thread's result(timeout=)
// and the loop's sleeps keep CPython's order.
func runPortBubble(t *testing.T, want string, main func(p *probe, tk *asyncio.T) error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		p := &probe{}
		_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
			p.l = tk.Loop()
			return struct{}{}, main(p, tk)
		})
		got := p.b.String()
		if err != nil {
			t.Fatalf("main failed: %v (%s)\ntrace so far:\n%s", err, pd(err), got)
		}
		if got != want {
			t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
		}
	})
}

// threadLog is the programs' thread_log with tlog(loop, ...): lines a
// thread keeps, stamped with loop.time() read on the thread.
type threadLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *threadLog) add(p *probe, format string, args ...any) {
	line := fmt.Sprintf("%.1f %s", (p.l.Time() - p.t0).Seconds(), fmt.Sprintf(format, args...))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *threadLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// resultTimeout is concurrent.futures.Future.result(timeout=d) on a
// thread: the timeout is ctx's error (TimeoutError in Python).
func resultTimeout[V any](ctx context.Context, cf *asyncio.ConcurrentFuture[V], d time.Duration) (V, error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := cf.Wait(wctx); err != nil {
		var zero V
		return zero, err
	}
	return cf.Result()
}

// goPool is a ThreadPoolExecutor: each job on a goroutine of its own;
// Shutdown waits for them (shutdown(wait=True) at the with block's end).
type goPool struct{ wg sync.WaitGroup }

// Submit runs fn on a new goroutine.
func (p *goPool) Submit(fn func()) error {
	p.wg.Go(fn)
	return nil
}

// ---------------------------------------------------------------------------
// p170_sdk_thread_calls.py

func TestPortSDKThreadCalls(t *testing.T) {
	runPortBubble(t, cpythonTrace("p170_sdk_thread_calls"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		var tl threadLog
		tasks := map[string]*asyncio.T{} // only the loop's tasks touch it
		lookup := func(key string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				if key == "bad" {
					return "", newKeyError(key)
				}
				return strings.ToUpper(key), nil
			}
		}
		slow := func(name string, started *asyncio.Event) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				tasks[name] = t
				started.Set()
				if err := asyncio.Sleep(t, time.Second); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("%s cancelled on the loop", name)
					}
					return "", err
				}
				return "never", nil
			}
		}
		sdk := func(s1Started, s2Started *asyncio.Event) func(ctx context.Context) (string, error) {
			return func(ctx context.Context) (string, error) {
				f := asyncio.RunCoroutineThreadsafe(loop, lookup("a", 100*ms))
				v, err := resultTimeout(ctx, f, time.Second)
				if err != nil {
					return "", err
				}
				tl.add(p, "a -> %s", v)
				f = asyncio.RunCoroutineThreadsafe(loop, lookup("bad", 120*ms))
				if _, err := resultTimeout(ctx, f, time.Second); errors.As(err, new(*keyError)) {
					tl.add(p, "bad -> %s", pd(err))
				} else {
					return "", fmt.Errorf("bad: %v", err)
				}
				f = asyncio.RunCoroutineThreadsafe(loop, slow("s1", s1Started))
				if _, err := resultTimeout(ctx, f, 200*ms); errors.Is(err, context.DeadlineExceeded) {
					cancelled := f.Cancel()
					tl.add(p, "s1 timed out; cancel -> %s cancelled %s", pb(cancelled), pb(f.Cancelled()))
				} else {
					return "", fmt.Errorf("s1: %v", err)
				}
				f = asyncio.RunCoroutineThreadsafe(loop, slow("s2", s2Started))
				if _, err := resultTimeout(ctx, f, 2*time.Second); asyncio.IsCancelled(err) {
					tl.add(p, "s2 cancelled by the loop")
				} else {
					return "", fmt.Errorf("s2: %v", err)
				}
				return "sdk done", nil
			}
		}
		upload := func(q *asyncio.Queue[string], acks []chan struct{}) func(ctx context.Context) (string, error) {
			return func(ctx context.Context) (string, error) {
				for i := range 3 {
					part := fmt.Sprintf("part%d", i)
					if _, err := loop.CallSoonThreadsafe(func() { _ = q.PutNowait(part) }); err != nil {
						return "", err
					}
					<-acks[i]
				}
				return "uploaded 3 parts", nil
			}
		}

		p.restart()
		s1Started, s2Started := asyncio.NewEvent(), asyncio.NewEvent()
		thread := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return asyncio.ToThread(t, sdk(s1Started, s2Started))
		})
		if err := s1Started.Wait(tk); err != nil {
			return err
		}
		p.log("s1 running on the loop")
		if err := s2Started.Wait(tk); err != nil {
			return err
		}
		p.log("s2 running on the loop")
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("loop cancels s2")
		s1, s2 := tasks["s1"], tasks["s2"]
		s2.Cancel()
		said, err := thread.Await(tk)
		if err != nil {
			return err
		}
		p.log("thread says %s", said)
		p.log("s1 task cancelled %s s2 task cancelled %s", pb(s1.Cancelled()), pb(s2.Cancelled()))
		for _, line := range tl.all() {
			fmt.Fprintf(&p.b, "  thread: %s\n", line)
		}

		p.restart()
		q := asyncio.NewQueue[string](0)
		acks := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
		pool := &goPool{}
		//asynciovet:ignore blockingcall the program's `with ThreadPoolExecutor` exit, shutdown(wait=True), on the loop too; its job has returned by then
		defer pool.wg.Wait()
		cf := asyncio.RunInExecutorOn(tk, pool, upload(q, acks))
		for i := range 3 {
			item, err := q.Get(tk)
			if err != nil {
				return err
			}
			p.log("progress %s", item)
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			close(acks[i])
		}
		v, err := cf.Await(tk)
		if err != nil {
			return err
		}
		p.log("wrap_future -> %s", v)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p171_handoff_gateway.py

type upperHandoff struct {
	aio.BaseProtocol
	p    *probe
	name string
	tr   aio.Transport
}

func (u *upperHandoff) ConnectionMade(tr aio.Transport) {
	u.tr = tr
	u.p.log("%s connection_made", u.name)
}

func (u *upperHandoff) DataReceived(data []byte) {
	u.p.log("%s data %s", u.name, pbytes(data))
	if err := u.tr.Write(bytes.ToUpper(data)); err != nil {
		u.p.log("%s write failed %v", u.name, err)
	}
}

func (u *upperHandoff) EOFReceived() bool {
	u.p.log("%s eof", u.name)
	return false
}

func (u *upperHandoff) ConnectionLost(err error) {
	u.p.log("%s connection_lost %s", u.name, pnone(err))
}

// The program runs on real loopback sockets, as the Python program does
// (as p121).
func TestPortHandoffGateway(t *testing.T) {
	runPort(t, cpythonTrace("p171_handoff_gateway"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		lsock, port, err := boundPort()
		if err != nil {
			return err
		}
		defer syscall.Close(lsock)
		if err := syscall.Listen(lsock, 128); err != nil {
			return err
		}
		var handed []aio.Transport
		gateway := func(t *asyncio.T) error {
			n := 0
			for {
				conn, _, err := aio.SockAccept(t, lsock)
				if err != nil {
					return err
				}
				n++
				header, err := aio.SockRecv(t, conn, 16)
				if err != nil {
					syscall.Close(conn)
					return err
				}
				p.log("gateway: conn %d header %s", n, pbytes(header))
				if string(header) != "ROUTE\n" {
					if err := aio.SockSendall(t, conn, []byte("no\n")); err != nil {
						return err
					}
					syscall.Close(conn)
					continue
				}
				if err := aio.SockSendall(t, conn, []byte("ok\n")); err != nil {
					return err
				}
				name := fmt.Sprintf("h%d", n)
				tr, proto, err := aio.ConnectAcceptedSocket(t, func() aio.Protocol { return &upperHandoff{p: p, name: name} }, conn)
				if err != nil {
					return err
				}
				handed = append(handed, tr)
				p.log("gateway: handed off %s closing %s", proto.(*upperHandoff).name, pb(tr.IsClosing()))
			}
		}
		gw := asyncio.CreateTaskErr(tk, gateway)

		client := func(name, header, body string, pause time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
				if err != nil {
					return noValue, err
				}
				if err := w.Write([]byte(header)); err != nil {
					return noValue, err
				}
				answer, err := r.ReadLine(t)
				if err != nil {
					return noValue, err
				}
				p.log("%s answer %s", name, pbytes(answer))
				if string(answer) == "ok\n" {
					if err := asyncio.Sleep(t, pause); err != nil {
						return noValue, err
					}
					if err := w.Write([]byte(body)); err != nil {
						return noValue, err
					}
					echo, err := r.ReadExactly(t, len(body))
					if err != nil {
						return noValue, err
					}
					p.log("%s echo %s", name, pbytes(echo))
					if err := w.WriteEOF(); err != nil {
						return noValue, err
					}
				}
				rest, err := r.Read(t, -1)
				if err != nil {
					return noValue, err
				}
				p.log("%s then %s", name, pbytes(rest))
				w.Close()
				return noValue, w.WaitClosed(t)
			}
		}
		if _, err := client("c1", "ROUTE\n", "abc", 100*ms)(tk); err != nil {
			return err
		}
		if _, err := client("c2", "SPAM\n", "", 0)(tk); err != nil {
			return err
		}
		if _, err := asyncio.GatherFuncs(tk, client("c3", "ROUTE\n", "xyz", 170*ms), client("c4", "ROUTE\n", "hi", 60*ms)).Await(tk); err != nil {
			return err
		}
		gw.Cancel()
		if _, err := asyncio.GatherOutcomes[struct{}](tk, gw).Await(tk); err != nil {
			return err
		}
		syscall.Close(lsock)
		allClosing := true
		for _, tr := range handed {
			allClosing = allClosing && tr.IsClosing()
		}
		p.log("gateway cancelled, handed %d all closing %s", len(handed), pb(allClosing))

		p.restart()
		srv, err := aio.CreateServer(tk, func() aio.Protocol { return &upperHandoff{p: p, name: "b"} }, "127.0.0.1", 0, aio.WithDeferredServing())
		if err != nil {
			return err
		}
		bport := portOf(srv)
		p.log("backend serving %s", pb(srv.IsServing()))
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", bport); errors.Is(err, syscall.ECONNREFUSED) {
			p.log("refused before start_serving: not listening yet")
		} else {
			return fmt.Errorf("connect before start_serving: %v", err)
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		srv.StartServing()
		p.log("backend serving %s", pb(srv.IsServing()))
		r, w, err := aio.OpenConnection(tk, "127.0.0.1", bport)
		if err != nil {
			return err
		}
		if err := w.Write([]byte("early")); err != nil {
			return err
		}
		early, err := r.ReadExactly(tk, 5)
		if err != nil {
			return err
		}
		p.log("early reply %s", pbytes(early))
		forever := asyncio.CreateTaskErr(tk, srv.ServeForever)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		var re *asyncio.RuntimeError
		if err := srv.ServeForever(tk); errors.As(err, &re) {
			_, after, _ := strings.Cut(re.Msg, " is ")
			p.log("second serve_forever: RuntimeError %s", after)
		} else {
			return fmt.Errorf("second serve_forever: %v", err)
		}
		forever.Cancel()
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("serve_forever still waiting %s serving %s", pb(!forever.Done()), pb(srv.IsServing()))
		w.Close()
		if err := w.WaitClosed(tk); err != nil {
			return err
		}
		if _, err := forever.Await(tk); asyncio.IsCancelled(err) {
			p.log("serve_forever ended cancelled")
		} else {
			return fmt.Errorf("serve_forever: %v", err)
		}
		if _, _, err := aio.OpenConnection(tk, "127.0.0.1", bport); errors.Is(err, syscall.ECONNREFUSED) {
			p.log("backend refuses now")
		} else {
			return fmt.Errorf("connect after close: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p172_storage_loop_thread.py

// One event loop per thread, called with run_coroutine_threadsafe and
// wrap_future, is a LoopGroup of two loops (README "asyncio → Go":
// wrap_future of another loop's future is CallOn between the loops of a
// group): each thread's asyncio.run is that loop's main (RunEach), the
// calls are CallOn, call_soon_threadsafe is CallFuncOn, the ready and
// joined signals are channels awaited with Recv (to_thread(ev.wait),
// to_thread(th.join)). It runs in a synctest bubble on the loops' real
// clocks, which start at the same fake instant, as both Python loops
// read one monotonic clock.
func TestPortStorageLoopThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
		defer g.Close()
		p := &probe{l: g.Loop(0)}
		mainLoop, sl := g.Loop(0), g.Loop(1)
		store := map[string]int{}
		var events []string
		ready, joined := make(chan struct{}), make(chan struct{})
		stop := asyncio.NewEvent()

		audit := func(key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, 20*ms); err != nil {
					return "", err
				}
				p.log("main: audit %s", key)
				return "ok", nil
			}
		}
		get := func(key string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, 30*ms); err != nil {
					return "", err
				}
				p.log("storage: get %s", key)
				if v, ok := store[key]; ok {
					return strconv.Itoa(v), nil
				}
				return "None", nil
			}
		}
		put := func(key string, value *int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, 40*ms); err != nil {
					return 0, err
				}
				if value == nil {
					return 0, newValueError("no value for " + key)
				}
				ok, err := asyncio.CallOn(t, mainLoop, audit(key))
				if err != nil {
					return 0, err
				}
				store[key] = *value
				p.log("storage: put %s audit %s", key, ok)
				return len(store), nil
			}
		}
		scan := func(t *asyncio.T) (struct{}, error) {
			err := asyncio.Sleep(t, time.Second)
			if asyncio.IsCancelled(err) {
				events = append(events, "scan cancelled")
			}
			return noValue, err
		}
		serve := func(t *asyncio.T) error {
			close(ready)
			defer close(joined)
			if err := stop.Wait(t); err != nil {
				return err
			}
			p.log("storage: loop stopping, keys %s", pstrs(slices.Sorted(maps.Keys(store))))
			return nil
		}
		one, three := 1, 3
		client := func(tk *asyncio.T) error {
			p.restart()
			if _, _, err := asyncio.Recv(tk, ready); err != nil {
				return err
			}
			n, err := asyncio.CallOn(tk, sl, put("a", &one))
			if err != nil {
				return err
			}
			p.log("main: put a -> %d", n)
			v, err := asyncio.CallOn(tk, sl, get("a"))
			if err != nil {
				return err
			}
			p.log("main: get a -> %s", v)
			if _, err := asyncio.CallOn(tk, sl, put("b", nil)); errors.As(err, new(*valueError)) {
				p.log("main: put b failed %s", pd(err))
			} else {
				return fmt.Errorf("put b: %v", err)
			}
			_, err = asyncio.WaitForFunc(tk, 200*ms, func(t *asyncio.T) (struct{}, error) { return asyncio.CallOn(t, sl, scan) })
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("main: scan timed out")
			} else {
				return fmt.Errorf("scan: %v", err)
			}
			if err := asyncio.Sleep(tk, 80*ms); err != nil {
				return err
			}
			saw, err := asyncio.CallFuncOn(tk, sl, func() ([]string, error) { return slices.Clone(events), nil })
			if err != nil {
				return err
			}
			p.log("main: storage saw %s", pstrs(saw))
			if n, err = asyncio.CallOn(tk, sl, put("c", &three)); err != nil {
				return err
			}
			p.log("main: put c -> %d", n)
			if v, err = asyncio.CallOn(tk, sl, get("b")); err != nil {
				return err
			}
			p.log("main: get b -> %s", v)
			if _, err := asyncio.CallFuncOn(tk, sl, func() (struct{}, error) { stop.Set(); return noValue, nil }); err != nil {
				return err
			}
			if _, _, err := asyncio.Recv(tk, joined); err != nil {
				return err
			}
			p.log("main: storage thread joined")
			return nil
		}
		_, err := asyncio.RunEach(g, func(t *asyncio.T, i int) (struct{}, error) {
			if i == 0 {
				return noValue, client(t)
			}
			return noValue, serve(t)
		})
		if err != nil {
			t.Fatalf("main failed: %v\n%s", err, p.b.String())
		}
		if got, want := p.b.String(), cpythonTrace("p172_storage_loop_thread"); got != want {
			t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
		}
	})
}

// ---------------------------------------------------------------------------
// p173_ingest_pipeline.py

// The parser's loop in its thread is loop 1 of a LoopGroup (as p172);
// run_coroutine_threadsafe(q.put(r), main_loop) awaited through
// wrap_future is CallOn(t, mainLoop, q.Put): the queue stays the main
// loop's asyncio.Queue, as in the program (a CrossQueue, put from loop 1
// itself, would let the parser's put land while the consumer logs qsize,
// the two loops running in parallel).
func TestPortIngestPipeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
		defer g.Close()
		mainLoop := g.Loop(0)
		p := &probe{l: mainLoop}
		var pl threadLog
		q := asyncio.NewQueue[string](2)
		threadDone := make(chan struct{})
		parse := func(t *asyncio.T) error {
			defer close(threadDone)
			loop := t.Loop()
			tl := func(format string, args ...any) {
				pl.add(&probe{l: loop, t0: p.t0}, format, args...)
			}
			for i := range 5 {
				if err := asyncio.Sleep(t, 40*ms); err != nil {
					return err
				}
				start := loop.Time()
				r := fmt.Sprintf("r%d", i)
				if _, err := asyncio.CallOn(t, mainLoop, func(t *asyncio.T) (struct{}, error) { return noValue, q.Put(t, r) }); err != nil {
					return err
				}
				how := "at once"
				if loop.Time()-start > 5*ms {
					how = "held back"
				}
				tl("put %s %s", r, how)
			}
			if _, err := asyncio.CallOn(t, mainLoop, func(t *asyncio.T) (struct{}, error) { return noValue, q.Join(t) }); err != nil {
				return err
			}
			tl("all processed")
			if _, err := mainLoop.CallSoonThreadsafe(func() { q.Shutdown(false) }); err != nil {
				return err
			}
			tl("shutdown sent")
			return nil
		}
		consume := func(t *asyncio.T) (int, error) {
			handled := 0
			for {
				r, err := q.Get(t)
				if errors.Is(err, asyncio.ErrQueueShutDown) {
					p.log("consumer: queue shut down after %d", handled)
					return handled, nil
				}
				if err != nil {
					return handled, err
				}
				p.log("consumer got %s qsize %d", r, q.Len())
				if err := asyncio.Sleep(t, 130*ms); err != nil {
					return handled, err
				}
				handled++
				if err := q.TaskDone(); err != nil {
					return handled, err
				}
			}
		}
		started := make(chan struct{})
		client := func(tk *asyncio.T) error {
			p.restart()
			consumer := asyncio.CreateTask(tk, consume)
			close(started) // th.start()
			n, err := consumer.Await(tk)
			if err != nil {
				return err
			}
			if _, _, err := asyncio.Recv(tk, threadDone); err != nil {
				return err
			}
			p.log("pipeline done, handled %d", n)
			for _, line := range pl.all() {
				fmt.Fprintf(&p.b, "  parser: %s\n", line)
			}
			return nil
		}
		_, err := asyncio.RunEach(g, func(t *asyncio.T, i int) (struct{}, error) {
			if i == 0 {
				return noValue, client(t)
			}
			if _, _, err := asyncio.Recv(t, started); err != nil {
				return noValue, err
			}
			return noValue, parse(t)
		})
		if err != nil {
			t.Fatalf("main failed: %v\n%s", err, p.b.String())
		}
		if got, want := p.b.String(), cpythonTrace("p173_ingest_pipeline"); got != want {
			t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
		}
	})
}

// ---------------------------------------------------------------------------
// p174_socketpair_worker.py

// readExactInto is the program's read_exact_into: view[got:] is the
// memoryview slice.
func readExactInto(t *asyncio.T, fd int, view []byte) error {
	got := 0
	for got < len(view) {
		n, err := aio.SockRecvInto(t, fd, view[got:])
		if err != nil {
			return err
		}
		if n == 0 {
			return &aio.IncompleteReadError{Partial: slices.Clone(view[:got]), Expected: len(view)}
		}
		got += n
	}
	return nil
}

func TestPortSocketpairWorker(t *testing.T) {
	runPort(t, cpythonTrace("p174_socketpair_worker"), func(p *probe, tk *asyncio.T) error {
		worker := func(fd int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				defer syscall.Close(fd)
				header := make([]byte, 4)
				handled := 0
				for {
					err := readExactInto(t, fd, header)
					var ire *aio.IncompleteReadError
					if errors.As(err, &ire) {
						p.log("worker: EOF, partial %s expected %d handled %d", pbytes(ire.Partial), ire.Expected, handled)
						break
					} else if err != nil {
						return err
					}
					body := make([]byte, binary.BigEndian.Uint32(header))
					if err := readExactInto(t, fd, body); err != nil {
						return err
					}
					p.log("worker: job %s", pbytes(body))
					if err := asyncio.Sleep(t, 50*ms); err != nil {
						return err
					}
					reply := bytes.ToUpper(body)
					if err := aio.SockSendall(t, fd, append(binary.BigEndian.AppendUint32(nil, uint32(len(reply))), reply...)); err != nil {
						return err
					}
					handled++
				}
				return nil
			}
		}
		p.restart()
		// socket.socketpair() then setblocking(False), as the program
		// does: SOCK_NONBLOCK is not a flag of socketpair(2) on macOS.
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		a, b := fds[0], fds[1]
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			if err := syscall.SetNonblock(fd, true); err != nil {
				return err
			}
		}
		w := asyncio.CreateTaskErr(tk, worker(b))
		got, err := aio.SockRecv(tk, a, 0)
		if err != nil {
			return err
		}
		p.log("recv 0 bytes -> %s", pbytes(got))
		n, err := aio.SockRecvInto(tk, a, make([]byte, 0))
		if err != nil {
			return err
		}
		p.log("recv_into empty -> %d", n)
		if err := aio.SockSendall(tk, a, nil); err != nil {
			return err
		}
		p.log("sendall nothing -> None")
		for _, job := range []string{"alpha", "be", "gamma-ray"} {
			frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(job))), job...)
			if err := aio.SockSendall(tk, a, frame[:3]); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 20*ms); err != nil {
				return err
			}
			if err := aio.SockSendall(tk, a, frame[3:]); err != nil {
				return err
			}
			head, err := aio.SockRecv(tk, a, 4)
			if err != nil {
				return err
			}
			reply, err := aio.SockRecv(tk, a, int(binary.BigEndian.Uint32(head)))
			if err != nil {
				return err
			}
			p.log("supervisor: reply %s", pbytes(reply))
		}
		if _, err := asyncio.WaitForFunc(tk, 100*ms, func(t *asyncio.T) ([]byte, error) { return aio.SockRecv(t, a, 10) }); errors.Is(err, asyncio.ErrTimeout) {
			p.log("supervisor: nothing unsolicited")
		} else {
			return fmt.Errorf("unsolicited read: %v", err)
		}
		if err := aio.SockSendall(tk, a, []byte{0, 0}); err != nil {
			return err
		}
		if err := syscall.Shutdown(a, syscall.SHUT_WR); err != nil {
			return err
		}
		if _, err := w.Await(tk); err != nil {
			return err
		}
		rest, err := aio.SockRecv(tk, a, 10)
		if err != nil {
			return err
		}
		p.log("supervisor: worker gone, recv -> %s", pbytes(rest))
		if err := aio.SockSendall(tk, a, []byte("late")); errors.Is(err, syscall.EPIPE) {
			p.log("supervisor: send after shutdown BrokenPipeError")
		} else {
			return fmt.Errorf("send after shutdown: %v", err)
		}
		return syscall.Close(a)
	})
}

// ---------------------------------------------------------------------------
// p175_overrun_timers.py

// The overrunning callback blocks the loop with time.Sleep, as the
// program's time.sleep: in a synctest bubble on the loop's real clock,
// the bubble's time moves while it sleeps, so the next timers fall due
// together, as on CPython's clock.
func TestPortOverrunTimers(t *testing.T) {
	runPortBubble(t, cpythonTrace("p175_overrun_timers"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		var order []string
		handles := map[string]*asyncio.TimerHandle{}
		wake := asyncio.NewFuture[string](tk)
		var fire func(name string) func()
		fire = func(name string) func() {
			return func() {
				order = append(order, name)
				p.log("fire %s", name)
				if name == "slow" {
					time.Sleep(100 * ms)
				}
				if name == "b" {
					handles["d"].Cancel()
					handles["f"].Cancel()
					loop.CallSoon(fire("soon-from-b"))
					handles["late"] = loop.CallLater(0, fire("late0"))
					_ = wake.SetResult("b")
				}
				if name == "c" {
					loop.CallSoon(fire("soon-from-c"))
				}
			}
		}
		for _, x := range []struct {
			name  string
			delay time.Duration
		}{{"slow", 100 * ms}, {"b", 120 * ms}, {"c", 130 * ms}, {"d", 140 * ms}, {"e", 160 * ms}, {"f", 370 * ms}, {"g", 430 * ms}} {
			handles[x.name] = loop.CallLater(x.delay, fire(x.name))
		}
		s := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			by, err := wake.Await(t)
			if err != nil {
				return err
			}
			p.log("sleeper woke by %s", by)
			order = append(order, "sleeper")
			return nil
		})
		if err := asyncio.Sleep(tk, 600*ms); err != nil {
			return err
		}
		if _, err := s.Await(tk); err != nil {
			return err
		}
		p.log("order %s", pstrs(order))
		var whens []string
		for _, n := range []string{"slow", "b", "d", "f"} {
			whens = append(whens, p.rel(handles[n].When()))
		}
		p.log("when %s", pstrs(whens))
		var cancelled []string
		for n, h := range handles {
			if h.Cancelled() {
				cancelled = append(cancelled, n)
			}
		}
		slices.Sort(cancelled)
		p.log("cancelled %s", pstrs(cancelled))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p176_background_loop.py

// lookupError is the program's LookupError.
type lookupError struct{ pyExc }

// The program's main thread is the test's goroutine, the background
// thread a goroutine running RunForever, in a synctest bubble so that
// result(timeout=) and concurrent.futures.wait(timeout=) run on the
// loop's clock. concurrent.futures.wait(fs, timeout) is Wait on each
// future with one deadline.
func TestPortBackgroundLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		var notesMu sync.Mutex
		var notes []string
		note := func(s string) {
			notesMu.Lock()
			defer notesMu.Unlock()
			notes = append(notes, s)
		}
		fetch := func(key string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					if asyncio.IsCancelled(err) {
						note(key + " cancelled")
					}
					return "", err
				}
				if key == "bad" {
					return "", &lookupError{pyExc{"LookupError", key}}
				}
				return strings.ToUpper(key), nil
			}
		}
		ticker := func(t *asyncio.T) (struct{}, error) {
			n := 0
			for {
				if err := asyncio.Sleep(t, 70*ms); err != nil {
					if asyncio.IsCancelled(err) {
						note(fmt.Sprintf("ticker cancelled after %d ticks", n))
					}
					return noValue, err
				}
				n++
			}
		}
		shutdown := func(t *asyncio.T) (int, error) {
			var rest []asyncio.Awaitable
			for _, x := range asyncio.AllTasks(t) {
				if x != t {
					x.Cancel()
					rest = append(rest, x)
				}
			}
			res, err := asyncio.GatherAnyOutcomes(t, rest...).Await(t)
			return len(res), err
		}

		loop := asyncio.NewLoop()
		t0 := loop.Time()
		log := func(format string, args ...any) {
			fmt.Fprintf(&out, "%.1f %s\n", (loop.Time() - t0).Seconds(), fmt.Sprintf(format, args...))
		}
		stopped := make(chan error, 1)
		go func() { stopped <- loop.RunForever() }()
		asyncio.RunCoroutineThreadsafe(loop, ticker)
		cf := asyncio.RunCoroutineThreadsafe(loop, fetch("a", 160*ms))
		v, err := resultTimeout(context.Background(), cf, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		log("a -> %s", v)
		cf = asyncio.RunCoroutineThreadsafe(loop, fetch("bad", 40*ms))
		if _, err := cf.Result(); errors.As(err, new(*lookupError)) {
			_, again := cf.Result()
			log("bad raised %s exception() %s", pd(err), pd(again))
		} else {
			t.Fatalf("bad: %v", err)
		}
		keys := []string{"x", "y", "z", "w"}
		delays := []time.Duration{50 * ms, 500 * ms, 120 * ms, 900 * ms}
		batch := map[string]*asyncio.ConcurrentFuture[string]{}
		for i, k := range keys {
			batch[k] = asyncio.RunCoroutineThreadsafe(loop, fetch(k, delays[i]))
		}
		wctx, cancel := context.WithTimeout(context.Background(), 200*ms)
		for _, k := range keys {
			_ = batch[k].Wait(wctx)
		}
		cancel()
		var done, notDone []string
		for _, k := range slices.Sorted(maps.Keys(batch)) {
			if batch[k].Done() {
				done = append(done, k)
			} else {
				notDone = append(notDone, k)
			}
		}
		log("batch done %s pending %s", pstrs(done), pstrs(notDone))
		for _, k := range notDone {
			f := batch[k]
			cancelled := f.Cancel()
			log("cancel %s -> %s cancelled %s", k, pb(cancelled), pb(f.Cancelled()))
		}
		if _, err := batch["y"].Result(); asyncio.IsCancelled(err) {
			log("y result raises CancelledError")
		}
		n, err := resultTimeout(context.Background(), asyncio.RunCoroutineThreadsafe(loop, shutdown), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		log("shutdown gathered %d", n)
		if _, err := loop.CallSoonThreadsafe(loop.Stop); err != nil {
			t.Fatal(err)
		}
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		log("loop running %s tasks left %d", pb(loop.IsRunning()), len(asyncio.AllTasks(loop)))
		if err := loop.Close(); err != nil {
			t.Fatal(err)
		}
		notesMu.Lock()
		log("closed %s notes %s", pb(loop.IsClosed()), pstrs(notes))
		notesMu.Unlock()
		if got, want := out.String(), cpythonTrace("p176_background_loop"); got != want {
			t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
		}
	})
}

// ---------------------------------------------------------------------------
// p177_crash_reporter.py

// The reports come at the loop's close (FUT-10), after main's last line
// as in the program, which drops its references last. The port keeps
// the tasks and the future reachable until Run returns, so that the
// report is the one Close makes (a collection before it would make it
// from the future's cleanup, where the future is gone).
func TestPortCrashReporter(t *testing.T) {
	var keep []any
	runPort(t, cpythonTrace("p177_crash_reporter"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			who := "-"
			switch f := ctx.Future.(type) {
			case *asyncio.T:
				who = "task " + f.Name()
			case *asyncio.Future[struct{}]:
				who = "future done=" + pb(f.Done())
			}
			msg, _, _ := strings.Cut(ctx.Message, ":")
			p.log("report: %s | %s | %s %s", msg, who, pd(ctx.Err), ctxKeys(ctx))
		})
		job := func(name string, after time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, after); err != nil {
					return err
				}
				return newRuntimeError(name + " crashed")
			}
		}
		p.restart()
		index := asyncio.CreateTaskErr(tk, job("index", 50*ms), asyncio.WithName("index"))
		resize := asyncio.CreateTaskErr(tk, job("resize", 100*ms), asyncio.WithName("resize"))
		resize.AddDoneCallback(func() { p.log("resize watcher: %s", pd(resize.Err())) })
		upload := asyncio.CreateTaskErr(tk, job("upload", 160*ms), asyncio.WithName("upload"))
		thumb := asyncio.CreateTaskErr(tk, job("thumbnail", 200*ms), asyncio.WithName("thumbnail"))
		notify := asyncio.CreateTaskErr(tk, job("notify", 240*ms), asyncio.WithName("notify"))
		request := asyncio.NewFuture[struct{}](tk)
		loop.CallLater(120*ms, func() { _ = request.SetException(newConnectionError("request-7 reset")) })
		if _, err := upload.Await(tk); errors.As(err, new(*runtimeError)) {
			p.log("main: upload failed %s", pd(err))
		} else {
			return fmt.Errorf("upload: %v", err)
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("thumbnail done %s cancel -> %s", pb(thumb.Done()), pb(thumb.Cancel()))
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return err
		}
		p.log("main: drops %s and the request future, returns", pstrs([]string{index.Name(), notify.Name()}))
		keep = append(keep, index, request, notify, resize, upload, thumb)
		return nil
	})
	runtime.KeepAlive(keep)
}

// ---------------------------------------------------------------------------
// p178_sensor_bus.py

// The loop is held inside a callback waiting on a channel, as the
// program's hold_loop waits on a threading.Event; README maps a closed
// loop's RuntimeError to ErrLoopClosed.
func TestPortSensorBus(t *testing.T) {
	var readings []string
	p := &probe{}
	deliver := func(name string, value int) func() {
		return func() {
			if value < 0 {
				panic(newValueError(fmt.Sprintf("%s reading %d", name, value)))
			}
			readings = append(readings, fmt.Sprintf("%s=%d", name, value))
			p.log("deliver %s %d", name, value)
		}
	}
	var closed *asyncio.Loop
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		loop := tk.Loop()
		closed = loop
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			words := strings.Split(ctx.Message, " ")
			p.log("handler: %s %s", strings.Join(words[:3], " "), pexc(ctx.Err))
		})
		p.restart()
		pool := &goPool{}
		sensor := func(name string, value int) func(context.Context) (string, error) {
			return func(context.Context) (string, error) {
				if _, err := loop.CallSoonThreadsafe(deliver(name, value)); err != nil {
					return "", err
				}
				return name + " sent", nil
			}
		}
		for _, r := range []struct {
			name  string
			value int
		}{{"t1", 21}, {"t2", -5}, {"t3", 19}} {
			v, err := asyncio.RunInExecutorOn(tk, pool, sensor(r.name, r.value)).Await(tk)
			if err != nil {
				return noValue, err
			}
			p.log("job -> %s", v)
		}

		var held *asyncio.Handle
		asked, answered := make(chan struct{}), make(chan struct{})
		lateSensor := func(context.Context) (bool, error) {
			<-asked
			var err error
			if held, err = loop.CallSoonThreadsafe(deliver("held", 1)); err != nil {
				return false, err
			}
			h2, err := loop.CallSoonThreadsafe(deliver("self-cancelled", 2))
			if err != nil {
				return false, err
			}
			h2.Cancel()
			close(answered)
			return h2.Cancelled(), nil
		}
		job := asyncio.RunInExecutorOn(tk, pool, lateSensor)
		loop.CallSoon(func() {
			close(asked)
			//asynciovet:ignore blockingcall the program's hold_loop waits for the thread inside a callback: holding the loop is what the port checks
			<-answered
			held.Cancel()
			p.log("loop held: cancelled the handle %s", pb(held.Cancelled()))
		})
		v, err := job.Await(tk)
		if err != nil {
			return noValue, err
		}
		p.log("self-cancelled -> %s", pb(v))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return noValue, err
		}
		p.log("readings %s", pstrs(readings))
		//asynciovet:ignore blockingcall the program's pool.shutdown(wait=True) on the loop; every job has returned by then
		pool.wg.Wait()
		return noValue, nil
	}, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatalf("main failed: %v\n%s", err, p.b.String())
	}
	if _, err := closed.CallSoonThreadsafe(deliver("after", 0)); errors.Is(err, asyncio.ErrLoopClosed) {
		p.b.WriteString("after run: RuntimeError(Event loop is closed)\n")
	}
	if got, want := p.b.String(), cpythonTrace("p178_sensor_bus"); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p179_cpu_hog_fairness.py

// The CPU work is time.Sleep in the task, as the program's time.sleep,
// in a synctest bubble on the loop's real clock (as p175).
func TestPortCPUHogFairness(t *testing.T) {
	runPortBubble(t, cpythonTrace("p179_cpu_hog_fairness"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		export := func(t *asyncio.T) (struct{}, error) {
			for i := range 3 {
				//asynciovet:ignore blockingcall the program's time.sleep, CPU work holding the loop: that is what the port checks
				time.Sleep(60 * ms)
				p.log("export chunk %d", i)
				if err := asyncio.Sleep(t, 0); err != nil {
					return noValue, err
				}
			}
			p.log("export done")
			return noValue, nil
		}
		api := func(t *asyncio.T) (struct{}, error) {
			for i := range 5 {
				p.log("api step %d", i)
				if err := asyncio.Sleep(t, 0); err != nil {
					return noValue, err
				}
			}
			return noValue, nil
		}
		heartbeat := func(t *asyncio.T) (struct{}, error) {
			loop := t.Loop()
			for i := range 4 {
				expected := loop.Time() + 20*ms
				if err := asyncio.Sleep(t, 20*ms); err != nil {
					return noValue, err
				}
				how := "on time"
				if loop.Time()-expected > 10*ms {
					how = "late"
				}
				p.log("heartbeat %d %s", i, how)
			}
			return noValue, nil
		}
		p.restart()
		loop.CallLater(30*ms, func() { p.log("timer 0.03") })
		loop.CallLater(70*ms, func() { p.log("timer 0.07") })
		if _, err := asyncio.GatherFuncs(tk, export, api, heartbeat).Await(tk); err != nil {
			return err
		}
		p.log("all done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p180_dispatch_queues.py

// urgentJob is the program's (priority, name) tuple.
type urgentJob struct {
	prio int
	name string
}

func urgentLess(a, b urgentJob) bool {
	return a.prio < b.prio || a.prio == b.prio && a.name < b.name
}

func TestPortDispatchQueues(t *testing.T) {
	runPort(t, cpythonTrace("p180_dispatch_queues"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		urgent := asyncio.NewPriorityQueue[urgentJob](3, urgentLess)
		for _, job := range []urgentJob{{3, "reindex"}, {1, "page-oncall"}, {2, "rotate-keys"}} {
			if err := urgent.PutNowait(job); err != nil {
				return err
			}
		}
		admit := func(job urgentJob) (string, error) {
			err := urgent.PutNowait(job)
			if err == nil {
				return "admitted", nil
			}
			if !errors.Is(err, asyncio.ErrQueueFull) {
				return "", err
			}
			var entries []urgentJob
			for {
				e, err := urgent.GetNowait()
				if errors.Is(err, asyncio.ErrQueueEmpty) {
					break
				}
				entries = append(entries, e)
			}
			for range entries {
				if err := urgent.TaskDone(); err != nil {
					return "", err
				}
			}
			slices.SortFunc(entries, func(a, b urgentJob) int {
				if urgentLess(a, b) {
					return -1
				}
				if urgentLess(b, a) {
					return 1
				}
				return 0
			})
			shed := job
			if last := entries[len(entries)-1]; urgentLess(job, last) {
				shed = last
				entries = append(entries[:len(entries)-1], job)
			}
			for _, e := range entries {
				if err := urgent.PutNowait(e); err != nil {
					return "", err
				}
			}
			return "full, shed " + shed.name, nil
		}
		for _, x := range []struct {
			label string
			job   urgentJob
		}{{"flush-cache", urgentJob{4, "flush-cache"}}, {"fail-over", urgentJob{0, "fail-over"}}} {
			res, err := admit(x.job)
			if err != nil {
				return err
			}
			p.log("admit %s: %s", x.label, res)
		}
		var order []string
		for !urgent.Empty() {
			e, err := urgent.GetNowait()
			if err != nil {
				return err
			}
			order = append(order, e.name)
			if err := urgent.TaskDone(); err != nil {
				return err
			}
		}
		p.log("urgent order %s", pstrs(order))

		undo := asyncio.NewLifoQueue[string](0)
		for _, step := range []string{"create", "rename", "move"} {
			if err := undo.PutNowait(step); err != nil {
				return err
			}
		}
		var undone []string
		for {
			s, err := undo.GetNowait()
			if errors.Is(err, asyncio.ErrQueueEmpty) {
				p.log("undone %s empty %s", pstrs(undone), pb(undo.Empty()))
				break
			}
			undone = append(undone, s)
		}

		work := asyncio.NewQueue[string](0)
		w := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			for {
				item, err := work.Get(t)
				if err != nil {
					return err
				}
				p.log("worker got %s qsize %d", item, work.Len())
				if err := asyncio.Sleep(t, 50*ms); err != nil {
					return err
				}
				if err := work.TaskDone(); err != nil {
					return err
				}
			}
		})
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := work.PutNowait("a"); err != nil {
			return err
		}
		p.log("after put_nowait qsize %d", work.Len())
		if err := work.PutNowait("b"); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("next iteration qsize %d", work.Len())
		if err := work.Join(tk); err != nil {
			return err
		}
		p.log("joined")
		if err := work.TaskDone(); errors.Is(err, asyncio.ErrValue) {
			p.log("extra task_done: %s", pdValue(err))
		}
		w.Cancel()
		if _, err := asyncio.GatherOutcomes[struct{}](tk, w).Await(tk); err != nil {
			return err
		}

		small := asyncio.NewQueue[string](1)
		if err := small.PutNowait("x"); err != nil {
			return err
		}
		put := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			if err := small.Put(t, "y"); err != nil {
				return err
			}
			p.log("blocked put resumed, qsize %d", small.Len())
			return nil
		})
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("put waiting %s full %s", pb(!put.Done()), pb(small.Full()))
		x, err := small.GetNowait()
		if err != nil {
			return err
		}
		p.log("get_nowait %s full %s", x, pb(small.Full()))
		if _, err := put.Await(tk); err != nil {
			return err
		}
		y, err := small.GetNowait()
		if err != nil {
			return err
		}
		p.log("small holds %s", y)
		return nil
	})
}
