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
		if _, err := other.WriteTo([]byte("from other"), me); err != nil {
			return err
		}
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
