//go:build unix

// Command selfconnect is the Reactor experiment on one event loop: it
// listens on 127.0.0.1, connects to itself with a non-blocking connect
// (readiness for writing, then SO_ERROR), sends a message, reads the echo
// and shuts down — using asyncio's low-level socket coroutines
// (loop.sock_accept, sock_connect, sock_sendall, sock_recv).
package main

import (
	"fmt"
	"io"
	"net"
	"os"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

// listen opens a non-blocking listening socket on 127.0.0.1 and returns
// it with its port.
func listen() (int, int, error) {
	fd, err := aio.NewSocket("tcp4")
	if err != nil {
		return -1, 0, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	if err := unix.Listen(fd, 8); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// echoOnce accepts one connection and echoes what it reads until EOF.
func echoOnce(t *asyncio.T, lfd int, out io.Writer) (struct{}, error) {
	cfd, _, err := aio.SockAccept(t, lfd)
	if err != nil {
		return struct{}{}, err
	}
	defer unix.Close(cfd)
	fmt.Fprintln(out, "server: accepted")
	for {
		b, err := aio.SockRecv(t, cfd, 4096)
		if err != nil || len(b) == 0 {
			fmt.Fprintln(out, "server: peer closed")
			return struct{}{}, err
		}
		if err := aio.SockSendall(t, cfd, b); err != nil {
			return struct{}{}, err
		}
	}
}

func run(out io.Writer, msg string) error {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		lfd, port, err := listen()
		if err != nil {
			return struct{}{}, err
		}
		defer unix.Close(lfd)
		server := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) { return echoOnce(t, lfd, out) })

		fd, err := aio.NewSocket("tcp4")
		if err != nil {
			return struct{}{}, err
		}
		defer unix.Close(fd)
		// connect() returns EINPROGRESS; the accept runs on the same loop
		// while this task waits for writability, then SO_ERROR is 0.
		if err := aio.SockConnect(t, fd, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
			return struct{}{}, err
		}
		fmt.Fprintln(out, "client: connected")
		if err := aio.SockSendall(t, fd, []byte(msg)); err != nil {
			return struct{}{}, err
		}
		got := make([]byte, 0, len(msg))
		for len(got) < len(msg) {
			b, err := aio.SockRecv(t, fd, len(msg)-len(got))
			if err != nil {
				return struct{}{}, err
			}
			if len(b) == 0 {
				return struct{}{}, io.ErrUnexpectedEOF
			}
			got = append(got, b...)
		}
		fmt.Fprintf(out, "client: echo %q\n", got)
		unix.Shutdown(fd, unix.SHUT_WR) // EOF for the server
		_, err = server.Await(t)
		return struct{}{}, err
	})
	return err
}

func main() {
	if err := run(os.Stdout, "hello, myself"); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
