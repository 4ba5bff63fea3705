package cancelcheck

import (
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A coroutine that suspends fewer times in a cancellation run than in the
// first (here: on the later runs it returns at once, as one whose path
// depends on the real clock or a map's order may) leaves points untested:
// that is a problem naming where the point was, not an "all good" with
// "( at ):  point not reached" lines.
func TestProbeH24_PointNotReachedIsAProblem(t *testing.T) {
	runs := 0
	r := Check(func(t *asyncio.T, w *Watch) error {
		runs++
		if runs > 1 {
			return nil // a cancellation run: no suspension at all
		}
		if err := asyncio.Sleep(t, ms); err != nil {
			return err
		}
		return asyncio.Sleep(t, ms)
	})
	if r.OK() {
		t.Errorf("OK with untested points:\n%s", r)
	}
	if r.Points != 2 || len(r.Runs) != 3 {
		t.Fatalf("report:\n%s", r)
	}
	for _, run := range r.Runs[1:] {
		if run.Outcome != NotReached || !strings.Contains(run.At, "probe_h24_test.go:") {
			t.Errorf("point %d: outcome %s at %q, want %s at the first run's place", run.Point, run.Outcome, run.At, NotReached)
		}
	}
	s := r.String()
	if !strings.Contains(s, "2 with problems") || strings.Contains(s, "( at )") ||
		!strings.Contains(s, "point 1 (at cancelcheck.TestProbeH24_PointNotReachedIsAProblem.func1 ") ||
		!strings.Contains(s, "PROBLEM: not tested") {
		t.Errorf("report:\n%s", s)
	}
}
