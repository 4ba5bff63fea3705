// Package h48_blocking: what blocks the loop and what does not.
package h48_blocking

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A select with a default case polls: fine.
func poll(t *asyncio.T, ch chan int) (int, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return 0, false
	}
}

// time.After inside asyncio.Recv: the receive is awaited.
func recvTimeout(t *asyncio.T, ch chan int) (int, error) {
	select { // want `blockingcall: select without a default case`
	case v := <-ch:
		return v, nil
	case <-time.After(time.Second):
		return 0, nil
	}
}

func recvAfter(t *asyncio.T) error {
	_, _, err := asyncio.Recv(t, time.After(time.Second))
	return err
}

// A send with room on a local buffered channel: fine.
func buffered(t *asyncio.T) int {
	ch := make(chan int, 1)
	ch <- 1
	return <-ch
}

// Raw syscalls without cgo.
func rawRead(t *asyncio.T, fd int) (int, error) {
	buf := make([]byte, 64)
	return syscall.Read(fd, buf) // want `blockingcall: syscall\.Read inside a task blocks`
}

func rawWrite(t *asyncio.T, fd int) (int, error) {
	return syscall.Write(fd, []byte("x"))
}

// os.Process.Wait blocks until the child exits, as exec.Cmd.Wait does.
func procWait(t *asyncio.T) error {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		return err
	}
	_, err := cmd.Process.Wait() // want `blockingcall: os\.Process\.Wait inside a task blocks`
	return err
}

func cmdWait(t *asyncio.T, cmd *exec.Cmd) error {
	return cmd.Wait() // want `blockingcall: exec\.Cmd\.Wait inside a task blocks`
}

// A signal channel received from inside a task.
func waitSignal(t *asyncio.T) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	<-sigs // want `blockingcall: channel receive inside a task`
}

// context's Done channel.
func waitCtx(t *asyncio.T, ctx context.Context) error {
	<-ctx.Done() // want `blockingcall: channel receive inside a task`
	return ctx.Err()
}

// bufio on stdin.
func readLine(t *asyncio.T) (string, error) {
	r := bufio.NewReader(os.Stdin)
	return r.ReadString('\n') // want `blockingcall: bufio\.Reader\.ReadString on os\.Stdin inside a`
}

// json decoder on a dialled connection.
func decode(t *asyncio.T, addr string) (map[string]any, error) {
	var v map[string]any
	c, err := asyncio.Go(t, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	})
	if err != nil {
		return nil, err
	}
	err = json.NewDecoder(c).Decode(&v) // want `blockingcall: json\.Decoder\.Decode on a connection from`
	return v, err
}

// io.Copy to stdout from a file.
func cat(t *asyncio.T, f *os.File) error {
	_, err := io.Copy(os.Stdout, f) // want `blockingcall: io\.Copy on an \*os\.File inside`
	return err
}

// sync.Once loading a file inside a task.
var (
	once sync.Once
	cfg  []byte
)

func config(t *asyncio.T) []byte {
	once.Do(func() { cfg, _ = os.ReadFile("/etc/app.conf") }) // want `blockingcall: os\.ReadFile inside a task blocks`
	return cfg
}

// A helper that sleeps behind a method value is a miss (function values).
func retrySleep(d time.Duration) { time.Sleep(d) } // want retrySleep:`blocks: calls time\.Sleep`

func viaValue(t *asyncio.T) {
	f := retrySleep
	f(time.Millisecond)
}

// A deferred blocking call runs in the task too.
func deferredSleep(t *asyncio.T) {
	defer time.Sleep(time.Millisecond) // want `blockingcall: time\.Sleep inside a task blocks`
}

// A wait group waited on in the task.
func wgWait(t *asyncio.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done() }()
	wg.Wait() // want `blockingcall: sync\.WaitGroup\.Wait inside a task blocks`
}

// Reading from a pipe's read end.
func pipeRead(t *asyncio.T) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return io.ReadAll(r) // want `blockingcall: io\.ReadAll on an \*os\.File inside`
}

// time.Tick's channel.
func ticker(t *asyncio.T) {
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	<-tk.C // want `blockingcall: channel receive inside a task`
}

// A range over a closed buffered channel: fine.
func drain(t *asyncio.T) int {
	ch := make(chan int, 2)
	ch <- 1
	ch <- 2
	close(ch)
	n := 0
	for v := range ch {
		n += v
	}
	return n
}

// Reading a /proc file: fine.
func rss(t *asyncio.T) ([]byte, error) {
	return os.ReadFile("/proc/self/status")
}

// A /proc path built with filepath.Join or fmt.Sprintf: fine.
func childStat(t *asyncio.T, pid int) ([]byte, []byte, error) {
	a, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return a, b, err
}

// Still reported: a path that does not start in /proc, or a format that
// is not a constant.
func notProc(t *asyncio.T, dir string, pid int) ([]byte, []byte, error) {
	a, err := os.ReadFile(filepath.Join(dir, "proc", strconv.Itoa(pid))) // want `blockingcall: os\.ReadFile inside a task`
	if err != nil {
		return nil, nil, err
	}
	format := "/proc/%d/status"
	b, err := os.ReadFile(fmt.Sprintf(format, pid)) // want `blockingcall: os\.ReadFile inside a task`
	return a, b, err
}

// The lazy-init helper: sync.Once runs the load on the first call, on the
// caller's goroutine.
var (
	settingsOnce sync.Once
	settings     []byte
)

func loadSettings() { // want loadSettings:`blocks: calls os\.ReadFile`
	settings, _ = os.ReadFile("/etc/app/settings.json")
}

func lazySettings() []byte { // want lazySettings:`blocks: calls os\.ReadFile`
	settingsOnce.Do(func() { settings, _ = os.ReadFile("/etc/app/settings.json") })
	return settings
}

func lazySettingsNamed() []byte { // want lazySettingsNamed:`blocks: calls h48_blocking\.loadSettings through sync\.Once\.Do, which calls os\.ReadFile`
	settingsOnce.Do(loadSettings)
	return settings
}

func useSettings(t *asyncio.T) int {
	settingsOnce.Do(loadSettings)                         // want `blockingcall: h48_blocking\.loadSettings, given to sync\.Once\.Do, blocks`
	return len(lazySettings()) + len(lazySettingsNamed()) // want `blockingcall: h48_blocking\.lazySettings inside a task blocks` `blockingcall: h48_blocking\.lazySettingsNamed inside a task blocks`
}

// Walking or globbing a directory tree reads directories, as os.ReadDir
// does; under /proc it is served from memory.
func walk(t *asyncio.T, root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error { // want `blockingcall: filepath\.WalkDir inside a task blocks`
		out = append(out, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	more, err := filepath.Glob(filepath.Join(root, "*.json")) // want `blockingcall: filepath\.Glob inside a task blocks`
	return append(out, more...), err
}

func procGlob(t *asyncio.T) ([]string, error) {
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir("/proc/self/fd", func(p string, d fs.DirEntry, err error) error { return err })
	return fds, err
}
