//go:build unix

package aio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/go-asyncio/asyncio"
)

// HTTPTransport returns an http.RoundTripper that sends each request from
// h over its simulated network, for an http.Client used inside asyncio.Go
// (the usual way to call net/http from a task):
//
//	client := &http.Client{Transport: host.HTTPTransport()}
//	body, err := asyncio.Go(t, func(ctx context.Context) (string, error) {
//		req, _ := http.NewRequestWithContext(ctx, "GET", "http://server/x", nil)
//		resp, err := client.Do(req) // ...
//	})
//
// The exchange runs on the loop, as a task: it dials the request's host
// through the network, writes the request (with "Connection: close": one
// connection per request, no pooling), reads the whole response, and
// hands it back with its body in memory. The Go side is the caller's
// goroutine alone, and while it waits for the exchange it does not hold
// the virtual clock (ConcurrentFuture.Wait with the Go call's ctx, which
// the request's context derives from), so the network's latencies, stalls
// and timeouts take virtual time; it counts again before it runs on, so
// the clock never moves while Go code works on a response. So the
// request's context must come from an asyncio.Go call of h's loop: with
// another one the exchange still runs, but nothing tells a virtual-time
// loop that a goroutine waits for it. Only "http" URLs are served. Cancelling the
// Go call cancels the exchange and closes its connection. Do not set
// http.Client.Timeout (it runs on the real clock): use the loop's
// timeouts (WaitFor, Timeout) around the Go call.
func (h *SimHost) HTTPTransport() http.RoundTripper { return simHTTPTransport{h: h} }

type simHTTPTransport struct{ h *SimHost }

// RoundTrip implements http.RoundTripper.
func (rt simHTTPTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if req.URL.Scheme != "http" {
		return nil, fmt.Errorf("aio: the simulated network's HTTP transport serves http URLs only, not %q", req.URL.Scheme)
	}
	ctx := req.Context()
	cf := asyncio.RunCoroutineThreadsafe(rt.h.n.loop, func(t *asyncio.T) (*http.Response, error) {
		return rt.exchange(t, req)
	})
	if err := cf.Wait(ctx); err != nil {
		cf.Cancel()
		return nil, err
	}
	return cf.Result()
}

// exchange is one request and its response, on the loop.
func (rt simHTTPTransport) exchange(t *asyncio.T, req *http.Request) (*http.Response, error) {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	addr := net.JoinHostPort(req.URL.Hostname(), port) // "[::1]" too
	conn, err := DialConn(t, "tcp", addr, WithNetwork(rt.h))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	out := req.Clone(req.Context())
	out.Close = true
	if err := out.Write(conn); err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	if _, err := br.Peek(1); err != nil {
		// Closed before any byte of a response: io.EOF, as
		// http.Transport says (ReadResponse would say
		// io.ErrUnexpectedEOF).
		return nil, err
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
