//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || aix || solaris

package asyncio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// With a file descriptor registered the loop waits in the selector; the
// stall is reported there too.
func TestVirtualClockStallReportsWithSelector(t *testing.T) {
	ch := make(chan int)
	l, reports := stallLoop(t, func() { go func() { ch <- 7 }() })
	defer mustClose(t, l)
	p := make([]int, 2)
	if err := unix.Pipe(p); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if err := l.AddReader(p[0], func() { t.Error("the pipe is never written") }); err != nil {
		t.Fatal(err)
	}
	var site string
	task := CreateTask(l, func(x *T) (int, error) {
		site = siteOfNextLine()
		v, _, err := Recv(x, ch)
		return v, err
	}, WithName("w"))
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	l.RemoveReader(p[0])
	if v, err := task.Result(); v != 7 || err != nil {
		t.Fatalf("task: %v %v", v, err)
	}
	checkStall(t, *reports, []string{`Recv by task "w" at ` + site})
}
