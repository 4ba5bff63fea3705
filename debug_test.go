package asyncio

import (
	"fmt"
	"regexp"
	"strings"
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
		"WARN Executing <Task pending name='slow'> took N.NNN seconds stack=...",
		"WARN Executing <Task finished name='slow'> took N.NNN seconds stack=...",
		// RunUntilComplete's own done callback (it stops the loop).
		"WARN Executing github.com/go-asyncio/asyncio.(*Loop).Stop-fm took N.NNN seconds",
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

func TestDEBUG3_ForeignGoroutineCallSoonPanics(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	var r eventLog
	foreign := func(name string, call func()) string {
		out := make(chan string)
		go func() {
			defer func() { out <- fmt.Sprint(recover()) }()
			call()
		}()
		return name + ": " + <-out
	}
	tk := CreateTask(l, func(t *T) (int, error) {
		// The loop runs on this task's goroutine now: its own calls pass.
		l.CallSoon(func() {})
		if err := Sleep(t, time.Second); err != nil {
			return 0, err
		}
		r.log("%s", foreign("CallSoon", func() { l.CallSoon(func() {}) }))
		r.log("%s", foreign("CallLater", func() { l.CallLater(time.Second, func() {}) }))
		r.log("%s", foreign("CallAt", func() { l.CallAt(time.Second, func() {}) }))
		r.log("%s", foreign("CallSoonThreadsafe", func() {
			if _, err := l.CallSoonThreadsafe(r.logFn("threadsafe ran")); err != nil {
				panic(err)
			}
		}))
		return 0, Sleep(t, 0)
	})
	l.CallSoon(func() {
		r.log("%s", foreign("from a callback", func() { l.CallSoon(func() {}) }))
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	const msg = "asyncio: Non-thread-safe operation invoked on an event loop other than the current one"
	checkEvents(t, []string{
		"from a callback: " + msg,
		"CallSoon: " + msg,
		"CallLater: " + msg,
		"CallAt: " + msg,
		"CallSoonThreadsafe: <nil>",
		"threadsafe ran",
	}, &r)
}

// DEBUG-3 / THREAD-6: in debug mode, completing a future or cancelling a
// task from a goroutine that is not running the loop panics (asyncio's
// debug-mode call_soon raises there), and before anything changes: the
// future stays pending and can still be completed properly. Outside debug
// mode it is not checked.
func TestDEBUG3_ForeignGoroutineCompletingFuturePanics(t *testing.T) {
	for _, debug := range []bool{true, false} {
		l := NewLoop(WithVirtualTime())
		l.SetDebug(debug)
		fut := NewFuture[int](l)
		var got []string
		try := func(name string, call func()) {
			out := make(chan string)
			go func() {
				defer func() { out <- fmt.Sprint(recover()) }()
				call()
			}()
			got = append(got, name+": "+<-out)
		}
		waiter := CreateTask(l, func(t *T) (int, error) { return fut.Await(t) })
		sleeper := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
		main := CreateTask(l, func(t *T) (int, error) {
			Sleep(t, 0) // the others park
			if debug {
				try("SetResult", func() { fut.SetResult(1) })
				try("Task.Cancel", func() { sleeper.Cancel() })
			}
			if !fut.Done() && sleeper.Cancelling() == 0 {
				got = append(got, "untouched")
			}
			fut.SetResult(2)
			sleeper.Cancel()
			return 0, nil
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		if v, err := waiter.Result(); !waiter.Done() {
			l.RunUntilComplete(waiter)
			v, err = waiter.Result()
			if v != 2 || err != nil {
				t.Errorf("debug=%v: waiter got %d, %v; want 2, nil", debug, v, err)
			}
		} else if v != 2 || err != nil {
			t.Errorf("debug=%v: waiter got %d, %v; want 2, nil", debug, v, err)
		}
		l.RunUntilComplete(sleeper)
		mustClose(t, l)
		if !debug {
			continue
		}
		if len(got) == 3 && got[2] == "untouched" {
			got = got[:2]
		} else {
			t.Errorf("debug mode: the future or the task was changed by the failed foreign call: %q", got)
		}
		for _, g := range got {
			if !strings.Contains(g, "Non-thread-safe operation invoked on an event loop other than the current one") {
				t.Errorf("debug mode: %s; want the non-thread-safe panic", g)
			}
		}
		if len(got) != 2 {
			t.Errorf("got %d results, want 2", len(got))
		}
	}
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
