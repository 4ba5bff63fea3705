//go:build unix

package cpython

// test_events.py's pipe tests: connect_read_pipe and connect_write_pipe on
// os.pipe() and socketpair ends.

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// myReadPipeProto is MyReadPipeProto.
type myReadPipeProto struct {
	t         *testing.T
	transport aio.Transport
	state     []string
	nbytes    int
	done      *asyncio.Future[struct{}]
}

func newMyReadPipeProto(t *testing.T, owner asyncio.LoopOwner) *myReadPipeProto {
	return &myReadPipeProto{t: t, state: []string{"INITIAL"}, done: asyncio.NewFuture[struct{}](owner)}
}

func (p *myReadPipeProto) assertState(expected ...string) {
	if !slices.Equal(p.state, expected) {
		p.t.Errorf("state: %q, expected: %q", p.state, expected)
	}
}

func (p *myReadPipeProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = append(p.state, "CONNECTED")
}

func (p *myReadPipeProto) DataReceived(data []byte) {
	p.assertState("INITIAL", "CONNECTED")
	p.nbytes += len(data)
}

func (p *myReadPipeProto) EOFReceived() bool {
	p.assertState("INITIAL", "CONNECTED")
	p.state = append(p.state, "EOF")
	return false
}

func (p *myReadPipeProto) ConnectionLost(error) {
	if !slices.Contains(p.state, "EOF") {
		p.state = append(p.state, "EOF") // It is okay if EOF is missed.
	}
	p.assertState("INITIAL", "CONNECTED", "EOF")
	p.state = append(p.state, "CLOSED")
	p.done.SetResult(struct{}{})
}

// myWritePipeProto is MyWritePipeProto.
type myWritePipeProto struct {
	aio.BaseProtocol
	t         *testing.T
	transport aio.Transport
	state     string
	done      *asyncio.Future[struct{}]
}

func newMyWritePipeProto(t *testing.T, owner asyncio.LoopOwner) *myWritePipeProto {
	return &myWritePipeProto{t: t, state: "INITIAL", done: asyncio.NewFuture[struct{}](owner)}
}

func (p *myWritePipeProto) assertState(expected string) {
	if p.state != expected {
		p.t.Errorf("state: %q, expected: %q", p.state, expected)
	}
}

func (p *myWritePipeProto) ConnectionMade(tr aio.Transport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "CONNECTED"
}

func (p *myWritePipeProto) ConnectionLost(error) {
	p.assertState("CONNECTED")
	p.state = "CLOSED"
	p.done.SetResult(struct{}{})
}

// osPipe is os.pipe() as files, closed at the end of the test (closing
// twice is harmless).
func osPipe(t *testing.T) (r, w *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// readerPoll is the tests' reader(data): a non-blocking read of fd
// appended to data (nothing on EAGAIN), and its length.
func readerPoll(t *testing.T, fd int, data *[]byte) int {
	buf := make([]byte, 1024)
	n, err := syscall.Read(fd, buf)
	if err != nil && err != syscall.EAGAIN {
		t.Error(err)
	}
	if n > 0 {
		*data = append(*data, buf[:n]...)
	}
	return len(*data)
}

func TestEvents_test_read_pipe(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyReadPipeProto(t, tk)
		rpipe, wpipe := osPipe(t)
		tr, p, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return proto }, rpipe)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(proto), "p is proto")
		check(t, aio.Transport(tr.(aio.Transport)) == proto.transport, "t is proto.transport")
		eq(t, proto.state, []string{"INITIAL", "CONNECTED"})
		eq(t, proto.nbytes, 0)

		_, err = wpipe.Write([]byte("1"))
		noErr(t, err)
		if err := runUntilTask(tk, func() bool { return proto.nbytes >= 1 }); err != nil {
			return err
		}
		eq(t, proto.nbytes, 1)

		_, err = wpipe.Write([]byte("2345"))
		noErr(t, err)
		if err := runUntilTask(tk, func() bool { return proto.nbytes >= 5 }); err != nil {
			return err
		}
		eq(t, proto.state, []string{"INITIAL", "CONNECTED"})
		eq(t, proto.nbytes, 5)

		wpipe.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, []string{"INITIAL", "CONNECTED", "EOF", "CLOSED"})
		// extra info is available
		check(t, proto.transport.ExtraInfo("pipe") != nil, "get_extra_info('pipe')")
		return nil
	})
}

func TestEvents_test_write_pipe(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		rpipe, wpipe := osPipe(t)
		noErr(t, syscall.SetNonblock(int(rpipe.Fd()), true))
		proto := newMyWritePipeProto(t, tk)
		transport, p, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return proto }, wpipe)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(proto), "p is proto")
		check(t, transport.(aio.Transport) == proto.transport, "transport is proto.transport")
		eq(t, proto.state, "CONNECTED")

		noErr(t, transport.Write([]byte("1")))
		var data []byte
		rfd := int(rpipe.Fd())
		if err := runUntilTask(tk, func() bool { return readerPoll(t, rfd, &data) >= 1 }); err != nil {
			return err
		}
		eq(t, string(data), "1")

		noErr(t, transport.Write([]byte("2345")))
		if err := runUntilTask(tk, func() bool { return readerPoll(t, rfd, &data) >= 5 }); err != nil {
			return err
		}
		eq(t, string(data), "12345")
		eq(t, proto.state, "CONNECTED")

		rpipe.Close()
		// extra info is available
		check(t, proto.transport.ExtraInfo("pipe") != nil, "get_extra_info('pipe')")
		// close connection
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestEvents_test_write_pipe_disconnect_on_close(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		rsock, wsock, closeR, closeW := socketpair(t)
		noErr(t, syscall.SetNonblock(rsock, true))
		wfd, err := syscall.Dup(wsock) // wsock.detach()
		if err != nil {
			return err
		}
		pipeobj := os.NewFile(uintptr(wfd), "wsock")
		t.Cleanup(func() { pipeobj.Close() })

		proto := newMyWritePipeProto(t, tk)
		transport, p, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return proto }, pipeobj)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(proto), "p is proto")
		check(t, transport.(aio.Transport) == proto.transport, "transport is proto.transport")
		eq(t, proto.state, "CONNECTED")
		closeW() // only the pipe object holds the write end now

		noErr(t, transport.Write([]byte("1")))
		data, err := aio.SockRecv(tk, rsock, 1024)
		noErr(t, err)
		eq(t, string(data), "1")

		closeR()

		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestEvents_test_unclosed_pipe_transport(t *testing.T) {
	// This test reproduces the issue #314 on GitHub
	l := newLoop(t)
	readProto := newMyReadPipeProto(t, l)
	writeProto := newMyWritePipeProto(t, l)
	rpipe, wpipe := osPipe(t)

	var readTransport aio.ReadTransport
	var writeTransport aio.WriteTransport
	connect := asyncio.CreateTaskErr(l, func(tk *asyncio.T) error {
		var err error
		readTransport, _, err = aio.ConnectReadPipe(tk, func() aio.Protocol { return readProto }, rpipe)
		if err != nil {
			return err
		}
		writeTransport, _, err = aio.ConnectWritePipe(tk, func() aio.Protocol { return writeProto }, wpipe)
		return err
	})
	// Run and close the loop without closing the transports
	noErr(t, l.RunUntilComplete(connect))
	noErr(t, l.Close())

	// These 'repr' calls used to raise an AttributeError. CPython's say
	// "open"; Close of the loop closes every pipe transport here (README,
	// divergence table), so they say "closing".
	check(t, strings.Contains(fmt.Sprint(readTransport), "closing"), fmt.Sprint(readTransport))
	check(t, strings.Contains(fmt.Sprint(writeTransport), "closing"), fmt.Sprint(writeTransport))
	check(t, readTransport.IsClosing() && writeTransport.IsClosing(), "the loop's Close closed the transports")
}
