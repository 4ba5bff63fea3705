package asyncio

import (
	"strings"
	"testing"
)

// A GroupSnapshot made by hand, with a nil LoopSnapshot in one of its
// loops' parts: WritePS and WriteTree write that loop's header saying
// "no snapshot" and nothing under it, the other loops as usual, and
// Stats gives it a zero entry (each of them dereferenced the nil part
// and panicked).
func TestGroupSnapshot_NilLoopSnapshotIsALoopWithoutOne(t *testing.T) {
	other := &LoopSnapshot{Tasks: []TaskInfo{{ID: "0x1", Name: "worker", State: "waiting"}}}
	other.Stats.Tasks = 1
	s := &GroupSnapshot{Loops: []GroupLoopSnapshot{
		{Index: 0, Name: "a"},
		{Index: 1, Name: "b", LoopSnapshot: other},
	}}
	// Each method on its own, a panic reported as a failure of that one.
	run := func(name string, check func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panicked: %v", r)
				}
			}()
			check(t)
		})
	}
	for name, write := range map[string]func(*strings.Builder) error{
		"WritePS":   func(b *strings.Builder) error { return s.WritePS(b) },
		"WriteTree": func(b *strings.Builder) error { return s.WriteTree(b) },
	} {
		run(name, func(t *testing.T) {
			var b strings.Builder
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.HasPrefix(out, "== loop 0 (a): no snapshot ==\n\n== loop 1 (b): 1 tasks ==\n") {
				t.Errorf("want loop 0's header saying no snapshot, nothing under it, then loop 1's part:\n%s", out)
			}
			if !strings.Contains(out, "worker") {
				t.Errorf("loop 1's task is missing:\n%s", out)
			}
		})
	}
	run("Stats", func(t *testing.T) {
		stats := s.Stats()
		if len(stats) != 2 || stats[0] != (LoopStats{}) || stats[1].Tasks != 1 {
			t.Errorf("Stats: %+v; want a zero entry for loop 0 and loop 1's counters", stats)
		}
	})
}
