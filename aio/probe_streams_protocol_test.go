//go:build unix

package aio

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

// TestProbeStreams_ProtocolDataReceivedCopies: the protocol
// NewStreamReaderProtocol returns is a public Protocol, and whoever calls
// its DataReceived (a protocol that unwraps a framing into a scratch
// buffer and forwards the payload, a transport of the user's) may reuse
// the slice once the call returns, as io.Writer's contract allows. The
// reader must not keep it: CPython 3.13's feed_data copies what it is
// given, so a bytearray reused after data_received does not change what
// is read (PYENV_VERSION=3.13.0):
//
//	r = asyncio.StreamReader(limit=100); p = asyncio.StreamReaderProtocol(r)
//	buf = bytearray(b"abc"); p.data_received(buf); buf[:] = b"xyz"
//	p.data_received(buf); buf[:] = b"123"
//	await r.read(6)      # b'abcxyz'
//	buf2 = bytearray(b"line\n"); p.data_received(buf2); buf2[:] = b"XXXX\n"
//	await r.readline()   # b'line\n'
func TestProbeStreams_ProtocolDataReceivedCopies(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 100)
		p := NewStreamReaderProtocol(r)
		buf := []byte("abc")
		p.DataReceived(buf)
		copy(buf, "xyz")
		p.DataReceived(buf)
		copy(buf, "123")
		b, err := r.Read(at, 6)
		log = append(log, pyOutcome(r, "read", b, err))
		buf2 := []byte("line\n")
		p.DataReceived(buf2)
		copy(buf2, "XXXX\n")
		b, err = r.ReadLine(at)
		log = append(log, pyOutcome(r, "readline", b, err))
		return nil
	})
	expectLog(t, []string{
		"read: b'abcxyz' buf=b'' eof=False",
		"readline: b'line\\n' buf=b'' eof=False",
	}, log)
}
