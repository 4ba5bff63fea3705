//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
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
			var wg sync.WaitGroup
			for c := 0; c < 4; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
					if err != nil {
						t.Error(err)
						return
					}
					defer conn.Close()
					msg := []byte(strings.Repeat(fmt.Sprint(c), size))
					buf := make([]byte, size)
					for i := 0; i < 20; i++ {
						if _, err := conn.Write(msg); err != nil {
							t.Error(err)
							return
						}
						if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != string(msg) {
							t.Errorf("%s %s: round trip %d: %q %v", mode, variant, i, buf, err)
							return
						}
					}
				}()
			}
			wg.Wait()
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
