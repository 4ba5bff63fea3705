//go:build unix

package aio_test

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// byteCounter is a BufferedProtocol: the socket transport reads straight
// into its one buffer, with no copy per read.
type byteCounter struct {
	aio.BaseProtocol // DataReceived and friends that do nothing
	buf              [4096]byte
	n                int
	done             *asyncio.Future[int]
}

func (p *byteCounter) GetBuffer(sizeHint int) []byte { return p.buf[:] }
func (p *byteCounter) BufferUpdated(n int)           { p.n += n }
func (p *byteCounter) ConnectionLost(err error)      { p.done.SetResult(p.n) }

// A BufferedProtocol (asyncio.BufferedProtocol) counting what a server
// sends.
func ExampleBufferedProtocol() {
	n, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			w.Write(make([]byte, 100_000))
			w.Close()
			return w.WaitClosed(t)
		}, "127.0.0.1", 0)
		if err != nil {
			return 0, err
		}
		p := &byteCounter{done: asyncio.NewFuture[int](t)}
		if _, _, err := aio.CreateConnection(t, func() aio.Protocol { return p }, "127.0.0.1", server.Addr().(*net.TCPAddr).Port); err != nil {
			return 0, err
		}
		n, err := p.done.Await(t)
		server.Close()
		return n, errors.Join(err, server.WaitClosed(t))
	})
	fmt.Println(n, err)
	// Output: 100000 <nil>
}

// A server that accepts by itself (SockAccept) and gives each connection
// to a protocol (asyncio's loop.connect_accepted_socket).
func ExampleConnectAcceptedSocket() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return struct{}{}, err
		}
		f, err := ln.(*net.TCPListener).File() // a descriptor of our own
		ln.Close()
		if err != nil {
			return struct{}{}, err
		}
		defer f.Close()
		lfd := int(f.Fd())
		if err := syscall.SetNonblock(lfd, true); err != nil { // File gives a blocking descriptor
			return struct{}{}, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		client := asyncio.CreateTask(t, func(t *asyncio.T) ([]byte, error) {
			r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
			if err != nil {
				return nil, err
			}
			defer w.Close()
			return r.Read(t, -1)
		})
		fd, _, err := aio.SockAccept(t, lfd)
		if err != nil {
			return struct{}{}, err
		}
		tr, _, err := aio.ConnectAcceptedSocket(t, func() aio.Protocol { return &aio.BaseProtocol{} }, fd)
		if err != nil {
			return struct{}{}, err
		}
		tr.Write([]byte("hello from an accepted socket\n"))
		tr.Close()
		got, err := client.Await(t)
		fmt.Printf("%s", got)
		return struct{}{}, err
	})
	fmt.Println("error:", err)
	// Output:
	// hello from an accepted socket
	// error: <nil>
}
