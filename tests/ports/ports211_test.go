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
				fetch("B", "/b", 40*ms),
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
