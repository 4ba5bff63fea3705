package asynciohttp

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-asyncio/asyncio"
)

// GroupHandler is Handler for every loop of a LoopGroup: pstree and ps
// show each loop's tasks under a header naming the loop, json is the
// asyncio.GroupSnapshot (each task under its loop's index), stats a list
// by loop index of {"index", "name", "stats": the loop's counters}, with
// "blocked" (or "busy") or "closed" true and no "stats" for a loop that
// did not answer or is closed. ?loop=i serves loop i alone, as Handler does.
// Each loop's part is taken on that loop, in parallel; a loop that does
// not answer within the timeout is shown blocked, the others still are.
// When no loop answered (every one blocked, busy, not running or closed),
// the page is still written, with status 503, as Handler answers for a
// loop that does not.
//
//	mux.Handle("/debug/asyncio/", asynciohttp.GroupHandler(group))
//
// g must not be nil.
func GroupHandler(g *asyncio.LoopGroup) http.Handler {
	if g == nil {
		panic(&asyncio.ValueError{Msg: "asynciohttp.GroupHandler: nil loop group"})
	}
	return &groupHandler{group: g}
}

type groupHandler struct{ group *asyncio.LoopGroup }

func (h *groupHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if v := r.URL.Query().Get("loop"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= h.group.Len() {
			http.Error(w, fmt.Sprintf("bad loop %q: want an index in [0, %d)", v, h.group.Len()), http.StatusBadRequest)
			return
		}
		(&handler{loop: h.group.Loop(i)}).ServeHTTP(w, r)
		return
	}
	name, timeout, opts, ok := parseRequest(w, r)
	if !ok {
		return
	}
	if name == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, groupIndex, h.group.Len())
		return
	}
	s := h.group.SnapshotThreadsafe(timeout, opts)
	status := http.StatusServiceUnavailable
	for _, ls := range s.Loops {
		if !ls.Blocked && !ls.Closed {
			status = http.StatusOK
			break
		}
	}
	switch name {
	case "pstree":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_ = s.WriteTree(w)
	case "ps":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_ = s.WritePS(w)
	case "json":
		writeJSONStatus(w, status, s)
	case "stats":
		writeJSONStatus(w, status, groupStats(s))
	}
}

// loopStats is one loop's entry of the group's stats page: its counters,
// or, for a loop that did not answer (Blocked, Busy) or is closed, none
// and a flag saying why, rather than zeros that read as an idle loop.
type loopStats struct {
	Index   int                `json:"index"`
	Name    string             `json:"name"`
	Closed  bool               `json:"closed,omitempty"`
	Blocked bool               `json:"blocked,omitempty"`
	Busy    bool               `json:"busy,omitempty"`
	Stats   *asyncio.LoopStats `json:"stats,omitempty"`
}

func groupStats(s *asyncio.GroupSnapshot) []loopStats {
	out := make([]loopStats, len(s.Loops))
	for i, ls := range s.Loops {
		out[i] = loopStats{Index: ls.Index, Name: ls.Name, Closed: ls.Closed, Blocked: ls.Blocked, Busy: ls.Busy}
		if !ls.Closed && !ls.Blocked {
			st := ls.LoopSnapshot.Stats
			out[i].Stats = &st
		}
	}
	return out
}

const groupIndex = `<html><head><title>asyncio loop group</title></head><body>
<p>The tasks of the %d loops of this group:</p>
<ul>
<li><a href="pstree">pstree</a>: who awaits whom, loop by loop</li>
<li><a href="ps">ps</a>: one row per task and awaiter, loop by loop</li>
<li><a href="json">json</a>: the whole snapshot, each task under its loop's index</li>
<li><a href="stats">stats</a>: each loop's counters</li>
</ul>
<p>Parameters: <code>?loop=i</code> (one loop only), <code>?timeout=2s</code>, <code>?max=-1</code>.</p>
</body></html>
`
