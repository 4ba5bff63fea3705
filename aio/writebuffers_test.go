//go:build unix

package aio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// writeBuffers (the vectored-write fallback for pipes where x/sys has no
// writev) writes the buffers in order, and on a full non-blocking pipe
// returns EAGAIN with no count, so the transport waits for writability.
func TestWriteBuffersOrderAndShortWrite(t *testing.T) {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	n, err := writeBuffers(p[1], [][]byte{[]byte("ab"), nil, []byte("cd")})
	if n != 4 || err != nil {
		t.Fatalf("writeBuffers = %d, %v; want 4, nil", n, err)
	}
	got := make([]byte, 8)
	if m, _ := unix.Read(p[0], got); string(got[:m]) != "abcd" {
		t.Fatalf("read %q, want abcd", got[:m])
	}
	if err := unix.SetNonblock(p[1], true); err != nil {
		t.Fatal(err)
	}
	// A full pipe with nothing taken: EAGAIN is returned, not a count.
	for {
		if _, err := unix.Write(p[1], make([]byte, 4096)); err != nil {
			break
		}
	}
	for {
		if _, err := unix.Write(p[1], []byte("q")); err != nil {
			break
		}
	}
	if n, err := writeBuffers(p[1], [][]byte{[]byte("x")}); n != 0 || err != unix.EAGAIN {
		t.Fatalf("writeBuffers on a full pipe = %d, %v; want 0, EAGAIN", n, err)
	}
}
