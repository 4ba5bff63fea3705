//go:build unix

package ports_test

// Ports p125 onward (h34): signal handlers sent to the process itself,
// ... Same conventions as ports_test.go, ports50_test.go (network, on
// the simulated network), ports70_test.go (subprocesses) and
// ports111_test.go.

import (
	"fmt"
	"os"
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
