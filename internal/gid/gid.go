// Package gid tells goroutines apart. Go has no goroutine identity by
// design; the loop needs one only to reject calls from a goroutine that is
// not running it, and the net.Conn adapter to know which task is calling.
package gid

import (
	"bytes"
	"runtime"
	"sync"
)

var stackBufs = sync.Pool{New: func() any { return new([128]byte) }}

// Current returns the calling goroutine's id. It parses the first line of
// runtime.Stack ("goroutine 123 [running]:"), which costs about a
// microsecond: callers use it off the hot path.
func Current() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// Locked reports whether the calling goroutine is locked to its OS thread
// (runtime.LockOSThread, or a cgo callback). Go has no API for it; the
// first line of runtime.Stack says so ("goroutine 1 [running, locked to
// thread]:"). About a microsecond, like Current.
// The buffer runtime.Stack fills escapes to the heap, so it comes from a
// pool: a loop asks at every RunForever, whose iteration allocates nothing.
func Locked() bool {
	bp := stackBufs.Get().(*[128]byte)
	defer stackBufs.Put(bp)
	n := runtime.Stack(bp[:], false)
	line := bp[:n]
	for i, c := range line {
		if c == '\n' {
			line = line[:i]
			break
		}
	}
	return bytes.Contains(line, []byte(", locked to thread"))
}
