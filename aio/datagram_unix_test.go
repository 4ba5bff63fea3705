//go:build unix

package aio

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Unix datagram endpoints: CreateUnixDatagramEndpoint, and
// CreateDatagramEndpoint with WithSocket of a Unix datagram socket.

// sockDir is a directory for socket files whose paths stay far below
// sockaddr_un's limit (t.TempDir's have the test's name in them).
func sockDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ug")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// unixgramSocket returns a non-blocking Unix datagram socket bound to path
// (unbound for ""); the test closes it.
func unixgramSocket(t *testing.T, path string) int {
	t.Helper()
	fd, err := NewSocket("unixgram")
	if err != nil {
		t.Fatal(err)
	}
	if path != "" {
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
	}
	return fd
}

// addrRecorder is a datagramRecorder that also keeps each sender's
// address.
type addrRecorder struct {
	*datagramRecorder
	from []net.Addr
}

func newAddrRecorder(owner asyncio.LoopOwner, name string, log *[]string) *addrRecorder {
	return &addrRecorder{datagramRecorder: newDatagramRecorder(owner, name, log)}
}

func (p *addrRecorder) DatagramReceived(d []byte, addr net.Addr) {
	p.from = append(p.from, addr)
	p.datagramRecorder.DatagramReceived(d, addr)
}

// await waits for f, failing the test if it fails or is still not done
// after many loop iterations (what the tests wait for is already in a
// socket queue or scheduled: a bug fails the test rather than hang it).
func await[R any](t *testing.T, at *asyncio.T, f *asyncio.Future[R]) R {
	t.Helper()
	spinUntil(t, at, f.Done)
	r, err := f.Await(at)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two bound endpoints: one sends to the other's path, which answers at
// the sender's address as DatagramReceived gave it. The extra info names
// the socket and its path; an unconnected endpoint has no peername.
func TestUnixDatagramRoundTrip(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	pathA, pathB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		a := newAddrRecorder(at, "a", &log)
		a.echo = true
		trA, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return a }, pathA, "")
		if err != nil {
			return err
		}
		b := newAddrRecorder(at, "b", &log)
		trB, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return b }, pathB, "")
		if err != nil {
			return err
		}
		if got := trA.ExtraInfo("sockname"); !sameUnixAddr(got, pathA) {
			t.Errorf("sockname %#v, want *net.UnixAddr %s unixgram", got, pathA)
		}
		if got := trA.ExtraInfo("peername"); got != nil {
			t.Errorf("peername of an unconnected endpoint: %#v", got)
		}
		if fd, ok := trA.ExtraInfo("socket").(int); !ok || fd < 0 {
			t.Errorf("socket %#v", trA.ExtraInfo("socket"))
		}
		if err := trB.SendTo([]byte("hi"), &net.UnixAddr{Name: pathA, Net: "unixgram"}); err != nil {
			return err
		}
		await(t, at, b.got)
		if len(a.from) != 1 || !sameUnixAddr(a.from[0], pathB) {
			t.Errorf("a got the datagram from %v, want %s", a.from, pathB)
		}
		if len(b.from) != 1 || !sameUnixAddr(b.from[0], pathA) {
			t.Errorf("b got the answer from %v, want %s", b.from, pathA)
		}
		trA.Close()
		trB.Close()
		await(t, at, a.lost)
		await(t, at, b.lost)
		return nil
	})
	expectLog(t, []string{"a:made", "b:made", "a:got hi", "b:got echo hi", "a:lost <nil>", "b:lost <nil>"}, log)
}

// sameUnixAddr reports whether a is the *net.UnixAddr path of a Unix
// datagram socket.
func sameUnixAddr(a any, path string) bool {
	ua, ok := a.(*net.UnixAddr)
	return ok && ua != nil && ua.Name == path && ua.Net == "unixgram"
}

// A connected endpoint sends to its peer with a nil address or the
// peer's; another address is a *ValueError. Its own socket is unbound:
// sockname is the empty Unix address (asyncio's empty string) and the peer gets
// its datagrams from a nil address (asyncio's None).
func TestUnixDatagramConnected(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	pathA := filepath.Join(dir, "a")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		a := newAddrRecorder(at, "a", &log)
		trA, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return a }, pathA, "")
		if err != nil {
			return err
		}
		c := newAddrRecorder(at, "c", &log)
		trC, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return c }, "", pathA)
		if err != nil {
			return err
		}
		if got := trC.ExtraInfo("peername"); !sameUnixAddr(got, pathA) {
			t.Errorf("peername %#v, want %s", got, pathA)
		}
		if got := trC.ExtraInfo("sockname"); !sameUnixAddr(got, "") {
			t.Errorf("sockname of an unbound socket %#v, want the empty Unix address", got)
		}
		var ve *asyncio.ValueError
		if err := trC.SendTo([]byte("x"), &net.UnixAddr{Name: filepath.Join(dir, "other"), Net: "unixgram"}); !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, "Invalid address: must be None or "+pathA) {
			t.Errorf("SendTo another path: %v, want a ValueError", err)
		}
		if err := trC.SendTo([]byte("one"), nil); err != nil {
			return err
		}
		if err := trC.SendTo([]byte("two"), &net.UnixAddr{Name: pathA, Net: "unixgram"}); err != nil {
			return err
		}
		await(t, at, a.got)
		if err := settle(at); err != nil {
			return err
		}
		// The second datagram is in the socket's queue: one more
		// readiness event delivers it.
		spinUntil(t, at, func() bool { return len(a.from) >= 2 })
		if a.from[0] != nil || a.from[1] != nil {
			t.Errorf("an unbound sender's address: %#v, want nil", a.from)
		}
		trC.Close()
		trA.Close()
		await(t, at, c.lost)
		await(t, at, a.lost)
		return nil
	})
	expectLog(t, []string{"a:made", "c:made", "a:got one", "a:got two", "c:lost <nil>", "a:lost <nil>"}, log)
}

// With neither path the socket is unbound (asyncio's
// family=AF_UNIX without addresses): it sends to a path, and the receiver
// gets a nil sender.
func TestUnixDatagramUnbound(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	path := filepath.Join(dir, "r")
	runNet(t, func(at *asyncio.T) error {
		r := unixgramSocket(t, path)
		defer unix.Close(r)
		var log []string
		p := newDatagramRecorder(at, "u", &log)
		tr, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return p }, "", "")
		if err != nil {
			return err
		}
		if got := tr.ExtraInfo("sockname"); !sameUnixAddr(got, "") {
			t.Errorf("sockname %#v, want the empty Unix address", got)
		}
		if got := tr.ExtraInfo("peername"); got != nil {
			t.Errorf("peername %#v", got)
		}
		var ve *asyncio.ValueError
		if err := tr.SendTo([]byte("x"), nil); !errors.As(err, &ve) {
			t.Errorf("SendTo nil on an unconnected endpoint: %v, want a ValueError", err)
		}
		if err := tr.SendTo([]byte("to r"), &net.UnixAddr{Name: path, Net: "unixgram"}); err != nil {
			return err
		}
		data, _, err := SockRecvFrom(at, r, 64)
		if err != nil {
			return err
		}
		if string(data) != "to r" {
			t.Errorf("r got %q", data)
		}
		tr.Close()
		await(t, at, p.lost)
		return nil
	})
}

// A datagram from an unbound socket reaches DatagramReceived with a nil
// address, as asyncio's None.
func TestUnixDatagramUnboundSenderIsNil(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	path := filepath.Join(dir, "a")
	runNet(t, func(at *asyncio.T) error {
		var log []string
		a := newAddrRecorder(at, "a", &log)
		tr, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return a }, path, "")
		if err != nil {
			return err
		}
		s := unixgramSocket(t, "")
		defer unix.Close(s)
		if err := unix.Sendto(s, []byte("anon"), 0, &unix.SockaddrUnix{Name: path}); err != nil {
			return err
		}
		await(t, at, a.got)
		if len(a.from) != 1 || a.from[0] != nil {
			t.Errorf("sender %#v, want nil", a.from)
		}
		tr.Close()
		await(t, at, a.lost)
		return nil
	})
}

// A socket file left at the local path (by an endpoint that closed:
// Close leaves it, as asyncio's does) is removed before the bind.
func TestUnixDatagramStaleSocketFile(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	path := filepath.Join(dir, "s")
	runNet(t, func(at *asyncio.T) error {
		for i := 0; i < 2; i++ {
			p := newDatagramRecorder(at, "s", new([]string))
			tr, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return p }, path, "")
			if err != nil {
				return err
			}
			tr.Close()
			await(t, at, p.lost)
			if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeSocket == 0 {
				t.Fatalf("after Close the socket file is gone or not a socket: %v", err)
			}
		}
		return nil
	})
}

// A file at the local path that is not a socket stays, and the bind
// fails with EADDRINUSE, as asyncio's does.
func TestUnixDatagramLocalPathNotSocket(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	runNet(t, func(at *asyncio.T) error {
		_, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, path, "")
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("got %v, want EADDRINUSE", err)
		}
		return nil
	})
	if b, err := os.ReadFile(path); err != nil || string(b) != "keep" {
		t.Errorf("the file was touched: %q, %v", b, err)
	}
}

// WithSocket: a bound Unix datagram socket, connected or not, becomes
// the endpoint as it is, through CreateUnixDatagramEndpoint and through
// CreateDatagramEndpoint (asyncio's sock= takes any datagram socket);
// both report Unix addresses of network "unixgram".
func TestUnixDatagramWithSocket(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	pathA, pathB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runNet(t, func(at *asyncio.T) error {
		var log []string
		a := newAddrRecorder(at, "a", &log)
		trA, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return a }, "", "", WithSocket(unixgramSocket(t, pathA)))
		if err != nil {
			return err
		}
		if got := trA.ExtraInfo("sockname"); !sameUnixAddr(got, pathA) {
			t.Errorf("sockname %#v, want %s", got, pathA)
		}
		if got := trA.ExtraInfo("peername"); got != nil {
			t.Errorf("peername of an unconnected socket %#v", got)
		}
		fdB := unixgramSocket(t, pathB)
		if err := unix.Connect(fdB, &unix.SockaddrUnix{Name: pathA}); err != nil {
			unix.Close(fdB)
			return err
		}
		b := newAddrRecorder(at, "b", &log)
		trB, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return b }, nil, nil, WithSocket(fdB))
		if err != nil {
			unix.Close(fdB)
			return err
		}
		if got := trB.ExtraInfo("sockname"); !sameUnixAddr(got, pathB) {
			t.Errorf("CreateDatagramEndpoint's sockname %#v, want %s unixgram", got, pathB)
		}
		if got := trB.ExtraInfo("peername"); !sameUnixAddr(got, pathA) {
			t.Errorf("CreateDatagramEndpoint's peername %#v, want %s unixgram", got, pathA)
		}
		if err := trB.SendTo([]byte("hello"), nil); err != nil {
			return err
		}
		await(t, at, a.got)
		if len(a.from) != 1 || !sameUnixAddr(a.from[0], pathB) {
			t.Errorf("sender %#v, want %s", a.from, pathB)
		}
		if err := trA.SendTo([]byte("back"), a.from[0]); err != nil {
			return err
		}
		await(t, at, b.got)
		if len(b.from) != 1 || !sameUnixAddr(b.from[0], pathA) {
			t.Errorf("sender %#v, want %s", b.from, pathA)
		}
		trA.Close()
		trB.Close()
		await(t, at, a.lost)
		await(t, at, b.lost)
		expectLog(t, []string{"a:made", "b:made", "a:got hello", "b:got back", "a:lost <nil>", "b:lost <nil>"}, log)
		return nil
	})
}

// Every argument error is returned before anything changes: no socket is
// left open, the caller's socket stays open and blocking, and a stale
// socket file at the local path stays when another argument is wrong.
func TestUnixDatagramBadArguments(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	stale := filepath.Join(dir, "stale")
	unix.Close(unixgramSocket(t, stale)) // leaves the socket file
	long := filepath.Join(dir, strings.Repeat("x", maxUnixPath))
	factory := func() DatagramProtocol { return &BaseDatagramProtocol{} }
	blocking := func(typ, family int) int {
		fd, err := unix.Socket(family, typ, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	udp := blocking(unix.SOCK_DGRAM, unix.AF_INET)
	stream := blocking(unix.SOCK_STREAM, unix.AF_UNIX)
	gram := blocking(unix.SOCK_DGRAM, unix.AF_UNIX)
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name          string
			factory       func() DatagramProtocol
			local, remote string
			opts          []Option
			want          string // the ValueError's message, a prefix; "" for another check
			check         func(error) bool
		}{
			{"nil factory", nil, stale, "", nil, "CreateUnixDatagramEndpoint: nil protocol factory", nil},
			{"NUL in local", factory, "a\x00b", "", nil, `AF_UNIX path "a\x00b": embedded null byte`, nil},
			{"NUL in remote", factory, stale, "a\x00b", nil, `AF_UNIX path "a\x00b": embedded null byte`, nil},
			{"local too long", factory, long, "", nil, "", isPathTooLong},
			{"remote too long", factory, stale, long, nil, "", isPathTooLong},
			{"remote missing", factory, "", filepath.Join(dir, "nobody"), nil, "", func(err error) bool { return errors.Is(err, syscall.ENOENT) }},
			{"WithReusePort", factory, stale, "", []Option{WithReusePort()}, "CreateUnixDatagramEndpoint does not take the option WithReusePort", nil},
			{"WithAllowBroadcast", factory, stale, "", []Option{WithAllowBroadcast()}, "CreateUnixDatagramEndpoint does not take the option WithAllowBroadcast", nil},
			{"WithNetwork", factory, stale, "", []Option{WithNetwork(nil)}, "CreateUnixDatagramEndpoint does not take the option WithNetwork", nil},
			{"WithTLS", factory, stale, "", []Option{WithTLS(nil)}, "CreateUnixDatagramEndpoint does not take the option WithTLS", nil},
			{"UDP socket", factory, "", "", []Option{WithSocket(udp)}, "A UNIX Domain Datagram Socket was expected, got fd ", nil},
			{"stream socket", factory, "", "", []Option{WithSocket(stream)}, "A datagram socket was expected, got fd ", nil},
			{"socket and local", factory, stale, "", []Option{WithSocket(gram)}, `socket modifier keyword arguments can not be used when sock is specified. (local_addr="` + stale + `")`, nil},
			{"socket and remote", factory, "", stale, []Option{WithSocket(gram)}, `socket modifier keyword arguments can not be used when sock is specified. (remote_addr="` + stale + `")`, nil},
		} {
			_, _, err := CreateUnixDatagramEndpoint(at, c.factory, c.local, c.remote, c.opts...)
			var ve *asyncio.ValueError
			switch {
			case c.want != "" && (!errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, c.want)):
				t.Errorf("%s: got %v, want a ValueError %q", c.name, err, c.want)
			case c.check != nil && !c.check(err):
				t.Errorf("%s: got %v", c.name, err)
			}
			if fi, err := os.Stat(stale); err != nil || fi.Mode()&os.ModeSocket == 0 {
				t.Fatalf("%s: the stale socket file was removed (%v)", c.name, err)
			}
		}
		for _, fd := range []int{udp, stream, gram} {
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK != 0 {
				t.Errorf("fd %d was touched: flags %#x, %v", fd, flags, err)
			}
		}
		return nil
	})
	if _, err := os.Stat(long); !os.IsNotExist(err) {
		t.Errorf("a file at the long path: %v", err)
	}
}

// isPathTooLong reports the existing error for a Unix path sockaddr_un
// cannot hold.
func isPathTooLong(err error) bool {
	var ae *net.AddrError
	return errors.As(err, &ae) && strings.HasPrefix(ae.Err, "AF_UNIX path too long")
}

// SendTo on a Unix endpoint refuses, with the error that names the
// mistake, an address that is not a Unix one and a path the system
// cannot take; nothing is sent or queued.
func TestUnixDatagramSendToBadAddress(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	runNet(t, func(at *asyncio.T) error {
		var log []string
		p := newDatagramRecorder(at, "u", &log)
		tr, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return p }, filepath.Join(dir, "u"), "")
		if err != nil {
			return err
		}
		var ve *asyncio.ValueError
		if err := tr.SendTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}); !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, "Invalid address: 127.0.0.1:9 (*net.UDPAddr) on a Unix datagram endpoint") {
			t.Errorf("SendTo a UDP address: %v", err)
		}
		if err := tr.SendTo([]byte("x"), &net.UnixAddr{Name: "a\x00b", Net: "unixgram"}); !errors.As(err, &ve) || !strings.Contains(ve.Msg, "embedded null byte") {
			t.Errorf("SendTo a path with a NUL: %v", err)
		}
		if err := tr.SendTo([]byte("x"), &net.UnixAddr{Name: strings.Repeat("x", maxUnixPath+1), Net: "unixgram"}); !isPathTooLong(err) {
			t.Errorf("SendTo a path too long: %v", err)
		}
		if tr.WriteBufferSize() != 0 {
			t.Errorf("queued %d bytes", tr.WriteBufferSize())
		}
		// A path nobody is bound at is the socket's error, not the
		// call's: ErrorReceived, as asyncio's error_received.
		if err := tr.SendTo([]byte("x"), &net.UnixAddr{Name: filepath.Join(dir, "nobody"), Net: "unixgram"}); err != nil {
			t.Errorf("SendTo a missing path: %v", err)
		}
		tr.Close()
		await(t, at, p.lost)
		expectLog(t, []string{"u:made", "u:error syscall=sendto ENOENT", "u:lost <nil>"}, log)
		return nil
	})
}

// Close with datagrams queued (the peer's receive queue is full) sends
// them all first, in order, then calls ConnectionLost(nil); flow control
// pauses and resumes the protocol on the way. Abort with datagrams
// queued drops them and ends at once.
func TestUnixDatagramCloseWhileQueued(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	path := filepath.Join(dir, "peer")
	runNet(t, func(at *asyncio.T) error {
		peer := unixgramSocket(t, path)
		defer unix.Close(peer)
		var log []string
		p := newDatagramRecorder(at, "c", &log)
		trI, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return p }, "", path)
		if err != nil {
			return err
		}
		tr := trI.(*datagramTransport)
		if err := tr.SetWriteBufferLimits(16, 0); err != nil {
			return err
		}
		sent := fillUntilQueued(t, tr)
		for i := sent + 1; i < sent+4; i++ {
			if err := tr.SendTo([]byte(seqName(i)), nil); err != nil {
				return err
			}
		}
		tr.Close()
		if err := settle(at); err != nil {
			return err
		}
		if p.lost.Done() {
			t.Fatal("ConnectionLost before the queue was sent")
		}
		var got []string
		spinUntil(t, at, func() bool {
			got = append(got, drainPeer(t, peer)...)
			return p.lost.Done()
		})
		got = append(got, drainPeer(t, peer)...)
		if want := seq(0, sent+4); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("the peer got %d datagrams %v..., want %d", len(got), head(got), len(want))
		}
		expectLog(t, []string{"c:made", "c:pause writing", "c:resume writing", "c:lost <nil>"}, log)

		// Abort: the queue is dropped.
		log = nil
		q := newDatagramRecorder(at, "a", &log)
		trI, _, err = CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return q }, "", path)
		if err != nil {
			return err
		}
		tr = trI.(*datagramTransport)
		fillUntilQueued(t, tr)
		tr.Abort()
		await(t, at, q.lost)
		if tr.WriteBufferSize() != 0 {
			t.Errorf("Abort kept %d bytes", tr.WriteBufferSize())
		}
		expectLog(t, []string{"a:made", "a:lost <nil>"}, log)
		return nil
	})
}

func seqName(i int) string { return seq(i, i+1)[0] }

func head(s []string) []string { return s[:min(len(s), 3)] }

// The calls refuse the simulated network (which has no Unix sockets),
// naming the option; CreateDatagramEndpoint on it still works.
func TestUnixDatagramNotOnSimNetwork(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		n := NewSimNetwork(at, 1)
		defer n.Close()
		h := n.Host("h")
		_, _, err := CreateUnixDatagramEndpoint(at, func() DatagramProtocol { return &BaseDatagramProtocol{} }, "", "", WithNetwork(h))
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Msg, "CreateUnixDatagramEndpoint does not take the option WithNetwork") {
			t.Errorf("got %v", err)
		}
		return nil
	})
}

// spinUntil runs loop iterations until cond holds, and fails the test if
// it still does not after many (what it waits for is already in a socket
// queue: no clock is involved).
func spinUntil(t *testing.T, at *asyncio.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 1000 {
			t.Fatal("still waiting after 1000 loop iterations")
		}
		if err := asyncio.Sleep(at, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// An unnamed sender, which some systems report with an empty path rather
// than no address (Linux gives none), is nil too.
func TestUnixSenderUnnamed(t *testing.T) {
	if a := unixSender(&unix.SockaddrUnix{}); a != nil {
		t.Errorf("unixSender(empty path) = %#v, want nil", a)
	}
	if a := unixSender(nil); a != nil {
		t.Errorf("unixSender(nil) = %#v, want nil", a)
	}
	if a := unixSender(&unix.SockaddrUnix{Name: "/p"}); !sameUnixAddr(a, "/p") {
		t.Errorf("unixSender(/p) = %#v", a)
	}
}

// A nil *asyncio.T panics with the *ValueError about it before a socket
// is made or a stale socket file removed.
func TestUnixDatagramNilTask(t *testing.T) {
	clean(t)
	dir := sockDir(t)
	stale := filepath.Join(dir, "stale")
	unix.Close(unixgramSocket(t, stale))
	defer func() {
		r := recover()
		var ve *asyncio.ValueError
		if err, ok := r.(error); !ok || !errors.As(err, &ve) || !strings.Contains(ve.Msg, "nil *T") {
			t.Errorf("panic %v, want a *ValueError about the nil *T", r)
		}
		if _, err := os.Stat(stale); err != nil {
			t.Errorf("the stale socket file was removed: %v", err)
		}
	}()
	//asynciovet:ignore droppedcancel the call panics (nil *T) before it returns anything
	CreateUnixDatagramEndpoint(nil, func() DatagramProtocol { return &BaseDatagramProtocol{} }, stale, "")
}
