package asyncio

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
)

// goroutineLabelsOf returns the "# labels:" line of the goroutine profile
// record whose stack holds fn ("" if it has none, "?" if no record does).
func goroutineLabelsOf(fn string) string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	for _, rec := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(rec, fn) {
			continue
		}
		for _, line := range strings.Split(rec, "\n") {
			if strings.HasPrefix(line, "# labels:") {
				return strings.TrimPrefix(line, "# labels: ")
			}
		}
		return ""
	}
	return "?"
}

//go:noinline
func probeLabelsParkedB(t *T, f *Future[int]) (int, error) { return f.Await(t) }

//go:noinline
func probeLabelsParkedC(t *T, f *Future[int]) (int, error) { return f.Await(t) }

// Debug mode labels each task's goroutine (LabelTask). Turned off while a
// labelled task runs, the tasks that task then starts run on new
// goroutines, created from the labelled one (an eager first step inside
// CreateTask; a step runReady resumes from the task's goroutine), which
// inherit its labels (Go copies them to every goroutine, coroutines
// included): they must not run, nor be pooled, under the creator's label.
func TestProbeSwitch_NoTaskRunsUnderAnotherTasksLabel(t *testing.T) {
	l := NewTestLoop()
	l.SetDebug(true)
	defer mustClose(t, l)
	fb, fc := NewFuture[int](l), NewFuture[int](l)
	var labelsB, labelsC string
	main := CreateTask(l, func(tk *T) (int, error) {
		l.SetDebug(false)
		b := CreateTask(tk, func(t *T) (int, error) { return probeLabelsParkedB(t, fb) }, WithEagerStart(), WithName("B"))
		labelsB = goroutineLabelsOf("probeLabelsParkedB")
		c := CreateTask(tk, func(t *T) (int, error) { return probeLabelsParkedC(t, fc) }, WithName("C"))
		if err := Sleep(tk, 0); err != nil { // C's first step, resumed from main's goroutine
			return 0, err
		}
		labelsC = goroutineLabelsOf("probeLabelsParkedC")
		_, _ = fb.SetResult(1), fc.SetResult(2)
		if _, err := b.Await(tk); err != nil {
			return 0, err
		}
		return c.Await(tk)
	}, WithName("main"))
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if labelsB == "?" || strings.Contains(labelsB, "main") || labelsC == "?" || strings.Contains(labelsC, "main") {
		t.Errorf("goroutine labels of B %s, of C %s: want none (not the creator's)", labelsB, labelsC)
	}
}
