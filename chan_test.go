package asyncio

import (
	"errors"
	"testing"
)

// Recv and Send complete at once, without suspending, when the channel is
// ready (a buffered value, buffer space, a closed channel); otherwise they
// suspend the task while the loop runs others, and a goroutine feeding the
// channel is outside work the virtual clock waits for.
func TestChanRecvSend(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		buf := make(chan int, 1)
		r.log("send to buffer: %v", Send(tk, buf, 1))
		v, ok, err := Recv(tk, buf)
		r.log("recv from buffer: %d %v %v", v, ok, err)

		unbuf := make(chan string)
		other := startTask(tk, "other", func(o *T) error {
			r.log("other runs while main waits")
			go func() { unbuf <- "from a goroutine" }()
			return nil
		})
		s, ok, err := Recv(tk, unbuf)
		r.log("recv: %q %v %v", s, ok, err)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(other)

		got := make(chan string, 1)
		go func() { got <- <-unbuf }()
		r.log("send: %v", Send(tk, unbuf, "to a goroutine"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		s, _, _ = Recv(tk, got)
		r.log("goroutine got %q", s)

		close(buf)
		v, ok, err = Recv(tk, buf)
		r.log("closed: %d %v %v", v, ok, err)
		err = Send(tk, buf, 2)
		r.log("send on closed: %v %v", errors.Is(err, ErrClosedChannel), err)
		return nil
	})
	checkEvents(t, []string{
		"send to buffer: <nil>",
		"recv from buffer: 1 true <nil>",
		"other runs while main waits",
		`recv: "from a goroutine" true <nil>`,
		"send: <nil>",
		`goroutine got "to a goroutine"`,
		"closed: 0 false <nil>",
		"send on closed: true asyncio: send on closed channel (send on closed channel)",
	}, &r)
}

// A channel closed while a task waits in Recv: it returns ok=false. (A
// close while a Send waits is a data race in Go, only a sender may close;
// should it happen, the helper recovers the send's panic and Send returns
// ErrClosedChannel instead of crashing the process: sendOrStop below.)
func TestChanClosedWhileAwaited(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		rc := make(chan int)
		recvT := CreateTask(tk, func(x *T) (bool, error) { _, ok, err := Recv(x, rc); return ok, err })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // recvT waits now
		close(rc)
		ok, err := recvT.Await(tk)
		r.log("recv: ok=%v %v", ok, err)
		return nil
	})
	checkEvents(t, []string{"recv: ok=false <nil>"}, &r)
	closed := make(chan int)
	close(closed)
	_, done, err := sendOrStop(make(chan struct{}), closed, 1)
	if !done || !errors.Is(err, ErrClosedChannel) {
		t.Errorf("sendOrStop on a closed channel: done=%v %v", done, err)
	}
}

// Cancelling a task waiting in Recv or Send returns the CancelledError,
// leaves the channel as it was (the value is not taken, nothing is sent),
// and leaves no goroutine behind (goleak in TestMain).
func TestChanCancelLeavesNothingBehind(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		// Two channels: on one, the two helpers could meet each other.
		ch, out := make(chan int), make(chan int)
		recvT := CreateTask(tk, func(x *T) (int, error) { v, _, err := Recv(x, ch); return v, err })
		sendT := CreateTask(tk, func(x *T) (int, error) { return 0, Send(x, out, 9) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		recvT.Cancel("no more")
		sendT.Cancel("enough")
		_, err := recvT.Await(tk)
		r.log("recv: %s", describe(err))
		_, err = sendT.Await(tk)
		r.log("send: %s", describe(err))
		r.log("external=%d", tk.Loop().Stats().External)
		select {
		case ch <- 1:
			r.log("a receiver is still waiting on the recv channel")
		default:
			r.log("no receiver left")
		}
		select {
		case v := <-out:
			r.log("send channel had %d", v)
		default:
			r.log("send channel untouched")
		}
		return nil
	})
	checkEvents(t, []string{`recv: CancelledError("no more")`, `send: CancelledError("enough")`, "external=0", "no receiver left", "send channel untouched"}, &r)
}

// When the operation wins the race with a cancellation (the helper already
// received the value), the value is not lost: Recv returns it, and the
// cancellation arrives at the task's next await.
func TestChanValueWinsRaceWithCancel(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		ch := make(chan int)
		taken := make(chan struct{})
		w := startTask(tk, "w", func(x *T) error {
			v, ok, err := Recv(x, ch)
			r.log("recv: %d %v %v, cancelling=%d", v, ok, err, x.Cancelling())
			err = Sleep(x, 0)
			r.log("next await: %s", describe(err))
			return err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // w waits in Recv
		// Deliver the value and wait until the helper has taken it, holding
		// the loop so that its answer cannot be drained yet; then cancel:
		// the answer that arrives is the value.
		go func() { ch <- 5; close(taken) }()
		<-taken //asynciovet:ignore blockingcall holds the loop on purpose: the helper's answer must not be drained before the cancel
		w.Cancel("late")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	checkEvents(t, []string{"recv: 5 true <nil>, cancelling=1", `next await: CancelledError("late")`}, &r)
}

// Nil arguments panic with a *ValueError naming them, before anything
// starts.
func TestChanMisuse(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		r.log("%v", mustPanic(t, "Recv nil ch", func() { Recv[int](tk, nil) }))
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		r.log("%v", mustPanic(t, "Send nil ch", func() { Send[int](tk, nil, 1) }))
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		r.log("%v", mustPanic(t, "Recv nil t", func() { Recv(nil, make(chan int)) }))
		return nil
	})
	checkEvents(t, []string{
		"asyncio: Recv: nil channel (it would block forever)",
		"asyncio: Send: nil channel (it would block forever)",
		"asyncio: Recv: nil task",
	}, &r)
}

// BenchmarkRecv measures one channel round trip from a task: "ready" a
// value already buffered (no suspension); "waiting" a ping-pong with a
// goroutine, where Recv waits (one helper goroutine per Recv) and the
// task is woken through CallSoonThreadsafe; "raw-go" the same ping-pong
// between two plain goroutines, for scale.
func BenchmarkRecv(b *testing.B) {
	b.Run("ready", func(b *testing.B) {
		runVirtualB(b, func(tk *T) {
			ch := make(chan int, 1)
			for i := 0; i < b.N; i++ {
				ch <- i //asynciovet:ignore blockingcall a buffered channel with room: never blocks
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				if v, _, _ := Recv(tk, ch); v != i {
					b.Fatal(v)
				}
			}
		})
	})
	b.Run("waiting", func(b *testing.B) {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		defer close(ping)
		runVirtualB(b, func(tk *T) {
			for i := 0; i < b.N; i++ {
				if err := Send(tk, ping, i); err != nil {
					b.Fatal(err)
				}
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				if v, _, _ := Recv(tk, pong); v != i {
					b.Fatal(v)
				}
			}
		})
	})
	b.Run("raw-go", func(b *testing.B) {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		defer close(ping)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ping <- i
			if v := <-pong; v != i {
				b.Fatal(v)
			}
		}
	})
}

// runVirtualB runs fn as the main task of a virtual-time loop for a
// benchmark.
func runVirtualB(b *testing.B, fn func(tk *T)) {
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := Run(func(tk *T) (struct{}, error) { fn(tk); return struct{}{}, nil }, WithVirtualTime()); err != nil {
		b.Fatal(err)
	}
}
