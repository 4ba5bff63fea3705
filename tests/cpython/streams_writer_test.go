//go:build unix

package cpython

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// warnings is a slog handler that keeps the WARN messages: asyncio's
// ResourceWarning is a debug-mode slog warning here, as Python shows
// ResourceWarnings in its development mode only.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (h *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *warnings) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *warnings) WithGroup(string) slog.Handler                { return h }
func (h *warnings) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}

func TestStreams_test_unclosed_server_resource_warnings(t *testing.T) {
	// `del wr; gc.collect()` in the handler is, in Go, a handler that
	// returns without closing its writer: the writer is collected, the
	// connection closed with the warning "unclosed <StreamWriter ...>",
	// nothing reaches the exception handler, and `async with srv` ends.
	w := &warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(w))
	defer slog.SetDefault(old)
	var messages []string
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { messages = append(messages, c.Message) })
		fut := asyncio.NewFuture[bool](tk)
		srv, err := aio.StartServer(tk, func(t *asyncio.T, r *aio.StreamReader, wr *aio.StreamWriter) error {
			fut.SetResult(true)
			return nil // and drops wr unclosed
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, aio.WithServer(tk, srv, func() error {
			port := srv.Addr().(*net.TCPAddr).Port
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = fut.Await(tk) // give the loop time to notice the connection
			return err
		})
	}, asyncio.WithDebug())
	noErr(t, err)
	eq(t, len(messages), 0, "exception handler messages", messages)
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.msgs {
		if strings.HasPrefix(m, "unclosed <StreamWriter") {
			n++
		}
	}
	eq(t, n, 1, "ResourceWarnings", w.msgs)
}

func TestStreams_test_unclosed_resource_warnings(t *testing.T) {
	// `del wr; gc.collect()`: the writer becomes unreachable and is
	// collected; its connection is closed with the warning "unclosed
	// <StreamWriter ...>" (debug mode, as Python shows ResourceWarnings in
	// development mode), and nothing reaches the exception handler.
	w := &warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(w))
	defer slog.SetDefault(old)
	var messages []string
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { messages = append(messages, c.Message) })
		return struct{}{}, withServer(t, tk, false, func(h *httpd) error {
			var tr aio.Transport
			rd, err := func() (*aio.StreamReader, error) { // wr is local to this function
				rd, wr, err := aio.OpenConnection(tk, h.host, h.port)
				if err != nil {
					return nil, err
				}
				tr = wr.Transport()
				wr.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
				return rd, nil
			}()
			if err != nil {
				return err
			}
			data, err := rd.ReadLine(tk)
			noErr(t, err)
			eq(t, string(data), "HTTP/1.0 200 OK\r\n")
			data, err = rd.Read(tk, -1)
			noErr(t, err)
			check(t, strings.HasSuffix(string(data), "\r\n\r\nTest message"))
			check(t, !tr.IsClosing(), "open until the writer is collected")
			for i := 0; !tr.IsClosing(); i++ { // gc.collect(), then the cleanup's close
				if i == 1000 {
					t.Fatal("the collected writer's connection is still open")
				}
				runtime.GC()
				if err := asyncio.Sleep(tk, 0); err != nil {
					return err
				}
			}
			return nil
		})
	}, asyncio.WithDebug())
	noErr(t, err)
	eq(t, len(messages), 0, "exception handler messages", messages)
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.msgs {
		if strings.HasPrefix(m, "unclosed <StreamWriter") {
			n++
		}
	}
	eq(t, n, 1, "ResourceWarnings", w.msgs)
}
