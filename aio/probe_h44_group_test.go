//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A main/sub-reactor group server (GroupRoundRobin over three loops)
// closed at every moment: main, on loop 0, opens four connections, each
// handed to a loop in turn, and exchanges a line on each; at loop 0's k-th
// iteration main returns and LoopGroup.Close closes the group with
// sockets accepted, in hand-off between loops, or adopted. No descriptor
// or goroutine is left.
func TestH44_GroupServerClosedAtEveryMoment(t *testing.T) {
	for k := 1; ; k++ {
		if k > 400 {
			t.Fatal("the scenario did not complete within 400 iterations")
		}
		var completed bool
		t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) {
			clean(t)
			g := asyncio.NewLoopGroup(asyncio.WithLoops(3))
			reports := make([][]string, g.Len()) // one per loop: each its goroutine's, read after Close
			for i, l := range g.Loops() {
				l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
					reports[i] = append(reports[i], c.Message)
				})
			}
			var main *asyncio.Task[struct{}]
			stopped := false
			_, err := asyncio.RunGroup(g, func(at *asyncio.T) (struct{}, error) {
				stop := asyncio.NewFuture[struct{}](at)
				iter := 0
				at.Loop().SetBeforePoll(func() {
					if iter++; iter == k && !stop.Done() {
						stopped = true
						stop.SetResult(struct{}{})
					}
				})
				main = asyncio.CreateTaskErr(at, func(at *asyncio.T) error {
					srv, err := StartGroupServer(at, g, GroupRoundRobin, echoLines("echo "), "127.0.0.1", 0)
					if err != nil {
						return err
					}
					for i := range 4 {
						r, w, err := OpenConnection(at, "127.0.0.1", serverPortOf(srv))
						if err != nil {
							return err
						}
						w.Write(fmt.Appendf(nil, "%d\n", i))
						line, err := r.ReadLine(at)
						if err != nil {
							return err
						}
						if string(line) != fmt.Sprintf("echo %d\n", i) {
							return errors.New("read " + string(line))
						}
						w.Close()
						if err := w.WaitClosed(at); err != nil {
							return err
						}
					}
					if err := srv.Close(at); err != nil {
						return err
					}
					return srv.WaitClosed(at)
				})
				_, _, err := asyncio.Wait(at, []asyncio.Awaitable{main, stop}, asyncio.Never, asyncio.FirstCompleted)
				return struct{}{}, err
			})
			if err != nil {
				t.Fatalf("RunGroup: %v", err)
			}
			completed = main.Done() && !stopped
			if completed && main.Err() != nil {
				t.Errorf("main: %v", main.Err())
			}
			if err := g.Close(); err != nil {
				t.Errorf("LoopGroup.Close: %v", err)
			}
			for _, l := range g.Loops() {
				if !l.IsClosed() {
					t.Errorf("loop %d not closed", g.Index(l))
				}
			}
			for i, rs := range reports {
				for _, r := range rs {
					if r != "Task was destroyed but it is pending!" {
						t.Errorf("reported on loop %d: %s", i, r)
					}
				}
			}
		})
		if completed || t.Failed() {
			t.Logf("completed normally at k=%d", k)
			return
		}
	}
}

// serverPortOf is the port a group server listens on.
func serverPortOf(s *GroupServer) int { return s.Addr().(*net.TCPAddr).Port }
