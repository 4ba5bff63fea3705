//go:build unix

package main

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// The simulated web: a few hosts, each served by one or more replica
// servers on loopback (loop servers, asyncio streams), with injected
// latency and failures. The protocol is one line each way:
//
//	GET /path           ->  200 <link> <link> ...   (a page and its links)
//	                        503                     (a transient failure)
//	                        404
//
// A link is "host/path". /robots answers "200 rate=<r> burst=<b>", the
// host's request budget.

// page is one page of a host.
type page struct {
	links   []string
	latency time.Duration // service time on replica 0
	fails   int           // the first fails requests for it get a 503 (per replica)
}

// host is one host: its pages, its budget and its replicas' slowness.
type host struct {
	name     string
	rate     float64 // requests per second (robots)
	burst    int
	pages    map[string]*page
	replicas int
	// slowdown is added to replica r's answer for path.
	slowdown func(r int, path string) time.Duration
}

// world builds the deterministic site the example crawls: hosts a, b and
// c, each with pages /, /1 ... /(pages-1); every page links to two pages of
// its own host and one of the next host; every seventh page fails twice
// before it answers; host c has two replicas, the first 80ms slower for
// /1 ... /9.
func world(pages int) []*host {
	names := []string{"a", "b", "c"}
	var hosts []*host
	for hi, name := range names {
		h := &host{name: name, rate: float64(20 * (hi + 1)), burst: 2, pages: map[string]*page{}, replicas: 1,
			slowdown: func(int, string) time.Duration { return 0 }}
		if name == "c" {
			h.replicas = 2
			h.slowdown = func(r int, path string) time.Duration {
				if r == 0 && len(path) == 2 { // /1 ... /9: replica 0 is slow for these
					return 80 * time.Millisecond
				}
				return 0
			}
		}
		for i := range pages {
			path := "/"
			if i > 0 {
				path = fmt.Sprintf("/%d", i)
			}
			p := &page{latency: time.Duration(5+(i*13+hi*7)%25) * time.Millisecond}
			if (i+hi)%7 == 3 {
				p.fails = 2
			}
			for _, j := range []int{(2*i + 1) % pages, (3*i + 2) % pages} {
				p.links = append(p.links, name+pathOf(j))
			}
			p.links = append(p.links, names[(hi+1)%len(names)]+pathOf((i+1)%pages))
			h.pages[path] = p
		}
		hosts = append(hosts, h)
	}
	return hosts
}

func pathOf(i int) string {
	if i == 0 {
		return "/"
	}
	return fmt.Sprintf("/%d", i)
}

// replica is one running server of a host.
type replica struct {
	srv        *aio.Server
	port       int
	inProgress map[*asyncio.T]bool
	hits       map[string]int
}

// serve starts replica r of h on 127.0.0.1.
func serve(t *asyncio.T, h *host, r int) (*replica, error) {
	rep := &replica{inProgress: map[*asyncio.T]bool{}, hits: map[string]int{}}
	srv, err := aio.StartServer(t, func(t *asyncio.T, rd *aio.StreamReader, w *aio.StreamWriter) error {
		rep.inProgress[t] = true
		defer delete(rep.inProgress, t)
		defer w.Close()
		line, err := rd.ReadLine(t)
		if err != nil {
			return nil // the client went away
		}
		path, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "GET ")
		if !ok {
			return nil
		}
		var answer string
		delay := h.slowdown(r, path)
		switch p := h.pages[path]; {
		case path == "/robots":
			answer = fmt.Sprintf("200 rate=%v burst=%d", h.rate, h.burst)
		case p == nil:
			answer = "404"
		default:
			delay += p.latency
			rep.hits[path]++
			if rep.hits[path] <= p.fails {
				answer = "503"
			} else {
				answer = "200 " + strings.Join(p.links, " ")
			}
		}
		if err := asyncio.Sleep(t, delay); err != nil {
			return err
		}
		if err := w.Write([]byte(answer + "\n")); err != nil {
			return nil
		}
		return w.Drain(t)
	}, "127.0.0.1", 0)
	if err != nil {
		return nil, err
	}
	rep.srv = srv
	rep.port = srv.Addr().(*net.TCPAddr).Port
	return rep, nil
}

// shutdown closes the server, cancels the requests in progress and waits
// for everything to end.
func (rep *replica) shutdown(t *asyncio.T) error {
	rep.srv.Close()
	rep.srv.CloseClients()
	var reqs []asyncio.Awaitable
	for r := range rep.inProgress {
		r.Cancel()
		reqs = append(reqs, r)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].(*asyncio.T).Name() < reqs[j].(*asyncio.T).Name() })
	if len(reqs) > 0 {
		if _, _, err := asyncio.Wait(t, reqs, asyncio.Never, asyncio.AllCompleted); err != nil {
			return err
		}
	}
	return rep.srv.WaitClosed(t)
}

// withSite starts every replica of every host, runs body with the ports
// by host name, then shuts them all down, even when body fails.
func withSite(t *asyncio.T, hosts []*host, body func(ports map[string][]int) error) (err error) {
	ports := map[string][]int{}
	var reps []*replica
	defer func() {
		for _, rep := range reps {
			if serr := rep.shutdown(t); err == nil {
				err = serr
			}
		}
	}()
	for _, h := range hosts {
		for r := range h.replicas {
			rep, err := serve(t, h, r)
			if err != nil {
				return err
			}
			reps = append(reps, rep)
			ports[h.name] = append(ports[h.name], rep.port)
		}
	}
	return body(ports)
}
