//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// W11 and W12 print the contract's JSON line and validate their results.
func TestGroupWorkloads(t *testing.T) {
	cases := []struct {
		name    string
		run     func() (rec, error)
		variant string
		n       int
	}{
		{"W11", func() (rec, error) { return w11(2000, 1) }, "loops1", 2000},
		{"W11", func() (rec, error) { return w11(2000, 2) }, "loops2", 2000},
		{"W12", func() (rec, error) { return w12(500, "") }, "task", 500},
		{"W12", func() (rec, error) { return w12(500, "callback") }, "callback", 500},
		{"W12", func() (rec, error) { return w12(500, "mechanism-floor") }, "mechanism-floor", 500},
	}
	for _, c := range cases {
		t.Run(c.name+"-"+c.variant, func(t *testing.T) {
			r, err := c.run()
			if err != nil {
				t.Fatalf("validation failed: %v", err)
			}
			b, _ := json.Marshal(r)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got["impl"] != "go-asyncio" || got["workload"] != c.name || got["variant"] != c.variant || got["n"] != float64(c.n) || got["ns_per_op"].(float64) <= 0 {
				t.Errorf("record %s", b)
			}
		})
	}
	if _, err := w12(10, "bogus"); err == nil {
		t.Errorf("W12 with an unknown variant did not fail")
	}
}

// W8 on a group: every mode and variant echoes.
func TestW8EchoServerOnAGroup(t *testing.T) {
	for _, mode := range []string{"reuseport", "roundrobin", "leastconns"} {
		for _, variant := range []string{"streams", "protocol"} {
			const size = 64
			pr, pw := io.Pipe()
			stop := make(chan struct{})
			errc := make(chan error, 1)
			go func() {
				errc <- groupEchoServer(variant, size, 2, mode, pw, stop)
				pw.Close()
			}()
			var port int
			line, err := bufio.NewReader(pr).ReadString('\n')
			if _, serr := fmt.Sscanf(line, "PORT %d", &port); err != nil || serr != nil {
				t.Fatalf("server printed %q: %v %v", line, err, serr)
			}
			go io.Copy(io.Discard, pr)
			echoRoundTrips(t, port, size, 20, mode+" "+variant)
			close(stop)
			if err := <-errc; err != nil {
				t.Errorf("%s %s: groupEchoServer: %v", mode, variant, err)
			}
		}
	}
	if err := groupEchoServer("streams", 64, 2, "bogus", io.Discard, nil); err == nil {
		t.Errorf("an unknown -group-mode did not fail")
	}
}
