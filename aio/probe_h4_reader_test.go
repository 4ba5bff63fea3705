//go:build unix

package aio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// StreamReader.SetException(nil) is a mistake: it panics with a
// *ValueError and changes nothing, so the read waiting on the reader still
// gets the data fed next. (It cleared the waiter and failed to set the
// nil error on it: the waiting read hung for ever, and the data fed
// later was never read. CPython 3.13's set_exception(None) raises
// TypeError from waiter.set_exception after letting go of the waiter,
// with the same hang.)
func TestH4SetExceptionNil(t *testing.T) {
	clean(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, DefaultStreamLimit)
		read := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 10) })
		if err := asyncio.Sleep(at, 0); err != nil { // the read waits
			return err
		}
		func() {
			defer func() {
				var ve *asyncio.ValueError
				e, _ := recover().(error)
				log = append(log, fmt.Sprintf("panic ValueError=%v: %v", errors.As(e, &ve), e))
			}()
			r.SetException(nil)
		}()
		r.FeedData([]byte("data"))
		got, err := asyncio.WaitFor(at, time.Second, read)
		log = append(log, fmt.Sprintf("read %q %v; err %v", got, err, r.Err()))
		return nil
	})
	expectLog(t, []string{
		"panic ValueError=true: asyncio: StreamReader.SetException: nil error",
		`read "data" <nil>; err <nil>`,
	}, log)
}
