//go:build unix && !linux

package aio

// haveSendfile: only the fallback is used here. The BSDs and macOS have
// a sendfile(2) of their own, with other arguments and partial-send
// rules; asyncio uses it, this package does not yet.
const haveSendfile = false

var sendfileSyscall = func(outfd, infd int, off *int64, n int) (int, error) {
	panic("unreachable: no sendfile(2) on this platform")
}
