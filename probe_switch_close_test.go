package asyncio

import (
	"runtime"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
	"go.uber.org/goleak"
)

// Tasks pending at Close whose goroutines came from the pool (they hosted
// a finished task first), next to pooled goroutines and a task that never
// started, with Close called from another goroutine than the one that ran
// the loop: every pending task's deferred calls run once, and no goroutine
// is left behind.
func TestProbeSwitch_ClosePendingOnReusedGoroutinesFromAnotherGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	var reports []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { reports = append(reports, c.Message) })
	cleaned := make([]int, 6)
	var goroutines []uint64
	ran := make(chan error)
	go func() {
		main := CreateTask(l, func(tk *T) (int, error) {
			// Fill the pool: six tasks that finish.
			var quick []AwaitableOf[int]
			for range 6 {
				quick = append(quick, CreateTask(tk, func(*T) (int, error) { return 0, nil }))
			}
			if _, err := Gather(tk, quick...).Await(tk); err != nil {
				return 0, err
			}
			// Four parked tasks on pooled goroutines (two of them eager).
			for i := range 4 {
				var opts []TaskOption
				if i%2 == 1 {
					opts = append(opts, WithEagerStart())
				}
				//asynciovet:ignore unawaitedtask pending at Close on purpose
				CreateTask(tk, func(tk *T) (int, error) {
					goroutines = append(goroutines, gid.Current())
					defer func() { cleaned[i]++ }()
					return 0, Sleep(tk, time.Hour)
				}, opts...)
			}
			return 0, Sleep(tk, 0)
		})
		ran <- l.RunUntilComplete(main)
	}()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if len(goroutines) != 4 {
		t.Fatalf("%d parked tasks started, want 4", len(goroutines))
	}
	if len(l.workers) == 0 {
		t.Errorf("no goroutine left in the pool")
	}
	// One that never starts.
	//asynciovet:ignore unawaitedtask pending at Close on purpose
	CreateTask(l, func(tk *T) (int, error) { cleaned[5]++; return 0, nil })
	mustClose(t, l)
	if want := []int{1, 1, 1, 1, 0, 0}; !equalInts(cleaned, want) {
		t.Errorf("deferred calls %v, want %v", cleaned, want)
	}
	if len(reports) != 5 {
		t.Errorf("%d reports %q, want 5 (the pending tasks)", len(reports), reports)
	}
	if len(l.workers) != 0 {
		t.Errorf("%d pooled goroutines after Close", len(l.workers))
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A task unwound at Close whose deferred calls await (at once cancelled),
// create a task, cancel another pending task and complete a future that
// a third awaits: the unwinding still ends every goroutine, and the other
// tasks are unwound too.
func TestProbeSwitch_CloseUnwindingTaskTouchesTheLoop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	f := NewFuture[int](l)
	var log eventLog
	var other *Task[int]
	main := CreateTask(l, func(tk *T) (int, error) {
		other = CreateTask(tk, func(tk *T) (int, error) {
			defer log.log("other unwound")
			v, err := f.Await(tk)
			log.log("other: %v %v", v, err)
			return v, err
		}, WithName("other"))
		//asynciovet:ignore unawaitedtask pending at Close on purpose
		CreateTask(tk, func(tk *T) (int, error) {
			defer func() {
				err := Sleep(tk, 0)
				log.log("sleep in unwinding: cancelled=%v", IsCancelled(err))
				//asynciovet:ignore unawaitedtask created while the loop closes
				CreateTask(l, func(*T) (int, error) { log.log("late task ran"); return 0, nil })
				log.log("cancel other: %v", other.Cancel("from unwinding"))
				log.log("set f: %v", f.SetResult(7))
			}()
			return 0, Sleep(tk, time.Hour)
		}, WithName("unwinder"))
		return 0, Sleep(tk, 0)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	// Close unwinds the tasks in the loop's order: "unwinder" first, whose
	// cancel reaches "other"'s future, then "other".
	checkEvents(t, []string{
		"sleep in unwinding: cancelled=true",
		"cancel other: true",
		"set f: asyncio: invalid state: CANCELLED: <Future cancelled>",
		"other unwound",
	}, &log)
}

// A task's goroutine that calls runtime.Goexit ends the goroutine running
// the loop too (documented, errGoexit); the loop can then be closed from
// another goroutine, with tasks still pending on pooled and fresh
// goroutines, and nothing is left behind.
func TestProbeSwitch_GoexitThenCloseFromAnotherGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	cleaned := 0
	var exiter *Task[int]
	done := make(chan struct{})
	go func() {
		defer close(done)
		main := CreateTask(l, func(tk *T) (int, error) {
			if _, err := CreateTask(tk, func(*T) (int, error) { return 0, nil }).Await(tk); err != nil {
				return 0, err
			}
			for range 3 {
				//asynciovet:ignore unawaitedtask pending at Close on purpose
				CreateTask(tk, func(tk *T) (int, error) {
					defer func() { cleaned++ }()
					return 0, Sleep(tk, time.Hour)
				})
			}
			exiter = CreateTask(tk, func(tk *T) (int, error) {
				if err := Sleep(tk, 0); err != nil {
					return 0, err
				}
				runtime.Goexit()
				return 0, nil
			})
			return exiter.Await(tk)
		})
		_ = l.RunUntilComplete(main)
		t.Error("RunUntilComplete returned: the Goexit did not end the driver")
	}()
	<-done
	if !exiter.Done() || exiter.Err() != errGoexit {
		t.Errorf("exiting task: done %v, err %v", exiter.Done(), exiter.Err())
	}
	mustClose(t, l)
	if cleaned != 3 {
		t.Errorf("%d deferred calls ran, want 3", cleaned)
	}
}

// Pending tasks started by an unlocked driver, closed from a goroutine
// locked to its thread: they are unwound from a goroutine of their own.
func TestProbeSwitch_CloseFromLockedGoroutineUnwindsUnlockedTasks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	cleaned := false
	//asynciovet:ignore unawaitedtask pending at Close on purpose
	CreateTask(l, parkedWithCleanup(&cleaned))
	if err := l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) {
		_, err := CreateTask(t, func(*T) (int, error) { return 0, nil }).Await(t)
		return 0, err
	})); err != nil {
		t.Fatal(err)
	}
	var closeErr error
	onLockedGoroutine(func() { closeErr = l.Close() })
	if closeErr != nil || !cleaned {
		t.Errorf("Close: %v, cleaned %v", closeErr, cleaned)
	}
}

// Close called again from a deferred call of a task that Close is
// unwinding (a task's cleanup that closes "its" loop). It used to resume
// the running goroutine of the task being unwound, from a helper
// goroutine: "iter.Pull: next called again before yield", a panic no
// recover can catch, which killed the process. The inner Close returns at
// once; the outer one finishes: every pending task unwound once, reported
// once, no goroutine left.
func TestProbeSwitch_CloseFromTaskBeingUnwound(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	reports := 0
	l.SetExceptionHandler(func(*Loop, ExceptionContext) { reports++ })
	var inner []error
	unwound := 0
	main := CreateTask(l, func(tk *T) (int, error) {
		for range 3 {
			//asynciovet:ignore unawaitedtask pending at Close on purpose
			CreateTask(tk, func(tk *T) (int, error) {
				defer func() {
					unwound++
					inner = append(inner, l.Close())
				}()
				return 0, Sleep(tk, time.Hour)
			})
		}
		return 0, Sleep(tk, 0)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	if unwound != 3 || reports != 3 || len(inner) != 3 || inner[0] != nil || inner[1] != nil || inner[2] != nil {
		t.Errorf("unwound %d, reports %d, inner Close errors %v; want 3, 3, three nil", unwound, reports, inner)
	}
	if !l.IsClosed() {
		t.Error("loop not closed")
	}
}

// More tasks than the pool holds, on a debug-mode loop (labelled
// goroutines, never pooled) with eager tasks (WithEagerTasks): some
// finish, some are pending at Close. Every goroutine ends.
func TestProbeSwitch_CloseManyEagerLabelledTasks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, debug := range []bool{false, true} {
		l := NewLoop(WithVirtualTime(), WithEagerTasks())
		l.SetDebug(debug)
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		n := maxPooledWorkers + 40
		cleaned := 0
		main := CreateTask(l, func(tk *T) (int, error) {
			var done []AwaitableOf[int]
			for i := range n {
				task := CreateTask(tk, func(tk *T) (int, error) {
					defer func() { cleaned++ }()
					if i%3 == 0 {
						return i, nil // done inside CreateTask
					}
					return i, Sleep(tk, time.Duration(i%3)*time.Hour)
				})
				if i%3 != 2 {
					done = append(done, task)
				}
			}
			_, err := Gather(tk, done...).Await(tk)
			return 0, err
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		if debug && len(l.workers) != 0 {
			t.Errorf("debug mode: %d labelled goroutines pooled", len(l.workers))
		}
		if !debug && (len(l.workers) == 0 || len(l.workers) > maxPooledWorkers) {
			t.Errorf("%d goroutines pooled, want some, at most %d", len(l.workers), maxPooledWorkers)
		}
		mustClose(t, l)
		if cleaned != n {
			t.Errorf("debug %v: %d deferred calls ran, want %d", debug, cleaned, n)
		}
	}
}
