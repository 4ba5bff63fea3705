//go:build unix

package aio

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// datagramsUntil logs what a datagram endpoint receives and resolves
// done at the datagram last.
type datagramsUntil struct {
	BaseDatagramProtocol
	log  *[]string
	last string
	done *asyncio.Future[struct{}]
}

func (p *datagramsUntil) DatagramReceived(d []byte, addr net.Addr) {
	*p.log = append(*p.log, "got "+string(d))
	if string(d) == p.last && !p.done.Done() {
		p.done.SetResult(struct{}{})
	}
}

func (p *datagramsUntil) ErrorReceived(err error) {
	*p.log = append(*p.log, "error "+describe(err))
}

// WithAllowBroadcast with a remote address left the socket connected to
// it, so the kernel dropped every datagram from another address: the
// replies to a broadcast, which come from each host's own address, never
// arrived. CPython 3.13's create_datagram_endpoint does not sock_connect
// when allow_broadcast is true: remote_addr is only sendto's default
// destination, get_extra_info('peername') is None, datagrams from every
// sender are delivered, and sendto to another address is still a
// ValueError "Invalid address: must be None or <remote>".
func TestH19_BroadcastEndpointIsNotConnected(t *testing.T) {
	clean(t)
	peer, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	other, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := &datagramsUntil{log: &log, last: "from peer", done: asyncio.NewFuture[struct{}](at)}
		tr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return p },
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, peer.LocalAddr().(*net.UDPAddr), WithAllowBroadcast())
		if err != nil {
			return err
		}
		defer tr.Abort()
		log = append(log, fmt.Sprintf("peername %v", tr.ExtraInfo("peername")))
		if err := tr.SendTo([]byte("hi"), nil); err != nil {
			return err
		}
		buf := make([]byte, 16)
		n, _, err := peer.ReadFrom(buf) // loopback: already there
		if err != nil {
			return err
		}
		log = append(log, "peer got "+string(buf[:n]))
		err = tr.SendTo([]byte("x"), other.LocalAddr())
		log = append(log, "sendto another address: "+describe(err))
		me := tr.ExtraInfo("sockname").(*net.UDPAddr)
		//asynciovet:ignore blockingcall a UDP send on loopback does not wait
		if _, err := other.WriteTo([]byte("from other"), me); err != nil {
			return err
		}
		//asynciovet:ignore blockingcall a UDP send on loopback does not wait
		if _, err := peer.WriteTo([]byte("from peer"), me); err != nil {
			return err
		}
		// Both are queued on the socket, in this order, before the wait
		// for the second (which the peer may send either way).
		_, err = p.done.Await(at)
		return err
	})
	expectLog(t, []string{
		"peername <nil>",
		"peer got hi",
		"sendto another address: ValueError Invalid address: must be None or 127.0.0.1:" + fmt.Sprint(peer.LocalAddr().(*net.UDPAddr).Port),
		"got from other",
		"got from peer",
	}, log)
}

// panickyDatagrams panics on the datagram "boom", logs the others and
// ConnectionLost, and resolves next at the datagram "after" or at
// ConnectionLost, whichever comes first.
type panickyDatagrams struct {
	BaseDatagramProtocol
	log  *[]string
	next *asyncio.Future[struct{}]
}

func (p *panickyDatagrams) DatagramReceived(d []byte, addr net.Addr) {
	if string(d) == "boom" {
		panic("boom")
	}
	*p.log = append(*p.log, "got "+string(d))
	if !p.next.Done() {
		p.next.SetResult(struct{}{})
	}
}

func (p *panickyDatagrams) ConnectionLost(err error) {
	*p.log = append(*p.log, "lost "+describe(err))
	if !p.next.Done() {
		p.next.SetResult(struct{}{})
	}
}

// A panic in DatagramReceived closed the endpoint (a "Fatal error:
// protocol.datagram_received() call failed." report, ConnectionLost with
// the panic), so one bad datagram ended a server for every sender.
// CPython 3.13's _SelectorDatagramTransport._read_ready calls
// datagram_received outside its try: the exception reaches the loop's
// exception handler as "Exception in callback ...", and the endpoint
// stays open and receives the next datagram.
func TestH19_DatagramReceivedPanicKeepsEndpointOpen(t *testing.T) {
	clean(t)
	sender, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if i := len("Exception in callback"); len(msg) > i {
				msg = msg[:i]
			}
			log = append(log, "handler: "+msg+": "+fmt.Sprint(ctx.Err))
		})
		p := &panickyDatagrams{log: &log, next: asyncio.NewFuture[struct{}](at)}
		tr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return p }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		me := tr.ExtraInfo("sockname").(*net.UDPAddr)
		for _, d := range []string{"boom", "after"} {
			//asynciovet:ignore blockingcall a UDP send on loopback does not wait
			if _, err := sender.WriteTo([]byte(d), me); err != nil {
				return err
			}
		}
		if _, err := p.next.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("closing %v", tr.IsClosing()))
		tr.Abort()
		return settle(at)
	})
	expectLog(t, []string{
		"handler: Exception in callback: asyncio: panic: boom",
		"got after",
		"closing false",
		"lost <nil>",
	}, log)
}

// A net.IP that is neither 4 nor 16 bytes long (not an address: what a
// slicing mistake or a hand-built IP gives) was taken for the IPv6
// wildcard "::": CreateDatagramEndpoint bound an IPv6 socket to [::] and
// returned it, and SendTo on an IPv6 endpoint sent to [::]:port, that is
// to this host. A bad address must be a clear error naming it, before a
// socket is made or a datagram sent (CPython's sendto and
// create_datagram_endpoint reject an address they cannot parse: a
// gaierror or TypeError). Now CreateDatagramEndpoint's is a *ValueError,
// SendTo's the *ValueError "Invalid address: ...".
func TestH19_DatagramMalformedIPIsAnError(t *testing.T) {
	clean(t)
	var log []string
	var port string
	runNet(t, func(at *asyncio.T) error {
		bad := net.IP{1, 2, 3}
		factory := func() DatagramProtocol { return newDatagramRecorder(at, "p", &log) }
		for _, c := range []struct {
			name          string
			local, remote *net.UDPAddr
		}{
			{"local", &net.UDPAddr{IP: bad}, nil},
			{"remote", nil, &net.UDPAddr{IP: bad, Port: 9}},
			{"both", &net.UDPAddr{IP: net.IPv6loopback}, &net.UDPAddr{IP: append(bad, 4, 5), Port: 9}},
		} {
			tr, _, err := CreateDatagramEndpoint(at, factory, c.local, c.remote)
			if tr != nil {
				log = append(log, fmt.Sprintf("%s: made, sockname %v", c.name, tr.ExtraInfo("sockname")))
				tr.Abort()
				continue
			}
			log = append(log, c.name+": "+describe(err))
		}
		tr, _, err := CreateDatagramEndpoint(at, factory, &net.UDPAddr{IP: net.IPv6loopback}, nil)
		if err != nil {
			return err
		}
		defer tr.Abort()
		me := tr.ExtraInfo("sockname").(*net.UDPAddr)
		port = fmt.Sprint(me.Port)
		err = tr.SendTo([]byte("to a bad address"), &net.UDPAddr{IP: bad, Port: me.Port})
		log = append(log, "SendTo: "+describe(err))
		return settle(at) // a datagram to [::] would have come back by now
	})
	expectLog(t, []string{
		"local: ValueError CreateDatagramEndpoint: invalid IP address ?010203: 3 bytes, not 4 or 16",
		"remote: ValueError CreateDatagramEndpoint: invalid IP address ?010203: 3 bytes, not 4 or 16",
		"both: ValueError CreateDatagramEndpoint: invalid IP address ?0102030405: 5 bytes, not 4 or 16",
		"p:made",
		"SendTo: ValueError Invalid address: ?010203:" + port,
		"p:lost <nil>",
	}, log)
}

// SendTo of a *net.UnixAddr on an unconnected UDP endpoint returned nil
// and the system's refusal came as ErrorReceived (sendto
// EAFNOSUPPORT), as if the network had failed, while the same mistake
// the other way (a *net.UDPAddr on a Unix endpoint) is a *ValueError at
// once. In CPython 3.13 it is not a network error either: socket.sendto
// raises TypeError ("AF_INET address must be tuple, not str"), which
// transport.sendto takes for a fatal error (logged, the endpoint closed),
// and error_received is not called. The package's rule for a bad argument
// is a *ValueError before anything changes, as for the Unix endpoint.
func TestH19_UDPSendToUnixAddrIsAValueError(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		tr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "udp", &log) }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		err = tr.SendTo([]byte("x"), &net.UnixAddr{Name: "/tmp/h19-nowhere", Net: "unixgram"})
		log = append(log, "SendTo: "+describe(err))
		tr.Close()
		return settle(at)
	})
	expectLog(t, []string{
		"udp:made",
		"SendTo: ValueError Invalid address: /tmp/h19-nowhere (*net.UnixAddr) on a UDP endpoint, which sends to a *net.UDPAddr",
		"udp:lost <nil>",
	}, log)
}
