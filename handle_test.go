package asyncio

import (
	"testing"
	"time"
)

func TestHANDLE1_CancelSkipsQueuedHandle(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	var b *Handle
	l.CallSoon(func() { r.log("A cancels B"); b.Cancel(); b.Cancel() })
	b = l.CallSoon(r.logFn("B"))
	c := l.CallSoon(r.logFn("C"))
	runOne(t, l)
	c.Cancel() // after it ran: no effect beyond Cancelled
	r.log("B cancelled=%v C cancelled=%v", b.Cancelled(), c.Cancelled())
	checkEvents(t, []string{"A cancels B", "C", "B cancelled=true C cancelled=true"}, &r)
}

func TestHANDLE2_TimerWhenAndCancel(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	l.CallLater(time.Second, func() {
		h := l.CallLater(time.Minute, r.logFn("cancelled timer"))
		r.log("when=%v", h.When())
		h.Cancel()
		r.log("cancelled=%v count=%d", h.Cancelled(), l.cancelledTimers)
	})
	l.CallLater(2*time.Minute, l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"when=1m1s", "cancelled=true count=1"}, &r)
}

func TestHANDLE2_CancelDueTimerInReadyQueue(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	var timer *TimerHandle
	l.CallSoon(func() { r.log("A cancels the due timer"); timer.Cancel() })
	timer = l.CallLater(0, r.logFn("timer"))
	runOne(t, l)
	// The timer had left the heap: it is skipped and not counted as a
	// cancelled heap entry (LOOP-4's count stays exact).
	r.log("heap=%d cancelled count=%d", len(l.timers), l.cancelledTimers)
	checkEvents(t, []string{"A cancels the due timer", "heap=0 cancelled count=0"}, &r)
}

func TestHANDLE3_ThreadsafeCancelFromAnotherGoroutine(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	hc := make(chan *Handle)
	go func() {
		h, _ := l.CallSoonThreadsafe(r.logFn("cancelled threadsafe"))
		h.Cancel()
		hc <- h
	}()
	h := <-hc
	go func() {
		h2, _ := l.CallSoonThreadsafe(r.logFn("kept threadsafe"))
		hc <- h2
	}()
	h2 := <-hc
	runOne(t, l)
	r.log("cancelled=%v %v", h.Cancelled(), h2.Cancelled())
	checkEvents(t, []string{"kept threadsafe", "cancelled=true false"}, &r)
}
