//go:build unix

package ports_test

// Ports p181 onward (h38): larger programs (250-400 lines of Python) that
// mix many features at once. p181 is a Redis-like key-value server on
// streams (expiry timers, bounded subscriber queues, an idle timeout
// rescheduled per command, a client limit, a graceful shutdown with
// close_clients); p182 a link checker (a URL queue, workers, per-host
// limits, a rate limit, retries with backoff, a crawl deadline). Same
// conventions as ports_test.go and ports50_test.go (the simulated
// network on virtual time).

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p181_kv_server.py

// kvSubscriber is the program's Subscriber.
type kvSubscriber struct {
	name  string
	w     *aio.StreamWriter
	queue *asyncio.Queue[string]
	acked *asyncio.Event
}

// kvArity is execute's arity table.
var kvArity = map[string][2]int{"GET": {1, 1}, "SET": {2, 4}, "DEL": {1, 1}, "PUBLISH": {2, 2}, "PING": {0, 0}}

func TestPortKVServer(t *testing.T) {
	runPort(t, cpythonTrace("p181_kv_server"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		const host = "127.0.0.1"
		const maxClients, idleFor, subQueue, grace, shutdownAt = 4, 600 * ms, 2, 300 * ms, 1670 * ms

		store := map[string]string{}
		expiries := map[string]*asyncio.TimerHandle{}
		// channels: channel -> subscribers in subscription order (a dict).
		channels := map[string][]*kvSubscriber{}
		var channelOrder []string
		writers := map[*aio.StreamWriter]bool{}
		slots := asyncio.NewSemaphore(maxClients)
		loop := tk.Loop()

		expire := func(key string) {
			delete(expiries, key)
			delete(store, key)
			p.log("server: key %s expired", key)
		}
		forget := func(key string) {
			if h, ok := expiries[key]; ok {
				delete(expiries, key)
				h.Cancel()
			}
		}
		unsubscribe := func(channel, name string) {
			channels[channel] = slicesDeleteFunc(channels[channel], func(s *kvSubscriber) bool { return s.name == name })
		}
		publish := func(channel, msg string) (int, error) {
			delivered := 0
			for _, sub := range append([]*kvSubscriber(nil), channels[channel]...) {
				err := sub.queue.PutNowait(msg)
				if errors.Is(err, asyncio.ErrQueueFull) {
					p.log("server: %s too slow, dropped from %s", sub.name, channel)
					unsubscribe(channel, sub.name)
					if err := sub.w.Write([]byte("-ERR slow consumer\n")); err != nil {
						return 0, err
					}
					sub.w.Close()
					continue
				}
				if err != nil {
					return 0, err
				}
				delivered++
			}
			return delivered, nil
		}
		execute := func(parts []string) (string, error) {
			cmd, args := strings.ToUpper(parts[0]), parts[1:]
			ar, ok := kvArity[cmd]
			if !ok {
				return fmt.Sprintf("-ERR unknown command '%s'", parts[0]), nil
			}
			if len(args) < ar[0] || len(args) > ar[1] || (cmd == "SET" && len(args) == 3) {
				return fmt.Sprintf("-ERR wrong number of arguments for '%s'", cmd), nil
			}
			switch cmd {
			case "PING":
				return "+PONG", nil
			case "GET":
				v, ok := store[args[0]]
				if !ok {
					return "$nil", nil
				}
				return "$" + v, nil
			case "SET":
				key, value := args[0], args[1]
				var ttl float64
				hasTTL := false
				if len(args) == 4 {
					if strings.ToUpper(args[2]) != "EX" {
						return "-ERR syntax error", nil
					}
					f, err := strconv.ParseFloat(args[3], 64)
					if err != nil {
						return "-ERR invalid expire time", nil
					}
					ttl, hasTTL = f, true
				}
				forget(key)
				store[key] = value
				if hasTTL {
					expiries[key] = loop.CallLater(time.Duration(ttl*float64(time.Second)), func() { expire(key) })
				}
				return "+OK", nil
			case "DEL":
				forget(args[0])
				_, had := store[args[0]]
				delete(store, args[0])
				if had {
					return ":1", nil
				}
				return ":0", nil
			}
			n, err := publish(args[0], args[1])
			return fmt.Sprintf(":%d", n), err
		}
		push := func(sub *kvSubscriber) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					msg, err := sub.queue.Get(t)
					if err != nil {
						return err
					}
					if err := sub.w.Write([]byte("MSG " + msg + "\n")); err != nil {
						return err
					}
					if err := sub.acked.Wait(t); err != nil {
						return err
					}
					sub.acked.Clear()
				}
			}
		}
		subscribed := func(t *asyncio.T, name, channel string, r *aio.StreamReader, w *aio.StreamWriter) error {
			sub := &kvSubscriber{name: name, w: w, queue: asyncio.NewQueue[string](subQueue), acked: asyncio.NewEvent()}
			if _, ok := channels[channel]; !ok {
				channelOrder = append(channelOrder, channel)
			}
			channels[channel] = append(channels[channel], sub)
			if err := w.Write(fmt.Appendf(nil, "+SUBSCRIBED %s %d\n", channel, len(channels[channel]))); err != nil {
				return err
			}
			if err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				pusher, err := asyncio.SpawnErr(g, push(sub))
				if err != nil {
					return err
				}
				for line, err := range r.Lines(t) {
					if err != nil {
						return err
					}
					if strings.TrimSpace(string(line)) == "ACK" {
						sub.acked.Set()
					}
				}
				pusher.Cancel()
				return nil
			}); err != nil {
				return err
			}
			unsubscribe(channel, name)
			p.log("server: %s left %s with %d unsent", name, channel, sub.queue.Len())
			return nil
		}
		session := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			name := "?"
			err := asyncio.Timeout(t, idleFor, func(idle *asyncio.TimeoutScope) error {
				for {
					line, err := r.ReadLine(t)
					if err != nil {
						return err
					}
					if len(line) == 0 {
						p.log("server: %s disconnected", name)
						return nil
					}
					if line[len(line)-1] != '\n' {
						p.log("server: %s disconnected mid-command %s", name, pbytes(line))
						return nil
					}
					if err := idle.Reschedule(loop.Time() + idleFor); err != nil {
						return err
					}
					parts := strings.Fields(string(line))
					if len(parts) == 0 {
						continue
					}
					switch {
					case parts[0] == "HELLO" && len(parts) == 2:
						name = parts[1]
						p.log("server: hello from %s (%d connected)", name, len(writers))
						if err := w.Write([]byte("+HELLO " + name + "\n")); err != nil {
							return err
						}
					case parts[0] == "QUIT":
						if err := w.Write([]byte("+BYE\n")); err != nil {
							return err
						}
						p.log("server: %s quits", name)
						return nil
					case parts[0] == "SUBSCRIBE" && len(parts) == 2:
						if err := idle.Reschedule(asyncio.Never); err != nil {
							return err
						}
						return subscribed(t, name, parts[1], r, w)
					default:
						reply, err := execute(parts)
						if err != nil {
							return err
						}
						if strings.HasPrefix(reply, "-") {
							p.log("server: %s sent %s -> %s", name, pbytes(line), reply)
						}
						if err := w.Write([]byte(reply + "\n")); err != nil {
							return err
						}
					}
				}
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("server: %s idle for 0.6 s, closing", name)
				return w.Write([]byte("-ERR idle timeout\n"))
			}
			return err
		}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if slots.Locked() {
				p.log("server: refusing a connection, %d connected", len(writers))
				if err := w.Write([]byte("-ERR max clients\n")); err != nil {
					return err
				}
				w.Close()
				return nil
			}
			return asyncio.WithLock(t, slots, func() error {
				writers[w] = true
				err := session(t, r, w)
				delete(writers, w)
				w.Close()
				if werr := w.WaitClosed(t); err == nil {
					err = werr
				}
				return err
			})
		}

		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}
		readReply := func(t *asyncio.T, r *aio.StreamReader) (string, error) {
			line, err := r.ReadLine(t)
			return strings.TrimSpace(string(line)), err
		}
		connect := func(t *asyncio.T, name string, at time.Duration, port int) (*aio.StreamReader, *aio.StreamWriter, error) {
			if err := sleepUntil(t, at); err != nil {
				return nil, nil, err
			}
			r, w, err := aio.OpenConnection(t, host, port, sim)
			if err != nil {
				return nil, nil, err
			}
			if err := w.Write([]byte("HELLO " + name + "\n")); err != nil {
				return nil, nil, err
			}
			reply, err := readReply(t, r)
			if err != nil {
				return nil, nil, err
			}
			p.log("%s <- %s", name, reply)
			return r, w, nil
		}
		// logRest is `async for line in reader: log(who, "then", line...)`.
		logRest := func(t *asyncio.T, r *aio.StreamReader, who string) error {
			for line, err := range r.Lines(t) {
				if err != nil {
					return err
				}
				p.log("%s: then %s", who, strings.TrimSpace(string(line)))
			}
			return nil
		}

		alice := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := connect(t, "alice", 20*ms, port)
				if err != nil {
					return "", err
				}
				script := []struct {
					at  time.Duration
					cmd string
				}{
					{170 * ms, "SET a 1 EX 0.25"}, {220 * ms, "GET a"}, {270 * ms, "PUBLISH news m1"},
					{370 * ms, "PUBLISH news m2"}, {470 * ms, "PUBLISH news m3"}, {570 * ms, "PUBLISH news m4"},
					{620 * ms, "GET a"}, {670 * ms, "SET b 2 EX 0.3"}, {770 * ms, "SET b 3"}, {1020 * ms, "GET b"},
					{1060 * ms, "DEL b"}, {1080 * ms, "DEL b"}, {1170 * ms, "SET c 9 EX 5"}, {1270 * ms, "PING"},
					{1570 * ms, "PING"}, {1870 * ms, "PING"},
				}
				for _, s := range script {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					if err := w.Write([]byte(s.cmd + "\n")); err != nil {
						return "", err
					}
					reply, err := readReply(t, r)
					if err != nil {
						return "", err
					}
					p.log("alice: %s -> %s", s.cmd, reply)
					if reply == "SHUTDOWN" {
						p.log("alice: server going down; quitting")
						if err := w.Write([]byte("QUIT\n")); err != nil {
							return "", err
						}
						break
					}
				}
				if err := logRest(t, r, "alice"); err != nil {
					return "", err
				}
				w.Close()
				return "alice done", w.WaitClosed(t)
			}
		}
		subscriber := func(name string, at time.Duration, port int, ackDelay time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := connect(t, name, at, port)
				if err != nil {
					return "", err
				}
				if err := w.Write([]byte("SUBSCRIBE news\n")); err != nil {
					return "", err
				}
				closed := false
				got := 0
				ack := func(msg string) {
					if closed {
						p.log("%s ack of %s skipped: connection closed", name, msg)
						return
					}
					if err := w.Write([]byte("ACK\n")); err != nil {
						panic(err) // raise in a callback
					}
				}
				for line, err := range r.Lines(t) {
					if err != nil {
						return "", err
					}
					text := strings.TrimSpace(string(line))
					p.log("%s <- %s", name, text)
					if strings.HasPrefix(text, "MSG ") {
						got++
						msg := strings.Fields(text)[1]
						t.Loop().CallLater(ackDelay, func() { ack(msg) })
					}
				}
				closed = true
				p.log("%s connection closed by the server", name)
				w.Close()
				return fmt.Sprintf("%s got %d", name, got), w.WaitClosed(t)
			}
		}
		dave := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := connect(t, "dave", 80*ms, port)
				if err != nil {
					return "", err
				}
				for _, s := range []struct {
					at  time.Duration
					cmd string
				}{{110 * ms, "FROB x\n"}, {130 * ms, "SET onlykey\n"}, {190 * ms, "SET k v EX soon\n"}} {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					if err := w.Write([]byte(s.cmd)); err != nil {
						return "", err
					}
					reply, err := readReply(t, r)
					if err != nil {
						return "", err
					}
					p.log("dave: %s -> %s", pbytes([]byte(s.cmd)), reply)
				}
				if err := sleepUntil(t, 310*ms); err != nil {
					return "", err
				}
				if err := w.Write([]byte("GET parti")); err != nil {
					return "", err
				}
				p.log("dave: hangs up mid-command")
				w.Close()
				return "dave gone", w.WaitClosed(t)
			}
		}
		eve := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := sleepUntil(t, 90*ms); err != nil {
					return "", err
				}
				r, w, err := aio.OpenConnection(t, host, port, sim)
				if err != nil {
					return "", err
				}
				first, err := readReply(t, r)
				if err != nil {
					return "", err
				}
				rest, err := r.Read(t, -1)
				if err != nil {
					return "", err
				}
				p.log("eve: first try <- %s eof: %s", first, pb(len(rest) == 0))
				w.Close()
				if err := w.WaitClosed(t); err != nil {
					return "", err
				}
				r, w, err = connect(t, "eve", 870*ms, port)
				if err != nil {
					return "", err
				}
				if err := w.Write([]byte("GET a\n")); err != nil {
					return "", err
				}
				reply, err := readReply(t, r)
				if err != nil {
					return "", err
				}
				p.log("eve: GET a -> %s", reply)
				if err := logRest(t, r, "eve"); err != nil {
					return "", err
				}
				p.log("eve: disconnected")
				w.Close()
				return "eve idled out", nil
			}
		}
		shutdown := func(t *asyncio.T, srv *aio.Server) error {
			p.log("server: shutting down, %d clients, %d expiries pending", len(writers), len(expiries))
			srv.Close()
			for key := range expiries {
				forget(key)
			}
			for w := range writers {
				if err := w.Write([]byte("SHUTDOWN\n")); err != nil {
					return err
				}
			}
			err := asyncio.Timeout(t, grace, func(*asyncio.TimeoutScope) error { return srv.WaitClosed(t) })
			switch {
			case err == nil:
				p.log("server: every client left")
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("server: grace over, %d still connected; closing them", len(writers))
				srv.CloseClients()
				if err := srv.WaitClosed(t); err != nil {
					return err
				}
			default:
				return err
			}
			p.log("server: closed, serving: %s", pb(srv.IsServing()))
			return nil
		}

		p.restart()
		srv, err := aio.StartServer(tk, handle, host, 0, sim)
		if err != nil {
			return err
		}
		port := portOf(srv)
		clients := []*asyncio.Task[string]{
			asyncio.CreateTask(tk, alice(port)),
			asyncio.CreateTask(tk, subscriber("bob", 40*ms, port, 20*ms)),
			asyncio.CreateTask(tk, subscriber("carol", 60*ms, port, 450*ms)),
			asyncio.CreateTask(tk, dave(port)),
			asyncio.CreateTask(tk, eve(port)),
		}
		if err := sleepUntil(tk, shutdownAt); err != nil {
			return err
		}
		if err := shutdown(tk, srv); err != nil {
			return err
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(clients)...).Await(tk)
		if err != nil {
			return err
		}
		var outs []string
		for _, o := range results {
			if o.Err != nil {
				outs = append(outs, nd(o.Err))
			} else {
				outs = append(outs, "'"+o.Value+"'")
			}
		}
		p.log("clients: [%s]", strings.Join(outs, ", "))
		keys := make([]string, 0, len(store))
		for k := range store {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var items []string
		for _, k := range keys {
			items = append(items, fmt.Sprintf("('%s', '%s')", k, store[k]))
		}
		var chans []string
		for _, c := range channelOrder {
			var names []string
			for _, s := range channels[c] {
				names = append(names, "'"+s.name+"'")
			}
			sort.Strings(names)
			chans = append(chans, fmt.Sprintf("'%s': [%s]", c, strings.Join(names, ", ")))
		}
		p.log("store: [%s] channels: {%s}", strings.Join(items, ", "), strings.Join(chans, ", "))
		return nil
	})
}

// slicesDeleteFunc is slices.DeleteFunc on a copy (a dict's del while
// another loop holds a snapshot of its values).
func slicesDeleteFunc[S ~[]E, E any](s S, del func(E) bool) S {
	var out S
	for _, e := range s {
		if !del(e) {
			out = append(out, e)
		}
	}
	return out
}
