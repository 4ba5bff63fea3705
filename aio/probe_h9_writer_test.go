//go:build unix

package aio

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// In debug mode a StreamWriter collected unclosed warns as CPython 3.13's
// StreamWriter.__del__ (f"unclosed {self!r}", after self.close()): its
// repr, with the transport, now closing, and the reader. CPython
// (PYENV_VERSION=3.13.0, python3 -W always; r, w = await
// asyncio.open_connection(sock=a); del w; gc.collect()):
//
//	ResourceWarning: unclosed <StreamWriter transport=<_SelectorSocketTransport
//	closing fd=6 ...> reader=<StreamReader transport=<_SelectorSocketTransport
//	closing fd=6 ...>>>
//
// The warning had no reader and showed the transport still open.
func TestH9UnclosedWriterWarningNamesTransportAndReader(t *testing.T) {
	clean(t)
	warnings := &h4Warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(warnings))
	defer slog.SetDefault(old)
	var want string
	_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[1])
		r, err := openAndDropWriter(at, fds[0])
		if err != nil {
			return struct{}{}, err
		}
		for i := 0; r.transport == nil || !r.transport.IsClosing(); i++ { // gc.collect(), then the cleanup's close
			if i == 1000 {
				return struct{}{}, fmt.Errorf("the collected writer's connection is still open")
			}
			runtime.GC()
			if err := asyncio.Sleep(at, 0); err != nil {
				return struct{}{}, err
			}
		}
		want = fmt.Sprintf("WARN unclosed <StreamWriter transport=<socketTransport fd=%d closing> reader=%v>", fds[0], r)
		return struct{}{}, settle(at)
	}, asyncio.WithVirtualTime(), asyncio.WithDebug())
	if err != nil {
		t.Fatal(err)
	}
	warnings.mu.Lock()
	defer warnings.mu.Unlock()
	expectLog(t, []string{want}, warnings.msgs)
}

// openAndDropWriter opens a stream on fd and keeps only its reader.
//
//go:noinline
func openAndDropWriter(at *asyncio.T, fd int) (*StreamReader, error) {
	r, _, err := OpenUnixConnection(at, "", WithSocket(fd))
	return r, err
}
