//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Promise (LinkConfig.Bandwidth: "bytes per second per direction";
// Partition: "segments between them are held (as TCP would retransmit
// them)"). What a stall or a partition held is sent again, at the link's
// bandwidth, when it ends: over a 1 ms link at 1,000 bytes/s, 4,000 bytes
// written during a 60 s stall arrive 4 s + 1 ms after the Resume (they
// all arrived 1 ms after it), and 1,000 bytes written at the Resume
// 1 s after those. The same for a partition and its Heal.
func TestH4SimReleaseKeepsBandwidth(t *testing.T) {
	for _, fault := range []string{"stall", "partition"} {
		t.Run(fault, func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n, c, s := simPair(t, 1, LinkConfig{Latency: time.Millisecond, Bandwidth: 1000})
				arrivals := asyncio.NewFuture[[]time.Duration](t)
				srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
					defer w.Close()
					var got []time.Duration
					for _, size := range []int{4000, 1000} {
						if _, err := r.ReadExactly(t, size); err != nil {
							arrivals.SetException(err)
							return err
						}
						got = append(got, t.Loop().Time())
					}
					arrivals.SetResult(got)
					return nil
				}, "", 80, WithNetwork(s))
				if err != nil {
					return err
				}
				defer srv.Close()
				_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
				if err != nil {
					return err
				}
				defer w.Close()
				if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil { // the server accepted
					return err
				}
				conn := n.ConnOf(w.ExtraInfo("sockname").(net.Addr))
				if fault == "stall" {
					conn.Stall()
				} else {
					n.Partition(c, s)
				}
				w.Write(make([]byte, 4000))
				if err := asyncio.Sleep(t, 60*time.Second); err != nil {
					return err
				}
				end := t.Loop().Time()
				if fault == "stall" {
					conn.Resume()
				} else {
					n.Heal(c, s)
				}
				w.Write(make([]byte, 1000))
				got, err := asyncio.WaitFor(t, time.Minute, arrivals)
				if err != nil {
					return err
				}
				want := []time.Duration{end + 4*time.Second + time.Millisecond, end + 5*time.Second + time.Millisecond}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					return fmt.Errorf("arrivals %v, want %v (the fault ended at %v)", got, want, end)
				}
				return nil
			})
		})
	}
}

// Promise (SimConn.Stall: "holds everything the connection carries, both
// ways, until Resume"). Over a 10 ms link the SYN reaches the server at
// 10 ms (the connection exists from then), the SYN-ACK the client at
// 20 ms, the client's ACK the server at 30 ms. A 5 s stall from 15 ms
// holds the SYN-ACK: the client connects 10 ms after the Resume, and the
// server accepts 10 ms after that (it connected at 20 ms). A 5 s stall
// from 25 ms holds the ACK: the server accepts at 5.035 s (at 30 ms).
// A dial cancelled, and a network closed, while the SYN-ACK is held end
// as they do in any handshake, leaving nothing open.
func TestH4SimStallHoldsHandshake(t *testing.T) {
	for _, tc := range []struct {
		name                string
		stallAt             time.Duration
		connected, accepted time.Duration
	}{
		{"SYN-ACK", 15 * time.Millisecond, 5025 * time.Millisecond, 5035 * time.Millisecond},
		{"ACK", 25 * time.Millisecond, 20 * time.Millisecond, 5035 * time.Millisecond},
	} {
		t.Run(tc.name, func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
				accepted := asyncio.NewFuture[time.Duration](t)
				srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
					accepted.SetResult(t.Loop().Time())
					return echoLines("")(t, r, w)
				}, "", 80, WithNetwork(s))
				if err != nil {
					return err
				}
				defer srv.Close()
				n.At(tc.stallAt, func() { n.Conns()[0].StallFor(5 * time.Second) })
				r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
				if err != nil {
					return err
				}
				defer w.Close()
				connected := t.Loop().Time()
				at, err := asyncio.WaitFor(t, time.Minute, accepted)
				if err != nil {
					return err
				}
				if connected != tc.connected || at != tc.accepted {
					return fmt.Errorf("connected at %v, accepted at %v; want %v, %v", connected, at, tc.connected, tc.accepted)
				}
				w.Write([]byte("ping\n"))
				if line, err := r.ReadLine(t); err != nil || string(line) != "ping\n" {
					return fmt.Errorf("echo %q, %v", line, err)
				}
				return nil
			})
		})
	}
	for _, end := range []string{"cancel", "network closed"} {
		t.Run(end, func(tt *testing.T) {
			clean(tt)
			runVirtual(tt, func(t *asyncio.T) error {
				n, c, s := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
				srv, err := StartServer(t, echoLines(""), "", 80, WithNetwork(s))
				if err != nil {
					return err
				}
				defer srv.Close()
				n.At(15*time.Millisecond, func() { n.Conns()[0].Stall() })
				dial := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
					_, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
					if err == nil {
						w.Close()
					}
					return struct{}{}, err
				})
				if err := asyncio.Sleep(t, time.Second); err != nil {
					return err
				}
				if dial.Done() {
					return fmt.Errorf("the dial ended during the stall: %v", dial.Err())
				}
				if end == "cancel" {
					dial.Cancel()
				} else {
					n.Close()
				}
				_, err = dial.Await(t)
				if end == "cancel" && !asyncio.IsCancelled(err) || end != "cancel" && !errors.Is(err, ErrSimNetworkClosed) {
					return fmt.Errorf("the dial ended with %v", err)
				}
				if len(n.Conns()) != 0 {
					return fmt.Errorf("connections left: %v", n.Conns())
				}
				return nil
			})
		})
	}
}
