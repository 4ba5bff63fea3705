//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
)

// simClient asks each of three simulated servers for an echo, each under
// a timeout: server1's connection stalls for a minute (its request times
// out) and server2's is reset (its request fails); server0 answers. The
// servers are shut down whatever happens: stopped, their connections
// aborted, and waited for.
func simClient(t *asyncio.T, seed uint64) (answers int, err error) {
	n := NewSimNetwork(t, seed)
	n.SetDefaultLink(LinkConfig{Latency: 2 * time.Millisecond, Jitter: time.Millisecond})
	client := n.Host("client")
	var servers []*Server
	defer func() {
		for _, s := range servers {
			s.Close()
			s.AbortClients()
		}
		for _, s := range servers {
			if werr := s.WaitClosed(t); err == nil {
				err = werr
			}
		}
	}()
	for i := range 3 {
		h := n.Host(fmt.Sprintf("server%d", i))
		s, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			line, err := r.ReadLine(t)
			if err != nil {
				return nil // reset, aborted, or the client went away
			}
			w.Write(line)
			return nil
		}, "", 7, WithNetwork(h))
		if err != nil {
			return 0, err
		}
		servers = append(servers, s)
	}
	err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := range 3 {
			asyncio.SpawnErr(g, func(t *asyncio.T) error {
				got, err := asyncio.WaitForFunc(t, 100*time.Millisecond, func(t *asyncio.T) ([]byte, error) {
					r, w, err := OpenConnection(t, fmt.Sprintf("server%d", i), 7, WithNetwork(client))
					if err != nil {
						return nil, err
					}
					defer w.Close()
					conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
					switch i {
					case 1:
						conn.StallFor(time.Minute)
					case 2:
						n.At(t.Loop().Time()+3*time.Millisecond, conn.Reset)
					}
					w.Write([]byte("ping\n"))
					return r.ReadLine(t)
				})
				switch {
				case i == 0 && err == nil && string(got) == "ping\n":
					answers++
					return nil
				case i == 1 && errors.Is(err, asyncio.ErrTimeout), i == 2 && err != nil && !asyncio.IsCancelled(err):
					return nil
				case err != nil:
					return err
				}
				return fmt.Errorf("server%d answered %q", i, got)
			})
		}
		return nil
	})
	return answers, err
}

func TestSimClient(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n, err := simClient(t, 1)
		if err == nil && n != 1 {
			err = fmt.Errorf("%d answers, want 1", n)
		}
		return err
	})
}

// cancelcheck over the simulated-network client: cancelled at every
// moment any of its tasks (client or server side) waits, it ends
// cancelled with no task, descriptor or goroutine left.
func TestSimClientCancellation(t *testing.T) {
	clean(t)
	r := cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
		_, err := simClient(t, 1)
		return err
	}, cancelcheck.AllTasks(), cancelcheck.CancelMain())
	if len(r.Runs) < 10 {
		t.Errorf("only %d runs:\n%s", len(r.Runs), r)
	}
}
