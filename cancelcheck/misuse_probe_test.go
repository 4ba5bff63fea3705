package cancelcheck

// Hostile probe h33: misuse of cancelcheck's API gets a *ValueError
// naming it. Each case failed before the fix (CHANGELOG, h33) but the
// nil coroutine's, which held.

import (
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/misusetest"
)

func TestMisuseNilArgumentsAreValueErrors(t *testing.T) {
	ok := func(*asyncio.T, *Watch) error { return nil }
	for _, c := range []struct {
		name, want string
		call       func()
	}{
		{"Check(nil)", "cancelcheck.Check: nil coroutine", func() { Check(nil) }},                             // held
		{"Check(fn, nil)", "cancelcheck.Check: nil Option at index 1", func() { Check(ok, MaxRuns(1), nil) }}, // was a nil dereference
		// was NewRunner's "nil LoopOption at index 2", after two options the user never gave
		{"WithLoopOptions(nil)", "cancelcheck.WithLoopOptions: nil LoopOption at index 0", func() { WithLoopOptions(nil) }},
		{"Require(nil)", "cancelcheck.Require: nil testing.TB", func() { Require(nil, ok) }}, // was a nil dereference
	} {
		misusetest.Panic(t, c.name, c.want, new(*asyncio.ValueError), c.call)
	}
}

// A nil primitive given to a Watch fails the coroutine at once with a
// *ValueError naming it (defect: for a Lock or a Queue, nil or zero, the
// check at the end of the run crashed in a task whose error was dropped,
// so the run was reported completed, with no problem, and the checks
// after it never ran; a nil semaphore failed the coroutine with a
// nil-pointer dereference).
func TestMisuseWatchNilPrimitive(t *testing.T) {
	for _, c := range []struct {
		name, want string
		watch      func(w *Watch)
	}{
		{"Lock", `Watch.Lock("l"): nil Lock`, func(w *Watch) { w.Lock("l", nil) }},
		{"Semaphore", `Watch.Semaphore("s"): nil Semaphore`, func(w *Watch) { w.Semaphore("s", nil) }},
		{"BoundedSemaphore", `Watch.BoundedSemaphore("b"): nil BoundedSemaphore`, func(w *Watch) { w.BoundedSemaphore("b", nil) }},
		{"Queue", `Watch.Queue("q"): nil Queue`, func(w *Watch) { Queue[int](w, "q", nil) }},
		{"zero Queue", "Queue.Len: zero Queue", func(w *Watch) { Queue(w, "q", &asyncio.Queue[int]{}) }},
	} {
		r := Check(func(t *asyncio.T, w *Watch) error { c.watch(w); return nil })
		if r.OK() || len(r.Runs) != 1 || r.Runs[0].Outcome != Failed || !strings.Contains(r.String(), c.want) {
			t.Errorf("Watch %s(nil): report %s\nwant the coroutine failed with %q", c.name, r, c.want)
		}
	}
}
