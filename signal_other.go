//go:build !unix

package asyncio

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// checkSignal fails for every signal: without POSIX signals asyncio has no
// add_signal_handler (its Windows loop raises NotImplementedError). Ctrl-C
// still cancels Run's main task (runner_signal.go), which needs only
// os.Interrupt.
func checkSignal(sig os.Signal) error {
	return fmt.Errorf("asyncio: signal handlers are not supported on %s (signal %v): %w", runtime.GOOS, sig, errors.ErrUnsupported)
}

// catchable is never reached: checkSignal fails first.
func catchable(os.Signal) error { return nil }
