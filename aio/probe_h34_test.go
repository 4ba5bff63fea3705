//go:build unix

package aio

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

// TestCommunicateDropsInputWithoutStdinPipe: asyncio's communicate(input)
// feeds stdin only when the child has a stdin pipe, and otherwise drops
// the input (tests/ports p126's run_tool helper hands its input over
// whatever the child's stdin is). It used to fail with a *ValueError.
func TestCommunicateDropsInputWithoutStdinPipe(t *testing.T) {
	clean(t)
	var out, errOut []byte
	var rc int
	runNet(t, func(at *asyncio.T) error {
		for _, stdin := range []Redirect{DevNull, Inherit} {
			p, err := CreateSubprocessExec(at, "echo", []string{"hi"}, WithStdin(stdin), WithStdout(Pipe))
			if err != nil {
				return err
			}
			if out, errOut, err = p.Communicate(at, []byte("dropped\n")); err != nil {
				t.Errorf("Communicate with input, stdin %v: %v", stdin, err)
			}
			if string(out) != "hi\n" || errOut != nil {
				t.Errorf("stdin %v: stdout %q stderr %q, want \"hi\\n\" and nil", stdin, out, errOut)
			}
			if rc, err = p.Wait(at); err != nil || rc != 0 {
				t.Errorf("stdin %v: Wait %d %v", stdin, rc, err)
			}
		}
		return nil
	})
}
