//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// startEcho runs echoServer on a goroutine and returns its port and a
// stop function that waits for it to return.
func startEcho(t *testing.T, variant string, size int) (int, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- echoServer(variant, size, pw, stop)
		pw.Close()
	}()
	var port int
	line, err := bufio.NewReader(pr).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "PORT %d", &port); err != nil || serr != nil {
		t.Fatalf("server printed %q: %v %v", line, err, serr)
	}
	go io.Copy(io.Discard, pr)
	return port, func() {
		close(stop)
		if err := <-errc; err != nil {
			t.Errorf("echoServer: %v", err)
		}
	}
}

// W8: both server variants echo S-byte messages on several connections.
func TestW8EchoServer(t *testing.T) {
	for _, variant := range []string{"streams", "protocol"} {
		const size = 64
		port, stop := startEcho(t, variant, size)
		echoRoundTrips(t, port, size, 50, variant)
		stop()
	}
}

// echoRoundTrips checks an echo server on port: 4 connections at once,
// each sending rounds messages of size bytes and reading each back.
func echoRoundTrips(t *testing.T, port, size, rounds int, label string) {
	t.Helper()
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
			for i := 0; i < rounds; i++ {
				if _, err := conn.Write(msg); err != nil {
					t.Error(err)
					return
				}
				if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != string(msg) {
					t.Errorf("%s: round trip %d: %q %v", label, i, buf, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// startW9Server runs a stdlib HTTP/1.1 server like rawgo's: per
// connection, read the request head, write the fixed response, close. It
// returns the port and a stop function that waits for its goroutines.
func startW9Server(t *testing.T) (int, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, world!")
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, func() { ln.Close(); wg.Wait() }
}

// W9: the fan-out client against a stdlib HTTP/1.1 server like rawgo's.
func TestW9FanoutClient(t *testing.T) {
	port, stop := startW9Server(t)
	r, err := fanoutClient(port, 300, 20)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if r["ok"] != 300 || r["failed"] != 0 || r["workload"] != "W9" {
		t.Fatalf("record %v", r)
	}
}

// http-client: both variants fetch every page with net/http's client; an
// unknown variant is refused.
func TestHTTPClientWorkload(t *testing.T) {
	port, stop := startW9Server(t)
	defer stop()
	for _, variant := range []string{"bridge", "bridge-workers", "raw"} {
		r, err := httpClient(variant, port, 200, 20)
		if err != nil {
			t.Fatal(err)
		}
		if r["ok"] != int64(200) || r["failed"] != int64(0) || r["workload"] != "http-client" || r["variant"] != variant {
			t.Errorf("%s: record %v", variant, r)
		}
	}
	if _, err := httpClient("nope", port, 1, 1); err == nil {
		t.Error("unknown variant accepted")
	}
}
