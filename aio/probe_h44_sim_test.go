//go:build linux

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A simulated network closed at every moment: three clients exchange
// lines with a server over a 5 ms link with a 4 KiB window (segments in
// flight, dials waiting), one connection is reset, a datagram pair pings
// across it, and the network is closed at the end (or never, when Close
// comes first). Close of the loop releases every relay descriptor and
// pipe of the network, whatever was in flight.
func TestH44_SimNetworkClosedAtEveryMoment(t *testing.T) {
	closeAtEachIteration(t, 1000, []asyncio.LoopOption{asyncio.WithVirtualTime()}, func(at *asyncio.T, s *h44State) error {
		// The reset connection's server handler: its read's error is set
		// but, when the loop stops right then, never looked at (a
		// pending task's wakeup is dropped by Close, as in CPython).
		// Or its end, whose report was queued, is reported by Close.
		s.allow("recv: connection reset by peer")
		n := NewSimNetwork(at, 44)
		n.SetDefaultLink(LinkConfig{Latency: 5 * time.Millisecond})
		srvHost, cliHost := n.Host("srv"), n.Host("cli")
		srv, err := StartServer(at, echoLines(""), "", 7, WithNetwork(srvHost))
		if err != nil {
			return err
		}
		err = asyncio.TaskGroup(at, func(g *asyncio.Group) error {
			for i := range 3 {
				asyncio.SpawnErr(g, func(at *asyncio.T) error {
					r, w, err := OpenConnection(at, "srv", 7, WithNetwork(cliHost))
					if err != nil {
						return err
					}
					defer w.Close()
					for j := range 4 {
						msg := fmt.Sprintf("%d-%d %0512d\n", i, j, 0)
						w.Write([]byte(msg))
						line, err := r.ReadLine(at)
						if asyncio.IsCancelled(err) {
							return err
						}
						if i == 2 && j == 2 {
							n.ConnOf(w.ExtraInfo("sockname").(net.Addr)).Reset()
							return nil
						}
						if err != nil {
							return err
						}
						if string(line) != msg {
							return errors.New("sim: read " + string(line))
						}
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}

		var log []string
		echo, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol {
			p := newDatagramRecorder(at, "udp-srv", &log)
			p.echo = true
			return p
		}, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 9}, nil, WithNetwork(srvHost))
		if err != nil {
			return err
		}
		cli, cp, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "udp-cli", &log) },
			nil, echo.ExtraInfo("sockname").(*net.UDPAddr), WithNetwork(cliHost))
		if err != nil {
			return err
		}
		cli.SendTo([]byte("ping"), nil)
		if _, err := cp.(*datagramRecorder).got.Await(at); err != nil {
			return err
		}
		cli.Close()
		echo.Close()
		n.Close()
		return settle(at)
	})
}
