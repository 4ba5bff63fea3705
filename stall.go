package asyncio

// A virtual clock stalled on outside work (issue 19, the first trap). On
// virtual time the loop does not move its clock while outside work is in
// flight (Go calls, channel operations, executor jobs, ExpectExternal): it
// waits in real time for that work to come back. Work that never comes
// back (a forgotten ExpectExternal release, a Recv nobody sends to) used
// to hang in real time without a word. Now, once the loop has waited
// WithOutsideGrace's real-time grace period with nothing else to run, it
// reports what it waits for and where that work was registered, in the
// deadlock report's style, and goes on waiting.
//
// Reported, not failed: the loop cannot tell work that is slow from work
// that will never return. A Go call doing real I/O, a subprocess or a busy
// CI machine can take real seconds on a virtual clock, and failing Run (or
// cancelling the work) after a grace period would turn slow machines into
// flaky failures and change what the program does. The report goes to the
// exception handler, like the watchdog's "Event loop blocked" report: the
// default handler logs it, so a hung test's log names the culprit before
// go test's -timeout panic, and a test that wants a failure sets a handler
// that fails it (or releases the work, as the tests here do).

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// defaultOutsideGrace is the real time a virtual-time loop waits idle for
// outside work before reporting it.
const defaultOutsideGrace = 10 * time.Second

// stallWatch is a loop's state for the report (Loop.stall).
type stallWatch struct {
	grace    time.Duration // real time; 0: defaultOutsideGrace
	disabled bool
	// reported is the loop's progress mark (metrics.entries) at the last
	// report: one report per stall, a new one after something ran.
	reported   uint64
	reportedOK bool

	// ExpectExternal registrations not released yet (virtual time only),
	// guarded by mu: they are made and released on any goroutine.
	mu      sync.Mutex
	expects map[*expectRecord]struct{}
}

// expectRecord is one ExpectExternal registration.
type expectRecord struct{ site uintptr }

// WithOutsideGrace sets how long (real time) a loop on virtual time waits,
// idle, for outside work before it reports that work to the exception
// handler (see WithVirtualTime): 10 seconds unless set; 0 turns the report
// off. The report, a *StalledError, names each piece of outside work in
// flight and the file:line of the call that started it (Go, Recv, Send,
// RunInExecutorOn, ExpectExternal), then the task tree; the loop goes on
// waiting. A negative d panics with a *ValueError.
func WithOutsideGrace(d time.Duration) LoopOption {
	if d < 0 {
		panic(valueErrorf("WithOutsideGrace: negative grace period %v", d))
	}
	return func(l *Loop) {
		l.stall.grace, l.stall.disabled = d, d == 0
	}
}

// StalledError is the error of the report a virtual-time loop makes when
// it has waited its grace period (WithOutsideGrace) for outside work with
// nothing else to run. It matches ErrStalled.
type StalledError struct {
	// Waited is the real time waited so far.
	Waited time.Duration
	// Pending describes each piece of outside work in flight that the loop
	// knows of: what it is, the task awaiting it (if any) and where it was
	// started, e.g. "Recv by task 'w' at /src/x_test.go:42".
	Pending []string
	// Others counts outside work in flight not in Pending (executor jobs
	// of RunInExecutor and ToThread, cross-loop calls in flight, tasks
	// waiting in CrossQueue.Put or Get).
	Others int
	// Snapshot is the task tree at the time of the report.
	Snapshot *LoopSnapshot
}

// Error is ErrStalled's message, the pending work, then the task tree.
func (e *StalledError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: waited %v of real time for outside work, with nothing else to run; pending:", ErrStalled.Error(), e.Waited.Round(time.Millisecond))
	for _, p := range e.Pending {
		b.WriteString("\n  ")
		b.WriteString(p)
	}
	if e.Others > 0 {
		fmt.Fprintf(&b, "\n  and %d other outside wait(s): executor jobs (RunInExecutor, ToThread), cross-loop calls (CallOn, SubmitTo) or CrossQueue waits (Put, Get)", e.Others)
	}
	if e.Snapshot != nil && len(e.Snapshot.Tasks) > 0 {
		b.WriteString("\nthe tasks and what they wait on:\n")
		_ = e.Snapshot.WriteTree(&b)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Is reports that a StalledError matches ErrStalled.
func (e *StalledError) Is(target error) bool { return target == ErrStalled }

// outsideSite returns the pc of the call skip frames above the caller of
// outsideSite (0: that caller's caller), for the report; 0 unless the
// loop is on virtual time (the only clock that waits for outside work)
// with the report on. Cost: one runtime.Callers, about 0.35 µs, per Go,
// waiting Recv or Send, RunInExecutorOn and ExpectExternal call of such a
// loop; a real-time loop pays one test of a bool.
func (l *Loop) outsideSite(skip int) uintptr {
	if !l.virtual || l.stall.disabled {
		return 0
	}
	var pc [1]uintptr
	if runtime.Callers(skip+3, pc[:]) == 0 {
		return 0
	}
	return pc[0]
}

// siteString renders a pc from outsideSite as file:line.
func siteString(pc uintptr) string {
	if pc == 0 {
		return "an unknown place"
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return fmt.Sprintf("%s:%d", f.File, f.Line)
}

// expect records an ExpectExternal registration made at site and returns
// the function that forgets it (virtual time only; nil otherwise).
func (l *Loop) expect(site uintptr) (forget func()) {
	if !l.virtual {
		return nil
	}
	rec := &expectRecord{site: site}
	s := &l.stall
	s.mu.Lock()
	if s.expects == nil {
		s.expects = map[*expectRecord]struct{}{}
	}
	s.expects[rec] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.expects, rec)
		s.mu.Unlock()
	}
}

// stallWait is how long poll waits, in real time, for outside work on
// virtual time before it looks whether to report: the grace period, or -1
// (forever) when the report is off.
func (l *Loop) stallWait() time.Duration {
	switch {
	case l.stall.disabled:
		return -1
	case l.stall.grace > 0:
		return l.stall.grace
	}
	return defaultOutsideGrace
}

// noteStall is called by poll after a wait for outside work on virtual
// time that began at start: if the grace period passed with nothing run
// and nothing queued, it reports the stall (once per stall).
func (l *Loop) noteStall(start time.Time) {
	grace := l.stallWait()
	waited := time.Since(start)
	if grace < 0 || waited < grace || l.external.Load() == 0 {
		return
	}
	s := &l.stall
	if s.reportedOK && s.reported == l.metrics.entries {
		return
	}
	l.threadsafeMu.Lock()
	queued := len(l.threadsafePending) > 0
	l.threadsafeMu.Unlock()
	if queued {
		return
	}
	s.reported, s.reportedOK = l.metrics.entries, true
	err := &StalledError{Waited: waited}
	var task *T
	tasks := map[*T]bool{}
	if l.outside != nil {
		h := &l.outside.head
		for c := h.next; c != h; c = c.next {
			if c.released {
				continue
			}
			p := c.what
			if c.report {
				p += " " + funcNameOf(c.fn)
			}
			if c.task != nil {
				p += fmt.Sprintf(" by task %q", c.task.Name())
				task = c.task
				tasks[c.task] = true
			}
			err.Pending = append(err.Pending, p+" at "+siteString(c.site))
		}
	}
	var expects []string
	s.mu.Lock()
	for rec := range s.expects {
		expects = append(expects, "ExpectExternal at "+siteString(rec.site))
	}
	s.mu.Unlock()
	slices.Sort(expects)
	err.Pending = append(err.Pending, expects...)
	if n := int(l.external.Load()) - len(err.Pending); n > 0 {
		err.Others = n
	}
	err.Snapshot = l.snapshot(SnapshotOptions{MaxTasks: deadlockDumpTasks})
	ctx := ExceptionContext{
		Message: "Virtual clock stalled: the loop waits for outside work that does not come back",
		Err:     err,
	}
	if len(tasks) == 1 {
		ctx.Task = task
	}
	l.takeLoop(gid.Token()) // see retake: user code runs next
	l.CallExceptionHandler(ctx)
}
