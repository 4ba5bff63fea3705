//go:build unix

// Command shutdown is a line echo server that stops cleanly on SIGINT or
// SIGTERM, the way an asyncio server does with loop.add_signal_handler:
// it stops accepting, cancels its client handlers (each says goodbye to
// its client in its cleanup), waits for them and for every connection to
// close, and exits 0.
//
//	shutdown [-addr 127.0.0.1:0]
//
// It prints "listening on ADDR" once it serves, and a line for each step
// of the shutdown.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// server is the echo server and the handlers it runs.
type server struct {
	out      io.Writer
	handlers map[*asyncio.T]struct{} // the client handlers running
}

// handle echoes each line upper-cased until EOF or cancellation; when
// cancelled it says goodbye first.
func (s *server) handle(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	s.handlers[t] = struct{}{}
	defer delete(s.handlers, t)
	defer w.Close()
	for {
		line, err := r.ReadLine(t)
		if asyncio.IsCancelled(err) {
			w.Write([]byte("server shutting down, goodbye\n"))
			w.Drain(t) // the cancellation was delivered: this await works
			return err
		}
		if err != nil || len(line) == 0 {
			return err
		}
		w.Write(bytes.ToUpper(line))
		if err := w.Drain(t); err != nil {
			return err
		}
	}
}

// serve runs the server on addr until SIGINT or SIGTERM, then shuts down.
func serve(t *asyncio.T, addr string, out io.Writer) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	stop := asyncio.NewFuture[os.Signal](t)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := t.Loop().AddSignalHandler(sig, func() {
			if !stop.Done() {
				stop.SetResult(sig)
			}
		}); err != nil {
			return err
		}
	}
	s := &server{out: out, handlers: map[*asyncio.T]struct{}{}}
	srv, err := aio.StartServer(t, s.handle, host, port)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "listening on %s\n", srv.Addr())
	sig, err := stop.Await(t)
	if err != nil {
		srv.Close()
		return err
	}
	fmt.Fprintf(out, "got %v: stop accepting\n", sig)
	srv.Close()
	fmt.Fprintf(out, "cancelling %d client handlers\n", len(s.handlers))
	for h := range s.handlers {
		h.Cancel()
	}
	// Every handler closes its connection as it ends; WaitClosed returns
	// when the server is closed and no connection is left.
	if err := srv.WaitClosed(t); err != nil {
		return err
	}
	fmt.Fprintln(out, "all clients gone: bye")
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if _, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) { return struct{}{}, serve(t, *addr, os.Stdout) }); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		os.Exit(1)
	}
}
