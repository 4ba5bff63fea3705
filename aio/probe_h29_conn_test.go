//go:build unix

package aio

// Hostile probe h29 of aio.Conn: a cancelled Read loses nothing, also
// under the libraries Conn exists for (crypto/tls keeps what it read and
// the connection for the next Read).

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// tlsPair makes a TLS client and server over a socket pair of Conns on
// at's loop, with both handshakes done.
func h29TLSPair(t *testing.T, at *asyncio.T) (client, server *tls.Conn, connClient *Conn) {
	t.Helper()
	fds := socketpair(t, unix.SOCK_STREAM)
	scfg, ccfg := testTLSConfigs(t)
	ccfg.ServerName = "localhost"
	connClient = NewConn(at, fds[0], "unix")
	client = tls.Client(connClient, ccfg)
	server = tls.Server(NewConn(at, fds[1], "unix"), scfg)
	hs := asyncio.CreateTask(at, func(st *asyncio.T) (struct{}, error) { return struct{}{}, server.Handshake() })
	if err := client.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if _, err := hs.Await(at); err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	return client, server, connClient
}

// A task's Read of a tls.Conn over a Conn, cancelled by a Timeout while
// nothing has arrived, consumes nothing: the next Read gets what the peer
// sends then, as a cancelled read of an asyncio SSL stream leaves the
// stream usable. Conn returned the cancellation as a permanent error, and
// crypto/tls keeps a permanent read error for every later Read: one
// timeout killed the connection's read side.
func TestH29_TLSReadCancelledBeforeDataKeepsTheConnection(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		client, server, _ := h29TLSPair(t, at)
		defer client.Close()
		defer server.Close()
		buf := make([]byte, 64)
		err := asyncio.Timeout(at, time.Millisecond, func(*asyncio.TimeoutScope) error {
			_, err := client.Read(buf)
			return err
		})
		var te *asyncio.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("Read under Timeout: %v, want a *TimeoutError", err)
		}
		if _, err := server.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		n, err := client.Read(buf)
		if err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read after the timed-out one: %q, %v; want \"hello\"", buf[:n], err)
		}
		return nil
	})
}

// The same with the cancellation landing after Conn served the Read: the
// record is read from the socket in the iteration in which the Timeout
// expires (the socket's callback runs first), so the cancelled Read of
// the Conn returns the bytes with the cancellation, and crypto/tls keeps
// them in its buffer. The next Read decrypts them.
func TestH29_TLSReadCancelledAfterDataKeepsTheRecord(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		client, server, cc := h29TLSPair(t, at)
		defer client.Close()
		defer server.Close()
		buf := make([]byte, 64)
		reader := asyncio.CreateTask(at, func(rt *asyncio.T) (int, error) {
			var n int
			err := asyncio.Timeout(rt, 0, func(*asyncio.TimeoutScope) error {
				var err error
				n, err = client.Read(buf)
				return err
			})
			return n, err
		})
		if err := asyncio.Sleep(at, 0); err != nil { // the reader waits in Read
			return err
		}
		if _, err := server.Write([]byte("hello")); err != nil {
			return err
		}
		n, err := reader.Await(at)
		var te *asyncio.TimeoutError
		if n != 0 || !errors.As(err, &te) {
			t.Fatalf("Read under an expiring Timeout: %d, %v; want 0 and a *TimeoutError", n, err)
		}
		if readable(cc.FD()) {
			t.Fatal("the record is still in the socket: the Read was cancelled before Conn served it (the probe missed its window)")
		}
		n, err = client.Read(buf)
		if err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read after the cancelled one: %q, %v; want \"hello\"", buf[:n], err)
		}
		return nil
	})
}

// A Write cancelled while the socket's buffer is full reports exactly the
// bytes the socket took: the peer reads that many of them, no more, and
// a Read cancelled while waiting consumed nothing (the peer's next bytes
// are read whole afterwards).
func TestH29_ConnWriteCancelledReportsWhatWasSent(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[1])
		c := NewConn(at, fds[0], "unix")
		defer c.Close()
		payload := make([]byte, 8<<20) // more than the socket buffers hold
		for i := range payload {
			payload[i] = byte(i % 251)
		}
		var n int
		w := asyncio.CreateTask(at, func(x *asyncio.T) (struct{}, error) {
			var err error
			n, err = c.Write(payload)
			return struct{}{}, err
		})
		if err := asyncio.Sleep(at, 0); err != nil { // the Write fills the buffer and waits
			return err
		}
		w.Cancel()
		if _, err := w.Await(at); !asyncio.IsCancelled(err) {
			t.Fatalf("cancelled Write: %v, want the cancellation", err)
		}
		if n <= 0 || n >= len(payload) {
			t.Fatalf("cancelled Write reported %d bytes of %d: the probe wants a partial write", n, len(payload))
		}
		got := 0
		buf := make([]byte, 1<<16)
		for {
			//asynciovet:ignore blockingcall the peer's socket is non-blocking: EAGAIN ends the loop
			k, err := unix.Read(fds[1], buf)
			if err != nil {
				break // EAGAIN: all read
			}
			for i := range k {
				if buf[i] != payload[got+i] {
					t.Fatalf("byte %d: %d, want %d", got+i, buf[i], payload[got+i])
				}
			}
			got += k
		}
		if got != n {
			t.Fatalf("the peer read %d bytes, the cancelled Write reported %d", got, n)
		}

		// A Read cancelled while waiting consumes nothing.
		r := asyncio.CreateTask(at, func(x *asyncio.T) (int, error) { return c.Read(make([]byte, 16)) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.Cancel()
		if k, err := r.Await(at); k != 0 || !asyncio.IsCancelled(err) {
			t.Fatalf("cancelled Read: %d, %v", k, err)
		}
		if _, err := unix.Write(fds[1], []byte("next")); err != nil {
			return err
		}
		k, err := c.Read(buf)
		if err != nil || string(buf[:k]) != "next" {
			t.Fatalf("Read after the cancelled one: %q, %v", buf[:k], err)
		}
		return nil
	})
}
