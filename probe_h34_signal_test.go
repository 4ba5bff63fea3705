//go:build unix

package asyncio_test

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TestVirtualLoopWaitsForAHandledSignal: a service that registers a signal
// handler and then waits for the signal with nothing else to do (asyncio's
// add_signal_handler(SIGTERM, stop.set); await stop.wait()) waits on
// virtual time too, as it waits for a real descriptor: a signal from
// another process or goroutine runs the handler. It used to end at once
// with ErrDeadlock, before the signal came.
func TestVirtualLoopWaitsForAHandledSignal(t *testing.T) {
	// Without the fix Run returned before the signal, and the loop's
	// Close gave SIGUSR2 its default action back (the end of the test
	// binary): this Notify keeps it caught for the whole test.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGUSR2)
	defer signal.Stop(guard)
	sent := make(chan struct{})
	_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
		loop := tk.Loop()
		stop := asyncio.NewEvent()
		if err := loop.AddSignalHandler(syscall.SIGUSR2, stop.Set); err != nil {
			return struct{}{}, err
		}
		go func() {
			defer close(sent)
			time.Sleep(20 * time.Millisecond) // after the loop found nothing else to do
			_ = syscall.Kill(os.Getpid(), syscall.SIGUSR2)
		}()
		start := loop.Time()
		if err := stop.Wait(tk); err != nil {
			return struct{}{}, err
		}
		if d := loop.Time() - start; d != 0 {
			t.Errorf("the virtual clock moved %v while waiting for the signal", d)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	<-sent
	if err != nil {
		t.Fatalf("Run: %v, want the handler to wake main", err)
	}
}
