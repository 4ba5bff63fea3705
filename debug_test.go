package asyncio

import (
	"regexp"
	"testing"
	"time"
)

var durationRE = regexp.MustCompile(`took \d+\.\d{3} seconds`)

func TestDEBUG1_OffByDefault(t *testing.T) {
	var r eventLog
	l := NewTestLoop()
	r.log("default: %v", l.Debug())
	l.SetDebug(true)
	r.log("SetDebug(true): %v", l.Debug())
	mustClose(t, l)
	l = NewLoop(WithDebug(), WithVirtualTime())
	r.log("WithDebug(): %v", l.Debug())
	mustClose(t, l)
	Run(func(t *T) (int, error) { r.log("Run(WithDebug()): %v", t.Loop().Debug()); return 0, nil }, WithDebug(), WithVirtualTime())
	checkEvents(t, []string{"default: false", "SetDebug(true): true", "WithDebug(): true", "Run(WithDebug()): true"}, &r)
}

func TestDEBUG1_SetDebugWhileRunning(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	handlerLog(l, &r)
	l.CallSoon(func() {
		l.SetDebug(true)
		l.CallSoon(r.logFn("scheduled after SetDebug(true) on the loop's goroutine"))
	})
	runOne(t, l)
	runOne(t, l)
	checkEvents(t, []string{"scheduled after SetDebug(true) on the loop's goroutine"}, &r)
}

func TestDEBUG2_SlowCallbackWarning(t *testing.T) {
	logs := captureSlog(t)
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	l.SetSlowCallbackDuration(0) // every callback and step is "slow"
	l.CallSoon(slowCallback)
	tk := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }, WithName("slow"))
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range logs.take() {
		got = append(got, durationRE.ReplaceAllString(line, "took N.NNN seconds"))
	}
	checkEvents(t, []string{
		"WARN Executing github.com/go-asyncio/asyncio.slowCallback took N.NNN seconds",
		// No stack: it would show where the step ended, not what was
		// slow; the watchdog reports that while the step runs.
		"WARN Executing <Task pending name='slow'> took N.NNN seconds",
		"WARN Executing <Task finished name='slow'> took N.NNN seconds",
		// RunUntilComplete's own done callback (it stops the loop).
		"WARN Executing github.com/go-asyncio/asyncio.(*Loop).RunUntilComplete.func1 took N.NNN seconds",
	}, &eventLog{events: got})

	// Above the threshold only; and nothing at all outside debug mode.
	l.SetSlowCallbackDuration(time.Hour)
	l.CallSoon(slowCallback)
	runOne(t, l)
	l.SetDebug(false)
	l.SetSlowCallbackDuration(0)
	l.CallSoon(slowCallback)
	runOne(t, l)
	if lines := logs.take(); len(lines) != 0 {
		t.Errorf("unexpected warnings: %q", lines)
	}
}

func slowCallback() {}

// DEBUG-3 on an architecture where telling goroutines apart is slow
// (gid.Fast false: the policy is forced here through checkEveryMode):
// outside debug mode only the always-on guards reject a foreign call
// (Stop, Close, fd registration); in debug mode every entry point does, as
// on amd64 and arm64 in every mode (TestTHREAD6_...).
func TestDEBUG3_SlowArchitecturesCheckSchedulingInDebugModeOnly(t *testing.T) {
	saved := checkEveryMode
	checkEveryMode = false
	t.Cleanup(func() { checkEveryMode = saved })
	var r eventLog
	for _, debug := range []bool{false, true} {
		l := NewTestLoop()
		l.SetDebug(debug)
		tk := startTask(l, "main", func(t *T) error {
			for _, c := range []struct {
				op   string
				call func()
			}{
				{"CallSoon", func() { l.CallSoon(r.logFn("foreign CallSoon ran")) }},
				{"Stop", l.Stop},
				{"Close", func() { l.Close() }},
				{"AddReader", func() { l.AddReader(0, func() {}) }},
				{"RemoveWriter", func() { l.RemoveWriter(0) }},
			} {
				r.log("debug=%v %s rejected: %v", debug, c.op, fromForeignGoroutine(c.call) != nil)
			}
			return Sleep(t, 0)
		})
		if err := l.RunUntilComplete(tk); err != nil {
			t.Fatal(err)
		}
		mustClose(t, l)
	}
	checkEvents(t, []string{
		"debug=false CallSoon rejected: false", "debug=false Stop rejected: true", "debug=false Close rejected: true",
		"debug=false AddReader rejected: true", "debug=false RemoveWriter rejected: true",
		"foreign CallSoon ran",
		"debug=true CallSoon rejected: true", "debug=true Stop rejected: true", "debug=true Close rejected: true",
		"debug=true AddReader rejected: true", "debug=true RemoveWriter rejected: true",
	}, &r)
}

func TestDEBUG5_TaskRepr(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	body := func(t *T) (int, error) { return 0, Sleep(t, time.Second) }
	a := CreateTask(l, body, WithName("a"))
	b := CreateTask(l, body, WithName("b"))
	r.log("%v", a)
	runOne(t, l)
	b.Cancel()
	r.log("%v %v", a, b)
	l.RunUntilComplete(a)
	l.RunUntilComplete(b)
	r.log("%v %v", a, b.T())
	checkEvents(t, []string{"<Task pending name='a'>", "<Task pending name='a'> <Task cancelling name='b'>",
		"<Task finished name='a'> <Task cancelled name='b'>"}, &r)
}

// DEBUG-3 with TASK-10: during an eager step the task's goroutine holds
// the loop, and the creator holds it again afterwards, so neither trips
// the debug-mode goroutine check.
func TestDEBUG3_EagerStepHandsTheLoopOverAndBack(t *testing.T) {
	var r eventLog
	_, err := Run(func(tk *T) (int, error) {
		child := CreateTask(tk, func(ct *T) (int, error) {
			ct.Loop().CallSoon(r.logFn("scheduled by the eager step"))
			if err := Sleep(ct, time.Millisecond); err != nil {
				return 0, err
			}
			ct.Loop().CallSoon(r.logFn("scheduled by the child's second step"))
			return 1, nil
		}, WithEagerStart())
		tk.Loop().CallSoon(r.logFn("scheduled by the creator after the eager step"))
		return child.Await(tk)
	}, WithDebug(), WithVirtualTime())
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"scheduled by the eager step",
		"scheduled by the creator after the eager step",
		"scheduled by the child's second step",
	}, &r)
}
