//go:build unix

package aio

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// The package's one test harness: how tests run a loop, the protocol
// that records what a transport calls, the error describer for logs, and
// the sockets and certificates tests need.

// runNet runs main as a task on a real-clock loop and closes it.
func runNet(t *testing.T, main func(t *asyncio.T) error) {
	t.Helper()
	if _, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) { return struct{}{}, main(at) }); err != nil {
		t.Fatal(err)
	}
}

// runVirtual runs main as a task on a virtual-time loop. Sockets work on
// it too: the loop polls them without waiting before it moves the clock,
// and loopback I/O is complete when the system call returns.
func runVirtual(t *testing.T, main func(t *asyncio.T) error) {
	t.Helper()
	if _, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) { return struct{}{}, main(at) }, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
}

// settle returns once every callback already scheduled on the loop has
// run (callbacks run in order): whatever Close or Abort scheduled, such as
// a ConnectionLost, has been called by then.
func settle(at *asyncio.T) error {
	f := asyncio.NewFuture[struct{}](at)
	at.Loop().CallSoon(func() { f.SetResult(struct{}{}) })
	_, err := f.Await(at)
	return err
}

// recorder logs the callbacks a protocol receives as "name:event" in a
// log the test shares between protocols, and resolves lost
// (ConnectionLost) and resumed (ResumeWriting) for the test to wait on.
// streamRecorder and datagramRecorder add the callbacks of each kind.
type recorder struct {
	name    string
	log     *[]string
	lost    *asyncio.Future[error]
	resumed *asyncio.Future[struct{}]
}

func newRecorder(owner asyncio.LoopOwner, name string, log *[]string) recorder {
	return recorder{name: name, log: log, lost: asyncio.NewFuture[error](owner), resumed: asyncio.NewFuture[struct{}](owner)}
}

func (p *recorder) add(s string) { *p.log = append(*p.log, p.name+":"+s) }

func (p *recorder) ConnectionLost(err error) {
	p.add("lost " + describe(err))
	if !p.lost.Done() {
		p.lost.SetResult(err)
	}
}

func (p *recorder) PauseWriting() { p.add("pause writing") }

func (p *recorder) ResumeWriting() {
	p.add("resume writing")
	if !p.resumed.Done() {
		p.resumed.SetResult(struct{}{})
	}
}

// streamRecorder is a recording Protocol.
type streamRecorder struct {
	recorder
	tr       Transport
	keepOpen bool                              // what EOFReceived returns
	onMade   func(p *streamRecorder)           // after "made" is logged
	onData   func(p *streamRecorder, d []byte) // instead of logging "data ..."
}

func newStreamRecorder(owner asyncio.LoopOwner, name string, log *[]string) *streamRecorder {
	return &streamRecorder{recorder: newRecorder(owner, name, log)}
}

func (p *streamRecorder) ConnectionMade(tr Transport) {
	p.tr = tr
	p.add("made")
	if p.onMade != nil {
		p.onMade(p)
	}
}

func (p *streamRecorder) DataReceived(d []byte) {
	if p.onData != nil {
		p.onData(p, d)
		return
	}
	p.add("data " + string(d))
}

func (p *streamRecorder) EOFReceived() bool { p.add("eof"); return p.keepOpen }

// datagramRecorder is a recording DatagramProtocol; an echoing one sends
// every datagram back to its sender.
type datagramRecorder struct {
	recorder
	tr   DatagramTransport
	echo bool
	got  *asyncio.Future[struct{}] // the first datagram or error received
}

func newDatagramRecorder(owner asyncio.LoopOwner, name string, log *[]string) *datagramRecorder {
	return &datagramRecorder{recorder: newRecorder(owner, name, log), got: asyncio.NewFuture[struct{}](owner)}
}

func (p *datagramRecorder) ConnectionMade(tr DatagramTransport) { p.tr = tr; p.add("made") }

func (p *datagramRecorder) DatagramReceived(d []byte, addr net.Addr) {
	p.add("got " + string(d))
	if p.echo {
		p.tr.SendTo(append([]byte("echo "), d...), addr)
	}
	if !p.got.Done() {
		p.got.SetResult(struct{}{})
	}
}

func (p *datagramRecorder) ErrorReceived(err error) {
	p.add("error " + describe(err))
	if !p.got.Done() {
		p.got.SetResult(struct{}{})
	}
}

// describe names an error for a test log by what callers test with
// errors.Is and errors.As: the *net.OpError's operation and network, the
// *os.SyscallError's call, the errno, and the package's and the core's
// sentinels; "<nil>" for nil. An error with none of those is its text.
func describe(err error) string {
	if err == nil {
		return "<nil>"
	}
	var parts []string
	var oe *net.OpError
	if errors.As(err, &oe) {
		parts = append(parts, "op="+oe.Op+"/"+oe.Net)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		parts = append(parts, "syscall="+se.Syscall)
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		parts = append(parts, unix.ErrnoName(en))
	}
	var ne net.Error
	for _, s := range []struct {
		is   bool
		name string
	}{
		{errors.Is(err, os.ErrDeadlineExceeded), "deadline"},
		{errors.As(err, &ne) && ne.Timeout(), "timeout"},
		{errors.Is(err, net.ErrClosed), "closed"},
		{errors.Is(err, io.EOF), "EOF"},
		{errors.Is(err, io.ErrUnexpectedEOF), "unexpected EOF"},
		{asyncio.IsCancelled(err), "cancelled"},
		{errors.Is(err, asyncio.ErrTimeout), "asyncio timeout"},
		{errors.Is(err, ErrTLSHandshakeTimeout), "TLS handshake timeout"},
		{errors.Is(err, ErrLoopNotRunning), "loop not running"},
		{errors.Is(err, ErrWriteBufferFull), "write buffer full"},
	} {
		if s.is {
			parts = append(parts, s.name)
		}
	}
	var ve *asyncio.ValueError
	if errors.As(err, &ve) {
		parts = append(parts, "ValueError "+ve.Msg)
	}
	var re *asyncio.RuntimeError
	if errors.As(err, &re) {
		parts = append(parts, "RuntimeError "+re.Msg)
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, " ")
}

// isReset reports a connection reset by the peer: the read that sees the
// RST gets ECONNRESET, a later write EPIPE, and which call comes first
// is the system's business.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// serverPort is the TCP port a server listens on.
func serverPort(s *Server) int { return s.Addr().(*net.TCPAddr).Port }

// closedPort returns a 127.0.0.1 port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	fd, err := NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	return localAddr(fd, "tcp").(*net.TCPAddr).Port
}

// closedUDPPort returns a 127.0.0.1 UDP port nobody listens on.
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

// socketpair returns a connected pair of non-blocking, close-on-exec Unix
// sockets of type typ (unix.SOCK_STREAM or SOCK_DGRAM). The caller closes
// them.
func socketpair(t *testing.T, typ int) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	return fds
}

// readable reports whether fd has data (or EOF) to read now.
func readable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// blackHole listens on ip:port with a full accept queue, so that a new
// connect to it never completes (the kernel drops its SYN). It returns
// a cleanup.
func blackHole(t *testing.T, at *asyncio.T, ip [4]byte, port int) func() {
	t.Helper()
	ln, err := NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	addr := &net.TCPAddr{IP: net.IP(ip[:]), Port: port}
	sa, _ := addrToSockaddr(addr)
	if err := unix.Bind(ln, sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(ln, 0); err != nil { // queue of one
		t.Fatal(err)
	}
	filler, err := NewSocket("tcp4")
	if err != nil {
		t.Fatal(err)
	}
	if err := SockConnect(at, filler, addr); err != nil {
		t.Fatal(err)
	}
	return func() { unix.Close(filler); unix.Close(ln) }
}

func watchingRead(l *asyncio.Loop, fd int) bool { r, _ := l.Watching(fd); return r }

func watchingAny(l *asyncio.Loop, fd int) bool { r, w := l.Watching(fd); return r || w }

// resolverFunc is a Resolver made of a function (WithResolver in tests).
type resolverFunc func(ctx context.Context, host string) ([]net.IPAddr, error)

func (f resolverFunc) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return f(ctx, host)
}

// fakeResolver resolves every name to ips, in that order.
func fakeResolver(ips ...string) Option {
	return WithResolver(resolverFunc(func(ctx context.Context, host string) ([]net.IPAddr, error) {
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}))
}

// testTLSConfigs returns a server config with a fresh self-signed
// certificate for 127.0.0.1/localhost and a client config trusting it.
func testTLSConfigs(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return server, &tls.Config{RootCAs: pool}
}

// echoLines is a StartServer callback that answers each line with prefix
// and the line, until EOF.
func echoLines(prefix string) func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
	return func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
		defer w.Close()
		for {
			line, err := r.ReadLine(t)
			if err != nil || len(line) == 0 {
				return err
			}
			w.Write(append([]byte(prefix), line...))
		}
	}
}

// closeAtOnce is a StartServer callback that closes each connection.
func closeAtOnce(t *asyncio.T, r *StreamReader, w *StreamWriter) error { w.Close(); return nil }

// openFDs returns the process's open file descriptors (/proc/self/fd on
// Linux, /dev/fd elsewhere), without the one used to list them.
func openFDs(t *testing.T) map[int]bool {
	t.Helper()
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		t.Fatal(err)
	}
	fds := map[int]bool{}
	for _, n := range names {
		var fd int
		if _, err := fmt.Sscan(n, &fd); err == nil && fd != int(f.Fd()) {
			fds[fd] = true
		}
	}
	return fds
}

// checkNoNewFDs fails the test if a descriptor is open that was not in
// before, and says what each one is.
func checkNoNewFDs(t *testing.T, before map[int]bool) {
	t.Helper()
	var leaked []string
	for fd := range openFDs(t) {
		if !before[fd] {
			target, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			leaked = append(leaked, fmt.Sprintf("%d (%s)", fd, target))
		}
	}
	if len(leaked) > 0 {
		t.Errorf("file descriptors left open: %v", leaked)
	}
}

// expectLog fails the test with a diff when got is not want.
func expectLog(t *testing.T, want, got []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
}

// ---- processes and descriptors

// clean registers a check, run when the test ends, that it left nothing
// behind: no child process of the test binary (a zombie included), no
// file descriptor it opened, no goroutine it started. Children and
// descriptors are read from /proc, which only Linux has; the goroutine
// check runs everywhere.
func clean(t *testing.T) {
	t.Helper()
	before := openFDTargets()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if kids := childProcesses(); len(kids) > 0 {
			t.Errorf("child processes left: %s", strings.Join(kids, "; "))
		}
		var leaked []string
		for fd, target := range openFDTargets() {
			if _, ok := before[fd]; !ok {
				leaked = append(leaked, fmt.Sprintf("%d -> %s", fd, target))
			}
		}
		if len(leaked) > 0 {
			t.Errorf("file descriptors left open: %s", strings.Join(leaked, ", "))
		}
		if err := goleak.Find(ignore); err != nil {
			t.Error(err)
		}
	})
}

// openFDTargets maps each open descriptor of the process to what it points to
// (nil on systems without /proc).
func openFDTargets() map[int]string {
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := map[int]string{}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "/proc/") {
			continue // ReadDir's own descriptor, closed by now
		}
		fds[fd] = target
	}
	return fds
}

// childProcesses lists the test binary's children as "pid (name) state"
// (a state Z is a zombie nobody reaped).
func childProcesses() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var kids []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ...
		if len(f) > 1 && f[1] == strconv.Itoa(self) {
			kids = append(kids, s[:i+1]+" "+f[0])
		}
	}
	return kids
}

// alive reports whether process pid exists (a zombie counts).
func alive(pid int) bool { return unix.Kill(pid, 0) == nil }

// procRecorder is a recording SubprocessProtocol: "made", "data FD TEXT",
// "pipe lost FD ERR", "exited", "lost ERR"; done resolves at
// ConnectionLost.
type procRecorder struct {
	log  []string
	tr   SubprocessTransport
	done *asyncio.Future[struct{}]
}

func newProcRecorder(owner asyncio.LoopOwner) *procRecorder {
	return &procRecorder{done: asyncio.NewFuture[struct{}](owner)}
}

func (p *procRecorder) add(format string, args ...any) {
	p.log = append(p.log, fmt.Sprintf(format, args...))
}

func (p *procRecorder) ConnectionMade(tr SubprocessTransport) { p.tr = tr; p.add("made") }
func (p *procRecorder) PipeDataReceived(fd int, d []byte)     { p.add("data %d %s", fd, d) }
func (p *procRecorder) PipeConnectionLost(fd int, err error) {
	p.add("pipe lost %d %s", fd, describe(err))
}
func (p *procRecorder) ProcessExited() {
	rc, ok := p.tr.ReturnCode()
	p.add("exited %d %v", rc, ok)
}
func (p *procRecorder) ConnectionLost(err error) {
	p.add("lost %s", describe(err))
	p.done.SetResult(struct{}{})
}
