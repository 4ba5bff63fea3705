//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// tcpListener returns a listening TCP socket on 127.0.0.1 and its port.
func tcpListener(t *testing.T) (int, int) {
	t.Helper()
	ln, err := NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(ln, 4); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		t.Fatal(err)
	}
	return ln, sa.(*unix.SockaddrInet4).Port
}

// ConnectAcceptedSocket gives a socket accepted by SockAccept to a
// Protocol (asyncio's connect_accepted_socket): ConnectionMade before it
// returns, the peer's address, data both ways, and, with WithTLS, the
// server's end of a TLS handshake with an OpenConnection client.
func TestConnectAcceptedSocket_PlainAndTLS(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	ln, port := tcpListener(t)
	defer unix.Close(ln)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, tlsOn := range []bool{false, true} {
			var sopts, copts []Option
			if tlsOn {
				sopts, copts = []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}
			}
			client := asyncio.CreateTask(at, func(t *asyncio.T) (string, error) {
				r, w, err := OpenConnection(t, "127.0.0.1", port, copts...)
				if err != nil {
					return "", err
				}
				defer w.Close()
				w.Write([]byte("ping\n"))
				line, err := r.ReadLine(t)
				return string(line), err
			})
			fd, _, err := SockAccept(at, ln)
			if err != nil {
				return err
			}
			p := newStreamRecorder(at, "s", &log)
			p.onData = func(p *streamRecorder, d []byte) {
				p.add(fmt.Sprintf("data %q", d))
				p.tr.Write([]byte("pong\n"))
			}
			tr, proto, err := ConnectAcceptedSocket(at, func() Protocol { return p }, fd, sopts...)
			if err != nil {
				return err
			}
			_, isTLS := tr.ExtraInfo("ssl_object").(interface{ Handshake() error })
			peer, _ := tr.ExtraInfo("peername").(*net.TCPAddr)
			log = append(log, fmt.Sprintf("tls=%v made-before-return=%v proto=%v peer=%v",
				isTLS, len(log) > 0 && log[len(log)-1] == "s:made", proto == Protocol(p), peer != nil && peer.IP.IsLoopback()))
			line, err := client.Await(at)
			if err != nil {
				return err
			}
			log = append(log, "client got "+line)
			tr.Close()
			if _, err := p.lost.Await(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"s:made", "tls=false made-before-return=true proto=true peer=true", `s:data "ping\n"`, "client got pong\n", "s:lost <nil>",
		"s:made", "tls=true made-before-return=true proto=true peer=true", `s:data "ping\n"`, "client got pong\n", "s:lost <nil>",
	}, log)
}

// Bad arguments are a *ValueError that leaves fd as it was (open, not
// adopted); a factory that fails gets fd closed; a TLS handshake that
// fails closes it too and returns the error.
func TestConnectAcceptedSocket_Errors(t *testing.T) {
	clean(t)
	serverCfg, _ := testTLSConfigs(t)
	dgram := socketpair(t, unix.SOCK_DGRAM)
	defer unix.Close(dgram[0])
	defer unix.Close(dgram[1])
	proto := func() Protocol { return &streamRecorder{} }
	isOpen := func(fd int) bool { _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); return err == nil }
	runVirtual(t, func(at *asyncio.T) error {
		stream := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(stream[1])
		for _, c := range []struct {
			name string
			fd   int
			f    func() Protocol
			opts []Option
			want string
		}{
			{"nil factory", stream[0], nil, nil, "ConnectAcceptedSocket: nil protocol factory"},
			{"datagram socket", dgram[0], proto, nil, "A Stream Socket was expected"},
			{"option it does not take", stream[0], proto, []Option{WithBacklog(3)}, "does not take the option WithBacklog"},
			{"handshake timeout without TLS", stream[0], proto, []Option{WithTLSHandshakeTimeout(time.Second)}, "ssl_handshake_timeout is only meaningful with ssl"},
		} {
			_, _, err := ConnectAcceptedSocket(at, c.f, c.fd, c.opts...)
			if !errors.Is(err, asyncio.ErrValue) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want a *ValueError with %q", c.name, err, c.want)
			}
			if !isOpen(c.fd) {
				t.Errorf("%s: fd %d was closed", c.name, c.fd)
			}
		}
		_, _, err := ConnectAcceptedSocket(at, func() Protocol { panic("no protocol") }, stream[0])
		var pe *asyncio.PanicError
		if !errors.As(err, &pe) {
			t.Errorf("a panicking factory: err = %v, want a *PanicError", err)
		}
		if isOpen(stream[0]) {
			t.Error("a panicking factory left fd open")
		}

		// The peer closes instead of sending a ClientHello.
		pair := socketpair(t, unix.SOCK_STREAM)
		unix.Close(pair[1])
		_, _, err = ConnectAcceptedSocket(at, proto, pair[0], WithTLS(serverCfg))
		if err == nil {
			t.Error("a TLS handshake with a peer that closed succeeded")
		}
		return settle(at)
	})
}
