//go:build amd64 || arm || arm64 || loong64 || mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x

package gid

// Fast reports whether Token is a few instructions on this architecture.
const Fast = true

// getg returns the address of the calling goroutine's runtime descriptor
// (the runtime's g), read from thread-local storage on amd64 and from the
// g register on arm64.
func getg() uintptr

// Token returns a value that identifies the calling goroutine among the
// goroutines alive at the same time: the address of its runtime
// descriptor. The runtime reuses descriptors of goroutines that have
// exited, so a token identifies a goroutine only while it is alive, which
// is all the loop needs (it compares the caller with the goroutine holding
// the loop, which is alive by definition).
func Token() uint64 { return uint64(getg()) }
