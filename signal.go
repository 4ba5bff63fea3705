package asyncio

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
)

// Signal handlers (asyncio's loop.add_signal_handler and
// remove_signal_handler). os/signal does the work: each handled signal
// has its own channel and one goroutine that forwards every arrival to
// the loop with CallSoonThreadsafe, so the handler runs as a callback on
// the loop, never on the goroutine that received the signal. Removing a
// handler (or closing the loop) calls signal.Stop on that channel, which
// gives the signal back the disposition it had before, unless other code
// in the process still asks for it with signal.Notify (signal.Reset would
// take it away from that code too, so it is not used).

// signalState is the loop's table of handled signals; nil until the first
// AddSignalHandler.
type signalState struct {
	handlers map[os.Signal]*signalWatch
}

// signalWatch is one handled signal: the channel os/signal delivers to and
// the goroutine that forwards arrivals to the loop.
type signalWatch struct {
	sig  os.Signal
	fn   func() // read and replaced on the loop only
	ch   chan os.Signal
	stop chan struct{}
	done chan struct{}
}

// AddSignalHandler makes fn run as a callback on the loop each time sig
// arrives (asyncio's add_signal_handler), replacing the handler sig had
// on this loop. fn runs on the loop like any callback (a panic in it is
// reported to the exception handler); arrivals while the loop is busy are
// delivered at its next iteration, and arrivals that come faster than the
// loop takes them may merge, as POSIX signals do. A handler for SIGURG
// also runs when the Go runtime preempts a goroutine, which it does with
// SIGURG (os/signal's documentation says so): use another signal.
//
// Errors, before anything changes, in asyncio's order: an invalid signal
// number is a *ValueError "invalid signal number N"; a closed loop is an
// error matching ErrLoopClosed; SIGKILL and SIGSTOP are a *RuntimeError
// "sig N cannot be caught"; a nil fn is a *ValueError; inside a
// testing/synctest bubble, where os/signal cannot be used, it is a
// *RuntimeError that also matches errors.ErrUnsupported. Where the system has
// no POSIX signals (Windows, Plan 9, js, wasip1) it returns an error
// wrapping errors.ErrUnsupported, as asyncio has no add_signal_handler
// there. In debug mode, a call from a goroutine that is not running the
// loop panics (asyncio: RuntimeError outside the main thread).
func (l *Loop) AddSignalHandler(sig os.Signal, fn func()) error {
	if err := checkSignal(sig); err != nil {
		return err
	}
	// asyncio checks the loop (_check_closed) before it tries the signal,
	// which is where SIGKILL and SIGSTOP fail (EINVAL).
	if l.closed {
		return errLoopClosed()
	}
	if err := catchable(sig); err != nil {
		return err
	}
	if fn == nil {
		return &ValueError{Msg: fmt.Sprintf("AddSignalHandler(%v): nil handler", sig)}
	}
	if inSynctestBubble() {
		// os/signal's goroutine would touch the bubble's channel from
		// outside it: a fatal error that ends the test binary.
		return &RuntimeError{Msg: fmt.Sprintf("AddSignalHandler(%v): os/signal cannot be used "+
			"inside a testing/synctest bubble", sig), Err: errors.ErrUnsupported}
	}
	l.checkThread("AddSignalHandler")
	if l.signals == nil {
		l.signals = &signalState{handlers: make(map[os.Signal]*signalWatch)}
		l.onClose(l.removeSignalHandlers)
	}
	if w := l.signals.handlers[sig]; w != nil {
		w.fn = fn // the watch goes on; the next arrival runs the new fn
		return nil
	}
	w := &signalWatch{sig: sig, fn: fn, ch: make(chan os.Signal, 1), stop: make(chan struct{}), done: make(chan struct{})}
	l.signals.handlers[sig] = w
	if sig == os.Interrupt {
		l.sigintHandled.Store(true)
	}
	signal.Notify(w.ch, sig)
	go l.forwardSignals(w)
	return nil
}

// forwardSignals runs on its own goroutine for as long as w is
// registered: it hands each arrival to the loop.
func (l *Loop) forwardSignals(w *signalWatch) {
	defer close(w.done)
	for {
		select {
		case <-w.ch:
			// A closed loop cannot take it; Close stops this goroutine
			// right after.
			_, _ = l.CallSoonThreadsafe(func() { l.dispatchSignal(w) })
		case <-w.stop:
			return
		}
	}
}

// dispatchSignal runs w's handler on the loop, unless the handler was
// removed or replaced by a new registration since the signal arrived.
func (l *Loop) dispatchSignal(w *signalWatch) {
	if l.signals == nil || l.signals.handlers[w.sig] != w {
		return
	}
	fn := w.fn
	defer func() { // reported under the handler's name, not this closure's
		if r := recover(); r != nil {
			l.reportCallbackPanic(r, fn, nil)
		}
	}()
	fn()
}

// RemoveSignalHandler removes the handler of sig (asyncio's
// remove_signal_handler) and reports whether there was one. The signal
// gets back the disposition it had before AddSignalHandler (see
// signal.Stop): for SIGINT or SIGTERM in a program that does not handle
// them otherwise, the default action ends the process again. An arrival
// already on its way to the loop is dropped. An invalid signal number is
// a *ValueError "invalid signal number N", as in asyncio (and, where the
// system has no POSIX signals, an error wrapping errors.ErrUnsupported);
// SIGKILL, SIGSTOP, or a signal with no handler on this loop (a closed
// loop has none) is false and no error.
func (l *Loop) RemoveSignalHandler(sig os.Signal) (bool, error) {
	if err := checkSignal(sig); err != nil {
		return false, err
	}
	if l.signals == nil {
		return false, nil
	}
	l.checkThread("RemoveSignalHandler")
	w := l.signals.handlers[sig]
	if w == nil {
		return false, nil
	}
	delete(l.signals.handlers, sig)
	if sig == os.Interrupt {
		l.sigintHandled.Store(false)
	}
	w.unwatch()
	return true, nil
}

// unwatch stops delivery to w's channel and waits for its goroutine.
func (w *signalWatch) unwatch() {
	signal.Stop(w.ch)
	close(w.stop)
	<-w.done
}

// hasSignalHandler reports whether sig has a handler on l (the Runner's
// SIGINT handling steps aside for it, as asyncio.Runner does when SIGINT
// is not at its default handler).
func (l *Loop) hasSignalHandler(sig os.Signal) bool {
	return l.signals != nil && l.signals.handlers[sig] != nil
}

// hasSignalHandlers reports whether any signal has a handler on l: a loop
// on virtual time waiting with nothing else to do waits for it, as for a
// real descriptor, instead of reporting ErrDeadlock.
func (l *Loop) hasSignalHandlers() bool { return l.signals != nil && len(l.signals.handlers) > 0 }

// removeSignalHandlers removes every handler when the loop closes
// (asyncio's _UnixSelectorEventLoop.close).
func (l *Loop) removeSignalHandlers() {
	l.sigintHandled.Store(false)
	for sig, w := range l.signals.handlers {
		delete(l.signals.handlers, sig)
		w.unwatch()
	}
}
