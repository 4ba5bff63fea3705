package asyncio

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The counters after a known workload: iterations, callbacks, steps, live
// and cancelled timers, tasks alive; on virtual time the clock jumps are
// the poll time.
func TestStats_Counters(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var mid LoopStats
	main := startTask(l, "main", func(tk *T) error {
		l.CallLater(time.Hour, func() {})
		l.CallLater(2*time.Hour, func() {}).Cancel() // not at the heap's top: kept

		l.CallSoon(func() {})
		w := startTask(tk, "w", func(tk *T) error { return Sleep(tk, time.Second) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		mid = l.Stats()
		return tk.Await(w)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	end := l.Stats()
	type counts struct {
		Tasks, Timers, LiveTimers, CancelledTimers int
		Iterations, Callbacks, Steps               uint64
		RunTime, PollTime                          time.Duration
	}
	got := []counts{
		{mid.Tasks, mid.Timers, mid.LiveTimers, mid.CancelledTimers, mid.Iterations, mid.Callbacks, mid.Steps, mid.RunTime, mid.PollTime},
		{end.Tasks, end.Timers, end.LiveTimers, end.CancelledTimers, end.Iterations, end.Callbacks, end.Steps, end.RunTime, end.PollTime},
	}
	want := []counts{
		// Iteration 1: main's first step; 2: the CallSoon callback, w's
		// first step, main's step that takes the snapshot (w's sleep timer
		// is the third timer).
		{Tasks: 2, Timers: 3, LiveTimers: 2, CancelledTimers: 1, Iterations: 2, Callbacks: 1, Steps: 3},
		// Then: a 1s jump, w's timer callback, w's wakeup and end, main's
		// wakeup and end, RunUntilComplete's stop callback.
		{Tasks: 0, Timers: 2, LiveTimers: 1, CancelledTimers: 1, Iterations: 6, Callbacks: 3, Steps: 5, RunTime: time.Second, PollTime: time.Second},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}
}

// With step timing, every step lands in one bucket of the histogram;
// without it nothing is timed.
func TestStats_StepTiming(t *testing.T) {
	for _, timed := range []bool{false, true} {
		var opts []LoopOption
		if timed {
			opts = append(opts, WithStepTiming())
		}
		l := NewLoop(append(opts, WithVirtualTime())...)
		main := startTask(l, "main", func(tk *T) error {
			for range 10 {
				if err := Sleep(tk, 0); err != nil {
					return err
				}
			}
			return nil
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		s := l.Stats()
		var inBuckets uint64
		for _, n := range s.StepDurations {
			inBuckets += n
		}
		if timed && (inBuckets != s.Steps || s.Steps != 11) {
			t.Errorf("timed: %d steps in buckets, Steps %d; want 11 and 11", inBuckets, s.Steps)
		}
		if !timed && (inBuckets != 0 || s.StepTime != 0 || s.CallbackTime != 0) {
			t.Errorf("untimed: %d in buckets, StepTime %v, CallbackTime %v; want zeros", inBuckets, s.StepTime, s.CallbackTime)
		}
		mustClose(t, l)
	}
}

// A step lands in the first bucket whose bound is >= its duration.
func TestRecordStep_Buckets(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	for _, d := range []time.Duration{0, time.Microsecond, time.Microsecond + 1, 50 * time.Millisecond, 11 * time.Second} {
		l.recordStep(d)
	}
	want := [StepBuckets]uint64{2, 1, 0, 0, 0, 1, 0, 0, 1}
	if got := l.Stats().StepDurations; got != want {
		t.Errorf("buckets %v, want %v", got, want)
	}
}

// Taking stats and running the loop's hot paths allocate nothing.
func TestStats_NoAllocations(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	if n := testing.AllocsPerRun(100, func() { _ = l.Stats() }); n != 0 {
		t.Errorf("Stats: %v allocations, want 0", n)
	}
	noop := func() {}
	l.SetBeforePoll(noop)
	l.SetAfterPoll(noop)
	l.CallSoon(noop) // warm the slab and the ready queue
	runOne(t, l)
	if n := testing.AllocsPerRun(100, func() { runOne(t, l) }); n != 0 {
		t.Errorf("an iteration with poll hooks: %v allocations, want 0", n)
	}
}

// The before-poll hook runs before the timeout is computed (what it
// schedules keeps the poll from blocking); the after-poll hook runs after
// the poll, before the due timers' callbacks, and what it schedules runs in
// the same iteration.
func TestPollHooks_Order(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	r := &eventLog{clock: l}
	n := 0
	l.SetBeforePoll(func() {
		n++
		r.log("before-poll %d", n)
		if n == 2 {
			l.CallSoon(r.logFn("scheduled by before-poll"))
		}
	})
	l.SetAfterPoll(func() {
		r.log("after-poll %d", n)
		if n == 3 {
			l.CallSoon(r.logFn("scheduled by after-poll"))
		}
	})
	l.CallLater(time.Second, r.logFn("timer"))
	for range 3 {
		runOne(t, l)
	}
	l.SetBeforePoll(nil)
	l.SetAfterPoll(nil)
	runOne(t, l)
	checkEvents(t, []string{
		"0s before-poll 1", "0s after-poll 1", // Stop pending: no wait
		"0s before-poll 2", "0s after-poll 2", "0s scheduled by before-poll",
		"0s before-poll 3", "0s after-poll 3", "0s scheduled by after-poll",
	}, r)
	// Without Stop the loop waits for the timer: the hook schedules
	// nothing, the clock jumps.
	l.SetBeforePoll(r.logFn("before-poll"))
	l.CallSoon(l.Stop)
	runOne(t, l)
	if err := l.RunForever(); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("RunForever: %v", err)
	}
	if l.Time() != time.Second {
		t.Errorf("clock %v, want 1s", l.Time())
	}
}

// A panic in a poll hook is reported to the exception handler like a
// panicking callback, and the loop goes on.
func TestPollHooks_PanicContained(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	r := &eventLog{}
	handlerLog(l, r)
	l.SetBeforePoll(func() { panic("before") })
	l.SetAfterPoll(func() { panic(errBoom) })
	l.CallSoon(r.logFn("callback"))
	runOne(t, l)
	checkEvents(t, []string{
		"handler: Exception in before-poll hook github.com/go-asyncio/asyncio.TestPollHooks_PanicContained.func1",
		"handler: Exception in after-poll hook github.com/go-asyncio/asyncio.TestPollHooks_PanicContained.func2",
		"callback",
	}, r)
}

// Each option switches its diagnostic on, and debug mode all of them.
func TestDiagOptions(t *testing.T) {
	for _, c := range []struct {
		opt  LoopOption
		want diagFlags
	}{
		{WithTaskStacks(), diagStacks},
		{WithTaskLabels(), diagLabels},
		{WithStepTiming(), diagTiming},
		{WithDebug(), diagDebug},
	} {
		l := NewLoop(c.opt)
		if l.diagFlags != c.want || !l.diagOn {
			t.Errorf("flags %b diagOn %v, want %b and true", l.diagFlags, l.diagOn, c.want)
		}
		l.SetDebug(false)
		if c.want == diagDebug && (l.diagFlags != 0 || l.diagOn) {
			t.Errorf("SetDebug(false) left flags %b diagOn %v", l.diagFlags, l.diagOn)
		}
		mustClose(t, l)
	}
	if l := NewLoop(); l.diagOn {
		t.Errorf("a plain loop has diagOn (flags %b)", l.diagFlags)
	}
}

// THREAD-6: a poll hook is loop code like a callback: it may schedule,
// also when the driver reaches the poll right after a task parked without
// running anything else (here: the step after main's is the first step of
// a task cancelled before it started, which ends it without resuming it
// (CANCEL-3), so the driver got the loop back from main and went on to
// the next iteration with main's token still recorded as the holder).
func TestPollHooksMaySchedule(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { r.log("handler: %s %v", c.Message, c.Err) })
	armed, polls := false, 0
	l.SetBeforePoll(func() {
		if armed {
			polls++
		}
		if polls == 2 { // the first poll runs on main's goroutine as it parks
			l.CallSoon(func() { r.log("scheduled by before-poll") })
		}
	})
	tk := startTask(l, "main", func(t *T) error {
		never := CreateTask(t, func(*T) (int, error) { return 0, nil })
		never.Cancel()
		armed = true
		err := Sleep(t, time.Second) // parks; the driver runs never's step, then polls
		r.log("main woke: %v", err)
		return err
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	l.SetBeforePoll(nil)
	checkEvents(t, []string{"scheduled by before-poll", "main woke: <nil>"}, &r)
}

// parkedInSwitch tells a task parked in its coroutine switch (whose stack
// says nothing about what holds the loop) from a goroutine that runs.
func TestWatchdog_ParkedInSwitch(t *testing.T) {
	parked := "goroutine 7 [coroutine]:\niter.Pull[...].func1.1()\ngithub.com/go-asyncio/asyncio.(*T).suspend(...)\n"
	running := "goroutine 7 [chan receive]:\nmain.f()\ngithub.com/go-asyncio/asyncio.(*T).suspend(...)\n"
	if !parkedInSwitch(parked) || parkedInSwitch(running) || parkedInSwitch("") {
		t.Errorf("parkedInSwitch: parked %v, running %v", parkedInSwitch(parked), parkedInSwitch(running))
	}
}
