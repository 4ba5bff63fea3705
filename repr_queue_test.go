package asyncio

import (
	"regexp"
	"testing"
)

// A queue's repr lists its items as Python prints a list ("[1, 2, 3]").
func TestREPR_QueueItemsAsPythonList(t *testing.T) {
	q := NewQueue[int](0)
	for _, v := range []int{1, 2, 3} {
		if err := q.PutNowait(v); err != nil {
			t.Fatal(err)
		}
	}
	got := regexp.MustCompile(` at 0x[0-9a-f]+`).ReplaceAllString(q.String(), " at ADDR")
	if want := "<Queue at ADDR maxsize=0 _queue=[1, 2, 3] tasks=3>"; got != want {
		t.Errorf("repr = %q, want %q", got, want)
	}
}
