package cpython

// test_events.py's pty tests (os.openpty(): /dev/ptmx and its /dev/pts
// slave, as Linux has them).

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sys/unix"
)

// openpty is os.openpty(): the master and the slave, closed at the end of
// the test (closing twice is harmless).
func openpty(t *testing.T) (master, slave *os.File) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// setraw is tty.setraw(fd).
func setraw(t *testing.T, fd int) {
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Iflag &^= unix.BRKINT | unix.ICRNL | unix.INPCK | unix.ISTRIP | unix.IXON
	tio.Oflag &^= unix.OPOST
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	tio.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN | unix.ISIG
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
}

func TestEvents_test_read_pty_output(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		proto := newMyReadPipeProto(t, tk)
		master, slave := openpty(t)
		tr, p, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return proto }, master)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(proto), "p is proto")
		check(t, tr.(aio.Transport) == proto.transport, "t is proto.transport")
		eq(t, proto.state, []string{"INITIAL", "CONNECTED"})
		eq(t, proto.nbytes, 0)

		_, err = slave.Write([]byte("1"))
		noErr(t, err)
		if err := runUntilTask(tk, func() bool { return proto.nbytes > 0 }); err != nil {
			return err
		}
		eq(t, proto.nbytes, 1)

		_, err = slave.Write([]byte("2345"))
		noErr(t, err)
		if err := runUntilTask(tk, func() bool { return proto.nbytes >= 5 }); err != nil {
			return err
		}
		eq(t, proto.state, []string{"INITIAL", "CONNECTED"})
		eq(t, proto.nbytes, 5)

		slave.Close()
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, []string{"INITIAL", "CONNECTED", "EOF", "CLOSED"})
		// extra info is available
		check(t, proto.transport.ExtraInfo("pipe") != nil, "get_extra_info('pipe')")
		return nil
	})
}

func TestEvents_test_write_pty(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		master, slave := openpty(t)
		noErr(t, syscall.SetNonblock(int(master.Fd()), true))
		proto := newMyWritePipeProto(t, tk)
		transport, p, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return proto }, slave)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(proto), "p is proto")
		check(t, transport.(aio.Transport) == proto.transport, "transport is proto.transport")
		eq(t, proto.state, "CONNECTED")

		noErr(t, transport.Write([]byte("1")))
		var data []byte
		mfd := int(master.Fd())
		if err := runUntilTask(tk, func() bool { return readerPoll(t, mfd, &data) >= 1 }); err != nil {
			return err
		}
		eq(t, string(data), "1")

		noErr(t, transport.Write([]byte("2345")))
		if err := runUntilTask(tk, func() bool { return readerPoll(t, mfd, &data) >= 5 }); err != nil {
			return err
		}
		eq(t, string(data), "12345")
		eq(t, proto.state, "CONNECTED")

		master.Close()
		// extra info is available
		check(t, proto.transport.ExtraInfo("pipe") != nil, "get_extra_info('pipe')")
		// close connection
		proto.transport.Close()
		if _, err := proto.done.Await(tk); err != nil {
			return err
		}
		eq(t, proto.state, "CLOSED")
		return nil
	})
}

func TestEvents_test_bidirectional_pty(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		master, readSlave := openpty(t)
		wfd, err := syscall.Dup(int(readSlave.Fd()))
		if err != nil {
			return err
		}
		writeSlave := os.NewFile(uintptr(wfd), "write_slave")
		t.Cleanup(func() { writeSlave.Close() })
		setraw(t, int(readSlave.Fd()))

		readProto := newMyReadPipeProto(t, tk)
		readTransport, p, err := aio.ConnectReadPipe(tk, func() aio.Protocol { return readProto }, readSlave)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(readProto), "p is read_proto")
		check(t, readTransport.(aio.Transport) == readProto.transport, "read_transport is read_proto.transport")
		eq(t, readProto.state, []string{"INITIAL", "CONNECTED"})
		eq(t, readProto.nbytes, 0)

		writeProto := newMyWritePipeProto(t, tk)
		writeTransport, p, err := aio.ConnectWritePipe(tk, func() aio.Protocol { return writeProto }, writeSlave)
		if err != nil {
			return err
		}
		check(t, p == aio.Protocol(writeProto), "p is write_proto")
		check(t, writeTransport.(aio.Transport) == writeProto.transport, "write_transport is write_proto.transport")
		eq(t, writeProto.state, "CONNECTED")

		mfd := int(master.Fd())
		noErr(t, syscall.SetNonblock(mfd, true))
		var data []byte
		steps := []struct {
			write  func()
			until  func() bool
			data   string
			nbytes int
		}{
			{func() { noErr(t, writeTransport.Write([]byte("1"))) }, func() bool { return readerPoll(t, mfd, &data) >= 1 }, "1", 0},
			{func() { _, err := master.Write([]byte("a")); noErr(t, err) }, func() bool { return readProto.nbytes >= 1 }, "1", 1},
			{func() { noErr(t, writeTransport.Write([]byte("2345"))) }, func() bool { return readerPoll(t, mfd, &data) >= 5 }, "12345", 1},
			{func() { _, err := master.Write([]byte("bcde")); noErr(t, err) }, func() bool { return readProto.nbytes >= 5 }, "12345", 5},
		}
		for _, s := range steps {
			s.write()
			if err := runUntilTask(tk, s.until); err != nil {
				return err
			}
			eq(t, string(data), s.data)
			eq(t, readProto.state, []string{"INITIAL", "CONNECTED"})
			eq(t, readProto.nbytes, s.nbytes)
			eq(t, writeProto.state, "CONNECTED")
		}

		master.Close()

		readTransport.Close()
		if _, err := readProto.done.Await(tk); err != nil {
			return err
		}
		eq(t, readProto.state, []string{"INITIAL", "CONNECTED", "EOF", "CLOSED"})

		writeTransport.Close()
		if _, err := writeProto.done.Await(tk); err != nil {
			return err
		}
		eq(t, writeProto.state, "CLOSED")
		return nil
	})
}
