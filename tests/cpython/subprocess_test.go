//go:build linux

package cpython

// CPython 3.13 Lib/test/test_asyncio/test_subprocess.py. CPython runs
// SubprocessMixin once per child watcher (and the Proactor on Windows);
// here it runs once, with the loop's own exit watch (a pidfd on Linux).
// `sys.executable -c CODE` is /usr/bin/python3 -c with the same CODE. A
// child that must stay alive (CPython's PROGRAM_BLOCKED, `time.sleep(3600)`,
// `sleep 1`) blocks on a pipe the test controls instead, so no test depends
// on the real clock; the loops run on the real clock only because children
// are real (no timer is armed). Linux only: some ports see the child's exit
// before the loop does (waitid with WNOWAIT), and the leak checks read /proc.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

const python = "/usr/bin/python3"

// programCat is PROGRAM_CAT: copies its stdin to its stdout.
var programCat = []string{"-c", "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data)"}

// runReal is run on the real clock: children are real processes, so a
// virtual clock would gain nothing (no test arms a timer).
func runReal(t *testing.T, body func(tk *asyncio.T) error) {
	t.Helper()
	if _, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) { return struct{}{}, body(tk) }); err != nil {
		t.Fatalf("test body: %v", err)
	}
	if kids := childProcesses(); len(kids) > 0 {
		t.Errorf("child processes left: %s", strings.Join(kids, "; "))
	}
}

// blocked is PROGRAM_BLOCKED: a child that runs until it is killed. It
// reads one byte from its fd 3, the read end of a pipe whose write end
// the test holds (and closes at cleanup, so nothing can outlive the test).
func blocked(t *testing.T) (args []string, opt aio.Option) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return []string{"-c", "import os; os.read(3, 1)"}, aio.WithCmd(func(c *exec.Cmd) { c.ExtraFiles = []*os.File{r} })
}

// childProcesses lists the test process's children (zombies too).
func childProcesses() []string {
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
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
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == self { // state ppid ...
			kids = append(kids, s[:i+1]+" "+f[0])
		}
	}
	return kids
}

// openFDs lists the test process's open descriptors.
func openFDs() []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var fds []string
	for _, e := range ents {
		fds = append(fds, e.Name())
	}
	return fds
}

// exitedNotReaped blocks until the child pid has exited, without reaping
// it (waitid WNOWAIT): the child is finished but the loop, which this
// call holds, has not been told yet. It returns how the child ended:
// cldExited or cldKilled (si_code).
func exitedNotReaped(t *testing.T, pid int) int32 {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("waitid: %v", err)
		}
		break
	}
	return info.Code
}

// si_code values of a SIGCHLD siginfo (CLD_EXITED, CLD_KILLED).
const (
	cldExited = 1
	cldKilled = 2
)

// procEvents is a SubprocessProtocol that records its callbacks.
type procEvents struct {
	tr      aio.SubprocessTransport
	events  []any
	lost    *asyncio.Future[struct{}]
	onEvent func()
}

func newProcEvents(tk *asyncio.T) *procEvents {
	return &procEvents{lost: asyncio.NewFuture[struct{}](tk)}
}

func (p *procEvents) add(e any) {
	p.events = append(p.events, e)
	if p.onEvent != nil {
		p.onEvent()
	}
}

func (p *procEvents) ConnectionMade(tr aio.SubprocessTransport) { p.tr = tr; p.add("connection_made") }
func (p *procEvents) PipeDataReceived(fd int, data []byte) {
	p.add(fmt.Sprintf("pipe_data_received %d %s", fd, data))
}
func (p *procEvents) PipeConnectionLost(fd int, err error) {
	p.add(fmt.Sprintf("pipe_connection_lost %d", fd))
}
func (p *procEvents) ProcessExited() { p.add("process_exited") }
func (p *procEvents) ConnectionLost(err error) {
	p.add(fmt.Sprintf("connection_lost %v", err))
	p.lost.SetResult(struct{}{})
}

// SubprocessTransportTests drive a mock Popen through _process_exited(6);
// here a real child exits with 6.
func TestSubprocess_test_proc_exited(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		p := newProcEvents(tk)
		tr, _, err := aio.SubprocessShell(tk, func() aio.SubprocessProtocol { return p }, "exit 6",
			aio.WithStdin(aio.Inherit), aio.WithStdout(aio.Inherit), aio.WithStderr(aio.Inherit))
		if err != nil {
			return err
		}
		if _, err := p.lost.Await(tk); err != nil {
			return err
		}
		rc, ok := tr.ReturnCode()
		eq(t, rc, 6, "returncode")
		check(t, ok, "exited")
		eq(t, p.events, []any{"connection_made", "process_exited", "connection_lost <nil>"})
		check(t, !tr.IsClosing(), "not closing")
		// methods must raise ProcessLookupError if the process exited
		for name, f := range map[string]func() error{
			"send_signal": func() error { return tr.SendSignal(syscall.SIGTERM) },
			"terminate":   tr.Terminate,
			"kill":        tr.Kill,
		} {
			err := f()
			check(t, errors.Is(err, syscall.ESRCH), name, ": ", err, " is not ProcessLookupError (ESRCH)")
		}
		tr.Close()
		return nil
	})
}

// The repr with a return code and while running. CPython's third state,
// "not started" (a transport whose _pid is None), cannot exist here: a
// transport is made once its child has started.
func TestSubprocess_test_subprocess_repr(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		p := newProcEvents(tk)
		tr, _, err := aio.SubprocessShell(tk, func() aio.SubprocessProtocol { return p }, "exit 6")
		if err != nil {
			return err
		}
		if _, err := p.lost.Await(tk); err != nil {
			return err
		}
		check(t, regexp.MustCompile(`^<\w+ pid=\d+ returncode=6>$`).MatchString(fmt.Sprint(tr)), tr)
		tr.Close()

		q := newProcEvents(tk)
		tr2, _, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return q }, python, args, opt)
		if err != nil {
			return err
		}
		check(t, regexp.MustCompile(`^<\w+ pid=\d+ running>$`).MatchString(fmt.Sprint(tr2)), tr2)
		tr2.Close()
		_, err = q.lost.Await(tk)
		return err
	})
}

func TestSubprocess_test_stdin_stdout(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, programCat, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		// feed data
		proc.Stdin.Write([]byte("some data"))
		if err := proc.Stdin.Drain(tk); err != nil {
			return err
		}
		proc.Stdin.Close()
		// get output and exitcode
		data, err := proc.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		exitcode, err := proc.Wait(tk)
		if err != nil {
			return err
		}
		eq(t, exitcode, 0, "exitcode")
		eq(t, string(data), "some data", "stdout")
		return nil
	})
}

// communicate is the body of the communicate tests: the return code and
// stdout of PROGRAM_CAT given input.
func communicate(t *testing.T, input []byte) (int, string) {
	var rc int
	var out []byte
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, programCat, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		out, _, err = proc.Communicate(tk, input)
		if err != nil {
			return err
		}
		rc, _ = proc.ReturnCode()
		return nil
	})
	return rc, string(out)
}

func TestSubprocess_test_communicate(t *testing.T) {
	rc, out := communicate(t, []byte("some data"))
	eq(t, rc, 0, "exitcode")
	eq(t, out, "some data", "stdout")
}

func TestSubprocess_test_communicate_none_input(t *testing.T) {
	rc, out := communicate(t, nil)
	eq(t, rc, 0, "exitcode")
	eq(t, out, "", "stdout")
}

// shellExit runs `cmd` with create_subprocess_shell and returns its exit
// code.
func shellExit(t *testing.T, cmd string, opts ...aio.Option) int {
	var rc int
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessShell(tk, cmd, opts...)
		if err != nil {
			return err
		}
		rc, err = proc.Wait(tk)
		return err
	})
	return rc
}

func TestSubprocess_test_shell(t *testing.T) {
	eq(t, shellExit(t, "exit 7"), 7)
}

func TestSubprocess_test_start_new_session(t *testing.T) {
	// start the new process in a new session (start_new_session=True)
	eq(t, shellExit(t, "exit 8", aio.WithCmd(func(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} })), 8)
}

// signalBlocked starts PROGRAM_BLOCKED, has stop signal it, and returns
// its return code.
func signalBlocked(t *testing.T, stop func(*aio.Process) error) int {
	args, opt := blocked(t)
	var rc int
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, args, opt)
		if err != nil {
			return err
		}
		if err := stop(proc); err != nil {
			return err
		}
		rc, err = proc.Wait(tk)
		return err
	})
	return rc
}

func TestSubprocess_test_kill(t *testing.T) {
	eq(t, signalBlocked(t, (*aio.Process).Kill), -int(syscall.SIGKILL))
}

func TestSubprocess_test_terminate(t *testing.T) {
	eq(t, signalBlocked(t, (*aio.Process).Terminate), -int(syscall.SIGTERM))
}

// bpo-43884: kill a shell whose child (here the first cat, CPython's
// `sleep 1`) holds its stdout pipe. CPython sleeps a second so that the
// shell has started its child; here the child echoing a line says so.
func TestSubprocess_test_kill_issue43884(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessShell(tk, "cat; cat", aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		proc.Stdin.Write([]byte("started\n"))
		line, err := proc.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		eq(t, string(line), "started\n")
		noErr(t, proc.Kill())
		returncode, err := proc.Wait(tk)
		if err != nil {
			return err
		}
		eq(t, returncode, -int(syscall.SIGKILL))
		// The grandchild still holds the pipes: end it.
		proc.Stdin.Close()
		rest, err := proc.Stdout.Read(tk, -1)
		eq(t, string(rest), "", "after the kill")
		return err
	})
}

// bpo-31034: the child gets the default SIGHUP handler (which kills it).
// CPython sets it to SIG_DFL in the parent in case the parent ignores
// SIGHUP (under nohup), as children inherit that; a Go program cannot
// undo an ignored disposition it started with, so the child does it then.
func TestSubprocess_test_send_signal(t *testing.T) {
	var returncode int
	runReal(t, func(tk *asyncio.T) error {
		code := `import sys; print("sleeping", flush=True); sys.stdin.read()`
		if signal.Ignored(syscall.SIGHUP) {
			code = "import signal; signal.signal(signal.SIGHUP, signal.SIG_DFL); " + code
		}
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", code}, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		// basic synchronization to wait until the program is sleeping
		line, err := proc.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		eq(t, string(line), "sleeping\n")
		noErr(t, proc.SendSignal(syscall.SIGHUP))
		returncode, err = proc.Wait(tk)
		return err
	})
	eq(t, returncode, -int(syscall.SIGHUP))
}

// pipeMaxSize is test.support.PIPE_MAX_SIZE: larger than any pipe buffer.
const pipeMaxSize = 4<<20 + 1

func TestSubprocess_test_stdin_broken_pipe(t *testing.T) {
	// buffer large enough to feed the whole pipe buffer
	largeData := bytes.Repeat([]byte("x"), pipeMaxSize)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// the program ends before the stdin can be fed (pass_fds=(rfd,): the
	// first of ExtraFiles is the child's fd 3)
	code := "import os; fd = 3; os.read(fd, 1)"
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", code}, aio.WithStdin(aio.Pipe),
			aio.WithCmd(func(c *exec.Cmd) { c.ExtraFiles = []*os.File{r} }))
		if err != nil {
			return err
		}
		proc.Stdin.Write(largeData)
		// Only exit the child process once the write buffer is filled
		if _, err := w.Write([]byte("go")); err != nil {
			return err
		}
		// drain() must raise BrokenPipeError or ConnectionResetError
		err = proc.Stdin.Drain(tk)
		check(t, errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET), "drain: ", err)
		_, err = proc.Wait(tk)
		return err
	})
}

func TestSubprocess_test_communicate_ignore_broken_pipe(t *testing.T) {
	largeData := bytes.Repeat([]byte("x"), pipeMaxSize)
	runReal(t, func(tk *asyncio.T) error {
		// the program ends before the stdin can be fed
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", "pass"}, aio.WithStdin(aio.Pipe))
		if err != nil {
			return err
		}
		// communicate() must ignore BrokenPipeError when feeding stdin
		_, _, err = proc.Communicate(tk, largeData)
		noErr(t, err, "communicate")
		rc, err := proc.Wait(tk)
		eq(t, rc, 0)
		return err
	})
}

// Issue #22685: the stream reader pauses the pipe transport when the child
// writes more than twice its limit, and resumes it once read. CPython mocks
// the transport's pause_reading and resume_reading; here the transport's
// IsReading shows both. The child writes its 21 bytes in one write, which
// a pipe delivers whole, then waits for its stdin to close.
func TestSubprocess_test_pause_reading(t *testing.T) {
	const limit = 10
	const size = limit*2 + 1
	runReal(t, func(tk *asyncio.T) error {
		code := strings.Join([]string{
			"import sys",
			fmt.Sprintf(`sys.stdout.write("x" * %d)`, size),
			"sys.stdout.flush()",
			"sys.stdin.read()",
		}, "\n")
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", code},
			aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe), aio.WithStreamLimit(limit))
		if err != nil {
			return err
		}
		stdoutTransport := proc.Transport().PipeTransport(1)
		first, err := proc.Stdout.ReadExactly(tk, 1)
		if err != nil {
			return err
		}
		check(t, !stdoutTransport.IsReading(), "paused with 20 bytes buffered: ", proc.Stdout)
		rest, err := proc.Stdout.ReadExactly(tk, size-2)
		if err != nil {
			return err
		}
		check(t, stdoutTransport.IsReading(), "resumed with 1 byte buffered: ", proc.Stdout)
		stdout, _, err := proc.Communicate(tk, nil)
		if err != nil {
			return err
		}
		eq(t, string(first)+string(rest)+string(stdout), strings.Repeat("x", size))
		return nil
	})
}

// lenMessage runs `print(len(sys.stdin.read()))`-style code with the given
// streams and returns its stdout, stderr and exit code.
func lenMessage(t *testing.T, code string, input []byte, opts ...aio.Option) (stdout, stderr []byte, exitcode int) {
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", code}, opts...)
		if err != nil {
			return err
		}
		stdout, stderr, err = proc.Communicate(tk, input)
		if err != nil {
			return err
		}
		exitcode, err = proc.Wait(tk)
		return err
	})
	return stdout, stderr, exitcode
}

const lenCode = "import sys; data = sys.stdin.read(); print(len(data))"

var pipes = []aio.Option{aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe)}

// asyncio issue #209: stdin must not be inheritable, otherwise
// communicate() hangs. close_fds=False has no equivalent: os/exec passes
// the child only its three streams and ExtraFiles.
func TestSubprocess_test_stdin_not_inheritable(t *testing.T) {
	out, _, rc := lenMessage(t, lenCode, []byte("abc"), pipes...)
	eq(t, string(bytes.TrimRight(out, "\r\n")), "3")
	eq(t, rc, 0)
}

func TestSubprocess_test_empty_input(t *testing.T) {
	out, _, rc := lenMessage(t, lenCode, []byte{}, pipes...)
	eq(t, string(bytes.TrimRight(out, "\r\n")), "0")
	eq(t, rc, 0)
}

func TestSubprocess_test_devnull_input(t *testing.T) {
	out, _, rc := lenMessage(t, lenCode, nil, aio.WithStdin(aio.DevNull), aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
	eq(t, string(bytes.TrimRight(out, "\r\n")), "0")
	eq(t, rc, 0)
}

func TestSubprocess_test_devnull_output(t *testing.T) {
	out, _, rc := lenMessage(t, lenCode, []byte("abc"), aio.WithStdin(aio.Pipe), aio.WithStdout(aio.DevNull), aio.WithStderr(aio.Pipe))
	check(t, out == nil, "stdout is None: ", out)
	eq(t, rc, 0)
}

func TestSubprocess_test_devnull_error(t *testing.T) {
	_, errOut, rc := lenMessage(t, lenCode, []byte("abc"), aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe), aio.WithStderr(aio.DevNull))
	check(t, errOut == nil, "stderr is None: ", errOut)
	eq(t, rc, 0)
}

func TestSubprocess_test_devstdin_input(t *testing.T) {
	code := `file = open("/dev/stdin"); data = file.read(); print(len(data))`
	out, _, rc := lenMessage(t, code, []byte("abc"), pipes...)
	eq(t, string(bytes.TrimRight(out, "\r\n")), "3")
	eq(t, rc, 0)
}

// Issue #23140: cancel Process.wait().
func TestSubprocess_test_cancel_process_wait(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, args, opt)
		if err != nil {
			return err
		}
		// Create an internal future waiting on the process exit
		task := asyncio.CreateTask(tk, proc.Wait)
		tk.Loop().CallSoon(func() { task.Cancel() })
		_, err = task.Await(tk)
		cancelled(t, err, "await task")
		// Cancel the future
		task.Cancel()
		// Kill the process and wait until it is done
		noErr(t, proc.Kill())
		rc, err := proc.Wait(tk)
		eq(t, rc, -int(syscall.SIGKILL))
		return err
	})
}

// A task cancelled while it creates the process: the child is killed and
// reaped before the cancellation comes out (runReal checks that no child
// is left).
func TestSubprocess_test_cancel_make_subprocess_transport_exec(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (*aio.Process, error) {
			return aio.CreateSubprocessExec(tk, python, args, opt)
		})
		tk.Loop().CallSoon(func() { task.Cancel() })
		_, err := task.Await(tk)
		cancelled(t, err, "await task")
		eq(t, childProcesses(), []string(nil), "children after the cancellation")
		return nil
	})
}

func TestSubprocess_test_cancel_post_init(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (aio.SubprocessTransport, error) {
			tr, _, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return newProcEvents(tk) }, python, args, opt)
			return tr, err
		})
		tk.Loop().CallSoon(func() { task.Cancel() })
		_, err := task.Await(tk)
		cancelled(t, err, "await task")
		if err := asyncio.Sleep(tk, 0); err != nil { // run_briefly
			return err
		}
		eq(t, childProcesses(), []string(nil), "children after the cancellation")
		return nil
	})
}

// transport.close() must kill the process if it is still running. CPython
// wraps proc.kill to see the call; here the return code shows SIGKILL.
func TestSubprocess_test_close_kill_running(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		p := newProcEvents(tk)
		tr, _, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return p }, python, args, opt)
		if err != nil {
			return err
		}
		_, exited := tr.ReturnCode()
		check(t, !exited, "returncode is None")
		tr.Close()
		if _, err := p.lost.Await(tk); err != nil { // transport._wait()
			return err
		}
		rc, _ := tr.ReturnCode()
		eq(t, rc, -int(syscall.SIGKILL), "killed")
		return nil
	})
}

// transport.close() must not kill the process if it finished, even if the
// transport was not notified yet. CPython kills and reaps the child behind
// the transport's back; reaping it here would take the exit status from
// the loop, so the test waits for the exit without reaping (the child is a
// zombie, not yet seen by the loop). CPython then checks that close()
// did not call kill; here the return code the transport reports is the
// one the child ended with (SIGTERM), and nothing fails.
func TestSubprocess_test_close_dont_kill_finished(t *testing.T) {
	args, opt := blocked(t)
	runReal(t, func(tk *asyncio.T) error {
		p := newProcEvents(tk)
		tr, _, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return p }, python, args, opt)
		if err != nil {
			return err
		}
		cmd := tr.ExtraInfo("subprocess").(*exec.Cmd)
		// end the process (but asyncio is not notified immediately)
		noErr(t, cmd.Process.Signal(syscall.SIGTERM))
		procReturncode := exitedNotReaped(t, tr.Pid())
		_, transportExited := tr.ReturnCode()
		tr.Close()
		eq(t, procReturncode, int32(cldKilled), "the child's status (not None)")
		check(t, !transportExited, "the transport's returncode is None")
		if _, err := p.lost.Await(tk); err != nil {
			return err
		}
		rc, _ := tr.ReturnCode()
		eq(t, rc, -int(syscall.SIGTERM))
		return nil
	})
}

// popenError is _test_popen_error: the child cannot start (CPython's
// mocked Popen raises; here the program does not exist). The error comes
// out, and every descriptor made for the child is closed (Issue #24763,
// #35721: the transport and the stdin pipe).
func popenError(t *testing.T, opts ...aio.Option) {
	runReal(t, func(tk *asyncio.T) error {
		before := openFDs()
		_, err := aio.CreateSubprocessExec(tk, "/nonexistent/python3", []string{"-c", "pass"}, opts...)
		check(t, errors.Is(err, fs.ErrNotExist), "error: ", err)
		eq(t, openFDs(), before, "open descriptors")
		return nil
	})
}

func TestSubprocess_test_popen_error(t *testing.T) {
	popenError(t)
}

func TestSubprocess_test_popen_error_with_stdin_pipe(t *testing.T) {
	popenError(t, aio.WithStdin(aio.Pipe))
}

// Reading stdout after the process has exited gets all it wrote. CPython
// sleeps 0.3 s between reads to let the child exit meanwhile; here the
// test waits for the exit before the first read, with a limit that lets
// the reader hold the whole output (with the default one the child would
// block on the full pipe and never exit).
func TestSubprocess_test_read_stdout_after_process_exit(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		code := strings.Join([]string{
			"import sys",
			"for _ in range(64):",
			`    sys.stdout.write("x" * 4096)`,
			"sys.stdout.flush()",
			"sys.exit(1)",
		}, "\n")
		process, err := aio.CreateSubprocessExec(tk, python, []string{"-c", code}, aio.WithStdout(aio.Pipe), aio.WithStreamLimit(1<<20))
		if err != nil {
			return err
		}
		rc, err := process.Wait(tk)
		if err != nil {
			return err
		}
		eq(t, rc, 1)
		total := 0
		for {
			data, err := process.Stdout.Read(tk, 65536)
			if err != nil {
				return err
			}
			if len(data) == 0 {
				break
			}
			total += len(data)
		}
		eq(t, total, 64*4096, "bytes read")
		return nil
	})
}

// checkStdoutOutput is check_stdout_output: communicate, then a Wait task
// finishes in one step with the same code.
func checkStdoutOutput(t *testing.T, tk *asyncio.T, proc *aio.Process, output string) error {
	stdout, _, err := proc.Communicate(tk, nil)
	if err != nil {
		return err
	}
	eq(t, string(stdout), output)
	rc, _ := proc.ReturnCode()
	eq(t, rc, 0)
	task := asyncio.CreateTask(tk, proc.Wait)
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	eq(t, result[int](t, task), rc)
	return nil
}

func TestSubprocess_test_create_subprocess_env_shell(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		cmd := python + ` -c "import os, sys; sys.stdout.write(os.getenv('FOO'))"`
		env := append(slices.Clone(os.Environ()), "FOO=bar")
		proc, err := aio.CreateSubprocessShell(tk, cmd, aio.WithEnv(env), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		return checkStdoutOutput(t, tk, proc, "bar")
	})
}

func TestSubprocess_test_create_subprocess_env_exec(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		env := append(slices.Clone(os.Environ()), "FOO=baz")
		proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", "import os, sys; sys.stdout.write(os.getenv('FOO'))"},
			aio.WithEnv(env), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		return checkStdoutOutput(t, tk, proc, "baz")
	})
}

func TestSubprocess_test_subprocess_concurrent_wait(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		proc, err := aio.CreateSubprocessExec(tk, python, programCat, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		stdout, _, err := proc.Communicate(tk, []byte("some data"))
		if err != nil {
			return err
		}
		eq(t, string(stdout), "some data")
		rc, _ := proc.ReturnCode()
		eq(t, rc, 0)
		waits := make([]func(*asyncio.T) (int, error), 10)
		for i := range waits {
			waits[i] = proc.Wait
		}
		codes, err := asyncio.GatherFuncs(tk, waits...).Await(tk)
		if err != nil {
			return err
		}
		eq(t, codes, slices.Repeat([]int{rc}, 10))
		return nil
	})
}

// gh-108973: every subprocess protocol method is called; the order of the
// pipe events is checked per descriptor (CPython promises nothing across
// them).
func TestSubprocess_test_subprocess_protocol_events(t *testing.T) {
	expected := []any{
		"pipe_data_received 1 stdout",
		"pipe_data_received 2 stderr",
		"pipe_connection_lost 1",
		"pipe_connection_lost 2",
		"process_exited",
	}
	var events []any
	runReal(t, func(tk *asyncio.T) error {
		exitFuture := asyncio.NewFuture[bool](tk)
		p := newProcEvents(tk)
		p.onEvent = func() {
			// Only exit when we got all expected events (connection_made
			// is not one of them)
			if len(p.events)-1 >= len(expected) && !exitFuture.Done() {
				exitFuture.SetResult(true)
			}
		}
		code := `import sys; sys.stdout.write("stdout"); sys.stderr.write("stderr")`
		tr, _, err := aio.SubprocessExec(tk, func() aio.SubprocessProtocol { return p }, python, []string{"-c", code}, aio.WithStdin(aio.Inherit))
		if err != nil {
			return err
		}
		if _, err := exitFuture.Await(tk); err != nil {
			return err
		}
		tr.Close()
		// CPython's protocol does not record connection_made and
		// connection_lost.
		for _, e := range p.events {
			if s := e.(string); !strings.HasPrefix(s, "connection_") {
				events = append(events, e)
			}
		}
		_, err = p.lost.Await(tk)
		return err
	})
	// First, make sure that we received all events
	sortedStrings := func(xs []any) []string {
		var out []string
		for _, x := range xs {
			out = append(out, x.(string))
		}
		slices.Sort(out)
		return out
	}
	eq(t, sortedStrings(events), sortedStrings(expected), "the set of events")
	// Second, check order of pipe events per file descriptor
	for _, fd := range []string{"1", "2"} {
		var names []string
		for _, e := range events {
			f := strings.Fields(e.(string))
			if len(f) >= 2 && f[1] == fd {
				names = append(names, f[0])
			}
		}
		eq(t, names, []string{"pipe_data_received", "pipe_connection_lost"}, "fd ", fd, ": ", events)
	}
}

// See https://github.com/python/cpython/issues/100133
func TestSubprocess_test_subprocess_communicate_stdout(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		var outputs []string
		var fns []func(*asyncio.T) (string, error)
		for i := range 10 {
			out := fmt.Sprintf("foo%d", i)
			outputs = append(outputs, out)
			fns = append(fns, func(tk *asyncio.T) (string, error) {
				proc, err := aio.CreateSubprocessExec(tk, python, []string{"-c", fmt.Sprintf("print(%q)", out)}, aio.WithStdout(aio.Pipe))
				if err != nil {
					return "", err
				}
				stdout, _, err := proc.Communicate(tk, nil)
				return strings.TrimSpace(string(stdout)), err
			})
		}
		res, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		if err != nil {
			return err
		}
		eq(t, res, outputs)
		return nil
	})
}

// gh-87744: a signal sent to a child that has exited but is not yet
// reaped must neither fail nor hit another process, and the return code
// stays the child's. CPython races `sleep 0.1` against asyncio.sleep(0.1);
// here the child has surely exited (waitid WNOWAIT) and the loop has
// surely not seen it.
func TestSubprocess_test_subprocess_send_signal_race(t *testing.T) {
	runReal(t, func(tk *asyncio.T) error {
		for range 10 {
			// The child exits when the test writes a line to its fd 3:
			// only then, so that the loop cannot have seen the exit
			// while CreateSubprocessExec waited for its start.
			r, w, err := os.Pipe()
			if err != nil {
				return err
			}
			proc, err := aio.CreateSubprocessExec(tk, "/bin/sh", []string{"-c", "read x <&3"},
				aio.WithCmd(func(c *exec.Cmd) { c.ExtraFiles = []*os.File{r} }))
			r.Close()
			if err != nil {
				w.Close()
				return err
			}
			_, err = w.Write([]byte("\n"))
			w.Close()
			if err != nil {
				return err
			}
			eq(t, exitedNotReaped(t, proc.Pid()), int32(cldExited), "how the child ended")
			if err := proc.SendSignal(syscall.SIGUSR1); err != nil && !errors.Is(err, syscall.ESRCH) {
				t.Errorf("send_signal: %v", err)
			}
			rc, err := proc.Wait(tk)
			if err != nil {
				return err
			}
			check(t, rc != 255, "returncode 255")
			eq(t, rc, 0)
		}
		return nil
	})
}
