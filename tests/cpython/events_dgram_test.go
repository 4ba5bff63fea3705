//go:build unix

package cpython

// test_events.py's datagram endpoint tests on loopback UDP sockets.

import (
	"net"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// myDatagramProto is MyDatagramProto; answer makes it
// TestMyDatagramProto (it sends b'resp:' + data back).
type myDatagramProto struct {
	t         *testing.T
	transport aio.DatagramTransport
	state     string
	nbytes    int
	done      *asyncio.Future[struct{}]
	answer    bool
}

func newMyDatagramProto(t *testing.T, owner asyncio.LoopOwner, answer bool) *myDatagramProto {
	return &myDatagramProto{t: t, state: "INITIAL", done: asyncio.NewFuture[struct{}](owner), answer: answer}
}

func (p *myDatagramProto) assertState(expected string) {
	if p.state != expected {
		p.t.Errorf("state: %q, expected: %q", p.state, expected)
	}
}

func (p *myDatagramProto) ConnectionMade(tr aio.DatagramTransport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "INITIALIZED"
}

func (p *myDatagramProto) DatagramReceived(data []byte, addr net.Addr) {
	p.assertState("INITIALIZED")
	p.nbytes += len(data)
	if p.answer {
		noErr(p.t, p.transport.SendTo(append([]byte("resp:"), data...), addr))
	}
}

func (p *myDatagramProto) ErrorReceived(error) { p.assertState("INITIALIZED") }

func (p *myDatagramProto) ConnectionLost(error) {
	p.assertState("INITIALIZED")
	p.state = "CLOSED"
	p.done.SetResult(struct{}{})
}

// runUntilTask is test_utils.run_until inside a task: yield until pred
// holds.
func runUntilTask(tk *asyncio.T, pred func() bool) error {
	for !pred() {
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
	}
	return nil
}

func basetestCreateDatagramEndpoint(t *testing.T, local *net.UDPAddr) {
	run(t, func(tk *asyncio.T) error {
		sTransport, sp, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return newMyDatagramProto(t, tk, true)
		}, local, nil)
		if err != nil {
			return err
		}
		server := sp.(*myDatagramProto)
		sockname := aio.SockName(sTransport).(*net.UDPAddr)
		eq(t, server.state, "INITIALIZED")
		check(t, server.transport == sTransport, "server.transport is s_transport")

		transport, cp, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return newMyDatagramProto(t, tk, false)
		}, nil, sockname)
		if err != nil {
			return err
		}
		client := cp.(*myDatagramProto)
		eq(t, client.state, "INITIALIZED")
		check(t, client.transport == transport, "client.transport is transport")

		noErr(t, transport.SendTo([]byte("xxx"), nil))
		if err := runUntilTask(tk, func() bool { return server.nbytes > 0 }); err != nil {
			return err
		}
		eq(t, server.nbytes, 3)
		if err := runUntilTask(tk, func() bool { return client.nbytes > 0 }); err != nil {
			return err
		}
		// received
		eq(t, client.nbytes, 8)
		// extra info is available
		check(t, aio.SockName(transport) != nil, "get_extra_info('sockname')")
		// close connection
		transport.Close()
		if _, err := client.done.Await(tk); err != nil {
			return err
		}
		eq(t, client.state, "CLOSED")
		server.transport.Close()
		_, err = server.done.Await(tk)
		return err
	})
}

func TestEvents_test_create_datagram_endpoint(t *testing.T) {
	basetestCreateDatagramEndpoint(t, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
}

func TestEvents_test_create_datagram_endpoint_ipv6(t *testing.T) {
	basetestCreateDatagramEndpoint(t, &net.UDPAddr{IP: net.IPv6loopback})
}

// boundUDPSocket is create_socket(): a non-blocking UDP socket bound to
// 127.0.0.1, port 0, and its address.
func boundUDPSocket(t *testing.T) (int, *net.UDPAddr) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	noErr(t, syscall.SetNonblock(fd, true))
	noErr(t, syscall.Bind(fd, loopback4(0)))
	_, port := getsockname(t, fd)
	return fd, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
}

func TestEvents_test_create_datagram_endpoint_sock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sock, _ := boundUDPSocket(t)
		tr, p, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol {
			return newMyDatagramProto(t, tk, false)
		}, nil, nil, aio.WithSocket(sock))
		if err != nil {
			syscall.Close(sock)
			return err
		}
		pr, ok := p.(*myDatagramProto)
		check(t, ok && tr != nil, "a transport and our protocol")
		tr.Close()
		_, err = pr.done.Await(tk)
		return err
	})
}

// waitProto is test_datagram_send_to_non_listening_address's Protocol.
type waitProto struct {
	aio.BaseDatagramProtocol
	received *asyncio.Future[[]byte]
}

func (p *waitProto) DatagramReceived(data []byte, _ net.Addr) { p.received.SetResult(data) }

func (p *waitProto) waitForDatagramReceived(tk *asyncio.T) ([]byte, error) {
	p.received = asyncio.NewFuture[[]byte](tk)
	// CPython's wait_for(..., 10) is a safety net: on the virtual clock
	// its timer would fire whenever the loop waits for the kernel (go
	// test's own timeout is the net).
	res, err := p.received.Await(tk)
	p.received = nil
	return res, err
}

func TestEvents_test_datagram_send_to_non_listening_address(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		endpoint := func() (aio.DatagramTransport, *waitProto, *net.UDPAddr) {
			sock, addr := boundUDPSocket(t)
			pr := &waitProto{}
			tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return pr }, nil, nil, aio.WithSocket(sock))
			if err != nil {
				syscall.Close(sock)
				t.Fatal(err)
			}
			return tr, pr, addr
		}
		transport1, protocol1, addr1 := endpoint()
		transport2, protocol2, addr2 := endpoint()
		// creating and immediately closing this to try to get an address
		// that is not listening
		transport3, _, addr3 := endpoint()
		transport3.Abort()

		noErr(t, transport1.SendTo([]byte("a"), addr2))
		got, err := protocol2.waitForDatagramReceived(tk)
		noErr(t, err)
		eq(t, string(got), "a")

		noErr(t, transport2.SendTo([]byte("b"), addr1))
		got, err = protocol1.waitForDatagramReceived(tk)
		noErr(t, err)
		eq(t, string(got), "b")

		// this should send to an address that isn't listening
		noErr(t, transport1.SendTo([]byte("c"), addr3))
		noErr(t, asyncio.Sleep(tk, 0))

		// transport 1 should still be able to receive messages after
		// sending to an address that wasn't listening
		noErr(t, transport2.SendTo([]byte("d"), addr1))
		got, err = protocol1.waitForDatagramReceived(tk)
		noErr(t, err)
		eq(t, string(got), "d")

		transport1.Close()
		transport2.Close()
		return asyncio.Sleep(tk, 0)
	})
}
