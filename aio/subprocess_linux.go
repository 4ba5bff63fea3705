//go:build linux

package aio

import (
	"golang.org/x/sys/unix"
)

// exitWatchGoroutine makes watchExit use the portable goroutine even where
// pidfds work, so that the tests cover both.
var exitWatchGoroutine = false

// watchExit watches for the child's exit with a pidfd in the loop's
// selector (asyncio's PidfdChildWatcher): no thread or goroutine per
// child. The pidfd opened after Start names the right process: nobody
// reaps the child but us, so its pid cannot be reused until we do. Where
// pidfds are missing (Linux before 5.3) or forbidden (seccomp), the
// portable goroutine takes over.
func (tr *subprocessTransport) watchExit() {
	if !exitWatchGoroutine {
		if fd, err := unix.PidfdOpen(tr.pid, 0); err == nil {
			if err := tr.loop.AddReader(fd, tr.pidfdReady); err == nil {
				tr.watch.pidfd = fd
				return
			}
			unix.Close(fd)
		}
	}
	tr.watchOnGoroutine()
}

// pidfdReady runs when the child has exited: it reaps it, which cannot
// block any more.
func (tr *subprocessTransport) pidfdReady() {
	tr.unwatch(&tr.watch.pidfd)
	_ = tr.cmd.Wait() // an *exec.ExitError is an exit status
	tr.processExited()
}

// reapNow reaps the killed child when the loop closes: Wait returns as
// soon as SIGKILL has done its work.
func (tr *subprocessTransport) reapNow() {
	if tr.watch.waitDone != nil {
		<-tr.watch.waitDone
		tr.unwatch(&tr.watch.exitPipe)
		return
	}
	tr.unwatch(&tr.watch.pidfd)
	_ = tr.cmd.Wait()
}

// pidfdWatch tells the tests that the default watch is the pidfd.
const pidfdWatch = true

// pipeHeld returns the bytes the pipe fd holds (FIONREAD), which bounds
// readPipeTransport.drain. Should the call fail, it answers one read's
// worth (maxRead), as elsewhere.
func pipeHeld(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
	if err != nil {
		return maxRead
	}
	return n
}
