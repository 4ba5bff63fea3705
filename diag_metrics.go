package asyncio

import (
	"github.com/go-asyncio/asyncio/internal/gid"
	"time"
)

// Loop metrics and poll hooks (Redis ae.c's beforesleep/aftersleep).
//
// The counters cost an increment each on the hot paths and never
// allocate. The clock is read only where the loop waits anyway (a poll
// that may block), at RunForever's start and end, and once every
// coarseClockEvery+1 iterations; timing each callback and step (two clock
// reads per step, about 10 % on the switch-bound workloads) is off unless
// WithStepTiming, debug mode or another diagnostic is on.

// coarseClockEvery+1 is how many iterations may pass between two reads of
// the coarse clock when the loop neither waits nor has timers.
const coarseClockEvery = 127

// StepBuckets is the number of buckets of LoopStats.StepDurations.
const StepBuckets = 9

// StepBucketBounds are the upper bounds of the first StepBuckets-1 buckets
// of LoopStats.StepDurations: a step of duration d is counted in the first
// bucket whose bound is >= d, and in the last bucket if d exceeds them all.
var StepBucketBounds = [StepBuckets - 1]time.Duration{
	time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond,
	time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond,
	time.Second, 10 * time.Second,
}

// loopMetrics is the loop's part for metrics and hooks.
type loopMetrics struct {
	iterations uint64
	entries    uint64 // ready entries run (callbacks, steps, cancelled handles)
	steps      uint64 // task step entries run

	runTime      time.Duration // inside RunForever
	pollTime     time.Duration // of which waiting in a poll that may block
	callbackTime time.Duration // timed callbacks (diagnostics on)
	stepTime     time.Duration // timed steps (diagnostics on)
	stepHist     [StepBuckets]uint64

	// coarseNow is the loop's clock as last read by the loop itself (a
	// wait, a timer check, or every coarseClockEvery+1 iterations): what
	// a suspending task records as the start of its wait, for free.
	coarseNow time.Duration

	beforePoll, afterPoll func()
	// suspendHook, set by the cancellation tester (internal/hooks), runs
	// on a task's goroutine each time one of the loop's tasks suspends.
	suspendHook func(t *T)
}

// coarseTime is Time without a clock read: exact on virtual time, else
// the clock as the loop last read it.
func (l *Loop) coarseTime() time.Duration {
	if l.virtual {
		return l.virtualNow
	}
	return l.metrics.coarseNow
}

// pollBlocking is poll for a wait that may block, timed for Stats.
func (l *Loop) pollBlocking(timeout time.Duration) {
	t0 := l.Time()
	l.poll(timeout)
	t1 := l.Time()
	l.metrics.pollTime += t1 - t0
	l.metrics.coarseNow = t1
}

// SetBeforePoll sets fn to run on the loop right before each poll for I/O,
// once per iteration, before the poll's timeout is computed (Redis ae.c's
// beforesleep): whatever fn schedules keeps that poll from blocking. Use it
// to batch work once per iteration, e.g. flush buffered writes. nil removes
// the hook. A panic in fn is reported to the exception handler and the
// loop goes on, as for a callback. Call it from the goroutine running the
// loop (or before the loop runs).
func (l *Loop) SetBeforePoll(fn func()) { l.metrics.beforePoll = fn }

// SetAfterPoll sets fn to run on the loop right after each poll for I/O,
// before the ready file descriptors' and due timers' callbacks are queued
// (ae.c's aftersleep); what fn schedules with CallSoon runs in the same
// iteration. It does not run when a loop on virtual time stops with
// ErrDeadlock (there was no poll). nil removes the hook; panics are
// contained as in SetBeforePoll.
func (l *Loop) SetAfterPoll(fn func()) { l.metrics.afterPoll = fn }

// runPollHook runs a poll hook, reporting a panic to the exception handler
// (LOOP-12) instead of letting it take the loop down.
func (l *Loop) runPollHook(fn func(), which string) {
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(ExceptionContext{
				Message: "Exception in " + which + " hook " + funcName(fn),
				Err:     newPanicError(r),
			})
		}
	}()
	// User code runs next on this goroutine: it must be the holder (the
	// driver may have left a parked task's token there, see retake).
	l.takeLoop(gid.Token())
	fn()
}

// recordStep adds one timed step of duration d to the metrics.
func (l *Loop) recordStep(d time.Duration) {
	l.metrics.stepTime += d
	i := 0
	for i < len(StepBucketBounds) && d > StepBucketBounds[i] {
		i++
	}
	l.metrics.stepHist[i]++
}
