package asyncio

import (
	"fmt"
	"testing"
)

// Done-callback order on a future with a cancel of its own (gather's
// outer future, whose extras hold the registrations and the cancel):
// CPython 3.13 prints, for the same program,
//
//	('removed', 1) ('cancel', True) ('removed c3', 1) cb2
//	('waiter woke', ('m',)) cb1 ('waiter cancelled', ('m',))
//	('cancel done', False) late
func TestProbeSwitch_GatherCallbackOrderMatchesCPython(t *testing.T) {
	var out []string
	logf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	runVirtual(t, func(tk *T) error {
		f := NewFuture[int](tk)
		g := Gather(tk, CreateTask(tk, func(t *T) (int, error) { return f.Await(t) }))
		cb := func(name string) func() { return func() { logf("%s", name) } }
		c1 := g.AddDoneCallback(cb("cb1"))
		g.AddDoneCallback(cb("cb2"))
		logf("removed %d", g.RemoveDoneCallback(c1))
		w := CreateTask(tk, func(t *T) (int, error) {
			_, err := g.Await(t)
			if ce, ok := err.(*CancelledError); ok {
				logf("waiter woke %q", ce.Msg)
			}
			return 0, err
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		c3 := g.AddDoneCallback(cb("cb3"))
		g.AddDoneCallback(cb("cb1"))
		logf("cancel %v", g.Cancel("m"))
		logf("removed c3 %d", g.RemoveDoneCallback(c3))
		if _, err := w.Await(tk); err != nil {
			if ce, ok := err.(*CancelledError); ok {
				logf("waiter cancelled %q", ce.Msg)
			}
		}
		g.AddDoneCallback(cb("late"))
		logf("cancel done %v", g.Cancel())
		return Sleep(tk, 0)
	})
	checkLines(t, []string{
		"removed 1",
		"cancel true",
		"removed c3 1",
		"cb2",
		`waiter woke "m"`,
		"cb1",
		`waiter cancelled "m"`,
		"cancel done false",
		"late",
	}, out)
}
