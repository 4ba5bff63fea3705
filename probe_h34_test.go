package asyncio_test

import (
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TestSlowCallbackDurationReadable: asyncio's loop.slow_callback_duration
// is an attribute a program reads (tests/ports p131 prints it): 0.1 s by
// default, then what WithSlowCallbackDuration or SetSlowCallbackDuration
// set.
func TestSlowCallbackDurationReadable(t *testing.T) {
	l := asyncio.NewLoop()
	defer l.Close()
	if got := l.SlowCallbackDuration(); got != 100*time.Millisecond {
		t.Errorf("default SlowCallbackDuration = %v, want 100ms", got)
	}
	l.SetSlowCallbackDuration(50 * time.Millisecond)
	if got := l.SlowCallbackDuration(); got != 50*time.Millisecond {
		t.Errorf("after SetSlowCallbackDuration(50ms): %v", got)
	}
	l2 := asyncio.NewLoop(asyncio.WithSlowCallbackDuration(time.Second))
	defer l2.Close()
	if got := l2.SlowCallbackDuration(); got != time.Second {
		t.Errorf("WithSlowCallbackDuration(1s): %v", got)
	}
}
