//go:build unix

package main

// The -mode adapter program: a real-socket fan-out HTTP/1.1 client on one
// event loop, everything on the loop. A small HTTP server runs on the same
// loop (asyncio streams); the client talks to it over aio.DialConn with
// net/http's own Request.Write and http.ReadResponse (no hand-written HTTP
// parsing), one connection per request, so every byte goes through the
// loop's net.Conn adapter:
//
//  1. fan-out: n GETs at once, at most -limit in flight (a Semaphore),
//     each under a per-request timeout (WaitForFunc): slow requests time
//     out alone, the others complete;
//  2. first success: the same GET sent to three replicas (one refuses
//     connections, one is slow, one is fast); the first answer wins and
//     the other attempt is cancelled.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// loopServer is an HTTP server on the loop that knows its requests in
// progress, so that shutdown can end them.
type loopServer struct {
	*aio.Server
	inProgress map[*asyncio.T]bool
}

// serveOnLoop starts an HTTP server on 127.0.0.1 whose every response takes
// delay(path) to come; opts go to aio.StartServer (the simulated network's
// test passes aio.WithNetwork).
func serveOnLoop(t *asyncio.T, delay func(path string) time.Duration, opts ...aio.Option) (*loopServer, error) {
	s := &loopServer{inProgress: map[*asyncio.T]bool{}}
	srv, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
		s.inProgress[t] = true
		defer delete(s.inProgress, t)
		defer w.Close()
		head, err := r.ReadUntil(t, []byte("\r\n\r\n"))
		if err != nil {
			return nil // the client went away
		}
		path, ok := requestPath(head)
		if !ok {
			w.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
			return w.Drain(t)
		}
		t.SetName("serve " + path) // for dumps and traces
		if err := asyncio.Sleep(t, delay(path)); err != nil {
			return err
		}
		body := "response to " + path
		w.Write([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body))
		return w.Drain(t)
	}, "127.0.0.1", 0, opts...)
	s.Server = srv
	return s, err
}

// requestPath returns the path of an HTTP request head ("GET /x
// HTTP/1.1\r\n..."), or false if its request line is not three fields
// (FuzzServeRequestHead: a head with one field used to make the handler
// index out of range).
func requestPath(head []byte) (string, bool) {
	line, _, _ := strings.Cut(string(head), "\r\n")
	f := strings.Fields(line)
	if len(f) != 3 {
		return "", false
	}
	return f[1], true
}

// shutdown stops accepting connections, cancels the requests in progress
// (a client that timed out leaves its request sleeping on the server),
// closes the connections whose handler has not started yet (accepted, but
// their task not yet run: they would wait for a request forever), and
// waits until the requests have ended and every connection is closed
// (asyncio 3.12+'s wait_closed). It returns the cancellation of t if t is
// cancelled meanwhile.
func (s *loopServer) shutdown(t *asyncio.T) error {
	s.Close()
	s.CloseClients()
	var reqs []asyncio.Awaitable
	for r := range s.inProgress {
		r.Cancel()
		reqs = append(reqs, r)
	}
	if len(reqs) > 0 {
		if _, _, err := asyncio.Wait(t, reqs, asyncio.Never, asyncio.AllCompleted); err != nil {
			return err
		}
	}
	return s.WaitClosed(t)
}

// withServer runs body with a server from serveOnLoop and shuts the server down
// afterwards, whatever body returns. Without the shutdown, requests still
// in progress would outlive the fan-out; ignoring the shutdown's error
// would swallow a cancellation arriving during it (both found by
// cancelcheck: TestAdapterFanOutCancellation).
func withServer(t *asyncio.T, delay func(path string) time.Duration, body func(s *loopServer) error) error {
	s, err := serveOnLoop(t, delay)
	if err != nil {
		return err
	}
	err = body(s)
	if serr := s.shutdown(t); err == nil {
		err = serr
	}
	return err
}

// getOverConn performs one GET over a loop socket. Cancelling t (a timeout, a
// lost race) interrupts it wherever it waits; the connection is closed.
// opts go to aio.DialConn.
func getOverConn(t *asyncio.T, addr, path string, opts ...aio.Option) (string, error) {
	conn, err := aio.DialConn(t, "tcp", addr, opts...)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	req, err := http.NewRequest("GET", "http://"+addr+path, nil)
	if err != nil {
		return "", err
	}
	if err := req.Write(conn); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// fanOutAdapter sends n GETs to addr, at most limit at a time (sem holds limit
// units), each under timeout. Request i is slow when i%5 == 0.
func fanOutAdapter(t *asyncio.T, out io.Writer, addr string, sem *asyncio.Semaphore, n, limit int, timeout time.Duration) error {
	inFlight, maxInFlight, ok, timedOut := 0, 0, 0, 0
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := range n {
			_, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
				if err := sem.Acquire(t); err != nil {
					return struct{}{}, err
				}
				defer sem.Release()
				inFlight++
				maxInFlight = max(maxInFlight, inFlight)
				defer func() { inFlight-- }()
				body, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (string, error) {
					return getOverConn(t, addr, fmt.Sprintf("/item/%d", i))
				})
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					timedOut++
					return struct{}{}, nil
				case err != nil:
					return struct{}{}, err
				case body != fmt.Sprintf("response to /item/%d", i):
					return struct{}{}, fmt.Errorf("bad body %q", body)
				}
				ok++
				return struct{}{}, nil
			}, asyncio.WithName(fmt.Sprintf("get /item/%d", i)))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "fan-out: %d requests, %d ok, %d timed out, in flight <= %d: %v\n",
		n, ok, timedOut, limit, maxInFlight <= limit)
	return nil
}

// firstSuccessAdapter sends GET /x to every replica address and keeps the first
// answer; the other attempts are cancelled.
func firstSuccessAdapter(t *asyncio.T, out io.Writer, replicas []string) error {
	winner := asyncio.NewFuture[string](t)
	var log []string
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for r, addr := range replicas {
			_, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
				body, err := getOverConn(t, addr, "/x")
				switch {
				case asyncio.IsCancelled(err):
					log = append(log, fmt.Sprintf("replica %d cancelled", r))
					return struct{}{}, err
				case err != nil:
					log = append(log, fmt.Sprintf("replica %d failed", r))
					return struct{}{}, nil // a failed replica does not end the race
				}
				if !winner.Done() {
					winner.SetResult(fmt.Sprintf("replica %d: %s", r, body))
					g.Cancel()
				}
				return struct{}{}, nil
			}, asyncio.WithName(fmt.Sprintf("replica %d", r)))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w, err := winner.Result()
	fmt.Fprintf(out, "first success: %s; %s\n", w, strings.Join(log, ", "))
	return err
}

// runAdapter serves and fans out on one loop made with opts (the test runs it on
// the virtual clock, so that which requests time out is decided by the
// loop's timers alone, not by how busy the machine is).
func runAdapter(out io.Writer, n, limit int, timeout time.Duration, opts ...asyncio.LoopOption) error {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		t.SetName("main")
		slow := 3 * timeout
		err := withServer(t, func(path string) time.Duration {
			if i, _ := strconv.Atoi(strings.TrimPrefix(path, "/item/")); i%5 == 0 {
				return slow
			}
			return time.Millisecond
		}, func(srv *loopServer) error {
			return fanOutAdapter(t, out, srv.Addr().String(), asyncio.NewSemaphore(limit), n, limit, timeout)
		})
		if err != nil {
			return struct{}{}, err
		}

		// Replica 0 refuses connections, 1 answers after 3x the timeout, 2
		// at once.
		refused, err := aio.CreateServer(t, func() aio.Protocol { return &aio.BaseProtocol{} }, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		refusedAddr := refused.Addr().String()
		refused.Close()
		return struct{}{}, withServer(t, func(string) time.Duration { return slow }, func(slowSrv *loopServer) error {
			return withServer(t, func(string) time.Duration { return 0 }, func(fastSrv *loopServer) error {
				return firstSuccessAdapter(t, out, []string{refusedAddr, slowSrv.Addr().String(), fastSrv.Addr().String()})
			})
		})
	}, opts...)
	return err
}
