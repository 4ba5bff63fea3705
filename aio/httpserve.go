//go:build unix

package aio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-asyncio/asyncio"
)

// StartHTTPServer serves handler over HTTP/1.1 on host:port, on real
// sockets or, with WithNetwork, on a simulated network (its other
// options are StartServer's). The connections are the loop's: each
// request is read on the loop, body included, and handler runs inside
// asyncio.Go, on a goroutine of its own, with the Go call's context as
// the request's context. So a handler is ordinary net/http code; the
// loop counts it as outside work while it runs (a virtual clock waits for
// it), and a handler that calls back into the loop with that context
// (SimHost.HTTPTransport, ConcurrentFuture.Wait) does not hold the clock
// while it waits. The response is buffered whole and written when the
// handler returns (no streaming: http.Flusher and http.Hijacker are not
// supported); keep-alive is served until the client asks to close.
// Cancelling the connection's task (Server.Close does not; shutting the
// server down with CloseClients or AbortClients ends the connections)
// cancels the handler's context.
//
// As net/http's server does: the request's RemoteAddr is the client's
// address and its TLS the connection's state over TLS; a request that
// cannot be parsed is answered "400 Bad Request" and the connection
// closed; a body sent with "Expect: 100-continue" is asked for with a
// "100 Continue" interim response, and another expectation is answered
// "417 Expectation Failed" and the connection closed; a request header
// longer than net/http's default limit (http.DefaultMaxHeaderBytes) is
// answered "431 Request Header Fields Too Large" and the connection
// closed, without reading the rest.
func StartHTTPServer(t *asyncio.T, handler http.Handler, host string, port int, opts ...Option) (*Server, error) {
	if handler == nil {
		panic(&asyncio.ValueError{Msg: "StartHTTPServer: nil handler"})
	}
	return StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		sr := &streamReaderOf{t: t, r: r}
		br := bufio.NewReader(sr)
		remote := ""
		if a, ok := w.ExtraInfo("peername").(net.Addr); ok && a != nil {
			remote = a.String()
		}
		var tlsState *tls.ConnectionState
		if c, ok := w.ExtraInfo("ssl_object").(*tls.Conn); ok && c != nil {
			cs := c.ConnectionState()
			tlsState = &cs
		}
		for {
			sr.limit = httpHeaderReadLimit // until this request's header is read
			req, err := http.ReadRequest(br)
			sr.limit = -1
			if err != nil {
				if errors.Is(sr.err, errHTTPHeaderTooLarge) {
					// net/http's answer, byte for byte: the header is not
					// read further, nor kept in memory.
					w.Write([]byte("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"))
					return cancelledOrNil(w.Drain(t))
				}
				if sr.err != nil {
					// EOF or a reset: the connection ends; a cancellation
					// is the task's, not to be swallowed.
					return cancelledOrNil(sr.err)
				}
				// Malformed: net/http's answer, byte for byte.
				w.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"))
				return cancelledOrNil(w.Drain(t))
			}
			req.RemoteAddr = remote
			req.TLS = tlsState
			if expect := req.Header.Get("Expect"); expect != "" {
				if !strings.EqualFold(expect, "100-continue") {
					w.Write([]byte("HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
					return cancelledOrNil(w.Drain(t))
				}
				if req.ProtoAtLeast(1, 1) && req.ContentLength != 0 {
					// The client may wait for this before it sends the body.
					w.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
				}
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return cancelledOrNil(err)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			rw := &bufferedResponse{header: http.Header{}}
			_, err = asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
				handler.ServeHTTP(rw, req.WithContext(ctx))
				return struct{}{}, nil
			})
			if err != nil {
				return err // cancelled, or the handler panicked
			}
			resp := rw.response(req)
			if err := resp.Write(streamWriterOf{w}); err != nil {
				return nil
			}
			if err := w.Drain(t); err != nil {
				return cancelledOrNil(err)
			}
			if resp.Close {
				return nil
			}
		}
	}, host, port, via("StartHTTPServer", opts)...)
}

// cancelledOrNil is err if it is a cancellation, else nil: a connection
// that fails ends quietly, as net/http's do, but the task's cancellation
// is returned.
func cancelledOrNil(err error) error {
	if err != nil && asyncio.IsCancelled(err) {
		return err
	}
	return nil
}

// httpHeaderReadLimit is how much StartHTTPServer reads for a request's
// header before it answers 431: net/http's default, its
// DefaultMaxHeaderBytes plus the 4096 bytes of slack its server allows.
const httpHeaderReadLimit = http.DefaultMaxHeaderBytes + 4096

// errHTTPHeaderTooLarge is streamReaderOf's error once it has read its
// limit.
var errHTTPHeaderTooLarge = errors.New("aio: HTTP request header too large")

// streamReaderOf is an io.Reader over a StreamReader, for the task t. err
// is the first error it returned (io.EOF included): a request that failed
// to parse without one was malformed. While limit >= 0 it reads at most
// limit more bytes, then fails with errHTTPHeaderTooLarge.
type streamReaderOf struct {
	t     *asyncio.T
	r     *StreamReader
	err   error
	limit int64
}

func (s *streamReaderOf) Read(p []byte) (int, error) {
	if s.limit == 0 {
		if s.err == nil {
			s.err = errHTTPHeaderTooLarge
		}
		return 0, errHTTPHeaderTooLarge
	}
	if s.limit > 0 && int64(len(p)) > s.limit {
		p = p[:s.limit]
	}
	data, err := s.r.Read(s.t, len(p))
	if err == nil && len(data) == 0 && len(p) > 0 {
		err = io.EOF
	}
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return 0, err
	}
	if s.limit > 0 {
		s.limit -= int64(len(data))
	}
	return copy(p, data), nil
}

// streamWriterOf is an io.Writer over a StreamWriter (it buffers; the
// caller drains).
type streamWriterOf struct{ w *StreamWriter }

func (s streamWriterOf) Write(p []byte) (int, error) {
	if err := s.w.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// bufferedResponse is the http.ResponseWriter of StartHTTPServer.
type bufferedResponse struct {
	header http.Header
	status int
	sent   http.Header // the header as it was at WriteHeader
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

// WriteHeader records the status and, as net/http's does, the header as
// it is now: a change to the header map afterwards has no effect.
func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
		b.sent = b.header.Clone()
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func (b *bufferedResponse) response(req *http.Request) *http.Response {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	h := b.sent
	if h == nil {
		h = b.header.Clone()
	}
	if h.Get("Content-Type") == "" && b.body.Len() > 0 {
		h.Set("Content-Type", http.DetectContentType(b.body.Bytes()))
	}
	h.Set("Content-Length", strconv.Itoa(b.body.Len()))
	return &http.Response{
		Status:        strconv.Itoa(b.status) + " " + http.StatusText(b.status),
		StatusCode:    b.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(b.body.Bytes())),
		ContentLength: int64(b.body.Len()),
		Request:       req,
		// The handler's "Connection: close" closes the connection after
		// the response, as net/http's server does.
		Close: req.Close || httpHeaderHasToken(h, "Connection", "close"),
	}
}

// httpHeaderHasToken reports whether h's field name lists token (case
// insensitive), as net/http's hasToken.
func httpHeaderHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
