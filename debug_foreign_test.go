package asyncio

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// DEBUG-3 / THREAD-6: in debug mode, completing a future or cancelling a
// task from a goroutine that is not running the loop panics (asyncio's
// debug-mode call_soon raises there), and before anything changes: the
// future stays pending and can still be completed properly. Outside debug
// mode it is not checked.
func TestDEBUG3_ForeignGoroutineCompletingFuturePanics(t *testing.T) {
	for _, debug := range []bool{true, false} {
		l := NewLoop(WithVirtualTime())
		l.SetDebug(debug)
		fut := NewFuture[int](l)
		var got []string
		try := func(name string, call func()) {
			out := make(chan string)
			go func() {
				defer func() { out <- fmt.Sprint(recover()) }()
				call()
			}()
			got = append(got, name+": "+<-out)
		}
		waiter := CreateTask(l, func(t *T) (int, error) { return fut.Await(t) })
		sleeper := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
		main := CreateTask(l, func(t *T) (int, error) {
			Sleep(t, 0) // the others park
			if debug {
				try("SetResult", func() { fut.SetResult(1) })
				try("Task.Cancel", func() { sleeper.Cancel() })
			}
			if !fut.Done() && sleeper.Cancelling() == 0 {
				got = append(got, "untouched")
			}
			fut.SetResult(2)
			sleeper.Cancel()
			return 0, nil
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		if v, err := waiter.Result(); !waiter.Done() {
			l.RunUntilComplete(waiter)
			v, err = waiter.Result()
			if v != 2 || err != nil {
				t.Errorf("debug=%v: waiter got %d, %v; want 2, nil", debug, v, err)
			}
		} else if v != 2 || err != nil {
			t.Errorf("debug=%v: waiter got %d, %v; want 2, nil", debug, v, err)
		}
		l.RunUntilComplete(sleeper)
		mustClose(t, l)
		if !debug {
			continue
		}
		if len(got) == 3 && got[2] == "untouched" {
			got = got[:2]
		} else {
			t.Errorf("debug mode: the future or the task was changed by the failed foreign call: %q", got)
		}
		for _, g := range got {
			if !strings.Contains(g, "Non-thread-safe operation invoked on an event loop other than the current one") {
				t.Errorf("debug mode: %s; want the non-thread-safe panic", g)
			}
		}
		if len(got) != 2 {
			t.Errorf("got %d results, want 2", len(got))
		}
	}
}
