package asyncio

import (
	"fmt"
	"testing"
	"time"
)

// Cancel messages (T.cancelMsg is a *string since f011c3b) against
// CPython 3.13 running the same program (the expected lines are its
// output, with Python's args tuples written as Go strings: ('a',) is "a",
// () is ""):
//
//	('1', ('a',), ())     parked: cancel("a"), uncancel(), cancel()
//	('2', ('b',), ())     unstarted: cancel("a"), uncancel(), cancel("b")
//	('3', False) ('3b', ())  unstarted: cancel("a"), uncancel(): it runs
//	('caught', ('a',)) ('4', ('b',), 3)  a task that catches the first
//	('5', ()) ('5b', ('y',))  cancels itself, then returns
//	('6', (), ()) ('6b', ('y',), ())  cancels itself, then awaits
//	('7', ('f',), ())     its future cancelled "f", then the task "t"
//	('8', ('e1',))        eager, parked: cancel("e1"), cancel("e2")
func TestProbeSwitch_CancelMessagesMatchCPython(t *testing.T) {
	var out []string
	res := func(aw Awaitable) string {
		err := aw.Err()
		if ce, ok := err.(*CancelledError); ok {
			return fmt.Sprintf("%q", ce.Msg)
		}
		return fmt.Sprint(err)
	}
	cancel := func(aw Awaitable, msgs ...string) {
		for _, m := range msgs {
			if m == "-" {
				aw.Cancel()
			} else {
				aw.Cancel(m)
			}
		}
	}
	tick := func(tk *T, n int) {
		for range n {
			//asynciovet:ignore droppedcancel test scaffolding: lets the other tasks run n steps; the cancellations under test are read from the tasks that receive them
			_ = Sleep(tk, 0)
		}
	}
	parked := func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }
	selfCancel := func(await bool, msgs ...string) func(*T) (int, error) {
		return func(tk *T) (int, error) {
			cancel(tk, msgs...)
			if await {
				return 0, Sleep(tk, 0)
			}
			return 1, nil
		}
	}
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		a := CreateTask(tk, parked)
		tick(tk, 1)
		cancel(a, "a")
		a.Uncancel()
		cancel(a, "-")
		tick(tk, 2)
		out = append(out, "1 "+res(a)+" "+res(a))

		a = CreateTask(tk, parked)
		cancel(a, "a")
		a.Uncancel()
		cancel(a, "b")
		tick(tk, 2)
		out = append(out, "2 "+res(a)+" "+res(a))

		a = CreateTask(tk, parked)
		cancel(a, "a")
		a.Uncancel()
		tick(tk, 1)
		out = append(out, fmt.Sprint("3 ", a.Done()))
		cancel(a, "-")
		tick(tk, 2)
		out = append(out, "3b "+res(a))

		a = CreateTask(tk, func(tk *T) (int, error) {
			if err := Sleep(tk, time.Hour); err != nil {
				out = append(out, "caught "+fmt.Sprintf("%q", err.(*CancelledError).Msg))
			}
			return 0, Sleep(tk, time.Hour)
		})
		tick(tk, 1)
		cancel(a, "a")
		tick(tk, 2)
		cancel(a, "b", "-")
		tick(tk, 2)
		out = append(out, fmt.Sprint("4 ", res(a), " ", a.Cancelling()))

		a = CreateTask(tk, selfCancel(false, "x", "-"))
		tick(tk, 2)
		out = append(out, "5 "+res(a))
		a = CreateTask(tk, selfCancel(false, "-", "y"))
		tick(tk, 2)
		out = append(out, "5b "+res(a))
		a = CreateTask(tk, selfCancel(true, "x", "-"))
		tick(tk, 2)
		out = append(out, "6 "+res(a)+" "+res(a))
		a = CreateTask(tk, selfCancel(true, "-", "y"))
		tick(tk, 2)
		out = append(out, "6b "+res(a)+" "+res(a))

		f := NewFuture[int](l)
		a = CreateTask(tk, func(tk *T) (int, error) { return f.Await(tk) })
		tick(tk, 1)
		cancel(f, "f")
		cancel(a, "t")
		tick(tk, 2)
		out = append(out, "7 "+res(a)+" "+res(a))

		a = CreateTask(tk, parked, WithEagerStart())
		cancel(a, "e1", "e2")
		tick(tk, 2)
		out = append(out, "8 "+res(a))
		return nil
	})
	checkLines(t, []string{
		`1 "a" ""`,
		`2 "b" ""`,
		`3 false`,
		`3b ""`,
		`caught "a"`,
		`4 "b" 3`,
		`5 ""`,
		`5b "y"`,
		`6 "" ""`,
		`6b "y" ""`,
		`7 "f" ""`,
		`8 "e1"`,
	}, out)
}
