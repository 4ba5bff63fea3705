package asyncio

// LoopStats is a snapshot of what a loop holds, for diagnostics and tests.
type LoopStats struct {
	Tasks    int // tasks not done, including ones not started yet
	Ready    int // entries in the ready queue
	Timers   int // scheduled timers, cancelled ones not yet dropped included
	FDs      int // file descriptors registered with the selector
	External int // work in flight on other goroutines that the loop waits for
}

// Stats returns a snapshot of l's counters. Like every Loop method but
// CallSoonThreadsafe, call it from the goroutine running the loop.
func (l *Loop) Stats() LoopStats {
	return LoopStats{
		Tasks:    len(l.tasks),
		Ready:    l.ready.len(),
		Timers:   len(l.timers),
		FDs:      len(l.fds),
		External: int(l.external.Load()),
	}
}
