//go:build linux

package aio

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Subprocesses closed at every moment: a cat fed through Communicate, a
// child that ignores SIGTERM (terminated, waited for in vain, killed), a
// child read line by line and one that outlives the scenario. Close kills
// and reaps every child still running and closes every pipe; a
// Communicate or Wait that completed kept its outcome.
func TestH44_SubprocessesClosedAtEveryMoment(t *testing.T) {
	bothWatches(t, func(t *testing.T) { closeAtEachIteration(t, 400, nil, subprocessScenario) })
}

func subprocessScenario(at *asyncio.T, s *h44State) error {
	{
		// One that outlives the scenario: only Close ends it.
		bg, err := CreateSubprocessExec(at, "sleep", []string{"1000"}, WithStdout(Pipe))
		if err != nil {
			return err
		}
		s.pids = append(s.pids, bg.Pid())
		bgWait := asyncio.CreateTask(at, bg.Wait)
		s.after(func(t *testing.T, completed bool) {
			if bgWait.Done() && !(s.viaRunner && bgWait.Cancelled()) {
				t.Errorf("the wait of a child that ran until Close completed: %v", bgWait.Err())
			}
			if rc, ok := bg.ReturnCode(); !ok || rc != -9 {
				t.Errorf("a child that ran until Close: return code %d, %v; want -9 (killed)", rc, ok)
			}
		})

		cat, err := CreateSubprocessExec(at, "cat", nil, WithStdin(Pipe), WithStdout(Pipe))
		if err != nil {
			return err
		}
		s.pids = append(s.pids, cat.Pid())
		var catOut []byte
		var catDone bool
		s.after(func(t *testing.T, completed bool) {
			if catDone && string(catOut) != strings.Repeat("hello\n", 1000) {
				t.Errorf("Communicate returned %d bytes", len(catOut))
			}
			if rc, ok := cat.ReturnCode(); catDone && (!ok || rc != 0) {
				t.Errorf("Communicate completed but the return code is %d, %v", rc, ok)
			}
		})
		out, _, err := cat.Communicate(at, []byte(strings.Repeat("hello\n", 1000)))
		if err != nil {
			return err
		}
		catOut, catDone = out, true

		// A child that ignores SIGTERM (the disposition survives exec).
		stubborn, err := CreateSubprocessExec(at, "sh", []string{"-c", "trap '' TERM; echo ready; exec sleep 1000"},
			WithStdout(Pipe))
		if err != nil {
			return err
		}
		s.pids = append(s.pids, stubborn.Pid())
		line, err := stubborn.Stdout.ReadLine(at)
		if err != nil {
			return err
		}
		if string(line) != "ready\n" {
			return errors.New("stubborn: read " + string(line))
		}
		if err := stubborn.Terminate(); err != nil {
			return err
		}
		if _, err := asyncio.WaitForFunc(at, 20*time.Millisecond, stubborn.Wait); asyncio.IsCancelled(err) {
			return err
		} else if !errors.Is(err, asyncio.ErrTimeout) {
			return errors.New("a child ignoring SIGTERM ended: " + describe(err))
		}
		if err := stubborn.Kill(); err != nil {
			return err
		}
		rc, err := stubborn.Wait(at)
		if err != nil {
			return err
		}
		if rc != -int(syscall.SIGKILL) {
			return errors.New("stubborn: unexpected return code")
		}
		return nil
	}
}
