//go:build unix

package aio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// WithDir("") and a WithEnv entry without "=" are mistakes no correct
// program makes: each is a *ValueError naming the option, before the
// protocol factory runs. WithDir("") ran the child in the parent's
// directory (exec.Cmd's default; Popen(cwd="") raises
// FileNotFoundError), and an entry "FOO" reached the child's environment
// as it was (exec.Cmd passes malformed entries on).
func TestSubprocessOptionMistakesAreValueErrors(t *testing.T) {
	clean(t)
	runNet(t, func(at *asyncio.T) error {
		calls := 0
		factory := func() SubprocessProtocol { calls++; return newProcRecorder(at) }
		cases := []struct {
			name string
			opts []Option
			want string
		}{
			{"empty dir", []Option{WithDir("")}, "WithDir: empty directory (leave WithDir out to run in the parent's)"},
			{"entry without =", []Option{WithEnv([]string{"PATH=/bin:/usr/bin", "FOO"})}, `WithEnv: entry 1 ("FOO") is not KEY=value`},
			{"empty entry", []Option{WithEnv([]string{""})}, `WithEnv: entry 0 ("") is not KEY=value`},
		}
		for _, c := range cases {
			_, _, err := SubprocessExec(at, factory, "/bin/true", nil, c.opts...)
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || ve.Msg != c.want {
				t.Errorf("%s: %s, want ValueError(%q)", c.name, describe(err), c.want)
			}
			if _, err := CreateSubprocessExec(at, "/bin/true", nil, c.opts...); !errors.As(err, &ve) || ve.Msg != c.want {
				t.Errorf("%s, CreateSubprocessExec: %s, want ValueError(%q)", c.name, describe(err), c.want)
			}
		}
		if calls != 0 {
			t.Errorf("the protocol factory ran %d times", calls)
		}
		return nil
	})
}

// A relative PATH entry in WithEnv is the child's, so with WithDir it is
// relative to that directory, as Popen's child changes to cwd= before it
// searches PATH. The program was looked for relative to the parent's
// directory, and not found.
func TestSubprocessRelativePathIsTheChildsDirectory(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"hello from $0\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "greet"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var got string
	runNet(t, func(at *asyncio.T) error {
		p, err := CreateSubprocessExec(at, "greet", nil, WithDir(dir), WithEnv([]string{"PATH=bin"}), WithStdout(Pipe))
		if err != nil {
			return err
		}
		out, _, err := p.Communicate(at, nil)
		got = string(out)
		return err
	})
	if want := "hello from bin/greet\n"; got != want {
		t.Errorf("child printed %q, want %q", got, want)
	}
}
