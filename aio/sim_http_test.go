//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// serveHTTPOnLoop answers every HTTP request on h:80 with "hello from
// <host> <path>" after wait(path).
func serveHTTPOnLoop(t *asyncio.T, h *SimHost, wait func(string) time.Duration) (*Server, error) {
	return StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		head, err := r.ReadUntil(t, []byte("\r\n\r\n"))
		if err != nil {
			return nil
		}
		path := strings.Fields(string(head))[1]
		if err := asyncio.Sleep(t, wait(path)); err != nil {
			return err
		}
		body := "hello from " + h.Name() + " " + path
		w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
		if err := w.Drain(t); asyncio.IsCancelled(err) {
			return err
		}
		return nil // a client that went away is not the server's error
	}, "", 80, WithNetwork(h))
}

// http.Client inside asyncio.Go over the simulated network: the
// requests' latencies take virtual time (the Go calls do not hold the
// clock while they wait for the network), a slow answer times out under
// WaitForFunc, a refused one fails with ECONNREFUSED, and the timings are
// exact.
func TestSimHTTPClient(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		n.SetDefaultLink(LinkConfig{Latency: 25 * time.Millisecond})
		c, s := n.Host("client"), n.Host("server")
		n.Host("empty")
		srv, err := serveHTTPOnLoop(t, s, func(path string) time.Duration {
			if path == "/slow" {
				return time.Hour
			}
			return 0
		})
		if err != nil {
			return err
		}
		defer func() { srv.Close(); srv.AbortClients() }()
		client := &http.Client{Transport: c.HTTPTransport()}
		get := func(t *asyncio.T, url string) (string, error) {
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
				return string(b), err
			})
		}
		body, err := get(t, "http://server/a")
		if err != nil {
			return err
		}
		// Dial: 50 ms; request and answer: 50 ms.
		if body != "hello from server /a" || t.Loop().Time() != 100*time.Millisecond {
			return fmt.Errorf("got %q at %v", body, t.Loop().Time())
		}
		start := t.Loop().Time()
		_, err = asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (string, error) { return get(t, "http://server/slow") })
		if !errors.Is(err, asyncio.ErrTimeout) || t.Loop().Time()-start != time.Second {
			return fmt.Errorf("slow: %v after %v", err, t.Loop().Time()-start)
		}
		if _, err := get(t, "http://empty/"); !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("refused: %v", err)
		}
		if _, err := get(t, "https://server/"); err == nil || !strings.Contains(err.Error(), "http URLs only") {
			return fmt.Errorf("https: %v", err)
		}
		return nil
	})
}
