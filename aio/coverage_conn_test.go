package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// Conn deadlines, CloseWrite and addresses behave as net.TCPConn's: a
// deadline in the past fails Read and Write at once with
// os.ErrDeadlineExceeded (a net.Error whose Timeout is true), a zero
// deadline clears it, CloseWrite half-closes so the peer reads EOF while
// the reply still arrives, and the addresses are the socket's.
func TestConnSetDeadlineCloseWriteAndAddrs(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		peerName := asyncio.NewFuture[string](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			peerName.SetResult(w.GetExtraInfo("peername").(net.Addr).String())
			data, err := r.Read(t, -1) // until EOF
			if err != nil {
				return err
			}
			w.Write([]byte("got " + string(data)))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		peer, err := peerName.Await(at)
		if err != nil {
			return err
		}
		var sa unix.Sockaddr
		sa, _ = unix.Getsockname(c.FD())
		log = append(log,
			fmt.Sprintf("local is the server's peer: %v", c.LocalAddr().String() == peer),
			fmt.Sprintf("local is the fd's name: %v", c.LocalAddr().String() == sockaddrToAddr(sa, "tcp").String()),
			fmt.Sprintf("remote is the server: %v", c.RemoteAddr().String() == srv.Addr().String()))

		timeout := func(err error) string {
			var ne net.Error
			return fmt.Sprintf("deadline=%v timeout=%v", errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout())
		}
		if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
			return err
		}
		_, err = c.Read(make([]byte, 8))
		log = append(log, "read: "+timeout(err))
		n, err := c.Write([]byte("x"))
		log = append(log, fmt.Sprintf("write n=%d: %s", n, timeout(err)))
		if err := c.SetDeadline(time.Time{}); err != nil {
			return err
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		if err := c.CloseWrite(); err != nil {
			return err
		}
		reply, err := io.ReadAll(c)
		log = append(log, fmt.Sprintf("reply %q %v", reply, err))
		if err := c.Close(); err != nil {
			return err
		}
		err = c.CloseWrite()
		log = append(log, fmt.Sprintf("CloseWrite after Close: %v", errors.Is(err, net.ErrClosed)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"local is the server's peer: true",
		"local is the fd's name: true",
		"remote is the server: true",
		"read: deadline=true timeout=true",
		"write n=0: deadline=true timeout=true",
		`reply "got ping" <nil>`,
		"CloseWrite after Close: true",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// A Write blocked on a full socket buffer is woken by its write deadline
// (a loop timer, so on the virtual clock it fires without real waiting)
// with os.ErrDeadlineExceeded and the count of bytes already written;
// SetWriteDeadline does not affect reads.
func TestConnSetWriteDeadlineWakesBlockedWrite(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		release := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			release.Await(t) // never reads until released
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		// A small send buffer makes the write block after little data.
		unix.SetsockoptInt(c.FD(), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		start := at.Loop().Time()
		if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
			return err
		}
		big := make([]byte, 32<<20)
		n, err := c.Write(big)
		elapsed := at.Loop().Time() - start
		log = append(log, fmt.Sprintf("deadline=%v partial=%v waited about an hour=%v",
			errors.Is(err, os.ErrDeadlineExceeded), n > 0 && n < len(big), elapsed > 59*time.Minute && elapsed <= time.Hour))
		// The read side has no deadline: a read with nothing to read
		// still waits, here until the server closes (with our data unread,
		// so the kernel resets the connection).
		release.SetResult(struct{}{})
		_, err = io.ReadAll(c)
		log = append(log, fmt.Sprintf("read ends by the close, not a deadline: %v", err != nil && !errors.Is(err, os.ErrDeadlineExceeded)))
		c.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"deadline=true partial=true waited about an hour=true", "read ends by the close, not a deadline: true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// A connection reset by the peer surfaces as net.Conn errors do: Read
// and then Write fail with a *net.OpError ("read"/"write") wrapping the
// errno, and the Conn stays usable for Close.
func TestConnResetByPeerErrors(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			// Linger 0: closing sends a reset instead of a FIN.
			unix.SetsockoptLinger(w.GetExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		describeOp := func(err error) string {
			var oe *net.OpError
			if !errors.As(err, &oe) {
				return fmt.Sprintf("not an OpError: %v", err)
			}
			return fmt.Sprintf("op=%s net=%s reset=%v", oe.Op, oe.Net, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
		}
		_, err = c.Read(make([]byte, 10))
		log = append(log, "read: "+describeOp(err))
		_, err = c.Write([]byte("x"))
		log = append(log, "write: "+describeOp(err))
		log = append(log, fmt.Sprintf("close: %v", c.Close()))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"read: op=read net=tcp reset=true", "write: op=write net=tcp reset=true", "close: <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}
