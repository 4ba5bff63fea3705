//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// After its connection is lost a transport's "socket" is -1, as CPython
// 3.13's (get_extra_info('socket').fileno() == -1), while "peername" and
// "sockname" stay; it was the closed descriptor's number, which the
// system gives to the next file opened. Plain, TLS and datagram.
// CPython 3.13.0: "after close -1 ('127.0.0.1', 41257) True".
func TestH4ExtraInfoSocketAfterClose(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, tlsOn := range []bool{false, true} {
			var sopts, copts []Option
			if tlsOn {
				sopts, copts = []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}
			}
			srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0, sopts...)
			if err != nil {
				return err
			}
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), copts...)
			if err != nil {
				return err
			}
			before, ok := Socket(w)
			w.Close()
			if err := w.WaitClosed(at); err != nil {
				return err
			}
			after, ok2 := Socket(w)
			log = append(log, fmt.Sprintf("tls=%v before %v,%v after %d,%v peer %v sock %v", tlsOn, before > 0, ok, after, ok2, PeerName(w) != nil, SockName(w) != nil))
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		lost := asyncio.NewFuture[struct{}](at)
		dtr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return &h4LostDatagram{lost: lost} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		dtr.Close()
		if _, err := lost.Await(at); err != nil {
			return err
		}
		fd, ok := Socket(dtr)
		log = append(log, fmt.Sprintf("udp after %d,%v", fd, ok))
		return nil
	})
	expectLog(t, []string{
		"tls=false before true,true after -1,true peer true sock true",
		"tls=true before true,true after -1,true peer true sock true",
		"udp after -1,true",
	}, log)
}

type h4LostDatagram struct {
	BaseDatagramProtocol
	lost *asyncio.Future[struct{}]
}

func (p *h4LostDatagram) ConnectionLost(error) { p.lost.SetResult(struct{}{}) }
