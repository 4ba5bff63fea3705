// Package gid tells goroutines apart. Go has no goroutine identity by
// design; the loop needs one only to reject calls from a goroutine that is
// not running it, and the net.Conn adapter to know which task is calling.
package gid

import "runtime"

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
