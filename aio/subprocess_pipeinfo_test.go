//go:build unix

package aio

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// collectGarbage runs two garbage collections and waits, each time, until
// the finalizers they queued have had their turn (a finalizer of its own
// tells when).
func collectGarbage() {
	for range 2 {
		done := make(chan struct{})
		// Not a tiny allocation: it is finalized on its own.
		runtime.SetFinalizer(new([64]byte), func(*[64]byte) { close(done) })
		runtime.GC()
		<-done
	}
}

// Each pipe of a child has asyncio's "pipe" extra info, as
// _UnixReadPipeTransport and _UnixWritePipeTransport do (there the
// Popen's stdin, stdout and stderr): the parent's end as an *os.File of
// the transport's own descriptor. Fd leaves the descriptor non-blocking.
// Nothing but the transport keeping the file, a garbage collection does
// not close the descriptor under it (the pipes still work after one), and
// the transport closes the file itself when the pipe ends, so that no
// finalizer is left to close the number again.
func TestSubprocess_PipeExtraInfo(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var log []string
		var p *procRecorder
		runNet(t, func(at *asyncio.T) error {
			p = newProcRecorder(at)
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, `read line; echo "got $line"; echo err >&2`)
			if err != nil {
				return err
			}
			for fd := range 3 {
				pt := tr.PipeTransport(fd)
				f, ok := pt.ExtraInfo("pipe").(*os.File)
				if !ok {
					log = append(log, fmt.Sprintf("fd %d: pipe %v", fd, pt.ExtraInfo("pipe")))
					continue
				}
				own := -1
				switch x := pt.(type) {
				case *readPipeTransport:
					own = x.fd
				case *writePipeTransport:
					own = x.fd
				}
				flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
				nb := flags&unix.O_NONBLOCK != 0
				log = append(log, fmt.Sprintf("fd %d: the transport's file %v, PipeFile %v, non-blocking %v %v",
					fd, int(f.Fd()) == own, PipeFile(pt) == f, nb, err))
			}
			collectGarbage() // no copy of the files is left but the transports'
			if err := tr.PipeTransport(0).Write([]byte("hi\n")); err != nil {
				return err
			}
			if _, err := p.done.Await(at); err != nil {
				return err
			}
			for fd := range 3 {
				_, err := PipeFile(tr.PipeTransport(fd)).Stat()
				log = append(log, fmt.Sprintf("fd %d: file closed %v", fd, errors.Is(err, os.ErrClosed)))
			}
			return nil
		})
		expectLog(t, []string{
			"fd 0: the transport's file true, PipeFile true, non-blocking true <nil>",
			"fd 1: the transport's file true, PipeFile true, non-blocking true <nil>",
			"fd 2: the transport's file true, PipeFile true, non-blocking true <nil>",
			"fd 0: file closed true",
			"fd 1: file closed true",
			"fd 2: file closed true",
		}, log)
		for _, want := range []string{"data 1 got hi\n", "data 2 err\n", "exited 0 true", "lost <nil>"} {
			found := false
			for _, e := range p.log {
				found = found || e == want
			}
			if !found {
				t.Errorf("log %q: no %q", p.log, want)
			}
		}
	})
}
