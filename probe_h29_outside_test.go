package asyncio

// Hostile probe h29: an operation outside the loop (Recv, Send, Go, an
// executor job) whose effect happened before the task's cancellation
// reached it returns its outcome and the cancellation comes at the next
// await (issue 19). A task whose function returns that outcome at once,
// with no await after it, must end with it: the value taken from the
// channel, the value sent, the call's result are the task's result, not
// discarded by a cancellation that came too late to stop them.

import (
	"context"
	"fmt"
	"testing"
)

// threadsafeQueued yields to nothing: it reports whether a callback from
// another goroutine waits for l's next iteration (white box).
func threadsafeQueued(l *Loop) bool {
	l.threadsafeMu.Lock()
	defer l.threadsafeMu.Unlock()
	return len(l.threadsafePending) > 0
}

func TestH29_TaskReturningAnOutsideOutcomeAtOnceKeepsIt(t *testing.T) {
	type op struct {
		name    string
		run     func(x *T, ch chan int) (string, error) // the task's whole function
		outside func(ch chan int)                       // completes it from a goroutine (nil: itself)
		check   func(ch chan int) string                // the channel afterwards
	}
	ops := []op{
		{"Recv", func(x *T, ch chan int) (string, error) {
			v, ok, err := Recv(x, ch)
			return fmt.Sprint(v, ok), err
		}, func(ch chan int) { ch <- 42 }, func(ch chan int) string { return fmt.Sprint("left ", len(ch)) }},
		{"Send", func(x *T, ch chan int) (string, error) {
			return "sent", Send(x, ch, 42)
		}, func(ch chan int) { <-ch }, nil},
		{"Go", func(x *T, ch chan int) (string, error) {
			return Go(x, func(context.Context) (string, error) { return "done", nil })
		}, nil, nil},
		{"ToThread", func(x *T, ch chan int) (string, error) {
			return ToThread(x, func(context.Context) (string, error) { return "done", nil })
		}, nil, nil},
	}
	want := map[string]string{"Recv": "42 true", "Send": "sent", "Go": "done", "ToThread": "done"}
	// When the cancellation comes: the outcome is back on the loop and the
	// task's wakeup queued, or (Recv, Send, Go: held) the outcome is still
	// in the loop's queue of calls from other goroutines.
	for _, when := range []string{"outcome back", "outcome on its way"} {
		for _, o := range ops {
			if when == "outcome on its way" && o.name == "ToThread" {
				continue // an executor job's outcome on its way is dropped, as asyncio drops it
			}
			t.Run(o.name+"/"+when, func(t *testing.T) {
				runVirtual(t, func(tk *T) error {
					ch := make(chan int)
					w := CreateTask(tk, func(x *T) (string, error) { return o.run(x, ch) })
					//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
					_ = Sleep(tk, 0) // w waits in its operation
					if o.outside != nil {
						go o.outside(ch)
					}
					if when == "outcome back" {
						waitOutsideDone(tk)
					} else {
						for !threadsafeQueued(tk.Loop()) { // the loop holds: nothing drains it
						}
					}
					if !w.Cancel("late") {
						t.Fatal("Cancel: false (the task is done already: the probe missed its window)")
					}
					v, err := w.Await(tk)
					if err != nil || v != want[o.name] {
						t.Errorf("the task's outcome: %q, %v; want %q, nil", v, err, want[o.name])
					}
					if o.check != nil {
						if got := o.check(ch); got != "left 0" {
							t.Errorf("channel: %s", got)
						}
					}
					if w.Cancelling() != 1 {
						t.Errorf("Cancelling: %d, want 1 (the request stays counted)", w.Cancelling())
					}
					return nil
				})
			})
		}
	}
}

// The same for a call on another loop: the remote task's outcome is back
// on the caller's loop when the calling task is cancelled, and a task
// that returns it at once ends with it.
func TestH29_TaskReturningACrossLoopOutcomeAtOnceKeepsIt(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithGroupLoopOptions(WithVirtualTime()))
	defer g.Close()
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		w := CreateTask(tk, func(x *T) (string, error) {
			return CallOn(x, g.Loop(1), func(*T) (string, error) { return "done", nil })
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)    // w's call is in flight
		waitOutsideDone(tk) // w's call is back and its wakeup queued
		if !w.Cancel("late") {
			t.Fatal("Cancel: false (the task is done already: the probe missed its window)")
		}
		v, err := w.Await(tk)
		if err != nil || v != "done" {
			t.Errorf("the task's outcome: %q, %v; want \"done\", nil", v, err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
