package asyncio

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Close reports every task pending when it ends, including the tasks the
// deferred calls of the tasks it unwinds create meanwhile (never started:
// reported, not run); nothing of theirs outlives Close.
func TestClose_ReportsTasksCreatedWhileUnwinding(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	var reported []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if c.Task != nil {
			reported = append(reported, c.Message+" "+c.Task.Name())
		}
	})
	ran := false
	main := CreateTask(l, func(tk *T) (int, error) {
		for _, name := range []string{"a", "b"} {
			//asynciovet:ignore unawaitedtask pending at Close on purpose
			CreateTask(tk, func(tk *T) (int, error) {
				defer func() {
					//asynciovet:ignore unawaitedtask created while Close unwinds this task: what Close does with it is the test
					CreateTask(l, func(*T) (int, error) { ran = true; return 0, nil }, WithName("late-"+name))
				}()
				return 0, Sleep(tk, time.Hour)
			}, WithName(name))
		}
		return 0, Sleep(tk, 0)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	slices.Sort(reported)
	want := []string{
		"Task was destroyed but it is pending! a",
		"Task was destroyed but it is pending! b",
		"Task was destroyed but it is pending! late-a",
		"Task was destroyed but it is pending! late-b",
	}
	if !slices.Equal(reported, want) || ran {
		t.Errorf("reported %q (ran=%v), want %q and nothing run", reported, ran, want)
	}
	if n := len(AllTasks(l)); n != 0 {
		t.Errorf("%d tasks listed after Close", n)
	}
}
