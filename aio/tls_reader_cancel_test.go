//go:build unix

package aio

import (
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// The tasks a TLS connection runs on its own (the client's reader, the
// server's handshake-then-reader, StartTLS's reader) end cancelled when
// they are cancelled, as Runner.Close (asyncio.Run's end) cancels them:
// in debug mode none is reported as a task that swallowed a cancellation
// (found by probe h44: Runner.Close of a loop with a TLS connection open,
// or mid-handshake, reported "Task ... swallowed a cancellation" for the
// library's own tasks).
func TestTLSInternalTasksEndCancelled(t *testing.T) {
	srvCfg, cliCfg := testTLSConfigs(t)
	for _, moment := range []string{"open", "mid-handshake", "starttls"} {
		t.Run(moment, func(t *testing.T) {
			clean(t)
			r := asyncio.NewRunner(asyncio.WithDebug(), asyncio.WithVirtualTime())
			l := r.Loop()
			var reports []string
			l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
				reports = append(reports, c.Message)
			})
			_, err := asyncio.RunWith(r, func(at *asyncio.T) (struct{}, error) {
				switch moment {
				case "open":
					srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(srvCfg))
					if err != nil {
						return struct{}{}, err
					}
					rd, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(cliCfg))
					if err != nil {
						return struct{}{}, err
					}
					w.Write([]byte("hi\n"))
					if _, err := rd.ReadLine(at); err != nil {
						return struct{}{}, err
					}
					keep = append(keep, w) // open until Runner.Close
				case "mid-handshake":
					// A server whose client never sends its hello: the
					// server's task waits in the handshake.
					srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(srvCfg))
					if err != nil {
						return struct{}{}, err
					}
					_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
					if err != nil {
						return struct{}{}, err
					}
					keep = append(keep, w)
					if err := settle(at); err != nil {
						return struct{}{}, err
					}
				case "starttls":
					srv, err := StartServer(at, func(at *asyncio.T, rd *StreamReader, w *StreamWriter) error {
						if err := w.StartTLS(at, srvCfg, ""); err != nil {
							return err
						}
						return echoLines("")(at, rd, w)
					}, "127.0.0.1", 0)
					if err != nil {
						return struct{}{}, err
					}
					rd, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
					if err != nil {
						return struct{}{}, err
					}
					if err := w.StartTLS(at, cliCfg, "127.0.0.1"); err != nil {
						return struct{}{}, err
					}
					w.Write([]byte("hi\n"))
					if _, err := rd.ReadLine(at); err != nil {
						return struct{}{}, err
					}
					keep = append(keep, w)
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			keep = nil
			for _, rep := range reports {
				if strings.Contains(rep, "swallowed a cancellation") {
					t.Errorf("reported: %s", rep)
				}
			}
		})
	}
}

// keep holds writers open until the test's Runner.Close.
var keep []*StreamWriter
