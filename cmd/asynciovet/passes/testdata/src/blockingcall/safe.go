package blockingcall

import (
	"io"
	"os"
	"sync"

	"github.com/go-asyncio/asyncio"
)

// Code that the first version of the check reported although it cannot
// block (issue 19, item 5): silent now.

// Sends into a local buffered channel that provably has room, in
// straight-line code.
func sendsWithRoom(t *asyncio.T) (int, error) {
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	ch <- 3
	v := <-ch // a value is buffered
	ch <- 4   // room again
	close(ch)
	sum := v
	for x := range ch { // closed: drains the buffer and ends
		sum += x
	}
	last, ok := <-ch // closed: returns at once
	_, _ = last, ok
	return sum, nil
}

// The channel is handed to a goroutine only after the sends.
func sendsBeforeEscape(t *asyncio.T, out chan<- []int) error {
	ch := make(chan int, 2)
	ch <- 1
	ch <- 2
	close(ch)
	go func() {
		var all []int
		for v := range ch {
			all = append(all, v)
		}
		out <- all
	}()
	return nil
}

// A range over a channel closed before the loop, filled elsewhere.
func rangesAfterClose(t *asyncio.T, fill func(chan<- int)) (int, error) {
	ch := make(chan int, 8)
	fill(ch)
	close(ch)
	n := 0
	for v := range ch {
		n += v
	}
	if v, ok := <-ch; ok {
		n += v
	}
	return n, nil
}

// A local mutex that never escapes: nobody else can hold it.
func localMutex(t *asyncio.T) (int, error) {
	var mu sync.Mutex
	var rw sync.RWMutex
	n := 0
	mu.Lock()
	n++
	mu.Unlock()
	func() {
		rw.RLock()
		defer rw.RUnlock()
		n++
	}()
	return n, nil
}

// Still reported: the same shapes one step further.

func sendsPastTheBuffer(t *asyncio.T) error {
	ch := make(chan int, 2)
	ch <- 1
	ch <- 2
	ch <- 3 // want `channel send inside a task blocks`
	return nil
}

func receivesFromEmpty(t *asyncio.T) int {
	ch := make(chan int, 1)
	ch <- 1
	<-ch
	return <-ch // want `channel receive inside a task blocks`
}

func rangesBeforeClose(t *asyncio.T, fill func(chan<- int)) int {
	ch := make(chan int, 8)
	fill(ch)
	n := 0
	for v := range ch { // want `range over a channel inside a task blocks`
		n += v
	}
	close(ch)
	return n
}

func rangesAfterCloseOfReassigned(t *asyncio.T, fill func(chan<- int)) int {
	ch := make(chan int, 8)
	close(ch)
	ch = make(chan int)
	fill(ch)
	n := 0
	for v := range ch { // want `range over a channel inside a task blocks`
		n += v
	}
	return n
}

func sendsInALoop(t *asyncio.T) {
	ch := make(chan int, 3)
	for i := range 3 {
		ch <- i // want `channel send inside a task blocks`
	}
}

func sendsAfterEscape(t *asyncio.T, drain func(chan int)) {
	ch := make(chan int, 3)
	go drain(ch)
	ch <- 1 // want `channel send inside a task blocks`
}

func mutexSharedWithGoroutine(t *asyncio.T) {
	var mu sync.Mutex
	go func() {
		mu.Lock()
		defer mu.Unlock()
	}()
	mu.Lock() // want `sync.Mutex.Lock inside a task`
	mu.Unlock()
}

func mutexSharedWithTask(t *asyncio.T) {
	var mu sync.Mutex
	asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
		mu.Lock() // want `sync.Mutex.Lock inside a task`
		defer mu.Unlock()
		return 0, nil
	})
	mu.Lock() // want `sync.Mutex.Lock inside a task`
	mu.Unlock()
}

func mutexByAddress(t *asyncio.T, share func(*sync.Mutex)) {
	var mu sync.Mutex
	share(&mu)
	mu.Lock() // want `sync.Mutex.Lock inside a task`
	mu.Unlock()
}

// Files of the kernel's in-memory file systems are read at once.
func readsProc(t *asyncio.T, pid string) (int, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	if _, err := os.ReadFile("/proc/" + pid + "/stat"); err != nil {
		return 0, err
	}
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	status, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer status.Close()
	if _, err := io.ReadAll(status); err != nil {
		return 0, err
	}
	for _, d := range []string{"/proc/self/fd", "/dev/fd"} {
		if ents, err := os.ReadDir(d); err == nil {
			return len(ents), nil
		}
	}
	return len(b) + len(names), nil
}

func readsDisk(t *asyncio.T, dir string) (int, error) {
	ents, err := os.ReadDir(dir) // want `os.ReadDir inside a task blocks`
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile("/etc/" + dir) // want `os.ReadFile inside a task blocks`
	return len(ents) + len(b), err
}
