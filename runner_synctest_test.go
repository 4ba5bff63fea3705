//go:build go1.25

package asyncio

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Run inside a synctest bubble used to crash the test binary ("fatal
// error: select on synctest channel from outside bubble", from the SIGINT
// watch's os/signal). It must run, and a loop on the real clock must run
// on the bubble's fake time: an hour's sleep takes an hour of bubble time
// and no real time.
func TestSynctestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		v, err := Run(func(tk *T) (time.Duration, error) {
			if err := Sleep(tk, time.Hour); err != nil {
				return 0, err
			}
			return tk.Loop().Time(), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if v < time.Hour {
			t.Errorf("loop time after the sleep = %v, want >= 1h", v)
		}
		if d := time.Since(start); d != time.Hour {
			t.Errorf("the run took %v of bubble time, want exactly 1h", d)
		}
	})
}

// RunContext in a bubble: a context deadline (a bubble timer) cancels
// main at the bubble's time.
func TestSynctestRunContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		_, err := RunContext(ctx, func(tk *T) (struct{}, error) {
			return struct{}{}, Sleep(tk, time.Hour)
		})
		if !errors.Is(err, context.DeadlineExceeded) || !IsCancelled(err) {
			t.Fatalf("RunContext = %v, want a cancellation matching DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("cancelled after %v of bubble time, want 30s", d)
		}
	})
}

// A Runner in a bubble runs several mains on one loop and closes cleanly.
func TestSynctestRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRunner()
		defer r.Close()
		for i := range 3 {
			v, err := RunWith(r, func(tk *T) (int, error) {
				return i, Sleep(tk, time.Minute)
			})
			if err != nil || v != i {
				t.Fatalf("run %d = %v, %v", i, v, err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// The bubble test sees a bubble and nothing else does, so SIGINT is still
// watched outside bubbles (TestRunSIGINT* cover that watch).
func TestSynctestDetection(t *testing.T) {
	if inSynctestBubble() {
		t.Fatal("inSynctestBubble() outside a bubble")
	}
	synctest.Test(t, func(t *testing.T) {
		if !inSynctestBubble() {
			t.Fatal("!inSynctestBubble() inside a bubble")
		}
		done := make(chan bool)
		go func() { done <- inSynctestBubble() }()
		if !<-done {
			t.Fatal("a goroutine of the bubble is not seen in it")
		}
	})
}

// The README's synctest example: an ordinary goroutine on the bubble's
// clock feeds a loop task through a channel (Recv); the bubble's time
// moves for both.
func TestSynctestLoopAndGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		go func() {
			time.Sleep(time.Hour)
			ch <- 42
		}()
		start := time.Now()
		v, err := Run(func(tk *T) (int, error) {
			v, _, err := Recv(tk, ch)
			return v, err
		})
		if err != nil || v != 42 {
			t.Fatalf("Run = %v, %v", v, err)
		}
		if d := time.Since(start); d != time.Hour {
			t.Errorf("took %v of bubble time, want 1h", d)
		}
	})
}
