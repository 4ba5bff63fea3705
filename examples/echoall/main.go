//go:build unix

// Command echoall runs a line-echo server on every core: a LoopGroup of
// one loop per CPU, connections spread over the loops either by the kernel
// (-mode reuseport: a listener per loop, SO_REUSEPORT) or by one acceptor
// loop that hands each connection to a loop in turn (-mode roundrobin,
// the main/sub reactor; also works for Unix sockets). Each connection and
// its handler stay on one loop for life; the answer says which.
//
//	go run ./examples/echoall -mode reuseport -clients 8
//	go run ./examples/echoall -mode roundrobin -clients 8
//
// With -serve it serves on -addr until Ctrl-C instead of running its own
// clients (try it with nc 127.0.0.1 <port>).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// handler echoes each line upper-cased, prefixed with the serving loop.
func handler(g *asyncio.LoopGroup) func(*asyncio.T, *aio.StreamReader, *aio.StreamWriter) error {
	return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		defer w.Close()
		for {
			line, err := r.ReadLine(t)
			if err != nil || len(line) == 0 {
				return err
			}
			w.Write([]byte(fmt.Sprintf("%s: %s", t.Loop().Name(), bytes.ToUpper(line))))
			if err := w.Drain(t); err != nil {
				return err
			}
		}
	}
}

var modes = map[string]aio.GroupMode{"reuseport": aio.GroupReusePort, "roundrobin": aio.GroupRoundRobin, "leastconns": aio.GroupLeastConns}

// run serves on loops loops in mode, and has clients clients (spread over
// the loops too, with asyncio.Spread) send one line each; it prints how
// many connections each loop served. With serve it serves on port until
// Ctrl-C instead.
func run(out io.Writer, loops int, mode string, clients int, serve bool, port int) error {
	gm, ok := modes[mode]
	if !ok {
		return fmt.Errorf("unknown -mode %q (reuseport|roundrobin|leastconns)", mode)
	}
	g := asyncio.NewLoopGroup(asyncio.WithLoops(loops))
	_, err := asyncio.RunGroup(g, func(t *asyncio.T) (struct{}, error) {
		srv, err := aio.StartGroupServer(t, g, gm, handler(g), "127.0.0.1", port)
		if err != nil {
			return struct{}{}, err
		}
		p := srv.Addr().(*net.TCPAddr).Port
		if serve {
			fmt.Fprintf(out, "serving on 127.0.0.1:%d over %d loops (%s); Ctrl-C stops\n", p, loops, mode)
			_, err := asyncio.NewFuture[struct{}](t).Await(t) // until Ctrl-C cancels main
			return struct{}{}, errors.Join(err, srv.Close(t), srv.CloseClients(t))
		}
		answers, err := asyncio.Spread(t, g, clients, func(ct *asyncio.T, i int) (string, error) {
			r, w, err := aio.OpenConnection(ct, "127.0.0.1", p)
			if err != nil {
				return "", err
			}
			defer w.Close()
			w.Write([]byte(fmt.Sprintf("hello %d\n", i)))
			line, err := r.ReadLine(ct)
			return string(line), err
		})
		if err != nil {
			return struct{}{}, err
		}
		perLoop := map[string]int{}
		for _, a := range answers {
			perLoop[a[:bytes.IndexByte([]byte(a), ':')]]++
		}
		names := make([]string, 0, len(perLoop))
		for n := range perLoop {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(out, "%s served %d\n", n, perLoop[n])
		}
		if err := srv.Close(t); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, srv.WaitClosed(t)
	})
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	return err
}

func main() {
	loops := flag.Int("loops", 0, "loops (0: GOMAXPROCS)")
	mode := flag.String("mode", "reuseport", "reuseport|roundrobin|leastconns")
	clients := flag.Int("clients", 8, "clients to run (without -serve)")
	serve := flag.Bool("serve", false, "serve until Ctrl-C")
	port := flag.Int("port", 0, "port with -serve (0: any)")
	flag.Parse()
	n := *loops
	if n <= 0 {
		n = asyncio.NewLoopGroup().Len()
	}
	if err := run(os.Stdout, n, *mode, *clients, *serve, *port); err != nil && !errors.Is(err, asyncio.ErrInterrupted) {
		fmt.Fprintln(os.Stderr, "echoall:", err)
		os.Exit(1)
	}
}
