package asyncio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recorder is an event log stamped with the virtual clock.
type recorder struct {
	l  *Loop
	ev []string
}

func (r *recorder) log(format string, args ...any) {
	r.ev = append(r.ev, r.l.Time().String()+" "+fmt.Sprintf(format, args...))
}

// runMain runs main as task "main" on a fresh virtual-time loop until it is
// done, logs exception-handler calls, closes the loop and returns the log
// and main's error.
func runMain(t *testing.T, main func(tk *T, r *recorder) error) (*recorder, error) {
	t.Helper()
	l := NewTestLoop()
	r := &recorder{l: l}
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		r.log("handler: %s: %v", c.Message, c.Err)
	})
	task := CreateTask(l, func(tk *T) (struct{}, error) { return struct{}{}, main(tk, r) }, WithName("main"))
	if err := l.RunUntilComplete(task); err != nil && !task.Done() {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	err := task.Err()
	if cerr := l.Close(); cerr != nil {
		t.Fatalf("Close: %v", cerr)
	}
	return r, err
}

func checkLog(t *testing.T, r *recorder, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, r.ev); diff != "" {
		t.Errorf("event log mismatch (-want +got):\n%s", diff)
	}
}

// errMsg returns err's message, "<nil>" for nil.
func errMsg(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// rtMsg returns the Msg of a *RuntimeError, or a description of err.
func rtMsg(err error) string {
	var re *RuntimeError
	if errors.As(err, &re) {
		return re.Msg
	}
	return "not a RuntimeError: " + errMsg(err)
}

// sleeper is a child that logs its start and outcome around Sleep(d).
func sleeper(r *recorder, name string, d time.Duration, result int) func(*T) (int, error) {
	return func(tk *T) (int, error) {
		r.log("%s start", name)
		if err := Sleep(tk, d); err != nil {
			r.log("%s: %v", name, err)
			return 0, err
		}
		r.log("%s done", name)
		return result, nil
	}
}

// failer is a child that fails with err after d.
func failer(r *recorder, name string, d time.Duration, err error) func(*T) (int, error) {
	return func(tk *T) (int, error) {
		r.log("%s start", name)
		if e := Sleep(tk, d); e != nil {
			r.log("%s: %v", name, e)
			return 0, e
		}
		r.log("%s fails", name)
		return 0, err
	}
}

// runVirtual runs main as the main task of a fresh loop on virtual time.
func runVirtual(t *testing.T, main func(t *T) error) {
	t.Helper()
	if _, err := Run(func(at *T) (struct{}, error) { return struct{}{}, main(at) }, WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
}
