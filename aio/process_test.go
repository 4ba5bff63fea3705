//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The high-level subprocess API (process.go), with real children; every
// test ends with clean (no child, zombie, descriptor or goroutine left).

// Communicate writes stdin, reads stdout and stderr to their end and
// waits: the exit code comes with the output.
func TestProcess_Communicate(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessShell(at, "tr a-z A-Z; echo done >&2; exit 3", WithStdin(Pipe), WithStdout(Pipe), WithStderr(Pipe))
		if err != nil {
			return err
		}
		out, errOut, err := p.Communicate(at, []byte("hello\n"))
		rc, ok := p.ReturnCode()
		got = append(got, fmt.Sprintf("%q %q %v; rc %d %v; %v", out, errOut, err, rc, ok, p))
		return nil
	})
	if !strings.HasPrefix(got[0], `"HELLO\n" "done\n" <nil>; rc 3 true; <Process `) {
		t.Fatalf("got %q", got)
	}
}

// 100 MB through cat with Communicate: no pipe-buffer deadlock, every
// byte back. The time is measured and logged, not asserted.
func TestProcess_Communicate100MBThroughCat(t *testing.T) {
	clean(t)
	input := make([]byte, 100<<20)
	for i := range input {
		input[i] = byte(i * 7 >> 3)
	}
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		start := time.Now()
		out, errOut, err := p.Communicate(at, input)
		el := time.Since(start)
		if err != nil {
			return err
		}
		if !bytes.Equal(out, input) || errOut != nil {
			t.Errorf("got %d bytes back (equal: %v), stderr %v", len(out), bytes.Equal(out, input), errOut)
		}
		t.Logf("100 MiB through cat: %v, %.0f MB/s", el, float64(len(input))/el.Seconds()/1e6)
		return nil
	})
}

// A child that exits without reading its stdin: the writer's Drain gets
// the broken pipe (BrokenPipeError) or, once the pipe is known to be
// closed, "Connection lost" (ConnectionResetError), and WaitClosed the
// error that closed it; nothing hangs, and Communicate ignores it.
func TestProcess_ChildDoesNotReadStdin(t *testing.T) {
	clean(t)
	var got []string
	big := bytes.Repeat([]byte("x"), 1<<20)
	runNet(t, func(at *asyncio.T) error {
		// sh reads one line, then exits with the rest unread: the
		// writer is paused above the high water mark when the pipe
		// breaks.
		p, err := CreateSubprocessShell(at, "read x", WithStdin(Pipe))
		if err != nil {
			return err
		}
		// One write: with two, a child that read its line and exited
		// between them made the second fail at once, with the writer not
		// paused (Drain then reports the lost connection instead).
		p.Stdin.Write(append([]byte("line\n"), big...))
		err = p.Stdin.Drain(at)
		got = append(got, "drain: "+describe(err))
		got = append(got, "write after: "+describe(p.Stdin.Write(big)))
		got = append(got, "drain after: "+describe(p.Stdin.Drain(at)))
		got = append(got, "wait closed: "+describe(p.Stdin.WaitClosed(at)))
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("wait: %d %v", rc, err))

		q, err := CreateSubprocessExec(at, "true", nil, WithStdin(Pipe))
		if err != nil {
			return err
		}
		if _, err := q.Wait(at); err != nil {
			return err
		}
		_, _, err = q.Communicate(at, big)
		got = append(got, "communicate: "+describe(err))
		return nil
	})
	expectLog(t, []string{
		"drain: syscall=write EPIPE",
		"write after: <nil>",
		"drain after: ECONNRESET",
		"wait closed: syscall=write EPIPE",
		"wait: 0 <nil>",
		"communicate: <nil>",
	}, got)
}

// 200 children at once under a Semaphore, each with its own output.
func TestProcess_200ConcurrentChildren(t *testing.T) {
	clean(t)
	const n = 200
	runNet(t, func(at *asyncio.T) error {
		sem := asyncio.NewSemaphore(50)
		outs := make([]string, n)
		return asyncio.TaskGroup(at, func(g *asyncio.Group) error {
			for i := range n {
				if _, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
					if err := sem.Acquire(t); err != nil {
						return struct{}{}, err
					}
					defer sem.Release()
					p, err := CreateSubprocessExec(t, "echo", []string{"child", fmt.Sprint(i)}, WithStdout(Pipe))
					if err != nil {
						return struct{}{}, err
					}
					out, _, err := p.Communicate(t, nil)
					if err != nil {
						return struct{}{}, err
					}
					if rc, _ := p.ReturnCode(); rc != 0 {
						return struct{}{}, fmt.Errorf("child %d: rc %d", i, rc)
					}
					outs[i] = string(out)
					return struct{}{}, nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Where the streams go: DevNull, stderr into stdout (STDOUT), a file of
// the parent's, and the Process fields that exist only for pipes.
func TestProcess_Redirects(t *testing.T) {
	clean(t)
	var got []string
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runNet(t, func(at *asyncio.T) error {
		script := "echo out; echo err >&2"
		p, err := CreateSubprocessShell(at, script, WithStdout(Pipe), WithStderr(Stdout))
		if err != nil {
			return err
		}
		out, errOut, err := p.Communicate(at, nil)
		got = append(got, fmt.Sprintf("STDOUT: %q %v %v; stdin %v stderr %v", out, errOut, err, p.Stdin != nil, p.Stderr != nil))
		p, err = CreateSubprocessShell(at, script, WithStdout(DevNull), WithStderr(Pipe))
		if err != nil {
			return err
		}
		out, errOut, err = p.Communicate(at, nil)
		got = append(got, fmt.Sprintf("DEVNULL: %q %q %v", out, errOut, err))
		p, err = CreateSubprocessShell(at, script, WithStdout(File(f)), WithStderr(Stdout))
		if err != nil {
			return err
		}
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("file: %d %v", rc, err))
		_, _, err = p.Communicate(at, []byte("in"))
		got = append(got, "input without a stdin pipe: "+fmt.Sprint(err))
		return nil
	})
	b, _ := os.ReadFile(f.Name())
	got = append(got, fmt.Sprintf("file holds %q", b))
	expectLog(t, []string{
		`STDOUT: "out\nerr\n" [] <nil>; stdin false stderr false`,
		`DEVNULL: "" "err\n" <nil>`,
		"file: 0 <nil>",
		"input without a stdin pipe: <nil>", // dropped, as asyncio does
		`file holds "out\nerr\n"`,
	}, got)
}

// The os/exec knobs: environment, working directory, and anything else
// through WithCmd (here ExtraFiles, Popen's pass_fds).
func TestProcess_EnvDirAndCmd(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessShell(at, `echo "$X"; pwd; echo extra >&3`,
			WithStdout(Pipe), WithEnv([]string{"X=from env"}), WithDir(dir),
			WithCmd(func(c *exec.Cmd) { c.ExtraFiles = []*os.File{w} }))
		w.Close() // the child has its copy
		if err != nil {
			return err
		}
		out, _, err := p.Communicate(at, nil)
		got = append(got, fmt.Sprintf("%q %v", out, err))
		return nil
	})
	extra := make([]byte, 16)
	n, _ := r.Read(extra)
	got = append(got, fmt.Sprintf("fd 3: %q", extra[:n]))
	real, _ := filepath.EvalSymlinks(dir)
	expectLog(t, []string{fmt.Sprintf("%q <nil>", "from env\n"+real+"\n"), `fd 3: "extra\n"`}, got)
}

// SendSignal once the child has exited does nothing (asyncio swallows the
// ProcessLookupError); once the transport is finished it fails with
// os.ErrProcessDone / ESRCH (ProcessLookupError).
func TestProcess_SignalAfterExit(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "sh", []string{"-c", "exec 1>&-; exec 2>&-; exit 0"}, WithStdout(Pipe))
		if err != nil {
			return err
		}
		if _, err := p.Wait(at); err != nil {
			return err
		}
		got = append(got, "after exit: "+describe(p.Kill()))
		if _, err := p.Stdout.Read(at, -1); err != nil {
			return err
		}
		for !p.transport.gone {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		err = p.SendSignal(syscall.SIGTERM)
		got = append(got, fmt.Sprintf("finished: %v; ErrProcessDone %v; ESRCH %v", err, errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH)))
		return nil
	})
	expectLog(t, []string{"after exit: <nil>", "finished: asyncio: process " + got[1][len("finished: asyncio: process "):strings.Index(got[1], " already")] + " already finished; ErrProcessDone true; ESRCH true"}, got)
}

// Reading stdout respects the stream limit: a child that writes much more
// than the reader holds is paused at twice the limit, not buffered
// without bound, and resumes as the reader takes data.
func TestProcess_StdoutFlowControl(t *testing.T) {
	clean(t)
	const limit, total = 16 << 10, 4 << 20
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "head", []string{"-c", fmt.Sprint(total), "/dev/zero"}, WithStdout(Pipe), WithStreamLimit(limit))
		if err != nil {
			return err
		}
		pipe := p.transport.PipeTransport(1)
		for pipe.IsReading() {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		got = append(got, fmt.Sprintf("paused with %v buffered (<= 2*limit + one read: %v)", len(p.Stdout.buf) > 2*limit, len(p.Stdout.buf) <= 2*limit+maxRead))
		out, err := p.Stdout.Read(at, -1)
		got = append(got, fmt.Sprintf("read %d %v", len(out), err))
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("wait %d %v", rc, err))
		return nil
	})
	expectLog(t, []string{"paused with true buffered (<= 2*limit + one read: true)", fmt.Sprintf("read %d <nil>", total), "wait 0 <nil>"}, got)
}

// A loop that closes with children still running kills them and reaps
// them, pipes or not, with either exit watch; clean then finds no child
// and no zombie.
func TestProcess_LoopCloseKillsAndReaps(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		var pids []int
		var p *Process
		rn := asyncio.NewRunner()
		_, err := asyncio.RunWith(rn, func(at *asyncio.T) (struct{}, error) {
			for _, opts := range [][]Option{nil, {WithStdin(Pipe), WithStdout(Pipe), WithStderr(Pipe)}} {
				var err error
				p, err = CreateSubprocessExec(at, "sleep", []string{"1000"}, opts...)
				if err != nil {
					return struct{}{}, err
				}
				pids = append(pids, p.Pid())
			}
			return struct{}{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := rn.Close(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("pid %d still exists after Close", pid)
			}
		}
		if rc, ok := p.ReturnCode(); rc != -9 || !ok {
			t.Errorf("return code after Close: %d %v, want -9 true", rc, ok)
		}
	})
}

// Cancelling the task that starts a child while it waits for
// ConnectionMade kills and reaps the child (asyncio's
// _make_subprocess_transport).
func TestProcess_CancelledWhileStarting(t *testing.T) {
	clean(t)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		var pid int
		starter := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			t.Cancel() // delivered at the first await: the wait for ConnectionMade
			_, _, err := SubprocessExec(t, func() SubprocessProtocol {
				p := newProcRecorder(t)
				return p
			}, "sleep", []string{"1000"}, WithCmd(func(c *exec.Cmd) {}))
			return struct{}{}, err
		})
		_, err := starter.Await(at)
		for _, kid := range childProcesses() {
			fmt.Sscan(kid, &pid)
		}
		got = append(got, fmt.Sprintf("starter: %s; children left: %d", describe(err), len(childProcesses())))
		return nil
	})
	expectLog(t, []string{"starter: cancelled; children left: 0"}, got)
}

// Communicate writes its input without copying it, and copies what is
// left of it before it returns, also when it is cancelled: a caller that
// reuses the slice afterwards does not change what the child reads.
func TestProcess_CancelledCommunicateKeepsItsInput(t *testing.T) {
	clean(t)
	input := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	want := bytes.Clone(input)
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		comm := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) {
			out, _, err := p.Communicate(t, input)
			return out, err
		})
		for range 3 { // Communicate has handed input to the pipe and drains
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		wp := p.transport.pipes[0].write
		got = append(got, fmt.Sprintf("borrowed before cancel: %v", wp.borrowed))
		comm.Cancel()
		if _, err := comm.Await(at); !asyncio.IsCancelled(err) {
			return fmt.Errorf("communicate: %v", err)
		}
		got = append(got, fmt.Sprintf("borrowed after: %v", wp.borrowed))
		for i := range input {
			input[i] = 'X' // the caller has its slice back
		}
		p.Stdin.Close()
		rest, err := p.Stdout.Read(at, -1)
		if err != nil {
			return err
		}
		got = append(got, fmt.Sprintf("the child read the original: %v (%d bytes)", bytes.HasSuffix(want, rest) && len(rest) > 0, min(len(rest), 1)))
		_, err = p.Wait(at)
		return err
	})
	expectLog(t, []string{"borrowed before cancel: true", "borrowed after: false", "the child read the original: true (1 bytes)"}, got)
}

// A program without a slash is looked up in the PATH of the child's
// WithEnv, as Popen(env=) does, not in the parent's; an env without PATH
// searches /bin:/usr/bin (os.defpath).
func TestProcess_ProgramLookedUpInTheChildsPath(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "only-in-child-path"), []byte("#!/bin/sh\necho found\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "only-in-child-path", nil, WithStdout(Pipe), WithEnv([]string{"PATH=" + dir + ":/usr/bin:/bin"}))
		if err != nil {
			return err
		}
		out, _, err := p.Communicate(at, nil)
		got = append(got, fmt.Sprintf("%q %v", out, err))
		_, err = CreateSubprocessExec(at, "only-in-child-path", nil, WithEnv([]string{"X=1"}))
		got = append(got, fmt.Sprintf("no PATH: not found=%v", errors.Is(err, os.ErrNotExist)))
		p, err = CreateSubprocessExec(at, "sh", []string{"-c", "echo sh"}, WithStdout(Pipe), WithEnv([]string{"X=1"}))
		if err != nil {
			return err
		}
		out, _, err = p.Communicate(at, nil)
		got = append(got, fmt.Sprintf("%q %v", out, err))
		return nil
	})
	expectLog(t, []string{`"found\n" <nil>`, "no PATH: not found=true", `"sh\n" <nil>`}, got)
}
