package aio

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeTransport records reading pauses (Transport for StreamReader tests).
type fakeTransport struct {
	Transport
	log *[]string
}

func (f *fakeTransport) PauseReading()  { *f.log = append(*f.log, "pause") }
func (f *fakeTransport) ResumeReading() { *f.log = append(*f.log, "resume") }

// STREAM-2: past twice the limit the transport is paused; reading down to
// the limit resumes it.
func TestSTREAM2_ReaderPausesTransport(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 10)
		r.setTransport(&fakeTransport{log: &log})
		r.FeedData(make([]byte, 20))
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		r.FeedData(make([]byte, 1))
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		r.Read(at, 5)
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		r.Read(at, 6)
		log = append(log, fmt.Sprintf("buffered=%d", len(r.buf)))
		return nil
	})
	want := []string{"buffered=20", "pause", "buffered=21", "buffered=16", "resume", "buffered=10"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// STREAM-9/10: after Close, IsClosing is true at once; Drain yields once
// so ConnectionLost runs, then reports "Connection lost".
func TestSTREAM9_DrainAfterClose(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, -1)
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("drain open: %v", w.Drain(at)))
		w.Close()
		log = append(log, fmt.Sprintf("closing=%v", w.IsClosing()))
		err = w.Drain(at)
		log = append(log, fmt.Sprintf("drain closed: %v reset=%v", err, errors.Is(err, syscall.ECONNRESET)))
		log = append(log, fmt.Sprintf("wait_closed: %v", w.WaitClosed(at)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"drain open: <nil>", "closing=true", "drain closed: Connection lost: connection reset by peer reset=true", "wait_closed: <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// A connected UDP endpoint whose peer port is closed gets ECONNREFUSED
// through ErrorReceived (ICMP port unreachable) and stays open.
func TestDatagramErrorReceivedRefused(t *testing.T) {
	port := closedUDPPort(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := &udpErr{log: &log, got: asyncio.NewFuture[struct{}](at), lost: asyncio.NewFuture[struct{}](at)}
		tr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return p }, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return err
		}
		tr.SendTo([]byte("anyone?"), nil)
		if _, err := p.got.Await(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("closing=%v", tr.IsClosing()))
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
	want := []string{"error refused=true", "closing=false", "lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

type udpErr struct {
	log       *[]string
	got, lost *asyncio.Future[struct{}]
}

func (p *udpErr) ConnectionMade(DatagramTransport)      {}
func (p *udpErr) DatagramReceived(d []byte, _ net.Addr) {}
func (p *udpErr) ErrorReceived(err error) {
	*p.log = append(*p.log, fmt.Sprintf("error refused=%v", errors.Is(err, syscall.ECONNREFUSED)))
	if !p.got.Done() {
		p.got.SetResult(struct{}{})
	}
}
func (p *udpErr) ConnectionLost(err error) {
	*p.log = append(*p.log, fmt.Sprintf("lost %v", err))
	p.lost.SetResult(struct{}{})
}

func closedUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	return port
}

// Closing a Conn from another task (declared with Use) wakes a Read
// suspended in the first task with net.ErrClosed.
func TestConnCloseWakesPendingRead(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, -1)
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		c, err := DialConn(at, "tcp", srv.Addr().String())
		if err != nil {
			return err
		}
		reader := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			c.Use(t)
			return c.Read(make([]byte, 10))
		})
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprintf("close: %v", c.Close()))
		_, err = reader.Await(at)
		log = append(log, fmt.Sprintf("read: closed=%v", errors.Is(err, net.ErrClosed)))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"close: <nil>", "read: closed=true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Cancelling a task during name resolution cancels the lookup's context;
// the executor job still reports back and the loop's external-work count
// returns to zero.
func TestResolveCancelled(t *testing.T) {
	old := lookupIPAddr
	lookupIPAddr = func(ctx context.Context, host string) ([]net.IPAddr, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	defer func() { lookupIPAddr = old }()
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		res := asyncio.CreateTask(at, func(t *asyncio.T) ([]net.IP, error) { return resolveHost(t, "slow.test") })
		asyncio.Sleep(at, 0)
		res.Cancel()
		_, err := res.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v", asyncio.IsCancelled(err)))
		// The lookup (or, if it had not started, the executor's skip of it)
		// still reports back; the loop waits for it.
		// The lookup's completion still comes back; the loop waits for it.
		for at.Loop().Stats().External != 0 {
			asyncio.Sleep(at, time.Millisecond)
		}
		log = append(log, "external=0")
		return nil
	})
	want := []string{"cancelled=true", "external=0"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// FeedData copies: the caller may reuse its slice (asyncio's bytes are
// immutable); data handed out by a read is the caller's to keep.
func TestSTREAM2_FeedDataCopies(t *testing.T) {
	var got []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 100)
		buf := []byte("abc")
		r.FeedData(buf)
		copy(buf, "xyz")
		r.FeedData(buf)
		b, _ := r.Read(at, 3)
		got = append(got, string(b))
		copy(b, "!!!")
		b2, _ := r.Read(at, 3)
		got = append(got, string(b2))
		return nil
	})
	if d := cmp.Diff([]string{"abc", "xyz"}, got); d != "" {
		t.Fatal(d)
	}
}
