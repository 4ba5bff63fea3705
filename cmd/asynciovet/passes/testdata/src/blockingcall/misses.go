package blockingcall

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"blockinghelper"

	"github.com/go-asyncio/asyncio"
)

// Blocking calls the first version of the check missed (issue 19, item 5).

func readsAFile(t *asyncio.T) (int, error) {
	b, err := os.ReadFile("/etc/hosts") // want `os.ReadFile inside a task blocks the whole event loop until it returns; call it inside asyncio.Go`
	return len(b), err
}

func readsAnOpenFile(t *asyncio.T, f *os.File, buf []byte) (int, error) {
	return f.Read(buf) // want `os.File.Read inside a task blocks the whole event loop`
}

func scansStdin(t *asyncio.T) (string, error) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() { // want `bufio.Scanner.Scan on os.Stdin inside a task blocks the whole event loop until the read completes`
		return sc.Text(), nil
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n') // want `bufio.Reader.ReadString on os.Stdin inside a task`
	return line, err
}

// The request runs off the loop, but its body is read on it.
func readsAResponseBody(t *asyncio.T, c *http.Client, url string) ([]byte, error) {
	resp, err := asyncio.Go(t, func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		return c.Do(req)
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body) // want `io.ReadAll on the body of a response from net/http's client inside a task blocks the whole event loop until the read completes`
}

func decodesAResponseBody(t *asyncio.T, url string) (map[string]any, error) {
	resp, err := asyncio.Go(t, func(ctx context.Context) (*http.Response, error) {
		return http.Get(url)
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v map[string]any
	err = json.NewDecoder(resp.Body).Decode(&v) // want `json.Decoder.Decode on the body of a response from net/http's client inside a task`
	return v, err
}

// A connection dialled off the loop and read on it.
func readsADialledConn(t *asyncio.T, addr string, buf []byte) (int, error) {
	conn, err := asyncio.Go(t, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil { // want `net.Conn.Write on a connection from package net inside a task`
		return 0, err
	}
	return conn.Read(buf) // want `net.Conn.Read on a connection from package net inside a task`
}

func readsADialledConnDirectly(t *asyncio.T, buf []byte) (int, error) {
	conn, err := net.Dial("tcp", "example.com:80") // want `net.Dial inside a task`
	if err != nil {
		return 0, err
	}
	return conn.Read(buf) // want `net.Conn.Read on a connection from package net inside a task`
}

func readsAnFD(t *asyncio.T, fd int, buf []byte) (int, error) {
	return syscall.Read(fd, buf) // want `syscall.Read inside a task blocks the whole event loop until it returns; make the fd non-blocking and read it in a Loop.AddReader callback`
}

func scansWithFmt(t *asyncio.T) (string, error) {
	var s string
	_, err := fmt.Scanln(&s) // want `fmt.Scanln inside a task blocks the whole event loop until it returns; read standard input inside asyncio.Go`
	return s, err
}

// Blocking calls reached through helpers, in this package and another.

func retry(d time.Duration) { // want retry:"blocks: calls time.Sleep"
	time.Sleep(d)
}

func settings() ([]byte, error) { // want settings:"blocks: calls os.ReadFile"
	return os.ReadFile("/etc/app.conf")
}

func settingsTwice() ([]byte, error) { // want settingsTwice:"blocks: calls blockingcall.settings, which calls os.ReadFile"
	if b, err := settings(); err == nil {
		return b, nil
	}
	return settings()
}

func deepSettings() ([]byte, error) { // want deepSettings:"blocks: calls blockingcall.settingsTwice, which leads to os.ReadFile"
	return settingsTwice()
}

type backoff struct{ d time.Duration }

func (b *backoff) wait() { time.Sleep(b.d) } // want wait:"blocks: calls time.Sleep"

func viaHelpers(t *asyncio.T, b *backoff) error {
	retry(time.Millisecond)               // want `blockingcall.retry inside a task blocks the whole event loop until it returns: it calls time.Sleep; make it await \(pass it the task's \*asyncio.T\), or call it inside asyncio.Go\(t, ...\)`
	if _, err := settings(); err != nil { // want `blockingcall.settings inside a task blocks .*: it calls os.ReadFile`
		return err
	}
	if _, err := deepSettings(); err != nil { // want `blockingcall.deepSettings inside a task blocks .*: it calls blockingcall.settingsTwice, which leads to os.ReadFile`
		return err
	}
	b.wait()                                           // want `blockingcall.backoff.wait inside a task blocks .*: it calls time.Sleep`
	blockinghelper.Backoff(time.Second)                // want `blockinghelper.Backoff inside a task blocks .*: it calls time.Sleep`
	if _, err := blockinghelper.Config(); err != nil { // want `blockinghelper.Config inside a task blocks .*: it calls blockinghelper.load, which calls os.ReadFile`
		return err
	}
	t.Loop().CallSoon(func() {
		retry(time.Millisecond) // want `blockingcall.retry inside a loop callback`
	})
	return nil
}

// Helpers that do not block, or run the blocking part elsewhere: silent.
func notViaHelpers(t *asyncio.T, c *blockinghelper.Counter) error {
	c.Add()                         // a mutex is not a blocking fact
	blockinghelper.Later(func() {}) // sleeps on its own goroutine
	go retry(time.Second)           // a goroutine of its own
	_, err := asyncio.Go(t, func(ctx context.Context) ([]byte, error) {
		retry(time.Millisecond) // off the loop
		return settings()
	})
	return err
}

// A helper's blocking fd read is not a fact: the fd may be non-blocking, and
// a read in an AddReader callback finds it ready.
func readFD(fd int, buf []byte) (int, error) { return syscall.Read(fd, buf) }

func readerCallback(l *asyncio.Loop, fd int, buf []byte) error {
	return l.AddReader(fd, func() {
		syscall.Read(fd, buf) // the fd is ready: silent
		readFD(fd, buf)
		os.Stdin.Read(buf) // one read of a ready file: silent
	})
}

func stdinCallback(l *asyncio.Loop, buf []byte) error {
	return l.AddReader(0, func() {
		io.ReadAll(os.Stdin) // want `io.ReadAll on os.Stdin inside a loop callback`
	})
}

// Mutual recursion reaches its fixed point; generic helpers carry the fact
// on their origin.

func ping(n int) { // want ping:"blocks: calls blockingcall.pong, which calls time.Sleep"
	if n > 0 {
		pong(n - 1)
	}
}

func pong(n int) { // want pong:"blocks: calls time.Sleep"
	ping(n)
	time.Sleep(time.Millisecond)
}

func waitFor[V any](v V) V { // want waitFor:"blocks: calls time.Sleep"
	time.Sleep(time.Millisecond)
	return v
}

func viaRecursionAndGenerics(t *asyncio.T) int {
	ping(3)                // want `blockingcall.ping inside a task blocks .*: it calls blockingcall.pong, which calls time.Sleep`
	return waitFor[int](1) // want `blockingcall.waitFor inside a task blocks .*: it calls time.Sleep`
}
