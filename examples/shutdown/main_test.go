//go:build unix

package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildExample builds this command with go build and returns its path.
func buildExample(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "shutdown")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The server, run as a process of its own, with a client connected and
// served, gets a real SIGINT or SIGTERM: it stops accepting, its handler
// is cancelled and says goodbye to the client, the connection closes, and
// the process exits 0.
func TestShutdownOnSignal(t *testing.T) {
	bin := buildExample(t)
	for _, c := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "interrupt"}, {syscall.SIGTERM, "terminated"}} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || !strings.HasPrefix(lines.Text(), "listening on ") {
				t.Fatalf("first line %q", lines.Text())
			}
			addr := strings.TrimPrefix(lines.Text(), "listening on ")
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			replies := bufio.NewReader(conn)
			fmt.Fprintf(conn, "hello\n")
			if line, err := replies.ReadString('\n'); line != "HELLO\n" || err != nil {
				t.Fatalf("echo: %q %v", line, err)
			}
			// The handler is running: stop the server.
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			if line, err := replies.ReadString('\n'); line != "server shutting down, goodbye\n" || err != nil {
				t.Fatalf("goodbye: %q %v", line, err)
			}
			if rest, err := replies.ReadString('\n'); rest != "" || err == nil {
				t.Fatalf("after goodbye: %q %v; want EOF", rest, err)
			}
			var got []string
			for lines.Scan() {
				got = append(got, lines.Text())
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit: %v; want status 0", err)
			}
			want := []string{"got " + c.name + ": stop accepting", "cancelling 1 client handlers", "all clients gone: bye"}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("output %q, want %q", got, want)
			}
		})
	}
}
