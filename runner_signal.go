package asyncio

import (
	"os"
	"os/signal"
	"sync"
	"time"
)

// Ctrl-C as asyncio.run does it (asyncio.Runner.run and _on_sigint,
// 3.11+). While RunWith runs, and SIGINT is at its default disposition
// (not ignored, no handler on the loop), the first SIGINT cancels the main
// task, whose cleanup runs; if main then ends cancelled by that request
// alone (Uncancel reaches 0), RunWith returns ErrInterrupted (asyncio
// raises KeyboardInterrupt). A main task that swallows the cancellation
// and returns normally returns normally; a SIGINT that comes when main is
// already done (before RunWith returns) makes it return ErrInterrupted, as
// _on_sigint raises KeyboardInterrupt then. A second SIGINT stops waiting:
// RunWith returns ErrInterrupted at once, main still pending (Run then
// cancels it again in Close and waits for it, as asyncio.run's
// Runner.close does). After that second SIGINT the default disposition is
// back, so a third one ends the process, even when the loop is blocked
// and never saw the first two.
//
// The cancellation path is not SIGINT's alone: interrupt is the hook by
// which any source outside the main task stops it (a done context of a
// context-based run can use it from a CallSoonThreadsafe callback), and
// the first interruption decides the error RunWith returns.

// interrupts is one RunWith's record of what interrupted its main task.
// Its fields are read and written on the loop, except the SIGINT watch's
// channels.
type interrupts struct {
	loop *Loop
	main *T

	reason    error // the first interruption's error
	cancels   int   // Cancel calls made on main by interruptions
	sigints   int   // SIGINTs the loop has seen (asyncio's _interrupt_count)
	arrived   int   // onSIGINT calls the loop ran, also those it let pass
	abandoned bool  // a second SIGINT stopped the loop without waiting for main
	finished  bool  // RunWith has returned: late arrivals do nothing

	// The SIGINT watch; ch is nil when SIGINT was not at its default
	// disposition when RunWith started.
	ch       chan os.Signal
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	// forwarded counts the SIGINTs the watch handed to the loop; written
	// by the watch goroutine, read once it has ended (done is closed).
	forwarded int
}

// startInterrupts sets up the interruption of main for one RunWith and
// watches SIGINT when it is at its default disposition: not ignored
// (signal.Ignored: a program started in the background by a shell, or
// after signal.Ignore) and without a handler on the loop (asyncio checks
// that signal.getsignal(SIGINT) is default_int_handler).
func startInterrupts(l *Loop, main *T) *interrupts {
	in := &interrupts{loop: l, main: main}
	if !inSynctestBubble() && !signal.Ignored(os.Interrupt) && !l.hasSignalHandler(os.Interrupt) {
		in.ch = make(chan os.Signal, 1)
		in.stop = make(chan struct{})
		in.done = make(chan struct{})
		signal.Notify(in.ch, os.Interrupt)
		go in.watchSIGINT()
	}
	return in
}

// inSynctestBubble reports whether the calling goroutine runs inside a
// testing/synctest bubble. There, os/signal cannot be used (its goroutine
// would touch the bubble's channels from outside: "fatal error: select on
// synctest channel from outside bubble"), and RunWith does not watch
// SIGINT: Ctrl-C keeps its default disposition and ends the test binary,
// as it does for any test. The runtime gives time.Now no monotonic
// reading inside a bubble and always gives it one outside, so a reading
// that Round(0) (which strips it) leaves unchanged is a bubble's.
func inSynctestBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}

// watchSIGINT forwards SIGINTs to the loop. After the second it gives the
// signal back its default disposition and ends (see the top of the file).
func (in *interrupts) watchSIGINT() {
	defer close(in.done)
	for n := 1; ; {
		select {
		case <-in.ch:
			if in.loop.sigintHandled.Load() {
				// The loop's own handler takes it (on its own channel): it
				// is not one of the two Ctrl-Cs after which the watch
				// steps aside, or removing that handler later would leave
				// SIGINT at its default action, killing the process.
				continue
			}
			_, _ = in.loop.CallSoonThreadsafe(in.onSIGINT)
			in.forwarded++
			if n == 2 {
				signal.Stop(in.ch)
				return
			}
			n++
		case <-in.stop:
			return
		}
	}
}

// onSIGINT is asyncio.Runner._on_sigint, on the loop.
func (in *interrupts) onSIGINT() {
	if in.finished {
		return // RunWith is over (finish dealt with it)
	}
	in.arrived++
	if in.loop.hasSignalHandler(os.Interrupt) {
		return // the loop's own handler takes SIGINT
	}
	in.sigints++
	if in.sigints == 1 && !in.main.fut.done() {
		in.interrupt(ErrInterrupted)
		return
	}
	// asyncio raises KeyboardInterrupt out of run_until_complete.
	in.abandoned = true
	in.loop.Stop()
}

// interrupt cancels the main task on behalf of a source outside it, with
// reason as the error RunWith returns if main ends cancelled by this
// request alone. Only the first interruption counts; later ones, or one
// after main is done, do nothing. It must be called on the loop.
func (in *interrupts) interrupt(reason error) {
	if in.finished || in.reason != nil || in.main.fut.done() {
		return
	}
	in.reason = reason
	in.cancels++
	in.main.Cancel()
}

// finish ends the watch when RunWith's wait is over and turns main's
// outcome err into what RunWith returns (asyncio.Runner.run's except
// CancelledError clause).
func (in *interrupts) finish(err error) error {
	in.finished = true
	in.stopWatch()
	if in.abandoned || in.missedSIGINT() {
		return ErrInterrupted
	}
	if in.cancels > 0 && IsCancelled(err) && in.main.Uncancel() == 0 {
		return in.reason
	}
	return err
}

// missedSIGINT reports whether a SIGINT came while RunWith watched it but
// the loop stopped before it ran its onSIGINT: one that arrived as main
// was done (its callback queued after RunUntilComplete's last iteration
// took its snapshot), or one still in the watch's channel when the watch
// stopped. asyncio's _on_sigint raises KeyboardInterrupt for a SIGINT
// that finds main done; dropping it would lose the Ctrl-C altogether (its
// late callback finds RunWith finished, and SIGINT's default action is
// back only for the next one). The watch has ended (stopWatch).
func (in *interrupts) missedSIGINT() bool {
	if in.ch == nil || in.loop.hasSignalHandler(os.Interrupt) {
		return false // the loop's own handler takes it (on its own channel)
	}
	select {
	case <-in.ch:
		if !in.loop.sigintHandled.Load() {
			return true
		}
	default:
	}
	return in.forwarded > in.arrived
}

// stopWatch stops the SIGINT watch and waits for its goroutine: SIGINT
// gets back the disposition it had before RunWith.
func (in *interrupts) stopWatch() {
	if in.ch == nil {
		return
	}
	in.stopOnce.Do(func() {
		signal.Stop(in.ch)
		close(in.stop)
	})
	<-in.done
}
