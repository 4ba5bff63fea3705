//go:build !amd64 && !arm64

package gid

// Fast reports whether Token is a few instructions on this architecture.
const Fast = false

// Token returns a value that identifies the calling goroutine among the
// goroutines alive at the same time. On this architecture it is the
// goroutine id, parsed from runtime.Stack (about a microsecond).
func Token() uint64 { return Current() }
