//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runIn runs the program in the test process.
func runIn(args ...string) (int, string, string) {
	var out, errOut strings.Builder
	rc := run(args, &out, &errOut)
	return rc, out.String(), errOut.String()
}

// The command's lines come through as it writes them, then its exit code.
func TestOutputLinesAndExitCode(t *testing.T) {
	rc, out, _ := runIn("sh", "-c", "echo one; echo two; exit 3")
	want := "| one\n| two\nexit code 3\n"
	if rc != 3 || !strings.HasSuffix(out, want) {
		t.Fatalf("rc %d, output %q; want 3 and ...%q", rc, out, want)
	}
}

// A command still running at the timeout is killed, and not left behind.
func TestTimeoutKillsTheChild(t *testing.T) {
	rc, out, _ := runIn("-timeout", "50ms", "sh", "-c", "echo started; exec sleep 1000")
	var pid int
	fmt.Sscanf(out, "started pid %d", &pid)
	want := "| started\nkilled the child\ntimed out\n"
	if rc != 124 || !strings.HasSuffix(out, want) {
		t.Fatalf("rc %d, output %q; want 124 and ...%q", rc, out, want)
	}
	if pid == 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
		t.Fatalf("child %d still exists", pid)
	}
}

// A program that does not exist: 127, as a shell says, with its name.
func TestProgramNotFound(t *testing.T) {
	rc, _, errOut := runIn("no-such-program-here")
	if rc != 127 || !strings.Contains(errOut, "no-such-program-here") {
		t.Fatalf("rc %d, stderr %q", rc, errOut)
	}
}

// buildExample builds this command with go build into a temporary
// directory and returns the binary's path.
func buildExample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "subprocess")
	if out, err := exec.Command(goTool(t), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// goTool is the go command of the toolchain running the test.
func goTool(t *testing.T) string {
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Ctrl-C, for real: the program, running a child, gets SIGINT once the
// child has said it started. asyncio.Run's handling cancels main, whose
// cleanup kills and reaps the child; the program says so and exits 130.
func TestCtrlCKillsTheChildAndExits130(t *testing.T) {
	cmd := exec.Command(buildExample(t), "sh", "-c", "echo started; exec sleep 1000")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var got []string
	var pid int
	for lines.Scan() {
		got = append(got, lines.Text())
		fmt.Sscanf(lines.Text(), "started pid %d", &pid)
		if lines.Text() == "| started" {
			break // the child runs: interrupt the program
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		got = append(got, lines.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v; want status 130", err)
	}
	want := []string{fmt.Sprintf("started pid %d", pid), "| started", "killed the child", "interrupted"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output %q, want %q", got, want)
	}
	if syscall.Kill(pid, 0) != syscall.ESRCH {
		t.Fatalf("child %d still exists", pid)
	}
}
