package asyncio

// Probes of h30 (tests/ports p97-p110).

import (
	"errors"
	"testing"
)

// In asyncio a done callback runs from a Handle (call_soon), so an
// exception escaping it reaches the exception handler with the handle in
// the context (p97). Done callbacks run here from the ready queue without
// a Handle, and the report had none.
func TestH30_DoneCallbackPanicReportNamesAHandle(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	var got []ExceptionContext
	l.SetExceptionHandler(func(_ *Loop, ctx ExceptionContext) { got = append(got, ctx) })
	boom := errors.New("boom")
	err := l.RunUntilComplete(CreateTask(l, func(t *T) (struct{}, error) {
		f := NewFuture[int](t)
		f.AddDoneCallback(func() { panic(boom) })
		l.CallSoon(func() { panic(boom) })
		f.SetResult(1)
		return struct{}{}, Sleep(t, 0)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d reports, want 2", len(got))
	}
	for i, ctx := range got {
		if ctx.Handle == nil || !errors.Is(ctx.Err, boom) {
			t.Errorf("report %d: handle %v, err %v; want a handle and boom", i, ctx.Handle, ctx.Err)
		}
	}
}
