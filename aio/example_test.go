//go:build unix

package aio_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// A stream server and a client on one loop (asyncio.start_server and
// asyncio.open_connection).
func ExampleOpenConnection() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			line, err := r.ReadLine(t)
			w.Write(append([]byte("echo: "), line...))
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		r, w, err := aio.OpenConnection(t, "127.0.0.1", server.Addr().(*net.TCPAddr).Port)
		if err != nil {
			return struct{}{}, err
		}
		w.Write([]byte("hello\n"))
		reply, err := r.Read(t, -1) // until EOF
		fmt.Printf("%s", reply)
		w.Close()
		server.Close()
		return struct{}{}, errors.Join(err, server.WaitClosed(t))
	})
	fmt.Println("error:", err)
	// Output:
	// echo: hello
	// error: <nil>
}

// net/http.ReadResponse over a loop socket: the Conn's Read and Write
// suspend only the calling task.
func ExampleDialConn() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			if _, err := r.ReadUntil(t, []byte("\r\n\r\n")); err != nil {
				return err
			}
			w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		conn, err := aio.DialConn(t, "tcp", server.Addr().String())
		if err != nil {
			return struct{}{}, err
		}
		defer conn.Close()
		req, _ := http.NewRequest("GET", "http://example.test/", nil)
		if err := req.Write(conn); err != nil {
			return struct{}{}, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Println(resp.Status, resp.ContentLength)
		server.Close()
		return struct{}{}, server.WaitClosed(t)
	})
	fmt.Println("error:", err)
	// Output:
	// 200 OK 2
	// error: <nil>
}

// A UDP echo (asyncio's create_datagram_endpoint): one endpoint bound to
// a local address answers datagrams, the other is connected to it.
func ExampleCreateDatagramEndpoint() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, _, err := aio.CreateDatagramEndpoint(t, func() aio.DatagramProtocol { return &udpEcho{} },
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return struct{}{}, err
		}
		reply := &udpReply{got: asyncio.NewFuture[string](t)}
		client, _, err := aio.CreateDatagramEndpoint(t, func() aio.DatagramProtocol { return reply },
			nil, server.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return struct{}{}, err
		}
		client.SendTo([]byte("ping"), nil)
		got, err := asyncio.WaitFor(t, 5*time.Second, reply.got)
		fmt.Println(got)
		client.Close()
		server.Close()
		// One more iteration: the transports call ConnectionLost and close
		// their sockets.
		return struct{}{}, errors.Join(err, asyncio.Sleep(t, 0))
	})
	fmt.Println("error:", err)
	// Output:
	// echo ping
	// error: <nil>
}

// udpEcho sends every datagram back to its sender.
type udpEcho struct{ tr aio.DatagramTransport }

func (p *udpEcho) ConnectionMade(tr aio.DatagramTransport) { p.tr = tr }
func (p *udpEcho) DatagramReceived(data []byte, addr net.Addr) {
	p.tr.SendTo(append([]byte("echo "), data...), addr)
}
func (p *udpEcho) ErrorReceived(error)  {}
func (p *udpEcho) ConnectionLost(error) {}

// udpReply resolves got with the first datagram.
type udpReply struct{ got *asyncio.Future[string] }

func (p *udpReply) ConnectionMade(aio.DatagramTransport) {}
func (p *udpReply) DatagramReceived(data []byte, _ net.Addr) {
	if !p.got.Done() {
		p.got.SetResult(string(data))
	}
}
func (p *udpReply) ErrorReceived(error)  {}
func (p *udpReply) ConnectionLost(error) {}

// staticResolver resolves every name to 127.0.0.1: a stand-in for a
// resolver of one's own (a *net.Resolver with its own Dial, a cache, a
// service registry).
type staticResolver struct{}

func (staticResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

// WithResolver decides how host names are looked up, per call.
func ExampleWithResolver() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		server, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
			w.Write([]byte("hello from " + w.ExtraInfo("sockname").(net.Addr).(*net.TCPAddr).IP.String() + "\n"))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		port := server.Addr().(*net.TCPAddr).Port
		r, w, err := aio.OpenConnection(t, "service.internal", port, aio.WithResolver(staticResolver{}))
		if err != nil {
			return struct{}{}, err
		}
		line, err := r.ReadLine(t)
		fmt.Print(string(line))
		w.Close()
		server.Close()
		return struct{}{}, errors.Join(err, server.WaitClosed(t))
	})
	fmt.Println("error:", err)
	// Output:
	// hello from 127.0.0.1
	// error: <nil>
}
