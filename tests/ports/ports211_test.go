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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

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
