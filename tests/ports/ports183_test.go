//go:build unix

package ports_test

// Ports p183 onward (h39): larger programs, as ports181_test.go. p183 is
// an RPC framework multiplexing concurrent calls over one connection
// (length-prefixed frames read with ReadExactly, request ids, a reader
// task resolving futures, per-call deadlines enforced on the server, a
// per-connection TaskGroup whose call tasks a CANCEL frame cancels, a
// shielded commit, an error frame, connection loss failing every pending
// call, a client reconnecting with backoff); p184 a load-balancing
// proxy (health checks, circuit breakers, hedged requests through
// asyncio.Hedge, a graceful drain with close_clients). Same conventions as
// ports_test.go and ports50_test.go (the simulated network on virtual
// time).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p183_rpc_mux.py

// secs is a Python float of seconds as a Duration (float(arg) in a sleep).
func secs(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }

// pyFloat is str(f) for the floats the programs print.
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rpcSend is the program's send(writer, *fields).
func rpcSend(w *aio.StreamWriter, fields ...string) error {
	body := strings.Join(fields, " ")
	return w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
}

// rpcReadFrame is read_frame(reader): body.decode().split(" ", 2).
func rpcReadFrame(t *asyncio.T, r *aio.StreamReader) (kind, cid, rest string, err error) {
	header, err := r.ReadExactly(t, 4)
	if err != nil {
		return "", "", "", err
	}
	body, err := r.ReadExactly(t, int(binary.BigEndian.Uint32(header)))
	if err != nil {
		return "", "", "", err
	}
	parts := strings.SplitN(string(body), " ", 3)
	if len(parts) != 3 {
		return "", "", "", newValueError(fmt.Sprintf("not enough values to unpack (expected 3, got %d)", len(parts)))
	}
	return parts[0], parts[1], parts[2], nil
}

// orderedMap is a dict's insertion order over a map (calls and pending
// are iterated in the order the calls were made).
type orderedMap[V any] struct {
	m     map[string]V
	order []string
}

func newOrderedMap[V any]() *orderedMap[V] { return &orderedMap[V]{m: map[string]V{}} }

func (o *orderedMap[V]) set(k string, v V) {
	if _, ok := o.m[k]; !ok {
		o.order = append(o.order, k)
	}
	o.m[k] = v
}

// pop is dict.pop(k, None).
func (o *orderedMap[V]) pop(k string) (V, bool) {
	v, ok := o.m[k]
	if ok {
		delete(o.m, k)
		o.order = slicesDeleteFunc(o.order, func(x string) bool { return x == k })
	}
	return v, ok
}

// values is list(d.values()).
func (o *orderedMap[V]) values() []V {
	vs := make([]V, 0, len(o.order))
	for _, k := range o.order {
		vs = append(vs, o.m[k])
	}
	return vs
}

func (o *orderedMap[V]) clear() { o.m, o.order = map[string]V{}, nil }

type rpcStep struct {
	at          time.Duration
	method, arg string
	timeout     float64
}

func TestPortRPCMux(t *testing.T) {
	runPort(t, cpythonTrace("p183_rpc_mux"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		const host = "127.0.0.1"
		const margin = 0.05
		var ledger []string

		// ---- server ----
		commit := func(who string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				ledger = append(ledger, who)
				p.log("server: committed %s", who)
				return nil
			}
		}
		handlers := map[string]func(t *asyncio.T, arg string) (string, error){
			"sleep": func(t *asyncio.T, arg string) (string, error) {
				f, _ := strconv.ParseFloat(arg, 64)
				return "slept " + arg, asyncio.Sleep(t, secs(f))
			},
			"transfer": func(t *asyncio.T, arg string) (string, error) {
				if err := asyncio.Sleep(t, 50*ms); err != nil {
					return "", err
				}
				if _, err := asyncio.Shield(asyncio.CreateTaskErr(t, commit(arg))).Await(t); err != nil {
					return "", err
				}
				return "transferred " + arg, nil
			},
			"stall": func(t *asyncio.T, arg string) (string, error) {
				f, _ := strconv.ParseFloat(arg, 64)
				// a slow cleanup: the reply is late
				return "stalled " + arg, cleanUpWhenCancelled(t, secs(f), 80*ms, func() error { return nil })
			},
			"fail": func(t *asyncio.T, arg string) (string, error) {
				if err := asyncio.Sleep(t, 10*ms); err != nil {
					return "", err
				}
				return "", newValueError("bad input " + arg)
			},
		}
		runCall := func(w *aio.StreamWriter, calls *orderedMap[*asyncio.Task[struct{}]], cid, method, arg, deadline string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				defer calls.pop(cid)
				dl, _ := strconv.ParseFloat(deadline, 64)
				var value string
				err := asyncio.Timeout(t, secs(dl), func(*asyncio.TimeoutScope) error {
					v, err := handlers[method](t, arg)
					value = v
					return err
				})
				var pe interface{ pyRepr() (string, string) }
				switch {
				case err == nil:
					return rpcSend(w, "RESULT", cid, value)
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("server: call %s %s missed its deadline", cid, method)
					return rpcSend(w, "ERROR", cid, "DeadlineExceeded")
				case asyncio.IsCancelled(err):
					p.log("server: call %s %s cancelled", cid, method)
					return err
				case errors.As(err, &pe):
					p.log("server: call %s %s failed: %s", cid, method, pd(err))
					kind, msg := pe.pyRepr()
					return rpcSend(w, "ERROR", cid, kind+": "+msg)
				}
				return err
			}
		}
		serve := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			calls := newOrderedMap[*asyncio.Task[struct{}]]()
			p.log("server: client connected")
			err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				for {
					kind, cid, rest, err := rpcReadFrame(t, r)
					if ire := (*aio.IncompleteReadError)(nil); errors.As(err, &ire) {
						p.log("server: client gone (partial %d bytes), %d calls running", len(ire.Partial), len(calls.m))
						break
					}
					if err != nil {
						return err
					}
					switch kind {
					case "CALL":
						f := strings.Fields(rest)
						task, err := asyncio.SpawnErr(g, runCall(w, calls, cid, f[0], f[1], f[2]))
						if err != nil {
							return err
						}
						calls.set(cid, task)
					case "CANCEL":
						task, ok := calls.m[cid]
						p.log("server: CANCEL %s (%s) running: %s", cid, rest, pb(ok))
						if ok {
							task.Cancel()
						}
					}
				}
				for _, task := range calls.values() {
					task.Cancel()
				}
				return nil
			})
			w.Close()
			return err
		}

		// ---- client ----
		var (
			port      int
			nextID    int
			pending   = newOrderedMap[*asyncio.Future[string]]()
			writer    *aio.StreamWriter
			connected = asyncio.NewEvent()
			closing   bool
			tasks     = map[*asyncio.Task[struct{}]]bool{}
			connect   func(t *asyncio.T) error
			readLoop  func(r *aio.StreamReader) func(*asyncio.T) error
		)
		spawn := func(t *asyncio.T, fn func(*asyncio.T) error) {
			task := asyncio.CreateTaskErr(t, fn)
			tasks[task] = true
			task.AddDoneCallback(func() { delete(tasks, task) })
		}
		connect = func(t *asyncio.T) error {
			delay := 0.05
			attempt := 1
			var r *aio.StreamReader
			for {
				var err error
				r, writer, err = aio.OpenConnection(t, host, port, sim)
				if err == nil {
					break
				}
				if !errors.Is(err, syscall.ECONNREFUSED) {
					return err
				}
				p.log("client: attempt %d refused; retrying in %s", attempt, pyFloat(math.Round(delay*100)/100))
				if err := asyncio.Sleep(t, secs(delay)); err != nil {
					return err
				}
				delay *= 2
				attempt++
			}
			p.log("client: connected on attempt %d", attempt)
			spawn(t, readLoop(r))
			connected.Set()
			return nil
		}
		readLoop = func(r *aio.StreamReader) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					kind, cid, text, err := rpcReadFrame(t, r)
					if ire := (*aio.IncompleteReadError)(nil); errors.As(err, &ire) {
						p.log("client: connection lost with %d calls pending", len(pending.m))
						break
					}
					if err != nil {
						return err
					}
					fut, ok := pending.pop(cid)
					switch {
					case !ok:
						p.log("client: late %s for call %s dropped", kind, cid)
					case kind == "RESULT":
						if err := fut.SetResult(text); err != nil {
							return err
						}
					default:
						if err := fut.SetException(&pyExc{"RemoteError", text}); err != nil {
							return err
						}
					}
				}
				connected.Clear()
				for _, fut := range pending.values() {
					if err := fut.SetException(&pyExc{"ConnectionError", "connection lost"}); err != nil {
						return err
					}
				}
				pending.clear()
				writer.Close()
				if !closing {
					spawn(t, connect)
				}
				return nil
			}
		}
		call := func(t *asyncio.T, method, arg string, timeout float64) (string, error) {
			if err := connected.Wait(t); err != nil {
				return "", err
			}
			nextID++
			cid := strconv.Itoa(nextID)
			fut := asyncio.NewFuture[string](t)
			pending.set(cid, fut)
			if err := rpcSend(writer, "CALL", cid, method, arg, pyFloat(math.Round((timeout-margin)*100)/100)); err != nil {
				return "", err
			}
			var value string
			err := asyncio.Timeout(t, secs(timeout), func(*asyncio.TimeoutScope) error {
				v, err := fut.Await(t)
				value = v
				return err
			})
			if timedOut := errors.Is(err, asyncio.ErrTimeout); timedOut || asyncio.IsCancelled(err) {
				if _, ok := pending.pop(cid); ok {
					p.log("client: call %s abandoned on %s -> CANCEL", cid, pd(err))
					kind := "CancelledError"
					if timedOut {
						kind = "TimeoutError"
					}
					if err := rpcSend(writer, "CANCEL", cid, kind); err != nil {
						return "", err
					}
				}
			}
			return value, err
		}
		closeClient := func(t *asyncio.T) error {
			closing = true
			writer.Close()
			if err := writer.WaitClosed(t); err != nil {
				return err
			}
			var aws []asyncio.AwaitableOf[struct{}]
			for task := range tasks {
				aws = append(aws, task)
			}
			_, err := asyncio.Gather(t, aws...).Await(t)
			return err
		}

		// ---- callers ----
		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}
		caller := func(name string, script []rpcStep) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				done := 0
				for _, s := range script {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					value, err := call(t, s.method, s.arg, s.timeout)
					var pe *pyExc
					switch {
					case err == nil:
						p.log("%s %s %s -> %s", name, s.method, s.arg, value)
						done++
					case errors.As(err, &pe): // RemoteError, ConnectionError
						p.log("%s %s %s failed: %s", name, s.method, s.arg, pd(err))
					case errors.Is(err, asyncio.ErrTimeout):
						p.log("%s %s %s timed out after %s", name, s.method, s.arg, pyFloat(s.timeout))
					default:
						return "", err
					}
				}
				return fmt.Sprintf("%s %d/%d", name, done, len(script)), nil
			}
		}
		names := []string{"alice", "bob", "carol", "dave"}
		scripts := map[string][]rpcStep{
			"alice": {{0, "sleep", "0.06", 1.0}, {180 * ms, "transfer", "alice", 0.5},
				{330 * ms, "sleep", "0.4", 1.0}, {580 * ms, "sleep", "0.03", 1.0}, {1000 * ms, "sleep", "0.02", 0.5}},
			"bob":   {{10 * ms, "fail", "7", 0.5}, {90 * ms, "sleep", "0.6", 0.25}, {460 * ms, "transfer", "bob", 0.5}},
			"carol": {{30 * ms, "transfer", "carol", 0.11}, {200 * ms, "stall", "0.5", 0.16}, {440 * ms, "sleep", "0.3", 1.0}},
			"dave":  {{60 * ms, "sleep", "0.2", 1.0}, {270 * ms, "sleep", "1.0", 2.0}},
		}

		p.restart()
		server, err := aio.StartServer(tk, serve, host, 0, sim)
		if err != nil {
			return err
		}
		port = portOf(server)
		if err := connect(tk); err != nil {
			return err
		}
		callers := map[string]*asyncio.Task[string]{}
		var callerTasks []*asyncio.Task[string]
		for _, name := range names {
			callers[name] = asyncio.CreateTask(tk, caller(name, scripts[name]))
			callerTasks = append(callerTasks, callers[name])
		}
		if err := sleepUntil(tk, 420*ms); err != nil {
			return err
		}
		p.log("main: cancelling dave")
		callers["dave"].Cancel()
		if err := sleepUntil(tk, 520*ms); err != nil {
			return err
		}
		p.log("main: restarting the server, %d calls pending", len(pending.m))
		server.Close()
		server.CloseClients()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		if err := sleepUntil(tk, 730*ms); err != nil {
			return err
		}
		if server, err = aio.StartServer(tk, serve, host, port, sim); err != nil {
			return err
		}
		p.log("main: server back")
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(callerTasks)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range results {
			if o.Err != nil {
				outs = append(outs, "'"+pd(o.Err)+"'") // d(r) is a str in the list
			} else {
				outs = append(outs, "'"+o.Value+"'")
			}
		}
		p.log("callers: [%s]", strings.Join(outs, ", "))
		if err := closeClient(tk); err != nil {
			return err
		}
		server.Close()
		if err := server.WaitClosed(tk); err != nil {
			return err
		}
		p.log("ledger: %s pending: %d", pstrs(ledger), len(pending.m))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p184_load_balancer.py
//
// The Python program hedges by hand (create_task, wait with a timeout, a
// second attempt, wait FIRST_COMPLETED, cancel and gather in a finally);
// the port uses asyncio.Hedge (MaxAttempts the number of backends picked,
// Delay 0.05 s), which starts the second attempt at the same instants (at
// the delay, or at once when the first fails) and cancels and awaits the
// loser before returning: the trace is the same. The "hedging to" line is
// logged by the second attempt as it starts, where Python logs it just
// before creating that task.
//
// close_clients goes through a WeakSet, in the order of the transports'
// addresses (carol's connection first in CPython's runs); CloseClients in
// accept order (bob's first): a documented Go difference (README's
// porting notes), so the two clients see their connections close in the
// other order.
var wantLoadBalancerGo = goism(cpythonTrace("p184_load_balancer"),
	[2]string{"1.0 carol k16 -> connection closed\n1.0 bob k11 -> connection closed",
		"1.0 bob k11 -> connection closed\n1.0 carol k16 -> connection closed"},
)

// lbBackend is the program's Backend.
type lbBackend struct {
	name     string
	latency  time.Duration
	failing  bool
	server   *aio.Server
	port     int
	up       bool
	state    string
	fails    int
	openedAt time.Duration
	trial    bool
}

func TestPortLoadBalancer(t *testing.T) {
	runPort(t, wantLoadBalancerGo, func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		const host = "127.0.0.1"
		const hedgeAfter, checkEvery, failsToOpen, coolDown, grace = 50 * ms, 100 * ms, 2, 200 * ms, 120 * ms
		loop := tk.Loop()
		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}

		var handleBackend func(b *lbBackend) func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error
		start := func(t *asyncio.T, b *lbBackend) error {
			srv, err := aio.StartServer(t, handleBackend(b), host, b.port, sim)
			if err != nil {
				return err
			}
			b.server, b.port = srv, portOf(srv)
			return nil
		}
		stop := func(t *asyncio.T, b *lbBackend) error {
			b.server.Close()
			b.server.CloseClients()
			return b.server.WaitClosed(t)
		}
		handleBackend = func(b *lbBackend) func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				line, err := r.ReadLine(t)
				if err != nil {
					return err
				}
				parts := strings.Fields(string(line))
				if len(parts) == 1 && parts[0] == "PING" {
					if err := w.Write([]byte("PONG\n")); err != nil {
						return err
					}
				} else {
					err := asyncio.Timeout(t, b.latency, func(*asyncio.TimeoutScope) error {
						_, err := r.Read(t, -1) // EOF first: the proxy gave up
						return err
					})
					switch {
					case err == nil:
						p.log("%s: proxy hung up on %s", b.name, parts[1])
					case errors.Is(err, asyncio.ErrTimeout):
						reply := "OK " + b.name + " " + parts[1] + "\n"
						if b.failing {
							reply = "ERR\n"
						}
						if err := w.Write([]byte(reply)); err != nil {
							return err
						}
					default:
						return err
					}
				}
				w.Close()
				return w.WaitClosed(t)
			}
		}

		// ---- circuit breaker ----
		allow := func(b *lbBackend) bool {
			if b.state == "open" && loop.Time()-b.openedAt >= coolDown {
				b.state = "half-open"
				p.log("proxy: %s breaker half-open", b.name)
			}
			if b.state == "half-open" {
				if b.trial {
					return false
				}
				b.trial = true
				return true
			}
			return b.state == "closed"
		}
		record := func(b *lbBackend, ok bool) {
			if ok {
				if b.state != "closed" {
					p.log("proxy: %s breaker closed", b.name)
				}
				b.state, b.fails, b.trial = "closed", 0, false
				return
			}
			b.fails++
			b.trial = false
			if b.state == "half-open" || b.fails >= failsToOpen {
				if b.state != "open" {
					p.log("proxy: %s breaker open after %d failures", b.name, b.fails)
				}
				b.state = "open"
				b.openedAt = loop.Time()
			}
		}

		// ---- proxy ----
		backends := []*lbBackend{
			{name: "b0", latency: 20 * ms, up: true, state: "closed"},
			{name: "b1", latency: 20 * ms, up: true, state: "closed"},
			{name: "b2", latency: 20 * ms, up: true, state: "closed"},
		}
		rr, inflight := 0, 0
		idle := asyncio.NewEvent()
		idle.Set()
		var proxyServer *aio.Server

		pick := func() []*lbBackend {
			n := len(backends)
			first := rr % n
			rr++
			var picks []*lbBackend
			for i := range n {
				b := backends[(first+i)%n]
				if b.up && len(picks) < 2 && allow(b) {
					picks = append(picks, b)
				}
			}
			return picks
		}
		attempt := func(t *asyncio.T, b *lbBackend, key string) (string, error) {
			reply, err := func() (string, error) {
				r, w, err := aio.OpenConnection(t, host, b.port, sim)
				if err != nil {
					return "", err
				}
				defer w.Close()
				if err := w.Write([]byte("GET " + key + "\n")); err != nil {
					return "", err
				}
				line, err := r.ReadLine(t)
				if err != nil {
					return "", err
				}
				reply := strings.TrimSpace(string(line))
				if !strings.HasPrefix(reply, "OK") {
					if reply == "" {
						reply = "nothing"
					}
					return "", &pyExc{"BackendError", b.name + " said " + reply}
				}
				return reply, nil
			}()
			var pe *pyExc
			switch {
			case err == nil:
				record(b, true)
				return reply, nil
			case asyncio.IsCancelled(err):
				p.log("proxy: %s on %s cancelled", key, b.name)
			case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.As(err, &pe):
				p.log("proxy: %s on %s failed: %s", key, b.name, nd(err))
				record(b, false)
			}
			return "", err
		}
		forward := func(t *asyncio.T, key string) (string, error) {
			picks := pick()
			if len(picks) == 0 {
				return "", &pyExc{"BackendError", "no backend available"}
			}
			return asyncio.Hedge(t, asyncio.HedgePolicy{MaxAttempts: len(picks), Delay: hedgeAfter}, func(t *asyncio.T, i int) (string, error) {
				if i == 1 {
					p.log("proxy: %s hedging to %s", key, picks[1].name)
				}
				return attempt(t, picks[i], key)
			})
		}
		handleClient := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			for line, err := range r.Lines(t) {
				if err != nil {
					return err
				}
				key := strings.Fields(string(line))[1]
				inflight++
				idle.Clear()
				reply, err := forward(t, key)
				var pe *pyExc
				var eg *asyncio.ExceptionGroup
				if errors.As(err, &pe) || errors.As(err, &eg) {
					reply, err = "ERR "+pd(err), nil
				}
				inflight--
				if inflight == 0 {
					idle.Set()
				}
				if err != nil {
					return err
				}
				if w.IsClosing() {
					p.log("proxy: reply for %s dropped: client closed", key)
					break
				}
				if err := w.Write([]byte(reply + "\n")); err != nil {
					return err
				}
			}
			w.Close()
			return nil
		}
		drain := func(t *asyncio.T) error {
			p.log("proxy: draining, %d in flight", inflight)
			proxyServer.Close()
			err := asyncio.Timeout(t, grace, func(*asyncio.TimeoutScope) error { return idle.Wait(t) })
			switch {
			case err == nil:
				p.log("proxy: drained")
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("proxy: grace over, %d still in flight", inflight)
			default:
				return err
			}
			proxyServer.CloseClients()
			if err := proxyServer.WaitClosed(t); err != nil {
				return err
			}
			if err := idle.Wait(t); err != nil {
				return err
			}
			p.log("proxy: closed")
			return nil
		}
		healthChecker := func(t *asyncio.T) error {
			for tick := 0; ; {
				for _, b := range backends {
					ok := false
					err := asyncio.Timeout(t, 30*ms, func(*asyncio.TimeoutScope) error {
						r, w, err := aio.OpenConnection(t, host, b.port, sim)
						if err != nil {
							return err
						}
						if err := w.Write([]byte("PING\n")); err != nil {
							return err
						}
						line, err := r.ReadLine(t)
						if err != nil {
							return err
						}
						ok = string(line) == "PONG\n"
						w.Close()
						return nil
					})
					if err != nil && !errors.Is(err, asyncio.ErrTimeout) && !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
						return err
					}
					if ok != b.up {
						state := "down"
						if ok {
							state = "up"
						}
						p.log("health: %s %s", b.name, state)
						b.up = ok
					}
				}
				tick++
				if err := sleepUntil(t, 15*ms+checkEvery*time.Duration(tick)); err != nil {
					return err
				}
			}
		}

		// ---- clients and the script ----
		type req struct {
			at  time.Duration
			key string
		}
		client := func(name string, port int, script []req) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := aio.OpenConnection(t, host, port, sim)
				if err != nil {
					return "", err
				}
				answered := 0
				for _, s := range script {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					if err := w.Write([]byte("GET " + s.key + "\n")); err != nil {
						return "", err
					}
					line, err := r.ReadLine(t)
					if err != nil {
						return "", err
					}
					reply := strings.TrimSpace(string(line))
					if reply == "" {
						p.log("%s %s -> connection closed", name, s.key)
						break
					}
					p.log("%s %s -> %s", name, s.key, reply)
					answered++
				}
				w.Close()
				if err := w.WaitClosed(t); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s %d/%d", name, answered, len(script)), nil
			}
		}

		p.restart()
		for _, b := range backends {
			if err := start(tk, b); err != nil {
				return err
			}
		}
		var err error
		if proxyServer, err = aio.StartServer(tk, handleClient, host, 0, sim); err != nil {
			return err
		}
		port := portOf(proxyServer)
		if err := sleepUntil(tk, 15*ms); err != nil {
			return err
		}
		checker := asyncio.CreateTaskErr(tk, healthChecker)
		clients := []*asyncio.Task[string]{
			asyncio.CreateTask(tk, client("alice", port, []req{{30 * ms, "k1"}, {120 * ms, "k2"}, {320 * ms, "k3"}, {510 * ms, "k4"}, {730 * ms, "k5"}})),
			asyncio.CreateTask(tk, client("bob", port, []req{{60 * ms, "k6"}, {160 * ms, "k7"}, {340 * ms, "k8"}, {460 * ms, "k9"}, {680 * ms, "k10"}, {860 * ms, "k11"}})),
			asyncio.CreateTask(tk, client("carol", port, []req{{90 * ms, "k12"}, {280 * ms, "k13"}, {430 * ms, "k14"}, {690 * ms, "k15"}, {920 * ms, "k16"}})),
		}
		events := []struct {
			at     time.Duration
			what   string
			action func(t *asyncio.T) error
		}{
			{100 * ms, "b1 slows down", func(*asyncio.T) error { backends[1].latency = 150 * ms; return nil }},
			{260 * ms, "b2 stops", func(t *asyncio.T) error { return stop(t, backends[2]) }},
			{380 * ms, "b0 starts failing", func(*asyncio.T) error { backends[0].failing = true; return nil }},
			{570 * ms, "b0 recovers, b2 restarts", func(t *asyncio.T) error {
				backends[0].failing = false
				return start(t, backends[2])
			}},
			{830 * ms, "every backend slows down", func(*asyncio.T) error {
				for _, b := range backends {
					b.latency = 250 * ms
				}
				return nil
			}},
		}
		for _, e := range events {
			if err := sleepUntil(tk, e.at); err != nil {
				return err
			}
			p.log("main: %s", e.what)
			if err := e.action(tk); err != nil {
				return err
			}
		}
		if err := sleepUntil(tk, 880*ms); err != nil {
			return err
		}
		if err := drain(tk); err != nil {
			return err
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(clients)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range results {
			if o.Err != nil {
				outs = append(outs, "'"+nd(o.Err)+"'")
			} else {
				outs = append(outs, "'"+o.Value+"'")
			}
		}
		p.log("clients: [%s]", strings.Join(outs, ", "))
		checker.Cancel()
		for _, b := range backends {
			if err := stop(tk, b); err != nil {
				return err
			}
		}
		var states []string
		for _, b := range backends {
			states = append(states, fmt.Sprintf("('%s', '%s', %s)", b.name, b.state, pb(b.up)))
		}
		p.log("breakers: [%s]", strings.Join(states, ", "))
		return nil
	})
}
