package asyncio

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTASK2_DefaultNameFormattedLazilyKeepsItsNumber checks the lazily
// formatted default name: it carries the number drawn at creation (not
// at first use), SetName replaces it for good (also with ""), and
// WithName("") gets a default name.
func TestTASK2_DefaultNameFormattedLazilyKeepsItsNumber(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	body := func(*T) (int, error) { return 0, nil }
	a := CreateTask(l, body)
	b := CreateTask(l, body, WithName(""))
	c := CreateTask(l, body)
	c.SetName("")
	d := CreateTask(l, body)
	d.SetName("d")
	// Ask b first: its number is still the one drawn after a's.
	bn, an := b.Name(), a.T().Name()
	got := []string{an, bn, c.Name(), d.T().Name(), a.T().String()}
	if !strings.HasPrefix(an, "Task-") {
		t.Fatalf("default name %q", an)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimPrefix(an, "Task-"), &n); err != nil {
		t.Fatal(err)
	}
	want := []string{an, "Task-" + strconv.Itoa(n+1), "", "d", "<Task pending name='" + an + "'>"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if err := l.RunUntilComplete(d); err != nil {
		t.Fatal(err)
	}
}
