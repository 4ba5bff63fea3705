package cpython

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// test_staggered.py: asyncio.staggered.staggered_race(coro_fns, delay) is
// asyncio.StaggeredRace(t, delay, fns...); delay=None is a negative delay,
// a winner_index of None is -1.

func TestStaggered_test_empty(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		winner, index, excs, err := asyncio.StaggeredRace[string](tk, -1)
		noErr(t, err)
		eq(t, winner, "")
		eq(t, index, -1)
		eq(t, len(excs), 0)
		return nil
	})
}

func TestStaggered_test_one_successful(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		coro := func(index int) func(*asyncio.T) (string, error) {
			return func(*asyncio.T) (string, error) { return fmt.Sprintf("Res: %d", index), nil }
		}
		winner, index, excs, err := asyncio.StaggeredRace(tk, -1, coro(0), coro(1))
		noErr(t, err)
		eq(t, winner, "Res: 0")
		eq(t, index, 0)
		eq(t, excs, []error{nil})
		return nil
	})
}

func TestStaggered_test_first_error_second_successful(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		coro := func(index int) func(*asyncio.T) (string, error) {
			return func(*asyncio.T) (string, error) {
				if index == 0 {
					return "", exc("ValueError", index)
				}
				return fmt.Sprintf("Res: %d", index), nil
			}
		}
		winner, index, excs, err := asyncio.StaggeredRace(tk, -1, coro(0), coro(1))
		noErr(t, err)
		eq(t, winner, "Res: 1")
		eq(t, index, 1)
		eq(t, len(excs), 2)
		check(t, isClass(excs[0], "ValueError"), excs[0])
		check(t, excs[1] == nil, excs[1])
		return nil
	})
}

func TestStaggered_test_first_timeout_second_successful(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		coro := func(index int) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if index == 0 {
					if err := asyncio.Sleep(t, 10*time.Second); err != nil { // much bigger than delay
						return "", err
					}
				}
				return fmt.Sprintf("Res: %d", index), nil
			}
		}
		start := tk.Loop().Time()
		winner, index, excs, err := asyncio.StaggeredRace(tk, 100*ms, coro(0), coro(1))
		noErr(t, err)
		eq(t, winner, "Res: 1")
		eq(t, index, 1)
		eq(t, len(excs), 2)
		check(t, isClass(excs[0], "CancelledError"), excs[0])
		check(t, excs[1] == nil, excs[1])
		// The virtual clock: the second started after the delay, and the
		// first was cancelled at once.
		eq(t, tk.Loop().Time()-start, 100*ms, "elapsed")
		return nil
	})
}

func TestStaggered_test_none_successful(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		coro := func(index int) func(*asyncio.T) (string, error) {
			return func(*asyncio.T) (string, error) { return "", exc("ValueError", index) }
		}
		winner, index, excs, err := asyncio.StaggeredRace(tk, -1, coro(0), coro(1))
		noErr(t, err)
		eq(t, winner, "")
		eq(t, index, -1)
		eq(t, len(excs), 2)
		check(t, isClass(excs[0], "ValueError"), excs[0])
		check(t, isClass(excs[1], "ValueError"), excs[1])
		return nil
	})
}
