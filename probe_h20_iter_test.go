package asyncio

import (
	"errors"
	"strings"
	"testing"
)

// TestH20_IterNilPointersAreValueErrors: WithLock checks for a nil lock
// and AsCompletedFuncs for a nil awaitable to name the mistake, but only
// a nil interface passed the check: a nil *Lock, *Semaphore,
// *BoundedSemaphore or *Condition, or a nil *Task in aws, died in a nil
// dereference instead of the *ValueError they document. (`async with
// None` and as_completed([None]) raise TypeError in CPython, before
// anything runs.)
func TestH20_IterNilPointersAreValueErrors(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ran := false
		body := func() error { ran = true; return nil }
		for name, lk := range map[string]Locker{
			"*Lock":             (*Lock)(nil),
			"*Semaphore":        (*Semaphore)(nil),
			"*BoundedSemaphore": (*BoundedSemaphore)(nil),
			"*Condition":        (*Condition)(nil),
		} {
			p := mustPanic(t, "WithLock(nil "+name+")", func() {
				//asynciovet:ignore droppedcancel the call must panic before it acquires anything
				_ = WithLock(tk, lk, body)
			})
			if err, _ := p.(error); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "WithLock: nil lock") {
				t.Errorf("WithLock(nil %s): panicked with %v, want the ValueError WithLock: nil lock or function", name, p)
			}
		}
		if ran {
			t.Error("WithLock ran the body with a nil lock")
		}
		p := mustPanic(t, "AsCompletedFuncs(nil *Task)", func() {
			AsCompletedFuncs[int](tk, []AwaitableOf[int]{(*Task[int])(nil)}, Never)
		})
		if err, _ := p.(error); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "AsCompletedFuncs: nil awaitable") {
			t.Errorf("AsCompletedFuncs with a nil *Task: panicked with %v, want the ValueError AsCompletedFuncs: nil awaitable", p)
		}
		return nil
	})
}
