//go:build unix

package ports_test

// Ports p70 onward: programs that run child processes (asyncio's
// create_subprocess_exec and create_subprocess_shell). The children are
// real; the loop runs on virtual time, so a timeout while a child runs
// moves the clock to the timer at once (the child is a descriptor that is
// not ready yet), and the times printed are exact.

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"os"
)

// prc is the programs' p.returncode: None while the child runs.
func prc(p *aio.Process) string {
	if rc, ok := p.ReturnCode(); ok {
		return strconv.Itoa(rc)
	}
	return "None"
}

// pstartErr is type(e).__name__ of the OSError a child that cannot start
// raises.
func pstartErr(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "FileNotFoundError"
	case errors.Is(err, fs.ErrPermission):
		return "PermissionError"
	}
	return pd(err)
}

// ---------------------------------------------------------------------------
// p70_subprocess_tools.py

func TestPortSubprocessTools(t *testing.T) {
	runPort(t, cpythonTrace("p70_subprocess_tools"), func(p *probe, tk *asyncio.T) error {
		// A filter child, fed and read line by line.
		cat, err := aio.CreateSubprocessExec(tk, "cat", nil, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		p.log("cat running %s", prc(cat))
		for _, line := range []string{"one\n", "two\n"} {
			if err := cat.Stdin.Write([]byte(line)); err != nil {
				return err
			}
			if err := cat.Stdin.Drain(tk); err != nil {
				return err
			}
			got, err := cat.Stdout.ReadLine(tk)
			if err != nil {
				return err
			}
			p.log("cat echoed %s", pbytes(got))
		}
		cat.Stdin.Close()
		if err := cat.Stdin.WaitClosed(tk); err != nil {
			return err
		}
		rest, err := cat.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		rc, err := cat.Wait(tk)
		if err != nil {
			return err
		}
		p.log("cat rest %s exit %d", pbytes(rest), rc)

		// communicate() with input, both streams, a failing exit.
		sh, err := aio.CreateSubprocessShell(tk, "read x; echo out:$x; echo err:$x >&2; exit 3",
			aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		out, errOut, err := sh.Communicate(tk, []byte("hi\n"))
		if err != nil {
			return err
		}
		p.log("communicate %s %s %s", pbytes(out), pbytes(errOut), prc(sh))

		// stderr merged into stdout; no stderr stream of its own.
		merged, err := aio.CreateSubprocessShell(tk, "echo a; echo b >&2", aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Stdout))
		if err != nil {
			return err
		}
		p.restart()
		out, errOut, err = merged.Communicate(tk, nil)
		if err != nil {
			return err
		}
		words := strings.Fields(string(out))
		slices.Sort(words)
		reprs := make([]string, len(words))
		for i, w := range words {
			reprs[i] = pbytes([]byte(w))
		}
		errRepr := "None"
		if errOut != nil {
			errRepr = pbytes(errOut)
		}
		p.log("merged [%s] %s", strings.Join(reprs, ", "), errRepr)

		// A wait with a timeout, then kill and reap.
		sleeper, err := aio.CreateSubprocessExec(tk, "sleep", []string{"10"})
		if err != nil {
			return err
		}
		p.restart()
		if _, err := asyncio.WaitForFunc(tk, 100*ms, sleeper.Wait); err != nil {
			if !errors.Is(err, asyncio.ErrTimeout) {
				return err
			}
			p.log("wait_for %s returncode %s", pd(err), prc(sleeper))
		}
		if err := sleeper.Kill(); err != nil {
			return err
		}
		rc, err = sleeper.Wait(tk)
		if err != nil {
			return err
		}
		p.log("killed %d %s", rc, pb(rc == -int(syscall.SIGKILL)))

		// A streaming child terminated after its first line.
		stream, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", "echo ready; exec sleep 10"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		first, err := stream.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("first line %s", pbytes(first))
		if err := stream.Terminate(); err != nil {
			return err
		}
		rest, err = stream.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		rc, err = stream.Wait(tk)
		if err != nil {
			return err
		}
		p.log("after terminate %s %d %s", pbytes(rest), rc, pb(rc == -int(syscall.SIGTERM)))

		// Programs that cannot start.
		for _, prog := range []string{"no-such-program-p70", "/etc/passwd"} {
			if _, err := aio.CreateSubprocessExec(tk, prog, nil); err != nil {
				p.log("%s %s", prog, pstartErr(err))
			}
		}

		// A cancelled communicate(): the child keeps running until killed.
		long, err := aio.CreateSubprocessExec(tk, "sleep", []string{"10"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		comm := asyncio.CreateTaskErr(tk, func(ct *asyncio.T) error {
			_, _, err := long.Communicate(ct, nil)
			return err
		})
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		comm.Cancel("give up")
		if _, err := comm.Await(tk); err != nil {
			if !asyncio.IsCancelled(err) {
				return err
			}
			p.log("communicate %s returncode %s", pd(err), prc(long))
		}
		if err := long.Kill(); err != nil {
			return err
		}
		rc, err = long.Wait(tk)
		if err != nil {
			return err
		}
		p.log("reaped %d", rc)

		// Writing to a child that has exited.
		done, err := aio.CreateSubprocessExec(tk, "true", nil, aio.WithStdin(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		rc, err = done.Wait(tk)
		if err != nil {
			return err
		}
		p.log("true exited %d", rc)
		if err := done.Stdin.Write(make([]byte, 100000)); err != nil {
			return err
		}
		if err := done.Stdin.Drain(tk); err != nil {
			p.log("drain %s", nd(err))
		} else {
			p.log("drain ok")
		}
		p.log("done")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p71_subprocess_streams.py

// pinfo is the programs' (name, line) tuples, sorted.
type pinfo struct{ name, line string }

func TestPortSubprocessStreams(t *testing.T) {
	runPort(t, cpythonTrace("p71_subprocess_streams"), func(p *probe, tk *asyncio.T) error {
		// stdout and stderr read line by line while the child runs.
		sh, err := aio.CreateSubprocessShell(tk, "for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 7",
			aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		var got []pinfo
		lines := func(name string, r *aio.StreamReader) func(*asyncio.T) error {
			return func(lt *asyncio.T) error {
				for {
					line, err := r.ReadLine(lt)
					if err != nil || len(line) == 0 {
						return err
					}
					got = append(got, pinfo{name, strings.TrimSpace(string(line))})
				}
			}
		}
		if err := asyncio.TaskGroup(tk, func(tg *asyncio.Group) error {
			if _, err := asyncio.SpawnErr(tg, lines("out", sh.Stdout)); err != nil {
				return err
			}
			_, err := asyncio.SpawnErr(tg, lines("err", sh.Stderr))
			return err
		}); err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b pinfo) int { return strings.Compare(a.name+a.line, b.name+b.line) })
		tuples := make([]string, len(got))
		for i, g := range got {
			tuples[i] = "('" + g.name + "', '" + g.line + "')"
		}
		rc, err := sh.Wait(tk)
		if err != nil {
			return err
		}
		p.log("streams [%s] exit %d", strings.Join(tuples, ", "), rc)

		// A megabyte through communicate(), more than a pipe holds.
		cat, err := aio.CreateSubprocessExec(tk, "cat", nil, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		out, errOut, err := cat.Communicate(tk, []byte(strings.Repeat("0123456789abcdef", 65536)))
		if err != nil {
			return err
		}
		errRepr := "None"
		if errOut != nil {
			errRepr = pbytes(errOut)
		}
		p.log("cat %d %s %s %s %s", len(out), pbytes(out[:4]), pbytes(out[len(out)-4:]), errRepr, prc(cat))

		// A line longer than the stream's limit.
		long, err := aio.CreateSubprocessShell(tk, `printf '%0200d\nshort\n' 0`, aio.WithStdout(aio.Pipe), aio.WithStreamLimit(100))
		if err != nil {
			return err
		}
		p.restart()
		if _, err := long.Stdout.ReadLine(tk); err != nil {
			p.log("long line %s", nd(err))
		}
		next, err := long.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		rc, err = long.Wait(tk)
		if err != nil {
			return err
		}
		p.log("next %s %d", pbytes(next), rc)

		// A child killed by a signal it sends itself.
		self, err := aio.CreateSubprocessShell(tk, "kill -9 $$", aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		rest, err := self.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		rc, err = self.Wait(tk)
		if err != nil {
			return err
		}
		p.log("self-kill %s %d %s", pbytes(rest), rc, pb(rc == -int(syscall.SIGKILL)))

		// stdin from DEVNULL, then signals once the child is reaped.
		dn, err := aio.CreateSubprocessExec(tk, "cat", nil, aio.WithStdin(aio.DevNull), aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		p.restart()
		stdin := "None"
		if dn.Stdin != nil {
			stdin = "a StreamWriter"
		}
		rest, err = dn.Stdout.Read(tk, -1)
		if err != nil {
			return err
		}
		rc, err = dn.Wait(tk)
		if err != nil {
			return err
		}
		p.log("devnull %s %s %d", stdin, pbytes(rest), rc)
		// Wait returns when the child exits (CPython's gh-119710; 3.13.0
		// waited for the transport to finish too): one more iteration
		// and the transport has finished.
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		for _, op := range []struct {
			name string
			fn   func() error
		}{{"kill", dn.Kill}, {"terminate", dn.Terminate}, {"send_signal", func() error { return dn.SendSignal(os.Interrupt) }}} {
			switch err := op.fn(); {
			case err == nil:
				p.log("%s ok", op.name)
			case errors.Is(err, syscall.ESRCH):
				p.log("%s ProcessLookupError", op.name)
			default:
				return err
			}
		}
		p.log("done")
		return nil
	})
}
