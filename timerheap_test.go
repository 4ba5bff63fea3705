package asyncio

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLOOP1_TimersFireInDeadlineThenSchedulingOrder schedules many timers
// with random, often equal deadlines, cancels some (LOOP-4 lazy removal and
// compaction both happen), and checks that the survivors fire in deadline
// order, ties in scheduling order, and that no cancelled one fires.
func TestLOOP1_TimersFireInDeadlineThenSchedulingOrder(t *testing.T) {
	for _, n := range []int{1, 2, 5, 17, 150, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			l := NewTestLoop()
			defer l.Close()
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			type timer struct {
				when time.Duration
				seq  int
			}
			var want []string
			var live []timer
			var got []string
			hs := make([]*TimerHandle, n)
			for i := range n {
				when := time.Duration(rng.IntN(max(n/4, 1))) * time.Millisecond
				name := fmt.Sprintf("t%d@%v", i, when)
				hs[i] = l.CallAt(when, func() { got = append(got, name) })
				if rng.IntN(3) != 0 {
					live = append(live, timer{when, i})
				}
			}
			keep := map[int]bool{}
			for _, tm := range live {
				keep[tm.seq] = true
			}
			for i, h := range hs {
				if !keep[i] {
					h.Cancel()
				}
			}
			sort.SliceStable(live, func(a, b int) bool { return live[a].when < live[b].when })
			for _, tm := range live {
				want = append(want, fmt.Sprintf("t%d@%v", tm.seq, tm.when))
			}
			l.CallAt(time.Duration(n)*time.Millisecond, l.Stop)
			if err := l.RunForever(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("firing order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLOOP4_TimerHeapPopsInOrder checks the heap directly against a sort,
// interleaving pushes and pops, with compaction of cancelled timers.
func TestLOOP4_TimerHeapPopsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h timerHeap
	var ref []*TimerHandle
	seq := uint64(0)
	pushN := func(k int) {
		for range k {
			seq++
			th := &TimerHandle{Handle: Handle{inHeap: true}, when: time.Duration(rng.IntN(50)), seq: seq}
			h.push(th)
			ref = append(ref, th)
		}
	}
	less := func(a, b *TimerHandle) bool {
		if a.when != b.when {
			return a.when < b.when
		}
		return a.seq < b.seq
	}
	popCheck := func(k int) {
		sort.Slice(ref, func(i, j int) bool { return less(ref[i], ref[j]) })
		for range k {
			if len(h) == 0 {
				break
			}
			got := h.pop()
			if got != ref[0] || got.inHeap {
				t.Fatalf("pop = (%v,%d) inHeap=%v, want (%v,%d)", got.when, got.seq, got.inHeap, ref[0].when, ref[0].seq)
			}
			ref = ref[1:]
		}
	}
	for range 200 {
		pushN(rng.IntN(20))
		if rng.IntN(4) == 0 {
			// Cancel some, compact, and drop them from the reference.
			var kept []*TimerHandle
			for _, th := range ref {
				if rng.IntN(2) == 0 {
					th.cancelled = true
				} else {
					kept = append(kept, th)
				}
			}
			h.compact()
			ref = kept
			if len(h) != len(ref) {
				t.Fatalf("after compact: %d timers, want %d", len(h), len(ref))
			}
		}
		popCheck(rng.IntN(15))
	}
	popCheck(len(ref))
	if len(h) != 0 {
		t.Fatalf("%d timers left", len(h))
	}
}
