//go:build unix

package aio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A NUL byte in what a child is started with is a *ValueError naming
// where it is, returned before the protocol factory runs or a pipe is
// made, as Popen's ValueError "embedded null byte" (CPython 3.13:
// create_subprocess_exec('echo', 'a\0b'), env={'A': '\0'}, cwd='/tm\0p'
// all raise it). os/exec failed later, in Start, with "fork/exec
// /usr/bin/echo: invalid argument", or, for the directory, "exec:
// environment variable contains NUL".
func TestH18_SubprocessNULByteIsAValueError(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		calls := 0
		factory := func() SubprocessProtocol { calls++; return newProcRecorder(at) }
		cases := []struct {
			name string
			run  func() error
			want string
		}{
			{"program", func() error {
				_, _, err := SubprocessExec(at, factory, "/bin/ec\x00ho", nil, WithStdin(Pipe))
				return err
			}, "SubprocessExec: embedded null byte in the program"},
			{"argument", func() error {
				_, _, err := SubprocessExec(at, factory, "echo", []string{"ok", "a\x00b"})
				return err
			}, "SubprocessExec: embedded null byte in argument 2"},
			{"env", func() error {
				_, _, err := SubprocessExec(at, factory, "echo", nil, WithEnv([]string{"PATH=/bin:/usr/bin", "A=x\x00"}))
				return err
			}, `SubprocessExec: embedded null byte in the environment (variable "A")`},
			{"dir", func() error {
				_, _, err := SubprocessExec(at, factory, "echo", nil, WithDir("/tm\x00p"))
				return err
			}, "SubprocessExec: embedded null byte in the working directory"},
			{"WithCmd", func() error {
				_, _, err := SubprocessExec(at, factory, "echo", nil, WithCmd(func(c *exec.Cmd) { c.Args = append(c.Args, "\x00") }))
				return err
			}, "SubprocessExec: embedded null byte in argument 1"},
			{"shell", func() error {
				_, err := CreateSubprocessShell(at, "echo \x00", WithStdout(Pipe))
				return err
			}, "CreateSubprocessShell: embedded null byte in the command"},
			{"exec", func() error {
				_, err := CreateSubprocessExec(at, "echo", []string{"\x00"}, WithStdout(Pipe))
				return err
			}, "CreateSubprocessExec: embedded null byte in argument 1"},
		}
		for _, c := range cases {
			err := c.run()
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || ve.Msg != c.want {
				t.Errorf("%s: %s, want ValueError(%q)", c.name, describe(err), c.want)
			}
		}
		if calls != 0 {
			t.Errorf("the protocol factory ran %d times", calls)
		}
		return nil
	})
}

// A closed File redirect is a *ValueError naming the stream, before the
// factory runs or a pipe is made (Popen: ValueError "I/O operation on
// closed file"). It used to start the child with that stream closed: a
// closed *os.File's Fd is -1, which os/exec's fork takes as "close it".
func TestH18_SubprocessClosedFileRedirect(t *testing.T) {
	clean(t)
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	name := f.Name()
	f.Close()
	runNet(t, func(at *asyncio.T) error {
		calls := 0
		factory := func() SubprocessProtocol { calls++; return newProcRecorder(at) }
		for i, opt := range []Option{WithStdin(File(f)), WithStdout(File(f)), WithStderr(File(f))} {
			_, _, err := SubprocessShell(at, factory, "echo ran; echo ran >&2", opt)
			want := [3]string{"stdin", "stdout", "stderr"}[i] + ": File(" + name + ") is closed"
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || ve.Msg != want {
				t.Errorf("%s: want ValueError(%q)", describe(err), want)
			}
		}
		_, err := CreateSubprocessExec(at, "true", nil, WithStdout(File(f)))
		if !errors.As(err, new(*asyncio.ValueError)) {
			t.Errorf("CreateSubprocessExec: %s, want a ValueError", describe(err))
		}
		if calls != 0 {
			t.Errorf("the protocol factory ran %d times", calls)
		}
		return nil
	})
}

// WithEnv(nil) gives the child an empty environment, as WithEnv([]string{})
// and Popen's env={} do. It used to give it the parent's whole
// environment (exec.Cmd's nil Env), while the program was looked up in
// the empty environment's default PATH.
func TestH18_SubprocessWithEnvNilIsEmpty(t *testing.T) {
	clean(t)
	t.Setenv("H18_PARENT_ONLY", "leaked")
	var got []string
	runNet(t, func(at *asyncio.T) error {
		for _, env := range [][]string{nil, {}} {
			p, err := CreateSubprocessExec(at, "/usr/bin/env", nil, WithStdout(Pipe), WithEnv(env))
			if err != nil {
				return err
			}
			out, _, err := p.Communicate(at, nil)
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("nil %v: %q", env == nil, out))
		}
		return nil
	})
	expectLog(t, []string{`nil true: ""`, `nil false: ""`}, got)
}

// A loop on virtual time waiting for a child that has no pipes: with the
// goroutine exit watch (the only one off Linux, and Linux's fallback
// without pidfds) the loop had nothing registered to wait for while the
// child ran, so Wait ended in ErrDeadlock (Run cancelled main). The
// watch now reports through a pipe in the selector, so both watches
// behave alike: the clock jumps to the timer while the child runs (the
// child is a descriptor that is not ready yet), and Wait returns its
// status.
func TestH18_VirtualTimeWaitsForChildWithoutPipes(t *testing.T) {
	bothWatches(t, func(t *testing.T) {
		clean(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var got []string
		_, err = asyncio.Run(func(at *asyncio.T) (struct{}, error) {
			// cat blocks on its stdin, a pipe the loop does not watch,
			// until the timer below closes the write end.
			p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(File(r)), WithStdout(DevNull))
			if err != nil {
				return struct{}{}, err
			}
			closer := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
				err := asyncio.Sleep(t, time.Hour)
				w.Close()
				return struct{}{}, err
			})
			rc, err := p.Wait(at)
			got = append(got, fmt.Sprintf("wait: %d %s; clock moved %v", rc, describe(err), at.Loop().Time() >= time.Hour))
			if _, cerr := closer.Await(at); err == nil {
				err = cerr
			}
			return struct{}{}, err
		}, asyncio.WithVirtualTime())
		w.Close()
		got = append(got, "run: "+describe(err))
		expectLog(t, []string{"wait: 0 <nil>; clock moved true", "run: <nil>"}, got)
	})
}

// A running child polled with timed-out waits (WaitForFunc(t, d, p.Wait)
// over and over, on virtual time here) does not pile up one cancelled
// future per poll until it exits: Wait drops the waits cancelled
// meanwhile. The last Wait still gets the status.
func TestH18_TimedOutWaitsDoNotPileUp(t *testing.T) {
	clean(t)
	var got []string
	_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		p, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(DevNull))
		if err != nil {
			return struct{}{}, err
		}
		timeouts := 0
		for range 1000 {
			if _, err := asyncio.WaitForFunc(at, time.Second, p.Wait); errors.Is(err, asyncio.ErrTimeout) {
				timeouts++
			}
		}
		got = append(got, fmt.Sprintf("timeouts %d, waiters kept %d", timeouts, len(p.transport.exitWaiters)))
		p.Stdin.Close()
		rc, err := p.Wait(at)
		got = append(got, fmt.Sprintf("wait: %d %s", rc, describe(err)))
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatal(err)
	}
	expectLog(t, []string{"timeouts 1000, waiters kept 1", "wait: 0 <nil>"}, got)
}
