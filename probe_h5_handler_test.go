package asyncio

import (
	"testing"
)

// A report made from inside the exception handler's call (the handler
// reports, or something it calls does, such as closing a transport whose
// protocol panics) calls the handler again, as asyncio's
// call_exception_handler does; it deadlocked on the lock that keeps the
// watchdog's reports from overlapping the loop's.
func TestH5_AReportFromInsideTheHandlerDoesNotDeadlock(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var got []string
	l.SetExceptionHandler(func(l *Loop, c ExceptionContext) {
		got = append(got, c.Message)
		if c.Message == "outer" {
			l.CallExceptionHandler(ExceptionContext{Message: "inner"})
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.CallExceptionHandler(ExceptionContext{Message: "outer"})
	}()
	if _, ok := waitOrHang(t, done, "the nested report"); !ok {
		return
	}
	if len(got) != 2 || got[0] != "outer" || got[1] != "inner" {
		t.Errorf("handler calls: %q; want outer, then inner", got)
	}
	// The lock is free again: a report from another goroutine goes in.
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		l.CallExceptionHandler(ExceptionContext{Message: "later"})
	}()
	if _, ok := waitOrHang(t, done2, "a later report"); ok && len(got) != 3 {
		t.Errorf("handler calls: %q; want a third", got)
	}
}
