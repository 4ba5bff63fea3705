//go:build unix

package aio

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// panickyWriter is a protocol whose PauseWriting raises.
type panickyWriter struct{ BaseProtocol }

func (*panickyWriter) PauseWriting()  { panic(&asyncio.ValueError{Msg: "cannot pause"}) }
func (*panickyWriter) ResumeWriting() {}

// A flow control callback that panics is reported with the transport and
// the protocol, as asyncio's _maybe_pause_protocol reports
// "protocol.pause_writing() failed" with its "transport" and "protocol"
// keys (they were missing).
func TestH11PauseWritingPanicContext(t *testing.T) {
	clean(t)
	runVirtual(t, func(tk *asyncio.T) error {
		var got []asyncio.ExceptionContext
		tk.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) { got = append(got, ctx) })
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer r.Close()
		proto := &panickyWriter{}
		tr, _, err := ConnectWritePipe(tk, func() Protocol { return proto }, w)
		if err != nil {
			w.Close()
			return err
		}
		defer tr.Abort()
		tr.Write(make([]byte, 1<<20)) // more than the pipe takes: buffered past the high mark
		if len(got) != 1 {
			return fmt.Errorf("%d reports, want 1: %+v", len(got), got)
		}
		c := got[0]
		if c.Message != "protocol.pause_writing() failed" || c.Transport != tr || c.Protocol != proto || c.Err == nil {
			return fmt.Errorf("context %q err %v transport %v (want %v) protocol %v", c.Message, c.Err, c.Transport, tr, c.Protocol)
		}
		return nil
	})
}
