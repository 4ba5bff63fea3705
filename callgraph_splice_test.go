package asyncio

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A Gather inside a Shield inside a Wait: the leaf is awaited by the task
// at the end of the chain; a combinator's future that an edge added by
// FutureAddToAwaitedBy makes await itself ends the splicing instead of
// looping, and is a node of the graph.
func TestCallGraph_NestedCombinatorsSpliced(t *testing.T) {
	var nested, looped []string
	runVirtual(t, func(tk *T) error {
		leaf := CreateTask(tk, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }, WithName("leaf"))
		g := Gather[int](tk, leaf)
		sh := Shield[[]int](g)
		outer := startTask(tk, "outer", func(tk *T) error {
			_, _, err := Wait(tk, []Awaitable{sh}, Never, AllCompleted)
			return err
		})
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		nested = graphShape(CaptureCallGraph(leaf))

		other := CreateTask(tk, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }, WithName("other"))
		loop := Shield[int](other)
		FutureAddToAwaitedBy(loop, loop)
		looped = graphShape(CaptureCallGraph(other))

		outer.Cancel()
		leaf.Cancel()
		other.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task the test cancelled
		_ = tk.Await(outer)
		return nil
	})
	if d := cmp.Diff([]string{"leaf <- outer"}, nested); d != "" {
		t.Errorf("nested combinators (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"other <- shield"}, looped); d != "" {
		t.Errorf("a combinator awaiting itself (-want +got):\n%s", d)
	}
}
