//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Hostile use of subprocesses, pipes and datagram endpoints: each test
// checks what asyncio (CPython 3.13) does, or what the package's docs
// promise, and ends with clean (no child, zombie, descriptor or goroutine
// left).

// hangGuard is the real-time bound of a wait that must not hang; it is
// never used to synchronise.
const hangGuard = 10 * time.Second

// guardedWait waits for p's exit under the hang guard.
func guardedWait(at *asyncio.T, p *Process) (int, error) {
	var rc int
	err := asyncio.Timeout(at, hangGuard, func(*asyncio.TimeoutScope) error {
		var err error
		rc, err = p.Wait(at)
		return err
	})
	return rc, err
}

// guardedAwait awaits f under the hang guard.
func guardedAwait[V any](at *asyncio.T, f asyncio.AwaitableOf[V]) (V, error) {
	var v V
	err := asyncio.Timeout(at, hangGuard, func(*asyncio.TimeoutScope) error {
		var err error
		v, err = f.Await(at)
		return err
	})
	return v, err
}

// settleN runs settle n times: whatever a chain of n callbacks scheduled
// one after another has run by then.
func settleN(at *asyncio.T, n int) error {
	for range n {
		if err := settle(at); err != nil {
			return err
		}
	}
	return nil
}

// Communicate with megabytes going in and coming out of stdout and
// stderr at once: a child that fills its output pipes while its input is
// still being written must not deadlock the exchange (asyncio's
// communicate gathers the three).
func TestProcEdge_CommunicateBigInputAndOutputsAtOnce(t *testing.T) {
	clean(t)
	const in, errN = 4 << 20, 3 << 20
	input := bytes.Repeat([]byte("0123456789abcdef"), in/16)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		// stderr floods while cat echoes stdin to stdout.
		p, err := CreateSubprocessShell(at, fmt.Sprintf("head -c %d /dev/zero >&2 & cat; wait", errN),
			WithStdin(Pipe), WithStdout(Pipe), WithStderr(Pipe))
		if err != nil {
			return err
		}
		var out, errOut []byte
		err = asyncio.Timeout(at, hangGuard, func(*asyncio.TimeoutScope) error {
			var err error
			out, errOut, err = p.Communicate(at, input)
			return err
		})
		rc, ok := p.ReturnCode()
		got = append(got, fmt.Sprintf("err %s; stdout equal %v (%d); stderr %d; rc %d %v", describe(err), bytes.Equal(out, input), len(out), len(errOut), rc, ok))
		return nil
	})
	expectLog(t, []string{fmt.Sprintf("err <nil>; stdout equal true (%d); stderr %d; rc 0 true", in, errN)}, got)
}

// A child that closes its stdout early and goes on running: the reader
// sees EOF while the child still runs (no return code yet), and the
// child's exit comes later with its own status.
func TestProcEdge_ChildClosesStdoutEarlyButRuns(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessShell(at, "echo hi; exec >&-; read x; exit 4", WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		var out []byte
		err = asyncio.Timeout(at, hangGuard, func(*asyncio.TimeoutScope) error {
			var err error
			out, err = p.Stdout.Read(at, -1)
			return err
		})
		_, exited := p.ReturnCode()
		got = append(got, fmt.Sprintf("stdout %q %s; eof %v; exited %v; alive %v", out, describe(err), p.Stdout.AtEOF(), exited, alive(p.Pid())))
		p.Stdin.Write([]byte("go\n"))
		p.Stdin.Close()
		rc, err := guardedWait(at, p)
		got = append(got, fmt.Sprintf("wait %d %s", rc, describe(err)))
		return nil
	})
	expectLog(t, []string{`stdout "hi\n" <nil>; eof true; exited false; alive true`, "wait 4 <nil>"}, got)
}

// exitRecorder is a procRecorder that also resolves exited at
// ProcessExited.
type exitRecorder struct {
	*procRecorder
	exited *asyncio.Future[struct{}]
}

func (p exitRecorder) ProcessExited() {
	p.procRecorder.ProcessExited()
	p.exited.SetResult(struct{}{})
}

// Kill, Terminate and SendSignal once the child has exited but before the
// transport has finished do nothing and return nil (asyncio's send_signal
// swallows the ProcessLookupError of os.kill on the reaped pid); once the
// transport has finished (ConnectionLost) each fails with
// os.ErrProcessDone / ESRCH (base_subprocess.py's _check_proc raises
// ProcessLookupError: _call_connection_lost set _proc to None).
// ReturnCode is (0, false) before the exit and the status after.
//
// The child's exit closes its end of stdin, and the stdin transport
// closes itself on that hang-up (unix_events.py's
// _UnixWritePipeTransport._read_ready), so a child with no other pipe
// finishes its transport at once: there is no "exited, not finished"
// state to signal in. A paused stdout pipe keeps the transport
// unfinished. CPython 3.13, the same two children:
//
//	stdin only, at connection_lost: [('pipe lost', 0), 'exited', 'lost'];
//	  kill() -> ProcessLookupError (already so at process_exited)
//	stdout paused, at process_exited: [('pipe lost', 0), 'exited'];
//	  kill(), terminate(), send_signal(SIGHUP) -> None
//	after resume_reading, at connection_lost: ProcessLookupError, each
func TestProcEdge_SignalsAfterExitAndFinish(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		signals := func(tr SubprocessTransport) []error {
			return []error{tr.Kill(), tr.Terminate(), tr.SendSignal(syscall.SIGHUP)}
		}
		finished := func(what string, tr SubprocessTransport) {
			for _, err := range signals(tr) {
				got = append(got, fmt.Sprintf("%s: ErrProcessDone %v ESRCH %v", what, errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH)))
			}
			rc, ok := tr.ReturnCode()
			got = append(got, fmt.Sprintf("%s rc: %d %v", what, rc, ok))
		}
		runNet(t, func(at *asyncio.T) error {
			// Only a stdin pipe: the exit finishes the transport.
			p := newProcRecorder(at)
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "read x; exit 6", WithStdout(DevNull), WithStderr(DevNull))
			if err != nil {
				return err
			}
			rc, ok := tr.ReturnCode()
			got = append(got, fmt.Sprintf("running: %d %v", rc, ok))
			tr.PipeTransport(0).Write([]byte("\n"))
			if _, err := guardedAwait[struct{}](at, p.done); err != nil {
				return err
			}
			got = append(got, "stdin only: "+strings.Join(p.log, ", "))
			finished("stdin only", tr)

			// A paused stdout pipe: exited, not finished.
			q := exitRecorder{newProcRecorder(at), asyncio.NewFuture[struct{}](at)}
			tr, _, err = SubprocessShell(at, func() SubprocessProtocol { return q }, "read x; printf abc; exit 6", WithStderr(DevNull))
			if err != nil {
				return err
			}
			out := tr.PipeTransport(1)
			out.PauseReading()
			tr.PipeTransport(0).Write([]byte("\n"))
			if _, err := guardedAwait[struct{}](at, q.exited); err != nil {
				return err
			}
			rc, ok = tr.ReturnCode()
			errs := signals(tr)
			got = append(got, fmt.Sprintf("paused, exited: %s; rc %d %v; kill %s, terminate %s, hup %s",
				strings.Join(q.log, ", "), rc, ok, describe(errs[0]), describe(errs[1]), describe(errs[2])))
			out.ResumeReading()
			if _, err := guardedAwait[struct{}](at, q.done); err != nil {
				return err
			}
			got = append(got, "resumed: "+strings.Join(q.log, ", "))
			finished("resumed", tr)
			return nil
		})
		expectLog(t, []string{
			"running: 0 false",
			"stdin only: made, pipe lost 0 <nil>, exited 6 true, lost <nil>",
			"stdin only: ErrProcessDone true ESRCH true",
			"stdin only: ErrProcessDone true ESRCH true",
			"stdin only: ErrProcessDone true ESRCH true",
			"stdin only rc: 6 true",
			"paused, exited: made, pipe lost 0 <nil>, exited 6 true; rc 6 true; kill <nil>, terminate <nil>, hup <nil>",
			"resumed: made, pipe lost 0 <nil>, exited 6 true, data 1 abc, pipe lost 1 <nil>, lost <nil>",
			"resumed: ErrProcessDone true ESRCH true",
			"resumed: ErrProcessDone true ESRCH true",
			"resumed: ErrProcessDone true ESRCH true",
			"resumed rc: 6 true",
		}, got)
	})
}

// Several tasks wait for one child; one of them is cancelled: only it
// stops, the others and a later Wait get the status.
func TestProcEdge_WaitCancelledThenWaitedAgain(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		runNet(t, func(at *asyncio.T) error {
			p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(DevNull))
			if err != nil {
				return err
			}
			w1 := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) { return p.Wait(t) })
			w2 := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) { return p.Wait(t) })
			w3 := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) { return p.Wait(t) })
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
			w2.Cancel()
			_, err = w2.Await(at)
			got = append(got, "w2: "+describe(err))
			// Cancel again and wait again, from the same task.
			w4 := asyncio.CreateTask(at, func(t *asyncio.T) (int, error) { return p.Wait(t) })
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
			w4.Cancel()
			_, err = w4.Await(at)
			got = append(got, "w4: "+describe(err))
			_, exited := p.ReturnCode()
			got = append(got, fmt.Sprintf("exited %v", exited))
			p.Stdin.Close()
			rc, err := guardedWait(at, p)
			got = append(got, fmt.Sprintf("again: %d %s", rc, describe(err)))
			for _, w := range []*asyncio.Task[int]{w1, w3} {
				rc, err := w.Await(at)
				got = append(got, fmt.Sprintf("other: %d %s", rc, describe(err)))
			}
			rc, err = p.Wait(at) // after the exit: at once
			got = append(got, fmt.Sprintf("late: %d %s", rc, describe(err)))
			return nil
		})
		expectLog(t, []string{"w2: cancelled", "w4: cancelled", "exited false", "again: 0 <nil>", "other: 0 <nil>", "other: 0 <nil>", "late: 0 <nil>"}, got)
	})
}

// Writing to the stdin of a child that has exited: the write is dropped
// (nil) and Drain fails with ConnectionResetError, as CPython 3.13 does:
//
//	p = await create_subprocess_exec('true', stdin=PIPE); await p.wait()
//	p.stdin.write(b'x'*10); await p.stdin.drain()
//	-> ConnectionResetError: Connection lost
//
// A second Communicate, with or without input, returns empty output and
// no error (CPython: (b”, None) both times).
func TestProcEdge_StdinWriteAfterChildExited(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "true", nil, WithStdin(Pipe))
		if err != nil {
			return err
		}
		if _, err := guardedWait(at, p); err != nil {
			return err
		}
		if err := settleN(at, 3); err != nil {
			return err
		}
		got = append(got, "write: "+describe(p.Stdin.Write(bytes.Repeat([]byte("x"), 10))))
		err = p.Stdin.Drain(at)
		got = append(got, fmt.Sprintf("drain: %s (ECONNRESET %v)", describe(err), errors.Is(err, syscall.ECONNRESET)))

		q, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		for _, in := range []string{"one", "two", ""} {
			var input []byte
			if in != "" {
				input = []byte(in)
			}
			out, errOut, err := q.Communicate(at, input)
			got = append(got, fmt.Sprintf("communicate %q: %q %v %s", in, out, errOut == nil, describe(err)))
		}
		return nil
	})
	expectLog(t, []string{
		"write: <nil>",
		"drain: ECONNRESET (ECONNRESET true)",
		`communicate "one": "one" true <nil>`,
		`communicate "two": "" true <nil>`,
		`communicate "": "" true <nil>`,
	}, got)
}

// A task blocked reading stdout while the child is killed: the read
// returns what is left, then EOF (empty, no error), and the status is -9.
func TestProcEdge_ReadStdoutWhileKilled(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var got []string
		runNet(t, func(at *asyncio.T) error {
			p, err := CreateSubprocessShell(at, "echo start; exec sleep 1000", WithStdout(Pipe))
			if err != nil {
				return err
			}
			line, err := guardedAwait[[]byte](at, asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return p.Stdout.ReadLine(t) }))
			got = append(got, fmt.Sprintf("line %q %s", line, describe(err)))
			reader := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return p.Stdout.Read(t, -1) })
			if err := asyncio.Sleep(at, 0); err != nil { // the reader is suspended
				return err
			}
			got = append(got, "kill: "+describe(p.Kill()))
			rest, err := guardedAwait[[]byte](at, reader)
			got = append(got, fmt.Sprintf("rest %q %s; eof %v", rest, describe(err), p.Stdout.AtEOF()))
			rc, err := guardedWait(at, p)
			got = append(got, fmt.Sprintf("wait %d %s", rc, describe(err)))
			return nil
		})
		expectLog(t, []string{`line "start\n" <nil>`, "kill: <nil>", `rest "" <nil>; eof true`, "wait -9 <nil>"}, got)
	})
}

// 100 children at once, no semaphore, each with its own input through
// cat and a distinct exit status.
func TestProcEdge_ManyChildrenAtOnce(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		const n = 100
		bad := make([]string, 0)
		runNet(t, func(at *asyncio.T) error {
			return asyncio.Timeout(at, 4*hangGuard, func(*asyncio.TimeoutScope) error {
				return asyncio.TaskGroup(at, func(g *asyncio.Group) error {
					for i := range n {
						if _, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
							p, err := CreateSubprocessShell(t, fmt.Sprintf("cat; exit %d", i%50), WithStdin(Pipe), WithStdout(Pipe))
							if err != nil {
								return struct{}{}, err
							}
							in := []byte(strings.Repeat(strconv.Itoa(i), 1000))
							out, _, err := p.Communicate(t, in)
							if err != nil {
								return struct{}{}, err
							}
							if rc, _ := p.ReturnCode(); rc != i%50 || !bytes.Equal(out, in) {
								bad = append(bad, fmt.Sprintf("child %d: rc %d, output equal %v", i, rc, bytes.Equal(out, in)))
							}
							return struct{}{}, nil
						}); err != nil {
							return err
						}
					}
					return nil
				})
			})
		})
		expectLog(t, []string{}, bad)
	})
}

// floodProto counts what a subprocess's stdout brings. While feeding, it
// asks the grandchild for one line more (a line on req) at each chunk it
// gets, and waits, on the loop itself, until that line is in the pipe (or
// the pipe hangs up): every read of the pipe finds data, as with a writer
// that is always faster than the reader, but without a race.
type floodProto struct {
	BaseSubprocessProtocol
	req     *os.File // the grandchild answers each line with one
	out     int      // the stdout pipe's descriptor
	feeding bool
	n       int
	fed     *asyncio.Future[struct{}] // the first chunk
	exited  *asyncio.Future[struct{}]
	done    *asyncio.Future[struct{}]
}

func (p *floodProto) ConnectionMade(tr SubprocessTransport) {
	p.out, _ = fileFD(tr.PipeTransport(1).ExtraInfo("pipe").(*os.File))
}

func (p *floodProto) PipeDataReceived(fd int, d []byte) {
	p.n += len(d)
	if !p.fed.Done() {
		p.fed.SetResult(struct{}{})
	}
	if !p.feeding {
		return
	}
	if _, err := p.req.Write([]byte("\n")); err != nil {
		p.feeding = false // the grandchild is gone
		return
	}
	fds := []unix.PollFd{{Fd: int32(p.out), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}
func (p *floodProto) ProcessExited()       { p.exited.SetResult(struct{}{}) }
func (p *floodProto) ConnectionLost(error) { p.done.SetResult(struct{}{}) }

// A background grandchild that keeps the child's stdout pipe full does
// not hold up the child's Wait and ProcessExited (subprocess.go: "a pipe
// that another process still holds ... is not waited for: ProcessExited
// never hangs on it"). The read of the pipes at the exit takes what they
// held then, not what the grandchild writes after; asyncio itself only
// ever reads a pipe once per readiness (unix_events.py's
// _UnixReadPipeTransport._read_ready), so its loop never sticks on one.
// It used to read until a read found nothing: here, for ever (the loop
// stuck in the callback, not even the test's timeout could run), until
// the watchdog killed the grandchild.
func TestProcEdge_GrandchildFloodingPipeDoesNotHoldWait(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var fired atomic.Bool
		var got []string
		reqR, reqW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer reqW.Close()
		runNet(t, func(at *asyncio.T) error {
			p := &floodProto{req: reqW, feeding: true, fed: asyncio.NewFuture[struct{}](at),
				exited: asyncio.NewFuture[struct{}](at), done: asyncio.NewFuture[struct{}](at)}
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p },
				"(while read x <&3; do echo more; done) & read x; exit 3", WithStderr(DevNull),
				WithCmd(func(c *exec.Cmd) {
					c.ExtraFiles = []*os.File{reqR}
					c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				}))
			reqR.Close() // the grandchild's now: its end is the end of the requests
			if err != nil {
				return err
			}
			pgid := tr.Pid()
			// The hang guard: the loop itself may be stuck, so a goroutine
			// kills the grandchild (the child's process group).
			stop := make(chan struct{})
			watchdogDone := make(chan struct{})
			go func() {
				defer close(watchdogDone)
				select {
				case <-stop:
				case <-time.After(hangGuard):
					fired.Store(true)
					unix.Kill(-pgid, syscall.SIGKILL)
				}
			}()
			//asynciovet:ignore blockingcall the hang guard's goroutine returns at once once stop is closed
			defer func() { close(stop); <-watchdogDone }()
			defer unix.Kill(-pgid, syscall.SIGKILL)
			if _, err := reqW.Write([]byte("\n")); err != nil { // the first line
				return err
			}
			if _, err := guardedAwait[struct{}](at, p.fed); err != nil {
				return err
			}
			tr.PipeTransport(0).Write([]byte("\n")) // the child exits, mid-flood
			rc, err := tr.(*subprocessTransport).wait(at)
			got = append(got, fmt.Sprintf("wait %d %s; before the watchdog: %v", rc, describe(err), !fired.Load()))
			_, err = guardedAwait[struct{}](at, p.exited)
			got = append(got, fmt.Sprintf("exited %s; before the watchdog: %v; still feeding: %v", describe(err), !fired.Load(), p.feeding))
			p.feeding = false
			unix.Kill(-pgid, syscall.SIGKILL) // the grandchild ends; so does the pipe
			_, err = guardedAwait[struct{}](at, p.done)
			got = append(got, fmt.Sprintf("lost %s; read some: %v", describe(err), p.n > 0))
			return nil
		})
		expectLog(t, []string{
			"wait 3 <nil>; before the watchdog: true",
			"exited <nil>; before the watchdog: true; still feeding: true",
			"lost <nil>; read some: true",
		}, got)
	})
}

// A stdout pipe whose reading is paused is not waited for (README, "Where
// Go differs", the process_exited row):
// ProcessExited comes with the output still in the pipe; resuming
// delivers it, then the pipe's end, then ConnectionLost.
func TestProcEdge_PausedStdoutPipeNotWaitedFor(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var p exitRecorder
		runNet(t, func(at *asyncio.T) error {
			p = exitRecorder{newProcRecorder(at), asyncio.NewFuture[struct{}](at)}
			tr, _, err := SubprocessShell(at, func() SubprocessProtocol { return p }, "read x; printf abc; exit 5", WithStderr(DevNull))
			if err != nil {
				return err
			}
			out := tr.PipeTransport(1)
			out.PauseReading()
			in := tr.PipeTransport(0)
			in.Write([]byte("go\n"))
			in.Close()
			if _, err := guardedAwait[struct{}](at, p.exited); err != nil {
				return err
			}
			// Nothing more comes while the pipe is paused.
			if err := settleN(at, 3); err != nil {
				return err
			}
			p.add("resume (reading %v)", out.IsReading())
			out.ResumeReading()
			_, err = guardedAwait[struct{}](at, p.done)
			return err
		})
		expectLog(t, []string{"made", "pipe lost 0 <nil>", "exited 5 true", "resume (reading false)", "data 1 abc", "pipe lost 1 <nil>", "lost <nil>"}, p.log)
	})
}

// The loop closes while a child runs, a task is blocked in Communicate
// and a grandchild holds the child's pipes: the child is killed and
// reaped (no zombie), every pipe is closed (no descriptor left, although
// the grandchild still holds the other ends), and the task is unwound
// (README, "Where Go differs": the loop's Close kills and reaps every child).
func TestProcEdge_LoopCloseWithGrandchildHoldingPipes(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var p *Process
		var grandchild int
		var got []string
		rn := asyncio.NewRunner()
		_, err := asyncio.RunWith(rn, func(at *asyncio.T) (struct{}, error) {
			var err error
			p, err = CreateSubprocessShell(at, "sleep 1000 & echo $!; exec sleep 1000",
				WithStdin(Pipe), WithStdout(Pipe), WithStderr(Pipe))
			if err != nil {
				return struct{}{}, err
			}
			line, err := guardedAwait[[]byte](at, asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return p.Stdout.ReadLine(t) }))
			if err != nil {
				return struct{}{}, err
			}
			grandchild, _ = strconv.Atoi(strings.TrimSpace(string(line)))
			//asynciovet:ignore unawaitedtask left blocked in Communicate on purpose: the runner's Close must unwind it
			asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
				_, _, err := p.Communicate(t, []byte("never read"))
				return struct{}{}, err
			})
			return struct{}{}, asyncio.Sleep(at, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		if grandchild <= 0 {
			t.Fatalf("no grandchild pid")
		}
		defer unix.Kill(grandchild, syscall.SIGKILL)
		if err := rn.Close(); err != nil {
			t.Fatal(err)
		}
		rc, ok := p.ReturnCode()
		got = append(got, fmt.Sprintf("child exists: %v; rc %d %v; grandchild alive: %v", alive(p.Pid()), rc, ok, alive(grandchild)))
		expectLog(t, []string{"child exists: false; rc -9 true; grandchild alive: true"}, got)
	})
}

// connect_read_pipe with pause and resume: a paused pipe delivers
// nothing, not even the EOF its writer's close left; ResumeReading
// delivers the data, EOFReceived and ConnectionLost(nil); pausing or
// resuming once the pipe is done does nothing (asyncio's is_reading
// checks).
func TestProcEdge_ReadPipePauseResumeAcrossEOF(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := newStreamRecorder(at, "read", &log)
		tr, _, err := ConnectReadPipe(at, func() Protocol { return p }, r)
		if err != nil {
			return err
		}
		tr.PauseReading()
		tr.PauseReading() // twice: nothing more
		w.Write([]byte("held"))
		w.Close()
		if err := settleN(at, 5); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("paused: reading %v closing %v", tr.IsReading(), tr.IsClosing()))
		tr.ResumeReading()
		tr.ResumeReading()
		if _, err := guardedAwait[error](at, p.lost); err != nil {
			return err
		}
		tr.PauseReading()
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("done: reading %v closing %v", tr.IsReading(), tr.IsClosing()))
		return settleN(at, 2)
	})
	expectLog(t, []string{"read:made", "paused: reading false closing false", "read:data held", "read:eof", "read:lost <nil>", "done: reading false closing true"}, log)
}

// connect_write_pipe and connect_read_pipe on the two ends of one pipe,
// on one loop: a megabyte is buffered (the protocol is paused, then
// resumed as it flushes), WriteEOF closes the pipe only once it is
// flushed, writes after it are dropped (nil), and the reader gets every
// byte, then EOF. CPython 3.13, the same calls:
//
//	['read:made', 'write:made', 'write:pause writing', 'buffered True',
//	 'closing True', 'write:resume writing', 'write:lost None',
//	 'read:eof', 'read:lost None'] 1048576
//
// The write dropped while closing used to count as the loss (connLost),
// so the flush never called ConnectionLost and never closed the pipe.
func TestProcEdge_WritePipeEOFAfterFlush(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	const n = 1 << 20
	var log []string
	runNet(t, func(at *asyncio.T) error {
		var rn int
		rp := newStreamRecorder(at, "read", &log)
		rp.onData = func(_ *streamRecorder, d []byte) { rn += len(d) }
		if _, _, err := ConnectReadPipe(at, func() Protocol { return rp }, r); err != nil {
			return err
		}
		wp := newStreamRecorder(at, "write", &log)
		wtr, _, err := ConnectWritePipe(at, func() Protocol { return wp }, w)
		if err != nil {
			return err
		}
		wtr.Write(bytes.Repeat([]byte("z"), n))
		log = append(log, fmt.Sprintf("buffered %v; can write EOF %v", wtr.WriteBufferSize() > 0, wtr.CanWriteEOF()))
		log = append(log, "write eof: "+describe(wtr.WriteEOF()))
		log = append(log, fmt.Sprintf("closing %v; write after: %s", wtr.IsClosing(), describe(wtr.Write([]byte("late")))))
		if _, err := guardedAwait[error](at, rp.lost); err != nil {
			return err
		}
		if _, err := guardedAwait[error](at, wp.lost); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("read %d", rn))
		return nil
	})
	// The writer's ConnectionLost closes the pipe, so the reader's EOF
	// comes after it.
	expectLog(t, []string{"read:made", "write:made", "write:pause writing",
		"buffered true; can write EOF true", "write eof: <nil>", "closing true; write after: <nil>",
		"write:resume writing", "write:lost <nil>", "read:eof", "read:lost <nil>", fmt.Sprintf("read %d", n)}, log)
}

// A write pipe closed with data buffered, a write dropped after it, and
// then the reader goes away before the buffer is flushed: ConnectionLost
// with EPIPE (asyncio's BrokenPipeError from _write_ready). CPython 3.13:
//
//	tr.write(b'z'*(1<<20)); tr.close(); tr.write(b'late'); reader.close()
//	-> ['write:made', 'write:pause writing', 'write:lost BrokenPipeError()']
//
// The dropped write used to count as the loss here too, and the write
// error then closed nothing.
func TestProcEdge_WritePipeReaderGoneWhileFlushing(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		wp := newStreamRecorder(at, "write", &log)
		wtr, _, err := ConnectWritePipe(at, func() Protocol { return wp }, w)
		if err != nil {
			return err
		}
		wtr.Write(bytes.Repeat([]byte("z"), 1<<20))
		wtr.Close()
		log = append(log, fmt.Sprintf("closing %v; buffered %v; write after: %s", wtr.IsClosing(), wtr.WriteBufferSize() > 0, describe(wtr.Write([]byte("late")))))
		r.Close()
		_, err = guardedAwait[error](at, wp.lost)
		return err
	})
	expectLog(t, []string{"write:made", "write:pause writing", "closing true; buffered true; write after: <nil>", "write:lost syscall=write EPIPE"}, log)
}

// connect_write_pipe on a pipe whose reader is already gone: the
// transport sees the hang-up by itself, without a write, and closes with
// ConnectionLost(nil) (asyncio's _read_ready with an empty buffer).
func TestProcEdge_WritePipeReaderGoneBeforeConnect(t *testing.T) {
	clean(t)
	r, w := osPipe(t)
	r.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		p := newStreamRecorder(at, "write", &log)
		tr, _, err := ConnectWritePipe(at, func() Protocol { return p }, w)
		if err != nil {
			return err
		}
		if _, err := guardedAwait[error](at, p.lost); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("closing %v; write after: %s", tr.IsClosing(), describe(tr.Write([]byte("x")))))
		return nil
	})
	expectLog(t, []string{"write:made", "write:lost <nil>", "closing true; write after: <nil>"}, log)
}

// A datagram too large for UDP is an error for the protocol
// (ErrorReceived, EMSGSIZE), not for the endpoint, which stays open; an
// empty datagram is sent as one. CPython 3.13:
//
//	tr.sendto(b'x'*70000); tr.sendto(b''); tr.sendto(b'ok')
//	-> client [('err', 'OSError', 90)] closing False; server [('dg', 0), ('dg', 2)]
//
// The test closes both endpoints and waits for each ConnectionLost (a
// closed datagram transport calls connection_lost(None) soon after, as
// selector_events.py's _SelectorTransport.close schedules it): the log
// ends with them.
func TestProcEdge_DatagramTooLargeAndEmpty(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		server := newDatagramRecorder(at, "server", &log)
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		client := newDatagramRecorder(at, "client", &log)
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return client }, nil, str.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return err
		}
		log = append(log, "big: "+describe(ctr.SendTo(bytes.Repeat([]byte("x"), 70000), nil)))
		log = append(log, "empty: "+describe(ctr.SendTo(nil, nil)))
		log = append(log, "ok: "+describe(ctr.SendTo([]byte("ok"), nil)))
		log = append(log, fmt.Sprintf("closing %v; buffered %d", ctr.IsClosing(), ctr.WriteBufferSize()))
		// Each datagram still to come resolves a fresh got.
		for strings.Count(strings.Join(log, "\n"), "server:got") < 2 {
			server.got = asyncio.NewFuture[struct{}](at)
			if _, err := guardedAwait[struct{}](at, server.got); err != nil {
				return err
			}
		}
		ctr.Close()
		if _, err := guardedAwait[error](at, client.lost); err != nil {
			return err
		}
		str.Close()
		_, err = guardedAwait[error](at, server.lost)
		return err
	})
	expectLog(t, []string{"server:made", "client:made", "client:error syscall=sendto EMSGSIZE", "big: <nil>", "empty: <nil>", "ok: <nil>", "closing false; buffered 0", "server:got ", "server:got ok", "client:lost <nil>", "server:lost <nil>"}, log)
}

// Sending to a port nobody listens on: an unconnected endpoint hears
// nothing and goes on (Linux reports no ICMP error on an unconnected UDP
// socket); a connected one gets ECONNREFUSED through ErrorReceived, each
// time, and stays open. CPython 3.13 on Linux:
//
//	unconnected: [] False [('dg', b'y')]
//	connected: [('err', 'ConnectionRefusedError', 111), ('err', 'ConnectionRefusedError', 111)] False
//
// The test then closes its three endpoints in turn, each with its
// ConnectionLost(nil) (selector_events.py's _SelectorTransport.close).
func TestProcEdge_DatagramUnreachablePort(t *testing.T) {
	clean(t)
	port := closedUDPPort(t)
	dead := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	var log []string
	runNet(t, func(at *asyncio.T) error {
		server := newDatagramRecorder(at, "server", &log)
		str, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return server }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		u := newDatagramRecorder(at, "u", &log)
		utr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return u }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		utr.SendTo([]byte("x"), dead)
		utr.SendTo([]byte("y"), str.ExtraInfo("sockname").(net.Addr))
		if _, err := guardedAwait[struct{}](at, server.got); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("unconnected closing %v", utr.IsClosing()))
		c := newDatagramRecorder(at, "c", &log)
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return c }, nil, dead)
		if err != nil {
			return err
		}
		for range 2 {
			c.got = asyncio.NewFuture[struct{}](at)
			ctr.SendTo([]byte("x"), nil)
			if _, err := guardedAwait[struct{}](at, c.got); err != nil {
				return err
			}
		}
		log = append(log, fmt.Sprintf("connected closing %v", ctr.IsClosing()))
		for _, e := range []struct {
			tr DatagramTransport
			p  *datagramRecorder
		}{{ctr, c}, {utr, u}, {str, server}} {
			e.tr.Close()
			if _, err := guardedAwait[error](at, e.p.lost); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{"server:made", "u:made", "server:got y", "unconnected closing false", "c:made",
		"c:error syscall=recvfrom ECONNREFUSED", "c:error syscall=recvfrom ECONNREFUSED", "connected closing false",
		"c:lost <nil>", "u:lost <nil>", "server:lost <nil>"}, log)
}

// Close with datagrams queued: every queued datagram still goes out, in
// order, before ConnectionLost(nil); SendTo while the queue drains is
// queued behind it (asyncio: _conn_lost is still 0), and once the
// transport is closed it is dropped (nil).
func TestProcEdge_DatagramCloseWithQueue(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		p := newDatagramRecorder(at, "p", &log)
		tr, peer := newDatagramPair(t, at.Loop(), p)
		direct := fillUntilQueued(t, tr)
		tr.Close()
		log = append(log, fmt.Sprintf("closing %v; late while flushing: %s", tr.IsClosing(), describe(tr.SendTo([]byte(fmt.Sprintf("d%03d", direct+1)), nil))))
		got := drainPeer(t, peer)
		if _, err := guardedAwait[error](at, p.lost); err != nil {
			return err
		}
		got = append(got, drainPeer(t, peer)...)
		log = append(log, fmt.Sprintf("peer got all in order: %v", slices.Equal(seq(0, direct+2), got)))
		log = append(log, "after close: "+describe(tr.SendTo([]byte("x"), nil)))
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("peer got nothing more: %v", len(drainPeer(t, peer)) == 0))
		return nil
	})
	expectLog(t, []string{"closing true; late while flushing: <nil>", "p:lost <nil>", "peer got all in order: true", "after close: <nil>", "peer got nothing more: true"}, log)
}

// Bad arguments are named (a *ValueError) and change nothing: the
// endpoint or the file is as it was, and usable.
func TestProcEdge_BadArgumentsChangeNothing(t *testing.T) {
	clean(t)
	f, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var log []string
	runNet(t, func(at *asyncio.T) error {
		u := newDatagramRecorder(at, "u", &log)
		utr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return u }, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return err
		}
		log = append(log, "unconnected nil addr: "+describe(utr.SendTo([]byte("x"), nil)))
		c := newDatagramRecorder(at, "c", &log)
		ctr, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { return c }, nil, utr.ExtraInfo("sockname").(*net.UDPAddr))
		if err != nil {
			return err
		}
		err = ctr.SendTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
		log = append(log, fmt.Sprintf("connected other addr: ValueError %v", errors.As(err, new(*asyncio.ValueError))))
		log = append(log, "limits: "+describe(ctr.SetWriteBufferLimits(1, 5)))
		high, low := ctr.WriteBufferLimits()
		log = append(log, fmt.Sprintf("limits kept %d %d; closing %v %v", high, low, utr.IsClosing(), ctr.IsClosing()))
		ctr.SendTo([]byte("still works"), nil)
		if _, err := guardedAwait[struct{}](at, u.got); err != nil {
			return err
		}
		_, _, err = CreateDatagramEndpoint(at, func() DatagramProtocol { return c }, &net.UDPAddr{Port: 70000}, nil)
		log = append(log, "port: "+describe(err))
		_, _, err = CreateDatagramEndpoint(at, func() DatagramProtocol { return c }, nil, nil)
		log = append(log, "no address: "+describe(err))
		_, _, err = ConnectReadPipe(at, func() Protocol { return newStreamRecorder(at, "x", &log) }, f)
		log = append(log, "read pipe on a file: "+describe(err))
		_, _, err = ConnectWritePipe(at, func() Protocol { return newStreamRecorder(at, "y", &log) }, f)
		log = append(log, "write pipe on a file: "+describe(err))
		_, err = f.WriteString("usable")
		fl, _ := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		log = append(log, fmt.Sprintf("file usable %v; non-blocking %v", err == nil, fl&unix.O_NONBLOCK != 0))
		utr.Close()
		ctr.Close()
		if _, err := guardedAwait[error](at, u.lost); err != nil {
			return err
		}
		_, err = guardedAwait[error](at, c.lost)
		return err
	})
	expectLog(t, []string{
		"u:made",
		"unconnected nil addr: ValueError Invalid address: must not be None for an unconnected endpoint",
		"c:made",
		"connected other addr: ValueError true",
		"limits: ValueError high (1) must be >= low (5) must be >= 0",
		"limits kept 65536 16384; closing false false",
		"u:got still works",
		"port: ValueError " + describeValuePort(),
		"no address: ValueError unexpected address family",
		"read pipe on a file: ValueError Pipe transport is for pipes/sockets only.",
		"write pipe on a file: ValueError Pipe transport is only for pipes, sockets and character devices",
		"file usable true; non-blocking false",
		"u:lost <nil>", "c:lost <nil>",
	}, log)
}

// describeValuePort is checkPort's message for port 70000.
func describeValuePort() string {
	var ve *asyncio.ValueError
	if errors.As(checkPort(70000), &ve) {
		return ve.Msg
	}
	return "?"
}
