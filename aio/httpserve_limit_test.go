//go:build unix

package aio

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A request header longer than net/http's limit is answered 431 and the
// connection closed, byte for byte as net/http's server answers it, after
// reading no more than the limit. StartHTTPServer read a header line of
// any length into memory (a client could make the server hold as much as
// it sent) and, on this client's half-close, ended without an answer.
// The next connection is served as usual.
func TestHTTPServerHeaderTooLargeIs431(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		handled := 0
		s, err := StartHTTPServer(at, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled++
			io.WriteString(w, "ok")
		}), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer func() { s.Close(); s.CloseClients() }()
		// Exactly the limit, with the header not ended: the server reads
		// it all (nothing is left unread to reset the connection) and
		// then answers; a server without the limit waits for the rest
		// until the client's half-close.
		prefix := "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "
		big := prefix + strings.Repeat("a", httpHeaderReadLimit-len(prefix))
		addr := s.Addr().String()
		resp, err := asyncio.Go(at, func(ctx context.Context) (string, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return "", err
			}
			defer c.Close()
			if _, err := io.WriteString(c, big); err != nil {
				return "", err
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				return "", err
			}
			b, err := io.ReadAll(c)
			return string(b), err
		})
		if err != nil {
			return err
		}
		got = append(got, resp)
		_, small, err := rawHTTP(at, s.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if err != nil {
			return err
		}
		got = append(got, small[strings.Index(small, "\r\n\r\n")+4:])
		if handled != 1 {
			t.Errorf("the handler ran %d times, want 1 (the small request)", handled)
		}
		return nil
	})
	expectLog(t, []string{
		"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large",
		"ok",
	}, got)
}
