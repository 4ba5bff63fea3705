package asynciohttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// The group's stats page must show a loop that did not answer, or is
// closed, as such (GroupHandler: "a loop that does not answer within the
// timeout is shown blocked"), not as zero counters that read as an idle
// loop; a loop that answered has its counters.
func TestGroupHandlerEdge_StatsMarkBlockedAndClosedLoops(t *testing.T) {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	h := GroupHandler(g)
	type entry struct {
		Index   int                `json:"index"`
		Name    string             `json:"name"`
		Closed  bool               `json:"closed"`
		Blocked bool               `json:"blocked"`
		Stats   *asyncio.LoopStats `json:"stats"`
	}
	// No loop answers: the page is there all the same, with status 503
	// (as Handler's for a loop that does not answer).
	get := func(path string) []entry {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var es []entry
		if err := json.Unmarshal(rec.Body.Bytes(), &es); rec.Code != http.StatusServiceUnavailable || err != nil || len(es) != 2 {
			t.Fatalf("%s: %d %v\n%s", path, rec.Code, err, rec.Body.String())
		}
		return es
	}
	// Not running: no loop answers, whatever the timeout.
	for i, e := range get("/debug/asyncio/stats?timeout=1ms") {
		if e.Index != i || e.Name != g.Loop(i).Name() || !e.Blocked || e.Closed || e.Stats != nil {
			t.Errorf("not running, loop %d: %+v", i, e)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for i, e := range get("/debug/asyncio/stats") {
		if e.Index != i || !e.Closed || e.Blocked || e.Stats != nil {
			t.Errorf("closed, loop %d: %+v", i, e)
		}
	}
	// And the table: the closed loops are marked, not an empty table.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/asyncio/ps", nil))
	if body := rec.Body.String(); rec.Code != http.StatusServiceUnavailable || strings.Count(body, "): closed ==\n(loop closed: no tasks)\n") != 2 {
		t.Errorf("ps of a closed group:\n%s", body)
	}
}

// A loop that answered has its counters on the stats page, under its
// index.
func TestGroupHandlerEdge_StatsOfAnsweringLoops(t *testing.T) {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	h := GroupHandler(g)
	var body string
	done := make(chan struct{})
	_, err := asyncio.RunEach(g, func(tk *asyncio.T, i int) (int, error) {
		// Each main waits in a goroutine, so its loop answers meanwhile.
		_, err := asyncio.Go(tk, func(context.Context) (int, error) {
			if i == 0 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/stats?timeout=30s", nil))
				body = rec.Body.String()
				close(done)
			}
			<-done
			return 0, nil
		})
		return 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var es []struct {
		Index   int                `json:"index"`
		Blocked bool               `json:"blocked"`
		Stats   *asyncio.LoopStats `json:"stats"`
	}
	if err := json.Unmarshal([]byte(body), &es); err != nil || len(es) != 2 {
		t.Fatalf("stats: %v\n%s", err, body)
	}
	for i, e := range es {
		if e.Index != i || e.Blocked || e.Stats == nil || e.Stats.Tasks < 1 {
			t.Errorf("loop %d: %+v", i, e)
		}
	}
}

// max takes a positive number of tasks or -1 (every task): any other
// number is refused with 400 naming it, before any loop is asked.
func TestHandlerEdge_MaxBelowMinusOneRefused(t *testing.T) {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(1))
	defer g.Close()
	for _, h := range []http.Handler{Handler(g.Loop(0)), GroupHandler(g)} {
		for _, q := range []string{"-5", "-2", "0", "x"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/asyncio/ps?max="+q, nil))
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "bad max \""+q+"\"") {
				t.Errorf("max=%s: %d %q", q, rec.Code, rec.Body.String())
			}
		}
	}
}
