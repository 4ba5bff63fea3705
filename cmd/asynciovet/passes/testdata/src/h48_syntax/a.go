// Package h48_syntax: unusual but valid shapes (labels, goto, type
// switches, iterators written by hand, closures returning closures,
// generic methods) that no check may crash on.
package h48_syntax

import (
	"iter"
	"log"
	"time"

	"github.com/go-asyncio/asyncio"
)

// An iterator of the program that awaits inside its yield loop.
func items(t *asyncio.T, q *asyncio.Queue[int]) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for {
			v, err := q.Get(t)
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

func consume(t *asyncio.T, q *asyncio.Queue[int]) error {
	for v, err := range items(t, q) {
		if err != nil {
			return err
		}
		log.Print(v)
	}
	return nil
}

// A type switch on the error.
func typeSwitch(t *asyncio.T, ev *asyncio.Event) error {
	switch e := ev.Wait(t).(type) {
	case *asyncio.CancelledError:
		return e
	case nil:
		return nil
	default:
		log.Print(e)
		return nil
	}
}

// Labels and goto.
func retry(t *asyncio.T, lk *asyncio.Lock) error {
	n := 0
again:
	if err := lk.Acquire(t); err != nil {
		n++
		if n < 3 {
			goto again
		}
		return err
	}
	return lk.Release()
}

// A closure returning a closure that awaits.
func maker(t *asyncio.T) func() func() error {
	return func() func() error {
		return func() error { return asyncio.Sleep(t, time.Millisecond) }
	}
}

// A generic type with two parameters and a method taking the task.
type Pair[K comparable, V any] struct {
	q *asyncio.Queue[V]
	k K
}

func (p *Pair[K, V]) Next(t *asyncio.T) (K, V, error) {
	v, err := p.q.Get(t)
	return p.k, v, err
}

func usePair(t *asyncio.T, p *Pair[string, int]) (int, error) {
	_, v, err := p.Next(t)
	return v, err
}

// Labeled loop with break out of a select.
func labeled(t *asyncio.T, ch chan int) int {
	n := 0
loop:
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				break loop
			}
			n += v
		default:
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				break loop
			}
		}
	}
	return n
}
