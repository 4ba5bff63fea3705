//go:build !amd64 && !arm && !arm64 && !loong64 && !mips && !mipsle && !mips64 && !mips64le && !ppc64 && !ppc64le && !riscv64 && !s390x

package gid

// Fast reports whether Token is a few instructions on this architecture.
const Fast = false

// Token returns a value that identifies the calling goroutine among the
// goroutines alive at the same time. On this architecture it is the
// goroutine id, parsed from runtime.Stack (about a microsecond).
func Token() uint64 { return Current() }
