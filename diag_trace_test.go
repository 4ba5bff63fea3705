package asyncio

import (
	"bytes"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"testing"
	"time"
)

// While runtime/trace runs, every task is a trace task, each step a region,
// and cancel requests and deliveries are log events. The stdlib has no
// trace parser, so the test looks for the strings the events carry in the
// trace's string table.
func TestTrace_TasksRegionsAndCancelLogs(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "traced-worker", func(tk *T) error { return Sleep(tk, time.Hour) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		w.Cancel("traced-stop")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	trace.Stop()
	for _, s := range []string{"asyncio.Task", "asyncio.step", "asyncio.name", "traced-worker",
		"asyncio.cancel", "traced-stop", "asyncio.cancel.delivered"} {
		if !bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("the trace has no %q", s)
		}
	}
}

// Without tracing, no trace task is made: a task's diagnostics stay nil.
func TestTrace_OffCostsNothing(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "w", func(tk *T) error { return Sleep(tk, 0) })
		if err := tk.Await(w); err != nil {
			return err
		}
		if w.t.diag != nil || tk.diag != nil {
			t.Errorf("diagnostics allocated without any diagnostic on")
		}
		return nil
	})
}

// WithTaskLabels labels each task's goroutine with its name, so a
// goroutine profile splits by task.
func TestTaskLabels_InGoroutineProfile(t *testing.T) {
	var prof string
	l := NewLoop(WithVirtualTime(), WithTaskLabels())
	defer mustClose(t, l)
	main := startTask(l, "main", func(tk *T) error {
		w := startTask(tk, "labelled-worker", func(tk *T) error { return Sleep(tk, time.Hour) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		var b strings.Builder
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			return err
		}
		prof = b.String()
		w.Cancel()
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prof, `"asyncio.task":"labelled-worker"`) || !strings.Contains(prof, `"asyncio.task":"main"`) {
		t.Errorf("goroutine profile without the task labels:\n%s", prof)
	}
}
