//go:build unix

package aio

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// newDatagramPair returns a connected datagram transport over one end of
// a Unix datagram socketpair, and the other end. Unlike UDP over loopback
// (whose send buffer is released as soon as the packet is looped back), a
// Unix datagram socket refuses a send with EAGAIN while its peer's
// receive queue is full, so the transport's "socket not writable now"
// path (asyncio's sendto appending to _buffer and add_writer) is reached
// deterministically.
func newDatagramPair(t *testing.T, l *asyncio.Loop, p *datagramRecorder) (*datagramTransport, int) {
	t.Helper()
	fds := socketpair(t, unix.SOCK_DGRAM)
	t.Cleanup(func() { unix.Close(fds[1]) })
	tr := newDatagramTransport(l, fds[0], p, extraInfo{socket: true})
	tr.remote = &net.UnixAddr{Name: "@peer", Net: "unixgram"}
	p.tr = tr
	return tr, fds[1]
}

// fillUntilQueued sends numbered datagrams until the socket refuses one
// and the transport queues it; it returns how many were sent at once.
func fillUntilQueued(t *testing.T, tr *datagramTransport) int {
	t.Helper()
	for i := 0; i < 100000; i++ {
		if err := tr.SendTo([]byte(fmt.Sprintf("d%03d", i)), nil); err != nil {
			t.Fatal(err)
		}
		if tr.WriteBufferSize() > 0 {
			return i
		}
	}
	t.Fatal("the socket never refused a datagram")
	return 0
}

// drainPeer reads every datagram waiting on fd.
func drainPeer(t *testing.T, fd int) []string {
	t.Helper()
	var got []string
	buf := make([]byte, 64)
	for {
		n, err := unix.Read(fd, buf)
		if isWouldBlock(err) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(buf[:n]))
	}
}

// seq names the datagrams fillUntilQueued sends, from up to to.
func seq(from, to int) []string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, fmt.Sprintf("d%03d", i))
	}
	return s
}

// A UDP echo: a bound endpoint answers a connected one, which refuses an
// address other than its peer.
func TestDatagramEcho(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		server := newDatagramRecorder(at, "server", &log)
		server.echo = true
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		addr := str.ExtraInfo("sockname").(*net.UDPAddr)
		client := newDatagramRecorder(at, "client", &log)
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return client }, nil, addr)
		if err != nil {
			return err
		}
		if err := ctr.SendTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}); !errors.Is(err, asyncio.ErrValue) {
			return fmt.Errorf("wrong address accepted: %v", err)
		}
		ctr.SendTo([]byte("ping"), nil)
		if _, err := client.got.Await(at); err != nil {
			return err
		}
		ctr.Close()
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		client.lost.Await(at)
		str.Close()
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		server.lost.Await(at)
		return nil
	})
	want := []string{"server:made", "client:made", "server:got ping", "client:got echo ping", "client:lost <nil>", "server:lost <nil>"}
	expectLog(t, want, log)
}

// A connected UDP endpoint whose peer port is closed gets ECONNREFUSED
// through ErrorReceived (ICMP port unreachable) and stays open.
func TestDatagramErrorReceivedRefused(t *testing.T) {
	port := closedUDPPort(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
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
	want := []string{"p:made", "p:error syscall=recvfrom ECONNREFUSED", "closing=false", "p:lost <nil>"}
	expectLog(t, want, log)
}

// A datagram the socket cannot take now is queued (8 bytes of overhead
// each, as asyncio counts), the protocol is paused above the high-water
// mark, the queue is flushed in order once the socket is writable, and the
// protocol is resumed at the low-water mark (asyncio's
// _SelectorDatagramTransport.sendto/_sendto_ready, STREAM-8 limits).
func TestDatagramSendToQueuesWhenNotWritable(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
		tr, peer := newDatagramPair(t, at.Loop(), p)
		if high, low := tr.WriteBufferLimits(); high != 65536 || low != 16384 {
			return fmt.Errorf("default limits high=%d low=%d, want asyncio's 65536/16384", high, low)
		}
		if err := tr.SetWriteBufferLimits(20, 12); err != nil {
			return err
		}
		if high, low := tr.WriteBufferLimits(); high != 20 || low != 12 {
			return fmt.Errorf("limits high=%d low=%d", high, low)
		}
		direct := fillUntilQueued(t, tr) // d<direct> is queued: 4+8 bytes
		log = append(log, fmt.Sprintf("queued size=%d", tr.WriteBufferSize()))
		tr.SendTo([]byte(fmt.Sprintf("d%03d", direct+1)), nil) // 24 > 20: pause
		log = append(log, fmt.Sprintf("size=%d", tr.WriteBufferSize()))
		tr.SendTo([]byte(fmt.Sprintf("d%03d", direct+2)), nil) // already paused
		log = append(log, fmt.Sprintf("size=%d", tr.WriteBufferSize()))
		got := drainPeer(t, peer)
		if _, err := asyncio.WaitFor(at, 10*time.Second, p.resumed); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("size after resume=%d", tr.WriteBufferSize()))
		got = append(got, drainPeer(t, peer)...)
		if d := cmp.Diff(seq(0, direct+3), got); d != "" {
			return fmt.Errorf("datagrams at the peer (-want +got):\n%s", d)
		}
		log = append(log, "peer got every datagram in order")
		tr.Close()
		_, err := asyncio.WaitFor(at, 10*time.Second, p.lost)
		return err
	})
	want := []string{"queued size=12", "p:pause writing", "size=24", "size=36", "p:resume writing", "size after resume=0", "peer got every datagram in order", "p:lost <nil>"}
	expectLog(t, want, log)
}

// SetWriteBufferLimits below the queued size pauses the protocol at once
// (asyncio's set_write_buffer_limits calls _maybe_pause_protocol), and bad
// limits are a ValueError.
func TestDatagramSetWriteBufferLimitsPausesAtOnce(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
		tr, _ := newDatagramPair(t, at.Loop(), p)
		fillUntilQueued(t, tr)
		log = append(log, fmt.Sprintf("queued size=%d", tr.WriteBufferSize()))
		err := tr.SetWriteBufferLimits(1, 2)
		log = append(log, "bad limits: "+describe(err))
		if err := tr.SetWriteBufferLimits(4, -1); err != nil {
			return err
		}
		high, low := tr.WriteBufferLimits()
		log = append(log, fmt.Sprintf("high=%d low=%d size=%d", high, low, tr.WriteBufferSize()))
		tr.Abort()
		_, err = p.lost.Await(at)
		return err
	})
	want := []string{
		"queued size=12",
		"bad limits: ValueError high (1) must be >= low (2) must be >= 0",
		"p:pause writing",
		"high=4 low=1 size=12",
		"p:lost <nil>",
	}
	expectLog(t, want, log)
}

// Close with datagrams queued keeps the transport until the queue is
// flushed, then calls ConnectionLost(nil) (asyncio: close() leaves
// _call_connection_lost to _sendto_ready when _buffer is not empty).
// Nothing reads the peer until the test does, so the socket stays
// unwritable however long the loop runs: a virtual minute passes, with
// the loop polling the socket, before the peer is drained, and
// ConnectionLost must not have come.
func TestDatagramCloseFlushesQueueFirst(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
		tr, peer := newDatagramPair(t, at.Loop(), p)
		direct := fillUntilQueued(t, tr)
		tr.Close()
		tr.Close() // idempotent
		log = append(log, fmt.Sprintf("closing=%v size=%d", tr.IsClosing(), tr.WriteBufferSize()))
		if err := asyncio.Sleep(at, time.Minute); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("a minute later: lost=%v size=%d", p.lost.Done(), tr.WriteBufferSize()))
		got := drainPeer(t, peer)
		if _, err := asyncio.WaitFor(at, 10*time.Second, p.lost); err != nil {
			return err
		}
		got = append(got, drainPeer(t, peer)...)
		if d := cmp.Diff(seq(0, direct+1), got); d != "" {
			return fmt.Errorf("datagrams at the peer (-want +got):\n%s", d)
		}
		return nil
	})
	want := []string{"closing=true size=12", "a minute later: lost=false size=12", "p:lost <nil>"}
	expectLog(t, want, log)
}

// Abort drops the queued datagrams, closes at once and calls
// ConnectionLost(nil) exactly once, on a later iteration; SendTo after it
// is silently dropped (asyncio's _force_close, then the _conn_lost branch
// of sendto).
func TestDatagramAbortDropsQueue(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
		tr, peer := newDatagramPair(t, at.Loop(), p)
		direct := fillUntilQueued(t, tr)
		tr.Abort()
		log = append(log, fmt.Sprintf("closing=%v size=%d lost=%v", tr.IsClosing(), tr.WriteBufferSize(), p.lost.Done()))
		tr.Abort()
		tr.Close()
		if _, err := asyncio.WaitFor(at, 10*time.Second, p.lost); err != nil {
			return err
		}
		for i := range logThresholdForConnLostWrites + 1 {
			if err := tr.SendTo([]byte(fmt.Sprintf("late%d", i)), nil); err != nil {
				return err
			}
		}
		if err := settle(at); err != nil {
			return err
		}
		got := drainPeer(t, peer)
		if d := cmp.Diff(seq(0, direct), got); d != "" {
			return fmt.Errorf("datagrams at the peer (-want +got):\n%s", d)
		}
		return nil
	})
	want := []string{"closing=true size=0 lost=false", "p:lost <nil>"}
	expectLog(t, want, log)
}

// Abort on a real UDP endpoint: ConnectionLost(nil) once, the socket is
// closed, and a datagram sent afterwards never reaches the server.
func TestDatagramAbortUDP(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		server := newDatagramRecorder(at, "server", &log)
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		addr := str.ExtraInfo("sockname").(*net.UDPAddr)
		client := newDatagramRecorder(at, "client", &log)
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return client }, nil, addr)
		if err != nil {
			return err
		}
		ctr.Abort()
		log = append(log, fmt.Sprintf("closing=%v", ctr.IsClosing()))
		ctr.Abort()
		if _, err := asyncio.WaitFor(at, 10*time.Second, client.lost); err != nil {
			return err
		}
		ctr.SendTo([]byte("after abort"), nil)
		other := newDatagramRecorder(at, "other", &log)
		otr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return other }, nil, addr)
		if err != nil {
			return err
		}
		otr.SendTo([]byte("marker"), nil)
		if _, err := server.got.Await(at); err != nil {
			return err
		}
		otr.Close()
		str.Close()
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		asyncio.WaitFor(at, 10*time.Second, other.lost)
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		asyncio.WaitFor(at, 10*time.Second, server.lost)
		return nil
	})
	want := []string{"server:made", "client:made", "closing=true", "client:lost <nil>", "other:made", "server:got marker", "other:lost <nil>", "server:lost <nil>"}
	expectLog(t, want, log)
}

// WithReusePort lets two endpoints bind one UDP address (asyncio's
// reuse_port), and WithAllowBroadcast sets SO_BROADCAST (asyncio's
// allow_broadcast); an endpoint has neither by default.
func TestDatagramEndpointOptions(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		sockopt := func(tr DatagramTransport, opt int) int {
			v, _ := unix.GetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, opt)
			return v
		}
		local := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		first, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "first", new([]string)) }, local, nil, WithReusePort(), WithAllowBroadcast())
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("first: broadcast=%v", sockopt(first, unix.SO_BROADCAST) != 0))
		addr := first.ExtraInfo("sockname").(*net.UDPAddr)
		_, _, err = CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "plain", new([]string)) }, addr, nil)
		log = append(log, "plain on the same address: "+describe(err))
		second, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "second", new([]string)) }, addr, nil, WithReusePort())
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("second: same address=%v broadcast=%v",
			second.ExtraInfo("sockname").(net.Addr).String() == addr.String(), sockopt(second, unix.SO_BROADCAST) != 0))
		first.Abort()
		second.Abort()
		return settle(at)
	})
	want := []string{
		"first: broadcast=true",
		"plain on the same address: syscall=bind EADDRINUSE",
		"second: same address=true broadcast=false",
	}
	expectLog(t, want, log)
}

// A datagram endpoint still open when its loop closes has its socket
// closed with it, without a ConnectionLost on the closed loop (issue 11,
// breakage 4).
func TestLoopCloseClosesDatagramEndpoints(t *testing.T) {
	before := openFDs(t)
	l := asyncio.NewLoop()
	var log []string
	task := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return newDatagramRecorder(at, "udp", &log) },
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		return 0, err
	})
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoNewFDs(t, before)
	expectLog(t, []string{"udp:made"}, log) // no ConnectionLost on a closed loop
}
