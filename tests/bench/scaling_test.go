//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestScaleModes runs each scaling mode at its smallest size through
// runScale (the -w scale-* path) and checks the JSON line: workload, n, its
// own validation (every timer fired, every request echoed) and the metrics
// scripts/scaling.sh tabulates.
func TestScaleModes(t *testing.T) {
	metrics := map[string][]string{
		"scale-tasks": {"spawn_park_ns_per_task", "bytes_per_task", "stack_bytes_per_task", "sleep0_ns", "wakeup_ns"},
		"scale-timers": {"schedule_ns_per_timer", "schedule_far_ns_per_timer", "fire_ns_per_timer",
			"cancel_ns_per_timer", "purge_ns_per_timer"},
		"scale-conns": {"connect_ns_per_conn", "rtt_ns_median", "rtt_ns_p99", "concurrent_ns_per_req",
			"server_cpu_ns_per_req", "rtt_server_cpu_ns_per_req", "hot_rtt_ns_median", "hot_rtt_server_cpu_ns_per_req"},
	}
	for _, w := range []string{"scale-tasks", "scale-timers", "scale-conns"} {
		t.Run(w, func(t *testing.T) {
			n := scaleSizes[w][0]
			var out bytes.Buffer
			if err := runScale(w, n, &out); err != nil {
				t.Fatalf("runScale: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("printed %d lines, want 1: %q", len(lines), out.String())
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
				t.Fatalf("%q: %v", lines[0], err)
			}
			if got["workload"] != w || got["n"] != float64(n) {
				t.Errorf("workload/n = %v/%v, want %s/%d", got["workload"], got["n"], w, n)
			}
			if s, ok := got["skipped"]; ok {
				t.Fatalf("skipped at the smallest size: %v", s)
			}
			for _, k := range metrics[w] {
				v, ok := got[k].(float64)
				switch {
				case !ok || math.IsNaN(v) || math.IsInf(v, 0):
					t.Errorf("%s = %v, want a number", k, got[k])
				case strings.HasPrefix(k, "bytes_"):
					// A difference of two RSS readings: the GC may return
					// more than the tasks took, so it can be negative.
				case v <= 0:
					t.Errorf("%s = %v, want > 0", k, got[k])
				}
			}
			switch w {
			case "scale-tasks":
				if got["wakeups"] != float64(n) {
					t.Errorf("wakeups = %v, want %d", got["wakeups"], n)
				}
			case "scale-timers":
				if got["fired"] != float64(n) {
					t.Errorf("fired = %v, want %d", got["fired"], n)
				}
			case "scale-conns":
				want := 2*scaleConnsRTTs + n*max(2, scaleConnsRequests/n)
				if got["requests"] != float64(want) {
					t.Errorf("requests = %v, want %d", got["requests"], want)
				}
			}
		})
	}
}

// TestRaiseNofile checks that the descriptor limit is raised to what is
// needed and never above the hard limit.
func TestRaiseNofile(t *testing.T) {
	soft, hard, err := raiseNofile(256)
	if err != nil {
		t.Fatal(err)
	}
	if soft < min(256, hard) || soft > hard {
		t.Errorf("soft %d, hard %d after asking for 256", soft, hard)
	}
	soft, hard2, err := raiseNofile(hard + 1)
	if err != nil {
		t.Fatal(err)
	}
	if soft != hard || hard2 != hard {
		t.Errorf("asking for hard+1: soft %d, hard %d, want both %d", soft, hard2, hard)
	}
}
