//go:build unix && !linux

package aio

// watchExit watches for the child's exit with one goroutine blocked in
// cmd.Wait that reports on the loop (asyncio's ThreadedChildWatcher):
// kqueue's EVFILT_PROC could do without it, but the core's selector has
// no place for it.
func (tr *subprocessTransport) watchExit() { tr.watchOnGoroutine() }

// reapNow waits for the goroutine that reaps the killed child.
func (tr *subprocessTransport) reapNow() {
	<-tr.watch.waitDone
	tr.unwatch(&tr.watch.exitPipe)
}

// exitWatchGoroutine exists for the tests, which set it on Linux.
var exitWatchGoroutine = true

// pidfdWatch tells the tests that there is no pidfd watch here.
const pidfdWatch = false

// pipeHeld bounds readPipeTransport.drain by one read's worth (maxRead)
// where golang.org/x/sys has no FIONREAD: a pipe on these systems holds
// at most 64 KiB, less than that, so the drain still takes all the child
// left, and stops once it has read that much (and once more, for the
// EOF).
func pipeHeld(int) int { return maxRead }
