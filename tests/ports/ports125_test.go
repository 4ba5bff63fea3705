//go:build unix

package ports_test

// Ports p125 onward (h34): a service reloading on signals it sends
// itself, subprocess pipelines over os.pipe, a deadline budget with
// timeout_at, an HTTP/1.1 keep-alive client, a state machine on
// Conditions, a program driving its own loop, debug mode's reports, a
// batch uploader under a semaphore, exception-handler routing, Ctrl-C in
// asyncio.run (once, twice, and taken over by the program's own SIGINT
// handler in a Runner), a file-tail watcher and StreamReaders fed by
// hand. Same conventions as ports_test.go, ports50_test.go (network, on
// the simulated network), ports70_test.go (subprocesses) and
// ports111_test.go. A signal the program sends itself is outside work on
// its way to the loop: on virtual time the port holds the clock with
// ExpectExternal until it has arrived (README "Virtual time for tests"),
// where CPython's handler runs at once; no line changes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio/aio"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// ---------------------------------------------------------------------------
// p125_signal_reload.py

func TestPortSignalReload(t *testing.T) {
	// If the loop ended before the last SIGUSR2 (the ErrDeadlock it once
	// reported), its Close would give SIGUSR2 its default action back, the
	// end of the test binary: this Notify keeps it caught meanwhile.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGUSR2)
	defer signal.Stop(guard)
	runPort(t, cpythonTrace("p125_signal_reload"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		var events []string
		gen := 0
		reloaded, stopping := asyncio.NewEvent(), asyncio.NewEvent()
		// On virtual time the loop cannot know that a signal is on its way
		// to it: the clock would jump past it (README "Virtual time for
		// tests": code that completes things from outside says so with
		// ExpectExternal). kill holds the clock until the handler has run;
		// CPython's handler runs at once too (the wakeup fd is readable
		// before kill returns), so no line changes.
		var inFlight func()
		arrived := func() {
			if inFlight != nil {
				inFlight()
				inFlight = nil
			}
		}
		onReload := func(tag string) func() {
			return func() {
				arrived()
				gen++
				events = append(events, fmt.Sprintf("reload %s gen %d", tag, gen))
				reloaded.Set()
			}
		}
		onStop := func() {
			arrived()
			events = append(events, "stop requested")
			stopping.Set()
		}
		worker := func(name string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				beats := 0
				for !stopping.IsSet() {
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return beats, err
					}
					beats++
				}
				p.log("%s stops after %d beats with gen %d", name, beats, gen)
				return beats, nil
			}
		}
		kill := func(sig syscall.Signal) error {
			inFlight = loop.ExpectExternal()
			return syscall.Kill(os.Getpid(), sig)
		}

		if err := loop.AddSignalHandler(syscall.SIGUSR1, onReload("first")); err != nil {
			return err
		}
		if err := loop.AddSignalHandler(syscall.SIGUSR2, onStop); err != nil {
			return err
		}
		var workers []asyncio.AwaitableOf[int]
		for i := range 2 {
			workers = append(workers, asyncio.CreateTask(tk, worker(fmt.Sprintf("w%d", i))))
		}

		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR1); err != nil {
			return err
		}
		p.log("sent SIGUSR1, handled yet: %d", len(events))
		if err := reloaded.Wait(tk); err != nil {
			return err
		}
		reloaded.Clear()
		p.log("after reload %s", events[len(events)-1])

		if err := loop.AddSignalHandler(syscall.SIGUSR1, onReload("second")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR1); err != nil {
			return err
		}
		if err := reloaded.Wait(tk); err != nil {
			return err
		}
		p.log("after reload %s", events[len(events)-1])

		for _, sig := range []syscall.Signal{syscall.SIGKILL, 0, 65} {
			if err := loop.AddSignalHandler(sig, onStop); err != nil {
				p.log("add %d refused: %s", int(sig), pdv125(err))
			} else {
				return fmt.Errorf("add %d accepted", int(sig))
			}
		}
		for _, r := range []struct {
			name string
			sig  syscall.Signal
		}{{"SIGUSR1", syscall.SIGUSR1}, {"SIGUSR1 again", syscall.SIGUSR1}, {"SIGHUP", syscall.SIGHUP}} {
			ok, err := loop.RemoveSignalHandler(r.sig)
			if err != nil {
				return err
			}
			p.log("remove %s: %s", r.name, pb(ok))
		}

		if err := asyncio.Sleep(tk, 150*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR2); err != nil {
			return err
		}
		beats, err := asyncio.Gather(tk, workers...).Await(tk)
		if err != nil {
			return err
		}
		p.log("workers stopped %s events %s", pyInts(beats), pstrs(events))
		ok, err := loop.RemoveSignalHandler(syscall.SIGUSR2)
		if err != nil {
			return err
		}
		p.log("remove SIGUSR2: %s", pb(ok))

		// one more SIGUSR2, from another goroutine, while main has nothing
		// else to wait for: the loop waits for it (a handled signal can wake
		// it, as a real descriptor can), and the clock holds no ExpectExternal
		stopping.Clear()
		if err := loop.AddSignalHandler(syscall.SIGUSR2, onStop); err != nil {
			return err
		}
		// (not a Recv of kill's error: awaiting a channel is outside work,
		// which would hold the loop by itself)
		time.AfterFunc(50*ms, func() {
			if err := syscall.Kill(os.Getpid(), syscall.SIGUSR2); err != nil {
				panic(err)
			}
		})
		if err := stopping.Wait(tk); err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "woken by a signal from a thread, events %d\n", len(events)) // print(): no time
		return nil
	})
}

// ---------------------------------------------------------------------------
// p126_subprocess_pipeline.py

// spawnPipeline is the program's pipeline(*argvs): each child's stdout is
// an os.Pipe whose read end is the next child's stdin, the parent closing
// its copies once the child has them; the first child's stdin is
// DEVNULL, the last child's stdout a Pipe.
func spawnPipeline(tk *asyncio.T, argvs ...[]string) ([]*aio.Process, error) {
	var procs []*aio.Process
	var prev *os.File
	for i, argv := range argvs {
		last := i == len(argvs)-1
		stdin := aio.DevNull
		if prev != nil {
			stdin = aio.File(prev)
		}
		stdout := aio.Pipe
		var next, outW *os.File
		if !last {
			var err error
			if next, outW, err = os.Pipe(); err != nil {
				return procs, err
			}
			stdout = aio.File(outW)
		}
		pr, err := aio.CreateSubprocessExec(tk, argv[0], argv[1:], aio.WithStdin(stdin), aio.WithStdout(stdout))
		if prev != nil {
			prev.Close()
		}
		if outW != nil {
			outW.Close()
		}
		if err != nil {
			if next != nil {
				next.Close()
			}
			return procs, err
		}
		prev = next
		procs = append(procs, pr)
	}
	return procs, nil
}

// waitAll is [await p.wait() for p in procs].
func waitAll(tk *asyncio.T, procs []*aio.Process) ([]int, error) {
	var codes []int
	for _, pr := range procs {
		rc, err := pr.Wait(tk)
		if err != nil {
			return codes, err
		}
		codes = append(codes, rc)
	}
	return codes, nil
}

func TestPortSubprocessPipeline(t *testing.T) {
	runPort(t, cpythonTrace("p126_subprocess_pipeline"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		procs, err := spawnPipeline(tk, []string{"printf", `pear\napple\nfig\napple\npear\n`}, []string{"sort"}, []string{"uniq", "-c"})
		if err != nil {
			return err
		}
		var lines []string
		for line, err := range procs[len(procs)-1].Stdout.Lines(tk) {
			if err != nil {
				return err
			}
			var words []string
			for _, w := range bytes.Fields(line) {
				words = append(words, pbytes(w))
			}
			lines = append(lines, "["+strings.Join(words, ", ")+"]")
		}
		codes, err := waitAll(tk, procs)
		if err != nil {
			return err
		}
		p.log("counted [%s] codes %s", strings.Join(lines, ", "), pyInts(codes))

		procs, err = spawnPipeline(tk, []string{"printf", `b\na\n`}, []string{"tr", "a-z", "A-Z"})
		if err != nil {
			return err
		}
		out, errOut, err := procs[len(procs)-1].Communicate(tk, nil)
		if err != nil {
			return err
		}
		if codes, err = waitAll(tk, procs); err != nil {
			return err
		}
		p.log("upper %s %s %s", pbytes(out), pbytesOrNone(errOut), pyInts(codes))

		// the source writes for ever; the sink stops after its first line
		procs, err = spawnPipeline(tk, []string{"yes", "spam"}, []string{"head", "-n", "2"})
		if err != nil {
			return err
		}
		if out, _, err = procs[len(procs)-1].Communicate(tk, nil); err != nil {
			return err
		}
		if codes, err = waitAll(tk, procs); err != nil {
			return err
		}
		p.log("head %s codes %s %s", pbytes(out), pyInts(codes), pb(codes[0] == -int(syscall.SIGPIPE)))

		// a sink that never finishes: killed when the deadline passes
		p.restart()
		procs, err = spawnPipeline(tk, []string{"printf", `x\n`}, []string{"sh", "-c", "read line; echo got $line; exec sleep 10"})
		if err != nil {
			return err
		}
		sink := procs[len(procs)-1]
		said, err := sink.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("sink said %s", pbytes(said))
		err = asyncio.Timeout(tk, 200*ms, func(*asyncio.TimeoutScope) error {
			_, _, err := sink.Communicate(tk, nil)
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("slow sink %s returncode %s", pd(err), prc(sink))
			if err := sink.Kill(); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		rcSink, err := sink.Wait(tk)
		if err != nil {
			return err
		}
		rcSource, err := procs[0].Wait(tk)
		if err != nil {
			return err
		}
		p.log("sink %d source %d", rcSink, rcSource)

		// concurrent children under a semaphore, each with its env and cwd
		sem := asyncio.NewSemaphore(2)
		running, peak := 0, 0
		tmp := t.TempDir()
		for _, name := range []string{"a", "b", "c"} {
			if err := os.Mkdir(filepath.Join(tmp, name), 0o755); err != nil {
				return err
			}
		}
		job := func(name string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := sem.Acquire(t); err != nil {
					return "", err
				}
				defer func() { _ = sem.Release() }()
				running++
				peak = max(peak, running)
				pr, err := aio.CreateSubprocessExec(t, "sh", []string{"-c", `echo "$JOB $(basename "$PWD")"; exit $CODE`},
					aio.WithStdout(aio.Pipe), aio.WithDir(filepath.Join(tmp, name)),
					aio.WithEnv([]string{"JOB=job-" + name, "CODE=" + strconv.Itoa(int(name[0])-97), "PATH=" + os.Getenv("PATH")}))
				if err != nil {
					return "", err
				}
				out, _, err := pr.Communicate(t, nil)
				if err != nil {
					return "", err
				}
				running--
				return fmt.Sprintf("('%s', %s)", strings.TrimSpace(string(out)), prc(pr)), nil
			}
		}
		results, err := asyncio.GatherFuncs(tk, job("a"), job("b"), job("c")).Await(tk)
		if err != nil {
			return err
		}
		fmt.Fprintf(&p.b, "jobs [%s] peak %d\n", strings.Join(results, ", "), peak) // print(): no time

		// signals a child does not handle
		p.restart()
		for _, s := range []struct {
			name string
			sig  syscall.Signal
		}{{"SIGALRM", syscall.SIGALRM}, {"SIGUSR1", syscall.SIGUSR1}, {"SIGTERM", syscall.SIGTERM}} {
			pr, err := aio.CreateSubprocessExec(tk, "sleep", []string{"10"})
			if err != nil {
				return err
			}
			p.restart()
			if err := pr.SendSignal(s.sig); err != nil {
				return err
			}
			rc, err := pr.Wait(tk)
			if err != nil {
				return err
			}
			p.log("sleep got %s returncode %d %s", s.name, rc, pb(rc == -int(s.sig)))
		}
		pr, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", "trap 'exit 7' USR1; echo armed; while :; do sleep 0.01; done"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		line, err := pr.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("child %s", pbytes(bytes.TrimSpace(line)))
		if err := pr.SendSignal(syscall.SIGUSR1); err != nil {
			return err
		}
		rc, err := pr.Wait(tk)
		if err != nil {
			return err
		}
		p.log("trapping child returncode %d", rc)

		// a helper that always hands its input to communicate(), whether
		// the child has a stdin pipe or not: without one the input is dropped
		runTool := func(argv []string, input []byte, stdin aio.Redirect) (string, error) {
			pr, err := aio.CreateSubprocessExec(tk, argv[0], argv[1:], aio.WithStdin(stdin), aio.WithStdout(aio.Pipe))
			if err != nil {
				return "", err
			}
			p.restart()
			out, errOut, err := pr.Communicate(tk, input)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("(%s, %s, %s)", pbytes(out), pbytesOrNone(errOut), prc(pr)), nil
		}
		res, err := runTool([]string{"tr", "a-z", "A-Z"}, []byte("abc\n"), aio.Pipe)
		if err != nil {
			return err
		}
		p.log("tool with a stdin pipe %s", res)
		if res, err = runTool([]string{"echo", "hi"}, []byte("dropped\n"), aio.DevNull); err != nil {
			return err
		}
		p.log("tool without one %s", res)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p127_deadline_budget.py

type budgetStep struct {
	name     string
	cost     time.Duration
	optional bool
}

func TestPortDeadlineBudget(t *testing.T) {
	runPort(t, cpythonTrace("p127_deadline_budget"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		step := func(t *asyncio.T, name string, cost time.Duration) (string, error) {
			if err := asyncio.Sleep(t, cost); err != nil {
				return "", err
			}
			return name, nil
		}
		handle := func(rid string, budget time.Duration, steps []budgetStep, commitCost time.Duration) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				var done []string
				var cm *asyncio.TimeoutScope
				err := asyncio.TimeoutAt(t, loop.Time()+budget, func(s *asyncio.TimeoutScope) error {
					cm = s
					for _, st := range steps {
						left := s.When() - loop.Time()
						if st.optional && left < st.cost {
							p.log("%s skips %s left %.1f", rid, st.name, left.Seconds())
							continue
						}
						name, err := step(t, st.name, st.cost)
						if err != nil {
							return err
						}
						done = append(done, name)
					}
					saved := s.When()
					if err := s.Reschedule(asyncio.Never); err != nil {
						return err
					}
					p.log("%s commit starts, deadline %s", rid, p.rel(s.When()))
					if err := asyncio.Sleep(t, commitCost); err != nil {
						return err
					}
					if err := s.Reschedule(saved); err != nil {
						return err
					}
					p.log("%s commit done, deadline back %s expired %s", rid, p.rel(s.When()), pb(s.Expired()))
					if _, err := step(t, "reply", 50*ms); err != nil {
						return err
					}
					done = append(done, "reply")
					return nil
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("%s deadline hit %s after %s expired %s", rid, pd(err), pstrs(done), pb(cm.Expired()))
					return fmt.Sprintf("('%s', 'timeout')", rid), nil
				} else if err != nil {
					return "", err
				}
				p.log("%s finished %s", rid, pstrs(done))
				return fmt.Sprintf("('%s', 'ok')", rid), nil
			}
		}

		p.restart()
		steps := []budgetStep{{"auth", 30 * ms, false}, {"enrich", 200 * ms, true}, {"load", 100 * ms, false}}
		results, err := asyncio.GatherFuncs(tk,
			handle("r1", 600*ms, steps, 100*ms),
			handle("r2", 300*ms, steps, 100*ms),
			handle("r3", 220*ms, steps, 250*ms),
		).Await(tk)
		if err != nil {
			return err
		}
		p.log("results [%s]", strings.Join(results, ", "))

		p.restart()
		var cm *asyncio.TimeoutScope
		err = asyncio.TimeoutAt(tk, loop.Time()-time.Second, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("past deadline entered, expired %s", pb(s.Expired()))
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			p.log("not reached")
			return nil
		})
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("past deadline: %v", err)
		}
		p.log("past deadline %s expired %s when %s", pd(err), pb(cm.Expired()), p.rel(cm.When()+time.Second))

		p.restart()
		var outer, inner *asyncio.TimeoutScope
		err = asyncio.TimeoutAt(tk, loop.Time()+300*ms, func(s *asyncio.TimeoutScope) error {
			outer = s
			err := asyncio.TimeoutAt(tk, loop.Time()+600*ms, func(s *asyncio.TimeoutScope) error {
				inner = s
				return asyncio.Sleep(tk, time.Second)
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("inner caught it")
			} else if err != nil {
				return err
			}
			p.log("not reached either")
			return nil
		})
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("nested: %v", err)
		}
		p.log("outer caught it: outer expired %s inner expired %s", pb(outer.Expired()), pb(inner.Expired()))

		p.restart()
		err = asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("no deadline %s %s", p.rel(s.When()), pb(s.Expired()))
			if err := asyncio.Sleep(tk, 120*ms); err != nil {
				return err
			}
			if err := s.Reschedule(loop.Time() + 200*ms); err != nil {
				return err
			}
			p.log("armed for %s", p.rel(s.When()))
			if err := asyncio.Sleep(tk, 50*ms); err != nil {
				return err
			}
			p.log("still inside, expired %s", pb(s.Expired()))
			return nil
		})
		if err != nil {
			return err
		}
		p.log("left without firing, expired %s", pb(cm.Expired()))
		for _, when := range []time.Duration{asyncio.Never, loop.Time() + time.Second} {
			if err := cm.Reschedule(when); err != nil {
				p.log("reschedule after exit %s", pd(err))
			} else {
				return fmt.Errorf("reschedule after exit accepted")
			}
		}
		// asyncio.timeout_at(when) makes a scope that is not entered yet;
		// TimeoutAt enters at once, so the zero TimeoutScope stands for it.
		if err := new(asyncio.TimeoutScope).Reschedule(asyncio.Never); err != nil {
			p.log("reschedule before enter %s", pd(err))
		} else {
			return fmt.Errorf("reschedule before enter accepted")
		}

		p.restart()
		guarded := func(t *asyncio.T) (struct{}, error) {
			return noValue, asyncio.Timeout(t, 500*ms, func(s *asyncio.TimeoutScope) error {
				defer p.log("guarded finally, expired %s", pb(s.Expired()))
				return asyncio.Sleep(t, time.Second)
			})
		}
		task := asyncio.CreateTask(tk, guarded)
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		task.Cancel("client gone")
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("outside cancel stays %s uncancel count %d", pd(err), task.Cancelling())
		} else {
			return fmt.Errorf("guarded: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p128_http_keepalive.py

type httpReq struct {
	method, path string
	body         []byte
	close        bool
}

type httpClient struct {
	p      *probe
	sim    aio.Option
	port   int
	r      *aio.StreamReader
	w      *aio.StreamWriter
	opened int
}

func (c *httpClient) connect(t *asyncio.T) error {
	r, w, err := aio.OpenConnection(t, "127.0.0.1", c.port, c.sim)
	if err != nil {
		return err
	}
	c.r, c.w = r, w
	c.opened++
	return nil
}

func (c *httpClient) readHead(t *asyncio.T) ([]string, error) {
	var fields []string
	for {
		line, err := c.r.ReadUntil(t, []byte("\r\n"), []byte("\n"))
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return fields, nil
		}
		fields = append(fields, string(line))
	}
}

// readResponse returns the status line, the body and whether the server
// said Connection: close.
func (c *httpClient) readResponse(t *asyncio.T) (string, []byte, bool, error) {
	fields, err := c.readHead(t)
	if err != nil {
		return "", nil, false, err
	}
	headers := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, ": ")
		headers[k] = v
	}
	var body []byte
	if headers["Transfer-Encoding"] == "chunked" {
		var parts [][]byte
		for {
			line, err := c.r.ReadLine(t)
			if err != nil {
				return "", nil, false, err
			}
			size, err := strconv.ParseInt(strings.TrimSpace(string(line)), 16, 64)
			if err != nil {
				return "", nil, false, err
			}
			chunk, err := c.r.ReadExactly(t, int(size)+2)
			if err != nil {
				return "", nil, false, err
			}
			if size == 0 {
				break
			}
			parts = append(parts, chunk[:len(chunk)-2])
		}
		body = bytes.Join(parts, []byte("|"))
	} else {
		n, err := strconv.Atoi(headers["Content-Length"])
		if err != nil {
			return "", nil, false, err
		}
		if body, err = c.r.ReadExactly(t, n); err != nil {
			return "", nil, false, err
		}
	}
	return fields[0], body, headers["Connection"] == "close", nil
}

func (c *httpClient) pipeline(t *asyncio.T, reqs ...httpReq) (string, error) {
	if c.w == nil || c.r.AtEOF() {
		if c.w != nil {
			c.p.log("client: connection at EOF, reconnecting")
			c.w.Close()
			if err := c.w.WaitClosed(t); err != nil {
				return "", err
			}
		}
		if err := c.connect(t); err != nil {
			return "", err
		}
	}
	for _, q := range reqs {
		head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: local\r\n", q.method, q.path)
		if len(q.body) > 0 {
			head += fmt.Sprintf("Content-Length: %d\r\n", len(q.body))
		}
		if q.close {
			head += "Connection: close\r\n"
		}
		if err := c.w.Write(append([]byte(head+"\r\n"), q.body...)); err != nil {
			return "", err
		}
	}
	if err := c.w.Drain(t); err != nil {
		return "", err
	}
	var out []string
	for range reqs {
		status, body, closing, err := c.readResponse(t)
		if err != nil {
			return "", err
		}
		out = append(out, fmt.Sprintf("('%s', %s)", status, pbytes(body)))
		if closing {
			c.w.Close()
			if err := c.w.WaitClosed(t); err != nil {
				return "", err
			}
			c.w = nil
			c.p.log("client: closed as the server asked")
		}
	}
	return "[" + strings.Join(out, ", ") + "]", nil
}

func TestPortHTTPKeepAlive(t *testing.T) {
	runPort(t, cpythonTrace("p128_http_keepalive"), func(p *probe, tk *asyncio.T) error {
		const idle = 300 * ms
		sim := simLocal(tk)
		conns := 0
		serve := func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) (err error) {
			conns++
			cid := fmt.Sprintf("c%d", conns)
			p.log("server: %s connected", cid)
			served := 0
			defer func() {
				w.Close()
				if werr := w.WaitClosed(t); err == nil {
					err = werr
				}
			}()
			for {
				var head []byte
				err := asyncio.Timeout(t, idle, func(*asyncio.TimeoutScope) error {
					var err error
					head, err = r.ReadUntil(t, []byte("\r\n\r\n"))
					return err
				})
				var ire *aio.IncompleteReadError
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("server: %s idle, closing after %d", cid, served)
					return nil
				case errors.As(err, &ire):
					p.log("server: %s eof after %d partial %s", cid, served, pbytes(ire.Partial))
					return nil
				case err != nil:
					return err
				}
				lines := strings.Split(string(head), "\r\n")
				first := strings.Split(lines[0], " ")
				method, path := first[0], first[1]
				headers := map[string]string{}
				for _, l := range lines[1:] {
					if l != "" {
						k, v, _ := strings.Cut(l, ": ")
						headers[k] = v
					}
				}
				var body []byte
				if cl, ok := headers["Content-Length"]; ok {
					n, err := strconv.Atoi(cl)
					if err != nil {
						return err
					}
					if body, err = r.ReadExactly(t, n); err != nil {
						return err
					}
				}
				served++
				closing := headers["Connection"] == "close"
				if path == "/slow" {
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return err
					}
				}
				switch path {
				case "/crash":
					if err := w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Le")); err != nil {
						return err
					}
					if err := w.Drain(t); err != nil {
						return err
					}
					p.log("server: %s crashes mid-response", cid)
					w.Transport().Abort()
					return nil
				case "/stream":
					if err := w.Write([]byte("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n")); err != nil {
						return err
					}
					for _, part := range []string{"alpha", "beta", "gamma"} {
						if err := w.Write([]byte(fmt.Sprintf("%x\r\n%s\r\n", len(part), part))); err != nil {
							return err
						}
						if err := w.Drain(t); err != nil {
							return err
						}
					}
					if err := w.Write([]byte("0\r\n\r\n")); err != nil {
						return err
					}
				default:
					payload := fmt.Sprintf("%s %s #%d %s", method, path, served, body)
					extra := ""
					if closing {
						extra = "Connection: close\r\n"
					}
					if err := w.Write([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s", len(payload), extra, payload))); err != nil {
						return err
					}
				}
				if err := w.Drain(t); err != nil {
					return err
				}
				if closing {
					p.log("server: %s closes on request after %d", cid, served)
					return nil
				}
			}
		}

		p.restart()
		srv, err := aio.StartServer(tk, serve, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		c := &httpClient{p: p, sim: sim, port: portOf(srv)}
		got, err := c.pipeline(tk, httpReq{"GET", "/a", nil, false}, httpReq{"POST", "/b", []byte("hello"), false},
			httpReq{"GET", "/stream", nil, false})
		if err != nil {
			return err
		}
		p.log("batch 1 %s", got)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if got, err = c.pipeline(tk, httpReq{"GET", "/slow", nil, false}); err != nil {
			return err
		}
		p.log("slow %s", got)
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		if got, err = c.pipeline(tk, httpReq{"GET", "/c", nil, false}, httpReq{"GET", "/d", nil, true}); err != nil {
			return err
		}
		p.log("after idle %s", got)
		p.log("connections opened %d", c.opened)
		var ire *aio.IncompleteReadError
		if _, err := c.pipeline(tk, httpReq{"GET", "/crash", nil, false}); errors.As(err, &ire) {
			p.log("client: %s partial %s expected %s", nd(err), pbytes(ire.Partial), pexpected(ire))
		} else {
			return fmt.Errorf("crash: %v", err)
		}
		c.w.Close()
		if err := c.w.WaitClosed(tk); err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(tk); err != nil {
			return err
		}
		p.log("server closed, connections %d opened %d", conns, c.opened)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p129_order_state_machine.py

func TestPortOrderStateMachine(t *testing.T) {
	runPort(t, cpythonTrace("p129_order_state_machine"), func(p *probe, tk *asyncio.T) error {
		lock := asyncio.NewLock()
		stateChanged, stockChanged := asyncio.NewCondition(lock), asyncio.NewCondition(lock)
		state, history := "new", []string{}
		stock := 0
		apply := func(t *asyncio.T, event, newState string, stockDelta int) error {
			if err := lock.Acquire(t); err != nil {
				return err
			}
			defer func() { _ = lock.Release() }()
			history = append(history, event)
			if newState != "" {
				state = newState
				if err := stateChanged.NotifyAll(); err != nil {
					return err
				}
			}
			if stockDelta != 0 {
				stock += stockDelta
				if err := stockChanged.Notify(stockDelta); err != nil {
					return err
				}
			}
			p.log("event %s -> %s stock %d", event, state, stock)
			return nil
		}
		awaitState := func(name string, states ...string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := stateChanged.Acquire(t); err != nil {
					return "", err
				}
				defer func() { _ = stateChanged.Release() }()
				if err := stateChanged.WaitFor(t, func() bool { return slices.Contains(states, state) }); err != nil {
					return "", err
				}
				p.log("%s saw %s locked %s", name, state, pb(lock.Locked()))
				return state, nil
			}
		}
		picker := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := stockChanged.Acquire(t); err != nil {
					return noValue, err
				}
				defer func() { _ = stockChanged.Release() }()
				if err := stockChanged.WaitFor(t, func() bool { return stock > 0 }); err != nil {
					return noValue, err
				}
				stock--
				p.log("%s picked one, left %d", name, stock)
				return noValue, nil
			}
		}
		// strict raises in the program; WaitFor's predicate returns a bool
		// only, so it records the error and stops the wait, and checker
		// returns it (the lock is held either way, as after the raise).
		var strictErr error
		strict := func() bool {
			if state == "cancelled" {
				strictErr = newValueError("order was cancelled")
				return true
			}
			return state == "shipped"
		}

		p.restart()
		waiters := []asyncio.AwaitableOf[string]{
			asyncio.CreateTask(tk, awaitState("billing", "paid")),
			asyncio.CreateTask(tk, awaitState("shipping", "packed", "shipped")),
			asyncio.CreateTask(tk, awaitState("audit", "shipped")),
		}
		var pickers []*asyncio.Task[struct{}]
		for i := range 3 {
			pickers = append(pickers, asyncio.CreateTask(tk, picker(fmt.Sprintf("p%d", i))))
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := apply(tk, "pay", "paid", 0); err != nil {
			return err
		}
		if err := apply(tk, "restock", "", 2); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		var dones []bool
		for _, pk := range pickers {
			dones = append(dones, pk.Done())
		}
		p.log("pickers done %s", pbools(dones...))

		impatient := func(t *asyncio.T) (struct{}, error) {
			_, err := asyncio.WaitForFunc(t, 120*ms, awaitState("impatient", "refunded"))
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("impatient gave up %s state_changed %s", pd(err), pstate(stateChanged))
				return noValue, nil
			}
			return noValue, err
		}
		p.restart()
		imp := asyncio.CreateTask(tk, impatient)
		if err := apply(tk, "pack", "packed", 0); err != nil {
			return err
		}
		if _, err := imp.Await(tk); err != nil {
			return err
		}

		// a waiter cancelled while someone else holds the lock
		late := asyncio.CreateTask(tk, awaitState("late", "delivered"))
		if err := asyncio.Sleep(tk, 80*ms); err != nil {
			return err
		}
		err := func() error {
			if err := lock.Acquire(tk); err != nil {
				return err
			}
			defer func() { _ = lock.Release() }()
			if err := stateChanged.NotifyAll(); err != nil {
				return err
			}
			late.Cancel("stop waiting")
			if err := asyncio.Sleep(tk, 80*ms); err != nil {
				return err
			}
			p.log("holder releases, late done %s", pb(late.Done()))
			return nil
		}()
		if err != nil {
			return err
		}
		if _, err := late.Await(tk); asyncio.IsCancelled(err) {
			p.log("late %s locked %s", pd(err), pb(lock.Locked()))
		} else {
			return fmt.Errorf("late: %v", err)
		}

		checker := func(t *asyncio.T) (bool, error) {
			if err := stateChanged.Acquire(t); err != nil {
				return false, err
			}
			defer func() { _ = stateChanged.Release() }()
			if err := stateChanged.WaitFor(t, strict); err != nil {
				return false, err
			}
			if strictErr != nil {
				p.log("checker: %s lock held %s", pd(strictErr), pb(lock.Locked()))
				return false, strictErr
			}
			return true, nil
		}
		chk := asyncio.CreateTask(tk, checker)
		if err := asyncio.Sleep(tk, 80*ms); err != nil {
			return err
		}
		if err := apply(tk, "restock", "", 1); err != nil {
			return err
		}
		if err := apply(tk, "ship", "shipped", 0); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if chk.Done() {
			v, err := chk.Result()
			if err != nil {
				return err
			}
			p.log("checker result %s", pb(v))
		} else {
			p.log("checker result pending")
		}
		seen, err := asyncio.Gather(tk, waiters...).Await(tk)
		if err != nil {
			return err
		}
		p.log("waiters saw %s", pstrs(seen))
		for _, pk := range pickers {
			if _, err := pk.Await(tk); err != nil {
				return err
			}
		}

		if err := apply(tk, "return", "returned", 0); err != nil {
			return err
		}
		chk = asyncio.CreateTask(tk, checker)
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		if err := apply(tk, "cancel", "cancelled", 0); err != nil {
			return err
		}
		var ve *valueError
		if v, err := chk.Await(tk); errors.As(err, &ve) {
			p.log("checker raised %s locked %s", pd(err), pb(lock.Locked()))
		} else if err != nil {
			return err
		} else {
			p.log("second checker result %s", pb(v))
		}
		p.log("history %s", pstrs(history))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p130_loop_lifecycle.py

// rtMsg is str(e) of the RuntimeError or ValueError a loop call returns
// (or panics with: Go's CallSoon has no error result, so on a closed loop
// it panics with the *RuntimeError asyncio raises, docs/rules.md LOOP-11;
// the port recovers it where the program catches the exception).
func rtMsg(err error) string {
	var re *asyncio.RuntimeError
	var ve *asyncio.ValueError
	switch {
	case errors.As(err, &re):
		return re.Msg
	case errors.As(err, &ve):
		return ve.Msg
	}
	return fmt.Sprintf("%T(%v)", err, err)
}

func TestPortLoopLifecycle(t *testing.T) {
	var b strings.Builder
	loop := asyncio.NewLoop(asyncio.WithVirtualTime())
	t0 := loop.Time()
	say := func(format string, args ...any) {
		fmt.Fprintf(&b, "%.1f %s\n", (loop.Time() - t0).Seconds(), fmt.Sprintf(format, args...))
	}
	var reports []string
	job := func(name string, delay time.Duration, fail bool) func(*asyncio.T) (string, error) {
		return func(t *asyncio.T) (string, error) {
			if err := asyncio.Sleep(t, delay); err != nil {
				return "", err
			}
			say("%s done", name)
			if fail {
				return "", newValueError(name)
			}
			return strings.ToUpper(name), nil
		}
	}
	run := func(task *asyncio.Task[string]) (string, error) {
		if err := loop.RunUntilComplete(task); err != nil {
			return "", err
		}
		return task.Result()
	}
	err := func() error {
		loop.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { reports = append(reports, c.Message) })
		say("running %s closed %s", pb(loop.IsRunning()), pb(loop.IsClosed()))
		v, err := run(asyncio.CreateTask(loop, job("first", 100*ms, false)))
		if err != nil {
			return err
		}
		say("run -> %s", v)

		fut := asyncio.NewFuture[string](loop)
		loop.CallLater(100*ms, func() { fut.SetResult("timer value") })
		if err := loop.RunUntilComplete(fut); err != nil {
			return err
		}
		fv, _ := fut.Result()
		say("future -> %s", fv)

		bg := asyncio.CreateTask(loop, job("background", 220*ms, false))
		if _, err := run(asyncio.CreateTask(loop, job("short", 100*ms, false))); err != nil {
			return err
		}
		say("bg done after a short run %s", pb(bg.Done()))

		var ve *valueError
		if _, err := run(asyncio.CreateTask(loop, job("failing", 70*ms, true))); errors.As(err, &ve) {
			say("run raised ValueError('%s') running %s", ve.msg, pb(loop.IsRunning()))
		} else {
			return fmt.Errorf("failing: %v", err)
		}

		var order []string
		loop.CallLater(200*ms, func() {
			order = append(order, "stop")
			loop.Stop()
			loop.CallSoon(func() { order = append(order, "queued after stop") })
		})
		if err := loop.RunForever(); err != nil {
			return err
		}
		bv, err := bg.Result()
		if err != nil {
			return err
		}
		say("run_forever returned %s bg done %s result %s", pstrs(order), pb(bg.Done()), bv)

		loop.CallSoon(func() { order = append(order, "before one-shot") })
		loop.Stop()
		if err := loop.RunForever(); err != nil {
			return err
		}
		say("stopped before run_forever %s", pstrs(order))

		reenter := func(t *asyncio.T) (string, error) {
			other := asyncio.NewFuture[struct{}](loop)
			for _, call := range []func() error{func() error { return loop.RunUntilComplete(other) }, loop.Close} {
				if err := call(); err != nil {
					say("inside: %s", rtMsg(err))
				}
			}
			other.Cancel("")
			say("running inside %s", pb(loop.IsRunning()))
			return "", nil
		}
		if _, err := run(asyncio.CreateTask(loop, reenter)); err != nil {
			return err
		}

		foreignLoop := asyncio.NewLoop(asyncio.WithVirtualTime())
		foreign := asyncio.NewFuture[struct{}](foreignLoop)
		if err := loop.RunUntilComplete(foreign); err != nil {
			say("foreign future: %s", rtMsg(err))
		}
		if err := foreignLoop.Close(); err != nil {
			return err
		}

		slow := asyncio.CreateTask(loop, job("slow", 300*ms, false))
		loop.CallLater(100*ms, loop.Stop)
		if _, err := run(slow); err != nil {
			say("early stop: %s slow done %s", rtMsg(err), pb(slow.Done()))
		}
		sv, err := run(slow)
		if err != nil {
			return err
		}
		say("slow after a second run -> %s", sv)

		//asynciovet:ignore unawaitedtask left pending on purpose: Close reports it, as the program's gc.collect() does
		asyncio.CreateTask(loop, job("left behind", time.Second, false))
		if err := loop.RunUntilComplete(asyncio.CreateTask(loop, func(t *asyncio.T) (struct{}, error) {
			return noValue, asyncio.Sleep(t, 100*ms)
		})); err != nil {
			return err
		}
		// CPython reports the pending task when it is collected (the
		// program's gc.collect() right after close); Go at Close
		// (docs/rules.md FUT-10): no line in between, the trace is the same.
		if err := loop.Close(); err != nil {
			return err
		}
		fmt.Fprintf(&b, "closed %s running %s reports %s\n", pb(loop.IsClosed()), pb(loop.IsRunning()), pstrs(reports))
		if err := loop.Close(); err != nil {
			return err
		}
		callSoon := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err, _ = r.(error)
				}
			}()
			loop.CallSoon(func() {})
			return nil
		}
		for _, c := range []struct {
			what string
			call func() error
		}{
			{"run_forever", loop.RunForever},
			{"call_soon", callSoon},
			{"run_until_complete", func() error { return loop.RunUntilComplete(asyncio.NewFuture[struct{}](loop)) }},
		} {
			if err := c.call(); err != nil {
				fmt.Fprintf(&b, "closed loop %s -> %s\n", c.what, rtMsg(err))
			}
		}
		return nil
	}()
	if err != nil {
		_ = loop.Close()
		t.Fatalf("main failed: %v\ntrace so far:\n%s", err, b.String())
	}
	if want, got := cpythonTrace("p130_loop_lifecycle"), b.String(); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p131_debug_mode.py

// slowCapture is the program's logging handler on the asyncio logger: the
// library's warnings go to log/slog (docs/rules.md DEBUG-2), so the port
// makes it slog's default handler for the test.
type slowCapture struct {
	mu   sync.Mutex
	slow []string
}

func (c *slowCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *slowCapture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *slowCapture) WithGroup(string) slog.Handler            { return c }
func (c *slowCapture) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	if !strings.HasPrefix(msg, "Executing ") {
		return nil // (the watchdog's "Event loop blocked" report, DEBUG-2)
	}
	kind := "callback"
	if strings.HasPrefix(msg, "Executing <Task") {
		kind = "task step"
	}
	shape := strings.Contains(msg, " took ") && strings.HasSuffix(msg, " seconds")
	level := r.Level.String()
	if r.Level == slog.LevelWarn {
		level = "WARNING" // logging's levelname
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slow = append(c.slow, fmt.Sprintf("%s slow %s %s", level, kind, pb(shape)))
	return nil
}

func (c *slowCapture) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.slow)
}

// The worker thread's call_soon is refused with Go's message: a call from
// a goroutine that is not running the loop panics, in every mode, with a
// *RuntimeError naming the call (README "Where Go differs", the
// thread-safety rows; docs/rules.md DEBUG-3).
var wantDebugModeGo = goism(cpythonTrace("p131_debug_mode"),
	[2]string{"call_soon from a thread: RuntimeError: Non-thread-safe operation invoked on an event loop other than the current one",
		"call_soon from a thread: RuntimeError: CallSoon called from a goroutine that is not running the loop " +
			"(only the goroutine in RunForever and the loop's running task may call it; " +
			"from another goroutine use CallSoonThreadsafe or RunCoroutineThreadsafe)"})

func TestPortDebugMode(t *testing.T) {
	capture := &slowCapture{}
	old := slog.Default()
	slog.SetDefault(slog.New(capture))
	defer slog.SetDefault(old)
	var b strings.Builder
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		loop := tk.Loop()
		fmt.Fprintf(&b, "debug %s threshold %g\n", pb(loop.Debug()), loop.SlowCallbackDuration().Seconds())
		blocker := func(d time.Duration) func() {
			return func() {
				//asynciovet:ignore blockingcall the program's time.sleep in a callback: the block debug mode reports
				time.Sleep(d)
			}
		}
		loop.CallSoon(blocker(150 * ms))
		for range 2 {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return noValue, err
			}
		}
		fmt.Fprintf(&b, "after a blocking callback %s\n", pstrs(capture.list()))

		hog := func(t *asyncio.T) (string, error) {
			//asynciovet:ignore blockingcall the program's time.sleep in a task step: the block debug mode reports
			time.Sleep(150 * ms)
			if err := asyncio.Sleep(t, 0); err != nil {
				return "", err
			}
			return "hogged", nil
		}
		v, err := asyncio.CreateTask(tk, hog).Await(tk)
		if err != nil {
			return noValue, err
		}
		fmt.Fprintf(&b, "hog -> %s %s\n", v, pstrs(capture.list()))

		loop.SetSlowCallbackDuration(50 * ms)
		fmt.Fprintf(&b, "threshold now %g\n", loop.SlowCallbackDuration().Seconds())
		loop.CallLater(10*ms, blocker(70*ms))
		if err := asyncio.Sleep(tk, 20*ms); err != nil {
			return noValue, err
		}
		fmt.Fprintf(&b, "after a shorter block %s\n", pstrs(capture.list()))

		got, err := asyncio.ToThread(tk, func(context.Context) (res string, _ error) {
			defer func() {
				if r := recover(); r != nil {
					var re *asyncio.RuntimeError
					if e, ok := r.(error); ok && errors.As(e, &re) {
						res = "RuntimeError: " + re.Msg
					} else {
						panic(r)
					}
				}
			}()
			//asynciovet:ignore foreigngoroutine the program's non-thread-safe call_soon from a worker thread, which the loop must refuse: that is what the port checks
			loop.CallSoon(func() { fmt.Fprintln(&b, "never") })
			return "accepted", nil
		})
		if err != nil {
			return noValue, err
		}
		fmt.Fprintf(&b, "call_soon from a thread: %s\n", got)
		woke := asyncio.NewEvent()
		if _, err := asyncio.ToThread(tk, func(context.Context) (struct{}, error) {
			_, err := loop.CallSoonThreadsafe(woke.Set)
			return noValue, err
		}); err != nil {
			return noValue, err
		}
		if err := woke.Wait(tk); err != nil {
			return noValue, err
		}
		fmt.Fprintf(&b, "call_soon_threadsafe from a thread woke main, reports %d\n", len(capture.list()))
		return noValue, nil
	}, asyncio.WithVirtualTime(), asyncio.WithDebug())
	if err != nil {
		t.Fatalf("main failed: %v\ntrace so far:\n%s", err, b.String())
	}
	if got := b.String(); got != wantDebugModeGo {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(wantDebugModeGo, got))
	}
}

// ---------------------------------------------------------------------------
// p132_batch_uploader.py

type fatalError struct{ pyExc }

type uploadSpec struct {
	name  string
	cost  time.Duration
	flaky int
	fatal bool
}

func taskNames[V any](ts []*asyncio.Task[V]) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name())
	}
	slices.Sort(names)
	return names
}

func TestPortBatchUploader(t *testing.T) {
	runPort(t, cpythonTrace("p132_batch_uploader"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		sem := asyncio.NewBoundedSemaphore(3)
		inFlight, peak := 0, 0
		notes := map[string]string{}
		upload := func(s uploadSpec) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				notes[s.name] = "queued"
				if err := sem.Acquire(t); err != nil {
					return "", err
				}
				defer func() { _ = sem.Release() }()
				inFlight++
				peak = max(peak, inFlight)
				notes[s.name] = "uploading"
				defer func() { inFlight-- }()
				for attempt := 0; attempt <= s.flaky; attempt++ {
					err := asyncio.Sleep(t, s.cost)
					if err == nil && s.fatal {
						return "", &fatalError{pyExc{"Fatal", s.name + " rejected"}}
					}
					if err == nil && attempt < s.flaky {
						p.log("%s attempt %d failed, backing off", s.name, attempt)
						err = asyncio.Sleep(t, time.Duration(attempt+1)*50*ms)
						if err == nil {
							continue
						}
					}
					if asyncio.IsCancelled(err) {
						notes[s.name] = "cancelled while uploading"
					}
					if err != nil {
						return "", err
					}
					notes[s.name] = "done"
					p.log("%s uploaded", s.name)
					return s.name, nil
				}
				return "", nil
			}
		}
		batch := []uploadSpec{{"a", 100 * ms, 0, false}, {"b", 80 * ms, 3, false}, {"c", 270 * ms, 0, false},
			{"d", 60 * ms, 0, false}, {"e", 200 * ms, 0, true}, {"f", 200 * ms, 0, false}, {"g", 100 * ms, 0, false},
			{"h", 100 * ms, 0, false}}
		var tasks []*asyncio.Task[string]
		for _, s := range batch {
			tasks = append(tasks, asyncio.CreateTask(tk, upload(s), asyncio.WithName(s.name)))
		}
		done, pending, err := asyncio.Wait(tk, tasks, asyncio.Never, asyncio.FirstException)
		if err != nil {
			return err
		}
		var failed []*asyncio.Task[string]
		for _, d := range done {
			if !d.Cancelled() && d.Err() != nil {
				failed = append(failed, d)
			}
		}
		p.log("first exception from %s done %d pending %d", pstrs(taskNames(failed)), len(done), len(pending))
		var aws []asyncio.AwaitableOf[string]
		for _, pt := range pending {
			if notes[pt.Name()] == "queued" {
				notes[pt.Name()] = "cancelled while queued"
			}
			pt.Cancel()
			aws = append(aws, pt)
		}
		results, err := asyncio.GatherOutcomes(tk, aws...).Await(tk)
		if err != nil {
			return err
		}
		cancelled := 0
		for _, r := range results {
			if asyncio.IsCancelled(r.Err) {
				cancelled++
			}
		}
		p.log("cancelled %d", cancelled)
		var items []string
		for _, k := range slices.Sorted(maps.Keys(notes)) {
			items = append(items, fmt.Sprintf("('%s', '%s')", k, notes[k]))
		}
		p.log("notes [%s]", strings.Join(items, ", "))
		p.log("peak %d in flight %d semaphore %s", peak, inFlight, pstate(sem))

		p.restart()
		clear(notes)
		var second []*asyncio.Task[string]
		for _, s := range []uploadSpec{{"k", 100 * ms, 0, false}, {"i", 400 * ms, 0, false}, {"j", 130 * ms, 0, false}} {
			second = append(second, asyncio.CreateTask(tk, upload(s), asyncio.WithName(s.name)))
		}
		if done, pending, err = asyncio.Wait(tk, second, 220*ms, asyncio.AllCompleted); err != nil {
			return err
		}
		p.log("after timeout: done %s pending %s", pstrs(taskNames(done)), pstrs(taskNames(pending)))
		p.log("slow one still %s semaphore %s", notes["i"], pstate(sem))
		if done, _, err = asyncio.Wait(tk, pending, asyncio.Never, asyncio.AllCompleted); err != nil {
			return err
		}
		var vals []string
		for _, d := range done {
			v, err := d.Result()
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		p.log("finally %s semaphore %s", pstrs(vals), pstate(sem))
		if err := sem.Release(); err != nil {
			p.log("extra release: %s", pdv125(err))
		}
		if _, _, err := asyncio.Wait(tk, []*asyncio.Task[string]{}, asyncio.Never, asyncio.AllCompleted); err != nil {
			p.log("empty wait: %s", pdv125(err))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p133_report_routing.py

type clientGone struct{ pyExc }

// logCapture is the program's logging handler on the asyncio logger: the
// default exception handler logs through log/slog (docs/rules.md EXC-1),
// so the port makes it slog's default handler for the test.
type logCapture struct {
	mu     sync.Mutex
	logged []string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *logCapture) WithGroup(string) slog.Handler            { return c }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	first, _, _ := strings.Cut(r.Message, "\n")
	if strings.HasPrefix(first, "Exception in callback ") {
		first = "Exception in callback"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logged = append(c.logged, r.Level.String()+": "+first)
	return nil
}

func (c *logCapture) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.logged)
}

func (c *logCapture) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logged = nil
}

// A handler that panics: Go's CallExceptionHandler logs "Unhandled error
// in exception handler" and then the report it was handling with the
// default handler, two records where asyncio logs one that carries the
// report as its "context" line (docs/rules.md EXC-1).
var wantReportRoutingGo = goism(cpythonTrace("p133_report_routing"),
	[2]string{"0.2 after a failing handler, logged ['ERROR: Unhandled error in exception handler']",
		"0.2 after a failing handler, logged ['ERROR: Unhandled error in exception handler', 'ERROR: explode']"})

func TestPortReportRouting(t *testing.T) {
	capture := &logCapture{}
	old := slog.Default()
	slog.SetDefault(slog.New(capture))
	defer slog.SetDefault(old)
	runPort(t, wantReportRoutingGo, func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		var dropped []string
		route := func(l *asyncio.Loop, ctx asyncio.ExceptionContext) {
			var cg *clientGone
			if errors.As(ctx.Err, &cg) {
				dropped = append(dropped, cg.msg)
				return
			}
			if ctx.Message == "explode" {
				panic(newRuntimeError("router bug"))
			}
			l.DefaultExceptionHandler(ctx)
		}
		// Go has no get_exception_handler (README: keep the handler you
		// set): the port keeps it, as the README says.
		var current func(*asyncio.Loop, asyncio.ExceptionContext)
		p.log("handler set at start: %s", pb(current == nil))
		loop.SetExceptionHandler(route)
		current = route
		p.log("handler is route: %s", pb(current != nil))

		gone := func(who string) func() {
			return func() { panic(&clientGone{pyExc{"ClientGone", who}}) }
		}
		broken := func() { panic(newKeyError("config")) }
		loop.CallSoon(gone("c1"))
		loop.CallSoon(broken)
		loop.CallLater(100*ms, gone("c2"))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("dropped %s logged %s", pstrs(dropped), pstrs(capture.list()))

		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "disk almost full", Err: &pyExc{"OSError", "95%"}})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "no exception at all"})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "client report", Err: &clientGone{pyExc{"ClientGone", "c3"}}})
		p.log("dropped %s logged %s", pstrs(dropped), pstrs(capture.list()))

		capture.clear()
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "explode"})
		p.log("after a failing handler, logged %s", pstrs(capture.list()))

		capture.clear()
		loop.SetExceptionHandler(nil)
		current = nil
		p.log("handler reset: %s", pb(current == nil))
		loop.CallSoon(gone("c4"))
		for range 2 {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}
		p.log("default handler now logs %s dropped %s", pstrs(capture.list()), pstrs(dropped))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p134_ctrl_c_shutdown.py

func TestPortCtrlCShutdown(t *testing.T) {
	if signal.Ignored(os.Interrupt) {
		// asyncio.run, like RunWith, leaves an ignored SIGINT alone: the
		// program would not be interrupted (CPython's trace assumes a
		// SIGINT at its default disposition).
		t.Skip("SIGINT is ignored in this process (started in the background?)")
	}
	var b strings.Builder
	var p *probe
	// The SIGINT is outside work on its way to the loop: the virtual clock
	// must not jump past it (README "Virtual time for tests", as p125);
	// each main releases it once the interruption has reached it.
	var inFlight func()
	arrived := func() {
		if inFlight != nil {
			inFlight()
			inFlight = nil
		}
	}
	interruptLater := func(tk *asyncio.T, d time.Duration) {
		loop := tk.Loop()
		loop.CallLater(d, func() {
			inFlight = loop.ExpectExternal()
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				panic(err)
			}
		})
	}
	worker := func(name string, q *asyncio.Queue[int], done *[]int) func(*asyncio.T) (struct{}, error) {
		return func(t *asyncio.T) (struct{}, error) {
			for {
				item, err := q.Get(t)
				if err == nil {
					err = asyncio.Sleep(t, 50*ms)
				}
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled", name)
				}
				if err != nil {
					return noValue, err
				}
				*done = append(*done, item)
				if err := q.TaskDone(); err != nil {
					return noValue, err
				}
			}
		}
	}
	service := func(tk *asyncio.T) (string, error) {
		p.restart()
		q := asyncio.NewQueue[int](0)
		var done []int
		var workers []asyncio.AwaitableOf[struct{}]
		for i := range 2 {
			workers = append(workers, asyncio.CreateTask(tk, worker(fmt.Sprintf("w%d", i), q, &done)))
		}
		for i := range 10 {
			if err := q.PutNowait(i); err != nil {
				return "", err
			}
		}
		interruptLater(tk, 120*ms)
		err := q.Join(tk)
		if err == nil {
			p.log("all done")
			return "", nil
		}
		if !asyncio.IsCancelled(err) {
			return "", err
		}
		arrived()
		p.log("main %s cancelling %d done %s left %d", pd(err), tk.Cancelling(), pyInts(done), q.Len())
		for _, w := range workers {
			w.(*asyncio.Task[struct{}]).Cancel()
		}
		res, gerr := asyncio.GatherOutcomes(tk, workers...).Await(tk)
		if gerr != nil {
			return "", gerr
		}
		var outs []string
		for _, r := range res {
			outs = append(outs, pd(r.Err))
		}
		p.log("workers stopped %s", pstrs(outs))
		if err := asyncio.Sleep(tk, 50*ms); err != nil {
			return "", err
		}
		p.log("cleanup done")
		return "", err
	}
	stubborn := func(tk *asyncio.T) (string, error) {
		p.restart()
		interruptLater(tk, 100*ms)
		if err := asyncio.Sleep(tk, time.Second); asyncio.IsCancelled(err) {
			arrived()
			p.log("stubborn main swallows the interrupt")
		} else if err != nil {
			return "", err
		}
		return "kept going", nil
	}
	underTimeout := func(tk *asyncio.T) (string, error) {
		p.restart()
		interruptLater(tk, 100*ms)
		err := asyncio.Timeout(tk, 300*ms, func(*asyncio.TimeoutScope) error {
			err := asyncio.Sleep(tk, time.Second)
			if asyncio.IsCancelled(err) {
				arrived()
			}
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("not a timeout")
		} else if err != nil {
			return "", err
		}
		p.log("not reached")
		return "", nil
	}
	for _, m := range []struct {
		name string
		main func(*asyncio.T) (string, error)
	}{{"service", service}, {"stubborn", stubborn}, {"under_timeout", underTimeout}} {
		p = &probe{}
		v, err := asyncio.Run(func(tk *asyncio.T) (string, error) {
			p.l = tk.Loop()
			return m.main(tk)
		}, asyncio.WithVirtualTime())
		b.WriteString(p.b.String())
		switch {
		case errors.Is(err, asyncio.ErrInterrupted):
			fmt.Fprintf(&b, "%s raised KeyboardInterrupt\n", m.name)
		case err != nil:
			t.Fatalf("%s: %v\ntrace so far:\n%s", m.name, err, b.String())
		default:
			fmt.Fprintf(&b, "%s returned %s\n", m.name, v)
		}
		// signal.getsignal(SIGINT) is default_int_handler: Go cannot ask
		// whether os/signal still watches SIGINT; what it can say is that
		// SIGINT is not ignored (Run leaves it at its default action,
		// README, Ctrl-C row).
		fmt.Fprintf(&b, "SIGINT handler is the default again: %s\n", pb(!signal.Ignored(os.Interrupt)))
	}
	if want, got := cpythonTrace("p134_ctrl_c_shutdown"), b.String(); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p135_double_ctrl_c.py

func TestPortDoubleCtrlC(t *testing.T) {
	if signal.Ignored(os.Interrupt) {
		t.Skip("SIGINT is ignored in this process (started in the background?)") // as p134
	}
	p := &probe{}
	var events []string
	// Each SIGINT is outside work on its way to the loop (README "Virtual
	// time for tests", as p125 and p134): the clock waits for it until
	// what it does has reached the tasks.
	var inFlight []func()
	arrived := func() {
		for _, release := range inFlight {
			release()
		}
		inFlight = nil
	}
	child := func(name string, delay time.Duration) func(*asyncio.T) (string, error) {
		return func(t *asyncio.T) (string, error) {
			err := asyncio.Sleep(t, delay)
			if err == nil {
				p.log("%s finished", name)
				return name, nil
			}
			if !asyncio.IsCancelled(err) {
				return "", err
			}
			arrived()
			p.log("%s cancelled, cleaning up", name)
			if cerr := asyncio.Sleep(t, 100*ms); cerr != nil {
				arrived()
				if asyncio.IsCancelled(cerr) {
					events = append(events, name+" cleanup cancelled")
				}
				return "", cerr
			}
			p.log("%s cleanup done", name)
			return "", err
		}
	}
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		p.restart()
		loop := tk.Loop()
		for _, at := range []time.Duration{100 * ms, 150 * ms} {
			loop.CallLater(at, func() {
				inFlight = append(inFlight, loop.ExpectExternal())
				if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
					panic(err)
				}
			})
		}
		var tasks []*asyncio.Task[string]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for _, c := range []struct {
				name  string
				delay time.Duration
			}{{"a", time.Second}, {"b", 30 * ms}, {"c", time.Second}} {
				task, err := asyncio.Spawn(g, child(c.name, c.delay), asyncio.WithName(c.name))
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			return nil
		})
		if asyncio.IsCancelled(err) {
			events = append(events, "main saw "+pd(err))
		}
		var states []string
		for _, task := range tasks {
			states = append(states, fmt.Sprintf("('%s', %s)", task.Name(), pb(task.Done())))
		}
		slices.Sort(states)
		events = append(events, "main finally, children ["+strings.Join(states, ", ")+"]")
		return noValue, err
	}, asyncio.WithVirtualTime())
	var b strings.Builder
	b.WriteString(p.b.String())
	if !errors.Is(err, asyncio.ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted\ntrace so far:\n%s", err, b.String())
	}
	b.WriteString("asyncio.run raised KeyboardInterrupt\n")
	for _, e := range events {
		b.WriteString(e + "\n")
	}
	if want, got := cpythonTrace("p135_double_ctrl_c"), b.String(); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}

// ---------------------------------------------------------------------------
// p136_file_tail.py

// pyStrQ is repr(s) of a str without quotes or backslashes in it.
func pyStrQ(s string) string { return "'" + s + "'" }

func TestPortFileTail(t *testing.T) {
	var events []string
	tmp := t.TempDir()
	path := filepath.Join(tmp, "app.log")
	runPort(t, cpythonTrace("p136_file_tail"), func(p *probe, tk *asyncio.T) error {
		//asynciovet:ignore blockingcall the program's open(path, "wb").close() runs on the loop too
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return err
		}
		appendFile := func(b []byte) error {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := f.Write(b); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
		writeLog := func(t *asyncio.T) (struct{}, error) {
			if err := asyncio.Sleep(t, 25*ms); err != nil {
				return noValue, err
			}
			for _, chunk := range []string{"GET /a 200\n", "GET /b 2", "00\nPOST /c 201\n", "", "GET /d 404\n"} {
				if err := appendFile([]byte(chunk)); err != nil {
					return noValue, err
				}
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return noValue, err
				}
			}
			//asynciovet:ignore blockingcall the program's small file reads and writes run on the loop too (open/read/write in the coroutine): that is what the port checks
			if err := os.WriteFile(path, []byte("rotated 1\n"), 0o644); err != nil { // rotated
				return noValue, err
			}
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return noValue, err
			}
			if err := appendFile([]byte("rotated 2\nunfinished")); err != nil {
				return noValue, err
			}
			events = append(events, "writer done")
			return noValue, nil
		}
		tail := func(out *asyncio.Queue[string], poll time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				pos := int64(0)
				var partial []byte
				polls := 0
				for {
					polls++
					fi, err := os.Stat(path)
					if err != nil {
						return noValue, err
					}
					size := fi.Size()
					if size < pos {
						events = append(events, fmt.Sprintf("truncated at %d, reading from the start", pos))
						pos, partial = 0, nil
					}
					if size > pos {
						f, err := os.Open(path)
						if err != nil {
							return noValue, err
						}
						data := make([]byte, size-pos)
						//asynciovet:ignore blockingcall the program's small file reads and writes run on the loop too (open/read/write in the coroutine): that is what the port checks
						_, err = f.ReadAt(data, pos)
						f.Close()
						if err != nil {
							return noValue, err
						}
						pos += int64(len(data))
						lines := bytes.Split(append(partial, data...), []byte("\n"))
						partial = lines[len(lines)-1]
						for _, line := range lines[:len(lines)-1] {
							if err := out.PutNowait(string(line)); err != nil {
								return noValue, err
							}
						}
					}
					if err := asyncio.Sleep(t, poll); err != nil {
						if asyncio.IsCancelled(err) {
							events = append(events, fmt.Sprintf("tail cancelled, partial %s, polled enough: %s", pbytes(partial), pb(polls > 10)))
						}
						return noValue, err
					}
				}
			}
		}

		q := asyncio.NewQueue[string](0)
		poller := asyncio.CreateTask(tk, tail(q, 50*ms))
		writer := asyncio.CreateTask(tk, writeLog)
		var seen []string
		for {
			var line string
			err := asyncio.Timeout(tk, 250*ms, func(*asyncio.TimeoutScope) error {
				var err error
				line, err = q.Get(tk)
				return err
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				events = append(events, fmt.Sprintf("idle, stopping after %d lines", len(seen)))
				break
			} else if err != nil {
				return err
			}
			seen = append(seen, line)
			events = append(events, "line "+pyStrQ(line))
		}
		poller.Cancel()
		if _, err := poller.Await(tk); asyncio.IsCancelled(err) {
			events = append(events, fmt.Sprintf("poller done %s, writer done %s", pb(poller.Done()), pb(writer.Done())))
		} else {
			return fmt.Errorf("poller: %v", err)
		}
		if _, err := writer.Await(tk); err != nil {
			return err
		}
		for _, e := range events {
			fmt.Fprintln(&p.b, e) // the program's print(e), without a time
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p137_reader_by_hand.py

func TestPortReaderByHand(t *testing.T) {
	runPort(t, cpythonTrace("p137_reader_by_hand"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		r := aio.NewStreamReader(tk, 16)
		feedLater := func(delay time.Duration, chunks ...string) {
			for _, c := range chunks {
				loop.CallLater(delay, func() { r.FeedData([]byte(c)) })
			}
		}
		bs := func(ss ...string) [][]byte {
			var out [][]byte
			for _, s := range ss {
				out = append(out, []byte(s))
			}
			return out
		}
		logRead := func(what string, b []byte, err error) error {
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			p.log("%s %s", what, pbytes(b))
			return nil
		}

		feedLater(100*ms, "HEL", "LO\r")
		feedLater(200*ms, "\nWORLD\n")
		b, err := r.ReadUntil(tk, bs("\r\n", "\n")...)
		if err := logRead("line 1", b, err); err != nil {
			return err
		}
		b, err = r.ReadUntil(tk, bs("\n", "\r\n")...)
		if err := logRead("line 2", b, err); err != nil {
			return err
		}
		r.FeedData([]byte("ab|cd||ef"))
		b, err = r.ReadUntil(tk, bs("||", "|")...)
		if err := logRead("tuple pick", b, err); err != nil {
			return err
		}
		b, err = r.ReadUntil(tk, bs("||", "|")...)
		if err := logRead("next", b, err); err != nil {
			return err
		}
		b, err = r.Read(tk, 10)
		if err := logRead("rest buffered", b, err); err != nil {
			return err
		}

		var loe *aio.LimitOverrunError
		r.FeedData([]byte(strings.Repeat("x", 20) + "\n"))
		if _, err := r.ReadUntil(tk, []byte("\n")); errors.As(err, &loe) {
			p.log("overrun %s consumed %d", nd(err), loe.Consumed)
			b, err := r.ReadExactly(tk, loe.Consumed+1)
			if err != nil {
				return err
			}
			p.log("skipped %d", len(b))
		} else {
			return fmt.Errorf("overrun 1: %v", err)
		}
		r.FeedData([]byte(strings.Repeat("y", 20)))
		if _, err := r.ReadUntil(tk, bs("\n", "\r\n")...); errors.As(err, &loe) {
			p.log("overrun %s consumed %d", nd(err), loe.Consumed)
		} else {
			return fmt.Errorf("overrun 2: %v", err)
		}
		if b, err = r.ReadExactly(tk, 20); err != nil {
			return err
		}
		p.log("dropped %d", len(b))

		r.FeedData([]byte(strings.Repeat("z", 20) + "\nshort\n"))
		var ve *asyncio.ValueError
		if _, err := r.ReadLine(tk); errors.As(err, &ve) {
			p.log("readline %s", nd(err))
		} else {
			return fmt.Errorf("long line: %v", err)
		}
		b, err = r.ReadLine(tk)
		if err := logRead("after the long line", b, err); err != nil {
			return err
		}

		feedLater(130*ms, "123")
		feedLater(170*ms, "45")
		b, err = r.ReadExactly(tk, 5)
		if err := logRead("exactly", b, err); err != nil {
			return err
		}
		r.FeedData([]byte("67"))
		r.FeedEOF()
		var ire *aio.IncompleteReadError
		if _, err := r.ReadExactly(tk, 5); errors.As(err, &ire) {
			p.log("incomplete %s %s %s", nd(err), pbytes(ire.Partial), pexpected(ire))
		} else {
			return fmt.Errorf("incomplete: %v", err)
		}
		atEOF := r.AtEOF()
		var thens []string
		for _, read := range []func() ([]byte, error){
			func() ([]byte, error) { return r.Read(tk, -1) },
			func() ([]byte, error) { return r.ReadLine(tk) },
			func() ([]byte, error) { return r.Read(tk, 0) },
			func() ([]byte, error) { return r.ReadExactly(tk, 0) },
		} {
			b, err := read()
			if err != nil {
				return err
			}
			thens = append(thens, pbytes(b))
		}
		p.log("at_eof %s then %s", pb(atEOF), strings.Join(thens, " "))

		r2 := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		waiting := asyncio.CreateTask(tk, func(t *asyncio.T) ([]byte, error) { return r2.Read(t, 10) })
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		reset := &connectionError{pyExc{"ConnectionResetError", "peer reset"}}
		r2.SetException(reset)
		if _, err := waiting.Await(tk); err == reset {
			p.log("waiting read %s", pd(err))
		} else {
			return fmt.Errorf("waiting read: %v", err)
		}
		p.log("exception() %s", pd(r2.Err()))
		if _, err := r2.ReadLine(tk); err == reset {
			p.log("later readline %s", pd(err))
		} else {
			return fmt.Errorf("later readline: %v", err)
		}

		r3 := aio.NewStreamReader(tk, aio.DefaultStreamLimit)
		r3.FeedData([]byte("one\ntwo\nthree"))
		r3.FeedEOF()
		var lines []string
		for line, err := range r3.Lines(tk) {
			if err != nil {
				return err
			}
			lines = append(lines, pbytes(line))
		}
		p.log("lines [%s]", strings.Join(lines, ", "))
		for _, sep := range []struct {
			repr string
			seps [][]byte
		}{{"b''", bs("")}, {"()", nil}} {
			if _, err := r3.ReadUntil(tk, sep.seps...); errors.As(err, &ve) {
				p.log("readuntil %s %s", sep.repr, nd(err))
			} else {
				return fmt.Errorf("readuntil %s: %v", sep.repr, err)
			}
		}
		if _, err := r3.ReadExactly(tk, -1); errors.As(err, &ve) {
			p.log("readexactly(-1) %s", nd(err))
		} else {
			return fmt.Errorf("readexactly(-1): %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p138_sigint_handler_override.py

func TestPortSIGINTHandlerOverride(t *testing.T) {
	if signal.Ignored(os.Interrupt) {
		t.Skip("SIGINT is ignored in this process (started in the background?)") // as p134
	}
	r := asyncio.NewRunner(asyncio.WithVirtualTime())
	loop := r.Loop()
	p := &probe{l: loop}
	graceful := 0
	// The SIGINT is outside work on its way to the loop (README "Virtual
	// time for tests", as p125): released where it arrives.
	var inFlight func()
	arrived := func() {
		if inFlight != nil {
			inFlight()
			inFlight = nil
		}
	}
	// signal.getsignal(SIGINT) is default_int_handler: the Go program
	// knows whether it has a handler of its own on the loop (Go cannot
	// ask os/signal), and RunWith watches SIGINT only without one.
	ownHandler := false
	service := func(name string, work int) func(*asyncio.T) (string, error) {
		return func(tk *asyncio.T) (string, error) {
			p.restart()
			stop := asyncio.NewEvent()
			onInt := func() {
				arrived()
				graceful++
				p.log("%s graceful stop requested %d", name, graceful)
				stop.Set()
			}
			if name == "first" || name == "second" { // the second replaces the handler
				if err := loop.AddSignalHandler(os.Interrupt, onInt); err != nil {
					return "", err
				}
				ownHandler = true
			}
			loop.CallLater(100*ms, func() {
				inFlight = loop.ExpectExternal()
				if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
					panic(err)
				}
			})
			done := 0
			for !stop.IsSet() && done < work {
				if err := asyncio.Sleep(tk, 40*ms); err != nil {
					if asyncio.IsCancelled(err) {
						arrived()
						p.log("%s cancelled %s after %d", name, pd(err), done)
					}
					return "", err
				}
				done++
			}
			p.log("%s stops after %d", name, done)
			return strconv.Itoa(done), nil
		}
	}
	unhook := func(tk *asyncio.T) (string, error) {
		p.restart()
		removed, err := loop.RemoveSignalHandler(os.Interrupt)
		if err != nil {
			return "", err
		}
		if removed {
			ownHandler = false
		}
		p.log("service handler removed %s", pb(removed))
		return pb(removed), nil
	}
	for _, main := range []func(*asyncio.T) (string, error){service("first", 10), service("second", 10), unhook, service("third", 10)} {
		v, err := asyncio.RunWith(r, main)
		switch {
		case errors.Is(err, asyncio.ErrInterrupted):
			fmt.Fprintf(&p.b, "run raised KeyboardInterrupt\n")
		case err != nil:
			_ = r.Close()
			t.Fatalf("run: %v\ntrace so far:\n%s", err, p.b.String())
		default:
			fmt.Fprintf(&p.b, "run returned %s\n", v)
		}
		fmt.Fprintf(&p.b, "default SIGINT handler: %s loop closed: %s\n", pb(!ownHandler), pb(loop.IsClosed()))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&p.b, "graceful stops %d\n", graceful)
	if want, got := cpythonTrace("p138_sigint_handler_override"), p.b.String(); got != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, got))
	}
}
