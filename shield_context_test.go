package asyncio

// Issue 19, the shield trap: the end of a bound context (RunContext,
// WithContext) is the bound task's cancellation; like any cancellation of
// a task it does not reach a task it created and shielded, whose context
// (and its Go calls' contexts) stay live.

import (
	"context"
	"testing"
)

func TestShieldedTaskContextSurvivesRunContextCancel(t *testing.T) {
	var r eventLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mainCancelled := make(chan struct{})
	v, err := RunContext(ctx, func(tk *T) (string, error) {
		inner := CreateTask(tk, func(x *T) (string, error) {
			v, err := Go(x, func(gctx context.Context) (string, error) {
				<-mainCancelled
				if err := gctx.Err(); err != nil {
					return "", err
				}
				return "inner done", nil
			})
			r.log("inner: Context().Err()=%v", x.Context().Err())
			return v, err
		}, WithName("inner"))
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // inner waits in Go
		cancel()
		_, err := Shield(inner).Await(tk)
		r.log("main: %s", describe(err))
		close(mainCancelled)
		v, err := inner.Await(tk)
		r.log("inner: %q %s", v, describe(err))
		return "main done", nil
	}, WithVirtualTime())
	r.log("RunContext: %q %v", v, err)
	checkEvents(t, []string{
		`main: CancelledError("context canceled")`,
		"inner: Context().Err()=<nil>",
		`inner: "inner done" <nil>`,
		`RunContext: "main done" <nil>`,
	}, &r)
}

// The values still flow: a child of a bound task reads the bound
// context's values and the ContextVars its creator set; only the
// cancellation stays behind. A child of a task that used SetContext keeps
// that context's cancellation (SetContext does not bind).
func TestBoundContextChildrenKeepValues(t *testing.T) {
	var r eventLog
	type key struct{}
	done, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "done"))
	cancel()
	live, stop := context.WithCancel(context.WithValue(context.Background(), key{}, "live"))
	defer stop()
	cv := NewContextVar("cv", 0)
	runVirtual(t, func(tk *T) error {
		parent := CreateTask(tk, func(x *T) (int, error) {
			cv.Set(x, 7)
			child := CreateTask(x, func(y *T) (int, error) {
				r.log("child: value=%v cv=%d ctxErr=%v", y.Context().Value(key{}), cv.Get(y), y.Context().Err())
				return 0, nil
			})
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task the test checks itself
			_, _ = child.Await(x)
			x.SetContext(done) // not bound: x runs on
			child = CreateTask(x, func(y *T) (int, error) {
				r.log("after SetContext: value=%v ctxErr=%v", y.Context().Value(key{}), y.Context().Err())
				return 0, nil
			})
			_, err := child.Await(x)
			return 0, err
		}, WithContext(live))
		_, err := parent.Await(tk)
		r.log("parent: %s", describe(err))
		return nil
	})
	checkEvents(t, []string{
		"child: value=live cv=7 ctxErr=<nil>",
		"after SetContext: value=done ctxErr=context canceled",
		"parent: <nil>",
	}, &r)
}
