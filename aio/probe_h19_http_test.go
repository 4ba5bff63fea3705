//go:build unix

package aio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// rawHTTP sends req on a new connection to addr and reads until the
// server closes it, inside asyncio.Go; it returns the client's own address
// and what came back.
func rawHTTP(t *asyncio.T, addr, req string) (local, resp string, err error) {
	type result struct{ local, resp string }
	r, err := asyncio.Go(t, func(ctx context.Context) (result, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		if _, err := io.WriteString(c, req); err != nil {
			return result{}, err
		}
		b, err := io.ReadAll(c)
		return result{c.LocalAddr().String(), string(b)}, err
	})
	return r.local, r.resp, err
}

// StartHTTPServer's requests had no RemoteAddr (""), a malformed request
// was answered by closing the connection without a word, and "Expect:
// 100-continue" got no "100 Continue" (a client that waits for it before
// sending the body waited until its own timeout) nor another expectation
// a 417. net/http's server, whose handlers StartHTTPServer promises to
// run unchanged, sets RemoteAddr to the client's "ip:port", answers
// "400 Bad Request" and closes, writes "HTTP/1.1 100 Continue" before the
// body is read, and answers "417 Expectation Failed" and closes (the
// bytes below are net/http's, Go 1.23).
func TestH19_HTTPServerAsNetHTTP(t *testing.T) {
	clean(t)
	date := regexp.MustCompile(`\r\nDate: [^\r]*`)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		s, err := StartHTTPServer(at, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "remote=%s body=%s", r.RemoteAddr, b)
		}), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer func() { s.Close(); s.CloseClients() }()
		for _, req := range []string{
			"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
			"GARBAGE\r\n\r\n",
			"POST / HTTP/1.1\r\nHost: x\r\nExpect: something\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
		} {
			local, resp, err := rawHTTP(at, s.Addr().String(), req)
			if err != nil {
				return err
			}
			resp = date.ReplaceAllString(resp, "")
			if r := "remote=" + local + " body=hello"; strings.HasSuffix(resp, r) {
				resp = strings.Replace(resp, fmt.Sprintf("Content-Length: %d\r\n", len(r)), "Content-Length: <n>\r\n", 1)
				resp = strings.TrimSuffix(resp, r) + "remote=<client> body=hello"
			}
			log = append(log, resp)
		}
		return nil
	})
	expectLog(t, []string{
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: <n>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nremote=<client> body=hello",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request",
		"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	}, log)
}

// Over WithTLS, StartHTTPServer's requests had a nil TLS, so a handler
// that checks r.TLS (to require HTTPS, or to read the client's
// certificate) took an HTTPS request for plain HTTP. net/http's server
// sets it to the connection's tls.ConnectionState.
func TestH19_HTTPServerTLSRequestHasTLS(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	transport := &http.Transport{TLSClientConfig: clientCfg}
	defer transport.CloseIdleConnections()
	var got string
	runNet(t, func(at *asyncio.T) error {
		s, err := StartHTTPServer(at, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS == nil {
				io.WriteString(w, "no TLS")
				return
			}
			fmt.Fprintf(w, "TLS complete=%v version=%x", r.TLS.HandshakeComplete, r.TLS.Version)
		}), "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		defer func() { s.Close(); s.CloseClients() }()
		got, err = get(at, &http.Client{Transport: transport}, "https://"+s.Addr().String()+"/")
		transport.CloseIdleConnections()
		return err
	})
	if want := "200 TLS complete=true version=304"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A handler's "Connection: close" did not close the connection: the
// server went on reading requests on it (a client that reads to EOF
// waited for ever), and a header set after WriteHeader still went out.
// net/http's server closes the connection after such a response, and
// sends the header as it was at WriteHeader ("Changing the header map
// after a call to WriteHeader (or Write) has no effect").
func TestH19_HTTPServerResponseAsNetHTTP(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		s, err := StartHTTPServer(at, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/close":
				w.Header().Set("Connection", "close")
				io.WriteString(w, "bye")
			case "/late":
				w.WriteHeader(http.StatusCreated)
				w.Header().Set("X-Late", "1")
				io.WriteString(w, "late")
			default:
				io.WriteString(w, "more")
			}
		}), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer func() { s.Close(); s.CloseClients() }()
		_, resp, err := rawHTTP(at, s.Addr().String(), "GET /late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if err != nil {
			return err
		}
		log = append(log, "late: X-Late sent "+fmt.Sprint(strings.Contains(resp, "X-Late")))
		addr := s.Addr().String()
		got, err := asyncio.Go(at, func(ctx context.Context) (string, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return "", err
			}
			defer c.Close()
			br := bufio.NewReader(c)
			io.WriteString(c, "GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return "", err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A server that kept the connection answers this one; one that
			// closed it gives EOF or a reset.
			io.WriteString(c, "GET /more HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			rest, _ := io.ReadAll(br)
			return fmt.Sprintf("%s %q; then answered %v", resp.Status, body, strings.Contains(string(rest), "HTTP/1.1")), nil
		})
		log = append(log, "close: "+got)
		return err
	})
	expectLog(t, []string{
		"late: X-Late sent false",
		`close: 200 OK "bye"; then answered false`,
	}, log)
}
