//go:build linux

package aio

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Loopback sockets closed at every moment: a protocol server
// (CreateServer) with two connected clients that CloseClients ends, a TLS
// stream server with a client (mid-handshake at some moments), and a UDP
// echo. Every descriptor is closed by Close, whatever was in flight.
func TestH44_LoopbackSocketsClosedAtEveryMoment(t *testing.T) {
	srvCfg, cliCfg := testTLSConfigs(t)
	closeAtEachIteration(t, 400, []asyncio.LoopOption{asyncio.WithVirtualTime()}, func(at *asyncio.T, s *h44State) error {
		var log []string
		srv, err := CreateServer(at, func() Protocol {
			p := newStreamRecorder(at, "srv", &log)
			p.onData = func(p *streamRecorder, d []byte) { p.tr.Write(d) }
			return p
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		var clients []*streamRecorder
		for range 2 {
			echoed := asyncio.NewFuture[struct{}](at)
			_, p, err := CreateConnection(at, func() Protocol {
				p := newStreamRecorder(at, "cli", &log)
				p.onData = func(p *streamRecorder, d []byte) {
					if !echoed.Done() {
						echoed.SetResult(struct{}{})
					}
				}
				return p
			}, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			c := p.(*streamRecorder)
			clients = append(clients, c)
			c.tr.Write([]byte("ping"))
			if _, err := echoed.Await(at); err != nil {
				return err
			}
		}
		srv.CloseClients()
		for _, c := range clients {
			if _, err := c.lost.Await(at); err != nil {
				return err
			}
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}

		tlsSrv, err := StartServer(at, echoLines("tls "), "127.0.0.1", 0, WithTLS(srvCfg))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(tlsSrv), WithTLS(cliCfg))
		if err != nil {
			return err
		}
		w.Write([]byte("hi\n"))
		line, err := r.ReadLine(at)
		if err != nil {
			return err
		}
		if string(line) != "tls hi\n" {
			return errors.New("tls: read " + string(line))
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		tlsSrv.Close()
		if err := tlsSrv.WaitClosed(at); err != nil {
			return err
		}

		echo, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol {
			p := newDatagramRecorder(at, "udp-srv", &log)
			p.echo = true
			return p
		}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		cli, cp, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "udp-cli", &log) },
			nil, echo.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return err
		}
		cli.SendTo([]byte("ping"), nil)
		if _, err := asyncio.WaitFor(at, time.Second, cp.(*datagramRecorder).got); err != nil {
			return err
		}
		cli.Close()
		echo.Close()
		return settle(at)
	})
}
