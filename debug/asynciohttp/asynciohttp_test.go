package asynciohttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// servedLoop runs a real-time loop on its own goroutine with a main task
// waiting on a queue and a worker child, serves the handler over httptest,
// and returns the server's URL and a stop function.
func servedLoop(t *testing.T) (url string, stop func()) {
	t.Helper()
	l := asyncio.NewLoop(asyncio.WithTaskStacks())
	release := asyncio.NewFuture[struct{}](l)
	waiting := make(chan struct{}) // both tasks wait: the pages can show them so
	main := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		q := asyncio.NewQueue[int](0)
		w := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return q.Get(t) }, asyncio.WithName("worker"))
		if err := asyncio.Sleep(t, 0); err != nil { // the worker's first step: it waits in Get
			return 0, err
		}
		close(waiting)
		_, err := release.Await(t)
		w.Cancel()
		return 0, err
	}, asyncio.WithName("main"))
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(main) }()
	<-waiting
	srv := httptest.NewServer(Handler(l))
	return srv.URL, func() {
		srv.Close()
		_, _ = l.CallSoonThreadsafe(func() { release.SetResult(struct{}{}) })
		if err := <-done; err != nil {
			t.Errorf("loop: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Every page, from the HTTP server's goroutines while the loop runs.
func TestHandler_Pages(t *testing.T) {
	url, stop := servedLoop(t)
	defer stop()
	code, body := get(t, url+"/debug/asyncio/pstree")
	if code != 200 || !strings.Contains(body, "└── (T) main [waiting") || !strings.Contains(body, "(T) worker [waiting") ||
		!strings.Contains(body, "asynciohttp_test.go") {
		t.Errorf("pstree: %d\n%s", code, body)
	}
	code, body = get(t, url+"/debug/asyncio/ps")
	if code != 200 || !strings.HasPrefix(body, "tid ") || !strings.Contains(body, " worker ") {
		t.Errorf("ps: %d\n%s", code, body)
	}
	code, body = get(t, url+"/debug/asyncio/json?max=-1&timeout=1m")
	var snap asyncio.LoopSnapshot
	if err := json.Unmarshal([]byte(body), &snap); code != 200 || err != nil || len(snap.Tasks) != 2 {
		t.Errorf("json: %d %v\n%s", code, err, body)
	}
	code, body = get(t, url+"/debug/asyncio/stats")
	var stats asyncio.LoopStats
	if err := json.Unmarshal([]byte(body), &stats); code != 200 || err != nil || stats.Tasks != 2 {
		t.Errorf("stats: %d %v\n%s", code, err, body)
	}
	code, body = get(t, url+"/debug/asyncio/")
	if code != 200 || !strings.Contains(body, `href="pstree"`) {
		t.Errorf("index: %d\n%s", code, body)
	}
}

// Bad requests are answered with what is wrong.
func TestHandler_BadRequests(t *testing.T) {
	url, stop := servedLoop(t)
	defer stop()
	for path, want := range map[string]string{
		"/debug/asyncio/nope":           "unknown page \"nope\": try pstree, ps, json or stats",
		"/debug/asyncio/ps?timeout=x":   "bad timeout \"x\": want a positive Go duration such as 2s",
		"/debug/asyncio/ps?timeout=-1s": "bad timeout \"-1s\": want a positive Go duration such as 2s",
		"/debug/asyncio/ps?max=0":       "bad max \"0\": want a positive number of tasks, or -1 for all",
	} {
		code, body := get(t, url+path)
		if code/100 != 4 || strings.TrimSpace(body) != want {
			t.Errorf("%s: %d %q, want 4xx %q", path, code, body, want)
		}
	}
}

// A loop that does not answer (here: not running) gets a 503 saying so;
// a closed loop an empty tree.
func TestHandler_BlockedAndClosedLoops(t *testing.T) {
	l := asyncio.NewLoop()
	srv := httptest.NewServer(Handler(l))
	defer srv.Close()
	code, body := get(t, srv.URL+"/pstree?timeout=1ms")
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "the loop did not answer within 1ms: it is blocked") {
		t.Errorf("blocked: %d %q", code, body)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, body = get(t, srv.URL+"/pstree")
	if code != 200 || body != "(loop closed: no tasks)\n" {
		t.Errorf("closed: %d %q", code, body)
	}
	var v any
	func() {
		defer func() { v = recover() }()
		Handler(nil)
	}()
	if _, ok := v.(*asyncio.ValueError); !ok {
		t.Errorf("Handler(nil) panicked with %v, want *asyncio.ValueError", v)
	}
}

// Issue 19 item 3: 300 requests that give up on a blocked loop are each
// answered 503 (the loop did not answer, or another snapshot is in
// flight), and the loop then serves the next request: the abandoned ones
// left it no work (the core's
// TestSnapshotThreadsafe_AbandonedRequestsTakeNoSnapshot counts it).
func TestHandler_AbandonedRequestsDuringABlock(t *testing.T) {
	l := asyncio.NewLoop(asyncio.WithTaskStacks())
	l.SetBlockedThreshold(-1)
	release := asyncio.NewFuture[struct{}](l)
	main := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) { _, err := release.Await(t); return 0, err })
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(main) }()
	blocked, unblock := make(chan struct{}), make(chan struct{})
	//asynciovet:ignore blockingcall blocks the loop on purpose: the requests must find it blocked
	if _, err := l.CallSoonThreadsafe(func() { close(blocked); <-unblock }); err != nil {
		t.Fatal(err)
	}
	<-blocked
	srv := httptest.NewServer(Handler(l))
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := "?timeout=1ms&max=-1"
			if i%3 == 0 {
				q = "?timeout=1ms&max=7"
			}
			code, body := get(t, srv.URL+"/json"+q)
			if code != http.StatusServiceUnavailable ||
				!(strings.HasPrefix(body, "the loop did not answer within 1ms") || strings.HasPrefix(body, "another snapshot of this loop")) {
				t.Errorf("request %d: %d %q", i, code, body)
			}
		}()
	}
	wg.Wait()
	close(unblock)
	code, body := get(t, srv.URL+"/stats?timeout=1m")
	var stats asyncio.LoopStats
	if err := json.Unmarshal([]byte(body), &stats); code != 200 || err != nil || stats.Tasks != 1 {
		t.Errorf("stats after the block: %d %v\n%s", code, err, body)
	}
	if _, err := l.CallSoonThreadsafe(func() { release.SetResult(struct{}{}) }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// Issue 19 item 3: the timeout parameter is cut to MaxTimeout, so that
// ?timeout=1000h does not hold a goroutine per request for 1000 hours.
func TestHandler_TimeoutCappedAtMaxTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": DefaultTimeout, "1ms": time.Millisecond, "30s": MaxTimeout, "31s": MaxTimeout, "1000h": MaxTimeout,
	} {
		if got, err := requestTimeout(v); err != nil || got != want {
			t.Errorf("requestTimeout(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	if MaxTimeout != 30*time.Second {
		t.Errorf("MaxTimeout %v, documented as 30 s", MaxTimeout)
	}
}

// Issue 19 item 7: every page, error pages included, is sent with
// X-Content-Type-Options: nosniff and a text or JSON content type (the
// index, the one HTML page, shows nothing from the program).
func TestHandler_NosniffOnEveryPage(t *testing.T) {
	url, stop := servedLoop(t)
	defer stop()
	idle := asyncio.NewLoop() // not running: its pages are 503
	defer idle.Close()
	idleSrv := httptest.NewServer(Handler(idle))
	defer idleSrv.Close()
	for path, wantType := range map[string]string{
		url + "/debug/asyncio/":                "text/html; charset=utf-8",
		url + "/debug/asyncio/pstree":          "text/plain; charset=utf-8",
		url + "/debug/asyncio/ps":              "text/plain; charset=utf-8",
		url + "/debug/asyncio/json":            "application/json",
		url + "/debug/asyncio/stats":           "application/json",
		url + "/debug/asyncio/<script>":        "text/plain; charset=utf-8",
		url + "/debug/asyncio/ps?timeout=bad":  "text/plain; charset=utf-8",
		idleSrv.URL + "/pstree?timeout=1ms":    "text/plain; charset=utf-8",
		url + "/debug/asyncio/ps?max=<b>x</b>": "text/plain; charset=utf-8",
	} {
		resp, err := http.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", path, got)
		}
		if got := resp.Header.Get("Content-Type"); got != wantType {
			t.Errorf("%s: Content-Type %q, want %q", path, got, wantType)
		}
	}
}

// Issue 19 items 6 and 7: a task name with a newline, markup and escape
// bytes reaches the text pages quoted, on one line, as text/plain with
// nosniff; the JSON page carries it exactly, escaped by encoding/json.
func TestHandler_TaskNamesQuotedOnTextPages(t *testing.T) {
	const name = "<script>alert(1)</script>\n└── (T) fake\x1b[2J"
	l := asyncio.NewLoop()
	release := asyncio.NewFuture[struct{}](l)
	main := asyncio.CreateTask(l, func(t *asyncio.T) (int, error) { _, err := release.Await(t); return 0, err }, asyncio.WithName(name))
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(main) }()
	srv := httptest.NewServer(Handler(l))
	defer srv.Close()
	quoted := `"<script>alert(1)</script>\n└── (T) fake\x1b[2J"`
	for _, page := range []string{"/pstree?timeout=1m", "/ps?timeout=1m"} {
		resp, err := http.Get(srv.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if resp.StatusCode != 200 || !strings.Contains(body, quoted) || strings.Contains(body, "\n└── (T) fake") ||
			strings.Contains(body, "\x1b") || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v\n%s", page, resp.StatusCode, resp.Header, body)
		}
	}
	code, body := get(t, srv.URL+"/json?timeout=1m")
	var snap asyncio.LoopSnapshot
	if err := json.Unmarshal([]byte(body), &snap); code != 200 || err != nil || len(snap.Tasks) != 1 || snap.Tasks[0].Name != name {
		t.Errorf("json: %d %v\n%s", code, err, body)
	}
	if _, err := l.CallSoonThreadsafe(func() { release.SetResult(struct{}{}) }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
