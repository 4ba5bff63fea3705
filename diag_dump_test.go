package asyncio

import (
	"strings"
	"testing"
	"time"
)

// parkTasks creates n tasks that park in Sleep for an hour, and lets them
// reach it: a goroutine dump of the process is then far larger than the
// first buffer a growing dump would try.
// It returns a function that cancels them and waits until they are done.
func parkTasks(t *T, n int) (func() error, error) {
	tasks := make([]*Task[int], n)
	for i := range tasks {
		tasks[i] = CreateTask(t, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
	}
	done := func() error {
		for _, tk := range tasks {
			tk.Cancel()
		}
		for _, tk := range tasks {
			if _, err := tk.Await(t); !IsCancelled(err) {
				return err
			}
		}
		return nil
	}
	return done, Sleep(t, 0) // their first steps run now
}

// reportsUntil re-arms a 1 ns watchdog until a report shows stack
// containing want (a report made before the caller blocked is set aside),
// counting the reports, then turns the watchdog off.
func reportsUntil(l *Loop, reports chan ExceptionContext, want string) (c ExceptionContext, n int) {
	for {
		l.SetBlockedThreshold(time.Nanosecond)
		c = <-reports
		n++
		if strings.Contains(c.Stack, want) {
			l.SetBlockedThreshold(0)
			return c, n
		}
	}
}

// Issue 19 item 2: a watchdog report takes one goroutine dump, sized once
// from the number of goroutines, not a dump per doubling of a buffer (each
// a stop-the-world traceback of every goroutine).
func TestWatchdog_ReportTakesOneDump(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	l.SetBlockedThreshold(0)
	var c ExceptionContext
	var n int
	var full, profiles int64
	tk := CreateTask(l, func(t *T) (int, error) {
		cleanup, err := parkTasks(t, 600)
		if err != nil {
			return 0, err
		}
		f0, p0 := stackDumps.full.Load(), stackDumps.profiles.Load()
		c, n = reportsUntil(l, reports, "asyncio.TestWatchdog_ReportTakesOneDump.func1")
		full, profiles = stackDumps.full.Load()-f0, stackDumps.profiles.Load()-p0
		return 0, cleanup()
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	r.log("reports: at least one %v", n >= 1)
	r.log("full dumps per report: %d", full/int64(n))
	r.log("profiles: %d", profiles)
	r.log("names the goroutine: %v", strings.Contains(c.Message, "goroutine "))
	r.log("blocked in: %s", stateOf(c.Stack))
	checkEvents(t, []string{"reports: at least one true", "full dumps per report: 1", "profiles: 0",
		"names the goroutine: true", "blocked in: chan receive"}, &r)
}

// With more goroutines than textDumpGoroutines, the watchdog reads the
// goroutine profile (brief stops of the world, not one per goroutine
// formatted) and takes no full dump; the report still shows the blocking
// call and the task's goroutine, and leaves out parked tasks.
func TestWatchdog_ManyGoroutinesReadsProfile(t *testing.T) {
	saved := textDumpGoroutines
	textDumpGoroutines = 0
	defer func() { textDumpGoroutines = saved }()
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	reports := blockedReports(l, &r)
	l.SetBlockedThreshold(0)
	var c ExceptionContext
	var full, profiles int64
	var n int
	tk := CreateTask(l, func(t *T) (int, error) {
		cleanup, err := parkTasks(t, 50)
		if err != nil {
			return 0, err
		}
		f0, p0 := stackDumps.full.Load(), stackDumps.profiles.Load()
		c, n = reportsUntil(l, reports, "asyncio.TestWatchdog_ManyGoroutinesReadsProfile.func2")
		full, profiles = stackDumps.full.Load()-f0, stackDumps.profiles.Load()-p0
		return 0, cleanup()
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	r.log("full dumps: %d", full)
	r.log("one profile per report: %v", profiles == int64(n))
	r.log("task goroutine: %v", strings.Contains(c.Stack, "asyncio.runTaskFunc("))
	r.log("parked tasks left out: %v", !strings.Contains(c.Stack, "asyncio.(*T).suspend"))
	r.log("says where it comes from: %v", strings.HasPrefix(c.Stack, "goroutine ? [from the goroutine profile]:\n"))
	checkEvents(t, []string{"full dumps: 0", "one profile per report: true", "task goroutine: true",
		"parked tasks left out: true", "says where it comes from: true"}, &r)
}

// Issue 19 item 2: a snapshot WithTaskStacks takes one dump, sized once,
// and has every task's stack.
func TestSnapshot_TaskStacksTakeOneDump(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var s *LoopSnapshot
	var full int64
	tk := CreateTask(l, func(t *T) (int, error) {
		cleanup, err := parkTasks(t, 600)
		if err != nil {
			return 0, err
		}
		f0 := stackDumps.full.Load()
		s = Snapshot(t, SnapshotOptions{MaxTasks: -1})
		full = stackDumps.full.Load() - f0
		return 0, cleanup()
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	withStack := 0
	for _, ti := range s.Tasks {
		if len(ti.Stack) > 0 {
			withStack++
		}
	}
	if full != 1 || withStack != 601 || len(s.Notes) != 0 {
		t.Errorf("full dumps %d (want 1), tasks with a stack %d of %d (want 601), notes %q", full, withStack, len(s.Tasks), s.Notes)
	}
}
