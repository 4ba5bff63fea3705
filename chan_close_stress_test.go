package asyncio

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// Close at a random moment while tasks receive from a channel another
// goroutine sends on: every value whose send completed was received by a
// task, exactly once (none lost in a helper when Close unwound its task,
// none received twice), and every task's received values are in order.
func TestChanCloseLosesNothingUnderRandomCloses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		ch := make(chan int)
		workers := 1 + rng.IntN(4)
		got := make([][]int, workers)
		for w := range workers {
			CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
				for {
					v, ok, err := Recv(tk, ch)
					if err != nil || !ok {
						return 0, err
					}
					got[w] = append(got[w], v)
					if rng.IntN(3) == 0 {
						if err := Sleep(tk, 0); err != nil {
							return 0, err
						}
					}
				}
			})
		}
		stop := make(chan struct{})
		sent := make(chan int, 1)
		go func() {
			n := 0
			defer func() { sent <- n }()
			for {
				select {
				case ch <- n + 1:
					n++
				case <-stop:
					return
				}
			}
		}()
		runForSomeIterations(t, l, rng)
		mustClose(t, l)
		close(stop)
		n := <-sent
		seen := make(map[int]bool, n)
		for w, vs := range got {
			for i, v := range vs {
				if seen[v] {
					t.Fatalf("round %d: %d received twice", round, v)
				}
				seen[v] = true
				if i > 0 && vs[i-1] >= v {
					t.Fatalf("round %d: worker %d got %v out of order", round, w, vs)
				}
			}
		}
		if len(seen) != n {
			t.Fatalf("round %d: %d values sent, %d received: lost at Close", round, n, len(seen))
		}
	}
}

// The same for Send: at a random Close, a value is reported sent (Send
// returned nil) exactly when the receiving goroutine got it.
func TestChanCloseSendReportsExactlyWhatWasReceived(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rng := rand.New(rand.NewPCG(13, 17))
	for round := range 200 {
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		ch := make(chan int)
		workers := 1 + rng.IntN(4)
		reported := make([][]int, workers)
		for w := range workers {
			CreateTask(l, func(tk *T) (int, error) { //asynciovet:ignore unawaitedtask pending at Close on purpose
				for i := 0; ; i++ {
					v := w*1_000_000 + i
					if err := Send(tk, ch, v); err != nil {
						return 0, err
					}
					reported[w] = append(reported[w], v)
				}
			})
		}
		stop := make(chan struct{})
		received := make(chan map[int]bool, 1)
		go func() {
			got := map[int]bool{}
			defer func() { received <- got }()
			for {
				select {
				case v := <-ch:
					got[v] = true
				case <-stop:
					return
				}
			}
		}()
		runForSomeIterations(t, l, rng)
		mustClose(t, l)
		close(stop)
		got := <-received
		n := 0
		for _, vs := range reported {
			for _, v := range vs {
				if !got[v] {
					t.Fatalf("round %d: %d reported sent, never received", round, v)
				}
				n++
			}
		}
		if n != len(got) {
			t.Fatalf("round %d: %d received, %d reported sent: a received value was reported not sent", round, len(got), n)
		}
	}
}

// runForSomeIterations runs l for a random number of iterations (no
// clock), then lets other goroutines run a random while: the helpers of
// the tasks' channel operations may take or give values meanwhile, the
// loop stopped.
func runForSomeIterations(t *testing.T, l *Loop, rng *rand.Rand) {
	t.Helper()
	var tick func()
	iterations := rng.IntN(60)
	tick = func() {
		if iterations--; iterations < 0 {
			l.Stop()
			return
		}
		l.CallSoon(tick)
	}
	l.CallSoon(tick)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	for range rng.IntN(50) {
		runtime.Gosched()
	}
}
