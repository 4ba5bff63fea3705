//go:build unix

// Command crawlall is a fan-out HTTP client on every core: n GETs of
// http://127.0.0.1:<port>/ spread over a LoopGroup's loops with
// asyncio.Spread (request i on loop i % loops), each loop keeping at most
// -limit requests in flight with its own Semaphore, each request a new
// connection opened on the loop that makes it (aio.OpenConnection).
//
//	go run ./examples/crawlall -port 8080 -n 1000 -limit 50
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

const request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

// get fetches / from 127.0.0.1:port on t's loop and returns the status line.
func get(t *asyncio.T, port int) (string, error) {
	r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if err := w.Write([]byte(request)); err != nil {
		return "", err
	}
	body, err := r.Read(t, -1) // until EOF: Connection: close
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(body, []byte("\r\n"))
	return string(line), nil
}

// run makes n requests over loops loops, limit at once per loop, and
// prints how many succeeded per loop.
func run(out io.Writer, loops, port, n, limit int) error {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(loops))
	_, err := asyncio.RunGroup(g, func(t *asyncio.T) (struct{}, error) {
		sems := make([]*asyncio.Semaphore, loops)
		for i := range sems {
			sems[i] = asyncio.NewSemaphore(limit)
		}
		ok := make([]int, loops) // each loop writes its own slot, on its own loop
		_, err := asyncio.Spread(t, g, n, func(ct *asyncio.T, i int) (struct{}, error) {
			li := g.Index(ct.Loop())
			sem := sems[li]
			if err := sem.Acquire(ct); err != nil {
				return struct{}{}, err
			}
			defer sem.Release()
			status, err := get(ct, port)
			if err != nil {
				return struct{}{}, err
			}
			if status != "HTTP/1.1 200 OK" {
				return struct{}{}, fmt.Errorf("request %d: %q", i, status)
			}
			ok[li]++
			return struct{}{}, nil
		})
		for i, c := range ok {
			fmt.Fprintf(out, "loop %d: %d ok\n", i, c)
		}
		return struct{}{}, err
	})
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	return err
}

func main() {
	loops := flag.Int("loops", 0, "loops (0: GOMAXPROCS)")
	port := flag.Int("port", 8080, "HTTP server port on 127.0.0.1")
	n := flag.Int("n", 1000, "requests")
	limit := flag.Int("limit", 50, "requests in flight per loop")
	flag.Parse()
	k := *loops
	if k <= 0 {
		k = asyncio.NewLoopGroup().Len()
	}
	if err := run(os.Stdout, k, *port, *n, *limit); err != nil {
		fmt.Fprintln(os.Stderr, "crawlall:", err)
		os.Exit(1)
	}
}
