//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// sendfileData is n bytes that differ from their neighbours, so that a
// block sent twice, missing or out of place shows.
func sendfileData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// sendfileFile is a temporary file holding data, at position 0, closed
// when the test ends. Call clean(t) before it.
func sendfileFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "sendfile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return f
}

func filePos(t *testing.T, f *os.File) int64 {
	t.Helper()
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// tcpPair returns the two ends of a loopback TCP connection as
// non-blocking, close-on-exec fds the caller closes.
func tcpPair(t *testing.T) [2]int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c1, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	var fds [2]int
	for i, c := range []net.Conn{c1, c2} {
		f, err := c.(*net.TCPConn).File()
		if err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
		fds[i] = fd
	}
	return fds
}

// streamPairs are the socket pairs SockSendfile is tried over.
var streamPairs = []struct {
	name string
	make func(t *testing.T) [2]int
}{
	{"tcp", tcpPair},
	{"unix", func(t *testing.T) [2]int { return socketpair(t, unix.SOCK_STREAM) }},
}

// recvAll reads from fd until n bytes came or EOF (or an error).
func recvAll(at *asyncio.T, fd int, n int) ([]byte, error) {
	var got []byte
	for len(got) < n {
		b, err := SockRecv(at, fd, min(n-len(got), 1<<20))
		if err != nil {
			return got, err
		}
		if len(b) == 0 {
			break
		}
		got = append(got, b...)
	}
	return got, nil
}

// failSendfile makes sendfile(2) fail with errno for the rest of the test.
func failSendfile(t *testing.T, errno syscall.Errno) {
	saved := sendfileSyscall
	sendfileSyscall = func(int, int, *int64, int) (int, error) { return 0, errno }
	t.Cleanup(func() { sendfileSyscall = saved })
}

// SockSendfile over TCP and Unix sockets: offset and count select the
// bytes, the file position is offset+sent afterwards; with offset 0 the
// native path ignores the file's position (the fallback would send from
// it), and fallback=false succeeds where sendfile(2) is available.
func TestSockSendfile_NativeOffsetCount(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile(2) for sockets here")
	}
	data := sendfileData(300_000)
	for _, pair := range streamPairs {
		t.Run(pair.name, func(t *testing.T) {
			clean(t)
			f := sendfileFile(t, data)
			fds := pair.make(t)
			defer unix.Close(fds[0])
			defer unix.Close(fds[1])
			runNet(t, func(at *asyncio.T) error {
				if _, err := f.Seek(7, io.SeekStart); err != nil {
					return err
				}
				recv := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return recvAll(t, fds[1], 200_000+len(data)) })
				n, err := SockSendfile(at, fds[0], f, 1000, 200_000, false)
				if err != nil || n != 200_000 {
					t.Errorf("offset 1000 count 200000: %d, %v", n, err)
				}
				if pos := filePos(t, f); pos != 201_000 {
					t.Errorf("file position %d, want 201000", pos)
				}
				if _, err := f.Seek(7, io.SeekStart); err != nil {
					return err
				}
				n, err = SockSendfile(at, fds[0], f, 0, 0, false)
				if err != nil || n != int64(len(data)) {
					t.Errorf("whole file: %d, %v", n, err)
				}
				if pos := filePos(t, f); pos != int64(len(data)) {
					t.Errorf("file position %d, want %d", pos, len(data))
				}
				got, err := recv.Await(at)
				if err != nil {
					return err
				}
				want := append(append([]byte(nil), data[1000:201_000]...), data...)
				if !bytes.Equal(got, want) {
					t.Errorf("received %d bytes, not the %d expected", len(got), len(want))
				}
				return nil
			})
		})
	}
}

// An empty file sends nothing and leaves the position; a count past the
// end of the file sends what there is.
func TestSockSendfile_EmptyFileAndCountPastEOF(t *testing.T) {
	clean(t)
	empty := sendfileFile(t, nil)
	data := sendfileData(5000)
	f := sendfileFile(t, data)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	runNet(t, func(at *asyncio.T) error {
		n, err := SockSendfile(at, fds[0], empty, 0, 0, true)
		if n != 0 || err != nil || filePos(t, empty) != 0 || readable(fds[1]) {
			t.Errorf("empty file: %d, %v, position %d, peer readable %v", n, err, filePos(t, empty), readable(fds[1]))
		}
		n, err = SockSendfile(at, fds[0], f, 4900, 1000, true)
		if n != 100 || err != nil || filePos(t, f) != 5000 {
			t.Errorf("count past EOF: %d, %v, position %d", n, err, filePos(t, f))
		}
		got, err := recvAll(at, fds[1], 100)
		if err != nil || !bytes.Equal(got, data[4900:]) {
			t.Errorf("received %d bytes, %v", len(got), err)
		}
		return nil
	})
}

// When sendfile(2) fails before sending anything, fallback=false returns
// the SendfileNotAvailableError (a RuntimeError) with nothing moved;
// fallback=true reads and sends the file, from the file's position when
// offset is 0 (asyncio's fallback does not seek to offset 0), and with a
// count and offset as asked.
func TestSockSendfile_Fallback(t *testing.T) {
	clean(t)
	failSendfile(t, unix.EINVAL)
	data := sendfileData(600_000) // more than one 256 KiB block
	f := sendfileFile(t, data)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	runNet(t, func(at *asyncio.T) error {
		if _, err := f.Seek(7, io.SeekStart); err != nil {
			return err
		}
		n, err := SockSendfile(at, fds[0], f, 0, 0, false)
		var na *SendfileNotAvailableError
		var re *asyncio.RuntimeError
		if n != 0 || !errors.As(err, &na) || !errors.Is(err, asyncio.ErrRuntime) || !errors.As(err, &re) || !errors.Is(err, unix.EINVAL) {
			t.Errorf("fallback=false: %d, %v", n, err)
		}
		if err != nil && err.Error() != "os.sendfile call failed" {
			t.Errorf("message %q", err.Error())
		}
		if pos := filePos(t, f); pos != 7 || readable(fds[1]) {
			t.Errorf("after the refusal: position %d, peer readable %v", pos, readable(fds[1]))
		}
		recv := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) {
			return recvAll(t, fds[1], len(data)-7+300_000)
		})
		n, err = SockSendfile(at, fds[0], f, 0, 0, true)
		if n != int64(len(data)-7) || err != nil || filePos(t, f) != n {
			t.Errorf("fallback from position 7: %d, %v, position %d", n, err, filePos(t, f))
		}
		n, err = SockSendfile(at, fds[0], f, 1000, 300_000, true)
		if n != 300_000 || err != nil || filePos(t, f) != 301_000 {
			t.Errorf("fallback offset 1000 count 300000: %d, %v, position %d", n, err, filePos(t, f))
		}
		got, err := recv.Await(at)
		want := append(append([]byte(nil), data[7:]...), data[1000:301_000]...)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("received %d bytes (want %d), %v", len(got), len(want), err)
		}
		return nil
	})
}

// Bad arguments are *asyncio.ValueErrors with asyncio's messages,
// returned before anything is sent or the file moves.
func TestSockSendfile_BadArguments(t *testing.T) {
	clean(t)
	f := sendfileFile(t, sendfileData(100))
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	dgram := socketpair(t, unix.SOCK_DGRAM)
	defer unix.Close(dgram[0])
	defer unix.Close(dgram[1])
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			fd            int
			f             *os.File
			offset, count int64
			want          string
		}{
			{fds[0], f, -1, 0, "offset must be a non-negative integer (got -1)"},
			{fds[0], f, 0, -1, "count must be a positive integer (got -1)"},
			{fds[0], nil, 0, 0, "file must be an open *os.File (got nil)"},
			{dgram[0], f, 0, 0, "only SOCK_STREAM type sockets are supported"},
		} {
			n, err := SockSendfile(at, c.fd, c.f, c.offset, c.count, true)
			var ve *asyncio.ValueError
			if n != 0 || !errors.As(err, &ve) || ve.Msg != c.want {
				t.Errorf("%d %d: %d, %v; want ValueError %q", c.offset, c.count, n, err, c.want)
			}
		}
		if filePos(t, f) != 0 || readable(fds[1]) || readable(dgram[1]) {
			t.Error("a refused call moved something")
		}
		return nil
	})
}

// A peer that closes mid-transfer ends SockSendfile with the socket's
// error (EPIPE or ECONNRESET); the count and the file position say what
// was sent.
func TestSockSendfile_PeerClosesMidTransfer(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile(2) for sockets here")
	}
	clean(t)
	f := sendfileFile(t, sendfileData(16<<20))
	fds := tcpPair(t)
	defer unix.Close(fds[0])
	runNet(t, func(at *asyncio.T) error {
		peer := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			_, err := recvAll(t, fds[1], 64<<10)
			unix.Close(fds[1]) // unread data: a reset
			return struct{}{}, err
		})
		n, err := SockSendfile(at, fds[0], f, 0, 0, true)
		if !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
			t.Errorf("error %v, want EPIPE or ECONNRESET", err)
		}
		if n <= 0 || n >= 16<<20 || filePos(t, f) != n {
			t.Errorf("sent %d, position %d", n, filePos(t, f))
		}
		_, perr := peer.Await(at)
		return perr
	})
}

// waitWriting lets the loop run until fd has write interest: the
// sendfile task is waiting for the socket to take more.
func waitWriting(at *asyncio.T, fd int) error {
	for {
		if _, w := at.Loop().Watching(fd); w {
			return nil
		}
		if err := settle(at); err != nil {
			return err
		}
	}
}

// Cancelling SockSendfile while it waits for a slow peer returns the
// cancellation with the bytes sent; the file position is past exactly
// those, the peer gets exactly those, and no write interest is left.
func TestSockSendfile_CancelMidTransfer(t *testing.T) {
	for _, native := range []bool{true, false} {
		name := "native"
		if !native {
			name = "fallback"
		}
		t.Run(name, func(t *testing.T) {
			if native && !haveSendfile {
				t.Skip("no sendfile(2) for sockets here")
			}
			clean(t)
			if !native {
				failSendfile(t, unix.EINVAL)
			}
			data := sendfileData(16 << 20)
			f := sendfileFile(t, data)
			fds := socketpair(t, unix.SOCK_STREAM)
			defer unix.Close(fds[0])
			defer unix.Close(fds[1])
			runNet(t, func(at *asyncio.T) error {
				type result struct {
					n   int64
					err error
				}
				task := asyncio.CreateTask(at, func(t *asyncio.T) (result, error) {
					n, err := SockSendfile(t, fds[0], f, 10, 0, true)
					return result{n, err}, nil
				})
				if err := waitWriting(at, fds[0]); err != nil {
					return err
				}
				task.Cancel()
				r, err := task.Await(at)
				if err != nil {
					return err
				}
				if !asyncio.IsCancelled(r.err) || r.n <= 0 || r.n >= int64(len(data)) {
					return fmt.Errorf("cancelled: %d, %v", r.n, r.err)
				}
				if pos := filePos(t, f); pos != 10+r.n {
					t.Errorf("file position %d, want %d", pos, 10+r.n)
				}
				if watchingAny(at.Loop(), fds[0]) {
					t.Error("interest left on the socket")
				}
				unix.Shutdown(fds[0], unix.SHUT_WR)
				got, err := recvAll(at, fds[1], len(data))
				if err != nil || !bytes.Equal(got, data[10:10+r.n]) {
					t.Errorf("peer got %d bytes (sent %d), %v", len(got), r.n, err)
				}
				return nil
			})
		})
	}
}

// sendfileConn makes a socket transport over fds[0] with a recording
// protocol.
func sendfileConn(at *asyncio.T, fd int, log *[]string) (Transport, *streamRecorder, error) {
	p := newStreamRecorder(at, "client", log)
	tr, _, err := CreateConnection(at, func() Protocol { return p }, "", 0, WithSocket(fd))
	return tr, p, err
}

// Sendfile on a socket transport: it waits until the buffered data is
// sent (a write meanwhile is refused), then sends the file with
// sendfile(2) (the file position is ignored), and afterwards the
// transport reads and writes as before, with its protocol.
func TestSendfile_NativeTransport(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile(2) for sockets here")
	}
	clean(t)
	data := sendfileData(1 << 20)
	f := sendfileFile(t, data)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runNet(t, func(at *asyncio.T) error {
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		before := bytes.Repeat([]byte("b"), 4<<20) // more than the socket takes
		tr.Write(before)
		if tr.WriteBufferSize() == 0 {
			return errors.New("nothing buffered")
		}
		if _, err := f.Seek(3, io.SeekStart); err != nil {
			return err
		}
		send := asyncio.CreateTask(at, func(t *asyncio.T) (int64, error) { return Sendfile(t, tr, f, 0, 0, false) })
		if err := settle(at); err != nil {
			return err
		}
		if err := tr.Write([]byte("x")); err == nil || err.Error() != "unable to write; sendfile is in progress" {
			t.Errorf("Write during sendfile: %v", err)
		}
		if err := tr.WriteLines([]byte("x")); err == nil || err.Error() != "unable to writelines; sendfile is in progress" {
			t.Errorf("WriteLines during sendfile: %v", err)
		}
		if tr.IsReading() {
			t.Error("reading not paused during sendfile")
		}
		recv := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return recvAll(t, fds[1], len(before)+len(data)+5) })
		n, err := send.Await(at)
		if n != int64(len(data)) || err != nil || filePos(t, f) != n {
			t.Errorf("Sendfile: %d, %v, position %d", n, err, filePos(t, f))
		}
		if !tr.IsReading() || tr.Protocol() != Protocol(p) {
			return errors.New("reading or protocol not restored")
		}
		if err := tr.Write([]byte("after")); err != nil {
			return err
		}
		got, err := recv.Await(at)
		want := append(append(before, data...), "after"...)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("peer got %d bytes (want %d), %v", len(got), len(want), err)
		}
		if err := SockSendall(at, fds[1], []byte("ping")); err != nil {
			return err
		}
		for !strings.Contains(strings.Join(log, " "), "ping") {
			if err := settle(at); err != nil {
				return err
			}
		}
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
}

// Cancelling Sendfile on a socket transport mid-transfer: the count and
// the file position say what was sent, the transport reads and writes
// again with its protocol. Closing the transport while a Sendfile waits
// ends it with a connection error (asyncio's would wait for ever).
func TestSendfile_TransportCancelAndClose(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile(2) for sockets here")
	}
	clean(t)
	data := sendfileData(16 << 20)
	f := sendfileFile(t, data)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runNet(t, func(at *asyncio.T) error {
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		type result struct {
			n   int64
			err error
		}
		start := func() *asyncio.Task[result] {
			return asyncio.CreateTask(at, func(t *asyncio.T) (result, error) {
				n, err := Sendfile(t, tr, f, 0, 0, true)
				return result{n, err}, nil
			})
		}
		task := start()
		if err := waitWriting(at, fds[0]); err != nil {
			return err
		}
		task.Cancel()
		r, err := task.Await(at)
		if err != nil {
			return err
		}
		if !asyncio.IsCancelled(r.err) || r.n <= 0 || filePos(t, f) != r.n {
			return fmt.Errorf("cancelled: %d, %v, position %d", r.n, r.err, filePos(t, f))
		}
		if !tr.IsReading() || tr.Protocol() != Protocol(p) || watchingAny(at.Loop(), fds[0]) != true {
			t.Error("transport not restored after the cancellation")
		}
		if err := tr.Write([]byte("tail")); err != nil {
			return fmt.Errorf("Write after the cancellation: %v", err)
		}
		got, err := recvAll(at, fds[1], int(r.n)+4)
		if err != nil || !bytes.Equal(got, append(append([]byte(nil), data[:r.n]...), "tail"...)) {
			t.Errorf("peer got %d bytes (sent %d), %v", len(got), r.n, err)
		}

		// Now with the transport closed while the transfer waits.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		task = start()
		if err := waitWriting(at, fds[0]); err != nil {
			return err
		}
		tr.Close()
		r, err = task.Await(at)
		if err != nil {
			return err
		}
		if !errors.Is(r.err, syscall.ECONNRESET) || r.n <= 0 || filePos(t, f) != r.n {
			t.Errorf("closed: %d, %v, position %d", r.n, r.err, filePos(t, f))
		}
		_, err = p.lost.Await(at)
		return err
	})
}

// A closing transport is refused, as are bad arguments, before the
// transport changes.
func TestSendfile_ClosingAndBadArguments(t *testing.T) {
	clean(t)
	f := sendfileFile(t, sendfileData(100))
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runNet(t, func(at *asyncio.T) error {
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		for _, c := range []struct {
			f             *os.File
			offset, count int64
			want          string
		}{
			{f, -1, 0, "offset must be a non-negative integer (got -1)"},
			{f, 0, -1, "count must be a positive integer (got -1)"},
			{nil, 0, 0, "file must be an open *os.File (got nil)"},
		} {
			n, err := Sendfile(at, tr, c.f, c.offset, c.count, true)
			var ve *asyncio.ValueError
			if n != 0 || !errors.As(err, &ve) || ve.Msg != c.want {
				t.Errorf("%d %d: %d, %v; want %q", c.offset, c.count, n, err, c.want)
			}
		}
		if !tr.IsReading() || tr.Protocol() != Protocol(p) || readable(fds[1]) {
			t.Error("a refused Sendfile changed the transport")
		}
		tr.Close()
		n, err := Sendfile(at, tr, f, 0, 0, true)
		var re *asyncio.RuntimeError
		if n != 0 || !errors.As(err, &re) || re.Msg != "Transport is closing" {
			t.Errorf("closing: %d, %v", n, err)
		}
		_, err = p.lost.Await(at)
		return err
	})
}

// sinkProtocol compares what it receives with want and resolves done
// once it has all of it (or something else); with paused it pauses
// reading as soon as it is connected, with a small receive buffer.
type sinkProtocol struct {
	BaseProtocol
	tr     Transport
	paused bool
	want   []byte
	got    int
	bad    bool
	done   *asyncio.Future[struct{}]
}

func (p *sinkProtocol) ConnectionMade(tr Transport) {
	p.tr = tr
	if p.paused {
		unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<10)
		tr.PauseReading()
	}
}

func (p *sinkProtocol) DataReceived(d []byte) {
	if p.got+len(d) > len(p.want) || !bytes.Equal(d, p.want[p.got:p.got+len(d)]) {
		p.bad = true
	}
	p.got += len(d)
	if (p.bad || p.got == len(p.want)) && !p.done.Done() {
		p.done.SetResult(struct{}{})
	}
}

// Over TLS only the fallback works: fallback=false is asyncio's
// RuntimeError; fallback=true writes the file in blocks under write flow
// control (the client's protocol was paused for writing, so the transfer
// waits until the server reads, and the protocol gets ResumeWriting at
// the end), and puts the protocol and reading back.
func TestSendfile_TLSFallback(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	data := sendfileData(1 << 20)
	f := sendfileFile(t, data)
	head := bytes.Repeat([]byte("h"), 2<<20) // more than the small socket buffers take
	want := append(append(append([]byte(nil), head...), data[5:]...), "end"...)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		sink := &sinkProtocol{paused: true, want: want, done: asyncio.NewFuture[struct{}](at)}
		srv, err := CreateServer(at, func() Protocol { return sink }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		client := newStreamRecorder(at, "client", &log)
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		n, err := Sendfile(at, tr, f, 0, 0, false)
		var re *asyncio.RuntimeError
		if n != 0 || !errors.As(err, &re) || !strings.HasPrefix(re.Msg, "fallback is disabled and native sendfile is not supported for transport <tlsTransport ") {
			t.Errorf("fallback=false over TLS: %d, %v", n, err)
		}
		unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 16<<10)
		for sink.tr == nil {
			if err := settle(at); err != nil {
				return err
			}
		}
		if err := tr.Write(head); err != nil {
			return err
		}
		if got := strings.Join(log, " "); got != "client:made client:pause writing" {
			return fmt.Errorf("log %q: the client is not paused for writing", got)
		}
		send := asyncio.CreateTask(at, func(t *asyncio.T) (int64, error) { return Sendfile(t, tr, f, 5, 0, true) })
		if err := settle(at); err != nil {
			return err
		}
		if send.Done() || tr.Protocol() == Protocol(client) || tr.IsReading() {
			t.Error("the fallback did not take over the transport, or did not wait for the paused writer")
		}
		// Large buffers again: small ones make loopback TCP crawl.
		unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)
		unix.SetsockoptInt(sink.tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
		sink.tr.ResumeReading()
		n, err = send.Await(at)
		if n != int64(len(data)-5) || err != nil || filePos(t, f) != int64(len(data)) {
			t.Errorf("Sendfile over TLS: %d, %v, position %d", n, err, filePos(t, f))
		}
		if !tr.IsReading() || tr.Protocol() != Protocol(client) {
			t.Error("protocol or reading not restored")
		}
		if err := tr.Write([]byte("end")); err != nil {
			return err
		}
		if _, err := sink.done.Await(at); err != nil {
			return err
		}
		if sink.bad || sink.got != len(want) {
			t.Errorf("server got %d bytes (bad %v), want %d", sink.got, sink.bad, len(want))
		}
		if got := strings.Join(log, " "); got != "client:made client:pause writing client:resume writing" {
			t.Errorf("log %q: the paused protocol was not resumed once", got)
		}
		tr.Close()
		if _, err := client.lost.Await(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
}

// The fallback over a transport follows its write flow control: with a
// peer that does not read, it stops writing once the buffer is past the
// high water mark (on the virtual clock, an hour passes with the transfer
// stuck). Cancelled there, it returns what it wrote, the file position
// agrees, the protocol and reading are back, and the peer then gets
// exactly those bytes.
func TestSendfile_FallbackFlowControl(t *testing.T) {
	clean(t)
	failSendfile(t, unix.EINVAL)
	data := sendfileData(4 << 20)
	f := sendfileFile(t, data)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		if err := tr.SetWriteBufferLimits(64<<10, 16<<10); err != nil {
			return err
		}
		type result struct {
			n   int64
			err error
		}
		task := asyncio.CreateTask(at, func(t *asyncio.T) (result, error) {
			n, err := Sendfile(t, tr, f, 0, 0, true)
			return result{n, err}, nil
		})
		if err := asyncio.Sleep(at, time.Hour); err != nil {
			return err
		}
		if task.Done() {
			return errors.New("the fallback wrote the whole file to a peer that does not read")
		}
		if b := tr.WriteBufferSize(); b < 64<<10 || b > 64<<10+16<<10 {
			t.Errorf("write buffer holds %d bytes", b)
		}
		task.Cancel()
		r, err := task.Await(at)
		if err != nil {
			return err
		}
		if !asyncio.IsCancelled(r.err) || r.n <= 0 || filePos(t, f) != r.n {
			t.Errorf("cancelled: %d, %v, position %d", r.n, r.err, filePos(t, f))
		}
		if tr.Protocol() != Protocol(p) || !tr.IsReading() {
			t.Error("protocol or reading not restored")
		}
		got, err := recvAll(at, fds[1], int(r.n))
		if err != nil || !bytes.Equal(got, data[:r.n]) {
			t.Errorf("peer got %d bytes (sent %d), %v", len(got), r.n, err)
		}
		if err := settle(at); err != nil {
			return err
		}
		if readable(fds[1]) {
			t.Error("the peer got more than Sendfile reported")
		}
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
}

// Transports that are neither socket nor TLS transports are refused.
func TestSendfile_UnsupportedTransport(t *testing.T) {
	clean(t)
	f := sendfileFile(t, sendfileData(10))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runNet(t, func(at *asyncio.T) error {
		p := &sinkProtocol{}
		wt, _, err := ConnectWritePipe(at, func() Protocol { return p }, w)
		if err != nil {
			return err
		}
		tr := wt.(Transport)
		n, err := Sendfile(at, tr, f, 0, 0, true)
		var re *asyncio.RuntimeError
		if n != 0 || !errors.As(err, &re) || !strings.HasPrefix(re.Msg, "sendfile is not supported for transport") {
			t.Errorf("pipe transport: %d, %v", n, err)
		}
		tr.Close()
		return settle(at)
	})
	runtime.KeepAlive(w)
}

// Cancelling Sendfile while it waits for the write buffer to empty (before
// anything of the file is sent) undoes everything: 0 bytes, the file
// position unchanged, reading resumed, and Write accepted again (asyncio
// leaves its empty waiter set and reading paused then).
func TestSendfile_CancelWhileFlushing(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile(2) for sockets here")
	}
	clean(t)
	f := sendfileFile(t, sendfileData(1000))
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runNet(t, func(at *asyncio.T) error {
		tr, p, err := sendfileConn(at, fds[0], &log)
		if err != nil {
			return err
		}
		before := bytes.Repeat([]byte("b"), 4<<20)
		tr.Write(before)
		type result struct {
			n   int64
			err error
		}
		task := asyncio.CreateTask(at, func(t *asyncio.T) (result, error) {
			n, err := Sendfile(t, tr, f, 0, 0, true)
			return result{n, err}, nil
		})
		if err := settle(at); err != nil {
			return err
		}
		if tr.IsReading() {
			return errors.New("Sendfile is not waiting")
		}
		task.Cancel()
		r, err := task.Await(at)
		if err != nil {
			return err
		}
		if !asyncio.IsCancelled(r.err) || r.n != 0 || filePos(t, f) != 0 {
			t.Errorf("cancelled: %d, %v, position %d", r.n, r.err, filePos(t, f))
		}
		if !tr.IsReading() || tr.Protocol() != Protocol(p) {
			t.Error("reading or protocol not restored")
		}
		if err := tr.Write([]byte("after")); err != nil {
			return fmt.Errorf("Write after the cancellation: %v", err)
		}
		got, err := recvAll(at, fds[1], len(before)+5)
		if err != nil || !bytes.Equal(got, append(before, "after"...)) {
			t.Errorf("peer got %d bytes, %v", len(got), err)
		}
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
}
