//go:build linux

package aio

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A pty's master is a character device a read pipe can drive. When the
// slave side closes, reading the master fails with EIO: asyncio's read
// pipe ends the connection with that error and, EIO being how a pty says
// EOF, does not report it to the exception handler.
func TestPipes_PtyEndsWithEIO(t *testing.T) {
	clean(t)
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
			log = append(log, "handler: "+c.Message)
		})
		p := newStreamRecorder(at, "pty", &log)
		got := asyncio.NewFuture[struct{}](at)
		p.onData = func(p *streamRecorder, d []byte) { p.add(fmt.Sprintf("data %q", d)); got.SetResult(struct{}{}) }
		if _, _, err := ConnectReadPipe(at, func() Protocol { return p }, master); err != nil {
			return err
		}
		slave.Write([]byte("hi\n"))
		if _, err := got.Await(at); err != nil {
			return err
		}
		slave.Close()
		_, err := p.lost.Await(at)
		return err
	})
	expectLog(t, []string{"pty:made", `pty:data "hi\r\n"`, "pty:lost syscall=read EIO"}, log)
}
