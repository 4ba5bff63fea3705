//go:build unix

package asyncio

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// maxSignal is the largest signal number os/signal handles (its numSig
// is 65 on every system).
const maxSignal = 64

// checkSignal is asyncio's _check_signal: sig must be a signal number the
// system has, 1 to 64; on Linux 32 and 33 are reserved by the C library
// and invalid, as in Python's signal.valid_signals().
func checkSignal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok || s < 1 || s > maxSignal || (runtime.GOOS == "linux" && (s == 32 || s == 33)) {
		return &ValueError{Msg: fmt.Sprintf("invalid signal number %s", signalNumber(sig))}
	}
	return nil
}

// catchable rejects the two signals no process can catch, with asyncio's
// RuntimeError (there, signal.signal fails with EINVAL).
func catchable(sig os.Signal) error {
	if s := sig.(syscall.Signal); s == syscall.SIGKILL || s == syscall.SIGSTOP {
		return runtimeErrorf("sig %d cannot be caught", int(s))
	}
	return nil
}

// signalNumber formats sig as Python prints it: its number.
func signalNumber(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		return fmt.Sprint(int(s))
	}
	return fmt.Sprint(sig)
}
