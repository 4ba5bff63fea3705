// Package asynciohttp serves snapshots of a running loop over HTTP, as
// net/http/pprof serves profiles:
//
//	mux.Handle("/debug/asyncio/", asynciohttp.Handler(loop))
//
// then, while the program runs:
//
//	curl localhost:6060/debug/asyncio/pstree   # who awaits whom
//	curl localhost:6060/debug/asyncio/ps       # one row per task
//	curl localhost:6060/debug/asyncio/json     # the whole snapshot
//	curl localhost:6060/debug/asyncio/stats    # the loop's counters (JSON)
//
// Each request is served on its own goroutine while the loop runs: the
// snapshot is taken on the loop between two callbacks
// (Loop.SnapshotThreadsafe), so it is consistent and races with nothing.
// When the loop does not answer within the timeout (it is blocked in a
// callback or task step, or not running), the response is 503 and says so.
// Query parameters: timeout (a Go duration, default 1s, at most
// MaxTimeout: a longer one is cut to it) and max (the most tasks described
// one by one, default asyncio.DefaultSnapshotTasks; -1: all).
//
// What a request costs the loop is bounded whatever the requests: one
// snapshot per loop is asked at a time (concurrent requests with the same
// max share it, others get 503 at once), and a request that timed out
// before the loop reached it costs the loop nothing (see
// Loop.SnapshotThreadsafe). A request holds its goroutine at most
// MaxTimeout, plus the time the loop takes for a snapshot it has begun.
//
// # Security
//
// The pages show what the program's tasks are doing: task names, cancel
// messages, source paths and function names, goroutine stacks, and the
// loop's counters. Whoever can reach the handler can read them, and can
// make the loop take snapshots. As with net/http/pprof, do not mount it on
// a mux served to the public: serve it on its own listener bound to
// localhost (http.ListenAndServe("localhost:6060", mux)), or wrap it in
// your own authentication (a handler that checks the request before
// calling this one). Every page is sent with X-Content-Type-Options:
// nosniff; the text pages are text/plain, the index is HTML with
// everything it shows escaped, and the task names and messages in the text
// pages are quoted when they hold a byte that could forge a line or drive
// a terminal (see asyncio.LoopSnapshot.WriteTree).
//
// The package is separate from the core so that a program that does not
// serve it does not link net/http.
package asynciohttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

// DefaultTimeout is how long a request waits for the loop to take the
// snapshot when it names no timeout.
const DefaultTimeout = time.Second

// MaxTimeout is the longest a request waits for the loop: a longer
// timeout parameter is cut to it, so that no request holds a goroutine
// longer than that on a loop that does not answer.
const MaxTimeout = 30 * time.Second

// Handler returns an http.Handler serving snapshots of l under whatever
// prefix it is mounted at (it dispatches on the last element of the path:
// "", "pstree", "ps", "json", "stats"). l must not be nil.
func Handler(l *asyncio.Loop) http.Handler {
	if l == nil {
		panic(&asyncio.ValueError{Msg: "asynciohttp.Handler: nil loop"})
	}
	return &handler{loop: l}
}

type handler struct{ loop *asyncio.Loop }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	name, timeout, opts, ok := parseRequest(w, r)
	if !ok {
		return
	}
	if name == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, index)
		return
	}
	s := h.loop.SnapshotThreadsafe(timeout, opts)
	if s.Blocked {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		if !s.Busy {
			fmt.Fprintf(w, "the loop did not answer within %v: it is blocked (a callback or task step that does not return to the loop) or not running\n", timeout)
		}
		for _, n := range s.Notes {
			fmt.Fprintln(w, n)
		}
		return
	}
	switch name {
	case "pstree":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = s.WriteTree(w)
	case "ps":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = s.WritePS(w)
	case "json":
		writeJSON(w, s)
	case "stats":
		writeJSON(w, s.Stats)
	}
}

// parseRequest reads what both handlers take from a request: the page
// (pstree, ps, json, stats, or "" for the index), the timeout (cut to
// MaxTimeout) and the snapshot options. It answers a bad request itself
// (400, or 404 for an unknown page) and then reports false.
func parseRequest(w http.ResponseWriter, r *http.Request) (name string, timeout time.Duration, opts asyncio.SnapshotOptions, ok bool) {
	name = r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	timeout, err := requestTimeout(r.URL.Query().Get("timeout"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", 0, opts, false
	}
	if v := r.URL.Query().Get("max"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			http.Error(w, fmt.Sprintf("bad max %q: want a positive number of tasks, or -1 for all", v), http.StatusBadRequest)
			return "", 0, opts, false
		}
		opts.MaxTasks = n
	}
	switch name {
	case "", "pstree", "ps", "json", "stats":
	default:
		http.Error(w, fmt.Sprintf("unknown page %q: try pstree, ps, json or stats", name), http.StatusNotFound)
		return "", 0, opts, false
	}
	return name, timeout, opts, true
}

// requestTimeout parses the timeout parameter: DefaultTimeout when
// empty, cut to MaxTimeout.
func requestTimeout(v string) (time.Duration, error) {
	if v == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("bad timeout %q: want a positive Go duration such as 2s", v)
	}
	return min(d, MaxTimeout), nil
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

const index = `<html><head><title>asyncio loop</title></head><body>
<p>The tasks of this loop:</p>
<ul>
<li><a href="pstree">pstree</a>: who awaits whom, with the line each task waits on</li>
<li><a href="ps">ps</a>: one row per task and awaiter</li>
<li><a href="json">json</a>: the whole snapshot</li>
<li><a href="stats">stats</a>: the loop's counters</li>
</ul>
<p>Parameters: <code>?timeout=2s</code> (how long to wait for a busy loop), <code>?max=-1</code> (describe every task).</p>
</body></html>
`
