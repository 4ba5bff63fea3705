//go:build linux

package aio

import (
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// arrivalProto logs what a server's connection receives, in its callbacks.
type arrivalProto struct {
	BaseProtocol
	log *[]string
}

func (o *arrivalProto) DataReceived(data []byte) { *o.log = append(*o.log, "data "+string(data)) }
func (o *arrivalProto) EOFReceived() bool        { *o.log = append(*o.log, "eof"); return true }

// sendOrder writes "x" from a client, then shuts its sending side down,
// each followed by a chain of CallSoon ticks, and returns the order in
// which the ticks and the server's protocol callbacks ran.
func sendOrder(t *asyncio.T, network Option) ([]string, error) {
	var log []string
	srv, err := CreateServer(t, func() Protocol { return &arrivalProto{log: &log} }, "127.0.0.1", 0, network)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	_, w, err := OpenConnection(t, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, network)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for _, send := range []func() error{
		func() error { return w.Write([]byte("x")) },
		w.WriteEOF,
	} {
		if err := settle(t); err != nil { // the server has its connection
			return nil, err
		}
		log = append(log, "send")
		if err := send(); err != nil {
			return nil, err
		}
		var tick func(i int)
		tick = func(i int) {
			log = append(log, fmt.Sprint("tick ", i))
			if i < 3 {
				t.Loop().CallSoon(func() { tick(i + 1) })
			}
		}
		t.Loop().CallSoon(func() { tick(1) })
		for range 5 {
			if err := asyncio.Sleep(t, 0); err != nil {
				return nil, err
			}
		}
	}
	return log, nil
}

// On a zero-latency simulated link what a sender writes (or its
// half-close) reaches the receiver in the poll of the next iteration, as
// on a loopback socket, where the kernel queues it inside send(): the
// receiver's callback runs after the callbacks already queued, before
// what they queue. The network once read the sender in that iteration and
// delivered on a timer in the one after, so the receiver heard it two
// iterations late (after tick 3), and a program's order changed
// (tests/ports p154: a relay's close finished before its client saw the
// EOF it had passed on).
func TestSimParityLoopbackDeliveryIteration(t *testing.T) {
	clean(t)
	want := []string{"send", "tick 1", "data x", "tick 2", "tick 3", "send", "tick 1", "eof", "tick 2", "tick 3"}
	runVirtual(t, func(t *asyncio.T) error {
		real, err := sendOrder(t, WithNetwork(nil))
		if err != nil {
			return err
		}
		if !slices.Equal(real, want) {
			return fmt.Errorf("loopback sockets: %q, want %q", real, want)
		}
		sim, err := sendOrder(t, WithNetwork(NewSimNetwork(t, 1).Host("local")))
		if err != nil {
			return err
		}
		if !slices.Equal(sim, want) {
			return fmt.Errorf("simulated network: %q, want %q (loopback's)", sim, want)
		}
		return nil
	})
}
