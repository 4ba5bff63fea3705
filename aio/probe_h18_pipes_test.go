//go:build unix

package aio

import (
	"errors"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// ConnectReadPipe and ConnectWritePipe with a closed file are a
// *ValueError naming the call and the file, before the protocol factory
// runs (asyncio: ValueError "I/O operation on closed file", from
// pipe.fileno()). They returned internal/poll's bare "use of closed
// file", an errors.New that nothing could match.
func TestH18_ConnectPipeClosedFile(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		r.Close()
		w.Close()
		calls := 0
		factory := func() Protocol { calls++; return &BaseProtocol{} }
		_, _, err = ConnectReadPipe(at, factory, r)
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || ve.Msg != "ConnectReadPipe: |0 is closed" {
			t.Errorf("ConnectReadPipe: %s", describe(err))
		}
		_, _, err = ConnectWritePipe(at, factory, w)
		if !errors.As(err, &ve) || ve.Msg != "ConnectWritePipe: |1 is closed" {
			t.Errorf("ConnectWritePipe: %s", describe(err))
		}
		if calls != 0 {
			t.Errorf("the protocol factory ran %d times", calls)
		}
		return nil
	})
}
