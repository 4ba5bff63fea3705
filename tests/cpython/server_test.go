//go:build unix

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_server.py. CPython's clients
// are blocking sockets on a thread; here they are net.Conn on a goroutine
// that the test waits for. Private state (srv._sockets, srv._waiters) is
// read through Sockets() and through a WaitClosed that returns at once.

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// helloMSG is HELLO_MSG.
var helloMSG = strings.Repeat("1", 1024*5) + "\n"

// blockingClient is the client thread: connect (once started is closed),
// send HELLO_MSG, receive one byte, close. The error goes to done.
func blockingClient(network, addr string, started <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		<-started
		conn, err := net.Dial(network, addr)
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(helloMSG)); err != nil {
			done <- err
			return
		}
		_, err = io.ReadFull(conn, make([]byte, 1))
		done <- err
	}()
	return done
}

// serveOnceThenCancel is the test's serve(): read a line, cancel the
// main task, answer b'1' and close.
func serveOnceThenCancel(t *testing.T, srv **aio.Server, mainTask **asyncio.Task[struct{}]) func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
	return func(tk *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		_, err := r.ReadLine(tk)
		noErr(t, err)
		check(t, (*srv).IsServing(), "serving while a connection is handled")
		(*mainTask).Cancel()
		w.Write([]byte("1"))
		w.Close()
		return w.WaitClosed(tk)
	}
}

// closedServer checks the state of a server that serve_forever closed.
func closedServer(t *testing.T, tk *asyncio.T, srv *aio.Server) {
	eq(t, len(srv.Sockets()), 0, "srv.sockets")
	// srv._waiters is None: wait_closed returns at once.
	waited := asyncio.CreateTaskErr(tk, srv.WaitClosed)
	asyncio.Sleep(tk, 0)
	check(t, waited.Done(), "wait_closed returned at once")
	check(t, !srv.IsServing(), "not serving")
	err := srv.ServeForever(tk)
	if check(t, errors.Is(err, asyncio.ErrRuntime), "RuntimeError: ", err); err != nil {
		check(t, strings.Contains(err.Error(), "is closed"), err)
	}
}

func TestServer_test_start_server_1(t *testing.T) {
	started := make(chan struct{})
	var done <-chan error
	clientStarted := false
	run(t, func(tk *asyncio.T) error {
		var srv *aio.Server
		var mainTask *asyncio.Task[struct{}]
		srv, err := aio.StartServer(tk, serveOnceThenCancel(t, &srv, &mainTask), "127.0.0.1", 0, aio.WithDeferredServing())
		if err != nil {
			return err
		}
		check(t, !srv.IsServing(), "not serving yet")
		mainTask = asyncio.CreateTaskErr(tk, func(tk *asyncio.T) error {
			// async with srv: await srv.serve_forever()
			defer func() { srv.Close(); srv.WaitClosed(tk) }()
			// CPython's client polls srv.is_serving() before it
			// connects: here the client starts once ServeForever,
			// which listens before it suspends, has suspended.
			tk.Loop().CallSoon(func() {
				check(t, srv.IsServing(), "serving once serve_forever waits")
				close(started)
				clientStarted = true
			})
			return srv.ServeForever(tk)
		})
		done = blockingClient("tcp", srv.Addr().String(), started)
		_, err = mainTask.Await(tk)
		cancelled(t, err)
		closedServer(t, tk, srv)
		return nil
	})
	if clientStarted {
		noErr(t, <-done, "client")
	}
}

func TestServer_test_start_unix_server_1(t *testing.T) {
	started := make(chan struct{})
	addr := filepath.Join(t.TempDir(), "sock")
	done := blockingClient("unix", addr, started)
	run(t, func(tk *asyncio.T) error {
		var srv *aio.Server
		var mainTask *asyncio.Task[struct{}]
		srv, err := aio.StartUnixServer(tk, serveOnceThenCancel(t, &srv, &mainTask), addr, aio.WithDeferredServing())
		if err != nil {
			close(started)
			return err
		}
		mainTask = asyncio.CreateTaskErr(tk, func(tk *asyncio.T) error {
			defer func() { srv.Close(); srv.WaitClosed(tk) }()
			check(t, !srv.IsServing(), "not serving yet")
			srv.StartServing()
			check(t, srv.IsServing(), "serving")
			close(started)
			return srv.ServeForever(tk)
		})
		_, err = mainTask.Await(tk)
		cancelled(t, err)
		closedServer(t, tk, srv)
		return nil
	})
	noErr(t, <-done, "client")
}

// readThenClose is TestServer2's serve(): read to EOF, then close.
func readThenClose(tk *asyncio.T, rd *aio.StreamReader, wr *aio.StreamWriter) error {
	defer func() {
		wr.Close()
		wr.WaitClosed(tk)
	}()
	_, err := rd.Read(tk, -1)
	return err
}

// openTo is asyncio.open_connection(addr[0], addr[1]) to srv.
func openTo(tk *asyncio.T, srv *aio.Server, opts ...aio.Option) (*aio.StreamReader, *aio.StreamWriter, error) {
	addr := srv.Addr().(*net.TCPAddr)
	return aio.OpenConnection(tk, addr.IP.String(), addr.Port, opts...)
}

func TestServer_test_wait_closed_basic(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartServer(tk, readThenClose, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()

		// active count = 0, not closed: should block
		task1 := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task1.Done(), "task1 blocks")

		// active count != 0, not closed: should block
		_, wr, err := openTo(tk, srv)
		if err != nil {
			return err
		}
		task2 := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task1.Done(), "task1 blocks")
		check(t, !task2.Done(), "task2 blocks")

		srv.Close()
		asyncio.Sleep(tk, 0)
		// active count != 0, closed: should block
		task3 := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task1.Done(), "task1 blocks")
		check(t, !task2.Done(), "task2 blocks")
		check(t, !task3.Done(), "task3 blocks")

		wr.Close()
		noErr(t, wr.WaitClosed(tk))
		// active count == 0, closed: should unblock
		for _, task := range []*asyncio.Task[struct{}]{task1, task2, task3} {
			_, err := task.Await(tk)
			noErr(t, err)
		}
		// Return immediately
		waited := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, waited.Done(), "wait_closed returns at once")
		return nil
	})
}

func TestServer_test_wait_closed_race(t *testing.T) {
	// A regression in 3.12.0, fixed in 3.12.1.
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartServer(tk, readThenClose, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		task := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task.Done(), "wait_closed blocks")
		_, wr, err := openTo(tk, srv)
		if err != nil {
			return err
		}
		tk.Loop().CallSoon(srv.Close)
		tk.Loop().CallSoon(wr.Close)
		noErr(t, srv.WaitClosed(tk))
		_, err = task.Await(tk)
		return err
	})
}

func TestServer_test_close_clients(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartServer(tk, readThenClose, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		_, wr, err := openTo(tk, srv)
		if err != nil {
			return err
		}
		defer wr.Close()

		task := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task.Done(), "wait_closed blocks")

		srv.Close()
		srv.CloseClients()
		asyncio.Sleep(tk, 0)
		asyncio.Sleep(tk, 0)
		check(t, task.Done(), "wait_closed returned")
		return nil
	})
}

func TestServer_test_abort_clients(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		type pair struct {
			rd *aio.StreamReader
			wr *aio.StreamWriter
		}
		fut := asyncio.NewFuture[pair](tk)
		serve := func(tk *asyncio.T, rd *aio.StreamReader, wr *aio.StreamWriter) error {
			fut.SetResult(pair{rd, wr})
			return wr.WaitClosed(tk)
		}
		srv, err := aio.StartServer(tk, serve, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		_, cWr, err := openTo(tk, srv, aio.WithStreamLimit(4096))
		if err != nil {
			return err
		}
		defer cWr.Close()
		s, err := fut.Await(tk)
		if err != nil {
			return err
		}
		sWr := s.wr

		// Limit the socket buffers so we can more reliably overfill them.
		sSock := sWr.ExtraInfo("socket").(int)
		noErr(t, syscall.SetsockoptInt(sSock, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 65536))
		cSock := cWr.ExtraInfo("socket").(int)
		noErr(t, syscall.SetsockoptInt(cSock, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 65536))

		// Get the reader in to a paused state by sending more than twice
		// the configured limit.
		chunk := []byte(strings.Repeat("a", 4096))
		sWr.Write(chunk)
		sWr.Write(chunk)
		sWr.Write(chunk)
		for cWr.Transport().IsReading() {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}

		// Get the writer in a waiting state by sending data until the
		// kernel stops accepting more data in the send buffer (capped at
		// 10 rounds, as CPython does).
		cBufsize, err := syscall.GetsockoptInt(cSock, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		noErr(t, err)
		sBufsize, err := syscall.GetsockoptInt(sSock, syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		noErr(t, err)
		for range 10 {
			sWr.Write([]byte(strings.Repeat("a", cBufsize)))
			sWr.Write([]byte(strings.Repeat("a", sBufsize)))
			if sWr.Transport().WriteBufferSize() > 0 {
				break
			}
		}
		check(t, sWr.Transport().WriteBufferSize() != 0, "data waits in the write buffer")

		task := asyncio.CreateTaskErr(tk, srv.WaitClosed)
		asyncio.Sleep(tk, 0)
		check(t, !task.Done(), "wait_closed blocks")

		srv.Close()
		srv.AbortClients()
		asyncio.Sleep(tk, 0)
		asyncio.Sleep(tk, 0)
		check(t, task.Done(), "wait_closed returned")
		return nil
	})
}

// serveNothing is UnixServerCleanupTests' serve(*args).
func serveNothing(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error { return nil }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestServer_test_unix_server_addr_cleanup(t *testing.T) {
	// Default scenario
	addr := filepath.Join(t.TempDir(), "sock")
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartUnixServer(tk, serveNothing, addr)
		if err != nil {
			return err
		}
		srv.Close()
		check(t, !exists(addr), "the socket file is removed")
		return nil
	})
}

// boundUnixSocket is `socket.socket(AF_UNIX, SOCK_STREAM)` bound to addr;
// a server given it with WithSocket closes it, so the test does not.
func boundUnixSocket(t *testing.T, addr string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: addr}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

func TestServer_test_unix_server_sock_cleanup(t *testing.T) {
	// Using already bound socket
	addr := filepath.Join(t.TempDir(), "sock")
	run(t, func(tk *asyncio.T) error {
		sock, err := boundUnixSocket(t, addr)
		if err != nil {
			return err
		}
		srv, err := aio.StartUnixServer(tk, serveNothing, "", aio.WithSocket(sock))
		if err != nil {
			syscall.Close(sock)
			return err
		}
		srv.Close()
		check(t, !exists(addr), "the socket file is removed")
		return nil
	})
}

func TestServer_test_unix_server_cleanup_gone(t *testing.T) {
	// Someone else has already cleaned up the socket
	addr := filepath.Join(t.TempDir(), "sock")
	run(t, func(tk *asyncio.T) error {
		sock, err := boundUnixSocket(t, addr)
		if err != nil {
			return err
		}
		srv, err := aio.StartUnixServer(tk, serveNothing, "", aio.WithSocket(sock))
		if err != nil {
			syscall.Close(sock)
			return err
		}
		noErr(t, os.Remove(addr))
		srv.Close()
		check(t, !exists(addr), "nothing comes back")
		check(t, len(srv.Sockets()) == 0, "closed")
		return nil
	})
}

func TestServer_test_unix_server_cleanup_replaced(t *testing.T) {
	// Someone else has replaced the socket with their own.
	addr := filepath.Join(t.TempDir(), "sock")
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartUnixServer(tk, serveNothing, addr)
		if err != nil {
			return err
		}
		noErr(t, os.Remove(addr))
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		noErr(t, syscall.Bind(fd, &syscall.SockaddrUnix{Name: addr}))
		srv.Close()
		check(t, exists(addr), "the other socket file stays")
		return nil
	})
}

func TestServer_test_unix_server_cleanup_prevented(t *testing.T) {
	// Automatic cleanup explicitly disabled.
	addr := filepath.Join(t.TempDir(), "sock")
	run(t, func(tk *asyncio.T) error {
		srv, err := aio.StartUnixServer(tk, serveNothing, addr, aio.WithKeepSocketFile())
		if err != nil {
			return err
		}
		srv.Close()
		check(t, exists(addr), "the socket file stays")
		return nil
	})
}
