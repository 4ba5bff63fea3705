//go:build unix && go1.25

package ports_test

// Ports p225 onward (h43): larger application programs (300-500 lines of
// Python), same conventions as ports181_test.go. p225 is a pub/sub
// message broker (a mini NATS) on streams over the simulated network:
// wildcard subjects, per-client outgoing queues written out by a pump task
// under a small high-water mark, a sweeper that disconnects a slow
// consumer (its pump cancelled while it waits in drain), admission with a
// wait for a slot, a client whose upload times out while it is blocked in
// drain, and a shutdown through Queue.shutdown that waits for the handler
// tasks. Like p181, p225 keeps CPython's epoll order only on the epoll
// selector: on the poll(2) backend (-tags asyncio_poll) pub1's and cara's
// reads of the shutdown line at 1.5 s swap (CI runs tests/ports on epoll
// only). p226 is a job scheduler: a PriorityQueue of jobs, crons on
// call_at, a worker pool in a TaskGroup with a per-job timeout, retries
// with backoff, cancellation by id, saves through to_thread into a store
// with a lock (a blocking sleep per save) and a graceful shutdown with a
// shielded save in flight; its thread makes it run in a testing/synctest
// bubble on the loop's real clock (runPortBubble, as p170-p179), so that
// the save's time.Sleep and the loop's timers share one fake clock. The
// chains of saves make CPython run late by up to ~20 ms over the program
// (each to_thread round trip costs a few ms), so every event is at least
// 20 ms from any other that could swap with it and from a rounding edge.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p225_pubsub_broker.py

// brokerClient is the program's Client.
type brokerClient struct {
	name      string
	w         *aio.StreamWriter
	subs      []string
	queue     *asyncio.Queue[string]
	fullSince *time.Duration // None until a put finds the queue full
	sent      int
	dropped   int
	draining  bool
	kicked    bool
	pump      *asyncio.Task[struct{}]
}

// brokerValid is valid(subject, wildcards).
func brokerValid(subject string, wildcards bool) bool {
	tokens := strings.Split(subject, ".")
	for i, tok := range tokens {
		if tok == "" {
			return false
		}
		if (tok == "*" || tok == ">") && !wildcards {
			return false
		}
		if tok == ">" && i != len(tokens)-1 {
			return false
		}
	}
	return true
}

// brokerMatches is matches(pattern, subject).
func brokerMatches(pattern, subject string) bool {
	pat, sub := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range pat {
		if tok == ">" {
			return len(sub) > i
		}
		if i >= len(sub) || (tok != "*" && tok != sub[i]) {
			return false
		}
	}
	return len(pat) == len(sub)
}

func TestPortMessageBroker(t *testing.T) {
	runPort(t, cpythonTrace("p225_pubsub_broker"), func(p *probe, tk *asyncio.T) error {
		sim := simLocal(tk)
		const host = "127.0.0.1"
		const maxClients, admitWait, outQueue, highWater, sndbuf = 4, 300 * ms, 8, 4096, 16384
		const slowDeadline, sweepFirst, sweepEvery = 100 * ms, 210 * ms, 300 * ms
		const burst, big, shutdownAt = 24, 30000, 1470 * ms
		loop := tk.Loop()

		// clients is a dict: name -> Client, in connection order.
		var clients []*brokerClient
		handlers := map[*asyncio.T]bool{}
		var handlerOrder []*asyncio.T
		slots := asyncio.NewSemaphore(maxClients)
		published := map[string]int{}
		connections, turnedAway := 0, 0
		var slow []string
		delivered := map[string]int{}

		clientNames := func() []string {
			names := make([]string, len(clients))
			for i, c := range clients {
				names[i] = c.name
			}
			return names
		}
		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}

		enqueue := func(c *brokerClient, line string) bool {
			err := c.queue.PutNowait(line)
			switch {
			case err == nil:
				return true
			case errors.Is(err, asyncio.ErrQueueFull):
				c.dropped++
				if c.fullSince == nil {
					now := loop.Time()
					c.fullSince = &now
				}
				return false
			case errors.Is(err, asyncio.ErrQueueShutDown):
				return false
			}
			panic(err)
		}
		publish := func(subject, payload string) int {
			published[subject]++
			var matched []*brokerClient
			for _, c := range clients {
				if slices.ContainsFunc(c.subs, func(pat string) bool { return brokerMatches(pat, subject) }) {
					matched = append(matched, c)
				}
			}
			for _, c := range matched {
				enqueue(c, "MSG "+subject+" "+payload)
			}
			return len(matched)
		}
		command := func(c *brokerClient, parts []string) string {
			op, args := parts[0], parts[1:]
			switch {
			case op == "PING" && len(args) == 0:
				return "PONG"
			case op == "SUB" && len(args) == 1:
				if !brokerValid(args[0], true) {
					return "-ERR invalid subject " + args[0]
				}
				c.subs = append(c.subs, args[0])
				return "+OK sub " + args[0]
			case op == "UNSUB" && len(args) == 1:
				i := slices.Index(c.subs, args[0])
				if i < 0 {
					return "-ERR not subscribed " + args[0]
				}
				c.subs = slices.Delete(c.subs, i, i+1)
				return "+OK unsub " + args[0]
			case op == "PUB" && len(args) == 2:
				if !brokerValid(args[0], false) {
					return "-ERR invalid subject " + args[0]
				}
				return fmt.Sprintf("+OK %d", publish(args[0], args[1]))
			case op == "PUB":
				return "-ERR usage: PUB subject payload"
			}
			return "-ERR unknown command " + op
		}

		pump := func(c *brokerClient) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					line, err := c.queue.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						break
					}
					if asyncio.IsCancelled(err) {
						p.log("server: %s pump cancelled, waiting in drain: %s", c.name, pb(c.draining))
					}
					if err != nil {
						return err
					}
					c.fullSince = nil
					if err := c.w.Write([]byte(line + "\n")); err != nil {
						return err
					}
					c.sent++
					c.draining = true
					err = c.w.Drain(t)
					if asyncio.IsCancelled(err) {
						p.log("server: %s pump cancelled, waiting in drain: %s", c.name, pb(c.draining))
						return err
					}
					if isConnectionError(err) {
						p.log("server: %s pump lost the connection: %s", c.name, nd(err))
						break
					}
					if err != nil {
						return err
					}
					c.draining = false
				}
				c.w.Close()
				return nil
			}
		}
		kick := func(c *brokerClient) error {
			c.kicked = true
			slow = append(slow, c.name)
			p.log("server: %s is a slow consumer, dropped %s ; disconnecting", c.name, pb(c.dropped > 0))
			c.pump.Cancel()
			if err := c.w.Write([]byte("-ERR slow consumer\n")); err != nil {
				return err
			}
			c.w.Close()
			return nil
		}
		sweeper := func(t *asyncio.T) error {
			tick := sweepFirst
			for {
				if err := sleepUntil(t, tick); err != nil {
					return err
				}
				for _, c := range slices.Clone(clients) {
					if !c.kicked && c.fullSince != nil && loop.Time()-*c.fullSince >= slowDeadline {
						if err := kick(c); err != nil {
							return err
						}
					}
				}
				tick += sweepEvery
			}
		}

		session := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if err := setSockBuf(w, syscall.SO_SNDBUF, sndbuf); err != nil {
				return err
			}
			if err := w.Transport().SetWriteBufferLimits(highWater, -1); err != nil {
				return err
			}
			first, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			parts := strings.Fields(string(first))
			if len(parts) != 2 || parts[0] != "CONNECT" {
				p.log("server: expected CONNECT, got %s", pstrs(parts))
				if err := w.Write([]byte("-ERR expected CONNECT\n")); err != nil {
					return err
				}
				w.Close()
				return nil
			}
			c := &brokerClient{name: parts[1], w: w, queue: asyncio.NewQueue[string](outQueue)}
			clients = append(clients, c)
			p.log("server: %s connected, %d clients", c.name, len(clients))
			c.pump = asyncio.CreateTaskErr(t, pump(c))
			enqueue(c, "+OK welcome "+c.name)
			reason := "hung up"
			for line, err := range r.Lines(t) {
				if isConnectionError(err) {
					reason = nd(err)
					break
				}
				if err != nil {
					return err
				}
				parts := strings.Fields(string(line))
				if len(parts) == 0 {
					continue
				}
				if len(parts) == 1 && parts[0] == "QUIT" {
					reason = "quit"
					enqueue(c, "+OK bye")
					break
				}
				reply := command(c, parts)
				if strings.HasPrefix(reply, "-ERR") {
					text := strings.TrimSpace(string(line))
					if len(text) > 40 {
						text = text[:40]
					}
					p.log("server: %s sent %s -> %s", c.name, text, reply)
				}
				enqueue(c, reply)
			}
			clients = slices.DeleteFunc(clients, func(x *brokerClient) bool { return x == c })
			if c.kicked {
				reason = "kicked"
			} else {
				c.queue.Shutdown(false)
				delivered[c.name] = c.sent
			}
			if _, err := asyncio.GatherOutcomes[struct{}](t, c.pump).Await(t); err != nil {
				return err
			}
			p.log("server: %s gone: %s subs %s", c.name, reason, pstrs(c.subs))
			return nil
		}
		handle := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			handlers[t] = true
			handlerOrder = append(handlerOrder, t)
			defer delete(handlers, t)
			connections++
			err := asyncio.Timeout(t, admitWait, func(*asyncio.TimeoutScope) error {
				return slots.Acquire(t)
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				turnedAway++
				p.log("server: no slot for 0.3 s, turning a connection away")
				if err := w.Write([]byte("-ERR server busy\n")); err != nil {
					return err
				}
				w.Close()
				return nil
			}
			if err != nil {
				return err
			}
			defer slots.Release()
			return session(t, r, w)
		}

		openClient := func(t *asyncio.T, name string, at time.Duration, port int) (*aio.StreamReader, *aio.StreamWriter, error) {
			if err := sleepUntil(t, at); err != nil {
				return nil, nil, err
			}
			r, w, err := aio.OpenConnection(t, host, port, sim)
			if err != nil {
				return nil, nil, err
			}
			return r, w, w.Write([]byte("CONNECT " + name + "\n"))
		}
		type counts struct{ msgs, bulk int }
		listen := func(name string, r *aio.StreamReader, n *counts) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for line, err := range r.Lines(t) {
					if err != nil {
						return err
					}
					text := strings.TrimSpace(string(line))
					if strings.HasPrefix(text, "MSG news.bulk ") {
						n.bulk++
						continue
					}
					if strings.HasPrefix(text, "MSG ") {
						n.msgs++
					}
					p.log("%s <- %s", name, text)
				}
				p.log("%s connection closed", name)
				return nil
			}
		}
		type step struct {
			at  time.Duration
			cmd string
		}
		subscriber := func(name string, at time.Duration, port int, script []step) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := openClient(t, name, at, port)
				if err != nil {
					return "", err
				}
				var n counts
				listener := asyncio.CreateTaskErr(t, listen(name, r, &n))
				for _, s := range script {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					if s.cmd == "HANGUP" {
						p.log("%s hangs up", name)
						w.Close()
						break
					}
					if err := w.Write([]byte(s.cmd + "\n")); err != nil {
						return "", err
					}
				}
				if _, err := listener.Await(t); err != nil {
					return "", err
				}
				w.Close()
				if err := w.WaitClosed(t); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s {'msgs': %d, 'bulk': %d}", name, n.msgs, n.bulk), nil
			}
		}
		readText := func(t *asyncio.T, r *aio.StreamReader) (string, error) {
			line, err := r.ReadLine(t)
			return strings.TrimSpace(string(line)), err
		}
		snail := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := openClient(t, "snail", 260*ms, port)
				if err != nil {
					return "", err
				}
				if err := w.Write([]byte("SUB news.>\n")); err != nil {
					return "", err
				}
				for range 2 {
					text, err := readText(t, r)
					if err != nil {
						return "", err
					}
					p.log("snail <- %s", text)
				}
				w.Transport().PauseReading()
				p.log("snail: busy, stops reading")
				if err := sleepUntil(t, 1210*ms); err != nil {
					return "", err
				}
				w.Transport().ResumeReading()
				var lines []string
				for line, err := range r.Lines(t) {
					if err != nil {
						return "", err
					}
					lines = append(lines, strings.TrimSpace(string(line)))
				}
				p.log("snail: resumed, read news: %s last: %s", pb(strings.HasPrefix(lines[0], "MSG news.")), lines[len(lines)-1])
				w.Close()
				return "snail read to the end", w.WaitClosed(t)
			}
		}
		publisher := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				r, w, err := openClient(t, "pub1", 290*ms, port)
				if err != nil {
					return "", err
				}
				text, err := readText(t, r)
				if err != nil {
					return "", err
				}
				p.log("pub1 <- %s", text)
				request := func(line string) (string, error) {
					if err := w.Write([]byte(line + "\n")); err != nil {
						return "", err
					}
					if err := w.Drain(t); err != nil {
						return "", err
					}
					return readText(t, r)
				}
				var burstReplies []string
				script := []step{
					{310 * ms, "PUB metrics.cpu 17"}, {360 * ms, "PUB news.sports goal"}, {380 * ms, "PUB metrics.mem 512"},
					{400 * ms, "PUB news.weather rain"}, {460 * ms, "PUB news 0"}, {480 * ms, "PUB news.* 1"},
					{500 * ms, "PING"}, {520 * ms, "BURST"}, {860 * ms, "PUB metrics.cpu 55"}, {910 * ms, "PUB news.sports score"},
					{1010 * ms, "PUB metrics.cpu 61"}, {1090 * ms, "PUB news.sports final"}, {1190 * ms, "PING"},
					{1260 * ms, "PUB onlysubject"}, {1370 * ms, "PUB news.late bye"},
				}
				payload := strings.Repeat("b", big)
				for _, s := range script {
					if err := sleepUntil(t, s.at); err != nil {
						return "", err
					}
					if s.cmd == "BURST" {
						for range burst {
							reply, err := request("PUB news.bulk " + payload)
							if err != nil {
								return "", err
							}
							burstReplies = append(burstReplies, reply)
						}
						continue
					}
					if burstReplies != nil {
						set := slices.Compact(slices.Sorted(slices.Values(burstReplies)))
						p.log("pub1: the burst of %d got %s", burst, pstrs(set))
						burstReplies = nil
					}
					reply, err := request(s.cmd)
					if err != nil {
						return "", err
					}
					p.log("pub1: %s -> %s", s.cmd, reply)
				}
				for line, err := range r.Lines(t) {
					if err != nil {
						return "", err
					}
					p.log("pub1: then %s", strings.TrimSpace(string(line)))
				}
				w.Close()
				return "pub1 done", w.WaitClosed(t)
			}
		}
		late := func(port int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				_, w, err := openClient(t, "late", 370*ms, port)
				if err != nil {
					return "", err
				}
				if err := setSockBuf(w, syscall.SO_SNDBUF, sndbuf); err != nil {
					return "", err
				}
				if err := w.Transport().SetWriteBufferLimits(highWater, -1); err != nil {
					return "", err
				}
				line := []byte("PUB logs.raw " + strings.Repeat("x", big) + "\n")
				sent, waiting := 0, false
				err = asyncio.Timeout(t, 200*ms, func(*asyncio.TimeoutScope) error {
					for range 200 {
						if err := w.Write(line); err != nil {
							return err
						}
						waiting = true
						if err := w.Drain(t); err != nil {
							return err
						}
						waiting = false
						sent++
					}
					return nil
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("late: upload timed out, blocked in drain: %s sent all: %s", pb(waiting), pb(sent == 200))
				} else if err != nil {
					return "", err
				}
				w.Transport().Abort()
				return "late gave up", nil
			}
		}

		shutdown := func(t *asyncio.T, server *aio.Server, sweep *asyncio.Task[struct{}]) error {
			p.log("server: shutting down, %d clients %s", len(clients), pstrs(clientNames()))
			server.Close()
			sweep.Cancel()
			for _, c := range clients {
				enqueue(c, "-ERR server shutting down")
				c.queue.Shutdown(false)
			}
			var running []*asyncio.T
			for _, h := range handlerOrder {
				if handlers[h] {
					running = append(running, h)
				}
			}
			done, pending, err := asyncio.Wait(t, running, 300*ms, asyncio.AllCompleted)
			if err != nil {
				return err
			}
			p.log("server: handlers finished %d still running %d", len(done), len(pending))
			if err := server.WaitClosed(t); err != nil {
				return err
			}
			p.log("server: closed")
			return nil
		}

		p.restart()
		server, err := aio.StartServer(tk, handle, host, 0, sim)
		if err != nil {
			return err
		}
		port := portOf(server)
		sweep := asyncio.CreateTaskErr(tk, sweeper)
		tasks := []*asyncio.Task[string]{
			asyncio.CreateTask(tk, subscriber("ann", 10*ms, port, []step{
				{60 * ms, "SUB news.>"}, {90 * ms, "SUB metrics.*"}, {960 * ms, "UNSUB metrics.*"},
				{1060 * ms, "UNSUB foo.bar"}, {1120 * ms, "SUB bad..subject"}, {1310 * ms, "PING"}})),
			asyncio.CreateTask(tk, subscriber("bob", 120*ms, port, []step{
				{160 * ms, "SUB news.sports"}, {190 * ms, "SUB *.cpu"}, {220 * ms, "SUB news.>.x"},
				{710 * ms, "HANGUP"}})),
			asyncio.CreateTask(tk, snail(port)),
			asyncio.CreateTask(tk, publisher(port)),
			asyncio.CreateTask(tk, late(port)),
			asyncio.CreateTask(tk, subscriber("cara", 760*ms, port, []step{
				{770 * ms, "SUB news.*"}, {780 * ms, "SUB metrics.>"}, {1160 * ms, "FETCH news"}})),
		}
		if err := sleepUntil(tk, shutdownAt); err != nil {
			return err
		}
		if err := shutdown(tk, server, sweep); err != nil {
			return err
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		for _, o := range results {
			if o.Err != nil {
				p.log("client: %s", pd(o.Err))
			} else {
				p.log("client: %s", o.Value)
			}
		}
		p.log("stats: %d connections, %d turned away, slow: %s", connections, turnedAway, pstrs(slow))
		p.log("published: %s", brokerItems(published))
		p.log("delivered: %s", brokerItems(delivered))
		return nil
	})
}

// brokerItems is sorted(d.items()) of a dict of str -> int.
func brokerItems(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("('%s', %d)", k, m[k])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ---------------------------------------------------------------------------
// p226_job_scheduler.py

// schedJob is the program's Job; timeout is None as asyncio.Never.
type schedJob struct {
	id       string
	prio     int
	duration time.Duration
	fails    int
	timeout  time.Duration
	attempts int
}

// schedItem is the queue's (priority, seq, id) tuple.
type schedItem struct {
	prio, seq int
	id        string
}

// jobError is the program's JobError.
type jobError struct{ msg string }

func (e *jobError) Error() string { return e.msg }

// schedStore is the program's Store: save runs on a thread, under the
// lock, and blocks for the save time. The lock is a channel, not a
// sync.Mutex: a goroutine waiting for a Mutex does not count as durably
// blocked in a synctest bubble, so the bubble's clock would not move on
// to end the holder's sleep.
type schedStore struct {
	lock     chan struct{}
	rows     map[string]schedRow
	version  int
	saveTime time.Duration
}

func (s *schedStore) open() {
	s.lock <- struct{}{}
	defer func() { <-s.lock }()
	clear(s.rows)
}

// schedRow is a store row: (value, version).
type schedRow struct {
	value   string
	version int
}

func (s *schedStore) save(key, value string) int {
	s.lock <- struct{}{}
	defer func() { <-s.lock }()
	time.Sleep(s.saveTime)
	s.version++
	s.rows[key] = schedRow{value, s.version}
	return s.version
}

// schedCron is the program's Cron.
type schedCron struct {
	name         string
	first, every time.Duration
	prio         int
	duration     time.Duration
	runs         int
	handle       *asyncio.TimerHandle
}

func TestPortJobScheduler(t *testing.T) {
	runPortBubble(t, cpythonTrace("p226_job_scheduler"), func(p *probe, tk *asyncio.T) error {
		const workers, maxAttempts = 3, 3
		const backoff, saveTime, grace, shutdownAt = 400 * ms, 120 * ms, 600 * ms, 3580 * ms
		loop := tk.Loop()

		store := &schedStore{lock: make(chan struct{}, 1), rows: map[string]schedRow{}, saveTime: saveTime}
		queue := asyncio.NewPriorityQueue[schedItem](0, func(a, b schedItem) bool {
			if a.prio != b.prio {
				return a.prio < b.prio
			}
			return a.seq < b.seq
		})
		type deadLetter struct{ id, why string }
		deadLetters := asyncio.NewQueue[deadLetter](0)
		stopping := asyncio.NewEvent()
		seq := 0
		jobs := map[string]*schedJob{}
		var jobOrder []string
		outcomes := map[string]string{}
		running := map[string]*asyncio.Task[string]{}
		cancelRequested := map[string]bool{}
		retries := map[string]*asyncio.TimerHandle{}
		var retryOrder []string // the retries dict's insertion order
		persisting := map[*asyncio.Task[int]]bool{}
		var persistingOrder []*asyncio.Task[int]
		var abandoned []string

		enqueue := func(job *schedJob) {
			item := schedItem{job.prio, seq, job.id}
			seq++
			if err := queue.PutNowait(item); err != nil {
				panic(err)
			}
		}
		submit := func(job *schedJob, source string) {
			jobs[job.id] = job
			jobOrder = append(jobOrder, job.id)
			enqueue(job)
			p.log("%s submits %s prio %d queued %d", source, job.id, job.prio, queue.Len())
		}
		crons := []*schedCron{
			{name: "heartbeat", first: 560 * ms, every: 1100 * ms, prio: 0, duration: 90 * ms},
			{name: "compact", first: 2560 * ms, every: 2000 * ms, prio: 2, duration: 40 * ms},
		}
		var arm func(c *schedCron, when time.Duration)
		arm = func(c *schedCron, when time.Duration) {
			c.handle = loop.CallAt(when, func() {
				c.runs++
				submit(&schedJob{id: fmt.Sprintf("%s#%d", c.name, c.runs), prio: c.prio, duration: c.duration, timeout: asyncio.Never}, "cron")
				arm(c, when+c.every)
			})
		}
		delRetry := func(id string) *asyncio.TimerHandle {
			h := retries[id]
			delete(retries, id)
			retryOrder = slices.DeleteFunc(retryOrder, func(x string) bool { return x == id })
			return h
		}
		requeue := func(job *schedJob) {
			delRetry(job.id)
			p.log("retry of %s is due", job.id)
			enqueue(job)
		}
		body := func(job *schedJob) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, job.duration); err != nil {
					return "", err
				}
				if job.attempts <= job.fails {
					return "", &jobError{fmt.Sprintf("%s attempt %d failed", job.id, job.attempts)}
				}
				return job.id + "-done", nil
			}
		}
		persist := func(t *asyncio.T, wname string, job *schedJob, result string) error {
			save := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
				return asyncio.ToThread(t, func(context.Context) (int, error) {
					return store.save(job.id, result), nil
				})
			})
			persisting[save] = true
			persistingOrder = append(persistingOrder, save)
			save.AddDoneCallback(func() {
				delete(persisting, save)
				persistingOrder = slices.DeleteFunc(persistingOrder, func(x *asyncio.Task[int]) bool { return x == save })
			})
			version, err := asyncio.Shield[int](save).Await(t)
			if asyncio.IsCancelled(err) {
				p.log("%s cancelled while saving %s ; the save goes on", wname, job.id)
				outcomes[job.id] = "saved after shutdown"
				return err
			}
			if err != nil {
				return err
			}
			outcomes[job.id] = fmt.Sprintf("ok v%d", version)
			p.log("%s saved %s as version %d", wname, job.id, version)
			return nil
		}
		runJob := func(t *asyncio.T, wname string, job *schedJob) error {
			if cancelRequested[job.id] {
				p.log("%s skips %s (cancelled while queued)", wname, job.id)
				outcomes[job.id] = "cancelled while queued"
				return nil
			}
			job.attempts++
			p.log("%s starts %s attempt %d", wname, job.id, job.attempts)
			task := asyncio.CreateTask(t, body(job), asyncio.WithName(job.id))
			running[job.id] = task
			var result string
			err := asyncio.Timeout(t, job.timeout, func(*asyncio.TimeoutScope) error {
				var err error
				result, err = task.Await(t)
				return err
			})
			delete(running, job.id)
			var je *jobError
			switch {
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("%s %s timed out after %s s", wname, job.id, pyFloat(job.timeout.Seconds()))
				outcomes[job.id] = "timed out"
				return deadLetters.PutNowait(deadLetter{job.id, "timeout"})
			case asyncio.IsCancelled(err):
				if t.Cancelling() > 0 {
					p.log("%s cancelled while running %s", wname, job.id)
					outcomes[job.id] = "cancelled by shutdown"
					return err
				}
				p.log("%s %s was cancelled by control", wname, job.id)
				outcomes[job.id] = "cancelled while running"
				return nil
			case errors.As(err, &je):
				if job.attempts < maxAttempts {
					delay := backoff << (job.attempts - 1)
					p.log("%s %s ; retry in %s s", wname, je.msg, pyFloat(delay.Seconds()))
					retries[job.id] = loop.CallLater(delay, func() { requeue(job) })
					retryOrder = append(retryOrder, job.id)
				} else {
					p.log("%s %s ; giving up", wname, je.msg)
					outcomes[job.id] = fmt.Sprintf("dead after %d attempts", job.attempts)
					return deadLetters.PutNowait(deadLetter{job.id, je.msg})
				}
				return nil
			case err != nil:
				return err
			}
			return persist(t, wname, job, result)
		}
		worker := func(i int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				wname := fmt.Sprintf("w%d", i)
				for !stopping.IsSet() {
					item, err := queue.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						p.log("%s sees the queue shut down", wname)
						break
					}
					if err != nil {
						return err
					}
					err = runJob(t, wname, jobs[item.id])
					queue.TaskDone()
					if err != nil {
						return err
					}
				}
				p.log("%s exits", wname)
				return nil
			}
		}
		alerter := func(t *asyncio.T) error {
			for {
				dl, err := deadLetters.Get(t)
				if errors.Is(err, asyncio.ErrQueueShutDown) {
					return nil
				}
				if err != nil {
					return err
				}
				p.log("ALERT: dead letter %s - %s", dl.id, dl.why)
			}
		}
		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}
		cancel := func(id string) {
			_, known := jobs[id]
			_, ended := outcomes[id]
			if !known || ended {
				p.log("control: no such job %s", id)
				return
			}
			cancelRequested[id] = true
			if task, ok := running[id]; ok {
				p.log("control: cancels running %s", id)
				task.Cancel()
			} else if _, ok := retries[id]; ok {
				p.log("control: cancels the retry of %s", id)
				delRetry(id).Cancel()
				outcomes[id] = "cancelled while waiting to retry"
			} else {
				p.log("control: marks %s cancelled", id)
			}
		}
		control := func(t *asyncio.T) error {
			for _, job := range []*schedJob{
				{id: "urgent-fix", prio: 1, duration: 280 * ms, timeout: asyncio.Never}, {id: "flaky", prio: 3, duration: 200 * ms, fails: 2, timeout: asyncio.Never},
				{id: "slow-export", prio: 4, duration: 2400 * ms, timeout: 1200 * ms}, {id: "ingest-a", prio: 5, duration: 640 * ms, timeout: asyncio.Never},
				{id: "ingest-b", prio: 5, duration: time.Second, timeout: asyncio.Never}, {id: "report-q1", prio: 6, duration: 1600 * ms, timeout: asyncio.Never}, {id: "thumbs", prio: 7, duration: 400 * ms, timeout: asyncio.Never},
				{id: "broken", prio: 8, duration: 300 * ms, fails: 99, timeout: asyncio.Never},
			} {
				if job.timeout == 0 {
					job.timeout = asyncio.Never
				}
				submit(job, "control")
			}
			script := []struct {
				at     time.Duration
				action func()
			}{
				{720 * ms, func() { cancel("thumbs") }}, {1760 * ms, func() { cancel("report-q1") }},
				{1920 * ms, func() { cancel("nope") }},
				{2020 * ms, func() { submit(&schedJob{id: "backfill", prio: 2, duration: 2400 * ms, timeout: 4000 * ms}, "control") }},
				{3460 * ms, func() {
					submit(&schedJob{id: "late-report", prio: 6, duration: 680 * ms, timeout: asyncio.Never}, "control")
				}},
				{shutdownAt, stopping.Set},
			}
			for _, s := range script {
				if err := sleepUntil(t, s.at); err != nil {
					return err
				}
				s.action()
			}
			p.log("control: shutdown requested")
			return nil
		}
		supervisor := func(ws []*asyncio.Task[struct{}]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := stopping.Wait(t); err != nil {
					return err
				}
				ids := slices.Sorted(maps.Keys(running))
				p.log("supervisor: stopping, %d queued, running %s", queue.Len(), pstrs(ids))
				for _, c := range crons {
					c.handle.Cancel()
					p.log("supervisor: cron %s stopped after %d runs", c.name, c.runs)
				}
				for _, id := range slices.Clone(retryOrder) {
					delRetry(id).Cancel()
					outcomes[id] = "retry cancelled by shutdown"
					p.log("supervisor: cancels the retry of %s", id)
				}
				for !queue.Empty() {
					item, err := queue.GetNowait()
					if err != nil {
						return err
					}
					queue.TaskDone()
					abandoned = append(abandoned, item.id)
					if _, ok := outcomes[item.id]; !ok {
						outcomes[item.id] = "abandoned in the queue"
					}
				}
				queue.Shutdown(false)
				done, pending, err := asyncio.Wait(t, ws, grace, asyncio.AllCompleted)
				if err != nil {
					return err
				}
				p.log("supervisor: %d workers done, %d still busy after the grace period", len(done), len(pending))
				for _, w := range ws {
					if slices.Contains(pending, w) {
						w.Cancel()
					}
				}
				if len(pending) > 0 {
					if _, _, err := asyncio.Wait(t, pending, asyncio.Never, asyncio.AllCompleted); err != nil {
						return err
					}
				}
				if len(persistingOrder) > 0 {
					p.log("supervisor: waiting for %d save(s) in flight", len(persistingOrder))
					versions, err := asyncio.Gather(t, asyncio.Awaitables(slices.Clone(persistingOrder))...).Await(t)
					if err != nil {
						return err
					}
					p.log("supervisor: in-flight saves done, versions %s", pyInts(versions))
				}
				deadLetters.Shutdown(false)
				return nil
			}
		}

		if _, err := asyncio.ToThread(tk, func(context.Context) (struct{}, error) {
			store.open()
			return struct{}{}, nil
		}); err != nil {
			return err
		}
		p.restart()
		for _, c := range crons {
			arm(c, p.t0+c.first)
		}
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			var ws []*asyncio.Task[struct{}]
			for i := range workers {
				w, err := asyncio.SpawnErr(g, worker(i))
				if err != nil {
					return err
				}
				ws = append(ws, w)
			}
			for _, fn := range []func(*asyncio.T) error{alerter, control, supervisor(ws)} {
				if _, err := asyncio.SpawnErr(g, fn); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.log("report:")
		for _, id := range jobOrder {
			outcome, ok := outcomes[id]
			if !ok {
				outcome = "?"
			}
			p.log("  %s attempts %d -> %s", id, jobs[id].attempts, outcome)
		}
		versions := map[string]int{}
		for k, row := range store.rows {
			versions[k] = row.version
		}
		p.log("store: version %d rows %s", store.version, brokerItems(versions))
		p.log("abandoned: %s", pstrs(abandoned))
		return nil
	})
}
