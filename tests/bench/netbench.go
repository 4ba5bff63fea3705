//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// W8 and W9 of WORKLOADS.md: the networking workloads.

// echoProtocol is W8's protocol variant: data_received writes the data
// back to the transport.
type echoProtocol struct{ tr aio.Transport }

func (p *echoProtocol) ConnectionMade(tr aio.Transport) { p.tr = tr }
func (p *echoProtocol) DataReceived(data []byte)        { p.tr.Write(data) }
func (p *echoProtocol) EOFReceived() bool               { return false }
func (p *echoProtocol) ConnectionLost(error)            {}

// echoStreams is W8's streams variant: readexactly(S), write, drain,
// until EOF.
func echoStreams(size int) func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	return func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		defer w.Close()
		for {
			data, err := r.ReadExactly(t, size)
			if err != nil {
				return nil // IncompleteReadError at EOF, or a connection error
			}
			w.Write(data)
			if err := w.Drain(t); err != nil {
				return nil
			}
		}
	}
}

// echoServer runs the W8 server on 127.0.0.1 (ephemeral port): it prints
// "PORT <n>" to out, then serves until stop is closed.
func echoServer(variant string, size int, out io.Writer, stop <-chan struct{}) error {
	if variant != "streams" && variant != "protocol" {
		return fmt.Errorf("unknown -variant %q (streams|protocol)", variant)
	}
	if size <= 0 {
		return fmt.Errorf("bad -size %d", size)
	}
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		var srv *aio.Server
		var err error
		if variant == "streams" {
			srv, err = aio.StartServer(t, echoStreams(size), "127.0.0.1", 0, aio.WithBacklog(1024))
		} else {
			srv, err = aio.CreateServer(t, func() aio.Protocol { return &echoProtocol{} }, "127.0.0.1", 0, aio.WithBacklog(1024))
		}
		if err != nil {
			return struct{}{}, err
		}
		fmt.Fprintf(out, "PORT %d\n", srv.Addr().(*net.TCPAddr).Port)
		// The stop signal arrives on another goroutine: hand it to the loop.
		l := t.Loop()
		stopped := asyncio.NewFuture[struct{}](t)
		go func() {
			<-stop
			l.CallSoonThreadsafe(func() { stopped.SetResult(struct{}{}) })
		}()
		_, err = stopped.Await(t)
		srv.Close()
		srv.AbortClients()
		return struct{}{}, errors.Join(err, srv.WaitClosed(t))
	})
	return err
}

const w9Request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

// w9RequestBytes is the request as the Python client has it, a bytes
// constant: one conversion, not one per request (Write does not change it).
var w9RequestBytes = []byte(w9Request)

// fanoutClient is the W9 client: n GETs to 127.0.0.1:port, a new
// connection per request, at most limit at once (a Semaphore), all n tasks
// created up front and then awaited (gather).
func fanoutClient(port, n, limit int) (rec, error) {
	if port <= 0 || n <= 0 || limit <= 0 {
		return nil, fmt.Errorf("need -port, -n and -limit > 0")
	}
	var elapsed time.Duration
	ok, failed := 0, 0
	var firstErr error
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		sem := asyncio.NewSemaphore(limit)
		fetch := func(t *asyncio.T) (bool, error) {
			if err := sem.Acquire(t); err != nil {
				return false, err
			}
			defer sem.Release()
			r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
			if err != nil {
				return false, err
			}
			w.Write(w9RequestBytes)
			body, err := r.Read(t, -1) // until EOF: the server closes
			w.Close()
			if werr := w.WaitClosed(t); err == nil {
				err = werr
			}
			if err != nil {
				return false, err
			}
			return bytes.HasPrefix(body, []byte("HTTP/1.1 200 ")) && bytes.HasSuffix(body, []byte("Hello, world!")), nil
		}
		start := time.Now()
		tasks := make([]*asyncio.Task[bool], n)
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(t, fetch)
		}
		for _, tk := range tasks {
			good, err := tk.Await(t)
			switch {
			case good:
				ok++
			case err != nil && firstErr == nil:
				firstErr = err
			}
		}
		elapsed = time.Since(start)
		failed = n - ok
		return struct{}{}, nil
	})
	if err != nil {
		return nil, err
	}
	extra := rec{"ok": ok, "failed": failed, "limit": limit}
	if firstErr != nil {
		extra["first_error"] = firstErr.Error()
	}
	return record("W9", "", n, elapsed, extra), nil
}

// httpClient is the http.Client workload beside W9: n GETs of
// http://127.0.0.1:port/ with net/http's client, at most limit at once.
// Variant "bridge": n tasks created up front and awaited, each taking a
// Semaphore and calling client.Do inside asyncio.Go (the supported way to
// use net/http from tasks). Variant "raw": the same with plain goroutines
// and a buffered channel as the semaphore, the raw-Go anchor. Variant
// "bridge-workers": limit tasks, each doing its share of the requests one
// after the other through asyncio.Go (no task per request: what remains is
// the cost of the bridge itself). Both use one
// client whose pool keeps limit idle connections (the W9 server closes
// every connection, so each request dials anew, as in W9).
func httpClient(variant string, port, n, limit int) (rec, error) {
	if port <= 0 || n <= 0 || limit <= 0 {
		return nil, fmt.Errorf("need -port, -n and -limit > 0")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = limit
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	get := func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK && string(body) == "Hello, world!", err
	}
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	count := func(good bool, err error) {
		if good {
			ok.Add(1)
			return
		}
		failed.Add(1)
		if err != nil {
			firstErr.CompareAndSwap(nil, err.Error())
		}
	}
	var elapsed time.Duration
	switch variant {
	case "bridge":
		_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
			sem := asyncio.NewSemaphore(limit)
			start := time.Now()
			tasks := make([]*asyncio.Task[struct{}], n)
			for i := range tasks {
				tasks[i] = asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
					if err := sem.Acquire(t); err != nil {
						return err
					}
					defer sem.Release()
					count(asyncio.Go(t, get))
					return nil
				})
			}
			for _, tk := range tasks {
				if _, err := tk.Await(t); err != nil {
					return struct{}{}, err
				}
			}
			elapsed = time.Since(start)
			return struct{}{}, nil
		})
		if err != nil {
			return nil, err
		}
	case "bridge-workers":
		_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
			start := time.Now()
			next := 0 // tasks take turns on the loop: no lock needed
			workers := make([]*asyncio.Task[struct{}], limit)
			for i := range workers {
				workers[i] = asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
					for next < n {
						next++ // claimed before the await: the others see it
						count(asyncio.Go(t, get))
					}
					return nil
				})
			}
			_, err := asyncio.Gather(t, asyncio.Awaitables(workers)...).Await(t)
			elapsed = time.Since(start)
			return struct{}{}, err
		})
		if err != nil {
			return nil, err
		}
	case "raw":
		sem := make(chan struct{}, limit)
		var wg sync.WaitGroup
		start := time.Now()
		wg.Add(n)
		for range n {
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				count(get(context.Background()))
			}()
		}
		wg.Wait()
		elapsed = time.Since(start)
	default:
		return nil, fmt.Errorf("unknown -variant %q (bridge|bridge-workers|raw)", variant)
	}
	extra := rec{"ok": ok.Load(), "failed": failed.Load(), "limit": limit}
	if e := firstErr.Load(); e != nil {
		extra["first_error"] = e
	}
	return record("http-client", variant, n, elapsed, extra), nil
}
