package asyncio

import "testing"

// TestFUT5_TaskWakeupsAndCallbacksInRegistrationOrder mixes tasks awaiting
// a future with plain done callbacks, in both orders: when the future
// completes, the wakeups and callbacks are scheduled exactly in
// registration order, whether the first registration is a task (which the
// core keeps outside the callbacks slice) or a callback.
func TestFUT5_TaskWakeupsAndCallbacksInRegistrationOrder(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	awaiter := func(name string, f *Future[int]) func(*T) (int, error) {
		return func(t *T) (int, error) {
			v, err := f.Await(t)
			r.log("%s woke: %d %v", name, v, err)
			return v, err
		}
	}
	f := NewFuture[int](l) // task first: A, cb1, B, cb2
	g := NewFuture[int](l) // callback first: cb3, C, D
	CreateTask(l, awaiter("A", f))
	l.CallSoon(func() { f.AddDoneCallback(r.logFn("cb1")) })
	CreateTask(l, awaiter("B", f))
	l.CallSoon(func() { f.AddDoneCallback(r.logFn("cb2")) })
	l.CallSoon(func() { g.AddDoneCallback(r.logFn("cb3")) })
	CreateTask(l, awaiter("C", g))
	CreateTask(l, awaiter("D", g))
	l.CallSoon(func() { f.SetResult(1) })
	l.CallSoon(func() { g.SetResult(2) })
	runOne(t, l) // every registration, then both results
	runOne(t, l) // the wakeups and callbacks
	checkEvents(t, []string{"A woke: 1 <nil>", "cb1", "B woke: 1 <nil>", "cb2", "cb3", "C woke: 2 <nil>", "D woke: 2 <nil>"}, &r)
}
