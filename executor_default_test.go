package asyncio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingExecutor is an Executor that runs each job on a goroutine of its own
// and counts the jobs it was given; refuse, when set, decides instead.
type countingExecutor struct {
	submitted atomic.Int32
	wg        sync.WaitGroup
	refuse    func(job func()) error
}

func (e *countingExecutor) Submit(job func()) error {
	e.submitted.Add(1)
	if e.refuse != nil {
		return e.refuse(job)
	}
	e.wg.Add(1)
	go func() { defer e.wg.Done(); job() }()
	return nil
}

// SetDefaultExecutor sends RunInExecutor and ToThread jobs to the given
// executor from then on, with the task's context values; a job submitted
// before the switch finishes on the built-in pool.
func TestSetDefaultExecutor_RunsLaterJobs(t *testing.T) {
	ex := &countingExecutor{}
	defer ex.wg.Wait()
	cv := NewContextVar("cv", "unset")
	runVirtual(t, func(tk *T) error {
		release := make(chan struct{})
		before := RunInExecutor(tk, func(context.Context) (string, error) {
			<-release
			return "built-in", nil
		})
		if err := tk.Loop().SetDefaultExecutor(ex); err != nil {
			return err
		}
		cv.Set(tk, "parrot")
		got, err := ToThread(tk, func(ctx context.Context) (string, error) { return cv.Value(ctx), nil })
		if err != nil || got != "parrot" {
			t.Errorf("ToThread on the new executor = %q, %v; want the task's context value", got, err)
		}
		later, err := RunInExecutor(tk, func(context.Context) (int, error) { return 7, nil }).Await(tk)
		if err != nil || later != 7 {
			t.Errorf("RunInExecutor = %d, %v", later, err)
		}
		close(release)
		if v, err := before.Await(tk); v != "built-in" || err != nil {
			t.Errorf("the job submitted before the switch: %q, %v", v, err)
		}
		return nil
	})
	if n := ex.submitted.Load(); n != 2 {
		t.Errorf("the executor got %d jobs, want the 2 submitted after SetDefaultExecutor", n)
	}
}

// WithDefaultExecutor sets it from the start; ShutdownDefaultExecutor
// waits for its jobs and refuses later ones, as for the built-in pool.
func TestWithDefaultExecutor_ShutdownWaitsAndRefuses(t *testing.T) {
	ex := &countingExecutor{}
	defer ex.wg.Wait()
	var log []string
	_, err := Run(func(tk *T) (struct{}, error) {
		release := make(chan struct{})
		job := RunInExecutor(tk, func(context.Context) (string, error) { <-release; return "done", nil })
		shut := CreateTask(tk, func(t *T) (struct{}, error) { return struct{}{}, ShutdownDefaultExecutor(t) })
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		log = append(log, "shutdown waits: "+boolText(!shut.Done()))
		close(release)
		if _, err := shut.Await(tk); err != nil {
			return struct{}{}, err
		}
		log = append(log, "job done before shutdown returned: "+boolText(job.Done()))
		_, err := ToThread(tk, func(context.Context) (int, error) { return 1, nil })
		log = append(log, "after: "+errText(err))
		return struct{}{}, nil
	}, WithVirtualTime(), WithDefaultExecutor(ex))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"shutdown waits: true", "job done before shutdown returned: true", "after: RuntimeError Executor shutdown has been called"}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if n := ex.submitted.Load(); n != 1 {
		t.Errorf("the executor got %d jobs, want 1", n)
	}
}

// A refused submission fails only that job (Submit's error; a panic in
// Submit is a *PanicError); an executor that runs a job and still says no
// has it counted once; the loop's accounting of outside work stays right
// (the virtual-time runs end, and ShutdownDefaultExecutor returns).
func TestSetDefaultExecutor_RefusedSubmissions(t *testing.T) {
	errFull := errors.New("pool full")
	cases := []struct {
		name   string
		refuse func(job func()) error
		check  func(v int, err error) string
	}{
		{"error", func(func()) error { return errFull }, func(v int, err error) string {
			if !errors.Is(err, errFull) {
				return "err = " + errText(err) + ", want Submit's error"
			}
			return ""
		}},
		{"panic", func(func()) error { panic("submit exploded") }, func(v int, err error) string {
			var pe *PanicError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "submit exploded") {
				return "err = " + errText(err) + ", want a *PanicError"
			}
			return ""
		}},
		{"ran, then refused", func(job func()) error { job(); return errFull }, func(v int, err error) string {
			if err != nil || v != 42 {
				return "got " + errText(err) + ", want the job's result: it ran"
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := &countingExecutor{refuse: c.refuse}
			runVirtual(t, func(tk *T) error {
				if err := tk.Loop().SetDefaultExecutor(ex); err != nil {
					return err
				}
				v, err := ToThread(tk, func(context.Context) (int, error) { return 42, nil })
				if msg := c.check(v, err); msg != "" {
					t.Error(msg)
				}
				return ShutdownDefaultExecutor(tk)
			})
		})
	}
}

// Bad input changes nothing: a nil executor is a *ValueError (the option
// panics with one when made), a closed loop an ErrLoopClosed.
func TestSetDefaultExecutor_BadInput(t *testing.T) {
	ex := &countingExecutor{}
	l := NewTestLoop()
	if err := l.SetDefaultExecutor(nil); !errors.Is(err, ErrValue) {
		t.Errorf("SetDefaultExecutor(nil) = %v, want a *ValueError", err)
	}
	if l.executor != nil {
		t.Error("a refused SetDefaultExecutor created the executor")
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !errors.Is(r.(error), ErrValue) {
				t.Errorf("WithDefaultExecutor(nil) panicked with %v, want a *ValueError", r)
			}
		}()
		WithDefaultExecutor(nil)
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.SetDefaultExecutor(ex); !errors.Is(err, ErrLoopClosed) {
		t.Errorf("SetDefaultExecutor on a closed loop = %v, want ErrLoopClosed", err)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", err), "*asyncio.") + " " + err.Error()
}

// A job on the executor of SetDefaultExecutor is a job of its loop too:
// LoopGroup.Close called from it returns an error naming the loop instead
// of waiting for the job, that is for itself.
func TestSetDefaultExecutor_GroupCloseFromAJobIsAnError(t *testing.T) {
	defer func(d time.Duration) { executorJoinTimeout = d }(executorJoinTimeout)
	executorJoinTimeout = time.Second // without the check Close would wait this long, then go on
	ex := &countingExecutor{}
	defer ex.wg.Wait()
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	g.Loop(0).SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var closeErr error
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i != 0 {
			return 0, nil
		}
		if err := tk.Loop().SetDefaultExecutor(ex); err != nil {
			return 0, err
		}
		_, err := ToThread(tk, func(context.Context) (struct{}, error) {
			closeErr = g.Close()
			return struct{}{}, nil
		})
		return 0, err
	})
	if err != nil {
		t.Errorf("RunEach: %v", err)
	}
	if !errors.Is(closeErr, ErrRuntime) || !strings.Contains(closeErr.Error(), "executor of loop 0") {
		t.Errorf("Close from a job of loop 0's executor: %v; want a *RuntimeError naming loop 0", closeErr)
	}
	if g.Loop(0).IsClosed() {
		t.Error("the refused Close closed loop 0")
	}
}
