//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// orderProto logs its ConnectionMade as "<name>:made".
type orderProto struct {
	BaseProtocol
	name string
	log  *[]string
}

func (o *orderProto) ConnectionMade(Transport) { *o.log = append(*o.log, o.name+":made") }

// connectOrder connects a Protocol client to a Protocol server on
// 127.0.0.1 through opts and returns the order of their ConnectionMade
// calls, once both have come.
func connectOrder(t *asyncio.T, opts ...Option) (order []string, err error) {
	var log []string
	srv, err := CreateServer(t, func() Protocol { return &orderProto{name: "server", log: &log} }, "127.0.0.1", 0, opts...)
	if err != nil {
		return nil, err
	}
	defer func() {
		srv.Close()
		srv.AbortClients()
		if werr := srv.WaitClosed(t); err == nil {
			err = werr
		}
	}()
	tr, _, err := CreateConnection(t, func() Protocol { return &orderProto{name: "client", log: &log} }, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, opts...)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	for range 10 {
		if len(log) == 2 {
			break
		}
		if err := asyncio.Sleep(t, 0); err != nil {
			return nil, err
		}
	}
	return log, nil
}

// On loopback the kernel completes the handshake inside connect(): the
// server's listening socket is readable before the client's socket turns
// writable, so asyncio accepts first and the server's connection_made
// comes before the client's (tests/ports p96). A zero-latency link of the
// simulated network is such a loopback: it used to hand the client its
// connection first and queue it for the server only after, so the
// client's ConnectionMade came first.
func TestProbeH26_SimLoopbackServerAcceptsBeforeClientConnects(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		real, err := connectOrder(t)
		if err != nil {
			return err
		}
		want := []string{"server:made", "client:made"}
		if !slices.Equal(real, want) {
			return fmt.Errorf("real loopback: %v, want %v", real, want)
		}
		sim, err := connectOrder(t, WithNetwork(NewSimNetwork(t, 1).Host("local")))
		if err != nil {
			return err
		}
		if !slices.Equal(sim, want) {
			return fmt.Errorf("simulated loopback: %v, want %v (as on real loopback)", sim, want)
		}
		return nil
	})
}

// A dial on a zero-latency link cancelled after the server has the
// connection and before the client's socket turns writable closes the
// client's socket, as create_connection does when cancelled: the server
// reads EOF, and no descriptor is left.
func TestProbeH26_SimLoopbackDialCancelledInTheWindow(t *testing.T) {
	clean(t)
	runVirtual(t, func(t *asyncio.T) error {
		n := NewSimNetwork(t, 1)
		h := n.Host("local")
		gotEOF := asyncio.NewFuture[string](t)
		srv, err := StartServer(t, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			data, err := r.Read(t, -1)
			gotEOF.SetResult(fmt.Sprintf("%q %v", data, err))
			return nil
		}, "127.0.0.1", 0, WithNetwork(h))
		if err != nil {
			return err
		}
		dial := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
			_, w, err := OpenConnection(t, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port, WithNetwork(h))
			if err == nil {
				w.Close()
			}
			return err
		})
		established := func() bool {
			for _, l := range n.Trace() {
				if strings.Contains(l, "established") {
					return true
				}
			}
			return false
		}
		for !established() {
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
		}
		if dial.Done() {
			return errors.New("the dial finished in the iteration its connection was established")
		}
		dial.Cancel()
		if _, err := dial.Await(t); !asyncio.IsCancelled(err) {
			return fmt.Errorf("dial: %v, want cancelled", err)
		}
		got, err := asyncio.WaitFor(t, time.Second, gotEOF)
		if err != nil {
			return fmt.Errorf("the server's read: %w", err)
		}
		if got != `"" <nil>` {
			return fmt.Errorf("the server read %s, want EOF", got)
		}
		srv.Close()
		return srv.WaitClosed(t)
	})
}
