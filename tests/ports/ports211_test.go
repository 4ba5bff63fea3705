//go:build unix

package ports_test

// Ports p211 onward (h42): the patterns of popular asyncio libraries,
// written in plain asyncio: an aiohttp-like client session, an
// asyncpg-like pool, a websockets-like keepalive, aiofiles-like file ops,
// anyio-like cancel scopes, an async LRU cache, a backoff decorator, a
// server's graceful shutdown, a circuit breaker, debounce and throttle,
// a pub/sub with dropped slow subscribers, an AsyncExitStack, a
// supervisor and a batching writer. Same conventions as ports_test.go;
// the network programs run on the simulated network (simLocal), as p153.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// pints is repr of a list of ints.
func pints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// errFuncs turns coroutine functions without a value into GatherFuncs'.
func errFuncs(fns []func(*asyncio.T) error) []func(*asyncio.T) (struct{}, error) {
	out := make([]func(*asyncio.T) (struct{}, error), len(fns))
	for i, fn := range fns {
		out[i] = func(t *asyncio.T) (struct{}, error) { return noValue, fn(t) }
	}
	return out
}

// ---------------------------------------------------------------------------
// p211_client_session_pool.py

type sessionConn struct {
	name string
	r    *aio.StreamReader
	w    *aio.StreamWriter
}

type hostPool struct {
	sem  *asyncio.Semaphore
	idle []*sessionConn
	made int
}

func TestPortClientSessionPool(t *testing.T) {
	runPort(t, cpythonTrace("p211_client_session_pool"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		delays := map[string]time.Duration{"/a": 100 * ms, "/b": 200 * ms, "/slow": 600 * ms, "/flaky": 80 * ms}
		serverDisconnected := func(m string) error { return &connectionError{pyExc{"ServerDisconnectedError", m}} }
		poolTimeout := func(m string) error { return &deadlineError{pyExc{"PoolTimeoutError", m}} }

		makeHandler := func(name string) func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
			flaky := 0
			return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				for {
					line, err := r.ReadLine(t)
					if err != nil {
						return err
					}
					if len(line) == 0 {
						break
					}
					path := strings.Fields(string(line))[1]
					if path == "/flaky" && flaky == 0 {
						flaky++
						p.log("server %s drops the connection on %s", name, path)
						break
					}
					if err := asyncio.Sleep(t, delays[path]); err != nil {
						return err
					}
					if err := w.Write(fmt.Appendf(nil, "200 %s%s\n", name, path)); err != nil {
						return err
					}
					if err := w.Drain(t); err != nil {
						return err
					}
				}
				w.Close()
				return w.WaitClosed(t)
			}
		}

		// ClientSession(ports, limit_per_host=2, pool_timeout=0.25)
		const limit, poolTimeoutAfter = 2, 250 * ms
		ports := map[string]int{}
		pools := map[string]*hostPool{}
		var poolOrder []string
		acquire := func(t *asyncio.T, host string) (*hostPool, *sessionConn, error) {
			pool, ok := pools[host]
			if !ok {
				pool = &hostPool{sem: asyncio.NewSemaphore(limit)}
				pools[host] = pool
				poolOrder = append(poolOrder, host)
			}
			err := asyncio.Timeout(t, poolTimeoutAfter, func(*asyncio.TimeoutScope) error { return pool.sem.Acquire(t) })
			if errors.Is(err, asyncio.ErrTimeout) {
				return nil, nil, poolTimeout("no free connection to " + host)
			} else if err != nil {
				return nil, nil, err
			}
			if n := len(pool.idle); n > 0 {
				conn := pool.idle[n-1]
				pool.idle = pool.idle[:n-1]
				return pool, conn, nil
			}
			r, w, err := aio.OpenConnection(t, "127.0.0.1", ports[host], sim)
			if err != nil {
				_ = pool.sem.Release()
				return nil, nil, err
			}
			pool.made++
			return pool, &sessionConn{fmt.Sprintf("%s#%d", host, pool.made), r, w}, nil
		}
		release := func(pool *hostPool, conn *sessionConn, keep bool) {
			if keep {
				pool.idle = append(pool.idle, conn)
			} else {
				conn.w.Close()
			}
			_ = pool.sem.Release()
		}
		get := func(t *asyncio.T, host, path string) (status, via string, err error) {
			for attempt := 1; attempt <= 2; attempt++ {
				pool, conn, err := acquire(t, host)
				if err != nil {
					return "", "", err
				}
				keep := false
				err = conn.w.Write(fmt.Appendf(nil, "GET %s\n", path))
				var line []byte
				if err == nil {
					line, err = conn.r.ReadLine(t)
				}
				if err == nil && len(line) == 0 {
					err = serverDisconnected(conn.name + " closed")
				}
				if err == nil {
					keep = true
				}
				release(pool, conn, keep)
				var sd *connectionError
				if errors.As(err, &sd) && attempt == 1 {
					p.log("client retries %s after %s", host+path, pd(err))
					continue
				}
				if err != nil {
					return "", "", err
				}
				return strings.TrimSpace(string(line)), conn.name, nil
			}
			panic("unreachable")
		}
		closeSession := func(t *asyncio.T) error {
			for _, host := range poolOrder {
				pool := pools[host]
				for _, conn := range pool.idle {
					conn.w.Close()
					if err := conn.w.WaitClosed(t); err != nil {
						return err
					}
				}
				pool.idle = nil
			}
			return nil
		}

		p.restart()
		servers := map[string]*aio.Server{}
		for _, name := range []string{"A", "B"} {
			srv, err := aio.StartServer(tk, makeHandler(name), "127.0.0.1", 0, sim)
			if err != nil {
				return err
			}
			servers[name] = srv
			ports[name] = portOf(srv)
		}

		fetch := func(host, path string, delay time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				status, via, err := get(t, host, path)
				var sd *connectionError
				var pt *deadlineError
				switch {
				case err == nil:
					p.log("fetch %s -> %s via %s", host+path, status, via)
				case errors.As(err, &pt), errors.As(err, &sd):
					p.log("fetch %s failed %s", host+path, pd(err))
				default:
					return err
				}
				return nil
			}
		}
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, f := range []func(*asyncio.T) error{
				fetch("A", "/slow", 0),
				fetch("A", "/a", 10*ms),
				fetch("A", "/b", 20*ms),
				fetch("A", "/a", 30*ms),
				fetch("B", "/b", 70*ms),
				fetch("B", "/flaky", 300*ms),
			} {
				if _, err := asyncio.SpawnErr(g, f); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var parts []string
		for _, host := range poolOrder {
			pool := pools[host]
			var names []string
			for _, c := range pool.idle {
				names = append(names, c.name)
			}
			parts = append(parts, fmt.Sprintf("'%s': (%d, %s)", host, pool.made, pstrs(names)))
		}
		p.log("pools {%s}", strings.Join(parts, ", "))
		if err := closeSession(tk); err != nil {
			return err
		}
		for _, name := range []string{"A", "B"} {
			servers[name].Close()
			if err := servers[name].WaitClosed(tk); err != nil {
				return err
			}
		}
		p.log("closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p212_pg_pool.py

type pgConn struct {
	cid                int
	broken, terminated bool
	query              *asyncio.T
}

func connBroken(m string) error     { return &connectionError{pyExc{"ConnectionBrokenError", m}} }
func interfaceError(m string) error { return &runtimeError{pyExc{"InterfaceError", m}} }

// fetch is Conn.fetch.
func (c *pgConn) fetch(t *asyncio.T, q string, dur time.Duration, fail bool) (string, error) {
	c.query = t
	err := asyncio.Sleep(t, dur)
	if asyncio.IsCancelled(err) && c.terminated {
		t.Uncancel()
		err = connBroken(fmt.Sprintf("conn%d terminated", c.cid))
	}
	c.query = nil
	if err != nil {
		return "", err
	}
	if fail {
		c.broken = true
		return "", connBroken(fmt.Sprintf("conn%d lost during %s", c.cid, q))
	}
	return fmt.Sprintf("%s@conn%d", q, c.cid), nil
}

type pgPool struct {
	p        *probe
	min, max int
	free     *asyncio.Queue[*pgConn]
	conns    []*pgConn
	nextID   int
	inUse    map[*pgConn]bool
	closing  bool
	changed  *asyncio.Condition
	tasks    map[*asyncio.Task[struct{}]]bool
}

func newPgPool(p *probe, minSize, maxSize int) *pgPool {
	return &pgPool{p: p, min: minSize, max: maxSize, free: asyncio.NewQueue[*pgConn](0),
		inUse: map[*pgConn]bool{}, changed: asyncio.NewCondition(nil), tasks: map[*asyncio.Task[struct{}]]bool{}}
}

func (pl *pgPool) connect(t *asyncio.T) (*pgConn, error) {
	pl.nextID++
	c := &pgConn{cid: pl.nextID}
	pl.conns = append(pl.conns, c)
	if err := asyncio.Sleep(t, 80*ms); err != nil {
		return nil, err
	}
	pl.p.log("pool: opened conn %d", c.cid)
	return c, nil
}

func (pl *pgPool) init(t *asyncio.T) error {
	fns := make([]func(*asyncio.T) (*pgConn, error), pl.min)
	for i := range fns {
		fns[i] = pl.connect
	}
	cs, err := asyncio.GatherFuncs(t, fns...).Await(t)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := pl.free.PutNowait(c); err != nil {
			return err
		}
	}
	return nil
}

func (pl *pgPool) acquire(t *asyncio.T, timeout time.Duration) (*pgConn, error) {
	if pl.closing {
		return nil, interfaceError("pool is closing")
	}
	var c *pgConn
	var err error
	if pl.free.Empty() && len(pl.conns) < pl.max {
		c, err = pl.connect(t)
	} else {
		err = asyncio.Timeout(t, timeout, func(*asyncio.TimeoutScope) error {
			c, err = pl.free.Get(t)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	pl.inUse[c] = true
	return c, nil
}

func (pl *pgPool) replace(t *asyncio.T) error {
	c, err := pl.connect(t)
	if err != nil {
		return err
	}
	return pl.free.PutNowait(c)
}

func (pl *pgPool) release(t *asyncio.T, c *pgConn) error {
	delete(pl.inUse, c)
	if c.broken || c.terminated {
		if i := slices.Index(pl.conns, c); i >= 0 {
			pl.conns = slices.Delete(pl.conns, i, i+1)
		}
		if c.broken && !pl.closing {
			pl.p.log("pool: replacing broken conn %d", c.cid)
			task := asyncio.CreateTaskErr(t, pl.replace)
			pl.tasks[task] = true
			task.AddDoneCallback(func() { delete(pl.tasks, task) })
		}
	} else if err := pl.free.PutNowait(c); err != nil {
		return err
	}
	return asyncio.WithLock(t, pl.changed, func() error {
		pl.changed.NotifyAll()
		return nil
	})
}

// connection is `async with pool.connection(timeout) as c: body(c)`.
func (pl *pgPool) connection(t *asyncio.T, timeout time.Duration, body func(c *pgConn) error) error {
	c, err := pl.acquire(t, timeout)
	if err != nil {
		return err
	}
	err = body(c)
	if rerr := pl.release(t, c); rerr != nil {
		return rerr
	}
	return err
}

func (pl *pgPool) close(t *asyncio.T) error {
	pl.closing = true
	err := asyncio.WithLock(t, pl.changed, func() error {
		pl.p.log("pool: close waits for %d in use", len(pl.inUse))
		return pl.changed.WaitFor(t, func() bool { return len(pl.inUse) == 0 })
	})
	if err != nil {
		return err
	}
	for !pl.free.Empty() {
		c, err := pl.free.GetNowait()
		if err != nil {
			return err
		}
		if err := asyncio.Sleep(t, 10*ms); err != nil { // Conn.close
			return err
		}
		pl.p.log("conn %d closed", c.cid)
	}
	pl.p.log("pool: closed")
	return nil
}

func (pl *pgPool) terminate() {
	pl.closing = true
	for _, c := range slices.Clone(pl.conns) {
		c.terminated = true
		if c.query != nil {
			c.query.Cancel()
		}
		pl.p.log("conn %d terminated", c.cid)
	}
}

func TestPortPgPool(t *testing.T) {
	runPort(t, cpythonTrace("p212_pg_pool"), func(p *probe, tk *asyncio.T) error {
		query := func(pool *pgPool, name string, delay, dur, timeout time.Duration, fail bool) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				err := pool.connection(t, timeout, func(c *pgConn) error {
					p.log("%s got conn %d", name, c.cid)
					v, err := c.fetch(t, name, dur, fail)
					if err != nil {
						return err
					}
					p.log("%s -> %s", name, v)
					return nil
				})
				var ce *connectionError
				var ie *runtimeError
				switch {
				case errors.Is(err, asyncio.ErrTimeout), errors.As(err, &ce), errors.As(err, &ie):
					p.log("%s failed %s", name, pd(err))
					return nil
				case asyncio.IsCancelled(err):
					p.log("%s cancelled, free %d in use %d", name, pool.free.Len(), len(pool.inUse))
				}
				return err
			}
		}

		p.restart()
		pool := newPgPool(p, 2, 3)
		if err := pool.init(tk); err != nil {
			return err
		}
		const dflt = 200 * ms
		qs := []*asyncio.Task[struct{}]{
			asyncio.CreateTaskErr(tk, query(pool, "q1", 0, 320*ms, dflt, false)),
			asyncio.CreateTaskErr(tk, query(pool, "q2", 0, 100*ms, dflt, true)),
			asyncio.CreateTaskErr(tk, query(pool, "q3", 10*ms, 220*ms, dflt, false)),
			asyncio.CreateTaskErr(tk, query(pool, "q4", 20*ms, 120*ms, dflt, false)),
			asyncio.CreateTaskErr(tk, query(pool, "q5", 30*ms, 100*ms, 80*ms, false)),
			asyncio.CreateTaskErr(tk, query(pool, "q6", 40*ms, 500*ms, 300*ms, false)),
		}
		if err := asyncio.Sleep(tk, 420*ms); err != nil {
			return err
		}
		qs[5].Cancel()
		qs = append(qs, asyncio.CreateTaskErr(tk, query(pool, "q7", 60*ms, 200*ms, dflt, false)))
		if err := asyncio.Sleep(tk, 80*ms); err != nil {
			return err
		}
		closer := asyncio.CreateTaskErr(tk, pool.close)
		qs = append(qs, asyncio.CreateTaskErr(tk, query(pool, "q8", 30*ms, 100*ms, dflt, false)))
		if _, err := closer.Await(tk); err != nil {
			return err
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(qs)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range res {
			outs = append(outs, "'"+pd(o.Err)+"'")
		}
		p.log("outcomes [%s]", strings.Join(outs, ", "))

		pool2 := newPgPool(p, 1, 1)
		if err := pool2.init(tk); err != nil {
			return err
		}
		holder := asyncio.CreateTaskErr(tk, query(pool2, "long", 0, 10*time.Second, dflt, false))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		pool2.terminate()
		if _, err := holder.Await(tk); err != nil {
			return err
		}
		p.log("pool2 conns %d free %d", len(pool2.conns), pool2.free.Len())
		return nil
	})
}

// ---------------------------------------------------------------------------
// p213_ws_keepalive.py

// wsClosed is the program's ConnectionClosed.
type wsClosed struct {
	code   int
	reason string
}

func (e *wsClosed) Error() string { return fmt.Sprintf("%d %s", e.code, e.reason) }
func (e *wsClosed) pyRepr() (string, string) {
	return "ConnectionClosed", e.Error()
}

type wsClient struct {
	p                         *probe
	name                      string
	r                         *aio.StreamReader
	w                         *aio.StreamWriter
	pingInterval, pingTimeout time.Duration
	pongs                     map[int]*asyncio.Future[struct{}]
	n                         int
}

func (ws *wsClient) send(parts ...any) error {
	s := make([]string, len(parts))
	for i, x := range parts {
		s[i] = fmt.Sprint(x)
	}
	return ws.w.Write([]byte(strings.Join(s, " ") + "\n"))
}

func (ws *wsClient) readLoop(t *asyncio.T) (int, error) {
	for {
		line, err := ws.r.ReadLine(t)
		if err != nil {
			return 0, err
		}
		if len(line) == 0 {
			return 0, &wsClosed{1006, "abnormal closure"}
		}
		kind, rest, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
		switch kind {
		case "PONG":
			n, _ := strconv.Atoi(rest)
			fut, ok := ws.pongs[n]
			delete(ws.pongs, n)
			if ok && !fut.Done() {
				_ = fut.SetResult(noValue)
			}
		case "TEXT":
			ws.p.log("%s recv %s", ws.name, rest)
		case "CLOSE":
			code, reason, _ := strings.Cut(rest, " ")
			ws.p.log("%s peer closed %s %s", ws.name, code, reason)
			return strconv.Atoi(code)
		}
	}
}

func (ws *wsClient) keepalive(t *asyncio.T) error {
	for {
		if err := asyncio.Sleep(t, ws.pingInterval); err != nil {
			return err
		}
		ws.n++
		fut := asyncio.NewFuture[struct{}](t.Loop())
		ws.pongs[ws.n] = fut
		if err := ws.send("PING", ws.n); err != nil {
			return err
		}
		err := asyncio.Timeout(t, ws.pingTimeout, func(*asyncio.TimeoutScope) error {
			_, err := fut.Await(t)
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			ws.p.log("%s pong %d timed out", ws.name, ws.n)
			if err := ws.send("CLOSE", 1011, "keepalive ping timeout"); err != nil {
				return err
			}
			ws.w.Close()
			return &wsClosed{1011, "keepalive ping timeout"}
		} else if err != nil {
			return err
		}
		ws.p.log("%s pong %d", ws.name, ws.n)
	}
}

func TestPortWsKeepalive(t *testing.T) {
	runPort(t, cpythonTrace("p213_ws_keepalive"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		wsServer := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			frozen := false
			for {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					p.log("server: connection dropped")
					break
				}
				kind, rest, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
				if kind == "PING" && !frozen {
					err = w.Write([]byte("PONG " + rest + "\n"))
				} else if kind == "TEXT" {
					if rest == "freeze" {
						frozen = true
						p.log("server: stops answering pings")
					}
					err = w.Write([]byte("TEXT echo:" + rest + "\n"))
				} else if kind == "CLOSE" {
					p.log("server: got close %s", rest)
					if err := w.Write([]byte("CLOSE " + strings.Fields(rest)[0] + " ok\n")); err != nil {
						return err
					}
					break
				}
				if err != nil {
					return err
				}
			}
			w.Close()
			return w.WaitClosed(t)
		}
		type step struct {
			delay time.Duration
			msg   string
		}
		session := func(t *asyncio.T, name string, port int, script []step) error {
			reader, writer, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
			if err != nil {
				return err
			}
			ws := &wsClient{p: p, name: name, r: reader, w: writer, pingInterval: 200 * ms, pingTimeout: 100 * ms,
				pongs: map[int]*asyncio.Future[struct{}]{}}
			var ka *asyncio.Task[struct{}]
			var code int
			err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				rt, err := asyncio.Spawn(g, ws.readLoop)
				if err != nil {
					return err
				}
				if ka, err = asyncio.SpawnErr(g, ws.keepalive); err != nil {
					return err
				}
				for _, s := range script {
					if err := asyncio.Sleep(t, s.delay); err != nil {
						return err
					}
					if err := ws.send("TEXT", s.msg); err != nil {
						return err
					}
				}
				if err := ws.send("CLOSE", 1000, "bye"); err != nil {
					return err
				}
				p.log("%s sent close 1000", name)
				if code, err = rt.Await(t); err != nil {
					return err
				}
				ka.Cancel()
				writer.Close()
				return writer.WaitClosed(t)
			})
			if err == nil {
				p.log("%s closed cleanly with %d", name, code)
			}
			err = asyncio.ExceptStar(err, asyncio.Except[*wsClosed](func(eg *asyncio.ExceptionGroup) error {
				var codes []string
				for _, e := range eg.Errs {
					codes = append(codes, strconv.Itoa(e.(*wsClosed).code))
				}
				p.log("%s closed with [%s] %s", name, strings.Join(codes, ", "), pd(eg.Errs[0]))
				return nil
			}))
			if err != nil {
				return err
			}
			var pending []string
			for _, n := range slices.Sorted(maps.Keys(ws.pongs)) {
				pending = append(pending, strconv.Itoa(n))
			}
			p.log("%s pending pongs [%s] keepalive cancelled %s", name, strings.Join(pending, ", "), pb(ka.Cancelled()))
			return nil
		}

		p.restart()
		server, err := aio.StartServer(tk, wsServer, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		if err := session(tk, "s1", port, []step{{70 * ms, "hello"}, {300 * ms, "world"}}); err != nil {
			return err
		}
		if err := session(tk, "s2", port, []step{{90 * ms, "freeze"}, {500 * ms, "never sent"}}); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p215_cancel_scopes.py

// cancelScope is the program's CancelScope: asyncio.Timeout underneath,
// cancel() cancelling the task that entered it, and run the `async with`.
type cancelScope struct {
	p                             *probe
	name                          string
	delay                         time.Duration
	raiseTimeout                  bool
	cancelCalled, cancelledCaught bool
	task                          *asyncio.T
}

func moveOnAfter(p *probe, name string, delay time.Duration) *cancelScope {
	return &cancelScope{p: p, name: name, delay: delay}
}

func failAfter(p *probe, name string, delay time.Duration) *cancelScope {
	return &cancelScope{p: p, name: name, delay: delay, raiseTimeout: true}
}

func (s *cancelScope) cancel() {
	if !s.cancelCalled {
		s.cancelCalled = true
		s.task.Cancel(s.name + " cancelled")
	}
}

func (s *cancelScope) run(t *asyncio.T, body func() error) error {
	s.task = t
	var tm *asyncio.TimeoutScope
	err := asyncio.Timeout(t, s.delay, func(sc *asyncio.TimeoutScope) error {
		tm = sc
		return body()
	})
	if tm.Expired() && errors.Is(err, asyncio.ErrTimeout) {
		s.cancelledCaught = true
		s.p.log("%s deadline passed", s.name)
		if s.raiseTimeout {
			return err
		}
		return nil
	}
	if s.cancelCalled && asyncio.IsCancelled(err) && t.Uncancel() == 0 {
		s.cancelledCaught = true
		s.p.log("%s cancel() caught", s.name)
		return nil
	}
	return err
}

func TestPortCancelScopes(t *testing.T) {
	runPort(t, cpythonTrace("p215_cancel_scopes"), func(p *probe, tk *asyncio.T) error {
		release := func(name string, dur time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, dur); err != nil {
					return err
				}
				p.log("%s released its resource", name)
				return nil
			}
		}
		withResource := func(t *asyncio.T, name string, deadline time.Duration) error {
			err := failAfter(p, name, deadline).run(t, func() error { return asyncio.Sleep(t, time.Second) })
			// finally:
			cleanup := asyncio.CreateTaskErr(t, release(name, 180*ms))
			if _, cerr := asyncio.Shield[struct{}](cleanup).Await(t); asyncio.IsCancelled(cerr) {
				p.log("%s cancelled during cleanup %s - waits for it", name, pd(cerr))
				if _, err := cleanup.Await(t); err != nil {
					return err
				}
				return cerr
			} else if cerr != nil {
				return cerr
			}
			return err
		}

		p.restart()
		s1 := moveOnAfter(p, "s1", 200*ms)
		err := s1.run(tk, func() error {
			if err := asyncio.Sleep(tk, time.Second); err != nil {
				return err
			}
			p.log("not reached")
			return nil
		})
		if err != nil {
			return err
		}
		p.log("s1 caught %s", pb(s1.cancelledCaught))

		outer := moveOnAfter(p, "outer", 500*ms)
		err = outer.run(tk, func() error {
			inner := failAfter(p, "inner", 200*ms)
			err := inner.run(tk, func() error { return asyncio.Sleep(tk, time.Second) })
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("inner raised TimeoutError, caught %s", pb(inner.cancelledCaught))
			} else if err != nil {
				return err
			}
			return asyncio.Sleep(tk, time.Second)
		})
		if err != nil {
			return err
		}
		p.log("outer caught %s task cancelling %d", pb(outer.cancelledCaught), tk.Cancelling())

		outer2, inner2 := moveOnAfter(p, "outer2", 100*ms), moveOnAfter(p, "inner2", 300*ms)
		err = outer2.run(tk, func() error {
			if err := inner2.run(tk, func() error { return asyncio.Sleep(tk, time.Second) }); err != nil {
				return err
			}
			p.log("not reached either")
			return nil
		})
		if err != nil {
			return err
		}
		p.log("outer2 caught %s inner2 caught %s", pb(outer2.cancelledCaught), pb(inner2.cancelledCaught))

		quick := failAfter(p, "quick", 300*ms)
		if err := quick.run(tk, func() error { return asyncio.Sleep(tk, 160*ms) }); err != nil {
			return err
		}
		p.log("quick caught %s", pb(quick.cancelledCaught))

		scopes := map[string]*cancelScope{}
		worker := func(t *asyncio.T) (string, error) {
			scopes["manual"] = &cancelScope{p: p, name: "manual", delay: asyncio.Never}
			if err := scopes["manual"].run(t, func() error { return asyncio.Sleep(t, time.Second) }); err != nil {
				return "", err
			}
			p.log("worker goes on after its scope, cancelling %d", t.Cancelling())
			if err := asyncio.Sleep(t, 30*ms); err != nil {
				return "", err
			}
			return "worker done", nil
		}
		w := asyncio.CreateTask(tk, worker)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		scopes["manual"].cancel()
		got, err := w.Await(tk)
		if err != nil {
			return err
		}
		p.log("main got %s scope caught %s", got, pb(scopes["manual"].cancelledCaught))

		r1 := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error { return withResource(t, "r1", 190*ms) })
		if err := asyncio.Sleep(tk, 290*ms); err != nil {
			return err
		}
		r1.Cancel("shutdown")
		if _, err := r1.Await(tk); asyncio.IsCancelled(err) {
			p.log("r1 ended %s cancelled %s", pd(err), pb(r1.Cancelled()))
		} else {
			return fmt.Errorf("r1: %v", err)
		}
		err = withResource(tk, "r2", 120*ms)
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("r2 raised TimeoutError after its cleanup")
			return nil
		}
		return err
	})
}

// ---------------------------------------------------------------------------
// p216_async_lru.py

// asyncLRU is the program's AsyncLRU: keys in order of use, least
// recent first (the OrderedDict).
type asyncLRU struct {
	p            *probe
	fn           func(*asyncio.T, string) (string, error)
	maxsize      int
	order        []string
	cache        map[string]string
	inflight     map[string]*asyncio.Task[string]
	inflightKeys []string // the dict's insertion order
	hits, shared int
}

func (c *asyncLRU) moveToEnd(key string) {
	i := slices.Index(c.order, key)
	c.order = append(slices.Delete(c.order, i, i+1), key)
}

func (c *asyncLRU) call(t *asyncio.T, key string) (string, error) {
	if v, ok := c.cache[key]; ok {
		c.moveToEnd(key)
		c.hits++
		return v, nil
	}
	task, ok := c.inflight[key]
	if !ok {
		task = asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { return c.load(t, key) })
		c.inflight[key] = task
		c.inflightKeys = append(c.inflightKeys, key)
	} else {
		c.shared++
	}
	return asyncio.Shield[string](task).Await(t)
}

func (c *asyncLRU) load(t *asyncio.T, key string) (string, error) {
	value, err := c.fn(t, key)
	delete(c.inflight, key) // finally
	c.inflightKeys = slices.DeleteFunc(c.inflightKeys, func(k string) bool { return k == key })
	if err != nil {
		return "", err
	}
	if _, ok := c.cache[key]; ok {
		c.moveToEnd(key)
	} else {
		c.order = append(c.order, key)
	}
	c.cache[key] = value
	if len(c.cache) > c.maxsize {
		old := c.order[0]
		c.order = c.order[1:]
		delete(c.cache, old)
		c.p.log("evicted %s", old)
	}
	return value, nil
}

func TestPortAsyncLRU(t *testing.T) {
	runPort(t, cpythonTrace("p216_async_lru"), func(p *probe, tk *asyncio.T) error {
		var loads []string
		fetchUser := func(t *asyncio.T, key string) (string, error) {
			loads = append(loads, key)
			p.log("load %s", key)
			d := 200 * ms
			if key == "slow" {
				d = 500 * ms
			}
			if err := asyncio.Sleep(t, d); err != nil {
				return "", err
			}
			if strings.HasPrefix(key, "bad") {
				return "", &keyError{pyExc{"LookupError", "no user " + key}}
			}
			return strings.ToUpper(key), nil
		}
		caller := func(cache *asyncLRU, name, key string, delay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return "", err
				}
				value, err := cache.call(t, key)
				var le *keyError
				switch {
				case err == nil:
					p.log("%s got %s", name, value)
					return value, nil
				case errors.As(err, &le):
					p.log("%s failed %s", name, pd(err))
					return "", nil
				case asyncio.IsCancelled(err):
					p.log("%s cancelled", name)
				}
				return "", err
			}
		}

		p.restart()
		cache := &asyncLRU{p: p, fn: fetchUser, maxsize: 2, cache: map[string]string{}, inflight: map[string]*asyncio.Task[string]{}}

		var c []*asyncio.Task[string]
		for i := range 3 {
			c = append(c, asyncio.CreateTask(tk, caller(cache, fmt.Sprintf("c%d", i), "a", time.Duration(i)*10*ms)))
		}
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		c[0].Cancel()
		if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(c)...).Await(tk); err != nil {
			return err
		}
		p.log("loads %s shared %d in flight %s", pstrs(loads), cache.shared, pstrs(cache.inflightKeys))
		if _, err := caller(cache, "c3", "a", 0)(tk); err != nil {
			return err
		}

		if _, err := asyncio.GatherFuncs(tk, caller(cache, "e1", "bad", 0), caller(cache, "e2", "bad", 30*ms)).Await(tk); err != nil {
			return err
		}
		if _, err := caller(cache, "e3", "bad", 0)(tk); err != nil {
			return err
		}
		p.log("cached after errors %s", pstrs(cache.order))

		for _, nk := range [][2]string{{"b1", "b"}, {"a again", "a"}, {"c1", "c"}} {
			if _, err := caller(cache, nk[0], nk[1], 0)(tk); err != nil {
				return err
			}
		}
		p.log("cache %s hits %d", pstrs(cache.order), cache.hits)

		var s []*asyncio.Task[string]
		for i := range 2 {
			s = append(s, asyncio.CreateTask(tk, caller(cache, fmt.Sprintf("s%d", i), "slow", 0)))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		for _, task := range s {
			task.Cancel()
		}
		if _, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(s)...).Await(tk); err != nil {
			return err
		}
		p.log("callers gone, in flight %s", pstrs(cache.inflightKeys))
		if err := asyncio.Sleep(tk, 480*ms); err != nil {
			return err
		}
		p.log("cache %s", pstrs(cache.order))
		if _, err := caller(cache, "s2", "slow", 0)(tk); err != nil {
			return err
		}
		p.log("loads %s hits %d shared %d", pstrs(loads), cache.hits, cache.shared)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p217_backoff.py

// serviceError is the program's ServiceError.
type serviceError struct {
	msg  string
	code int
}

func (e *serviceError) Error() string            { return e.msg }
func (e *serviceError) pyRepr() (string, string) { return "ServiceError", e.msg }

// backoffDetails is the hooks' details dict.
type backoffDetails struct {
	target, args string
	tries        int
	wait         string
}

// backoffConfig is on_exception's keyword arguments (exc_type is
// *serviceError).
type backoffConfig struct {
	rng            *pyRandom
	base, maxValue float64
	factor         int
	maxTries       int           // 0: None
	maxTime        time.Duration // 0: None
	giveup         func(*serviceError) bool
	onBackoff      func(backoffDetails, time.Duration, error)
	onGiveup       func(backoffDetails, error)
	onSuccess      func(backoffDetails)
}

// onException is the decorator: it wraps fn, named target.
func onException(c backoffConfig, target string, fn func(*asyncio.T, string) (string, error)) func(*asyncio.T, string) (string, error) {
	if c.base == 0 {
		c.base, c.factor, c.maxValue = 0.1, 2, 0.8
	}
	if c.giveup == nil {
		c.giveup = func(*serviceError) bool { return false }
	}
	return func(t *asyncio.T, arg string) (string, error) {
		loop := t.Loop()
		start := loop.Time()
		tries := 0
		for {
			tries++
			ret, err := fn(t, arg)
			var e *serviceError
			if errors.As(err, &e) {
				elapsed := loop.Time() - start
				details := backoffDetails{target: target, args: "('" + arg + "',)", tries: tries}
				if c.giveup(e) || (c.maxTries != 0 && tries >= c.maxTries) || (c.maxTime != 0 && elapsed >= c.maxTime) {
					if c.onGiveup != nil {
						c.onGiveup(details, e)
					}
					return "", err
				}
				pow := 1 // factor ** (tries - 1)
				for range tries - 1 {
					pow *= c.factor
				}
				w := min(c.maxValue, c.base*float64(pow)) * c.rng.random() // rng.uniform(0, ...)
				wait := time.Duration(w * float64(time.Second))
				details.wait = fmt.Sprintf("%.3f", w)
				if c.maxTime != 0 && wait > c.maxTime-elapsed {
					wait = c.maxTime - elapsed
					details.wait = "cut to the time left"
				}
				if c.onBackoff != nil {
					c.onBackoff(details, wait, e)
				}
				if err := asyncio.Sleep(t, wait); err != nil {
					return "", err
				}
				continue
			} else if err != nil {
				return "", err
			}
			if c.onSuccess != nil {
				c.onSuccess(backoffDetails{target: target, args: "('" + arg + "',)", tries: tries})
			}
			return ret, nil
		}
	}
}

func TestPortBackoff(t *testing.T) {
	runPort(t, cpythonTrace("p217_backoff"), func(p *probe, tk *asyncio.T) error {
		logBackoff := func(details backoffDetails, _ time.Duration, e error) {
			p.log("backoff %s %s try %d wait %s %s", details.target, details.args, details.tries, details.wait, pd(e))
		}
		logGiveup := func(details backoffDetails, e error) {
			p.log("giveup %s %s after %d tries %s", details.target, details.args, details.tries, pd(e))
		}
		logSuccess := func(details backoffDetails) {
			p.log("success %s %s after %d tries", details.target, details.args, details.tries)
		}
		rng := newPyRandom(61)
		fails := map[string]int{"flaky": 3, "auth": 99, "down": 99, "capped": 99}
		calls := map[string]int{}

		callService := onException(backoffConfig{rng: rng, maxTries: 8, maxTime: 1200 * ms,
			giveup:    func(e *serviceError) bool { return e.code == 401 },
			onBackoff: logBackoff, onGiveup: logGiveup, onSuccess: logSuccess},
			"call_service", func(t *asyncio.T, name string) (string, error) {
				calls[name]++
				if err := asyncio.Sleep(t, 70*ms); err != nil {
					return "", err
				}
				if calls[name] <= fails[name] {
					code := 503
					if name == "auth" {
						code = 401
					}
					return "", &serviceError{fmt.Sprintf("%s failed #%d", name, calls[name]), code}
				}
				return name + " ok", nil
			})
		callCapped := onException(backoffConfig{rng: rng, maxTries: 3, onBackoff: logBackoff, onGiveup: logGiveup},
			"call_capped", func(t *asyncio.T, name string) (string, error) {
				calls[name]++
				if err := asyncio.Sleep(t, 70*ms); err != nil {
					return "", err
				}
				return "", &serviceError{fmt.Sprintf("%s failed #%d", name, calls[name]), 503}
			})

		p.restart()
		got, err := callService(tk, "flaky")
		if err != nil {
			return err
		}
		p.log("got %s", got)
		for _, call := range []struct {
			fn  func(*asyncio.T, string) (string, error)
			arg string
		}{{callService, "auth"}, {callCapped, "capped"}, {callService, "down"}} {
			p.restart()
			_, err := call.fn(tk, call.arg)
			var e *serviceError
			if !errors.As(err, &e) {
				return fmt.Errorf("%s: %v", call.arg, err)
			}
			p.log("raised %s code %d", pd(e), e.code)
		}
		clear(calls)
		p.restart()
		_, err = asyncio.WaitForFunc(tk, 500*ms, func(t *asyncio.T) (string, error) { return callService(t, "down") })
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("wait_for gave up calls {'down': %d}", calls["down"])
			return nil
		}
		return err
	})
}

// ---------------------------------------------------------------------------
// p218_graceful_shutdown.py

// gracefulServer is the program's Server.
type gracefulServer struct {
	p            *probe
	inflight     []*asyncio.Task[string] // the ordered set
	idle         map[*aio.StreamWriter]bool
	served       int
	drained      int
	cancelled    int
	shuttingDown bool
}

func (s *gracefulServer) process(rid string, dur time.Duration) func(*asyncio.T) (string, error) {
	return func(t *asyncio.T) (string, error) {
		if err := asyncio.Sleep(t, dur); err != nil {
			return "", err
		}
		return "200 " + rid, nil
	}
}

func (s *gracefulServer) handle(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	for {
		s.idle[w] = true
		line, err := r.ReadLine(t)
		delete(s.idle, w)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			break
		}
		f := strings.Fields(string(line))
		rid := f[1]
		secs, _ := strconv.ParseFloat(f[2], 64)
		task := asyncio.CreateTask(t, s.process(rid, time.Duration(secs*float64(time.Second))))
		s.inflight = append(s.inflight, task)
		reply, err := task.Await(t)
		switch {
		case err == nil:
			if s.shuttingDown {
				s.drained++
			} else {
				s.served++
			}
		case asyncio.IsCancelled(err) && task.Cancelled():
			reply = "503 " + rid
			s.cancelled++
		}
		s.inflight = slices.DeleteFunc(s.inflight, func(x *asyncio.Task[string]) bool { return x == task })
		if err != nil && reply == "" {
			return err
		}
		if err := w.Write([]byte(reply + "\n")); err != nil {
			return err
		}
		if err := w.Drain(t); err != nil {
			return err
		}
		if s.shuttingDown {
			break
		}
	}
	w.Close()
	return w.WaitClosed(t)
}

func (s *gracefulServer) shutdown(t *asyncio.T, srv *aio.Server, grace time.Duration) error {
	s.p.log("shutdown: stop accepting, %d in flight, %d idle", len(s.inflight), len(s.idle))
	s.shuttingDown = true
	srv.Close()
	for w := range s.idle {
		w.Close()
	}
	if len(s.inflight) > 0 {
		done, pending, err := asyncio.Wait(t, slices.Clone(s.inflight), grace, asyncio.AllCompleted)
		if err != nil {
			return err
		}
		s.p.log("shutdown: drained %d still running %d", len(done), len(pending))
		for _, task := range s.inflight {
			if slices.Contains(pending, task) {
				task.Cancel()
			}
		}
	}
	if err := srv.WaitClosed(t); err != nil {
		return err
	}
	s.p.log("shutdown: all connections closed {'served': %d, 'drained': %d, 'cancelled': %d}", s.served, s.drained, s.cancelled)
	return nil
}

func TestPortGracefulShutdown(t *testing.T) {
	runPort(t, cpythonTrace("p218_graceful_shutdown"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		client := func(port int, name, dur string, delay time.Duration) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				reader, writer, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
				if errors.Is(err, syscall.ECONNREFUSED) {
					p.log("%s refused", name)
					return nil
				} else if err != nil {
					return err
				}
				if dur != "" {
					if err := writer.Write([]byte("REQ " + name + " " + dur + "\n")); err != nil {
						return err
					}
				}
				line, err := reader.ReadLine(t)
				if err != nil {
					return err
				}
				got := strings.TrimSpace(string(line))
				if got == "" {
					got = "EOF"
				}
				p.log("%s got %s", name, got)
				writer.Close()
				return writer.WaitClosed(t)
			}
		}

		p.restart()
		app := &gracefulServer{p: p, idle: map[*aio.StreamWriter]bool{}}
		srv, err := aio.StartServer(tk, app.handle, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		var clients []*asyncio.Task[struct{}]
		for i, dur := range []string{"0.1", "0.28", "0.66", "0.9"} {
			clients = append(clients, asyncio.CreateTaskErr(tk, client(port, fmt.Sprintf("c%d", i), dur, 0)))
		}
		clients = append(clients, asyncio.CreateTaskErr(tk, client(port, "idle", "", 0)))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		stopper := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error { return app.shutdown(t, srv, 300*ms) })
		clients = append(clients, asyncio.CreateTaskErr(tk, client(port, "late", "0.1", 60*ms)))
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(clients)...).Await(tk); err != nil {
			return err
		}
		if _, err := stopper.Await(tk); err != nil {
			return err
		}
		p.log("main done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p219_circuit_breaker.py

type circuitBreaker struct {
	p                         *probe
	failMax                   int
	resetTimeout, callTimeout time.Duration
	state                     string
	failures                  int
	timer                     *asyncio.TimerHandle
	trial                     bool
}

func (b *circuitBreaker) set(state string) {
	b.p.log("breaker: %s -> %s", b.state, state)
	b.state = state
	if state == "open" {
		b.timer = b.p.l.CallLater(b.resetTimeout, func() { b.set("half-open") })
	}
}

func (b *circuitBreaker) call(t *asyncio.T, fn func(*asyncio.T, int) (string, error), i int) (string, error) {
	if b.state == "open" {
		return "", &runtimeError{pyExc{"CircuitOpenError", "open"}}
	}
	trial := b.state == "half-open"
	if trial {
		if b.trial {
			return "", &runtimeError{pyExc{"CircuitOpenError", "half-open, trial in progress"}}
		}
		b.trial = true
	}
	var result string
	err := asyncio.Timeout(t, b.callTimeout, func(*asyncio.TimeoutScope) error {
		var err error
		result, err = fn(t, i)
		return err
	})
	var se *connectionError
	if errors.As(err, &se) || errors.Is(err, asyncio.ErrTimeout) {
		b.failures++
		if trial || b.failures >= b.failMax {
			b.set("open")
		}
	} else if err == nil {
		b.failures = 0
		if trial {
			b.set("closed")
		}
	}
	if trial {
		b.trial = false
	}
	return result, err
}

func TestPortCircuitBreakerTimers(t *testing.T) {
	runPort(t, cpythonTrace("p219_circuit_breaker"), func(p *probe, tk *asyncio.T) error {
		var t0 time.Duration
		service := func(t *asyncio.T, i int) (string, error) {
			now := t.Loop().Time() - t0
			if 300*ms < now && now < 1200*ms {
				if i%2 == 1 {
					return "", &connectionError{pyExc{"ServiceError", fmt.Sprintf("req%d 500", i)}}
				}
				if err := asyncio.Sleep(t, time.Second); err != nil {
					return "", err
				}
			}
			if err := asyncio.Sleep(t, 0); err != nil {
				return "", err
			}
			return fmt.Sprintf("req%d ok", i), nil
		}
		request := func(b *circuitBreaker, i int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				v, err := b.call(t, service, i)
				var oe *runtimeError
				var se *connectionError
				switch {
				case err == nil:
					p.log("req %d -> %s", i, v)
				case errors.As(err, &oe), errors.As(err, &se), errors.Is(err, asyncio.ErrTimeout):
					p.log("req %d failed %s state %s failures %d", i, pd(err), b.state, b.failures)
				default:
					return err
				}
				return nil
			}
		}

		p.restart()
		loop := tk.Loop()
		t0 = loop.Time()
		breaker := &circuitBreaker{p: p, failMax: 3, resetTimeout: 350 * ms, callTimeout: 30 * ms, state: "closed"}
		var tasks []*asyncio.Task[struct{}]
		for i := range 18 {
			if err := asyncio.Sleep(tk, t0+60*ms+time.Duration(i)*100*ms-loop.Time()); err != nil {
				return err
			}
			tasks = append(tasks, asyncio.CreateTaskErr(tk, request(breaker, i)))
			if i == 13 {
				tasks = append(tasks, asyncio.CreateTaskErr(tk, request(breaker, 100+i)))
			}
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk); err != nil {
			return err
		}
		p.log("final state %s", breaker.state)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p220_debounce_throttle.py

type debouncer struct {
	wait    time.Duration
	handler func(*asyncio.T, string) error
	pending *asyncio.Task[struct{}]
	value   string // "" is None
	runs    []*asyncio.Task[struct{}]
}

func (db *debouncer) call(t *asyncio.T, value string) {
	db.value = value
	if db.pending != nil && !db.pending.Done() {
		db.pending.Cancel()
	}
	db.pending = asyncio.CreateTaskErr(t, db.later)
}

func (db *debouncer) later(t *asyncio.T) error {
	if err := asyncio.Sleep(t, db.wait); err != nil {
		return err
	}
	return db.fire(t)
}

func (db *debouncer) fire(t *asyncio.T) error {
	value := db.value
	db.value = ""
	task := asyncio.CreateTaskErr(t, func(t *asyncio.T) error { return db.handler(t, value) })
	db.runs = append(db.runs, task)
	_, err := task.Await(t)
	return err
}

func (db *debouncer) flush(t *asyncio.T) error {
	if db.pending != nil && !db.pending.Done() {
		db.pending.Cancel()
		return db.fire(t)
	}
	return nil
}

type throttler struct {
	interval time.Duration
	handler  func(*asyncio.T, int) error
	last     time.Duration
	hasLast  bool
	dropped  int
	tasks    []*asyncio.Task[struct{}]
}

func (th *throttler) call(t *asyncio.T, value int) {
	now := t.Loop().Time()
	if th.hasLast && now-th.last < th.interval {
		th.dropped++
		return
	}
	th.last, th.hasLast = now, true
	th.tasks = append(th.tasks, asyncio.CreateTaskErr(t, func(t *asyncio.T) error { return th.handler(t, value) }))
}

func TestPortDebounceThrottle(t *testing.T) {
	runPort(t, cpythonTrace("p220_debounce_throttle"), func(p *probe, tk *asyncio.T) error {
		search := func(t *asyncio.T, query string) error {
			p.log("search for '%s'", query)
			if err := asyncio.Sleep(t, 30*ms); err != nil {
				return err
			}
			p.log("results for '%s'", query)
			return nil
		}
		onScroll := func(t *asyncio.T, pos int) error {
			p.log("scroll handler at %d", pos)
			return nil
		}
		type event struct {
			at   time.Duration
			kind string
			key  string
			pos  int
		}
		events := []event{
			{0, "key", "h", 0}, {10 * ms, "scroll", "", 10}, {60 * ms, "key", "he", 0}, {70 * ms, "scroll", "", 20},
			{120 * ms, "key", "hel", 0}, {130 * ms, "scroll", "", 30}, {190 * ms, "scroll", "", 40}, {270 * ms, "scroll", "", 50},
			{310 * ms, "scroll", "", 60}, {380 * ms, "key", "hell", 0}, {440 * ms, "key", "hello", 0}, {490 * ms, "scroll", "", 70},
			{850 * ms, "key", "x", 0}, {870 * ms, "scroll", "", 80},
		}

		p.restart()
		loop := tk.Loop()
		start := loop.Time()
		debounced := &debouncer{wait: 140 * ms, handler: search}
		throttled := &throttler{interval: 200 * ms, handler: onScroll}
		for _, ev := range events {
			if err := asyncio.Sleep(tk, start+ev.at-loop.Time()); err != nil {
				return err
			}
			if ev.kind == "key" {
				debounced.call(tk, ev.key)
			} else {
				throttled.call(tk, ev.pos)
			}
		}
		if err := asyncio.Sleep(tk, 90*ms); err != nil {
			return err
		}
		p.log("flush with '%s' pending", debounced.value)
		if err := debounced.flush(tk); err != nil {
			return err
		}
		if _, err := asyncio.Gather(tk, asyncio.Awaitables(throttled.tasks)...).Await(tk); err != nil {
			return err
		}
		p.log("search ran %d times; scroll ran %d dropped %d", len(debounced.runs), len(throttled.tasks), throttled.dropped)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p221_pubsub_drop_slow.py

type pubsubHub struct {
	p       *probe
	maxsize int
	names   []string // the dict's order
	subs    map[string]*asyncio.Queue[string]
	dropped []string
}

func (h *pubsubHub) subscribe(name string) *asyncio.Queue[string] {
	q := asyncio.NewQueue[string](h.maxsize)
	h.subs[name] = q
	h.names = append(h.names, name)
	return q
}

func (h *pubsubHub) publish(msg string) {
	for _, name := range slices.Clone(h.names) {
		q := h.subs[name]
		if err := q.PutNowait(msg); errors.Is(err, asyncio.ErrQueueFull) {
			h.p.log("hub: drops %s at %s backlog %d", name, msg, q.Len())
			delete(h.subs, name)
			h.names = slices.DeleteFunc(h.names, func(n string) bool { return n == name })
			h.dropped = append(h.dropped, name)
			q.Shutdown(false)
		}
	}
}

func (h *pubsubHub) close() {
	for _, name := range h.names {
		h.subs[name].Shutdown(false)
	}
	clear(h.subs)
	h.names = nil
}

func TestPortPubSubDropSlow(t *testing.T) {
	runPort(t, cpythonTrace("p221_pubsub_drop_slow"), func(p *probe, tk *asyncio.T) error {
		subscriber := func(hub *pubsubHub, name string, perMsg, delay time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return 0, err
				}
				q := hub.subscribe(name)
				var got []string
				for {
					msg, err := q.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						break
					} else if err != nil {
						return 0, err
					}
					got = append(got, msg)
					if err := asyncio.Sleep(t, perMsg); err != nil {
						return 0, err
					}
				}
				p.log("%s ends with %s", name, pstrs(got))
				return len(got), nil
			}
		}

		p.restart()
		hub := &pubsubHub{p: p, maxsize: 3, subs: map[string]*asyncio.Queue[string]{}}
		subs := []*asyncio.Task[int]{
			asyncio.CreateTask(tk, subscriber(hub, "fast", 13*ms, 0)),
			asyncio.CreateTask(tk, subscriber(hub, "medium", 155*ms, 0)),
			asyncio.CreateTask(tk, subscriber(hub, "slow", 450*ms, 0)),
			asyncio.CreateTask(tk, subscriber(hub, "late", 13*ms, 410*ms)),
		}
		loop := tk.Loop()
		start := loop.Time() + 60*ms
		for i := range 12 {
			if err := asyncio.Sleep(tk, start+time.Duration(i)*100*ms-loop.Time()); err != nil {
				return err
			}
			hub.publish(fmt.Sprintf("m%d", i))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		p.log("publisher done, subscribers %s dropped %s", pstrs(hub.names), pstrs(hub.dropped))
		hub.close()
		counts, err := asyncio.Gather(tk, asyncio.Awaitables(subs)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("counts %s", pints(counts))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p222_exit_stack.py

// The stack is p140's exitStack: an exit returns what goes on unwinding
// (the error it saw, nil when it suppresses it, or the error it raises).

type stackResource struct {
	p         *probe
	name      string
	failEnter bool
	cleanup   time.Duration
	suppress  func(error) bool
}

func (r *stackResource) aenter(t *asyncio.T) error {
	if err := asyncio.Sleep(t, 100*ms); err != nil {
		return err
	}
	if r.failEnter {
		r.p.log("%s failed to open", r.name)
		return &connectionError{pyExc{"ConnectionError", r.name + " unavailable"}}
	}
	r.p.log("%s opened", r.name)
	return nil
}

func (r *stackResource) aexit(t *asyncio.T) func(exc error) error {
	return func(exc error) error {
		r.p.log("%s closing, sees %s", r.name, pd(exc))
		if err := asyncio.Sleep(t, r.cleanup); err != nil {
			if asyncio.IsCancelled(err) {
				r.p.log("%s cleanup interrupted %s", r.name, pd(err))
			}
			return err
		}
		r.p.log("%s closed", r.name)
		if exc != nil && r.suppress != nil && r.suppress(exc) {
			r.p.log("%s suppresses %s", r.name, pd(exc))
			return nil
		}
		return exc
	}
}

func TestPortExitStack(t *testing.T) {
	runPort(t, cpythonTrace("p222_exit_stack"), func(p *probe, tk *asyncio.T) error {
		res := func(name string) *stackResource { return &stackResource{p: p, name: name, cleanup: 100 * ms} }
		flush := func(t *asyncio.T, what string) error {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			p.log("flushed %s", what)
			return nil
		}
		openAll := func(t *asyncio.T, specs []*stackResource, body func(*asyncio.T) error) error {
			stack := &exitStack{}
			return stack.close(func() error {
				var opened []string
				for i, spec := range specs {
					// enter_async_context: the exit is pushed once the enter succeeded
					if err := spec.aenter(t); err != nil {
						return err
					}
					stack.push(spec.aexit(t))
					opened = append(opened, spec.name)
					if i == 0 {
						// push_async_callback(flush, "metrics")
						stack.push(func(exc error) error {
							if err := flush(t, "metrics"); err != nil {
								return err
							}
							return exc
						})
					}
				}
				p.log("all open: %s", pstrs(opened))
				return body(t)
			}())
		}

		p.restart()
		broker := res("broker")
		broker.failEnter = true
		err := openAll(tk, []*stackResource{res("db"), res("cache"), broker},
			func(t *asyncio.T) error { return asyncio.Sleep(t, time.Second) })
		var ce *connectionError
		if !errors.As(err, &ce) {
			return fmt.Errorf("first open_all: %v", err)
		}
		p.log("service start failed: %s", pd(err))

		p.restart()
		serve := func(t *asyncio.T) error { return asyncio.Sleep(t, time.Second) }
		slowCache := res("cache")
		slowCache.cleanup = 500 * ms
		task := asyncio.CreateTaskErr(tk, func(t *asyncio.T) error {
			return openAll(t, []*stackResource{res("db"), slowCache, res("broker")}, serve)
		})
		if err := asyncio.Sleep(tk, 460*ms); err != nil {
			return err
		}
		task.Cancel("stop")
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		task.Cancel("stop now")
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("service task ended %s cancelled %s", pd(err), pb(task.Cancelled()))
		} else {
			return fmt.Errorf("service task: %v", err)
		}

		p.restart()
		failingBody := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			return newValueError("bad row")
		}
		tx := res("tx")
		tx.suppress = func(err error) bool { var ve *valueError; return errors.As(err, &ve) }
		if err := openAll(tk, []*stackResource{res("db"), tx, res("cache")}, failingBody); err != nil {
			return err
		}
		p.log("open_all returned None")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p223_supervisor.py

// budgetExceeded is RestartBudgetExceeded, raised from the last crash.
type budgetExceeded struct {
	msg   string
	cause error
}

func (e *budgetExceeded) Error() string            { return e.msg }
func (e *budgetExceeded) Unwrap() error            { return e.cause }
func (e *budgetExceeded) pyRepr() (string, string) { return "RestartBudgetExceeded", e.msg }

type permanentError struct{ pyExc }
type flushOSError struct{ pyExc }

func TestPortSupervisorBudget(t *testing.T) {
	runPort(t, cpythonTrace("p223_supervisor"), func(p *probe, tk *asyncio.T) error {
		supervise := func(name string, child func(*asyncio.T, int) error) func(*asyncio.T) (string, error) {
			const maxRestarts, window, backoff = 3, time.Second, 100 * ms
			return func(t *asyncio.T) (string, error) {
				loop := t.Loop()
				var restarts []time.Duration // the deque
				attempt := 0
				for {
					attempt++
					err := child(t, attempt)
					var pe *permanentError
					switch {
					case err == nil:
						p.log("%s finished normally after %d attempts", name, attempt)
						return name, nil
					case asyncio.IsCancelled(err):
						p.log("%s cancelled in attempt %d", name, attempt)
						return "", err
					case errors.As(err, &pe):
						p.log("%s permanent failure %s", name, pd(err))
						return "", err
					}
					if t.Cancelling() > 0 {
						p.log("%s failed while being cancelled %s", name, pd(err))
						return "", err
					}
					now := loop.Time()
					for len(restarts) > 0 && now-restarts[0] > window {
						restarts = restarts[1:]
					}
					if len(restarts) >= maxRestarts {
						p.log("%s restart budget exhausted at %s", name, pd(err))
						return "", &budgetExceeded{fmt.Sprintf("%s: %d restarts in 1.0s", name, len(restarts)), err}
					}
					restarts = append(restarts, now)
					p.log("%s crashed %s - restart %d", name, pd(err), len(restarts))
					if err := asyncio.Sleep(t, backoff); err != nil {
						return "", err
					}
				}
			}
		}
		ticker := func(t *asyncio.T, attempt int) error {
			for range 3 {
				if err := asyncio.Sleep(t, 170*ms); err != nil {
					return err
				}
			}
			p.log("ticker done")
			return nil
		}
		flaky := func(t *asyncio.T, attempt int) error {
			if err := asyncio.Sleep(t, 180*ms); err != nil {
				return err
			}
			if attempt <= 2 {
				return &connectionError{pyExc{"ConnectionError", fmt.Sprintf("flaky lost its connection #%d", attempt)}}
			}
			return asyncio.Sleep(t, 5*time.Second)
		}
		doomed := func(t *asyncio.T, attempt int) error {
			if err := asyncio.Sleep(t, 190*ms); err != nil {
				return err
			}
			return &runtimeError{pyExc{"RuntimeError", fmt.Sprintf("doomed crash #%d", attempt)}}
		}
		config := func(t *asyncio.T, attempt int) error {
			if err := asyncio.Sleep(t, 270*ms); err != nil {
				return err
			}
			return &permanentError{pyExc{"PermanentError", "bad config"}}
		}
		closer := func(t *asyncio.T, attempt int) error {
			if err := asyncio.Sleep(t, 5*time.Second); asyncio.IsCancelled(err) {
				return &flushOSError{pyExc{"OSError", "closer could not flush"}}
			} else if err != nil {
				return err
			}
			return nil
		}

		p.restart()
		var tasks []*asyncio.Task[string]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, nc := range []struct {
				name  string
				child func(*asyncio.T, int) error
			}{{"ticker", ticker}, {"flaky", flaky}, {"doomed", doomed}} {
				task, err := asyncio.Spawn(g, supervise(nc.name, nc.child))
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			return nil
		})
		err = asyncio.ExceptStar(err, asyncio.Except[*budgetExceeded](func(eg *asyncio.ExceptionGroup) error {
			var ds []string
			for _, e := range eg.Errs {
				ds = append(ds, pd(e))
			}
			p.log("supervisor tree failed: %s cause %s", pstrs(ds), pd(eg.Errs[0].(*budgetExceeded).cause))
			return nil
		}))
		if err != nil {
			return err
		}
		var children []string
		for _, task := range tasks {
			switch v, err := task.Result(); {
			case task.Cancelled():
				children = append(children, "cancelled")
			case err != nil:
				children = append(children, pd(err))
			default:
				children = append(children, v)
			}
		}
		p.log("children %s", pstrs(children))

		p.restart()
		err = asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, nc := range []struct {
				name  string
				child func(*asyncio.T, int) error
			}{{"flaky2", flaky}, {"config", config}, {"closer", closer}} {
				if _, err := asyncio.Spawn(g, supervise(nc.name, nc.child)); err != nil {
					return err
				}
			}
			return nil
		})
		listOf := func(eg *asyncio.ExceptionGroup) string {
			var ds []string
			for _, e := range eg.Errs {
				ds = append(ds, pd(e))
			}
			return pstrs(ds)
		}
		err = asyncio.ExceptStar(err,
			asyncio.Except[*permanentError](func(eg *asyncio.ExceptionGroup) error {
				p.log("permanent: %s", listOf(eg))
				return nil
			}),
			asyncio.Except[*flushOSError](func(eg *asyncio.ExceptionGroup) error {
				p.log("during cancellation: %s", listOf(eg))
				return nil
			}))
		if err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p224_batch_writer.py

type batchWriter struct {
	p        *probe
	name     string
	sink     func(t *asyncio.T, name string, batch []string) error
	maxItems int
	maxWait  time.Duration
	q        *asyncio.Queue[string]
	inflight *asyncio.Task[struct{}]
	flushes  []string
}

func (w *batchWriter) flush(t *asyncio.T, batch []string, reason string) error {
	w.p.log("%s flush %s %s", w.name, reason, pstrs(batch))
	w.flushes = append(w.flushes, fmt.Sprintf("('%s', %d)", reason, len(batch)))
	w.inflight = asyncio.CreateTaskErr(t, func(t *asyncio.T) error { return w.sink(t, w.name, batch) })
	_, err := asyncio.Shield[struct{}](w.inflight).Await(t)
	return err
}

func (w *batchWriter) run(t *asyncio.T) error {
	loop := t.Loop()
	var batch []string
	err := func() error {
		for {
			item, err := w.q.Get(t)
			if err != nil {
				return err
			}
			batch = append(batch, item)
			err = asyncio.TimeoutAt(t, loop.Time()+w.maxWait, func(*asyncio.TimeoutScope) error {
				for len(batch) < w.maxItems {
					item, err := w.q.Get(t)
					if err != nil {
						return err
					}
					batch = append(batch, item)
				}
				return nil
			})
			reason := "full"
			if errors.Is(err, asyncio.ErrTimeout) {
				reason = "timer"
			} else if err != nil {
				return err
			}
			out := batch
			batch = nil
			if err := w.flush(t, out, reason); err != nil {
				return err
			}
		}
	}()
	if !asyncio.IsCancelled(err) {
		return err
	}
	w.p.log("%s cancelled %s holding %s queued %d", w.name, pd(err), pstrs(batch), w.q.Len())
	if w.inflight != nil && !w.inflight.Done() {
		w.p.log("%s waits for the write in flight", w.name)
		if _, err := w.inflight.Await(t); err != nil {
			return err
		}
	}
	for !w.q.Empty() {
		item, err := w.q.GetNowait()
		if err != nil {
			return err
		}
		batch = append(batch, item)
	}
	if len(batch) > 0 {
		final := asyncio.CreateTaskErr(t, func(t *asyncio.T) error { return w.flush(t, batch, "final") })
		if _, err := asyncio.Shield[struct{}](final).Await(t); err != nil {
			return err
		}
	}
	return err
}

func TestPortBatchWriter(t *testing.T) {
	runPort(t, cpythonTrace("p224_batch_writer"), func(p *probe, tk *asyncio.T) error {
		sink := func(t *asyncio.T, name string, batch []string) error {
			if err := asyncio.Sleep(t, 90*ms); err != nil {
				return err
			}
			p.log("%s sink wrote %d", name, len(batch))
			return nil
		}
		newWriter := func(name string, maxItems int) *batchWriter {
			return &batchWriter{p: p, name: name, sink: sink, maxItems: maxItems, maxWait: 200 * ms, q: asyncio.NewQueue[string](0)}
		}

		p.restart()
		w := newWriter("w1", 4)
		runner := asyncio.CreateTaskErr(tk, w.run)
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		for i := range 6 {
			if err := w.q.PutNowait(fmt.Sprintf("a%d", i)); err != nil {
				return err
			}
		}
		if err := asyncio.Sleep(tk, 360*ms); err != nil {
			return err
		}
		for i := range 3 {
			if err := w.q.PutNowait(fmt.Sprintf("b%d", i)); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 20*ms); err != nil {
				return err
			}
		}
		if err := asyncio.Sleep(tk, 80*ms); err != nil {
			return err
		}
		runner.Cancel("shutdown")
		if _, err := runner.Await(tk); !asyncio.IsCancelled(err) {
			return fmt.Errorf("w1: %v", err)
		}
		p.log("w1 stopped, flushes [%s]", strings.Join(w.flushes, ", "))

		p.restart()
		w2 := newWriter("w2", 3)
		runner = asyncio.CreateTaskErr(tk, w2.run)
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return err
		}
		for i := range 5 {
			if err := w2.q.PutNowait(fmt.Sprintf("c%d", i)); err != nil {
				return err
			}
		}
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return err
		}
		runner.Cancel("shutdown")
		if _, err := runner.Await(tk); !asyncio.IsCancelled(err) {
			return fmt.Errorf("w2: %v", err)
		}
		p.log("w2 stopped, flushes [%s] queue empty %s", strings.Join(w2.flushes, ", "), pb(w2.q.Empty()))
		return nil
	})
}
