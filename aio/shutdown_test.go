//go:build unix

package aio

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TestShutdownCompleteAtAnyMoment builds a busy loop — TCP and TLS echo
// servers and clients, a UDP echo endpoint and its client, a net.Conn read
// by a foreign goroutine, timers, executor jobs, foreign goroutines
// blocked in ConcurrentFuture.Result (RunCoroutineThreadsafe queued before
// the loop runs, submitted while it runs, Threadsafe of a future that
// never completes), task groups nested five deep — and stops and closes it
// after n loop iterations, for every n from 1 to 48 and a few larger ones
// (virtual clock: the moments are the same on every run). Each time,
// once Close has returned: every descriptor the loop owned is closed and
// every goroutine it started has ended (clean: /proc/self/fd and goleak),
// every foreign goroutine's Result returned an error, the foreign Read
// returned an error, and every task's deferred calls ran.
func TestShutdownCompleteAtAnyMoment(t *testing.T) {
	srvCfg, cliCfg := testTLSConfigs(t)
	var moments []int
	for n := 1; n <= 48; n++ {
		moments = append(moments, n)
	}
	moments = append(moments, 64, 96, 128, 200, 400)
	for _, n := range moments {
		t.Run(fmt.Sprintf("after%d", n), func(t *testing.T) { closeBusyLoopAfter(t, n, false, srvCfg, cliCfg) })
	}
	// The same through a Runner (asyncio.Run): main returns after n
	// iterations, and Close cancels and drains every task, waits for the
	// executor's jobs, then closes the loop.
	for i := 0; i < len(moments); i += 4 {
		n := moments[i]
		t.Run(fmt.Sprintf("run%d", n), func(t *testing.T) { closeBusyLoopAfter(t, n, true, srvCfg, cliCfg) })
	}
}

// udpEcho is a DatagramProtocol that sends every datagram back.
type udpEcho struct{ tr DatagramTransport }

func (p *udpEcho) ConnectionMade(tr DatagramTransport)      { p.tr = tr }
func (p *udpEcho) DatagramReceived(d []byte, addr net.Addr) { p.tr.SendTo(d, addr) }
func (p *udpEcho) ErrorReceived(error)                      {}
func (p *udpEcho) ConnectionLost(error)                     {}
func newUDPEcho() DatagramProtocol                          { return &udpEcho{} }
func waitResult[V any](cf *asyncio.ConcurrentFuture[V], to chan<- error) {
	_, err := cf.Result()
	to <- err
}

func closeBusyLoopAfter(t *testing.T, n int, viaRun bool, srvCfg, cliCfg *tls.Config) {
	clean(t) // at the end: no descriptor, goroutine or child process left
	runner := asyncio.NewRunner(asyncio.WithVirtualTime())
	l := runner.Loop()
	stop := asyncio.NewFuture[struct{}](l) // main's end, via a Runner
	var started, deferred atomic.Int64
	track := func() func() {
		started.Add(1)
		return func() { deferred.Add(1) }
	}
	// Foreign goroutines waiting in ConcurrentFuture.Result report here;
	// foreign counts them (it grows on the loop, is read after Close).
	results := make(chan error, 64)
	var foreign atomic.Int64
	wait := func(f func()) {
		foreign.Add(1)
		go f()
	}
	// Queued before the loop runs: its task never starts if n is small.
	queued := asyncio.RunCoroutineThreadsafe(l, func(t *asyncio.T) (int, error) {
		defer track()()
		return 0, asyncio.Sleep(t, time.Hour)
	})
	wait(func() { waitResult(queued, results) })
	connRead := make(chan error, 1)
	var echoed, jobs, pongs atomic.Int64 // how busy the loop was, for the log
	var reading atomic.Bool              // the foreign goroutine reads the Conn

	iterations := 0
	l.SetBeforePoll(func() {
		if iterations++; iterations == n && viaRun {
			stop.SetResult(struct{}{})
		} else if iterations == n {
			// A job that runs until Close cancels it. Only now: the
			// virtual clock stands still while a job runs (it could
			// schedule something earlier). Not through a Runner: its
			// Close waits for the jobs before closing the loop (RUN-3),
			// and this one would wait for ever.
			asyncio.RunInExecutor(l, func(ctx context.Context) (int, error) {
				<-ctx.Done()
				return 0, ctx.Err()
			})
			l.Stop()
		}
	})
	echo := func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer track()()
		defer w.Close()
		for {
			line, err := r.ReadLine(t)
			if err != nil || len(line) == 0 {
				return err
			}
			w.Write(line)
			echoed.Add(1)
			if err := w.Drain(t); err != nil {
				return err
			}
		}
	}
	client := func(t *asyncio.T, port int, opts ...Option) error {
		defer track()()
		r, w, err := OpenConnection(t, "127.0.0.1", port, opts...)
		if err != nil {
			return err
		}
		defer w.Close()
		for i := 0; ; i++ {
			w.Write(fmt.Appendf(nil, "line %d\n", i))
			if _, err := r.ReadLine(t); err != nil {
				return err
			}
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return err
			}
		}
	}
	var nest func(t *asyncio.T, depth int) error
	nest = func(t *asyncio.T, depth int) error {
		defer track()()
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				defer track()()
				return asyncio.Sleep(t, time.Hour)
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				defer track()()
				for {
					if err := asyncio.Sleep(t, time.Duration(depth)*time.Millisecond); err != nil {
						return err
					}
				}
			})
			if depth < 5 {
				asyncio.SpawnErr(g, func(t *asyncio.T) error { return nest(t, depth+1) })
			}
			return asyncio.Sleep(t, time.Hour)
		})
	}

	main := asyncio.CreateTaskErr(l, func(t *asyncio.T) error {
		defer track()()
		tcp, err := StartServer(t, echo, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tlsSrv, err := StartServer(t, echo, "127.0.0.1", 0, WithTLS(srvCfg))
		if err != nil {
			return err
		}
		udpTr, _, err := CreateDatagramEndpoint(t, newUDPEcho, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		udpAddr := udpTr.ExtraInfo("sockname").(*net.UDPAddr)
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			asyncio.SpawnErr(g, func(t *asyncio.T) error { return client(t, tcp.Addr().(*net.TCPAddr).Port) })
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				return client(t, tlsSrv.Addr().(*net.TCPAddr).Port, WithTLS(cliCfg))
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { // UDP client
				defer track()()
				tr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return udpSink{&pongs} }, nil, udpAddr)
				if err != nil {
					return err
				}
				for {
					tr.SendTo([]byte("ping"), nil)
					if err := asyncio.Sleep(t, time.Millisecond); err != nil {
						return err
					}
				}
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { // a net.Conn read by a foreign goroutine
				defer track()()
				c, err := DialConn(t, "tcp", tcp.Addr().String())
				if err != nil {
					return err
				}
				reading.Store(true)
				go func() {
					buf := make([]byte, 64)
					for {
						if _, err := c.Read(buf); err != nil {
							connRead <- err
							return
						}
					}
				}()
				return asyncio.Sleep(t, time.Hour)
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { // timers
				defer track()()
				var tick func()
				tick = func() { t.Loop().CallLater(time.Millisecond, tick) }
				tick()
				t.Loop().CallLater(time.Hour, func() {})
				return asyncio.Sleep(t, time.Hour)
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { // executor jobs
				defer track()()
				for {
					if _, err := asyncio.ToThread(t, func(ctx context.Context) (int, error) { return 1, nil }); err != nil {
						return err
					}
					jobs.Add(1)
					if err := asyncio.Sleep(t, 2*time.Millisecond); err != nil {
						return err
					}
				}
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { // foreign waiters
				defer track()()
				never := asyncio.NewFuture[int](t)
				cf := asyncio.Threadsafe[int](never)
				wait(func() { waitResult(cf, results) })
				for i := 0; ; i++ {
					wait(func() {
						waitResult(asyncio.RunCoroutineThreadsafe(l, func(t *asyncio.T) (int, error) {
							defer track()()
							return i, asyncio.Sleep(t, time.Hour)
						}), results)
					})
					if err := asyncio.Sleep(t, 5*time.Millisecond); err != nil {
						return err
					}
				}
			})
			asyncio.SpawnErr(g, func(t *asyncio.T) error { return nest(t, 1) })
			return asyncio.Sleep(t, time.Hour)
		})
	})
	if viaRun {
		if _, err := asyncio.RunWith(runner, func(t *asyncio.T) (struct{}, error) { return stop.Await(t) }); err != nil {
			t.Fatalf("RunWith: %v", err)
		}
	} else if err := l.RunForever(); err != nil {
		t.Fatalf("RunForever: %v", err)
	}
	if main.Done() {
		t.Fatalf("the busy loop ended before the %d-th iteration: %v", n, main.Err())
	}
	if viaRun {
		// Its errors are the tasks' that ended with one while cancelled
		// (a client whose connection was reset): reported, not a failure.
		runner.Close()
	} else if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Every foreign waiter returns an error once Close has returned (a
	// hang here is the failure: go test's -timeout reports it).
	for i := int64(0); i < foreign.Load(); i++ {
		if err := <-results; err == nil {
			t.Errorf("a ConcurrentFuture pending at Close completed without an error")
		}
	}
	if reading.Load() { // the foreign Read must end with an error
		if err := <-connRead; err == nil {
			t.Errorf("the foreign Read ended without an error")
		}
	}
	t.Logf("time %v; at close: %d tasks and handlers, %d lines echoed, %d UDP pongs, %d executor jobs done, %d foreign waiters, Conn read: %v",
		l.Time(), started.Load(), echoed.Load(), pongs.Load(), jobs.Load(), foreign.Load(), reading.Load())
	if s, d := started.Load(), deferred.Load(); s != d {
		t.Errorf("%d tasks and handlers started, %d deferred calls ran", s, d)
	}
}

// udpSink is a DatagramProtocol that counts what it receives.
type udpSink struct{ got *atomic.Int64 }

func (p udpSink) ConnectionMade(DatagramTransport)  {}
func (p udpSink) DatagramReceived([]byte, net.Addr) { p.got.Add(1) }
func (p udpSink) ErrorReceived(error)               {}
func (p udpSink) ConnectionLost(error)              {}
