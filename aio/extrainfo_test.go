//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// The typed accessors read the get_extra_info keys of a plain and a TLS
// stream (through the StreamWriter) and of a datagram endpoint, and say
// "none" for what a transport does not have.
func TestExtraInfoAccessors(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, tlsOn := range []bool{false, true} {
			var sopts, copts []Option
			if tlsOn {
				sopts, copts = []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}
			}
			srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0, sopts...)
			if err != nil {
				return err
			}
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), copts...)
			if err != nil {
				return err
			}
			fd, ok := Socket(w)
			peer := PeerName(w).String() == fmt.Sprintf("127.0.0.1:%d", serverPort(srv))
			local := SockName(w).(*net.TCPAddr).IP.String()
			cert := PeerCert(w)
			log = append(log, fmt.Sprintf("tls=%v peer=%v local=%s socket=%v,%v cert=%v tlsconn=%v",
				tlsOn, peer, local, fd > 0, ok, cert != nil && cert.Subject.CommonName == "localhost", TLSConn(w) != nil))
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		dtr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return BaseDatagramProtocol{} }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		_, ok := Socket(dtr)
		log = append(log, fmt.Sprintf("udp: peer=%v local=%v socket=%v cert=%v", PeerName(dtr), SockName(dtr) != nil, ok, PeerCert(dtr) == nil))
		dtr.Close()
		return settle(at)
	})
	expectLog(t, []string{
		"tls=false peer=true local=127.0.0.1 socket=true,true cert=false tlsconn=false",
		"tls=true peer=true local=127.0.0.1 socket=true,true cert=true tlsconn=true",
		"udp: peer=<nil> local=true socket=true cert=true",
	}, log)
}
