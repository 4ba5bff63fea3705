package cpython

// test_events.py's SubprocessTestsMixin: loop.subprocess_exec and
// subprocess_shell with a SubprocessProtocol. echo.py, echo2.py and
// echo3.py (next to test_events.py) are `python3 -c` with the same code.
// As in subprocess_test.go, the loops run on the real clock because the
// children are real (no timer is armed), and on Linux only.

import (
	"bytes"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

var (
	echoPy  = []string{"-c", "import os\nwhile True:\n    buf = os.read(0, 1024)\n    if not buf:\n        break\n    os.write(1, buf)"}
	echo2Py = []string{"-c", "import os\nbuf = os.read(0, 1024)\nos.write(1, b'OUT:'+buf)\nos.write(2, b'ERR:'+buf)"}
	echo3Py = []string{"-c", "import os\nwhile True:\n    buf = os.read(0, 1024)\n    if not buf:\n        break\n    try:\n        os.write(1, b'OUT:'+buf)\n    except OSError as ex:\n        os.write(2, b'ERR:' + ex.__class__.__name__.encode('ascii'))"}
)

// mySubprocessProtocol is MySubprocessProtocol.
type mySubprocessProtocol struct {
	t           *testing.T
	state       string
	transport   aio.SubprocessTransport
	connected   *asyncio.Future[struct{}]
	completed   *asyncio.Future[struct{}]
	disconnects map[int]*asyncio.Future[struct{}]
	data        map[int][]byte
	returncode  int
	exited      bool
	gotData     map[int]*asyncio.Event
}

func newMySubprocessProtocol(t *testing.T, owner asyncio.LoopOwner) *mySubprocessProtocol {
	p := &mySubprocessProtocol{t: t, state: "INITIAL",
		connected: asyncio.NewFuture[struct{}](owner), completed: asyncio.NewFuture[struct{}](owner),
		disconnects: map[int]*asyncio.Future[struct{}]{}, data: map[int][]byte{1: nil, 2: nil},
		gotData: map[int]*asyncio.Event{1: asyncio.NewEvent(), 2: asyncio.NewEvent()}}
	for fd := range 3 {
		p.disconnects[fd] = asyncio.NewFuture[struct{}](owner)
	}
	return p
}

func (p *mySubprocessProtocol) assertState(expected string) {
	if p.state != expected {
		p.t.Errorf("state: %q, expected: %q", p.state, expected)
	}
}

func (p *mySubprocessProtocol) ConnectionMade(tr aio.SubprocessTransport) {
	p.transport = tr
	p.assertState("INITIAL")
	p.state = "CONNECTED"
	p.connected.SetResult(struct{}{})
}

func (p *mySubprocessProtocol) ConnectionLost(error) {
	p.assertState("CONNECTED")
	p.state = "CLOSED"
	p.completed.SetResult(struct{}{})
}

func (p *mySubprocessProtocol) PipeDataReceived(fd int, data []byte) {
	p.assertState("CONNECTED")
	p.data[fd] = append(p.data[fd], data...)
	p.gotData[fd].Set()
}

func (p *mySubprocessProtocol) PipeConnectionLost(fd int, err error) {
	p.assertState("CONNECTED")
	if err != nil {
		p.disconnects[fd].SetException(err)
	} else {
		p.disconnects[fd].SetResult(struct{}{})
	}
}

func (p *mySubprocessProtocol) ProcessExited() {
	p.assertState("CONNECTED")
	p.returncode, p.exited = p.transport.ReturnCode()
}

// subprocessExec is loop.subprocess_exec(MySubprocessProtocol, sys.executable, ...).
func subprocessExec(t *testing.T, tk *asyncio.T, args []string, opts ...aio.Option) (aio.SubprocessTransport, *mySubprocessProtocol, error) {
	tr, p, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return newMySubprocessProtocol(t, tk) }, python, args, opts...)
	if err != nil {
		return nil, nil, err
	}
	proto, ok := p.(*mySubprocessProtocol)
	check(t, ok, "a MySubprocessProtocol")
	return tr, proto, nil
}

func subprocessShell(t *testing.T, tk *asyncio.T, cmd string, opts ...aio.Option) (aio.SubprocessTransport, *mySubprocessProtocol, error) {
	tr, p, err := aio.SubprocessShell(tk, func() aio.SubprocessProtocol { return newMySubprocessProtocol(t, tk) }, cmd, opts...)
	if err != nil {
		return nil, nil, err
	}
	proto, ok := p.(*mySubprocessProtocol)
	check(t, ok, "a MySubprocessProtocol")
	return tr, proto, nil
}

func await0[V any](tk *asyncio.T, f interface {
	Await(*asyncio.T) (V, error)
}) error {
	_, err := f.Await(tk)
	return err
}

func checkKilled(t *testing.T, p *mySubprocessProtocol) {
	t.Helper()
	eq(t, p.returncode, -int(syscall.SIGKILL), "returncode")
}

func TestEvents_test_subprocess_exec(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echoPy)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		eq(t, proto.state, "CONNECTED")
		stdin := transp.PipeTransport(0)
		noErr(t, stdin.Write([]byte("Python The Winner")))
		if err := proto.gotData[1].Wait(tk); err != nil {
			return err
		}
		transp.Close()
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		checkKilled(t, proto)
		eq(t, string(proto.data[1]), "Python The Winner")
		return nil
	})
}

func TestEvents_test_subprocess_interactive(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echoPy)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		eq(t, proto.state, "CONNECTED")
		stdin := transp.PipeTransport(0)
		noErr(t, stdin.Write([]byte("Python ")))
		if err := proto.gotData[1].Wait(tk); err != nil {
			return err
		}
		proto.gotData[1].Clear()
		eq(t, string(proto.data[1]), "Python ")

		noErr(t, stdin.Write([]byte("The Winner")))
		if err := proto.gotData[1].Wait(tk); err != nil {
			return err
		}
		eq(t, string(proto.data[1]), "Python The Winner")

		transp.Close()
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		checkKilled(t, proto)
		return nil
	})
}

func TestEvents_test_subprocess_shell(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessShell(t, tk, "echo Python")
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		transp.PipeTransport(0).Close()
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, 0)
		for fd, f := range proto.disconnects {
			check(t, f.Done(), "disconnects[", fd, "].done()")
		}
		eq(t, string(bytes.TrimRight(proto.data[1], "\r\n")), "Python")
		eq(t, string(proto.data[2]), "")
		transp.Close()
		return nil
	})
}

// inherit is stdin=None, stdout=None, stderr=None.
var inherit = []aio.Option{aio.WithStdin(aio.Inherit), aio.WithStdout(aio.Inherit), aio.WithStderr(aio.Inherit)}

func TestEvents_test_subprocess_exitcode(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessShell(t, tk, "exit 7", inherit...)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, 7)
		transp.Close()
		return nil
	})
}

func TestEvents_test_subprocess_close_after_finish(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessShell(t, tk, "exit 7", inherit...)
		if err != nil {
			return err
		}
		for fd := range 3 {
			check(t, transp.PipeTransport(fd) == nil, "get_pipe_transport(", fd, ") is None")
		}
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, 7)
		transp.Close() // returns nothing, and does not fail
		return nil
	})
}

func TestEvents_test_subprocess_kill(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echoPy)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		noErr(t, transp.Kill())
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		checkKilled(t, proto)
		transp.Close()
		return nil
	})
}

func TestEvents_test_subprocess_terminate(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echoPy)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		noErr(t, transp.Terminate())
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, -int(syscall.SIGTERM))
		transp.Close()
		return nil
	})
}

func TestEvents_test_subprocess_send_signal(t *testing.T) {
	// bpo-31034: Make sure that we get the default signal handler
	// (killing the process). The parent process may have decided to
	// ignore SIGHUP, and signal handlers are inherited.
	if signal.Ignored(syscall.SIGHUP) {
		signal.Reset(syscall.SIGHUP)
		t.Cleanup(func() { signal.Ignore(syscall.SIGHUP) })
	}
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echoPy)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		noErr(t, transp.SendSignal(syscall.SIGHUP))
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, -int(syscall.SIGHUP))
		transp.Close()
		return nil
	})
}

func TestEvents_test_subprocess_stderr(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echo2Py)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		noErr(t, transp.PipeTransport(0).Write([]byte("test")))
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		transp.Close()
		eq(t, string(proto.data[1]), "OUT:test")
		check(t, bytes.HasPrefix(proto.data[2], []byte("ERR:test")), string(proto.data[2]))
		eq(t, proto.returncode, 0)
		return nil
	})
}

func TestEvents_test_subprocess_stderr_redirect_to_stdout(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echo2Py, aio.WithStderr(aio.Stdout))
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		stdin := transp.PipeTransport(0)
		check(t, transp.PipeTransport(1) != nil, "get_pipe_transport(1) is not None")
		check(t, transp.PipeTransport(2) == nil, "get_pipe_transport(2) is None")
		noErr(t, stdin.Write([]byte("test")))
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		check(t, bytes.HasPrefix(proto.data[1], []byte("OUT:testERR:test")), string(proto.data[1]))
		eq(t, string(proto.data[2]), "")
		transp.Close()
		eq(t, proto.returncode, 0)
		return nil
	})
}

func TestEvents_test_subprocess_close_client_stream(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		transp, proto, err := subprocessExec(t, tk, echo3Py)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.connected); err != nil {
			return err
		}
		stdin := transp.PipeTransport(0)
		stdout := transp.PipeTransport(1)
		noErr(t, stdin.Write([]byte("test")))
		if err := proto.gotData[1].Wait(tk); err != nil {
			return err
		}
		eq(t, string(proto.data[1]), "OUT:test")

		stdout.Close()
		if err := await0[struct{}](tk, proto.disconnects[1]); err != nil {
			return err
		}
		noErr(t, stdin.Write([]byte("xxx")))
		if err := proto.gotData[2].Wait(tk); err != nil {
			return err
		}
		eq(t, string(proto.data[2]), "ERR:BrokenPipeError")
		transp.Close()
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		checkKilled(t, proto)
		return nil
	})
}

func TestEvents_test_subprocess_wait_no_same_group(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		// start the new process in a new session
		opts := append(inherit[:len(inherit):len(inherit)], aio.WithCmd(func(c *exec.Cmd) {
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}))
		transp, proto, err := subprocessShell(t, tk, "exit 7", opts...)
		if err != nil {
			return err
		}
		if err := await0[struct{}](tk, proto.completed); err != nil {
			return err
		}
		eq(t, proto.returncode, 7)
		transp.Close()
		return nil
	})
}
