package asyncio

import "time"

// timerHeap is a 4-ary min-heap of timers ordered by deadline, then by
// scheduling order. Each slot carries its timer's sort key, so sifting
// compares slots in one contiguous array instead of chasing a pointer to
// every TimerHandle (the cache misses of that chase were most of the cost
// of firing many timers), and the four children of a node share one or
// two cache lines while the tree is half as deep as a binary heap.
type timerHeap []timerSlot

type timerSlot struct {
	when time.Duration
	seq  uint64
	t    *TimerHandle
}

func (a *timerSlot) before(b *timerSlot) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

// first returns the earliest timer; the heap must not be empty.
func (h timerHeap) first() *TimerHandle { return h[0].t }

// push adds t.
func (h *timerHeap) push(t *TimerHandle) {
	*h = append(*h, timerSlot{when: t.when, seq: t.seq, t: t})
	h.up(len(*h) - 1)
}

// pop removes and returns the earliest timer, which leaves the heap.
func (h *timerHeap) pop() *TimerHandle {
	old := *h
	n := len(old) - 1
	t := old[0].t
	old[0] = old[n]
	old[n] = timerSlot{}
	*h = old[:n]
	if n > 1 {
		h.down(0)
	}
	t.inHeap = false
	return t
}

func (h timerHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (h timerHeap) down(i int) {
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The smallest of the (up to four) children.
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// compact removes every cancelled timer and restores the heap property.
func (h *timerHeap) compact() {
	live := (*h)[:0]
	for _, s := range *h {
		if s.t.cancelled {
			s.t.inHeap = false
			continue
		}
		live = append(live, s)
	}
	clear((*h)[len(live):])
	*h = live
	// Heapify from the last parent down; an empty or one-element heap has
	// none ((0-2)/4 truncates to 0 in Go, so the guard is needed).
	for i := (len(live) - 2) / 4; len(live) > 1 && i >= 0; i-- {
		live.down(i)
	}
}
