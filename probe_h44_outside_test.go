//go:build linux

package asyncio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Outside work closed at every moment, with exact accounting of what took
// effect: Recv from a foreign producer (every value the producer handed
// over was received by the task), Send to a foreign consumer (every value
// the consumer took was reported sent), Go and ToThread calls (a call
// whose function returned is not reported as undone), a Go call and an
// executor job still running at Close (their context is cancelled), a
// RunInExecutor future, AddReader/AddWriter on a pipe (the loop does not
// close a descriptor it does not own), a signal handler, a foreign
// goroutine calling CallSoonThreadsafe until it is refused, and
// Timeout/TaskGroup/Shield nesting whose deferred calls all run.
func TestH44_OutsideWorkClosedAtEveryMoment(t *testing.T) {
	// A real clock: the Go call and the executor job that run until Close
	// would hold a virtual one (outside work); the outcome does not depend
	// on timing.
	h44CloseAtEach(t, 2000, nil, func(tk *T, r *h44Run) error {
		// A Go call and an executor job still running at Close: reported,
		// their contexts cancelled.
		r.allow("still running when the event loop closed")
		l := tk.Loop()
		var wg sync.WaitGroup
		quit := make(chan struct{})
		r.onEnd(func(*testing.T) { close(quit); wg.Wait() })
		foreign := func(fn func()) {
			wg.Add(1)
			go func() { defer wg.Done(); fn() }()
		}
		const n = 4

		// Recv from a foreign producer.
		in := make(chan int)
		var handed atomic.Int64
		foreign(func() {
			for i := 0; ; i++ {
				select {
				case in <- i:
					handed.Add(1)
				case <-quit:
					return
				}
			}
		})
		received := 0
		r.after(func(t *testing.T, _ bool) {
			if int64(received) != handed.Load() {
				t.Errorf("Recv: the producer handed over %d values, the task received %d", handed.Load(), received)
			}
		})

		// Send to a foreign consumer.
		out := make(chan int)
		var taken atomic.Int64
		foreign(func() {
			for {
				select {
				case <-out:
					taken.Add(1)
				case <-quit:
					return
				}
			}
		})
		reportedSent := 0
		r.after(func(t *testing.T, _ bool) {
			if int64(reportedSent) != taken.Load() {
				t.Errorf("Send: the consumer took %d values, %d were reported sent", taken.Load(), reportedSent)
			}
		})

		// Go and ToThread calls: a function that returned is never reported
		// undone; at most the one running at Close has its effect unreported.
		var goEffects, threadEffects atomic.Int64
		goReturned, threadReturned := 0, 0
		r.after(func(t *testing.T, _ bool) {
			if d := goEffects.Load() - int64(goReturned); d != 0 && d != 1 {
				t.Errorf("Go: %d calls took effect, %d returned to the task", goEffects.Load(), goReturned)
			}
			if d := threadEffects.Load() - int64(threadReturned); d != 0 && d != 1 {
				t.Errorf("ToThread: %d calls took effect, %d returned to the task", threadEffects.Load(), threadReturned)
			}
		})

		// A Go call and an executor job that run until Close (or the
		// Runner's cancellation).
		goEnded := make(chan error, 1)
		jobEnded := make(chan error, 1)
		r.after(func(t *testing.T, completed bool) {
			for name, ch := range map[string]chan error{"Go call": goEnded, "executor job": jobEnded} {
				select {
				case cause := <-ch:
					// A Go call's and an executor job's contexts are
					// cancelled with ErrLoopClosed as their cause.
					if !r.viaRunner && !errors.Is(cause, ErrLoopClosed) {
						t.Errorf("the %s running at Close saw the cause %v", name, cause)
					}
				default: // never started
				}
			}
		})

		// A RunInExecutor future the test holds.
		var heldReturned atomic.Bool
		var held *Future[int]
		r.after(func(t *testing.T, _ bool) {
			if held == nil {
				return
			}
			if held.Done() && !held.Cancelled() {
				if v, err := held.Result(); v != 44 || err != nil {
					t.Errorf("RunInExecutor future: %v, %v", v, err)
				}
			}
		})

		// A pipe watched with AddReader and AddWriter.
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		r.onEnd(func(t *testing.T) {
			for _, f := range []*os.File{pr, pw} {
				if _, err := unixFcntl(int(f.Fd())); err != nil {
					t.Errorf("the pipe's descriptor %d was closed by the loop: %v", f.Fd(), err)
				}
			}
			pr.Close()
			pw.Close()
		})

		// CallSoonThreadsafe until refused.
		var accepted, ran atomic.Int64
		refused := make(chan error, 1)
		foreign(func() {
			for {
				if _, err := l.CallSoonThreadsafe(func() { ran.Add(1) }); err != nil {
					refused <- err // closed already
					<-quit
					return
				}
				if accepted.Add(1) == 20 {
					break // enough: every call is an iteration more
				}
				runtime.Gosched()
			}
			<-quit // the loop is closed by now
			_, err := l.CallSoonThreadsafe(func() { ran.Add(1) })
			refused <- err
		})
		r.after(func(t *testing.T, _ bool) {
			if err := <-refused; err != nil && !errors.Is(err, ErrLoopClosed) {
				t.Errorf("CallSoonThreadsafe on a closed loop: %v", err)
			} else if err == nil {
				t.Errorf("CallSoonThreadsafe after Close was accepted")
			}
			if ran.Load() > accepted.Load() {
				t.Errorf("%d threadsafe callbacks ran, %d accepted", ran.Load(), accepted.Load())
			}
		})

		// Deferred calls of the nesting.
		var started, deferred atomic.Int64
		track := func() func() {
			started.Add(1)
			return func() { deferred.Add(1) }
		}
		r.after(func(t *testing.T, _ bool) {
			if started.Load() != deferred.Load() {
				t.Errorf("%d bodies started, %d deferred calls ran", started.Load(), deferred.Load())
			}
		})

		sigs := make(chan struct{}, 1)
		if err := l.AddSignalHandler(syscall.SIGUSR1, func() {
			select {
			case sigs <- struct{}{}:
			default:
			}
		}); err != nil {
			return err
		}

		return TaskGroup(tk, func(g *Group) error {
			SpawnErr(g, func(tk *T) error {
				for i := 0; i < n; i++ {
					v, ok, err := Recv(tk, in)
					if err != nil {
						return err
					}
					received++
					if !ok || v != received-1 {
						return fmt.Errorf("Recv: %d, %v", v, ok)
					}
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error {
				for i := 0; i < n; i++ {
					if err := Send(tk, out, i); err != nil {
						return err
					}
					reportedSent++
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error {
				for i := 0; i < n; i++ {
					v, err := Go(tk, func(context.Context) (int, error) { goEffects.Add(1); return i, nil })
					if err != nil {
						return err
					}
					goReturned++
					if v != i {
						return fmt.Errorf("Go: %d", v)
					}
					v, err = ToThread(tk, func(context.Context) (int, error) { threadEffects.Add(1); return i, nil })
					if err != nil {
						return err
					}
					threadReturned++
					if v != i {
						return fmt.Errorf("ToThread: %d", v)
					}
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error {
				held = RunInExecutor(tk, func(context.Context) (int, error) { heldReturned.Store(true); return 44, nil })
				_, err := held.Await(tk)
				return err
			})
			//asynciovet:ignore unawaitedtask runs until Close or the Runner's cancellation, on purpose
			CreateTaskErr(tk, func(tk *T) error {
				_, err := Go(tk, func(ctx context.Context) (int, error) {
					<-ctx.Done()
					goEnded <- context.Cause(ctx)
					return 0, ctx.Err()
				})
				return err
			})
			if !r.viaRunner { // Runner.Close would wait for it (RUN-3: 5 minutes)
				RunInExecutor(tk, func(ctx context.Context) (int, error) {
					<-ctx.Done()
					jobEnded <- context.Cause(ctx)
					return 0, ctx.Err()
				})
			}
			SpawnErr(g, func(tk *T) error { // the pipe
				done := NewFuture[int](tk)
				got, put := 0, 0
				buf := make([]byte, 16)
				if err := l.AddReader(int(pr.Fd()), func() {
					m, _ := syscall.Read(int(pr.Fd()), buf)
					if got += m; got >= n && !done.Done() {
						l.RemoveReader(int(pr.Fd()))
						done.SetResult(got)
					}
				}); err != nil {
					return err
				}
				if err := l.AddWriter(int(pw.Fd()), func() {
					if _, err := syscall.Write(int(pw.Fd()), []byte{'x'}); err == nil {
						if put++; put == n {
							l.RemoveWriter(int(pw.Fd()))
						}
					}
				}); err != nil {
					return err
				}
				_, err := done.Await(tk)
				return err
			})
			SpawnErr(g, func(tk *T) error { // signals
				defer l.RemoveSignalHandler(syscall.SIGUSR1)
				for i := 0; i < 3; i++ {
					if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
						return err
					}
					if _, _, err := Recv(tk, sigs); err != nil {
						return err
					}
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error { // nesting
				defer track()()
				return Timeout(tk, time.Hour, func(*TimeoutScope) error {
					defer track()()
					inner := CreateTaskErr(tk, func(tk *T) error {
						defer track()()
						return TaskGroup(tk, func(g *Group) error {
							defer track()()
							for d := 1; d <= 3; d++ {
								SpawnErr(g, func(tk *T) error {
									defer track()()
									return Sleep(tk, time.Duration(d)*time.Millisecond)
								})
							}
							return nil
						})
					})
					_, err := Shield[struct{}](inner).Await(tk)
					return err
				})
			})
			return nil
		})
	})
}

// unixFcntl reports whether fd is open (F_GETFD).
func unixFcntl(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
