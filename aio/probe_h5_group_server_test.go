//go:build unix

package aio

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Probes of the group servers (h5): least-connections balancing with a
// loop whose protocol factory fails, and hand-offs to loops that go away.

// h5Served opens a connection on path, writes a line and reports whether
// it came back (a loop whose factory failed closes the connection at
// once). The writer is returned open when the line came back.
func h5Served(at *asyncio.T, path string) (bool, *StreamWriter, error) {
	r, w, err := OpenUnixConnection(at, path)
	if err != nil {
		return false, nil, err
	}
	if err := w.Write([]byte("hi\n")); err != nil {
		w.Close()
		return false, nil, nil
	}
	line, err := r.ReadLine(at)
	if err != nil || string(line) != "hi\n" {
		w.Close()
		return false, nil, nil
	}
	return true, w, nil
}

// A loop whose protocol factory fails (panics, or returns nil) keeps zero
// connections; least-connections balancing must not therefore hand it
// every new connection while the healthy loop holds some: a failed
// hand-off counts against the loop until one of its hand-offs succeeds.
func TestH5_LeastConnsFailingFactoryDoesNotStarveTheHealthyLoops(t *testing.T) {
	for _, how := range []string{"panic", "nil"} {
		t.Run(how, func(t *testing.T) {
			clean(t)
			path := filepath.Join(t.TempDir(), "s.sock")
			onGroup(t, 2, func(at *asyncio.T, g *asyncio.LoopGroup) error {
				for i := 0; i < 2; i++ { // reports of the failures, not printed
					g.Loop(i).SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
				}
				gs, err := CreateUnixGroupServer(at, g, GroupLeastConns, func() Protocol {
					if loopIndexHere(g) == 1 {
						if how == "panic" {
							panic("the factory is broken on loop 1")
						}
						return nil
					}
					return &echoProto{}
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
				// Loop 0 (healthy) takes the first; loop 1 fails the
				// second, which now counts against it: the ties and the
				// loads alternate from there.
				if got := fmt.Sprint(served); got != "[true false true false true false true false]" {
					t.Errorf("connections served: %s; want every other one served by the healthy loop", got)
				}
				for _, w := range open {
					w.Close()
				}
				if err := gs.Close(at); err != nil {
					return err
				}
				if err := gs.CloseClients(at); err != nil {
					return err
				}
				return gs.WaitClosed(at)
			})
		})
	}
}
