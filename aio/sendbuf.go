//go:build unix

package aio

import "golang.org/x/sys/unix"

// sendBuffer is a stream transport's unsent data (asyncio's write buffer):
// a FIFO of chunks sent with one vectored write. One contiguous slice
// grown by append costs up to three times the bytes it holds while it
// grows (the old array, the new one, and the garbage collector's
// headroom): 256 MB buffered took 826 MB and more of RSS. Chunks are never
// copied again once written, and a chunk is garbage as soon as it is
// sent, so memory stays close to the bytes held.
type sendBuffer struct {
	chunks  [][]byte // chunks[0][off:] is the next byte to send
	off     int
	n       int          // bytes held
	scratch *sendScratch // made by the first vectored send
}

// sendScratch is a sendBuffer's scratch space for vectored sends, kept
// out of the transport until one is needed: most connections never make
// one, and 48 bytes more put every transport in a larger size class.
type sendScratch struct {
	iov    [][]byte
	iovecs []unix.Iovec
}

const (
	// sendChunkSize is the size of the chunks small writes are gathered
	// into; a write at least this large gets a chunk of its own size.
	sendChunkSize = 64 * 1024
	// maxSendIov bounds the chunks one vectored write takes (IOV_MAX is
	// 1024 on Linux and the BSDs).
	maxSendIov = 64
)

func (b *sendBuffer) len() int { return b.n }

// push appends a copy of p.
func (b *sendBuffer) push(p []byte) {
	if len(p) == 0 {
		return
	}
	b.n += len(p)
	if k := len(b.chunks); k > 0 {
		last := b.chunks[k-1]
		if cap(last)-len(last) >= len(p) {
			b.chunks[k-1] = append(last, p...)
			return
		}
	}
	c := make([]byte, len(p), max(len(p), sendChunkSize))
	copy(c, p)
	b.chunks = append(b.chunks, c)
}

// consume drops the first n bytes (which were sent).
func (b *sendBuffer) consume(n int) {
	b.n -= n
	for n > 0 {
		left := len(b.chunks[0]) - b.off
		if n < left {
			b.off += n
			return
		}
		n -= left
		b.chunks[0] = nil // let the garbage collector have it now
		b.chunks = b.chunks[1:]
		b.off = 0
	}
	if len(b.chunks) == 0 {
		b.chunks = nil // drop the emptied backing array too
	}
}

// reset drops everything.
func (b *sendBuffer) reset() { *b = sendBuffer{} }

// front returns the first chunks, at most maxSendIov of them, for one
// vectored write; the slice is scratch space reused by the next call.
func (b *sendBuffer) front() [][]byte {
	k := min(len(b.chunks), maxSendIov)
	iov := append(b.scratch.iov[:0], b.chunks[0][b.off:])
	iov = append(iov, b.chunks[1:k]...)
	b.scratch.iov = iov
	return iov
}

// send writes as much of the buffer as fd takes with one system call and
// consumes what was sent.
func (b *sendBuffer) send(fd int) (int, error) {
	var n int
	var err error
	if len(b.chunks) == 1 {
		n, err = sendFD(fd, b.chunks[0][b.off:])
	} else {
		if b.scratch == nil {
			b.scratch = &sendScratch{iovecs: make([]unix.Iovec, maxSendIov)}
		}
		n, err = sendvFD(fd, b.front(), b.scratch.iovecs)
		clear(b.scratch.iov) // no stale references to sent chunks
	}
	if n > 0 {
		b.consume(n)
	}
	return n, err
}
