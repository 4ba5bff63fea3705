package blockingcall

import "github.com/go-asyncio/asyncio"

// With a goto in the file, control may enter a statement list in its
// middle: the channel rules, which follow straight-line code, stand down.

func closeSkippedByGoto(t *asyncio.T, ch chan int, skip bool) int {
	if skip {
		goto read
	}
	close(ch)
read:
	return <-ch // want `channel receive inside a task blocks`
}

func sendRepeatedByGoto(t *asyncio.T) {
	ch := make(chan int, 1)
	n := 0
again:
	ch <- n // want `channel send inside a task blocks`
	n++
	if n < 2 {
		goto again
	}
}
