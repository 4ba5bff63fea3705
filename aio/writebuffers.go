//go:build unix

package aio

import "golang.org/x/sys/unix"

// writeBuffers writes bufs in order with write(2), stopping at the first
// short write (writev is not in x/sys/unix on every BSD). An error after
// some bytes went is left for the next call, which meets it again.
func writeBuffers(fd int, bufs [][]byte) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := unix.Write(fd, b)
		if n > 0 {
			total += n
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		if n < len(b) {
			break
		}
	}
	return total, nil
}
