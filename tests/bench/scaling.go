//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

// Scaling curves (issue 6, item 4): how the cost per operation grows with
// the number of parked tasks, pending timers and open connections.
//
//	bench -w scale-tasks|scale-timers|scale-conns [-n N]
//
// Without -n every size of scaleSizes runs, one JSON line per size, each
// with "workload", "n" and the metrics. scripts/scaling.sh runs one size per
// process, so that memory freed by a smaller size cannot hide the growth of
// a bigger one.

// scaleSizes are the sizes of each dimension.
var scaleSizes = map[string][]int{
	"scale-tasks":  {1_000, 10_000, 100_000, 1_000_000},
	"scale-timers": {1_000, 10_000, 100_000, 1_000_000},
	"scale-conns":  {10, 100, 1_000, 10_000},
}

// scaleModes maps -w to the measurement of one size.
var scaleModes = map[string]func(n int) (rec, error){
	"scale-tasks":  scaleTasks,
	"scale-timers": scaleTimers,
	"scale-conns":  scaleConns,
}

// runScale prints one JSON line per size to out (all of scaleSizes when
// n <= 0) and stops at the first failed validation.
func runScale(w string, n int, out io.Writer) error {
	sizes := scaleSizes[w]
	if n > 0 {
		sizes = []int{n}
	}
	for _, size := range sizes {
		r, err := scaleModes[w](size)
		if err != nil {
			return fmt.Errorf("n=%d: %w", size, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
	}
	return nil
}

// scaleRecord is the common part of a scaling line.
func scaleRecord(workload string, n int, metrics rec) rec {
	r := rec{
		"impl":        "go-asyncio",
		"workload":    workload,
		"n":           n,
		"peak_rss_mb": round2(float64(peakRSSBytes()) / (1 << 20)),
		"gomaxprocs":  runtime.GOMAXPROCS(0),
		"go":          runtime.Version(),
	}
	for k, v := range metrics {
		r[k] = v
	}
	return r
}

func perOp(d time.Duration, n int) float64 { return round1(float64(d.Nanoseconds()) / float64(n)) }

// numGC is the number of completed GC cycles.
func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// Rounds of the steady-state measurements taken while the N tasks or
// timers exist: enough to average out a tick, few enough to stay bounded.
const (
	scaleYieldRounds = 200_000
	scaleWakeups     = 10_000
	scaleBatches     = 10
)

// median of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// scaleTasks: spawn n tasks that each park on their own future, then, with
// all n parked, time Sleep(t, 0) rounds of the main task and wakeups of
// single parked tasks. Parked tasks are not in the ready queue and register
// nothing with the selector, so neither per-round cost may grow with n.
func scaleTasks(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		l := t.Loop()
		futs := make([]*asyncio.Future[struct{}], n)
		tasks := make([]*asyncio.Task[struct{}], n)
		st0, hp0 := memStats()
		rss0 := rssBytes()
		gc0 := numGC()
		c0 := cpuTime()
		t0 := time.Now()
		for i := range n {
			f := asyncio.NewFuture[struct{}](l)
			futs[i] = f
			tasks[i] = asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
				_, err := f.Await(t)
				return struct{}{}, err
			})
		}
		if err := asyncio.Sleep(t, 0); err != nil { // every task starts and parks
			return nil, err
		}
		spawn := time.Since(t0)
		spawnCPU := cpuTime() - c0
		spawnGC := numGC() - gc0
		st1, hp1 := memStats()
		rss1 := rssBytes()
		for _, tk := range tasks {
			if tk.Done() {
				return nil, fmt.Errorf("a parked task is done: %v", tk)
			}
		}

		// One Sleep(t, 0) round: the main task yields, the loop runs one
		// iteration with n parked tasks, the main task resumes.
		// Timed in scaleBatches batches: the median batch is robust to
		// another job taking the CPU for a while, the best batch shows the
		// cost without interference.
		gc1 := numGC()
		var yield []float64
		for range scaleBatches {
			t1 := time.Now()
			for range scaleYieldRounds / scaleBatches {
				if err := asyncio.Sleep(t, 0); err != nil {
					return nil, err
				}
			}
			yield = append(yield, perOp(time.Since(t1), scaleYieldRounds/scaleBatches))
		}
		yieldGC := numGC() - gc1

		// One wakeup: resolve one parked task's future; it resumes and
		// finishes, and the main task, awaiting it, resumes. The tasks are
		// spread over the whole set so their memory is cold, as in a server
		// waking an arbitrary connection's task.
		k := min(n, scaleWakeups)
		stride := n / k
		var wake []float64
		for b := range scaleBatches {
			t2 := time.Now()
			lo, hi := b*k/scaleBatches, (b+1)*k/scaleBatches
			for j := lo; j < hi; j++ {
				i := j * stride
				futs[i].SetResult(struct{}{})
				if _, err := tasks[i].Await(t); err != nil {
					return nil, err
				}
			}
			wake = append(wake, perOp(time.Since(t2), hi-lo))
		}

		// Untimed: cancel and collect the rest.
		for _, tk := range tasks {
			tk.Cancel()
		}
		errs, err := gatherErrs(t, tasks)
		if err != nil {
			return nil, err
		}
		cancelled := 0
		for _, e := range errs {
			if asyncio.IsCancelled(e) {
				cancelled++
			}
		}
		if cancelled != n-k {
			return nil, fmt.Errorf("%d tasks cancelled, want %d", cancelled, n-k)
		}
		return scaleRecord("scale-tasks", n, rec{
			"spawn_park_ns_per_task":     perOp(spawn, n),
			"spawn_park_cpu_ns_per_task": perOp(spawnCPU, n),
			"spawn_gc_cycles":            spawnGC,
			"bytes_per_task":             round1(float64(rss1-rss0) / float64(n)),
			"stack_bytes_per_task":       round1(float64(int64(st1)-int64(st0)) / float64(n)),
			"heap_bytes_per_task":        round1(float64(int64(hp1)-int64(hp0)) / float64(n)),
			"sleep0_ns":                  median(yield),
			"sleep0_min_ns":              slices.Min(yield),
			"sleep0_rounds":              scaleYieldRounds,
			"sleep0_gc_cycles":           yieldGC,
			"wakeup_ns":                  median(wake),
			"wakeup_min_ns":              slices.Min(wake),
			"wakeups":                    k,
		}), nil
	})
}

// scaleTimerSpreadUs spreads the deadlines of the firing pass over 1 ms,
// in splitmix64 order (W5's generator), so heap pushes and pops see
// random keys.
const scaleTimerSpreadUs = 1_000

// scaleTimers: with n pending timers, the cost per timer of CallLater,
// of firing (the loop pops every due timer and runs it) and of Cancel plus
// the loop's purge of the cancelled timers (LOOP-4). The cycle repeats
// max(3, 300,000/n) times and each metric is the median over the cycles,
// so a small n is not one preemption away from a wrong figure; the first
// cycle also pays for growing the heap and faulting in fresh memory.
func scaleTimers(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		l := t.Loop()
		delays := splitmix64DelaysUs(n, w5Seed, scaleTimerSpreadUs)
		hs := make([]*asyncio.TimerHandle, n)
		cycles := max(3, 300_000/n)
		var sched, schedFar, fire, cancel, purge []float64
		var heapBytes float64
		for c := range cycles {
			// Pass 1: schedule n timers within the next millisecond, let
			// every deadline pass with the loop held (the task keeps
			// control), then time the loop firing all n.
			fired := 0
			done := asyncio.NewFuture[int](l)
			cb := func() {
				fired++
				if fired == n {
					done.SetResult(fired)
				}
			}
			var hp0 uint64
			if c == 0 {
				_, hp0 = memStats()
			}
			t0 := time.Now()
			for i, d := range delays {
				hs[i] = l.CallLater(time.Duration(d)*time.Microsecond, cb)
			}
			sched = append(sched, perOp(time.Since(t0), n))
			if c == 0 {
				_, hp1 := memStats()
				heapBytes = round1(float64(int64(hp1)-int64(hp0)) / float64(n))
			}
			//asynciovet:ignore blockingcall holds the loop on purpose so that every deadline passes
			time.Sleep(scaleTimerSpreadUs*time.Microsecond + time.Millisecond) // holds the loop on purpose: all deadlines pass
			t1 := time.Now()
			if _, err := done.Await(t); err != nil {
				return nil, err
			}
			fire = append(fire, perOp(time.Since(t1), n))
			if fired != n {
				return nil, fmt.Errorf("%d timers fired, want %d", fired, n)
			}

			// Pass 2: n timers an hour away; cancel them all, then one
			// loop iteration purges them (more than half of the heap is
			// cancelled: the rebuild of LOOP-4, which empties the heap).
			late := 0
			lateCb := func() { late++ }
			t2 := time.Now()
			for i, d := range delays {
				hs[i] = l.CallLater(time.Hour+time.Duration(d)*time.Microsecond, lateCb)
			}
			schedFar = append(schedFar, perOp(time.Since(t2), n))
			t3 := time.Now()
			for _, h := range hs {
				h.Cancel()
			}
			cancel = append(cancel, perOp(time.Since(t3), n))
			t4 := time.Now()
			if err := asyncio.Sleep(t, 0); err != nil {
				return nil, err
			}
			purge = append(purge, perOp(time.Since(t4), n))
			for _, h := range hs {
				if !h.Cancelled() {
					return nil, errors.New("a cancelled timer reports Cancelled() == false")
				}
			}
			if late != 0 {
				return nil, fmt.Errorf("%d cancelled timers fired", late)
			}
		}
		return scaleRecord("scale-timers", n, rec{
			"schedule_ns_per_timer":       median(sched),
			"schedule_first_ns_per_timer": sched[0],
			"schedule_far_ns_per_timer":   median(schedFar),
			"fire_ns_per_timer":           median(fire),
			"cancel_ns_per_timer":         median(cancel),
			"purge_ns_per_timer":          median(purge),
			"heap_bytes_per_timer":        heapBytes,
			"cycles":                      cycles,
			"fired":                       n,
		}), nil
	})
}

// scaleConnsMsg is the request size of the connection curve (W8's small size).
const scaleConnsMsg = 64

// raiseNofile raises the soft RLIMIT_NOFILE towards need, never above the
// hard limit, and returns the soft and hard limits in force.
func raiseNofile(need uint64) (soft, hard uint64, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	// Rlimit's fields are uint64 on Linux and the Apple systems but
	// int64 on the BSDs: compute in uint64 and convert back with setRlim.
	cur, hard := uint64(rl.Cur), uint64(rl.Max)
	if cur < need {
		setRlim(&rl.Cur, min(need, hard))
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
			return 0, 0, err
		}
		cur = uint64(rl.Cur)
	}
	return cur, hard, nil
}

// setRlim stores v in an Rlimit field of either signedness.
func setRlim[T int64 | uint64](field *T, v uint64) { *field = T(v) }

// nofileSlack covers stdio, the listener, epoll, the wakeup fd and the pipes.
const nofileSlack = 64

// countingEcho is the echo server of the connection curve: W8's protocol
// variant, counting the bytes it echoes.
type countingEcho struct {
	tr     aio.Transport
	echoed *atomic.Int64
}

func (p *countingEcho) ConnectionMade(tr aio.Transport) { p.tr = tr }
func (p *countingEcho) DataReceived(data []byte) {
	p.echoed.Add(int64(len(data)))
	p.tr.Write(data)
}
func (p *countingEcho) EOFReceived() bool    { return false }
func (p *countingEcho) ConnectionLost(error) {}

// scaleConns: n loopback TCP connections to one go-asyncio loop (the echo
// server, this process), all open at once. The clients are plain Go
// sockets in a child process (bench -w scale-conns-client), so each process
// needs n descriptors, not 2n, and the client's CPU is not charged to the
// loop. The child reports round-trip times; this process adds the loop's
// CPU time per request.
func scaleConns(n int) (rec, error) {
	need := uint64(n + nofileSlack)
	soft, hard, err := raiseNofile(need)
	if err != nil {
		return nil, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if soft < need {
		note := fmt.Sprintf("skipped: %d connections need %d descriptors per process, RLIMIT_NOFILE hard limit is %d", n, need, hard)
		fmt.Fprintf(os.Stderr, "bench: scale-conns n=%d %s\n", n, note)
		return scaleRecord("scale-conns", n, rec{"skipped": note}), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var echoed atomic.Int64
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		srv, err := aio.CreateServer(t, func() aio.Protocol { return &countingEcho{echoed: &echoed} },
			"127.0.0.1", 0, aio.WithBacklog(4096))
		if err != nil {
			return nil, err
		}
		port := srv.Addr().(*net.TCPAddr).Port
		l := t.Loop()
		finished := asyncio.NewFuture[rec](t)
		go func() { // drives the child off the loop; hands the result back
			r, err := driveConnsClient(exe, port, n, &echoed)
			l.CallSoonThreadsafe(func() {
				if err != nil {
					finished.SetException(err)
				} else {
					finished.SetResult(r)
				}
			})
		}()
		r, err := finished.Await(t)
		srv.Close()
		srv.AbortClients()
		if werr := srv.WaitClosed(t); err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
		r["nofile_limit"] = soft
		return scaleRecord("scale-conns", n, r), nil
	})
}

// driveConnsClient runs the client child: it waits for "OPEN" (all n
// connections established and echoed once), sends "GO", and reads the
// child's JSON result; the loop's CPU time and echoed bytes are sampled
// around the measured part only.
func driveConnsClient(exe string, port, n int, echoed *atomic.Int64) (rec, error) {
	cmd := exec.Command(exe, "-w", "scale-conns-client", "-port", strconv.Itoa(port), "-n", strconv.Itoa(n))
	// Under `go test` the executable is the test binary, whose TestMain
	// runs the client when this variable is set.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d", scaleClientEnv, port, n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fail := func(err error) (rec, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "OPEN") {
		return fail(fmt.Errorf("client: %q, %v (want OPEN)", line, err))
	}
	// Three measured phases (one request in flight over 10 hot
	// connections, over all n; all connections at once), each started by
	// "GO" and ended by the client's JSON line, so the loop's CPU time is
	// sampled around each phase alone.
	r := rec{}
	var reqs [3]int64
	for phase, prefix := range []string{"hot_rtt_", "rtt_", ""} {
		u0, s0 := userSysTime()
		e0 := echoed.Load()
		if _, err := io.WriteString(stdin, "GO\n"); err != nil {
			return fail(err)
		}
		line, err = out.ReadString('\n')
		u1, s1 := userSysTime()
		e1 := echoed.Load()
		if err != nil {
			return fail(fmt.Errorf("client result: %v", err))
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fail(fmt.Errorf("client result %q: %v", line, err))
		}
		reqs[phase] = (e1 - e0) / scaleConnsMsg
		r[prefix+"server_cpu_ns_per_req"] = round1(float64(u1+s1-u0-s0) / float64(reqs[phase]))
		r[prefix+"server_sys_ns_per_req"] = round1(float64(s1-s0) / float64(reqs[phase]))
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("client: %v", err)
	}
	if got := reqs[0] + reqs[1] + reqs[2]; r["requests"] != float64(got) || reqs[0] != scaleConnsRTTs || reqs[1] != scaleConnsRTTs {
		return nil, fmt.Errorf("loop echoed %v requests, client counted %v", reqs, r["requests"])
	}
	return r, nil
}

// userSysTime is the process's user and system CPU time: on loopback the
// kernel's TCP work for both ends of a send is charged to the sender.
func userSysTime() (user, sys time.Duration) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// scaleClientEnv carries "port n" to a test binary re-executed as the client.
const scaleClientEnv = "GO_ASYNCIO_SCALE_CONNS_CLIENT"

// Client side of the connection curve.
const (
	scaleConnsRTTs     = 2_000  // sequential round trips per latency phase
	scaleConnsHot      = 10     // connections of the hot latency phase
	scaleConnsRequests = 50_000 // concurrent requests in the throughput phase (at least 2 per connection)
	scaleConnsDialers  = 32
)

// scaleConnsClient is the child of scaleConns: plain Go sockets, one
// goroutine per connection in the concurrent phase.
func scaleConnsClient(port, n int) error {
	need := uint64(n + nofileSlack)
	if soft, hard, err := raiseNofile(need); err != nil || soft < need {
		return fmt.Errorf("RLIMIT_NOFILE %d (hard %d) < %d: %v", soft, hard, need, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conns := make([]net.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	msg := bytes.Repeat([]byte{'x'}, scaleConnsMsg)
	roundTrip := func(c net.Conn, buf []byte) error {
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, msg) {
			return fmt.Errorf("echo %q, want %q", buf, msg)
		}
		return nil
	}
	// Connect (and echo once on each, so the server has accepted all n).
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	for range min(scaleConnsDialers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, scaleConnsMsg)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c, err := net.Dial("tcp", addr)
				if err == nil {
					conns[i] = c
					err = roundTrip(c, buf)
				}
				if err != nil {
					mu.Lock()
					firstErr = firstOf(firstErr, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("connect: %w", firstErr)
	}
	connect := time.Since(t0)
	fmt.Println("OPEN")
	stdin := bufio.NewReader(os.Stdin)
	waitGo := func() error {
		if line, err := stdin.ReadString('\n'); err != nil || line != "GO\n" {
			return fmt.Errorf("waiting for GO: %q, %v", line, err)
		}
		return nil
	}
	if err := waitGo(); err != nil {
		return err
	}

	// Latency: one request in flight, the other connections idle. First
	// rotating over scaleConnsHot connections (their state stays in cache:
	// does the loop slow down with n idle connections open?), then over
	// all n, a different one each time (7919 is prime): every request
	// touches a cold connection.
	buf := make([]byte, scaleConnsMsg)
	for _, phase := range []struct {
		prefix string
		span   int
	}{{"hot_", min(n, scaleConnsHot)}, {"", n}} {
		rtts := make([]time.Duration, scaleConnsRTTs)
		t1 := time.Now()
		for k := range rtts {
			c := conns[k*7919%phase.span]
			s := time.Now()
			if err := roundTrip(c, buf); err != nil {
				return err
			}
			rtts[k] = time.Since(s)
		}
		rttWall := time.Since(t1)
		slices.Sort(rtts)
		b, err := json.Marshal(rec{
			phase.prefix + "rtt_ns_median": round1(float64(rtts[len(rtts)/2].Nanoseconds())),
			phase.prefix + "rtt_ns_p99":    round1(float64(rtts[len(rtts)*99/100].Nanoseconds())),
			phase.prefix + "rtt_ns_mean":   perOp(rttWall, len(rtts)),
		})
		if err != nil {
			return err
		}
		fmt.Println(string(b))
		if err := waitGo(); err != nil {
			return err
		}
	}

	// Throughput: every connection does per requests back to back, all
	// connections at once.
	per := max(2, scaleConnsRequests/n)
	t2 := time.Now()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, scaleConnsMsg)
			for range per {
				if err := roundTrip(c, buf); err != nil {
					mu.Lock()
					firstErr = firstOf(firstErr, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	conc := time.Since(t2)
	if firstErr != nil {
		return fmt.Errorf("concurrent phase: %w", firstErr)
	}
	total := n * per
	b, err := json.Marshal(rec{
		"connect_ns_per_conn":   perOp(connect, n),
		"concurrent_ns_per_req": perOp(conc, total),
		"concurrent_req_per_s":  round1(float64(total) / conc.Seconds()),
		"concurrent_per_conn":   per,
		"requests":              2*scaleConnsRTTs + total,
		"msg_bytes":             scaleConnsMsg,
	})
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// firstOf keeps the first error.
func firstOf(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
