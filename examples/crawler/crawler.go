//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// errUnavailable is a 503: transient, retried.
var errUnavailable = errors.New("503 service unavailable")

// errNotFound is a 404: not retried.
var errNotFound = errors.New("404 not found")

// config is what the crawl is told.
type config struct {
	workers    int           // N workers on the URL queue
	perHost    int           // at most this many requests in flight per host
	hedgeAfter time.Duration // a host with replicas: the next replica is asked after this
	seed       uint64        // the retries' jitter
}

// hostState is what the crawler keeps per host.
type hostState struct {
	name     string
	ports    []int
	limiter  *asyncio.Limiter   // the host's budget, from /robots
	inFlight *asyncio.Semaphore // the per-host concurrency limit
	now, max int                // requests in flight, and the most seen
	fetched  int
	wins     map[int]int // replica -> hedged races won
}

// stats is what the crawl reports.
type stats struct {
	pages, retries, notFound int
	hosts                    []*hostState
}

// get sends one request to 127.0.0.1:port and reads the answer line.
func get(t *asyncio.T, port int, path string) (string, error) {
	r, w, err := aio.OpenConnection(t, "127.0.0.1", port)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if err := w.Write([]byte("GET " + path + "\n")); err != nil {
		return "", err
	}
	line, err := r.ReadLine(t)
	if err != nil {
		return "", err
	}
	answer := strings.TrimSpace(string(line))
	switch {
	case strings.HasPrefix(answer, "200"):
		return strings.TrimSpace(strings.TrimPrefix(answer, "200")), nil
	case answer == "503":
		return "", errUnavailable
	case answer == "404":
		return "", errNotFound
	}
	return "", fmt.Errorf("bad answer %q", answer)
}

// robots reads every host's budget, two hosts at a time (GatherBounded).
func robots(t *asyncio.T, names []string, ports map[string][]int, perHost int) ([]*hostState, error) {
	var fns []func(*asyncio.T) (*hostState, error)
	for _, name := range names {
		fns = append(fns, func(t *asyncio.T) (*hostState, error) {
			body, err := get(t, ports[name][0], "/robots")
			if err != nil {
				return nil, fmt.Errorf("%s/robots: %w", name, err)
			}
			var rate float64
			var burst int
			if _, err := fmt.Sscanf(body, "rate=%g burst=%d", &rate, &burst); err != nil {
				return nil, fmt.Errorf("%s/robots %q: %w", name, body, err)
			}
			return &hostState{
				name: name, ports: ports[name], wins: map[int]int{},
				limiter:  asyncio.NewLimiter(rate, burst),
				inFlight: asyncio.NewSemaphore(perHost),
			}, nil
		})
	}
	return asyncio.GatherBounded(t, 2, fns...)
}

// fetch gets one page: within the host's budget (Limiter) and concurrency
// limit (Semaphore), retrying 503s with backoff (Retry), and for a host
// with replicas, hedging over them (Hedge).
func fetch(t *asyncio.T, cfg config, h *hostState, rng *rand.Rand, st *stats, path string) ([]string, error) {
	policy := asyncio.RetryPolicy{
		MaxAttempts: 4, Initial: 20 * time.Millisecond, Rand: rng,
		Retryable: func(err error) bool { return errors.Is(err, errUnavailable) },
	}
	body, err := asyncio.Retry(t, policy, func(t *asyncio.T, a asyncio.Attempt) (string, error) {
		if a.N > 1 {
			st.retries++
		}
		if err := h.limiter.Acquire(t); err != nil {
			return "", err
		}
		if err := h.inFlight.Acquire(t); err != nil {
			return "", err
		}
		defer h.inFlight.Release()
		h.now++
		h.max = max(h.max, h.now)
		defer func() { h.now-- }()
		if len(h.ports) == 1 {
			return get(t, h.ports[0], path)
		}
		winner := -1
		body, err := asyncio.Hedge(t, asyncio.HedgePolicy{Delay: cfg.hedgeAfter, MaxAttempts: len(h.ports)},
			func(t *asyncio.T, i int) (string, error) {
				body, err := get(t, h.ports[i], path)
				if err == nil {
					winner = i
				}
				return body, err
			})
		if err != nil {
			var eg *asyncio.ExceptionGroup
			if errors.As(err, &eg) && len(eg.Errs) > 0 {
				return "", eg.Errs[0] // every replica failed: the first one's reason
			}
			return "", err
		}
		h.wins[winner]++
		return body, nil
	})
	if err != nil {
		return nil, err
	}
	h.fetched++
	return strings.Fields(body), nil
}

// crawl is the classic asyncio crawler: a queue of URLs, N workers, each
// taking a URL, fetching it and queueing the links not seen yet; the crawl
// is over when the queue is joined, then the workers are cancelled.
func crawl(t *asyncio.T, cfg config, names []string, ports map[string][]int, start string) (*stats, error) {
	hosts, err := robots(t, names, ports, cfg.perHost)
	if err != nil {
		return nil, err
	}
	st := &stats{hosts: hosts}
	byName := map[string]*hostState{}
	for _, h := range hosts {
		byName[h.name] = h
	}
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed))
	q := asyncio.NewQueue[string](0)
	seen := map[string]bool{start: true}
	if err := q.PutNowait(start); err != nil {
		return nil, err
	}
	err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for w := range cfg.workers {
			if _, err := asyncio.SpawnErr(g, func(t *asyncio.T) error {
				for {
					url, err := q.Get(t)
					if err != nil {
						return err
					}
					name, path, _ := strings.Cut(url, "/")
					links, err := fetch(t, cfg, byName[name], rng, st, "/"+path)
					switch {
					case errors.Is(err, errNotFound):
						st.notFound++
					case err != nil:
						_ = q.TaskDone()
						return fmt.Errorf("%s: %w", url, err)
					default:
						st.pages++
						for _, l := range links {
							if !seen[l] {
								seen[l] = true
								if err := q.PutNowait(l); err != nil {
									_ = q.TaskDone()
									return err
								}
							}
						}
					}
					if err := q.TaskDone(); err != nil {
						return err
					}
				}
			}, asyncio.WithName("worker-"+strconv.Itoa(w))); err != nil {
				return err
			}
		}
		if err := q.Join(t); err != nil {
			return err
		}
		g.Cancel() // the workers wait on an empty queue: stop them
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// report prints the crawl's figures.
func report(out io.Writer, st *stats, elapsed time.Duration, cfg config) {
	fmt.Fprintf(out, "crawled %d pages in %v (%d retries of a 503, %d not found)\n",
		st.pages, elapsed.Round(time.Millisecond), st.retries, st.notFound)
	hosts := append([]*hostState(nil), st.hosts...)
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].name < hosts[j].name })
	for _, h := range hosts {
		fmt.Fprintf(out, "  host %s: %d pages, at most %d in flight (limit %d), rate %v/s burst %d",
			h.name, h.fetched, h.max, cfg.perHost, h.limiter.Rate(), h.limiter.Burst())
		if len(h.ports) > 1 {
			fmt.Fprintf(out, ", hedged races won by replica 0: %d, replica 1: %d", h.wins[0], h.wins[1])
		}
		fmt.Fprintln(out)
	}
}

// run crawls the simulated site from a/ and reports.
func run(out io.Writer, pages int, cfg config, opts ...asyncio.LoopOption) error {
	hosts := world(pages)
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		return struct{}{}, withSite(t, hosts, func(ports map[string][]int) error {
			var names []string
			for _, h := range hosts {
				names = append(names, h.name)
			}
			t0 := t.Loop().Time()
			st, err := crawl(t, cfg, names, ports, "a/")
			if err != nil {
				return err
			}
			report(out, st, t.Loop().Time()-t0, cfg)
			return nil
		})
	}, opts...)
	return err
}
