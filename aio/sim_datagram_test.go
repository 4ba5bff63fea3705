//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// collector is a DatagramProtocol that keeps what arrives.
type collector struct {
	got  []string
	from []string
	errs []error
}

func (c *collector) ConnectionMade(DatagramTransport) {}
func (c *collector) ConnectionLost(error)             {}
func (c *collector) ErrorReceived(err error)          { c.errs = append(c.errs, err) }
func (c *collector) DatagramReceived(data []byte, from net.Addr) {
	c.got = append(c.got, string(data))
	c.from = append(c.from, from.String())
}

// lossyRun sends 200 datagrams over a link with loss, duplication and
// jitter and returns what arrived, in order.
func lossyRun(seed uint64) ([]string, []string, error) {
	var got, from []string
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		n := NewSimNetwork(t, seed)
		a, b := n.Host("a"), n.Host("b")
		n.SetLink(a, b, LinkConfig{Latency: 10 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1, Duplicate: 0.05})
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 53}, nil, WithNetwork(b))
		if err != nil {
			return struct{}{}, err
		}
		defer rtr.Close()
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, nil, &net.UDPAddr{IP: b.IP(), Port: 53}, WithNetwork(a))
		if err != nil {
			return struct{}{}, err
		}
		defer str.Close()
		for i := range 200 {
			if err := str.SendTo([]byte(fmt.Sprint(i)), nil); err != nil {
				return struct{}{}, err
			}
			if err := asyncio.Sleep(t, time.Millisecond); err != nil {
				return struct{}{}, err
			}
		}
		if err := asyncio.Sleep(t, time.Second); err != nil {
			return struct{}{}, err
		}
		got, from = recv.got, recv.from
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	return got, from, err
}

// Loss, duplication and reordering, from the seed: the same seed gives
// the same arrivals; some are lost, some duplicated, some overtaken.
func TestSimDatagramLossDupReorder(t *testing.T) {
	clean(t)
	got, from, err := lossyRun(5)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := lossyRun(5)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(again) {
		t.Fatalf("seed 5 gave two runs:\n%v\n%v", got, again)
	}
	seen := map[string]int{}
	reordered := 0
	last := -1
	for _, g := range got {
		seen[g]++
		var i int
		fmt.Sscan(g, &i)
		if i < last {
			reordered++
		}
		last = max(last, i)
	}
	lost, dup := 0, 0
	for i := range 200 {
		switch seen[fmt.Sprint(i)] {
		case 0:
			lost++
		case 2:
			dup++
		}
	}
	if lost == 0 || dup == 0 || reordered == 0 {
		t.Fatalf("lost %d, duplicated %d, reordered %d: want some of each", lost, dup, reordered)
	}
	if from[0] != "10.0.0.1:49152" {
		t.Errorf("sender address %s", from[0])
	}
	t.Logf("200 sent: %d arrived, %d lost, %d duplicated, %d overtaken", len(got), lost, dup, reordered)
}

// A connected endpoint sending where nobody listens gets ECONNREFUSED
// (ICMP port unreachable) through ErrorReceived; a partition drops
// datagrams; a used address is EADDRINUSE.
func TestSimDatagramRefusedAndPartition(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		a, b := n.Host("a"), n.Host("b")
		n.SetDefaultLink(LinkConfig{Latency: 5 * time.Millisecond})
		sender := &collector{}
		str, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return sender }, nil, &net.UDPAddr{IP: b.IP(), Port: 9}, WithNetwork(a))
		if err != nil {
			return err
		}
		defer str.Close()
		str.SendTo([]byte("anyone?"), nil)
		if err := asyncio.Sleep(t, 20*time.Millisecond); err != nil {
			return err
		}
		if len(sender.errs) != 1 || !errors.Is(sender.errs[0], syscall.ECONNREFUSED) {
			return fmt.Errorf("errors: %v, want one ECONNREFUSED", sender.errs)
		}
		recv := &collector{}
		rtr, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return recv }, &net.UDPAddr{Port: 9}, nil, WithNetwork(b))
		if err != nil {
			return err
		}
		defer rtr.Close()
		if _, _, err := CreateDatagramEndpoint(t, func() DatagramProtocol { return &collector{} }, &net.UDPAddr{Port: 9}, nil, WithNetwork(b)); !errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("second bind: %v", err)
		}
		n.Partition(a, b)
		str.SendTo([]byte("lost"), nil)
		n.Heal(a, b)
		str.SendTo([]byte("through"), nil)
		if err := asyncio.Sleep(t, 20*time.Millisecond); err != nil {
			return err
		}
		if fmt.Sprint(recv.got) != "[through]" {
			return fmt.Errorf("received %v", recv.got)
		}
		return nil
	})
}
