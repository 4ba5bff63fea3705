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

// simPair is a network with a client and a server host joined by link.
func simPair(t *asyncio.T, seed uint64, link LinkConfig) (*SimNetwork, *SimHost, *SimHost) {
	n := NewSimNetwork(t, seed)
	c, s := n.Host("client"), n.Host("server")
	n.SetLink(c, s, link)
	return n, c, s
}

// An echo over a 50 ms link: the dial takes one round trip, a line and
// its echo another; the addresses are the simulated ones; on virtual
// time all of it takes no real time.
func TestSimEchoLatency(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, s := simPair(t, 1, LinkConfig{Latency: 50 * time.Millisecond})
		srv, err := StartServer(t, echoLines("echo: "), "", 80, WithNetwork(s))
		if err != nil {
			return err
		}
		defer srv.Close()
		if got := srv.Addr().String(); got != "10.0.0.2:80" {
			return fmt.Errorf("server address %s", got)
		}
		start := t.Loop().Time()
		r, w, err := OpenConnection(t, "server", 80, WithNetwork(c))
		if err != nil {
			return err
		}
		defer w.Close()
		if d := t.Loop().Time() - start; d != 100*time.Millisecond {
			return fmt.Errorf("dial took %v, want 100ms", d)
		}
		if got := w.ExtraInfo("peername").(net.Addr).String(); got != "10.0.0.2:80" {
			return fmt.Errorf("peername %s", got)
		}
		if got := w.ExtraInfo("sockname").(net.Addr).String(); got != "10.0.0.1:49152" {
			return fmt.Errorf("sockname %s", got)
		}
		start = t.Loop().Time()
		w.Write([]byte("hello\n"))
		line, err := r.ReadLine(t)
		if err != nil {
			return err
		}
		if string(line) != "echo: hello\n" {
			return fmt.Errorf("got %q", line)
		}
		if d := t.Loop().Time() - start; d != 100*time.Millisecond {
			return fmt.Errorf("echo took %v, want 100ms", d)
		}
		return nil
	})
}

// No listener: ECONNREFUSED after one round trip; an unknown name: a
// *net.DNSError.
func TestSimRefused(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		_, c, _ := simPair(t, 1, LinkConfig{Latency: 10 * time.Millisecond})
		_, _, err := OpenConnection(t, "10.0.0.2", 81, WithNetwork(c))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dial: %v, want ECONNREFUSED", err)
		}
		if d := t.Loop().Time(); d != 20*time.Millisecond {
			return fmt.Errorf("refused after %v, want 20ms", d)
		}
		_, err = DialConn(t, "tcp", "nowhere:80", WithNetwork(c))
		var dns *net.DNSError
		if !errors.As(err, &dns) || !dns.IsNotFound {
			return fmt.Errorf("dial nowhere: %v, want a not-found DNSError", err)
		}
		return nil
	})
}
