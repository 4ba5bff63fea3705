package asyncio

// The virtual clock's stall report (stall.go): outside work that does not
// come back is reported after the grace period, naming where it started.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// siteOfNextLine is the file:line of the line after the caller's.
func siteOfNextLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line+1)
}

// stallLoop is a virtual-time loop with a tiny grace whose exception
// handler records each report and calls unblock on the first: the
// explicit signal that ends the wait (no sleep in the test).
func stallLoop(t *testing.T, unblock func()) (*Loop, *[]ExceptionContext) {
	t.Helper()
	l := NewLoop(WithVirtualTime(), WithOutsideGrace(time.Millisecond))
	var reports []ExceptionContext
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		reports = append(reports, c)
		if len(reports) == 1 {
			unblock()
		}
	})
	return l, &reports
}

func checkStall(t *testing.T, reports []ExceptionContext, pending []string) {
	t.Helper()
	if len(reports) != 1 {
		t.Fatalf("%d reports, want 1: %v", len(reports), reports)
	}
	c := reports[0]
	var se *StalledError
	if !errors.As(c.Err, &se) || !errors.Is(c.Err, ErrStalled) {
		t.Fatalf("report error %T %v, want a *StalledError matching ErrStalled", c.Err, c.Err)
	}
	checkLines(t, pending, se.Pending)
	msg := c.Err.Error()
	if !strings.HasPrefix(msg, "asyncio: virtual clock stalled: waited ") || !strings.Contains(msg, "\nthe tasks and what they wait on:\n") {
		t.Fatalf("message:\n%s", msg)
	}
}

func TestVirtualClockStallReportsForgottenExpectExternal(t *testing.T) {
	var release func()
	l, reports := stallLoop(t, func() { release() })
	defer mustClose(t, l)
	var site string
	task := CreateTask(l, func(x *T) (time.Duration, error) {
		site = siteOfNextLine()
		release = x.Loop().ExpectExternal()
		// The clock cannot move while the work is expected: the sleep
		// ends only once the report's handler released it.
		err := Sleep(x, time.Second)
		return x.Loop().Time(), err
	}, WithName("w"))
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if now, err := task.Result(); now != time.Second || err != nil {
		t.Fatalf("task: %v %v", now, err)
	}
	checkStall(t, *reports, []string{"ExpectExternal at " + site})
}

func TestVirtualClockStallReportsRecvWithoutSender(t *testing.T) {
	ch := make(chan int)
	l, reports := stallLoop(t, func() { go func() { ch <- 7 }() })
	defer mustClose(t, l)
	var site string
	task := CreateTask(l, func(x *T) (int, error) {
		site = siteOfNextLine()
		v, _, err := Recv(x, ch)
		return v, err
	}, WithName("w"))
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if v, err := task.Result(); v != 7 || err != nil {
		t.Fatalf("task: %v %v", v, err)
	}
	checkStall(t, *reports, []string{`Recv by task "w" at ` + site})
	if (*reports)[0].Task != task.T() {
		t.Fatalf("report's task: %v", (*reports)[0].Task)
	}
}

// A Go call is named with its function; 0 turns the report off, and a
// negative grace is a *ValueError.
func TestVirtualClockStallReportsGoCall(t *testing.T) {
	unblock := make(chan struct{})
	l, reports := stallLoop(t, func() { close(unblock) })
	defer mustClose(t, l)
	var site string
	fn := blockUntilClosed(unblock)
	task := CreateTask(l, func(x *T) (int, error) {
		site = siteOfNextLine()
		return Go(x, fn)
	}, WithName("w"))
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	checkStall(t, *reports, []string{"Go call " + funcNameOf(fn) + ` by task "w" at ` + site})
	off := NewLoop(WithVirtualTime(), WithOutsideGrace(0))
	defer mustClose(t, off)
	if w := off.stallWait(); w != -1 {
		t.Fatalf("WithOutsideGrace(0) waits %v, want -1 (forever, no report)", w)
	}
	v := mustPanic(t, "WithOutsideGrace(-1)", func() { WithOutsideGrace(-1) })
	if err, ok := v.(*ValueError); !ok || err.Msg != "WithOutsideGrace: negative grace period -1ns" {
		t.Fatalf("WithOutsideGrace(-1): %v", v)
	}
}

func blockUntilClosed(ch chan struct{}) func(ctx context.Context) (int, error) {
	return func(context.Context) (int, error) { <-ch; return 1, nil }
}

// One report per stall: while nothing runs, the grace periods that follow
// the first report add none (the poll hook counts them, then releases).
func TestVirtualClockStallReportsOncePerStall(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithOutsideGrace(time.Millisecond))
	defer mustClose(t, l)
	var release func()
	reports, polls := 0, -1
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if errors.Is(c.Err, ErrStalled) {
			if reports++; reports == 1 {
				polls = 0
			}
		}
	})
	l.SetBeforePoll(func() {
		if polls >= 0 {
			if polls++; polls == 4 {
				release()
			}
		}
	})
	task := CreateTask(l, func(x *T) (struct{}, error) {
		release = x.Loop().ExpectExternal()
		return struct{}{}, Sleep(x, time.Second)
	})
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if reports != 1 || polls < 4 {
		t.Fatalf("%d reports over %d more idle polls, want 1", reports, polls)
	}
}
