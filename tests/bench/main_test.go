//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Re-executed by scaleConns as its client child (scale-conns-client).
	if arg := os.Getenv(scaleClientEnv); arg != "" {
		var port, n int
		if _, err := fmt.Sscan(arg, &port, &n); err != nil {
			fmt.Fprintf(os.Stderr, "%s=%q: %v\n", scaleClientEnv, arg, err)
			os.Exit(2)
		}
		if err := scaleConnsClient(port, n); err != nil {
			fmt.Fprintf(os.Stderr, "scale-conns-client: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestWorkloads runs every in-process workload with a small N and checks
// its record against the contract of WORKLOADS.md (the fields the shared
// driver's check_project.py and summarize.py read).
func TestWorkloads(t *testing.T) {
	extras := map[string][]string{
		"W4":  {"peak_rss_mb", "rss_base_mb"},
		"W5":  {"cpu_ns_per_op", "wall_minus_floor_ns_per_op", "schedule_cancel_ns_per_op", "fired"},
		"W6":  {"setup_ns_per_op", "cancelled"},
		"W7f": {"cancelled"},
		"W10": {"bytes_per_task", "stack_bytes_per_task", "heap_bytes_per_task"},
	}
	for _, w := range []string{"W1", "W2", "W3", "W4", "W5", "W6", "W7", "W7f", "W10"} {
		t.Run(w, func(t *testing.T) {
			const n = 2000
			r, err := workloads[w](n)
			if err != nil {
				t.Fatalf("validation failed: %v", err)
			}
			// Round-trip through JSON, as the driver reads it.
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got["impl"] != "go-asyncio" || got["workload"] != w || got["n"] != float64(n) {
				t.Errorf("record %s: impl/workload/n = %v/%v/%v, want go-asyncio/%s/%d", b, got["impl"], got["workload"], got["n"], w, n)
			}
			for _, k := range []string{"ns_per_op", "ops_per_s"} {
				if v, ok := got[k].(float64); !ok || v <= 0 {
					t.Errorf("record %s: %s = %v, want > 0", b, k, got[k])
				}
			}
			for _, k := range extras[w] {
				if _, ok := got[k]; !ok {
					t.Errorf("record %s: extra %q missing", b, k)
				}
			}
			switch w {
			case "W5":
				if got["fired"] != float64(n-n/2) {
					t.Errorf("W5 fired %v, want %d", got["fired"], n-n/2)
				}
			case "W6":
				if got["cancelled"] != float64(n) {
					t.Errorf("W6 cancelled %v, want %d", got["cancelled"], n)
				}
			case "W7f":
				if got["cancelled"] != float64(n-1) {
					t.Errorf("W7f cancelled %v, want %d", got["cancelled"], n-1)
				}
			}
		})
	}
}

// TestValidationFails checks that the validation really rejects a wrong
// outcome: W7f's check of the exception group.
func TestValidationFails(t *testing.T) {
	if err := checkOneValueError(nil); err == nil {
		t.Error("checkOneValueError(nil) = nil, want an error")
	}
}

// TestCLI checks the command-line contract: one JSON line and exit 0 for
// an in-process workload and for W9; for W8 "PORT n", then exit 0 on
// SIGTERM; exit 2 for an unknown -w.
func TestCLI(t *testing.T) {
	bin := t.TempDir() + "/bench"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-w", "W3", "-n", "1000").Output()
	if err != nil {
		t.Fatalf("bench -w W3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "{") {
		t.Errorf("bench -w W3 printed %q, want one JSON line", out)
	}
	// -runs 2: one line per run, numbered, with the run's page faults.
	out, err = exec.Command(bin, "-w", "W4", "-n", "1000", "-runs", "2").Output()
	if err != nil {
		t.Fatalf("bench -w W4 -runs 2: %v", err)
	}
	lines = strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("bench -w W4 -runs 2 printed %q, want two JSON lines", out)
	}
	for i, line := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		if f, ok := r["minor_faults"].(float64); r["run"] != float64(i+1) || !ok || f < 0 || r["workload"] != "W4" {
			t.Errorf("line %d: run %v, minor_faults %v, workload %v; want run %d and a count of faults", i+1, r["run"], r["minor_faults"], r["workload"], i+1)
		}
	}
	if err := exec.Command(bin, "-w", "W4", "-runs", "0").Run(); err == nil {
		t.Errorf("bench -runs 0 exited 0, want a usage error")
	}
	// W9 against a port nobody listens on: every request fails, and the
	// record says so.
	out, err = exec.Command(bin, "-w", "fanout-client", "-port", "1", "-n", "10", "-limit", "100").Output()
	var w9 map[string]any
	if err != nil || json.Unmarshal(out, &w9) != nil || w9["workload"] != "W9" || w9["failed"] != float64(10) {
		t.Errorf("bench -w fanout-client: %v, printed %q", err, out)
	}
	// W8: PORT line, then a clean exit on SIGTERM.
	srv := exec.Command(bin, "-w", "echo-server", "-variant", "streams", "-size", "64")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "PORT ") {
		t.Errorf("echo-server printed %q (%v), want PORT n", line, err)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("echo-server after SIGTERM: %v, want exit status 0", err)
	}
	cmd := exec.Command(bin, "-w", "nope")
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("bench -w nope: %v, want exit status 2", err)
	}
}

// The subprocess workloads with small sizes: their records carry what
// peers/run-subprocess.sh reads, and their validation passes.
func TestSubprocessWorkloads(t *testing.T) {
	old := subprocessRuns
	subprocessRuns = 1
	defer func() { subprocessRuns = old }()
	for _, c := range []struct {
		w    string
		n    int
		keys []string
	}{{"spawn", 20, []string{"ns_per_op", "limit"}}, {"cat", 1, []string{"mb_per_s", "mib"}}} {
		r, err := workloads[c.w](c.n)
		if err != nil {
			t.Fatalf("%s: %v", c.w, err)
		}
		if r["impl"] != "go-asyncio" || r["workload"] != c.w || r["n"] != c.n {
			t.Errorf("%s: record %v", c.w, r)
		}
		for _, k := range c.keys {
			if v, ok := r[k]; !ok || fmt.Sprint(v) == "0" {
				t.Errorf("%s: %s = %v", c.w, k, v)
			}
		}
	}
}
