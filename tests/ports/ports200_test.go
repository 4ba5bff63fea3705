//go:build unix

package ports_test

// Ports p200 onward (h41): UDP and Unix-domain programs on real sockets,
// as their Python programs use. Same conventions as ports_test.go and
// ports111_test.go.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p200_udp_sock_api.py

type refusedProto struct {
	p    *probe
	done *asyncio.Future[struct{}]
}

func (r *refusedProto) ConnectionMade(tr aio.DatagramTransport) {
	r.p.log("endpoint: connected, peer is remote %s", pyBool(tr.ExtraInfo("peername") != nil))
}

func (r *refusedProto) DatagramReceived(data []byte, _ net.Addr) {
	r.p.log("endpoint: got %s", pbytes(data))
}

func (r *refusedProto) ErrorReceived(err error) {
	name := fmt.Sprintf("%v", err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		name = "ConnectionRefusedError"
	}
	r.p.log("endpoint: error_received %s", name)
	if !r.done.Done() {
		r.done.SetResult(struct{}{})
	}
}

func (r *refusedProto) ConnectionLost(err error) {
	r.p.log("endpoint: connection_lost %s", pyNone(err))
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func pyNone(err error) string {
	if err == nil {
		return "None"
	}
	return err.Error()
}

// boundUDP is socket(AF_INET, SOCK_DGRAM) bound to 127.0.0.1 port 0,
// non-blocking.
func boundUDP() (fd, port int, err error) {
	fd, err = aio.NewSocket("udp4")
	if err != nil {
		return -1, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

func TestPortUDPSockAPI(t *testing.T) {
	runPort(t, cpythonTrace("p200_udp_sock_api"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		srv, port, err := boundUDP()
		if err != nil {
			return err
		}
		srvAddr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
		server := asyncio.CreateTask(tk, func(t *asyncio.T) (int, error) {
			n := 0
			for {
				data, addr, err := aio.SockRecvFrom(t, srv, 100)
				if err != nil {
					return n, err
				}
				n++
				p.log("server: got %s from 127.0.0.1: %s", pbytes(data), pyBool(addr.(*net.UDPAddr).IP.Equal(net.IPv4(127, 0, 0, 1))))
				if string(data) == "stop" {
					if _, err := aio.SockSendTo(t, srv, []byte("bye"), addr); err != nil {
						return n, err
					}
					return n, nil
				}
				if err := asyncio.Sleep(t, time.Duration(n)*100*ms); err != nil {
					return n, err
				}
				if _, err := aio.SockSendTo(t, srv, bytes.Repeat(bytes.ToUpper(data), 2), addr); err != nil {
					return n, err
				}
			}
		})
		cli, _, err := boundUDP()
		if err != nil {
			return err
		}
		sent, err := aio.SockSendTo(tk, cli, []byte("ping"), srvAddr)
		if err != nil {
			return err
		}
		p.log("client: sent %d bytes", sent)
		data, addr, err := aio.SockRecvFrom(tk, cli, 100)
		if err != nil {
			return err
		}
		p.log("client: reply %s from server: %s", pbytes(data), pyBool(addr.(*net.UDPAddr).Port == port))
		if _, err := aio.SockSendTo(tk, cli, []byte("abcdef"), srvAddr); err != nil {
			return err
		}
		buf := make([]byte, 5)
		n, _, err := aio.SockRecvFromInto(tk, cli, buf)
		if err != nil {
			return err
		}
		p.log("client: recvfrom_into %d %s", n, pbytes(buf[:n]))
		if _, err := asyncio.WaitForFunc(tk, 200*ms, func(t *asyncio.T) ([]byte, error) {
			b, _, err := aio.SockRecvFrom(t, cli, 100)
			return b, err
		}); errors.Is(err, asyncio.ErrTimeout) {
			p.log("client: nothing more yet")
		} else {
			return fmt.Errorf("client's third read: %v", err)
		}
		if _, err := aio.SockSendTo(tk, cli, []byte("stop"), srvAddr); err != nil {
			return err
		}
		data, _, err = aio.SockRecvFrom(tk, cli, 100)
		if err != nil {
			return err
		}
		p.log("client: then %s", pbytes(data))
		handled, err := server.Await(tk)
		if err != nil {
			return err
		}
		p.log("server handled %d", handled)
		syscall.Close(cli)
		syscall.Close(srv)

		gone, gonePort, err := boundUDP()
		if err != nil {
			return err
		}
		syscall.Close(gone)
		done := asyncio.NewFuture[struct{}](tk)
		tr, _, err := aio.CreateDatagramEndpoint(tk, func() aio.DatagramProtocol { return &refusedProto{p, done} },
			nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: gonePort})
		if err != nil {
			return err
		}
		if err := tr.SendTo([]byte("anyone?"), nil); err != nil {
			return err
		}
		if _, err := asyncio.WaitFor(tk, 1000*ms, done); err != nil {
			return err
		}
		p.log("after the refusal, closing: %s", pyBool(tr.IsClosing()))
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		if err := tr.SendTo([]byte("still?"), nil); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		tr.Close()
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("done")
		return nil
	})
}
