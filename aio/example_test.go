//go:build unix

package aio_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
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

// The asyncio docs' subprocess example: run a command, read its output
// line by line, wait for it (asyncio.create_subprocess_exec).
func ExampleCreateSubprocessExec() {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		p, err := aio.CreateSubprocessExec(t, "printf", []string{`one\ntwo\n`}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return struct{}{}, err
		}
		for {
			line, err := p.Stdout.ReadLine(t)
			if err != nil || len(line) == 0 { // an empty line is EOF
				break
			}
			fmt.Printf("line: %s", line)
		}
		rc, err := p.Wait(t)
		fmt.Println("exit code:", rc)
		return struct{}{}, err
	})
	fmt.Println("error:", err)
	// Output:
	// line: one
	// line: two
	// exit code: 0
	// error: <nil>
}

// Communicate feeds stdin and collects stdout and stderr without the
// deadlock of a full pipe; a child killed by a signal has a negative
// return code, as in asyncio.
func ExampleProcess_Communicate() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		p, err := aio.CreateSubprocessShell(t, "tr a-z A-Z; echo done >&2",
			aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
		if err != nil {
			return struct{}{}, err
		}
		out, errOut, err := p.Communicate(t, []byte("quiet please\n"))
		fmt.Printf("%s%s%v\n", out, errOut, err)

		p, err = aio.CreateSubprocessExec(t, "sleep", []string{"60"})
		if err != nil {
			return struct{}{}, err
		}
		p.Kill()
		rc, err := p.Wait(t)
		fmt.Println("killed:", rc, err)
		return struct{}{}, nil
	})
	// Output:
	// QUIET PLEASE
	// done
	// <nil>
	// killed: -9 <nil>
}

// logProtocol is a SubprocessProtocol that prints what it is told.
type logProtocol struct{ done *asyncio.Future[struct{}] }

func (p *logProtocol) ConnectionMade(tr aio.SubprocessTransport) { fmt.Println("made") }
func (p *logProtocol) PipeDataReceived(fd int, data []byte)      { fmt.Printf("fd %d: %s", fd, data) }
func (p *logProtocol) PipeConnectionLost(fd int, err error) {
	if fd == 1 {
		fmt.Println("fd 1 closed:", err)
	}
}
func (p *logProtocol) ProcessExited() { fmt.Println("exited") }
func (p *logProtocol) ConnectionLost(err error) {
	fmt.Println("lost:", err)
	p.done.SetResult(struct{}{})
}

// The low-level API (loop.subprocess_exec): a protocol gets the child's
// output as it comes, the end of each pipe, the exit and, last,
// ConnectionLost.
func ExampleSubprocessExec() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		p := &logProtocol{done: asyncio.NewFuture[struct{}](t)}
		tr, _, err := aio.SubprocessExec(t, func() aio.SubprocessProtocol { return p }, "echo", []string{"hi"},
			aio.WithStdin(aio.DevNull), aio.WithStderr(aio.DevNull))
		if err != nil {
			return struct{}{}, err
		}
		if _, err := p.done.Await(t); err != nil {
			return struct{}{}, err
		}
		rc, _ := tr.ReturnCode()
		fmt.Println("return code:", rc)
		return struct{}{}, nil
	})
	// Output:
	// made
	// fd 1: hi
	// fd 1 closed: <nil>
	// exited
	// lost: <nil>
	// return code: 0
}

// A pipe read as a stream (loop.connect_read_pipe with a
// StreamReaderProtocol), here the read end of os.Pipe; os.Stdin works the
// same way.
func ExampleConnectReadPipe() {
	r, w, _ := os.Pipe()
	go func() {
		w.Write([]byte("from another goroutine\n"))
		w.Close()
	}()
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		reader := aio.NewStreamReader(t, aio.DefaultStreamLimit)
		if _, _, err := aio.ConnectReadPipe(t, func() aio.Protocol { return aio.NewStreamReaderProtocol(reader) }, r); err != nil {
			return struct{}{}, err
		}
		line, err := reader.ReadLine(t)
		fmt.Printf("%s%v\n", line, err)
		return struct{}{}, nil
	})
	// Output:
	// from another goroutine
	// <nil>
}
