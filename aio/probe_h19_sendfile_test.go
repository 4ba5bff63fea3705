//go:build unix

package aio

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A closed *os.File given to SockSendfile or Sendfile was taken for a
// file sendfile(2) cannot send: with fallback false the error was a
// *SendfileNotAvailableError "not a regular file", with fallback true
// the fallback started (Sendfile swapped the transport's protocol and
// paused its reading) and failed on its first read. CPython 3.13 raises
// ValueError "I/O operation on closed file" from both, whatever fallback
// says, before the transport is touched (sock_sendfile and sendfile with
// a closed file object).
func TestH19_SendfileClosedFileIsAValueError(t *testing.T) {
	clean(t)
	f := sendfileFile(t, sendfileData(100))
	f.Close()
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	other := tcpPair(t)
	defer unix.Close(other[0])
	defer unix.Close(other[1])
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, fallback := range []bool{true, false} {
			n, err := SockSendfile(at, other[0], f, 0, 0, fallback)
			log = append(log, fmt.Sprintf("SockSendfile fallback=%v: %d, %s", fallback, n, describe(err)))
		}
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		for _, fallback := range []bool{true, false} {
			n, err := Sendfile(at, tr, f, 0, 0, fallback)
			var ve *asyncio.ValueError
			log = append(log, fmt.Sprintf("Sendfile fallback=%v: %d, %s (ValueError %v)", fallback, n, describe(err), errors.As(err, &ve)))
		}
		log = append(log, fmt.Sprintf("reading %v, own protocol %v", tr.IsReading(), tr.Protocol() == Protocol(p)))
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
	expectLog(t, []string{
		"SockSendfile fallback=true: 0, ValueError I/O operation on closed file",
		"SockSendfile fallback=false: 0, ValueError I/O operation on closed file",
		"client:made",
		"Sendfile fallback=true: 0, ValueError I/O operation on closed file (ValueError true)",
		"Sendfile fallback=false: 0, ValueError I/O operation on closed file (ValueError true)",
		"reading true, own protocol true",
		"client:lost <nil>",
	}, log)
}
