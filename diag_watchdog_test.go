package asyncio

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// blockedReports installs an exception handler that forwards "Event loop
// blocked" reports to the returned channel (without blocking: the handler
// runs on the watchdog's goroutine) and logs every other report.
func blockedReports(l *Loop, r *eventLog) chan ExceptionContext {
	reports := make(chan ExceptionContext, 16)
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if !strings.HasPrefix(c.Message, "Event loop blocked") {
			r.log("handler: %s", c.Message)
			return
		}
		select {
		case reports <- c:
		default:
			r.log("handler: report dropped")
		}
	})
	return reports
}

// blockedOnReport is a step or callback that blocks the loop on a channel
// receive until the watchdog reports it, with a 1 ns threshold. A report
// made before the receive (the machine stalled the loop first: with such a
// threshold any pause is a block) is set aside and the watchdog re-armed.
// Then, still holding the loop, it lets the watchdog look a few more
// times, counts the reports that came meanwhile (once per step: none), and
// turns the watchdog off.
func blockedOnReport(l *Loop, reports chan ExceptionContext) (c ExceptionContext, more int) {
	for {
		l.SetBlockedThreshold(time.Nanosecond) // (re)arms the watchdog
		c = <-reports                          // the blocking call the report must show
		if stateOf(c.Stack) == "chan receive" && strings.Contains(firstFrame(c.Stack), "asyncio.blockedOnReport") {
			break
		}
	}
	for start := l.wd.looks.Load(); l.wd.looks.Load() < start+3; {
		runtime.Gosched()
	}
	more = len(reports)
	l.SetBlockedThreshold(0)
	return c, more
}

// Issue 10 point 6: a task step that blocks the loop (here on a channel
// receive) is reported while it is still blocked, once, with the stack of
// the task's goroutine: the blocking call on top, the task's own function
// below it, and how to fix it.
func TestWatchdog_ReportsBlockedTaskStepWhileBlocked(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	var c ExceptionContext
	var more int
	tk := CreateTask(l, func(t *T) (int, error) {
		if err := Sleep(t, time.Second); err != nil {
			return 0, err
		}
		c, more = blockedOnReport(l, reports)
		return 0, nil
	}, WithName("blocker"))
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	r.log("message: %v", strings.HasPrefix(c.Message, "Event loop blocked for at least"))
	r.log("says how to fix: %v", strings.Contains(c.Message, "asyncio.Go(t, fn)") && strings.Contains(c.Message, "asyncio.ToThread"))
	r.log("names the goroutine: %v", strings.Contains(c.Message, "goroutine "))
	r.log("blocked in: %s", stateOf(c.Stack))
	r.log("top frame is the test's: %v", strings.Contains(firstFrame(c.Stack), "asyncio.blockedOnReport"))
	r.log("task goroutine: %v", strings.Contains(c.Stack, "asyncio.runTaskFunc("))
	r.log("more reports while still blocked: %d", more)
	checkEvents(t, []string{"message: true", "says how to fix: true", "names the goroutine: true",
		"blocked in: chan receive", "top frame is the test's: true", "task goroutine: true",
		"more reports while still blocked: 0"}, &r)
}

// A callback that blocks the goroutine in RunForever is reported the same
// way, with that goroutine's stack.
func TestWatchdog_ReportsBlockedCallback(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	var c ExceptionContext
	l.CallSoon(func() { c, _ = blockedOnReport(l, reports) })
	runOne(t, l)
	r.log("blocked in: %s", stateOf(c.Stack))
	r.log("top frame is the callback's: %v", strings.Contains(firstFrame(c.Stack), "asyncio.blockedOnReport"))
	r.log("driver goroutine: %v", strings.Contains(c.Stack, "asyncio.driveLoop("))
	checkEvents(t, []string{"blocked in: chan receive", "top frame is the callback's: true", "driver goroutine: true"}, &r)
}

// A loop that waits (for a timer, I/O, or another goroutine) is not
// blocked: nothing is reported, and the watchdog parks at its first look
// at the waiting loop instead of keeping a timer (in a testing/synctest
// bubble a timer would hide a deadlock; in a process it wakes an idle
// one). The loop re-arms it when it wakes: a callback that blocks then is
// reported.
func TestWatchdog_WaitingLoopParksTheWatchdog(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	l.SetBlockedThreshold(time.Nanosecond)
	woken := NewFuture[int](l)
	go func() {
		for guard := time.Now(); !l.wd.parked.Load(); runtime.Gosched() {
			if time.Since(guard) > 10*time.Second { // hang guard only
				r.log("never parked")
				break
			}
		}
		// Parked, it looks no more: any report so far is of a pause
		// before the loop waited (with a 1 ns threshold, any pause is).
		for len(reports) > 0 {
			<-reports
		}
		r.log("parked")
		l.CallSoonThreadsafe(func() {
			//asynciovet:ignore blockingcall blocking the loop is the point: the re-armed watchdog must report it
			select {
			case <-reports:
				r.log("after waking: reported")
			case <-time.After(10 * time.Second): // hang guard only
				r.log("after waking: no report")
			}
			woken.SetResult(1)
		})
	}()
	if err := l.RunUntilComplete(woken); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"parked", "after waking: reported"}, &r)
}

// The threshold: 1 s by default, the slow-callback duration in debug mode,
// what SetBlockedThreshold says once called, off for d <= 0 (then
// RunForever does not arm the watchdog).
func TestWatchdog_Threshold(t *testing.T) {
	var r eventLog
	th := func(what string, l *Loop) {
		r.log("%s: %v", what, time.Duration(l.wd.threshold.Load()))
	}
	dl := NewLoop(WithDebug())
	th("WithDebug()", dl)
	mustClose(t, dl)
	l := NewTestLoop()
	defer mustClose(t, l)
	th("default", l)
	l.CallSoon(func() { r.log("watchdog armed: %v", armed(l)) })
	runOne(t, l)
	l.SetDebug(true)
	th("debug", l)
	l.SetSlowCallbackDuration(20 * time.Millisecond)
	th("debug, slow callback 20ms", l)
	l.SetSlowCallbackDuration(0)
	th("debug, slow callback 0", l)
	l.SetBlockedThreshold(5 * time.Second)
	th("set 5s", l)
	l.SetDebug(false)
	th("set 5s, debug off", l)
	l.SetBlockedThreshold(0)
	th("set 0", l)
	l.CallSoon(func() { r.log("watchdog armed: %v", armed(l)) })
	runOne(t, l)
	l.SetBlockedThreshold(time.Hour)
	l.CallSoon(func() { r.log("watchdog armed: %v", armed(l)) })
	runOne(t, l)
	r.log("after RunForever: %v", armed(l))
	checkEvents(t, []string{"WithDebug(): 100ms", "default: 1s", "watchdog armed: true", "debug: 100ms", "debug, slow callback 20ms: 20ms",
		"debug, slow callback 0: 1s", "set 5s: 5s", "set 5s, debug off: 5s", "set 0: 0s",
		"watchdog armed: false", "watchdog armed: true", "after RunForever: false"}, &r)
}

// Turned on while the loop runs, the watchdog starts at once.
func TestWatchdog_EnabledWhileRunning(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	l.SetBlockedThreshold(0)
	var c ExceptionContext
	tk := CreateTask(l, func(t *T) (int, error) {
		r.log("armed before: %v", armed(l))
		c, _ = blockedOnReport(l, reports) // turns it on
		return 0, nil
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	r.log("blocked in: %s", stateOf(c.Stack))
	checkEvents(t, []string{"armed before: false", "blocked in: chan receive"}, &r)
}

// armed reports whether l's watchdog timer is armed.
func armed(l *Loop) bool {
	l.wd.mu.Lock()
	defer l.wd.mu.Unlock()
	return l.wd.armed
}

// stateOf returns the wait reason of a goroutine stack ("chan receive"
// from "goroutine 7 [chan receive]:").
func stateOf(stack string) string {
	_, rest, _ := strings.Cut(stack, "[")
	state, _, _ := strings.Cut(rest, "]")
	state, _, _ = strings.Cut(state, ",") // "chan receive, 2 minutes"
	return state
}

// firstFrame returns the function line of a stack's top frame.
func firstFrame(stack string) string {
	lines := strings.Split(stack, "\n")
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

// The options set from the start what the setters set later: the
// watchdog's threshold (off for d <= 0) and the slow-callback duration, which
// debug mode's threshold follows.
func TestWatchdog_OptionsMatchSetters(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []LoopOption
		want time.Duration
	}{
		{"default", nil, defaultBlockedThreshold},
		{"blocked 5s", []LoopOption{WithBlockedThreshold(5 * time.Second)}, 5 * time.Second},
		{"blocked off", []LoopOption{WithBlockedThreshold(0)}, 0},
		{"debug, slow 30ms", []LoopOption{WithDebug(), WithSlowCallbackDuration(30 * time.Millisecond)}, 30 * time.Millisecond},
	} {
		l := NewLoop(c.opts...)
		if got := time.Duration(l.wd.threshold.Load()); got != c.want {
			t.Errorf("%s: threshold %v, want %v", c.name, got, c.want)
		}
		mustClose(t, l)
	}
}

// The watchdog's report comes from a goroutine of its own while the loop
// is blocked. A handler that changes the loop's settings there (turning
// the watchdog off after its first report) gets a *RuntimeError naming
// the call; it deadlocked on the watchdog's lock, which the report holds.
func TestWatchdog_HandlerChangingSettingsOffTheLoopIsRefused(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	handled := make(chan string, 1)
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if !strings.HasPrefix(c.Message, "Event loop blocked") {
			return
		}
		defer func() {
			select {
			case handled <- describe(asError(recover())):
			default:
			}
		}()
		l.SetBlockedThreshold(-1)
	})
	var got string
	l.CallSoon(func() {
		l.SetBlockedThreshold(time.Nanosecond)
		got = <-handled //asynciovet:ignore blockingcall the loop stays blocked until the watchdog's report is handled
		l.SetBlockedThreshold(-1)
	})
	runOne(t, l)
	want := `RuntimeError("SetBlockedThreshold called from a goroutine that is not running the loop`
	if !strings.HasPrefix(got, want) {
		t.Errorf("got %s, want %s...", got, want)
	}
}

// asError is a recovered value as an error (nil for none).
func asError(r any) error {
	if r == nil {
		return nil
	}
	if err, ok := r.(error); ok {
		return err
	}
	return fmt.Errorf("%v", r)
}
