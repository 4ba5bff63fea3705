// Package h48_errors: how an await's error is checked, kept or dropped.
package h48_errors

import (
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

var errStop = errors.New("stop")

// errors.Is on the cancellation, then return: handled.
func isCancelled(t *asyncio.T, ev *asyncio.Event) error {
	for {
		err := ev.Wait(t)
		if errors.Is(err, asyncio.ErrCancelled) {
			return err
		}
		if err != nil {
			log.Print(err)
			continue
		}
		ev.Clear()
	}
}

// A switch over the error with a case that returns the cancellation.
func switched(t *asyncio.T, q *asyncio.Queue[int]) error {
	for {
		v, err := q.Get(t)
		switch {
		case asyncio.IsCancelled(err):
			return err
		case err != nil:
			log.Print(err)
			continue
		}
		fmt.Println(v)
	}
}

// A switch over the error that only logs: a cancellation is swallowed (a
// documented miss).
func switchedLogOnly(t *asyncio.T, q *asyncio.Queue[int]) {
	for i := 0; i < 3; i++ {
		v, err := q.Get(t)
		switch {
		case err != nil:
			log.Print(err)
		default:
			fmt.Println(v)
		}
	}
}

// switch err := ...; err { case nil: } with a tagged switch.
func taggedSwitch(t *asyncio.T, ev *asyncio.Event) error {
	switch err := ev.Wait(t); err {
	case nil:
		return nil
	default:
		return err
	}
}

// if err := ...; err != nil with a return: handled.
func ifInit(t *asyncio.T, lk *asyncio.Lock) error {
	if err := lk.Acquire(t); err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	return lk.Release()
}

// Assigned and never read.
func assignedNeverRead(t *asyncio.T, lk *asyncio.Lock) {
	err := lk.Acquire(t) // want `droppedcancel: the error of asyncio\.Lock\.Acquire is`
	_ = err
	defer lk.Release()
}

// err declared once and overwritten by the next await.
func overwritten(t *asyncio.T, lk *asyncio.Lock, ev *asyncio.Event) error {
	err := lk.Acquire(t) // want `droppedcancel: the error of asyncio\.Lock\.Acquire is`
	err = ev.Wait(t)
	return err
}

// Blank assignment in a multi-value return.
func multiBlank(t *asyncio.T, r *aio.StreamReader) []byte {
	line, _ := r.ReadLine(t) // want `droppedcancel: the error of aio\.StreamReader\.ReadLine is`
	return line
}

func recvBlank(t *asyncio.T, ch chan int) int {
	v, ok, _ := asyncio.Recv(t, ch) // want `droppedcancel: the error of asyncio\.Recv is`
	if !ok {
		return 0
	}
	return v
}

func recvOk(t *asyncio.T, ch chan int) (int, error) {
	v, ok, err := asyncio.Recv(t, ch)
	if err != nil || !ok {
		return 0, err
	}
	return v, nil
}

// Barrier's (int, error).
func barrierBlank(t *asyncio.T, b *asyncio.Barrier) int {
	n, _ := b.Wait(t) // want `droppedcancel: the error of asyncio\.Barrier\.Wait is`
	return n
}

// Errors compared to a sentinel, logged otherwise.
func sentinel(t *asyncio.T, ev *asyncio.Event) {
	for i := 0; i < 3; i++ {
		if err := ev.Wait(t); err != nil && !errors.Is(err, errStop) { // want `droppedcancel: the error of asyncio\.Event\.Wait is`
			log.Print(err)
		}
	}
}

// Logging with slog inside the check.
func slogged(t *asyncio.T, ev *asyncio.Event) {
	for i := 0; i < 3; i++ {
		if err := ev.Wait(t); err != nil { // want `droppedcancel: the error of asyncio\.Event\.Wait is`
			slog.Error("wait", "err", err)
		}
	}
}

// The error kept in a variable read by the loop condition: handled.
func loopCond(t *asyncio.T) error {
	var err error
	for err == nil {
		err = asyncio.Sleep(t, time.Second)
	}
	return err
}

// The error collected with errors.Join: kept.
func joined(t *asyncio.T, evs []*asyncio.Event) error {
	var errs error
	for _, ev := range evs {
		errs = errors.Join(errs, ev.Wait(t))
	}
	return errs
}

// The error passed to a helper that returns it: kept.
func wrap(err error) error {
	if err != nil {
		return fmt.Errorf("wrapped: %w", err)
	}
	return nil
}

func wrapped(t *asyncio.T) error { return wrap(asyncio.Sleep(t, time.Second)) }

// The error passed to a helper that logs it and drops it.
func logErr(err error) {
	if err != nil {
		log.Print(err)
	}
}

func sunk(t *asyncio.T) {
	logErr(asyncio.Sleep(t, time.Second)) // want `droppedcancel: the error of asyncio\.Sleep is`
}

// The filter Python's except Exception: ported.
func exceptException(t *asyncio.T, ev *asyncio.Event) {
	for i := 0; i < 3; i++ {
		err := ev.Wait(t)
		if err != nil && !asyncio.IsCancelled(err) { // want `droppedcancel: the error of asyncio\.Event\.Wait is`
			log.Print(err)
		}
	}
}

// A deferred await and a deferred release.
func deferred(t *asyncio.T, lk *asyncio.Lock, w *aio.StreamWriter) error {
	if err := lk.Acquire(t); err != nil {
		return err
	}
	defer lk.Release()
	defer asyncio.Sleep(t, time.Millisecond)
	defer w.WaitClosed(t)
	return nil
}

// An error variable returned through a named result.
func namedResult(t *asyncio.T, ev *asyncio.Event) (err error) {
	err = ev.Wait(t)
	return
}

// The error stored in a struct field.
type state struct{ err error }

func stored(t *asyncio.T, s *state, ev *asyncio.Event) {
	s.err = ev.Wait(t)
}

// The error sent to a channel... via Send.
func sendErr(t *asyncio.T, errs chan error, ev *asyncio.Event) error {
	return asyncio.Send(t, errs, ev.Wait(t))
}

// Error assigned and checked with == nil, else logs.
func eqNil(t *asyncio.T, ev *asyncio.Event) {
	for i := 0; i < 2; i++ {
		if err := ev.Wait(t); err == nil { // want `droppedcancel: the error of asyncio\.Event\.Wait is`
			fmt.Println("set")
		} else {
			log.Println("wait:", err)
		}
	}
}

// if err != nil { log; break } in a loop: silent (documented: break).
func logBreak(t *asyncio.T, ev *asyncio.Event) {
	for {
		if err := ev.Wait(t); err != nil {
			log.Print(err)
			break
		}
	}
}

// A shadowed err in an inner block, the outer returned.
func shadowed(t *asyncio.T, ev *asyncio.Event, lk *asyncio.Lock) error {
	err := lk.Acquire(t)
	if err == nil {
		err := ev.Wait(t) // want `droppedcancel: the error of asyncio\.Event\.Wait is`
		_ = err
	}
	return err
}

// The io.EOF idiom: a cancellation is not io.EOF, takes the branch and is
// logged; nothing else reads err.
func readLines(t *asyncio.T, r *aio.StreamReader) {
	for i := 0; i < 10; i++ {
		line, err := r.ReadLine(t)
		if err != nil && !errors.Is(err, io.EOF) { // want `droppedcancel: the error of aio\.StreamReader\.ReadLine is`
			log.Print(err)
			continue
		}
		fmt.Println(string(line))
	}
}

// A term that does not read err: the error is logged or skipped, dropped
// either way.
func verboseOnly(t *asyncio.T, ev *asyncio.Event, verbose bool) {
	for i := 0; i < 3; i++ {
		if err := ev.Wait(t); err != nil && verbose { // want `droppedcancel: the error of asyncio\.Event\.Wait is`
			log.Print(err)
		}
	}
}

// Not reported: err read after the test (the loop stops on it).
func readLinesThenStop(t *asyncio.T, r *aio.StreamReader) error {
	for {
		line, err := r.ReadLine(t)
		if err != nil && !errors.Is(err, io.EOF) {
			log.Print(err)
		}
		if err != nil {
			return err
		}
		fmt.Println(string(line))
	}
}

// Not reported: the else branch, which an error may reach, reads it.
func elseReads(t *asyncio.T, ev *asyncio.Event, verbose bool) error {
	if err := ev.Wait(t); err != nil && verbose {
		log.Print(err)
	} else if err != nil {
		return err
	}
	return nil
}

// Not reported: another term reads err as more than the error tested.
func handled(t *asyncio.T, ev *asyncio.Event, s *state) {
	if err := ev.Wait(t); err != nil && s.keep(err) {
		log.Print(err)
	}
}

func (s *state) keep(err error) bool { s.err = err; return true }

// Not reported: an await that relays another task's outcome, as for the
// filter (a task the caller cancelled itself).
func relayed(t *asyncio.T, tk *asyncio.Task[int]) {
	if _, err := tk.Await(t); err != nil && !errors.Is(err, errStop) {
		log.Print(err)
	}
}

// An await's error given straight to a print function: logged, dropped.
func printed(t *asyncio.T, ev *asyncio.Event, q *asyncio.Queue[int]) {
	for i := 0; i < 3; i++ {
		log.Println("wait:", ev.Wait(t))           // want `droppedcancel: the error of asyncio\.Event\.Wait is`
		fmt.Printf("put %d: %v\n", i, q.Put(t, i)) // want `droppedcancel: the error of asyncio\.Queue\.Put is`
	}
}
