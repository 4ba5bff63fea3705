//go:build unix

package ports_test

// Ports p125 onward (h34): signal handlers sent to the process itself,
// ... Same conventions as ports_test.go, ports50_test.go (network, on
// the simulated network), ports70_test.go (subprocesses) and
// ports111_test.go.

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio/aio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// pdv125 is d(e) for the library's own Python-named errors pd does not
// name.
func pdv125(err error) string {
	if e, ok := err.(*asyncio.ValueError); ok {
		return "ValueError(" + e.Msg + ")"
	}
	return pd(err)
}

// ---------------------------------------------------------------------------
// p125_signal_reload.py

func TestPortSignalReload(t *testing.T) {
	runPort(t, cpythonTrace("p125_signal_reload"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		loop := tk.Loop()
		var events []string
		gen := 0
		reloaded, stopping := asyncio.NewEvent(), asyncio.NewEvent()
		// On virtual time the loop cannot know that a signal is on its way
		// to it: the clock would jump past it (README "Virtual time for
		// tests": code that completes things from outside says so with
		// ExpectExternal). kill holds the clock until the handler has run;
		// CPython's handler runs at once too (the wakeup fd is readable
		// before kill returns), so no line changes.
		var inFlight func()
		arrived := func() {
			if inFlight != nil {
				inFlight()
				inFlight = nil
			}
		}
		onReload := func(tag string) func() {
			return func() {
				arrived()
				gen++
				events = append(events, fmt.Sprintf("reload %s gen %d", tag, gen))
				reloaded.Set()
			}
		}
		onStop := func() {
			arrived()
			events = append(events, "stop requested")
			stopping.Set()
		}
		worker := func(name string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				beats := 0
				for !stopping.IsSet() {
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return beats, err
					}
					beats++
				}
				p.log("%s stops after %d beats with gen %d", name, beats, gen)
				return beats, nil
			}
		}
		kill := func(sig syscall.Signal) error {
			inFlight = loop.ExpectExternal()
			return syscall.Kill(os.Getpid(), sig)
		}

		if err := loop.AddSignalHandler(syscall.SIGUSR1, onReload("first")); err != nil {
			return err
		}
		if err := loop.AddSignalHandler(syscall.SIGUSR2, onStop); err != nil {
			return err
		}
		var workers []asyncio.AwaitableOf[int]
		for i := range 2 {
			workers = append(workers, asyncio.CreateTask(tk, worker(fmt.Sprintf("w%d", i))))
		}

		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR1); err != nil {
			return err
		}
		p.log("sent SIGUSR1, handled yet: %d", len(events))
		if err := reloaded.Wait(tk); err != nil {
			return err
		}
		reloaded.Clear()
		p.log("after reload %s", events[len(events)-1])

		if err := loop.AddSignalHandler(syscall.SIGUSR1, onReload("second")); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR1); err != nil {
			return err
		}
		if err := reloaded.Wait(tk); err != nil {
			return err
		}
		p.log("after reload %s", events[len(events)-1])

		for _, sig := range []syscall.Signal{syscall.SIGKILL, 0, 65} {
			if err := loop.AddSignalHandler(sig, onStop); err != nil {
				p.log("add %d refused: %s", int(sig), pdv125(err))
			} else {
				return fmt.Errorf("add %d accepted", int(sig))
			}
		}
		for _, r := range []struct {
			name string
			sig  syscall.Signal
		}{{"SIGUSR1", syscall.SIGUSR1}, {"SIGUSR1 again", syscall.SIGUSR1}, {"SIGHUP", syscall.SIGHUP}} {
			ok, err := loop.RemoveSignalHandler(r.sig)
			if err != nil {
				return err
			}
			p.log("remove %s: %s", r.name, pb(ok))
		}

		if err := asyncio.Sleep(tk, 150*ms); err != nil {
			return err
		}
		if err := kill(syscall.SIGUSR2); err != nil {
			return err
		}
		beats, err := asyncio.Gather(tk, workers...).Await(tk)
		if err != nil {
			return err
		}
		p.log("workers stopped %s events %s", pyInts(beats), pstrs(events))
		ok, err := loop.RemoveSignalHandler(syscall.SIGUSR2)
		if err != nil {
			return err
		}
		p.log("remove SIGUSR2: %s", pb(ok))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p126_subprocess_pipeline.py

// spawnPipeline is the program's pipeline(*argvs): each child's stdout is
// an os.Pipe whose read end is the next child's stdin, the parent closing
// its copies once the child has them; the first child's stdin is
// DEVNULL, the last child's stdout a Pipe.
func spawnPipeline(tk *asyncio.T, argvs ...[]string) ([]*aio.Process, error) {
	var procs []*aio.Process
	var prev *os.File
	for i, argv := range argvs {
		last := i == len(argvs)-1
		stdin := aio.DevNull
		if prev != nil {
			stdin = aio.File(prev)
		}
		stdout := aio.Pipe
		var next, outW *os.File
		if !last {
			var err error
			if next, outW, err = os.Pipe(); err != nil {
				return procs, err
			}
			stdout = aio.File(outW)
		}
		pr, err := aio.CreateSubprocessExec(tk, argv[0], argv[1:], aio.WithStdin(stdin), aio.WithStdout(stdout))
		if prev != nil {
			prev.Close()
		}
		if outW != nil {
			outW.Close()
		}
		if err != nil {
			if next != nil {
				next.Close()
			}
			return procs, err
		}
		prev = next
		procs = append(procs, pr)
	}
	return procs, nil
}

// waitAll is [await p.wait() for p in procs].
func waitAll(tk *asyncio.T, procs []*aio.Process) ([]int, error) {
	var codes []int
	for _, pr := range procs {
		rc, err := pr.Wait(tk)
		if err != nil {
			return codes, err
		}
		codes = append(codes, rc)
	}
	return codes, nil
}

func TestPortSubprocessPipeline(t *testing.T) {
	runPort(t, cpythonTrace("p126_subprocess_pipeline"), func(p *probe, tk *asyncio.T) error {
		p.restart()
		procs, err := spawnPipeline(tk, []string{"printf", `pear\napple\nfig\napple\npear\n`}, []string{"sort"}, []string{"uniq", "-c"})
		if err != nil {
			return err
		}
		var lines []string
		for line, err := range procs[len(procs)-1].Stdout.Lines(tk) {
			if err != nil {
				return err
			}
			var words []string
			for _, w := range bytes.Fields(line) {
				words = append(words, pbytes(w))
			}
			lines = append(lines, "["+strings.Join(words, ", ")+"]")
		}
		codes, err := waitAll(tk, procs)
		if err != nil {
			return err
		}
		p.log("counted [%s] codes %s", strings.Join(lines, ", "), pyInts(codes))

		procs, err = spawnPipeline(tk, []string{"printf", `b\na\n`}, []string{"tr", "a-z", "A-Z"})
		if err != nil {
			return err
		}
		out, errOut, err := procs[len(procs)-1].Communicate(tk, nil)
		if err != nil {
			return err
		}
		if codes, err = waitAll(tk, procs); err != nil {
			return err
		}
		p.log("upper %s %s %s", pbytes(out), pbytesOrNone(errOut), pyInts(codes))

		// the source writes for ever; the sink stops after its first line
		procs, err = spawnPipeline(tk, []string{"yes", "spam"}, []string{"head", "-n", "2"})
		if err != nil {
			return err
		}
		if out, _, err = procs[len(procs)-1].Communicate(tk, nil); err != nil {
			return err
		}
		if codes, err = waitAll(tk, procs); err != nil {
			return err
		}
		p.log("head %s codes %s %s", pbytes(out), pyInts(codes), pb(codes[0] == -int(syscall.SIGPIPE)))

		// a sink that never finishes: killed when the deadline passes
		p.restart()
		procs, err = spawnPipeline(tk, []string{"printf", `x\n`}, []string{"sh", "-c", "cat; exec sleep 10"})
		if err != nil {
			return err
		}
		sink := procs[len(procs)-1]
		err = asyncio.Timeout(tk, 200*ms, func(*asyncio.TimeoutScope) error {
			_, _, err := sink.Communicate(tk, nil)
			return err
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("slow sink %s returncode %s", pd(err), prc(sink))
			if err := sink.Kill(); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		rcSink, err := sink.Wait(tk)
		if err != nil {
			return err
		}
		rcSource, err := procs[0].Wait(tk)
		if err != nil {
			return err
		}
		p.log("sink %d source %d", rcSink, rcSource)

		// concurrent children under a semaphore, each with its env and cwd
		sem := asyncio.NewSemaphore(2)
		running, peak := 0, 0
		tmp := t.TempDir()
		for _, name := range []string{"a", "b", "c"} {
			if err := os.Mkdir(filepath.Join(tmp, name), 0o755); err != nil {
				return err
			}
		}
		job := func(name string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := sem.Acquire(t); err != nil {
					return "", err
				}
				defer func() { _ = sem.Release() }()
				running++
				peak = max(peak, running)
				pr, err := aio.CreateSubprocessExec(t, "sh", []string{"-c", `echo "$JOB $(basename "$PWD")"; exit $CODE`},
					aio.WithStdout(aio.Pipe), aio.WithDir(filepath.Join(tmp, name)),
					aio.WithEnv([]string{"JOB=job-" + name, "CODE=" + strconv.Itoa(int(name[0])-97), "PATH=" + os.Getenv("PATH")}))
				if err != nil {
					return "", err
				}
				out, _, err := pr.Communicate(t, nil)
				if err != nil {
					return "", err
				}
				running--
				return fmt.Sprintf("('%s', %s)", strings.TrimSpace(string(out)), prc(pr)), nil
			}
		}
		results, err := asyncio.GatherFuncs(tk, job("a"), job("b"), job("c")).Await(tk)
		if err != nil {
			return err
		}
		p.log("jobs [%s] peak %d", strings.Join(results, ", "), peak)

		// signals a child does not handle
		p.restart()
		for _, s := range []struct {
			name string
			sig  syscall.Signal
		}{{"SIGINT", syscall.SIGINT}, {"SIGUSR1", syscall.SIGUSR1}, {"SIGTERM", syscall.SIGTERM}} {
			pr, err := aio.CreateSubprocessExec(tk, "sleep", []string{"10"})
			if err != nil {
				return err
			}
			if err := pr.SendSignal(s.sig); err != nil {
				return err
			}
			rc, err := pr.Wait(tk)
			if err != nil {
				return err
			}
			p.log("sleep got %s returncode %d %s", s.name, rc, pb(rc == -int(s.sig)))
		}
		pr, err := aio.CreateSubprocessExec(tk, "sh", []string{"-c", "trap 'exit 7' USR1; echo armed; while :; do sleep 0.01; done"}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return err
		}
		line, err := pr.Stdout.ReadLine(tk)
		if err != nil {
			return err
		}
		p.log("child %s", pbytes(bytes.TrimSpace(line)))
		if err := pr.SendSignal(syscall.SIGUSR1); err != nil {
			return err
		}
		rc, err := pr.Wait(tk)
		if err != nil {
			return err
		}
		p.log("trapping child returncode %d", rc)
		return nil
	})
}
