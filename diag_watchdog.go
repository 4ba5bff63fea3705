package asyncio

// The watchdog names a blocked loop while it is blocked (issue 10 point 6).
// A task step or a callback that does not return to the loop (time.Sleep,
// a channel receive, net/http's Client.Do) stops every other task. While
// the loop runs, a timer armed by RunForever fires every quarter of the
// threshold, and its function (on a goroutine of its own, which exits at
// once) checks that the loop has made progress: it raises a flag (beat),
// which the loop lowers whenever a step or a callback starts. When the flag
// stays up for the threshold while the loop is not waiting for I/O or
// timers (idle), the goroutine holding the loop is found in a dump of every
// goroutine's stack and reported to the exception handler, once per
// blocked step, with that stack: the blocking call itself. RunForever
// stops the timer when it returns, after a check in progress (and its
// report) has finished. A timer rather than a goroutine of its own keeps
// RunForever cheap for callers that run the loop in short bursts (a
// goroutine start and join would cost 2-3 µs per call).
//
// The loop's cost is one atomic load per step and per callback (a plain
// load on amd64 and arm64) and two atomic stores around each wait that may
// block. The watchdog reads only atomics: beat, idle, the threshold and the
// holder's token (loop.go). It finds the holder's goroutine by its token,
// which the traceback prints as the first argument of driveLoop or
// runTaskFunc, the frames at the bottom of every goroutine that runs the
// loop; reading goroutine ids on the hot path would cost a microsecond per
// task.

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// defaultBlockedThreshold is generous: a step that holds the loop
	// this long is a bug, not a slow computation.
	defaultBlockedThreshold = time.Second
	// minWatchdogPeriod bounds how often the watchdog looks, however small
	// the threshold (tests set it to a nanosecond).
	minWatchdogPeriod = time.Millisecond
)

// watchdog is the loop's part of the watchdog.
type watchdog struct {
	// Shared with the timer's function, atomics:
	beat atomic.Bool // raised by the watchdog, lowered by each step and callback
	idle atomic.Bool // the loop waits for I/O, timers or other goroutines
	// parked: the watchdog saw the loop idle and let its timer lapse, so
	// that an idle loop keeps no timer (a testing/synctest bubble sees a
	// deadlock, a process no wakeups); the loop re-arms it when it wakes.
	parked atomic.Bool
	// threshold is the effective threshold (0: off), computed on the loop
	// from explicit, debug and slowCallback, which only the loop reads.
	threshold atomic.Int64
	looks     atomic.Int64 // how many times the watchdog looked (for tests)

	explicit time.Duration // SetBlockedThreshold: 0 unset, < 0 off (loop only)

	// Guarded by mu, which a check holds from start to end:
	mu       sync.Mutex
	timer    *time.Timer // created on first use, stopped while not armed
	armed    bool        // RunForever runs and the threshold is not off
	asked    time.Time   // when beat was raised; zero: not yet
	reported bool        // the step running since asked was reported
	driver   uint64      // the token of the goroutine in RunForever
}

// SetBlockedThreshold sets how long one task step or callback may hold
// the loop before the watchdog reports it, while it is still blocked, to
// the exception handler ("Event loop blocked ...", with the stack of the
// goroutine holding the loop in ExceptionContext.Stack). A non-positive d
// turns the watchdog off. The default is 1 s, and in debug mode the
// slow-callback duration (100 ms unless set). The watchdog is a timer that
// RunForever arms and stops; it takes effect at once on a running loop.
// The report reaches the exception handler on the watchdog's goroutine,
// while the loop is still blocked: like the loop's other settings,
// SetBlockedThreshold is for the loop's goroutine (or a loop not running)
// and panics with a *RuntimeError there.
func (l *Loop) SetBlockedThreshold(d time.Duration) {
	l.checkThreadAlways("SetBlockedThreshold") // the watchdog's own report comes from another goroutine
	l.wd.explicit = blockedSetting(d)
	l.settingsChanged()
}

// blockedSetting is the explicit threshold for d: < 0 means off.
func blockedSetting(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// updateWatchdog recomputes the effective threshold after a change of
// setting, and re-arms the watchdog of a running loop (settingsChanged
// calls it).
func (l *Loop) updateWatchdog() {
	th := l.wd.explicit
	switch {
	case th < 0:
		th = 0
	case th == 0 && l.debug && l.slowCallback > 0:
		th = l.slowCallback
	case th == 0:
		th = defaultBlockedThreshold
	}
	l.wd.threshold.Store(int64(th))
	if l.running.Load() {
		l.armWatchdog()
	}
}

// progress lowers the watchdog's flag: a step or a callback starts. The
// load keeps the common case (flag already down) free of stores.
func (l *Loop) progress() {
	if l.wd.beat.Load() {
		l.wd.beat.Store(false)
	}
}

// armWatchdog starts (or restarts, with a new threshold) the watchdog's
// timer, unless the threshold is off. Called on the loop's goroutine.
func (l *Loop) armWatchdog() {
	th := time.Duration(l.wd.threshold.Load())
	w := &l.wd
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = th > 0
	w.asked, w.reported = time.Time{}, false
	w.parked.Store(false)
	w.driver = l.driverToken
	switch {
	case !w.armed:
		if w.timer != nil {
			w.timer.Stop()
		}
	case w.timer == nil:
		w.timer = time.AfterFunc(watchdogPeriod(th), l.watchdogCheck)
	default:
		w.timer.Reset(watchdogPeriod(th))
	}
}

// wakeWatchdog marks the loop awake after a wait and re-arms a watchdog
// that parked meanwhile. Called on the loop's goroutine.
func (l *Loop) wakeWatchdog() {
	l.wd.idle.Store(false)
	if !l.wd.parked.Load() {
		return
	}
	w := &l.wd
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.parked.Load() {
		return
	}
	w.parked.Store(false)
	if th := time.Duration(w.threshold.Load()); w.armed && th > 0 {
		w.asked, w.reported = time.Time{}, false
		w.timer.Reset(watchdogPeriod(th))
	}
}

// disarmWatchdog stops the timer when RunForever returns. A check that is
// running meanwhile finishes first (mu); one that fires later does nothing.
func (l *Loop) disarmWatchdog() {
	w := &l.wd
	w.mu.Lock()
	w.armed = false
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
}

func watchdogPeriod(th time.Duration) time.Duration { return max(th/4, minWatchdogPeriod) }

// watchdogCheck is the timer's function: one look at the loop.
func (l *Loop) watchdogCheck() {
	w := &l.wd
	w.mu.Lock()
	defer w.mu.Unlock()
	th := time.Duration(w.threshold.Load())
	if !w.armed || th <= 0 {
		return
	}
	w.looks.Add(1)
	now := time.Now()
	if w.idle.Load() {
		// Park, then look again: a loop that woke in between either sees
		// parked and re-arms (wakeWatchdog), or is seen awake here.
		w.parked.Store(true)
		if w.idle.Load() {
			return
		}
		w.parked.Store(false)
	}
	switch {
	case w.asked.IsZero() || w.idle.Load() || !w.beat.Load():
		// Just armed, waiting, or a step or callback started since we
		// asked: ask again. The next report is about another step.
		w.beat.Store(true)
		w.asked, w.reported = now, false
	case !w.reported && now.Sub(w.asked) >= th:
		// Nothing started since asked: what runs now started before.
		w.reported = true
		l.reportBlocked(now.Sub(w.asked))
	}
	w.timer.Reset(watchdogPeriod(th))
}

// reportBlocked reports the goroutine holding the loop, from the timer's
// goroutine, while the loop is blocked.
func (l *Loop) reportBlocked(blocked time.Duration) {
	token := l.holder.Load()
	if token == 0 {
		return // RunForever is returning
	}
	goroutine, stack := blockedStack(token, l.wd.driver)
	who := "the goroutine holding it"
	if goroutine != "" {
		who = goroutine
	}
	l.CallExceptionHandler(ExceptionContext{
		Message: fmt.Sprintf("Event loop"+l.nameLabel()+" blocked for at least %.3f seconds by a task step or callback "+
			"that does not return to the loop; %s is blocked in the call at the top of Stack. "+
			"Await a blocking Go call instead of making it: asyncio.Go(t, fn) (or asyncio.ToThread) "+
			"for code such as net/http, database/sql or channel operations, "+
			"asyncio.Sleep instead of time.Sleep, the loop's own API (futures, queues, aio) for I/O",
			blocked.Seconds(), who),
		Stack: stack,
	})
}

// textDumpGoroutines is how many goroutines the process may have for the
// watchdog to take its report from a text dump of every goroutine
// (runtime.Stack(all), which stops the world while it formats them all:
// 1.8 s for 100,000 parked tasks on our loaded test machine, so some 20 ms
// per 1,000 goroutines). With more, it reads the goroutine profile instead,
// which stops the world only briefly at its start and end and records each
// other goroutine's stack while only that goroutine waits, so the pause an unrelated goroutine sees stays small whatever
// the number of parked tasks; that report has no goroutine id, wait
// reason or arguments. A variable, so that tests can take either path.
var textDumpGoroutines = 1000

// blockedStack returns the header ("goroutine 42") and the stack of the
// goroutine holding the loop: the one whose driveLoop or runTaskFunc frame
// carries token or, when that is a task parked in its switch (the driver
// left it as holder after resuming it, see retake in loop.go), the
// driver's, whose stack says where the loop runs now.
func blockedStack(token, driver uint64) (goroutine, stack string) {
	if runtime.NumGoroutine() > textDumpGoroutines {
		return "", holderFromProfile()
	}
	buf, _ := goroutineDump()
	goroutine, stack = holderStack(buf, token)
	if token != driver && parkedInSwitch(stack) {
		goroutine, stack = holderStack(buf, driver)
	}
	return goroutine, stack
}

// parkedInSwitch reports whether a goroutine's stack is that of a task
// parked in its coroutine switch (T.suspend), which runs nothing.
func parkedInSwitch(stack string) bool {
	header, _, _ := strings.Cut(stack, "\n")
	return strings.Contains(header, "[coroutine]") && strings.Contains(stack, "asyncio.(*T).suspend")
}

// holderStack returns the header ("goroutine 42") and the stack of the
// goroutine in the dump buf whose driveLoop or runTaskFunc frame carries
// token. If the traceback does not show the token (a format it does not
// know), it returns every goroutine that runs a loop, so that the report
// still shows the blocking call.
func holderStack(buf []byte, token uint64) (goroutine, stack string) {
	marker := []byte(fmt.Sprintf("(%#x", token))
	var candidates [][]byte
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		for _, fn := range [][]byte{[]byte("asyncio.runTaskFunc"), []byte("asyncio.driveLoop")} {
			i := bytes.Index(g, fn)
			if i < 0 {
				continue
			}
			if rest := g[i+len(fn):]; bytes.HasPrefix(rest, marker) && len(rest) > len(marker) &&
				(rest[len(marker)] == ',' || rest[len(marker)] == '?') {
				header, _, _ := bytes.Cut(g, []byte(" ["))
				return string(header), string(g)
			}
			candidates = append(candidates, g)
			break
		}
	}
	return "", string(bytes.Join(candidates, []byte("\n\n")))
}

// holderFromProfile finds the goroutine holding the loop in the goroutine
// profile (pprof's, at debug level 1: stacks without goroutine ids or
// arguments, identical stacks counted once): the goroutines running a
// loop (a driveLoop or runTaskFunc frame) that are neither parked in their
// switch (T.suspend), resuming a task (T.resume: the loop runs on that
// task) nor waiting in the loop's poll. With one loop running that is the
// holder; with several, each loop's holder is listed. Each stack is
// rendered as a traceback ("function(...)", "\tfile:line").
func holderFromProfile() string {
	var b bytes.Buffer
	stackDumps.profiles.Add(1)
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return ""
	}
	var out []string
	for _, rec := range strings.Split(b.String(), "\n\n") {
		var frames []string
		runsLoop, excluded := false, false
		for _, line := range strings.Split(rec, "\n") {
			// "#\t0x4a3f2c\tpkg.fn+0x2c\t/path/file.go:42"
			f := strings.FieldsFunc(line, func(r rune) bool { return r == '\t' }) // padded with tabs
			if len(f) != 4 || f[0] != "#" {
				continue
			}
			fn := f[2]
			if k := strings.LastIndex(fn, "+0x"); k > 0 {
				fn = fn[:k]
			}
			switch {
			case strings.HasSuffix(fn, "asyncio.runTaskFunc"), strings.HasSuffix(fn, "asyncio.driveLoop"):
				runsLoop = true
			case strings.HasSuffix(fn, "asyncio.(*T).suspend"), strings.HasSuffix(fn, "asyncio.(*T).resume"),
				strings.HasSuffix(fn, "asyncio.(*Loop).poll"):
				excluded = true
			}
			frames = append(frames, fn+"(...)\n\t"+f[3])
		}
		if runsLoop && !excluded {
			out = append(out, "goroutine ? [from the goroutine profile]:\n"+strings.Join(frames, "\n"))
		}
	}
	return strings.Join(out, "\n\n")
}
