package asyncio

import (
	"runtime"
	"testing"
)

// A group WithLockOSThread whose main's task calls runtime.Goexit: the
// loop's locked goroutine (and thread) is gone, with a task still parked
// on a coroutine started there, and a pooled goroutine of that thread.
// The group replaces the goroutine; Close must neither crash ("coro: OS
// thread locking must match" is fatal) nor hang.
func TestProbeSwitch_LockedGroupGoexitThenClose(t *testing.T) {
	g := NewLoopGroup(WithLoops(1), WithLockOSThread())
	var reports []string
	parkedCleaned := false
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		tk.Loop().SetExceptionHandler(func(_ *Loop, c ExceptionContext) { reports = append(reports, c.Message) })
		if _, err := CreateTask(tk, func(*T) (int, error) { return 0, nil }).Await(tk); err != nil {
			return struct{}{}, err
		}
		//asynciovet:ignore unawaitedtask pending when the thread is lost
		CreateTask(tk, parkedWithCleanup(&parkedCleaned), WithName("parked"))
		_, err := CreateTask(tk, func(tk *T) (int, error) {
			if err := Sleep(tk, 0); err != nil {
				return 0, err
			}
			runtime.Goexit()
			return 0, nil
		}, WithName("exiter")).Await(tk)
		return struct{}{}, err
	})
	if err == nil {
		t.Error("RunGroup: nil error, want the main's Goexit reported")
	}
	if cerr := g.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	// The tasks of the lost thread are reported, not resumed (that would
	// be fatal); their goroutines died with the Goexit that went through
	// them, their deferred calls run.
	if len(reports) == 0 || !parkedCleaned {
		t.Errorf("reports %q, parked task's deferred call ran: %v", reports, parkedCleaned)
	}
}
