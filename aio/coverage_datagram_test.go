package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// dgFlow is a DatagramProtocol with write flow control that logs every
// call and resolves lost when ConnectionLost runs.
type dgFlow struct {
	log     *[]string
	tr      DatagramTransport
	resumed *asyncio.Future[struct{}]
	lost    *asyncio.Future[struct{}]
}

func (p *dgFlow) ConnectionMade(tr DatagramTransport) { p.tr = tr }
func (p *dgFlow) DatagramReceived(d []byte, addr net.Addr) {
	*p.log = append(*p.log, "received "+string(d))
}
func (p *dgFlow) ErrorReceived(err error) { *p.log = append(*p.log, "error "+err.Error()) }
func (p *dgFlow) ConnectionLost(err error) {
	*p.log = append(*p.log, fmt.Sprintf("lost %v", err))
	if p.lost != nil {
		p.lost.SetResult(struct{}{})
	}
}
func (p *dgFlow) PauseWriting() {
	*p.log = append(*p.log, fmt.Sprintf("pause size=%d", p.tr.GetWriteBufferSize()))
}
func (p *dgFlow) ResumeWriting() {
	*p.log = append(*p.log, fmt.Sprintf("resume size=%d", p.tr.GetWriteBufferSize()))
	if p.resumed != nil && !p.resumed.Done() {
		p.resumed.SetResult(struct{}{})
	}
}

// newDatagramPair returns a connected datagram transport over one end of
// a Unix datagram socketpair, and the other end. Unlike UDP over loopback
// (whose send buffer is released as soon as the packet is looped back), a
// Unix datagram socket refuses a send with EAGAIN while its peer's
// receive queue is full, so the transport's "socket not writable now"
// path (asyncio's sendto appending to _buffer and add_writer) is reached
// deterministically.
func newDatagramPair(t *testing.T, l *asyncio.Loop, p *dgFlow) (*datagramTransport, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	tr := &datagramTransport{
		flowControl: flowControl{loop: l, high: defaultHighWater, low: defaultHighWater / 4},
		fd:          fds[0],
		protocol:    p,
		extra:       map[string]any{"socket": fds[0]},
		remote:      &net.UnixAddr{Name: "@peer", Net: "unixgram"},
	}
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
		if tr.GetWriteBufferSize() > 0 {
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

func seq(from, to int) []string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, fmt.Sprintf("d%03d", i))
	}
	return s
}

// A datagram the socket cannot take now is queued (8 bytes of overhead
// each, as asyncio counts), the protocol is paused above the high-water
// mark, the queue is flushed in order once the socket is writable, and the
// protocol is resumed at the low-water mark (asyncio's
// _SelectorDatagramTransport.sendto/_sendto_ready, STREAM-8 limits).
func TestDatagramSendToQueuesWhenNotWritable(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := &dgFlow{log: &log, resumed: asyncio.NewFuture[struct{}](at.Loop())}
		tr, peer := newDatagramPair(t, at.Loop(), p)
		if low, high := tr.GetWriteBufferLimits(); low != 16384 || high != 65536 {
			return fmt.Errorf("default limits low=%d high=%d, want asyncio's 16384/65536", low, high)
		}
		if err := tr.SetWriteBufferLimits(20, 12); err != nil {
			return err
		}
		if low, high := tr.GetWriteBufferLimits(); low != 12 || high != 20 {
			return fmt.Errorf("limits low=%d high=%d", low, high)
		}
		direct := fillUntilQueued(t, tr) // d<direct> is queued: 4+8 bytes
		log = append(log, fmt.Sprintf("queued size=%d", tr.GetWriteBufferSize()))
		tr.SendTo([]byte(fmt.Sprintf("d%03d", direct+1)), nil) // 24 > 20: pause
		tr.SendTo([]byte(fmt.Sprintf("d%03d", direct+2)), nil) // already paused
		log = append(log, fmt.Sprintf("size=%d", tr.GetWriteBufferSize()))
		got := drainPeer(t, peer)
		if _, err := asyncio.WaitFor(at, 10*time.Second, p.resumed); err != nil {
			return err
		}
		got = append(got, drainPeer(t, peer)...)
		if d := cmp.Diff(seq(0, direct+3), got); d != "" {
			return fmt.Errorf("datagrams at the peer (-want +got):\n%s", d)
		}
		log = append(log, "peer got every datagram in order")
		p.lost = asyncio.NewFuture[struct{}](at.Loop())
		tr.Close()
		_, err := asyncio.WaitFor(at, 10*time.Second, p.lost)
		return err
	})
	want := []string{"queued size=12", "pause size=24", "size=36", "resume size=0", "peer got every datagram in order", "lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// SetWriteBufferLimits below the queued size pauses the protocol at once
// (asyncio's set_write_buffer_limits calls _maybe_pause_protocol), and bad
// limits are a ValueError.
func TestDatagramSetWriteBufferLimitsPausesAtOnce(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := &dgFlow{log: &log}
		tr, _ := newDatagramPair(t, at.Loop(), p)
		fillUntilQueued(t, tr)
		log = append(log, fmt.Sprintf("queued size=%d", tr.GetWriteBufferSize()))
		err := tr.SetWriteBufferLimits(1, 2)
		var ve *asyncio.ValueError
		log = append(log, fmt.Sprintf("bad limits: %v %v", errors.As(err, &ve), ve.Msg))
		if err := tr.SetWriteBufferLimits(4, -1); err != nil {
			return err
		}
		low, high := tr.GetWriteBufferLimits()
		log = append(log, fmt.Sprintf("low=%d high=%d", low, high))
		tr.Abort()
		return nil
	})
	want := []string{
		"queued size=12",
		"bad limits: true high (1) must be >= low (2) must be >= 0",
		"pause size=12",
		"low=1 high=4",
		"lost <nil>",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Close with datagrams queued keeps the transport until the queue is
// flushed, then calls ConnectionLost(nil) (asyncio: close() leaves
// _call_connection_lost to _sendto_ready when _buffer is not empty).
func TestDatagramCloseFlushesQueueFirst(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := &dgFlow{log: &log, lost: asyncio.NewFuture[struct{}](at.Loop())}
		tr, peer := newDatagramPair(t, at.Loop(), p)
		direct := fillUntilQueued(t, tr)
		tr.Close()
		tr.Close() // idempotent
		log = append(log, fmt.Sprintf("closing=%v size=%d", tr.IsClosing(), tr.GetWriteBufferSize()))
		for range 3 {
			asyncio.Sleep(at, 0)
		}
		log = append(log, fmt.Sprintf("lost yet=%v", p.lost.Done()))
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
	want := []string{"closing=true size=12", "lost yet=false", "lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Abort drops the queued datagrams, closes at once and calls
// ConnectionLost(nil) exactly once, on a later iteration; SendTo after it
// is silently dropped (asyncio's _force_close, then the _conn_lost branch
// of sendto).
func TestDatagramAbortDropsQueue(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := &dgFlow{log: &log, lost: asyncio.NewFuture[struct{}](at.Loop())}
		tr, peer := newDatagramPair(t, at.Loop(), p)
		direct := fillUntilQueued(t, tr)
		tr.Abort()
		log = append(log, fmt.Sprintf("closing=%v size=%d lost=%v", tr.IsClosing(), tr.GetWriteBufferSize(), p.lost.Done()))
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
		asyncio.Sleep(at, 0)
		got := drainPeer(t, peer)
		if d := cmp.Diff(seq(0, direct), got); d != "" {
			return fmt.Errorf("datagrams at the peer (-want +got):\n%s", d)
		}
		return nil
	})
	want := []string{"closing=true size=0 lost=false", "lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Abort on a real UDP endpoint: ConnectionLost(nil) once, the socket is
// closed, and a datagram sent afterwards never reaches the server.
func TestDatagramAbortUDP(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		server := &udpLog{name: "server", log: &log, got: asyncio.NewFuture[struct{}](l), lost: asyncio.NewFuture[struct{}](l)}
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		addr := str.GetExtraInfo("sockname").(*net.UDPAddr)
		client := &udpLog{name: "client", log: &log, lost: asyncio.NewFuture[struct{}](l)}
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
		other := &udpLog{name: "other", log: &log, lost: asyncio.NewFuture[struct{}](l)}
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
		asyncio.WaitFor(at, 10*time.Second, other.lost)
		asyncio.WaitFor(at, 10*time.Second, server.lost)
		return nil
	})
	want := []string{"closing=true", "client lost <nil>", "server got marker", "other lost <nil>", "server lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}
