//go:build go1.25 && unix

package asyncio

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// AddSignalHandler inside a bubble used to crash the whole test binary
// ("fatal error: select on synctest channel from outside bubble", from
// os/signal's goroutine), as RunWith's SIGINT watch did before it stopped
// watching in bubbles. It is refused with an error, before anything
// changes; the loop runs on and closes cleanly.
func TestH23_SynctestAddSignalHandlerIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := Run(func(tk *T) (int, error) {
			l := tk.Loop()
			err := l.AddSignalHandler(syscall.SIGUSR1, func() {})
			var re *RuntimeError
			if !errors.As(err, &re) || !errors.Is(err, errors.ErrUnsupported) ||
				!strings.Contains(err.Error(), "synctest") {
				t.Errorf("AddSignalHandler in a bubble = %v, want a *RuntimeError matching ErrUnsupported", err)
			}
			if err := Sleep(tk, time.Second); err != nil {
				return 0, err
			}
			if removed, err := l.RemoveSignalHandler(syscall.SIGUSR1); removed || err != nil {
				t.Errorf("RemoveSignalHandler = %v, %v; want false, nil (nothing was added)", removed, err)
			}
			return 0, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
