//go:build unix

package main

// The default mode: net/http's own http.Client, the supported way. Each
// request runs inside asyncio.Go, on a goroutine of its own, with the
// ctx Go hands it (http.NewRequestWithContext), so the client keeps
// everything it does well (connection pooling and keep-alive, redirects,
// TLS, HTTP/2) while the task only awaits; and when a Timeout, WaitFor or
// a lost race cancels the task, ctx is cancelled and the request really
// stops (the server sees it go). The servers are ordinary net/http servers
// on their own goroutines.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

// httpServer is a local net/http server. Paths /slow/... never get an
// answer: the handler records the request on arrived, waits until the
// client gives up, and records that on gaveUp. When answerAfter is set,
// other paths are answered only after a value arrives on it.
type httpServer struct {
	srv         *http.Server
	url         string
	arrived     chan string
	gaveUp      chan string
	answerAfter <-chan string
	closed      bool
}

// startHTTPServer serves on 127.0.0.1 (an ephemeral port); capacity is
// the buffer of arrived and gaveUp, so handlers never block on them.
func startHTTPServer(capacity int, answerAfter <-chan string) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &httpServer{
		url:         "http://" + ln.Addr().String(),
		arrived:     make(chan string, capacity),
		gaveUp:      make(chan string, capacity),
		answerAfter: answerAfter,
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			s.arrived <- r.URL.Path
			<-r.Context().Done() // the client closed the connection
			s.gaveUp <- r.URL.Path
			return
		}
		if s.answerAfter != nil {
			<-s.answerAfter
		}
		io.WriteString(w, "response to "+r.URL.Path)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// close shuts the server down gracefully: it returns once every handler
// has returned. Shutdown blocks, so it runs inside asyncio.Go.
func (s *httpServer) close(t *asyncio.T) error {
	if s.closed {
		return nil
	}
	s.closed = true
	_, err := asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.srv.Shutdown(ctx)
	})
	return err
}

// fetch is one GET with client, awaited by t: the call runs off the loop,
// and cancelling t cancels ctx, which aborts the request.
func fetch(t *asyncio.T, client *http.Client, url string) (string, error) {
	return asyncio.Go(t, func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	})
}

// fanOutReport is what clientFanOut counted.
type fanOutReport struct {
	n, ok, timedOut, slow, slowTimedOut, maxInFlight int
}

// clientFanOut sends n GETs, at most limit at a time (a Semaphore), each
// under timeout (WaitForFunc). Every fifth one asks for /slow/i, which is
// never answered, so it times out by construction.
func clientFanOut(t *asyncio.T, client *http.Client, srv *httpServer, n, limit int, timeout time.Duration) (fanOutReport, error) {
	rep := fanOutReport{n: n}
	sem := asyncio.NewSemaphore(limit)
	inFlight := 0
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := range n {
			slow := i%5 == 0
			path := fmt.Sprintf("/item/%d", i)
			if slow {
				path = fmt.Sprintf("/slow/%d", i)
				rep.slow++
			}
			_, err := asyncio.SpawnErr(g, func(t *asyncio.T) error {
				if err := sem.Acquire(t); err != nil {
					return err
				}
				defer sem.Release()
				inFlight++
				rep.maxInFlight = max(rep.maxInFlight, inFlight)
				defer func() { inFlight-- }()
				body, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (string, error) {
					return fetch(t, client, srv.url+path)
				})
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					rep.timedOut++
					if slow {
						rep.slowTimedOut++
					}
					return nil
				case err != nil:
					return err
				case body != "response to "+path:
					return fmt.Errorf("bad body %q", body)
				}
				rep.ok++
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return rep, err
}

// raceReport is what clientFirstSuccess saw.
type raceReport struct {
	winner, body   string
	loserCancelled bool // replica 1's attempt was cancelled
	serverSawGo    bool // and its server saw the request go
}

// clientFirstSuccess sends GET /x to three replicas at once: replica 0
// refuses connections, replica 1 never answers (/slow/), replica 2 answers
// as soon as replica 1 has the request (the servers pass that signal, so
// that there is always a loser in flight to cancel). The first success
// wins and the other attempts are cancelled (g.Cancel); replica 1's server
// then sees its request go, which the race waits for (asyncio.Recv on the
// server's channel).
func clientFirstSuccess(t *asyncio.T, client *http.Client, refused string, never, fast *httpServer) (raceReport, error) {
	var rep raceReport
	urls := []string{refused + "/x", never.url + "/slow/x", fast.url + "/x"}
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for r, url := range urls {
			_, err := asyncio.SpawnErr(g, func(t *asyncio.T) error {
				body, err := fetch(t, client, url)
				switch {
				case asyncio.IsCancelled(err):
					if r == 1 {
						rep.loserCancelled = true
					}
					return err
				case err != nil:
					return nil // a failed replica does not end the race
				}
				if rep.winner == "" {
					rep.winner, rep.body = "replica "+strconv.Itoa(r), body
					g.Cancel()
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	if rep.loserCancelled {
		if _, _, err := asyncio.Recv(t, never.gaveUp); err != nil {
			return rep, err
		}
		rep.serverSawGo = true
	}
	return rep, nil
}

// runClient runs both parts with an http.Client whose pool keeps up to
// limit idle connections to a host (keep-alive across requests).
func runClient(out io.Writer, n, limit int, timeout time.Duration) error {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = limit
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		srv, err := startHTTPServer(n, nil)
		if err != nil {
			return struct{}{}, err
		}
		defer srv.close(t)
		rep, err := clientFanOut(t, client, srv, n, limit, timeout)
		if err != nil {
			return struct{}{}, err
		}
		// Every handler has returned once the server is shut down: each
		// never-answered request it received has seen its client go.
		transport.CloseIdleConnections()
		if err := srv.close(t); err != nil {
			return struct{}{}, err
		}
		fmt.Fprintf(out, "fan-out: %d requests, %d ok, %d timed out (%d of the %d never answered; the server saw %d of %d go), in flight <= %d: %v\n",
			rep.n, rep.ok, rep.timedOut, rep.slowTimedOut, rep.slow, len(srv.gaveUp), len(srv.arrived), limit, rep.maxInFlight <= limit)

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return struct{}{}, err
		}
		refused := "http://" + ln.Addr().String()
		ln.Close() // nothing listens there now: connections are refused
		never, err := startHTTPServer(1, nil)
		if err != nil {
			return struct{}{}, err
		}
		defer never.close(t)
		fast, err := startHTTPServer(1, never.arrived)
		if err != nil {
			return struct{}{}, err
		}
		defer fast.close(t)
		race, err := clientFirstSuccess(t, client, refused, never, fast)
		if err != nil {
			return struct{}{}, err
		}
		fmt.Fprintf(out, "first success: %s: %s; replica 1 cancelled: %v, its server saw the request go: %v\n",
			race.winner, race.body, race.loserCancelled, race.serverSawGo)
		return struct{}{}, nil
	})
	return err
}
