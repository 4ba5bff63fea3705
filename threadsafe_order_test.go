package asyncio

import "testing"

// A CallSoonThreadsafe made before the loop wakes a task or schedules a
// done callback runs before them, as in asyncio, where all three append
// to the one ready queue in the order they happen (LOOP-1). Here another
// goroutine's submission waits in a side queue until the loop collects
// it: every way a callback or a step enters the ready queue collects it
// first, not only CallSoon.
func TestLOOP1_ThreadsafeBeforeLaterWakeups(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	woken := NewFuture[int](l)
	withCallback := NewFuture[int](l)
	withCallback.AddDoneCallback(func() { r.log("done callback") })
	waiter := CreateTask(l, func(tk *T) (int, error) {
		v, err := woken.Await(tk)
		r.log("task woken")
		return v, err
	})
	l.CallSoon(func() { // once the task waits
		l.CallSoon(func() {
			submitted := make(chan struct{})
			go func() {
				_, _ = l.CallSoonThreadsafe(func() { r.log("threadsafe") })
				close(submitted)
			}()
			//asynciovet:ignore blockingcall the test orders another goroutine's submission before the wakeups; it takes no time
			<-submitted // the submission happens before what follows
			_ = woken.SetResult(1)
			_ = withCallback.SetResult(2)
		})
	})
	if err := l.RunUntilComplete(waiter); err != nil {
		t.Fatal(err)
	}
	runOne(t, l)
	checkEvents(t, []string{"threadsafe", "task woken", "done callback"}, &r)
}
