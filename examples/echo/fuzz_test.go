//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// FuzzEchoLines sends data to the echo server's handler over a loopback
// connection, in the chunks the script chooses (with yields and virtual
// sleeps between them), then EOF, and reads the reply to EOF. Whatever the
// bytes and the chunking, the reply is each line (the last one may lack
// its newline) upper-cased, in order, nothing lost or repeated, and the
// handler never panics.
func FuzzEchoLines(f *testing.F) {
	f.Add([]byte("hello\ngo-asyncio\n"), []byte{3, 1, 2})
	f.Add([]byte("no newline at the end"), []byte{200, 0})
	f.Add([]byte("\n\n\r\n\xff\xfe\xc3\xa9t\xc3\xa9\n"), []byte{1})
	f.Add(bytes.Repeat([]byte("line\n"), 100), []byte{7, 130, 5, 9})
	f.Fuzz(func(t *testing.T, data, script []byte) {
		if len(data) > 1<<13 || len(script) > 1<<8 {
			return
		}
		at := func(i int) int {
			if len(script) == 0 {
				return i * 37
			}
			return int(script[i%len(script)])
		}
		var want []byte
		for rest := data; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			want = append(want, bytes.ToUpper(line)...)
			rest = rest[len(line):]
		}
		// A hang is a finding too: the watchdog crashes the worker, which
		// makes the fuzzer keep the input. It bounds the run; it times
		// nothing.
		dog := time.AfterFunc(20*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("echo still running after 20 s: %q %q\n%s", data, script, buf[:runtime.Stack(buf, true)]))
		})
		defer dog.Stop()
		var panicked error
		got, err := asyncio.Run(func(t *asyncio.T) ([]byte, error) {
			t.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
				var pe *asyncio.PanicError
				if errors.As(c.Err, &pe) {
					panicked = pe
				}
			})
			server, err := aio.StartServer(t, handle, "127.0.0.1", 0)
			if err != nil {
				return nil, err
			}
			defer server.Close()
			r, w, err := aio.OpenConnection(t, "127.0.0.1", server.Addr().(*net.TCPAddr).Port)
			if err != nil {
				return nil, err
			}
			defer w.Close()
			for i, sent := 1, 0; sent < len(data); i++ {
				n := min(1+at(i)%61, len(data)-sent)
				if at(i)&0x80 != 0 {
					n = min(1+at(i+1)*at(i+2), len(data)-sent)
				}
				w.Write(data[sent : sent+n])
				sent += n
				if err := w.Drain(t); err != nil {
					return nil, err
				}
				d := time.Duration(at(i)%3-1) * time.Millisecond // none, a yield, 1 ms
				if d >= 0 {
					if err := asyncio.Sleep(t, d); err != nil {
						return nil, err
					}
				}
			}
			if err := w.WriteEOF(); err != nil {
				return nil, err
			}
			return r.Read(t, -1)
		}, asyncio.WithVirtualTime())
		if err != nil {
			t.Fatalf("echo of %q: %v", data, err)
		}
		if panicked != nil {
			t.Fatalf("the handler panicked on %q: %v", data, panicked)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("echo of %q:\n got %q\nwant %q", data, got, want)
		}
	})
}
