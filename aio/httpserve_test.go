//go:build unix

package aio

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// get is one GET with client inside asyncio.Go: status, body.
func get(t *asyncio.T, client *http.Client, url string) (string, error) {
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
		b, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b), err
	})
}

// Two tiers of net/http handlers on the simulated network: the front's
// handler calls the back end with its request's context through the
// network's HTTP transport. Every hop's latency is virtual time, and the
// clock stops while the handlers run: the answer comes at exactly 80 ms.
func TestStartHTTPServerSimulated(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		n.SetDefaultLink(LinkConfig{Latency: 10 * time.Millisecond})
		front, back, client := n.Host("front"), n.Host("back"), n.Host("client")
		toBack := &http.Client{Transport: front.HTTPTransport()}
		bs, err := StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/missing" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, "back "+r.URL.Path)
		}), "", 80, WithNetwork(back))
		if err != nil {
			return err
		}
		defer func() { bs.Close(); bs.CloseClients() }()
		fs, err := StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := http.NewRequestWithContext(r.Context(), "GET", "http://back"+r.URL.Path, nil)
			resp, err := toBack.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			w.WriteHeader(resp.StatusCode)
			fmt.Fprintf(w, "front got %q", b)
		}), "", 80, WithNetwork(front))
		if err != nil {
			return err
		}
		defer func() { fs.Close(); fs.CloseClients() }()
		c := &http.Client{Transport: client.HTTPTransport()}
		got, err := get(t, c, "http://front/x")
		if err != nil {
			return err
		}
		if want := `200 front got "back /x"`; got != want || t.Loop().Time() != 80*time.Millisecond {
			return fmt.Errorf("got %q at %v, want %q at 80ms", got, t.Loop().Time(), want)
		}
		got, err = get(t, c, "http://front/missing")
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "404 front got \"404 page not found") {
			return fmt.Errorf("missing: %q", got)
		}
		return nil
	})
}

// The same server code on real sockets, with net/http's own client and
// keep-alive: two requests on one connection.
func TestStartHTTPServerReal(t *testing.T) {
	clean(t)
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	c := &http.Client{Transport: transport}
	runNet(t, func(t *asyncio.T) error {
		conns := 0
		s, err := StartHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "real "+r.URL.Path)
		}), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer func() { s.Close(); s.CloseClients() }()
		url := "http://" + s.Addr().String()
		for _, p := range []string{"/a", "/b"} {
			got, err := get(t, c, url+p)
			if err != nil {
				return err
			}
			if got != "200 real "+p {
				return fmt.Errorf("got %q", got)
			}
		}
		conns = len(s.clients)
		transport.CloseIdleConnections()
		if conns != 1 {
			return fmt.Errorf("%d connections for two requests, want 1 (keep-alive)", conns)
		}
		return nil
	})
}
