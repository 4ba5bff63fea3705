//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A client connected to a literal address takes its peername from that
// address instead of asking getpeername (W9): it must be what
// getpeername decodes, for each form of literal; a name still asks.
func TestPeernameOfLiteralIsGetpeernames(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"127.0.0.1", "::ffff:127.0.0.1", "localhost"} {
		var got, want net.Addr
		runNet(t, func(at *asyncio.T) error {
			_, w, err := OpenConnection(at, host, port)
			if err != nil {
				return err
			}
			got, _ = w.ExtraInfo("peername").(net.Addr)
			want = peerAddr(w.ExtraInfo("socket").(int), "tcp")
			w.Close()
			return w.WaitClosed(at)
		})
		if !reflect.DeepEqual(got, want) || got.String() != fmt.Sprintf("127.0.0.1:%d", port) {
			t.Errorf("%s: peername %#v, getpeername %#v", host, got, want)
		}
	}
	ln.Close()
	<-done
}

// An unnamed Unix socket's address (either end of a socketpair, a client
// that did not bind, and so the server's peer) is the empty name, the
// empty string asyncio gives for get_extra_info("peername") and
// "sockname", and for sock_accept's address; Go's convention, which
// x/sys/unix follows, would make it "@". An abstract socket keeps Go's
// "@name".
func TestPeernameOfUnnamedUnixSocket(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	path := dir + "/s.sock"
	var log []string
	str := func(a net.Addr) string {
		if a == nil {
			return "nil"
		}
		return fmt.Sprintf("%T %q", a, a.String())
	}
	runVirtual(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[1])
		tr, _, err := CreateUnixConnection(at, func() Protocol { return &BaseProtocol{} }, "", WithSocket(fds[0]))
		if err != nil {
			return err
		}
		log = append(log, "socketpair: peername "+str(PeerName(tr))+", sockname "+str(SockName(tr)))
		tr.Close()

		names := []string{path}
		if runtime.GOOS == "linux" {
			names = append(names, fmt.Sprintf("@aio-peername-test-%d", os.Getpid()))
		}
		for i, name := range names {
			peer := asyncio.NewFuture[string](at)
			srv, err := StartUnixServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				peer.SetResult("peername " + str(PeerName(w)) + ", sockname " + str(SockName(w)))
				w.Close()
				return nil
			}, name)
			if err != nil {
				return err
			}
			_, w, err := OpenUnixConnection(at, name)
			if err != nil {
				return err
			}
			server, err := peer.Await(at)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("server %d: %s", i, server),
				fmt.Sprintf("client %d: peername %s, sockname %s", i, str(PeerName(w)), str(SockName(w))))
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}

		ln, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(ln)
		if err := unix.Bind(ln, &unix.SockaddrUnix{Name: dir + "/l.sock"}); err != nil {
			return err
		}
		unix.Listen(ln, 1)
		cl, err := NewSocket("unix")
		if err != nil {
			return err
		}
		defer unix.Close(cl)
		if err := SockConnect(at, cl, &net.UnixAddr{Name: dir + "/l.sock", Net: "unix"}); err != nil {
			return err
		}
		nfd, addr, err := SockAccept(at, ln)
		if err != nil {
			return err
		}
		unix.Close(nfd)
		log = append(log, "SockAccept: "+str(addr))
		return settle(at)
	})
	want := []string{
		`socketpair: peername *net.UnixAddr "", sockname *net.UnixAddr ""`,
		fmt.Sprintf(`server 0: peername *net.UnixAddr "", sockname *net.UnixAddr %q`, path),
		fmt.Sprintf(`client 0: peername *net.UnixAddr %q, sockname *net.UnixAddr ""`, path),
	}
	if runtime.GOOS == "linux" {
		abstract := fmt.Sprintf("@aio-peername-test-%d", os.Getpid())
		want = append(want,
			fmt.Sprintf(`server 1: peername *net.UnixAddr "", sockname *net.UnixAddr %q`, abstract),
			fmt.Sprintf(`client 1: peername *net.UnixAddr %q, sockname *net.UnixAddr ""`, abstract))
	}
	want = append(want, `SockAccept: *net.UnixAddr ""`)
	expectLog(t, want, log)
}
