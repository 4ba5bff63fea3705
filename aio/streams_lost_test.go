//go:build unix

package aio

import (
	"fmt"
	"syscall"
	"testing"

	asyncio "github.com/go-asyncio/asyncio"
)

// After ConnectionLost a stream protocol has let go of its reader, as
// asyncio's StreamReaderProtocol does: data, EOF and a second loss that
// still arrive are ignored (no "feed_data after feed_eof" panic, nothing
// buffered after an error), and EOFReceived still answers true. The
// figures are CPython 3.13's for the same calls: [True, b"", True,
// ConnectionResetError('boom')].
func TestStreamProtocol_CallsAfterConnectionLostIgnored(t *testing.T) {
	clean(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		for _, lost := range []error{nil, syscall.ECONNRESET} {
			r := NewStreamReader(at, DefaultStreamLimit)
			p := NewStreamReaderProtocol(r)
			p.ConnectionLost(lost)
			p.DataReceived([]byte("late"))
			log = append(log, fmt.Sprintf("eof_received=%v", p.EOFReceived()))
			p.ConnectionLost(nil)
			b, err := r.Read(at, -1)
			log = append(log, fmt.Sprintf("%q %v", b, err))
		}
		return nil
	})
	expectLog(t, []string{`eof_received=true`, `"" <nil>`, `eof_received=true`, `"" connection reset by peer`}, log)
}
