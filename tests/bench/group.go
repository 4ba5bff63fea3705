//go:build unix

package main

// Every core (issue 18): W11, W3's ping-pong on K loops of one LoopGroup
// at once, and W12, a cross-loop call round trip (WORKLOADS.md).
//
//	bench -w W11 -n N -loops K     (variant "loops<K>", n handoffs in total)
//	bench -w W12 [-n N] [-variant task|callback|mechanism-floor]
//	                               (task, the default: CallOn, the called side a task on loop B;
//	                                callback: CallFuncOn, a callback on loop B;
//	                                mechanism-floor: no library, see w12Floor)
//	bench -w echo-server -variant streams|protocol -size S -loops K [-group-mode reuseport|roundrobin|leastconns]
//	                               (W8 on a LoopGroup of K > 1 loops: aio.StartGroupServer /
//	                                CreateGroupServer; reuseport, the default, listens on every loop;
//	                                roundrobin and leastconns accept on loop 0 and hand connections over)

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	asyncio "github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

var groupModeFlag = flag.String("group-mode", "reuseport", "echo-server with -loops K > 1: reuseport|roundrobin|leastconns")

var loopsFlag = flag.Int("loops", 1, "W11: number of loops (one LoopGroup); echo-server: serve on a group of this many loops")

func init() {
	workloads["W11"] = func(n int) (rec, error) { return w11(n, *loopsFlag) }
	workloads["W12"] = func(n int) (rec, error) { return w12(n, flag.Lookup("variant").Value.String()) }
	defaultN["W11"] = 500_000
	defaultN["W12"] = 50_000
}

// pingPong is W3 on t's loop: rounds rounds of two tasks handing control
// over through futures. It returns the number of handoffs.
func pingPong(t *asyncio.T, rounds int) (int, error) {
	l := t.Loop()
	var futA *asyncio.Future[int]
	futB := asyncio.NewFuture[int](l)
	sumA, sumB := 0, 0
	tb := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
		for i := range rounds {
			v, err := futB.Await(t)
			if err != nil {
				return struct{}{}, err
			}
			sumB += v
			futB = asyncio.NewFuture[int](l)
			futA.SetResult(i)
		}
		return struct{}{}, nil
	})
	ta := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
		for i := range rounds {
			futA = asyncio.NewFuture[int](l)
			futB.SetResult(i)
			v, err := futA.Await(t)
			if err != nil {
				return struct{}{}, err
			}
			sumA += v
		}
		return struct{}{}, nil
	})
	if _, err := ta.Await(t); err != nil {
		return 0, err
	}
	if _, err := tb.Await(t); err != nil {
		return 0, err
	}
	want := rounds * (rounds - 1) / 2
	if sumA != want || sumB != want {
		return 0, fmt.Errorf("sums %d/%d, want %d", sumA, sumB, want)
	}
	return rounds * 2, nil
}

// w11 runs W3 on k loops at once, n/k handoffs each; timed from the
// earliest start to the latest end (all loops start at a barrier).
func w11(n, k int) (rec, error) {
	if k < 1 {
		return nil, fmt.Errorf("-loops %d", k)
	}
	g := asyncio.NewLoopGroup(asyncio.WithLoops(k))
	defer g.Close()
	var barrier sync.WaitGroup
	barrier.Add(k)
	starts, ends := make([]time.Time, k), make([]time.Time, k)
	done, err := asyncio.RunEach(g, func(t *asyncio.T, i int) (int, error) {
		barrier.Done()
		//asynciovet:ignore blockingcall the start barrier of W11, before timing: every loop has nothing else to run
		barrier.Wait() // before timing: blocks only this loop, which has nothing else to do
		starts[i] = time.Now()
		h, err := pingPong(t, n/k/2)
		ends[i] = time.Now()
		return h, err
	})
	if err != nil {
		return nil, err
	}
	total := 0
	t0, t1 := starts[0], ends[0]
	for i := range k {
		total += done[i]
		if starts[i].Before(t0) {
			t0 = starts[i]
		}
		if ends[i].After(t1) {
			t1 = ends[i]
		}
	}
	if total != n/k/2*2*k {
		return nil, fmt.Errorf("%d handoffs, want %d", total, n/k/2*2*k)
	}
	return record("W11", fmt.Sprintf("loops%d", k), total, t1.Sub(t0), rec{"loops": k}), nil
}

// w12: a task on loop A calls inc(x) on loop B n times in sequence.
func w12(n int, variant string) (rec, error) {
	if variant == "" {
		variant = "task"
	}
	if variant == "mechanism-floor" {
		return w12Floor(n)
	}
	if variant != "task" && variant != "callback" {
		return nil, fmt.Errorf("-variant %q (want task, callback or mechanism-floor)", variant)
	}
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	return asyncio.RunGroup(g, func(t *asyncio.T) (rec, error) {
		b := g.Loop(1)
		x := 0
		var err error
		t0 := time.Now()
		for range n {
			v := x
			if variant == "task" {
				x, err = asyncio.CallOn(t, b, func(*asyncio.T) (int, error) { return v + 1, nil })
			} else {
				x, err = asyncio.CallFuncOn(t, b, func() (int, error) { return v + 1, nil })
			}
			if err != nil {
				return nil, err
			}
		}
		el := time.Since(t0)
		if x != n {
			return nil, fmt.Errorf("x = %d, want %d", x, n)
		}
		return record("W12", variant, n, el, nil), nil
	})
}

// w12Floor is W12's handoff with no library: two goroutines that each
// run a queue of funcs guarded by a mutex, and sleep on a wake channel
// when it is empty, which is how two loops hand each other a call
// (CallSoonThreadsafe: the mutex, the queue, the wake-up of a sleeping
// loop). A call is a func pushed to the other side, whose answer is a
// func pushed back. No futures, tasks, iterations, timers or bookkeeping:
// the floor of any design built on that handoff, for comparison with the
// raw channel round trip (docs/every-core.md).
func w12Floor(n int) (rec, error) {
	type side struct {
		mu       sync.Mutex
		queue    []func()
		sleeping bool
		wake     chan struct{}
		stop     bool
	}
	push := func(s *side, fn func()) {
		s.mu.Lock()
		s.queue = append(s.queue, fn)
		if s.sleeping {
			s.sleeping = false
			s.wake <- struct{}{} // buffered (1): never blocks, one wake-up pending at most
		}
		s.mu.Unlock()
	}
	run := func(s *side) {
		var batch []func()
		for !s.stop {
			s.mu.Lock()
			if len(s.queue) == 0 {
				s.sleeping = true
				s.mu.Unlock()
				<-s.wake
				continue
			}
			batch, s.queue = s.queue, batch[:0]
			s.mu.Unlock()
			for _, fn := range batch {
				fn()
			}
		}
	}
	a := &side{wake: make(chan struct{}, 1)}
	b := &side{wake: make(chan struct{}, 1)}
	bDone := make(chan struct{})
	go func() { run(b); close(bDone) }()
	x := 0
	var call func()
	call = func() {
		if x == n {
			a.stop = true
			push(b, func() { b.stop = true })
			return
		}
		v := x
		push(b, func() {
			r := v + 1
			push(a, func() { x = r; call() })
		})
	}
	t0 := time.Now()
	push(a, call)
	run(a)
	el := time.Since(t0)
	<-bDone
	if x != n {
		return nil, fmt.Errorf("x = %d, want %d", x, n)
	}
	return record("W12", "mechanism-floor", n, el, nil), nil
}

// groupEchoServer is echoServer (W8) on a LoopGroup of loops loops.
func groupEchoServer(variant string, size, loops int, mode string, out io.Writer, stop <-chan struct{}) error {
	if variant != "streams" && variant != "protocol" {
		return fmt.Errorf("unknown -variant %q (streams|protocol)", variant)
	}
	if size <= 0 {
		return fmt.Errorf("bad -size %d", size)
	}
	modes := map[string]aio.GroupMode{"reuseport": aio.GroupReusePort, "roundrobin": aio.GroupRoundRobin, "leastconns": aio.GroupLeastConns}
	gm, ok := modes[mode]
	if !ok {
		return fmt.Errorf("unknown -group-mode %q (reuseport|roundrobin|leastconns)", mode)
	}
	g := asyncio.NewLoopGroup(asyncio.WithLoops(loops))
	_, err := asyncio.RunGroup(g, func(t *asyncio.T) (struct{}, error) {
		var srv *aio.GroupServer
		var err error
		if variant == "streams" {
			srv, err = aio.StartGroupServer(t, g, gm, echoStreams(size), "127.0.0.1", 0, aio.WithBacklog(1024))
		} else {
			srv, err = aio.CreateGroupServer(t, g, gm, func() aio.Protocol { return &echoProtocol{} }, "127.0.0.1", 0, aio.WithBacklog(1024))
		}
		if err != nil {
			return struct{}{}, err
		}
		fmt.Fprintf(out, "PORT %d\n", srv.Addr().(*net.TCPAddr).Port)
		l := t.Loop()
		stopped := asyncio.NewFuture[struct{}](t)
		go func() {
			<-stop
			l.CallSoonThreadsafe(func() { stopped.SetResult(struct{}{}) })
		}()
		_, err = stopped.Await(t)
		cerr := srv.Close(t)
		aerr := srv.CloseClients(t)
		return struct{}{}, errors.Join(err, cerr, aerr, srv.WaitClosed(t))
	})
	return errors.Join(err, g.Close())
}
