package asyncio

// The loop's counters (Stats).
//
// The counters cost an increment each on the hot paths and never
// allocate. The clock is read only where the loop waits anyway (a poll
// that may block), at RunForever's start and end, and once every
// coarseClockEvery+1 iterations (loop.go); timing each callback and step
// (two clock reads per step, about 10 % on the switch-bound workloads) is
// off unless WithStepTiming, debug mode or another diagnostic is on.

import "time"

// LoopStats is a snapshot of what a loop holds and has done, for
// diagnostics and tests. Taking it allocates nothing.
type LoopStats struct {
	Tasks    int // tasks not done, including ones not started yet
	Ready    int // entries in the ready queue
	Timers   int // scheduled timers, cancelled ones not yet dropped included
	FDs      int // file descriptors registered with the selector
	External int // work in flight on other goroutines that the loop waits for

	// LiveTimers are the timers in Timers that are not cancelled;
	// CancelledTimers the cancelled ones the loop has not dropped yet
	// (dropped lazily, LOOP-4).
	LiveTimers, CancelledTimers int

	// Iterations counts the loop's iterations (asyncio's _run_once calls).
	Iterations uint64
	// Callbacks counts the callbacks run (a cancelled handle skipped counts
	// too); Steps the task steps.
	Callbacks, Steps uint64

	// RunTime is the time spent inside RunForever (RunUntilComplete, Run),
	// on the loop's clock; PollTime is the part of it spent waiting in a
	// poll that could block (for I/O, a timer or a wakeup). RunTime -
	// PollTime is the time the loop was busy.
	RunTime, PollTime time.Duration

	// CallbackTime and StepTime split the busy time between callbacks and
	// task steps, and StepDurations counts steps by duration (bucket i up
	// to StepBucketBounds[i], the last one above them all). They are
	// measured only while step timing is on (WithStepTiming, debug mode,
	// or another diagnostic: WithTaskStacks, WithTaskLabels, runtime/trace),
	// since timing costs two clock reads per step.
	CallbackTime, StepTime time.Duration
	StepDurations          [StepBuckets]uint64
}

// Stats returns a snapshot of l's counters. Like every Loop method but
// CallSoonThreadsafe, call it from the goroutine running the loop (or
// while no goroutine runs it).
func (l *Loop) Stats() LoopStats {
	m := &l.metrics
	return LoopStats{
		Tasks:           len(l.tasks),
		Ready:           l.ready.len(),
		Timers:          len(l.timers),
		FDs:             len(l.fds),
		External:        int(l.external.Load()),
		LiveTimers:      len(l.timers) - l.cancelledTimers,
		CancelledTimers: l.cancelledTimers,
		Iterations:      m.iterations,
		Callbacks:       m.entries - uint64(l.snapshotLeft) - m.steps,
		Steps:           m.steps,
		RunTime:         m.runTime,
		PollTime:        m.pollTime,
		CallbackTime:    m.callbackTime,
		StepTime:        m.stepTime,
		StepDurations:   m.stepHist,
	}
}

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

// loopMetrics are the loop's counters (Stats).
type loopMetrics struct {
	iterations uint64
	entries    uint64 // ready entries run (callbacks, steps, cancelled handles)
	steps      uint64 // task step entries run

	runTime      time.Duration // inside RunForever
	pollTime     time.Duration // of which waiting in a poll that may block
	callbackTime time.Duration // timed callbacks (diagnostics on)
	stepTime     time.Duration // timed steps (diagnostics on)
	stepHist     [StepBuckets]uint64
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
