//go:build unix

package aio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// The low-level subprocess API (subprocess.go). Every test runs real
// children and ends with clean: no child process, zombie, descriptor or
// goroutine left. Each runs with both exit watches where that matters:
// the pidfd (Linux) and the portable goroutine.

// bothWatches runs f once with each exit watch.
func bothWatches(t *testing.T, f func(t *testing.T)) {
	for _, goroutine := range []bool{false, true} {
		name := "pidfd"
		if goroutine || !pidfdWatch {
			name = "goroutine"
		}
		t.Run(name, func(t *testing.T) {
			old := exitWatchGoroutine
			exitWatchGoroutine = goroutine
			defer func() { exitWatchGoroutine = old }()
			f(t)
		})
	}
}

// The protocol sees ConnectionMade first; the output the child wrote and
// the end of every pipe its exit closed before ProcessExited; and
// ConnectionLost last. Which pipe ends first is the kernel's business, so
// the middle of the log is compared per pipe.
func TestSubprocess_CallbackOrder(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var p *procRecorder
		runNet(t, func(at *asyncio.T) error {
			p = newProcRecorder(at)
			_, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "printf out; printf err >&2; exit 7")
			if err != nil {
				return err
			}
			_, err = p.done.Await(at)
			return err
		})
		n := len(p.log)
		if n < 2 || p.log[0] != "made" || p.log[n-2] != "exited 7 true" || p.log[n-1] != "lost <nil>" {
			t.Fatalf("log %q: want made ... exited 7 true, lost <nil>", p.log)
		}
		middle := slices.Clone(p.log[1 : n-2])
		for _, fd := range []string{"1", "2"} {
			d, l := slices.Index(middle, "data "+fd+map[string]string{"1": " out", "2": " err"}[fd]), slices.Index(middle, "pipe lost "+fd+" <nil>")
			if d < 0 || l < d {
				t.Errorf("log %q: fd %s's data must come before its end", p.log, fd)
			}
		}
		slices.Sort(middle)
		expectLog(t, []string{"data 1 out", "data 2 err", "pipe lost 0 <nil>", "pipe lost 1 <nil>", "pipe lost 2 <nil>"}, middle)
	})
}

// A background grandchild that holds the child's pipes does not hold
// ProcessExited or Wait back; ConnectionLost waits for the pipes.
func TestSubprocess_GrandchildHoldsPipes(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		runNet(t, func(at *asyncio.T) error {
			p := newProcRecorder(at)
			// cat keeps stdin and stdout open after sh has exited.
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "exec 3<&0; cat <&3 3<&- & exit 0", WithStderr(DevNull))
			if err != nil {
				return err
			}
			if _, err := tr.(*subprocessTransport).wait(at); err != nil {
				return err
			}
			for !slices.Contains(p.log, "exited 0 true") {
				if err := asyncio.Sleep(at, 0); err != nil {
					return err
				}
			}
			expectLog(t, []string{"made", "exited 0 true"}, p.log)
			// Now the grandchild: it echoes, and ends with its stdin.
			in := tr.PipeTransport(0)
			in.Write([]byte("bye"))
			in.Close()
			if _, err := p.done.Await(at); err != nil {
				return err
			}
			expectLog(t, []string{"made", "exited 0 true", "pipe lost 0 <nil>", "data 1 bye", "pipe lost 1 <nil>", "lost <nil>"}, p.log)
			return nil
		})
	})
}

// A child killed by a signal has the negative signal number as return
// code, as in asyncio.
func TestSubprocess_KilledBySignal(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		runNet(t, func(at *asyncio.T) error {
			for _, stop := range []func(p *Process) error{(*Process).Kill, (*Process).Terminate} {
				p, err := CreateSubprocessExec(at, "sleep", []string{"1000"})
				if err != nil {
					return err
				}
				rc, ok := p.ReturnCode()
				got = append(got, fmt.Sprintf("running: %d %v", rc, ok))
				if err := stop(p); err != nil {
					return err
				}
				rc, err = p.Wait(at)
				got = append(got, fmt.Sprintf("wait: %d %v", rc, err))
			}
			return nil
		})
		expectLog(t, []string{"running: 0 false", "wait: -9 <nil>", "running: 0 false", "wait: -15 <nil>"}, got)
	})
}

// A program that does not exist: the error names it and matches
// fs.ErrNotExist (FileNotFoundError), and nothing is left behind (the
// pipes made for it are closed).
func TestSubprocess_ProgramNotFound(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		for _, prog := range []string{"no-such-program-ever", "/no/such/dir/prog"} {
			_, err := CreateSubprocessExec(at, prog, nil, WithStdin(Pipe), WithStdout(Pipe), WithStderr(Pipe))
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(fmt.Sprint(err), prog) {
				t.Errorf("%s: %v; want an error naming it that matches fs.ErrNotExist", prog, err)
			}
		}
		return nil
	})
}

// Bad arguments fail with a *ValueError naming the mistake before any
// child starts.
func TestSubprocess_BadInput(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		try := func(name string, opts ...Option) {
			_, err := CreateSubprocessExec(at, "true", nil, opts...)
			got = append(got, name+": "+describe(err))
		}
		try("stdin=STDOUT", WithStdin(Stdout))
		try("stdout=STDOUT", WithStdout(Stdout))
		try("nil file", WithStdout(File(nil)))
		try("limit", WithStreamLimit(0))
		try("WithCmd sets Stdout", WithCmd(func(c *exec.Cmd) { c.Stdout = os.Stdout }))
		_, _, err := SubprocessExec(at, nil, "true", nil)
		got = append(got, "nil factory: "+describe(err))
		_, err = CreateSubprocessExec(at, "", nil, WithStdout(Pipe))
		got = append(got, "empty program: "+describe(err))
		_, _, err = SubprocessExec(at, func() SubprocessProtocol { return newProcRecorder(at) }, "", []string{"x"})
		got = append(got, "empty program: "+describe(err))
		return nil
	})
	expectLog(t, []string{
		"stdin=STDOUT: ValueError stdin: Stdout (asyncio's STDOUT) is only for stderr",
		"stdout=STDOUT: ValueError stdout: Stdout (asyncio's STDOUT) is only for stderr",
		"nil file: ValueError stdout: File(nil)",
		"limit: ValueError Limit cannot be <= 0",
		"WithCmd sets Stdout: ValueError WithCmd: set the child's stdin, stdout and stderr with WithStdin, WithStdout and WithStderr",
		"nil factory: ValueError subprocess: nil protocol factory",
		"empty program: ValueError CreateSubprocessExec: program is empty",
		"empty program: ValueError SubprocessExec: program is empty",
	}, got)
}

// An empty shell command is no mistake: the shell runs it and exits 0, as
// in asyncio (an empty program for Exec is a *ValueError, above).
func TestSubprocess_EmptyShellCommand(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		proc, err := CreateSubprocessShell(at, "")
		if err != nil {
			return err
		}
		rc, err := proc.Wait(at)
		got = append(got, fmt.Sprintf("CreateSubprocessShell: %d %v", rc, err))
		p := newProcRecorder(at)
		if _, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, ""); err != nil {
			return err
		}
		if _, err := p.done.Await(at); err != nil {
			return err
		}
		got = append(got, "SubprocessShell: "+p.log[len(p.log)-2])
		return nil
	})
	expectLog(t, []string{"CreateSubprocessShell: 0 <nil>", "SubprocessShell: exited 0 true"}, got)
}

// Cancelling a task that waits for the child only stops the waiting: the
// child runs on, as in asyncio.
func TestSubprocess_CancelledWaitLeavesChildRunning(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(DevNull))
		if err != nil {
			return err
		}
		waiter := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) { return p.Wait(t) })
		if err := asyncio.Sleep(at, 0); err != nil { // the waiter is now suspended in Wait
			return err
		}
		waiter.Cancel()
		_, err = waiter.Await(at)
		_, exited := p.ReturnCode()
		got = append(got, fmt.Sprintf("waiter: %s; exited: %v; alive: %v", describe(err), exited, alive(p.Pid())))
		p.Stdin.Close() // cat ends with its input
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("wait: %d %v", rc, err))
		return nil
	})
	expectLog(t, []string{"waiter: cancelled; exited: false; alive: true", "wait: 0 <nil>"}, got)
}

// Cancelling Communicate stops the exchange; the child goes on.
func TestSubprocess_CancelledCommunicateLeavesChildRunning(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		// sleep holds stdout open, so Communicate waits for its EOF.
		p, err := CreateSubprocessShell(at, "exec sleep 1000", WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		comm := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) {
			out, _, err := p.Communicate(t, []byte("input"))
			return out, err
		})
		for range 3 { // Communicate starts, then its reader and writer
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		comm.Cancel()
		_, err = comm.Await(at)
		_, exited := p.ReturnCode()
		got = append(got, fmt.Sprintf("communicate: %s; exited: %v", describe(err), exited))
		p.Kill()
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("wait: %d %v", rc, err))
		return nil
	})
	expectLog(t, []string{"communicate: cancelled; exited: false", "wait: -9 <nil>"}, got)
}

// Close kills a child that still runs and closes its pipes (asyncio's
// BaseSubprocessTransport.close); the protocol then hears of each pipe,
// the exit and, last, ConnectionLost. ExtraInfo gives the *exec.Cmd.
func TestSubprocess_CloseKillsRunningChild(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var p *procRecorder
		var got []string
		runNet(t, func(at *asyncio.T) error {
			p = newProcRecorder(at)
			tr, _, err := SubprocessExec(at, func() SubprocessProtocol { return p }, "sleep", []string{"1000"})
			if err != nil {
				return err
			}
			cmd, _ := tr.ExtraInfo("subprocess").(*exec.Cmd)
			got = append(got, fmt.Sprintf("cmd pid matches: %v; closing: %v", cmd != nil && cmd.Process.Pid == tr.Pid(), tr.IsClosing()))
			tr.Close()
			tr.Close() // again: nothing more
			got = append(got, fmt.Sprintf("closing: %v", tr.IsClosing()))
			_, err = p.done.Await(at)
			return err
		})
		expectLog(t, []string{"cmd pid matches: true; closing: false", "closing: true"}, got)
		n := len(p.log)
		if n < 2 || p.log[n-2] != "exited -9 true" || p.log[n-1] != "lost <nil>" {
			t.Fatalf("log %q: want ... exited -9 true, lost <nil>", p.log)
		}
		middle := slices.Clone(p.log[1 : n-2])
		slices.Sort(middle)
		expectLog(t, []string{"pipe lost 0 <nil>", "pipe lost 1 <nil>", "pipe lost 2 <nil>"}, middle)
	})
}

// A protocol factory that panics does so before the child starts: the
// call returns the *PanicError and nothing is left running.
func TestSubprocess_FactoryPanicStartsNothing(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		task := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			_, _, err := SubprocessExec(t, func() SubprocessProtocol { panic("no protocol") }, "sleep", []string{"1000"})
			return struct{}{}, err
		})
		_, err := task.Await(at)
		var pe *asyncio.PanicError
		got = append(got, fmt.Sprintf("panic: %v; children: %d", errors.As(err, &pe) && pe.Value == "no protocol", len(childProcesses())))
		return nil
	})
	expectLog(t, []string{"panic: true; children: 0"}, got)
}

// panicProc is a procRecorder whose callback named panicIn panics, each
// time it is called, once it has recorded the call.
type panicProc struct {
	*procRecorder
	panicIn string
}

func (p *panicProc) maybePanic(method string) {
	if p.panicIn == method {
		panic("boom in " + method)
	}
}

func (p *panicProc) ConnectionMade(tr SubprocessTransport) {
	p.procRecorder.ConnectionMade(tr)
	p.maybePanic("ConnectionMade")
}

func (p *panicProc) PipeDataReceived(fd int, d []byte) {
	p.procRecorder.PipeDataReceived(fd, d)
	p.maybePanic("PipeDataReceived")
}

func (p *panicProc) PipeConnectionLost(fd int, err error) {
	p.procRecorder.PipeConnectionLost(fd, err)
	p.maybePanic("PipeConnectionLost")
}

func (p *panicProc) ProcessExited() {
	p.procRecorder.ProcessExited()
	p.maybePanic("ProcessExited")
}

func (p *panicProc) ConnectionLost(err error) {
	p.procRecorder.ConnectionLost(err)
	p.maybePanic("ConnectionLost")
}

// panicReports records what the loop's exception handler gets as
// "message: error" and resolves reached once n reports have come.
type panicReports struct {
	got     []string
	n       int
	reached *asyncio.Future[struct{}]
}

func recordReports(at *asyncio.T, n int) *panicReports {
	r := &panicReports{n: n, reached: asyncio.NewFuture[struct{}](at)}
	at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		r.got = append(r.got, fmt.Sprintf("%s: %v", c.Message, c.Err))
		if len(r.got) == r.n {
			r.reached.SetResult(struct{}{})
		}
	})
	return r
}

// doneWithin reports whether f is done after at most n rounds of the
// ready queue: what the test waits for was scheduled already, so it has
// run by then unless it never will.
func doneWithin(at *asyncio.T, f interface{ Done() bool }, n int) (bool, error) {
	for range n {
		if f.Done() {
			return true, nil
		}
		if err := settle(at); err != nil {
			return false, err
		}
	}
	return f.Done(), nil
}

const procType = "github.com/go-asyncio/asyncio/aio.(*panicProc)."

// A panic in ConnectionMade is reported through the exception handler,
// named after the protocol's method, and SubprocessExec still returns the
// transport with the child running, as asyncio's subprocess_exec does
// ("Exception in callback P.connection_made()"): it used to wait forever.
func TestSubprocess_ConnectionMadePanicReturnsTransport(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		reports := recordReports(at, 1)
		p := &panicProc{procRecorder: newProcRecorder(at), panicIn: "ConnectionMade"}
		start := asyncio.CreateTask(at, func(t *asyncio.T) (SubprocessTransport, error) {
			tr, _, err := SubprocessExec(t, func() SubprocessProtocol { return p }, "sleep", []string{"1000"})
			return tr, err
		})
		if _, err := reports.reached.Await(at); err != nil {
			return err
		}
		got = append(got, reports.got...)
		done, err := doneWithin(at, start, 10)
		if err != nil {
			return err
		}
		if !done {
			start.Cancel() // kills and reaps the child
			_, err := start.Await(at)
			got = append(got, "SubprocessExec still waiting; cancelled: "+describe(err))
			return nil
		}
		tr, err := start.Await(at)
		got = append(got, fmt.Sprintf("returned: %s; running: %v", describe(err), alive(tr.Pid())))
		tr.Close()
		_, err = p.done.Await(at)
		return err
	})
	expectLog(t, []string{
		"Exception in callback " + procType + "ConnectionMade: asyncio: panic: boom in ConnectionMade",
		"returned: <nil>; running: true",
	}, got)
}

// A panic in PipeConnectionLost is reported, named after the protocol's
// method, for each pipe, and the transport still finishes: ConnectionLost
// comes, as in asyncio. It used to skip the check that finishes the
// transport, so ConnectionLost never came.
func TestSubprocess_PipeConnectionLostPanicStillFinishes(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		runNet(t, func(at *asyncio.T) error {
			reports := recordReports(at, 3) // one per pipe
			p := &panicProc{procRecorder: newProcRecorder(at), panicIn: "PipeConnectionLost"}
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "exit 3")
			if err != nil {
				return err
			}
			if _, err := tr.(*subprocessTransport).wait(at); err != nil {
				return err
			}
			if _, err := reports.reached.Await(at); err != nil {
				return err
			}
			slices.Sort(reports.got)
			got = append(got, reports.got...)
			done, err := doneWithin(at, p.done, 10)
			if err != nil {
				return err
			}
			rc, _ := tr.ReturnCode()
			got = append(got, fmt.Sprintf("ConnectionLost: %v; return code %d", done, rc))
			return nil
		})
		msg := "Exception in callback " + procType + "PipeConnectionLost: asyncio: panic: boom in PipeConnectionLost"
		expectLog(t, []string{msg, msg, msg, "ConnectionLost: true; return code 3"}, got)
	})
}

// A panic in PipeDataReceived is reported, named after the protocol's
// method, and the pipe goes on reading: all the output arrives and the
// child exits normally, as in asyncio. It used to be a fatal error of the
// pipe transport: stdout was closed and the child died of SIGPIPE on its
// next write.
func TestSubprocess_PipeDataReceivedPanicKeepsReading(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		runNet(t, func(at *asyncio.T) error {
			reports := recordReports(at, 1)
			p := &panicProc{procRecorder: newProcRecorder(at), panicIn: "PipeDataReceived"}
			// The child writes again only once told, after the first panic.
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "printf a; read x; printf b; read x; printf c", WithStderr(DevNull))
			if err != nil {
				return err
			}
			if _, err := reports.reached.Await(at); err != nil {
				return err
			}
			got = append(got, reports.got[0])
			in := tr.PipeTransport(0)
			in.Write([]byte("1\n2\n"))
			in.Close()
			if _, err := p.done.Await(at); err != nil {
				return err
			}
			var out strings.Builder
			for _, e := range p.log {
				if s, ok := strings.CutPrefix(e, "data 1 "); ok {
					out.WriteString(s)
				} else if strings.HasPrefix(e, "pipe lost 1") || strings.HasPrefix(e, "exited") {
					got = append(got, e)
				}
			}
			got = append(got, "stdout: "+out.String())
			return nil
		})
		expectLog(t, []string{
			"Exception in callback " + procType + "PipeDataReceived: asyncio: panic: boom in PipeDataReceived",
			"pipe lost 1 <nil>", "exited 0 true", "stdout: abc",
		}, got)
	})
}

// A panic in ProcessExited or ConnectionLost is reported named after the
// protocol's method, as asyncio names the protocol's bound method, not
// after the package's closure that called it; the transport is finished
// all the same (ConnectionLost comes after a panicking ProcessExited, and
// a finished transport's Kill fails with ProcessLookupError).
func TestSubprocess_CallbackPanicNamesProtocolMethod(t *testing.T) {
	for _, method := range []string{"ProcessExited", "ConnectionLost"} {
		t.Run(method, func(t *testing.T) {
			clean(t)
			var got []string
			runNet(t, func(at *asyncio.T) error {
				reports := recordReports(at, 1)
				p := &panicProc{procRecorder: newProcRecorder(at), panicIn: method}
				tr, _, err := SubprocessExec(at, func() SubprocessProtocol { return p }, "true", nil)
				if err != nil {
					return err
				}
				if _, err := p.done.Await(at); err != nil {
					return err
				}
				if _, err := reports.reached.Await(at); err != nil {
					return err
				}
				got = append(got, reports.got...)
				got = append(got, "kill: ESRCH "+fmt.Sprint(errors.Is(tr.Kill(), syscall.ESRCH)))
				return nil
			})
			expectLog(t, []string{
				"Exception in callback " + procType + method + ": asyncio: panic: boom in " + method,
				"kill: ESRCH true",
			}, got)
		})
	}
}

// Protocols are named as the loop names the methods it runs: pointer and
// value receivers, and a protocol type with no name.
func TestSubprocess_MethodName(t *testing.T) {
	type anon = struct{ BaseSubprocessProtocol }
	expectLog(t, []string{
		"github.com/go-asyncio/asyncio/aio.(*procRecorder).ProcessExited",
		"github.com/go-asyncio/asyncio/aio.BaseSubprocessProtocol.ProcessExited",
		"struct { aio.BaseSubprocessProtocol }.ProcessExited",
		"*struct { aio.BaseSubprocessProtocol }.ProcessExited",
	}, []string{
		methodName(&procRecorder{}, "ProcessExited"),
		methodName(BaseSubprocessProtocol{}, "ProcessExited"),
		methodName(anon{}, "ProcessExited"),
		methodName(&anon{}, "ProcessExited"),
	})
}
