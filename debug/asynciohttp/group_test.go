package asynciohttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A group's handler shows every loop, each task under its loop.
func TestGroupHandler_ShowsEveryLoop(t *testing.T) {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	srv := httptest.NewServer(GroupHandler(g))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	pages := map[string]string{}
	var codes []int
	_, err := asyncio.RunGroup(g, func(tk *asyncio.T) (struct{}, error) {
		if _, err := asyncio.CallOn(tk, g.Loop(1), func(rt *asyncio.T) (struct{}, error) {
			//asynciovet:ignore unawaitedtask the worker is left waiting on purpose, for the snapshot; Close ends it
			asyncio.CreateTask(rt, func(ct *asyncio.T) (int, error) {
				_, err := asyncio.NewFuture[int](ct).Await(ct)
				return 0, err
			}, asyncio.WithName("remote-worker"))
			return struct{}{}, nil
		}); err != nil {
			return struct{}{}, err
		}
		_, err := asyncio.Go(tk, func(context.Context) (struct{}, error) {
			for _, p := range []string{"/ps", "/pstree", "/json", "/stats", "/ps?loop=1", "/ps?loop=7"} {
				code, body := get(p)
				codes = append(codes, code)
				pages[p] = body
			}
			return struct{}{}, nil
		})
		return struct{}{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pages["/ps"], "== loop 1 (loop 1):") || !strings.Contains(pages["/ps"], "remote-worker") {
		t.Errorf("/ps:\n%s", pages["/ps"])
	}
	var snap asyncio.GroupSnapshot
	if err := json.Unmarshal([]byte(pages["/json"]), &snap); err != nil || len(snap.Loops) != 2 {
		t.Fatalf("/json: %v\n%s", err, pages["/json"])
	}
	found := false
	for _, ti := range snap.Loops[1].Tasks {
		found = found || ti.Name == "remote-worker"
	}
	if !found || snap.Loops[1].Index != 1 {
		t.Errorf("remote-worker not under loop 1: %+v", snap.Loops[1])
	}
	if !strings.Contains(pages["/ps?loop=1"], "remote-worker") || strings.Contains(pages["/ps?loop=1"], "== loop") {
		t.Errorf("/ps?loop=1:\n%s", pages["/ps?loop=1"])
	}
	if codes[5] != http.StatusBadRequest {
		t.Errorf("/ps?loop=7: status %d", codes[5])
	}
}

// The group handler answers as Handler does: nosniff on every page, the
// same parameter checks (a timeout cut to MaxTimeout, an unknown page a
// 404), and the loop index checked; none of these needs a running group.
func TestGroupHandler_SameChecksAsHandler(t *testing.T) {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	h := GroupHandler(g)
	for path, wantCode := range map[string]int{
		"/debug/asyncio/":               http.StatusOK,
		"/debug/asyncio/<script>":       http.StatusNotFound,
		"/debug/asyncio/ps?timeout=bad": http.StatusBadRequest,
		"/debug/asyncio/ps?max=0":       http.StatusBadRequest,
		"/debug/asyncio/ps?loop=7":      http.StatusBadRequest,
		"/debug/asyncio/ps?loop=x%0Ay":  http.StatusBadRequest,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != wantCode {
			t.Errorf("%s: status %d, want %d", path, rec.Code, wantCode)
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", path, got)
		}
		if body := rec.Body.String(); strings.Count(body, "\n") > 1 && wantCode != http.StatusOK {
			t.Errorf("%s: error body spans lines (a forged line?): %q", path, body)
		}
	}
}
