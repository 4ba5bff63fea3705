//go:build unix

package aio

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A stream group server with least connections whose client_connected
// handler fails at once on loop 1 (returns an error, or panics): its
// connections are closed as soon as they are made, so loop 1 keeps zero
// of them, but it must not therefore take every new connection while
// loop 0 holds some. A handler failure counts against its loop, as a
// failed protocol factory does (TestH5_LeastConnsFailingFactoryDoesNotStarveTheHealthyLoops),
// and the counts of live connections are right: 0 on loop 1 throughout,
// every one of loop 0's once they are open, and 0 everywhere once closed.
func TestGroupServer_LeastConnsFailingHandlerDoesNotStarveTheHealthyLoops(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			clean(t)
			path := filepath.Join(t.TempDir(), "s.sock")
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				for i := 0; i < 2; i++ { // reports of the failures, not printed
					g.Loop(i).SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
				}
				gs, err := StartUnixGroupServer(at, g, GroupLeastConns, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
					if g.Index(st.Loop()) == 1 {
						if how == "panic" {
							panic("the handler is broken on loop 1")
						}
						return errors.New("the handler is broken on loop 1")
					}
					for { // loop 0 echoes lines until EOF
						line, err := r.ReadLine(st)
						if err != nil || len(line) == 0 {
							w.Close()
							return nil
						}
						if err := w.Write(line); err != nil {
							return err
						}
					}
				}, path)
				if err != nil {
					return err
				}
				var open []*StreamWriter
				var served []bool
				for k := 0; k < 8; k++ {
					ok, w, err := h5Served(at, path)
					if err != nil {
						return err
					}
					served = append(served, ok)
					if ok {
						open = append(open, w)
					}
				}
				// Loop 0 takes the first; loop 1 fails the second, which
				// counts against it: the ties and the loads alternate
				// from there.
				if got := fmt.Sprint(served); got != "[true false true false true false true false]" {
					t.Errorf("connections served: %s; want every other one served by the healthy loop", got)
				}
				counts, err := gs.ActiveConnections(at)
				if err != nil {
					return err
				}
				if fmt.Sprint(counts) != fmt.Sprint([]int{len(open), 0}) {
					t.Errorf("live connections by loop: %v; want [%d 0]", counts, len(open))
				}
				for _, w := range open {
					w.Close()
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				return gs.WaitClosed(at)
			})
		})
	}
}

// The handler failures counted against a loop clear once a handler there
// returns nil: the loop is served as least-conns says again, instead of
// looking loaded by failures long past.
func TestGroupServer_LeastConnsHandlerFailuresClearOnceALoopServesAgain(t *testing.T) {
	clean(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	var broken atomic.Bool
	broken.Store(true)
	onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
		for i := 0; i < 2; i++ { // reports of the failures, not printed
			g.Loop(i).SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
		}
		echo := echoOn(g)
		gs, err := StartUnixGroupServer(at, g, GroupLeastConns, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if g.Index(st.Loop()) == 1 && broken.Load() {
				return errors.New("the handler is broken on loop 1")
			}
			return echo(st, r, w)
		}, path)
		if err != nil {
			return err
		}
		var open []*StreamWriter
		defer func() {
			for _, w := range open {
				w.Close()
			}
		}()
		// dial opens a connection and returns the loop that served it
		// (-1: its handler failed); open keeps it unless closed.
		dial := func(keep bool) int {
			i, w, err := dialAndEcho(at, 0, path)
			if err != nil {
				if w != nil {
					w.Close()
				}
				return -1
			}
			if keep {
				open = append(open, w)
			} else {
				w.Close()
			}
			return i
		}
		var loops []int
		for range 3 { // loop 0, loop 1 failing, loop 0
			loops = append(loops, dial(true))
		}
		broken.Store(false)
		// Loop 1 (one failure, as loaded as loop 0 with 2) takes the next,
		// serves it, and its handler returns nil when it is closed.
		loops = append(loops, dial(false))
		for { // until loop 1 has let it go
			counts, err := gs.ActiveConnections(at)
			if err != nil {
				return err
			}
			if counts[1] == 0 {
				break
			}
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		// Loop 1 has no connection and no failure left: the next two go
		// to it (0 < 2, then 1 < 2).
		for range 2 {
			loops = append(loops, dial(true))
		}
		if got := fmt.Sprint(loops); got != "[0 -1 0 1 1 1]" {
			t.Errorf("connections went to loops %s (-1: failed); want [0 -1 0 1 1 1]", got)
		}
		if err := gs.Close(at); err != nil {
			return err
		}
		for _, w := range open {
			w.Close()
		}
		open = nil
		return gs.WaitClosed(at)
	})
}
