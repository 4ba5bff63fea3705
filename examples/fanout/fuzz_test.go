//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// watchdog crashes the fuzz worker if one input runs for 20 s, so that the
// fuzzer keeps a hanging input as a finding (a failing test cannot end a
// goroutine stuck in a loop). It bounds the run; it times nothing.
func watchdog(what string, input ...[]byte) (stop func() bool) {
	return time.AfterFunc(20*time.Second, func() {
		buf := make([]byte, 1<<20)
		panic(fmt.Sprintf("%s still running after 20 s on %q\n%s", what, input, buf[:runtime.Stack(buf, true)]))
	}).Stop
}

// runFuzz runs main on a virtual-time loop and fails t if a task or a
// callback panicked (the loop contains the panic; the fuzz target must
// still see it).
func runFuzz[V any](t *testing.T, main func(t *asyncio.T) (V, error)) (V, error) {
	var panicked error
	v, err := asyncio.Run(func(at *asyncio.T) (V, error) {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
			var pe *asyncio.PanicError
			if errors.As(c.Err, &pe) && panicked == nil {
				panicked = pe
			}
		})
		return main(at)
	}, asyncio.WithVirtualTime())
	if panicked != nil {
		t.Fatalf("panic on the loop: %v", panicked)
	}
	return v, err
}

// FuzzServeRequestHead sends an arbitrary request to the adapter mode's
// loop server (serveOnLoop), in the chunks the script chooses, and reads
// the answer to EOF. The server never panics and always answers with a
// well-formed HTTP response (unless bytes after the head make the kernel
// reset the connection): 200 with "response to PATH" for a request
// line of three fields, 400 otherwise; or closes without answering if the
// request head never ended.
func FuzzServeRequestHead(f *testing.F) {
	f.Add([]byte("GET /r1 HTTP/1.1\r\nHost: x\r\n\r\n"), []byte{5})
	f.Add([]byte("\r\n\r\n"), []byte{1})
	f.Add([]byte("GET\r\n\r\n"), []byte{2, 200})
	f.Add([]byte("GET /a b HTTP/1.1\r\n\r\n"), []byte{0})
	f.Add([]byte("GET /slow HTTP/1.1\r\n"), []byte{3})
	f.Fuzz(func(t *testing.T, req, script []byte) {
		if len(req) > 1<<12 || len(script) > 1<<8 {
			return
		}
		defer watchdog("FuzzServeRequestHead", req, script)()
		// On a simulated network, as FuzzGetOverConn: no loopback port
		// per run.
		reply, err := runFuzz(t, func(t *asyncio.T) ([]byte, error) {
			n := aio.NewSimNetwork(t, 1)
			defer n.Close()
			s, err := serveOnLoop(t, func(string) time.Duration { return time.Millisecond }, aio.WithNetwork(n.Host("server")))
			if err != nil {
				return nil, err
			}
			reply, err := func() ([]byte, error) {
				r, w, err := aio.OpenConnection(t, "server", s.Addr().(*net.TCPAddr).Port, aio.WithNetwork(n.Host("client")))
				if err != nil {
					return nil, err
				}
				defer w.Close()
				if err := sendChunks(t, w, req, script); err != nil {
					return nil, err
				}
				w.WriteEOF()
				return r.Read(t, -1)
			}()
			if serr := s.shutdown(t); err == nil {
				err = serr
			}
			return reply, err
		})
		head, rest, complete := bytes.Cut(req, []byte("\r\n\r\n"))
		if err != nil {
			// The server reads the head only and closes: with bytes after
			// it left unread, the kernel resets the connection (TCP), and
			// the reset may come before the answer is read.
			if complete && len(rest) > 0 && errors.Is(err, syscall.ECONNRESET) {
				return
			}
			t.Fatalf("request %q: %v", req, err)
		}
		if !complete {
			if len(reply) != 0 {
				t.Fatalf("request %q without the end of its head got an answer: %q", req, reply)
			}
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(reply)), nil)
		if err != nil {
			t.Fatalf("request %q: the answer %q is not HTTP: %v", req, reply, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("request %q: the answer %q: %v", req, reply, err)
		}
		path, ok := requestPath(append(head, "\r\n\r\n"...))
		switch {
		case ok && (resp.StatusCode != 200 || string(body) != "response to "+path):
			t.Fatalf("request %q (path %q): got %d %q", req, path, resp.StatusCode, body)
		case !ok && resp.StatusCode != 400:
			t.Fatalf("malformed request %q: got %d %q", req, resp.StatusCode, body)
		}
	})
}

// FuzzGetOverConn serves an arbitrary response, in the chunks the script
// chooses, to the adapter mode's client (getOverConn: net/http's
// Request.Write and http.ReadResponse over the loop's net.Conn adapter).
// Whatever the bytes and the chunking, the client gets what
// http.ReadResponse gets from the same bytes in one piece: the same body,
// or an error exactly when that fails; it never hangs or panics.
func FuzzGetOverConn(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), []byte{3, 1})
	f.Add([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil EOF"), []byte{200})
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), []byte{1, 2, 3})
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"), []byte{7})
	f.Add([]byte("garbage"), []byte{})
	f.Fuzz(func(t *testing.T, resp, script []byte) {
		if len(resp) > 1<<12 || len(script) > 1<<8 {
			return
		}
		defer watchdog("FuzzGetOverConn", resp, script)()
		wantBody, wantErr := func() (string, error) {
			req, _ := http.NewRequest("GET", "http://127.0.0.1/x", nil)
			r, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(resp)), req)
			if err != nil {
				return "", err
			}
			defer r.Body.Close()
			b, err := io.ReadAll(r.Body)
			return string(b), err
		}()
		// On a simulated network: the same sockets and code paths, but no
		// loopback port per run (thousands of runs a second left tens of
		// thousands of ports in TIME_WAIT, and the next target's bind
		// failed with EADDRINUSE).
		got, err := runFuzz(t, func(t *asyncio.T) (string, error) {
			n := aio.NewSimNetwork(t, 1)
			defer n.Close()
			srv, err := aio.StartServer(t, func(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
				defer w.Close()
				if _, err := r.ReadUntil(t, []byte("\r\n\r\n")); err != nil {
					return nil
				}
				return sendChunks(t, w, resp, script)
			}, "", 80, aio.WithNetwork(n.Host("server")))
			if err != nil {
				return "", err
			}
			defer srv.Close()
			return getOverConn(t, "server:80", "/x", aio.WithNetwork(n.Host("client")))
		})
		if (err != nil) != (wantErr != nil) || err == nil && got != wantBody {
			t.Fatalf("response %q: got %q, %v; http.ReadResponse on the bytes gives %q, %v", resp, got, err, wantBody, wantErr)
		}
	})
}

// sendChunks writes data in the chunks the script chooses, with yields
// and virtual sleeps between them.
func sendChunks(t *asyncio.T, w *aio.StreamWriter, data, script []byte) error {
	at := func(i int) int {
		if len(script) == 0 {
			return i * 37
		}
		return int(script[i%len(script)])
	}
	for i, sent := 1, 0; sent < len(data); i++ {
		n := min(1+at(i)%61, len(data)-sent)
		if at(i)&0x80 != 0 {
			n = min(1+at(i+1)*at(i+2), len(data)-sent)
		}
		w.Write(data[sent : sent+n])
		sent += n
		if err := w.Drain(t); err != nil {
			return err
		}
		switch at(i) % 3 {
		case 1:
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
		case 2:
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}
