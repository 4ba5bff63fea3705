package asyncio

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
)

// waitDone suspends t until aw is done, without retrieving aw's outcome.
func waitDone(t *T, aw Awaitable) error {
	w := NewFuture[struct{}](t)
	aw.AddDoneCallback(func() { _ = w.SetResult(struct{}{}) })
	_, err := w.Await(t)
	return err
}

// EXC-3 / FUT-4: Cancel on a done future withdraws its "never retrieved"
// report, as CPython's Future.cancel does (it clears __log_traceback before
// looking at the state). CPython 3.13, the same program:
//
//	fut = loop.run_in_executor(ex, f)          # f raises
//	await asyncio.sleep(0.1); fut.cancel()     # False, and no report
//	fut = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(bad(), other))
//	await asyncio.sleep(0.1); fut.cancel()     # False, and no report
//
// while a done gather's cancel (_GatheringFuture.cancel) returns False
// first and the report stays ("_GatheringFuture exception was never
// retrieved"). Futures with a cancel of their own (RunInExecutorOn's,
// SubmitTo's) keep it after completion; it must not skip the withdrawal.
func TestProbeSwitch_CancelOnDoneOwnCancelFutureWithdrawsReport(t *testing.T) {
	boom := errors.New("executor failure")
	for _, debug := range []bool{false, true} {
		l := NewTestLoop()
		l.SetDebug(debug)
		var r eventLog
		l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { r.log("handler: %s: %v", c.Message, c.Err) })
		main := CreateTask(l, func(tk *T) (int, error) {
			fut := RunInExecutorOn(tk, goExecutor{}, func(context.Context) (int, error) { return 0, boom })
			if err := waitDone(tk, fut); err != nil {
				return 0, err
			}
			r.log("executor cancel: %v", fut.Cancel())
			g := Gather(tk, CreateTask(tk, func(*T) (int, error) { return 0, errors.New("gather failure") }))
			if err := waitDone(tk, g); err != nil {
				return 0, err
			}
			r.log("gather cancel: %v", g.Cancel())
			return 0, nil
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		mustClose(t, l)
		checkEvents(t, []string{
			"executor cancel: false",
			"gather cancel: false",
			"handler: Future exception was never retrieved: gather failure",
		}, &r)
	}
}

// The same for a cross-loop call's future (SubmitTo): CPython's
// wrap_future(run_coroutine_threadsafe(...)) is a plain future, whose
// cancel() on a done future withdraws the report.
func TestProbeSwitch_CancelOnDoneSubmitToFutureWithdrawsReport(t *testing.T) {
	for _, debug := range []bool{false, true} {
		var r eventLog
		err := twoLoops(t, func(tk *T, b *Loop) error {
			a := tk.Loop()
			a.SetDebug(debug)
			a.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { r.log("handler: %s: %v", c.Message, c.Err) })
			fut, err := SubmitTo(tk, b, func(*T) (int, error) { return 0, errRemote })
			if err != nil {
				return err
			}
			if err := waitDone(tk, fut); err != nil {
				return err
			}
			r.log("cross cancel: %v", fut.Cancel())
			kept, err := SubmitTo(tk, b, func(*T) (int, error) { return 0, errRemote })
			if err != nil {
				return err
			}
			if err := waitDone(tk, kept); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkEvents(t, []string{
			"cross cancel: false",
			"handler: Future exception was never retrieved: remote failure",
		}, &r)
	}
}

// FUT-10 through the runtime cleanup (not Close) for futures whose extras
// hold done callbacks and a cancel of their own: gather's outer future and
// RunInExecutorOn's, each with a callback added, one removed, and never
// read. The record must not keep the future reachable (the cancel and the
// callbacks reference it), or only Close would report. Debug mode too
// (the record then exists from creation).
func TestProbeSwitch_FUT10OwnCancelFuturesReportedOnCollection(t *testing.T) {
	for _, debug := range []bool{false, true} {
		l := NewTestLoop()
		l.SetDebug(debug)
		var r eventLog
		l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { r.log("handler: %s: %v", c.Message, c.Err) })
		func() {
			var g *Future[[]int]
			var ex *Future[int]
			main := CreateTask(l, func(tk *T) (int, error) {
				g = Gather(tk, CreateTask(tk, func(*T) (int, error) { return 0, errors.New("gather failure") }))
				ex = RunInExecutorOn(tk, goExecutor{}, func(context.Context) (int, error) { return 0, errors.New("executor failure") })
				for _, aw := range []Awaitable{g, ex} {
					id := aw.AddDoneCallback(func() { r.log("removed callback ran") })
					aw.AddDoneCallback(func() { r.log("callback ran") })
					aw.RemoveDoneCallback(id)
				}
				if err := waitDone(tk, g); err != nil {
					return 0, err
				}
				return 0, waitDone(tk, ex)
			})
			if err := l.RunUntilComplete(main); err != nil {
				t.Fatal(err)
			}
		}()
		for i := 0; i < 50 && len(r.snapshot()) < 4; i++ {
			runtime.GC()
			runOne(t, l)
		}
		r.log("closing")
		mustClose(t, l)
		got := r.snapshot()
		slices.Sort(got[2:4]) // the two cleanups' order is the collector's
		checkLines(t, []string{
			"callback ran",
			"callback ran",
			"handler: Future exception was never retrieved: executor failure",
			"handler: Future exception was never retrieved: gather failure",
			"closing",
		}, got)
	}
}
