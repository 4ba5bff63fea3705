//go:build unix

package aio

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// TestProbeStreams_PauseAndResumeOverASocket: a reader over a real
// transport pauses reading past twice the limit and resumes at the limit
// or when a read has to wait, at the same moments as CPython 3.13's
// (PYENV_VERSION=3.13.0; b is the other end of a socketpair, tick() is
// five sleep(0)):
//
//	r, w = await asyncio.open_unix_connection(sock=a, limit=4)
//	b.send(b"x"*9)      # buf=9 paused=True reading=False
//	await r.read(1)     # buf=8 paused=True reading=False
//	await r.read(4)     # buf=4 paused=False reading=True
//	b.send(b"y"*100)    # buf=104 paused=True reading=False
//	t = create_task(r.readexactly(200))  # buf=104 paused=False reading=True
//	b.send(b"z"*95)     # buf=199, t waits
//	b.send(b"w"*10)     # t done (200 bytes); buf=9 paused=True reading=False
//	t = create_task(r.readline()); b.send(b"abcdefghij")
//	                    # ValueError Separator is not found... (the 9 bytes
//	                    # dropped at once); buf=10 paused=True reading=False
//	b.shutdown(SHUT_WR) # paused: EOF not seen, at_eof False, not closing
//	await r.read()      # b'abcdefghij'; at_eof True, buf=0 paused=False reading=True
func TestProbeStreams_PauseAndResumeOverASocket(t *testing.T) {
	clean(t)
	fds := socketpair(t, unix.SOCK_STREAM)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		defer unix.Close(fds[1])
		r, w, err := OpenUnixConnection(at, "", WithSocket(fds[0]), WithStreamLimit(4))
		if err != nil {
			return err
		}
		defer w.Close()
		tr := w.Transport()
		tick := func() error {
			for range 5 {
				if err := asyncio.Sleep(at, 0); err != nil {
					return err
				}
			}
			return nil
		}
		send := func(b []byte) error {
			if _, err := unix.Write(fds[1], b); err != nil {
				return err
			}
			return tick()
		}
		st := func(tag string) {
			log = append(log, fmt.Sprintf("%s: buf=%d paused=%s reading=%s", tag, len(r.buf), pyBool(r.paused), pyBool(tr.IsReading())))
		}
		if err := send(bytes.Repeat([]byte("x"), 9)); err != nil {
			return err
		}
		st("9 sent")
		if _, err := r.Read(at, 1); err != nil {
			return err
		}
		st("read 1")
		if _, err := r.Read(at, 4); err != nil {
			return err
		}
		st("read 4")
		if err := send(bytes.Repeat([]byte("y"), 100)); err != nil {
			return err
		}
		st("100 sent")
		tk := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 200) })
		if err := tick(); err != nil {
			return err
		}
		st("readexactly(200) waiting")
		if err := send(bytes.Repeat([]byte("z"), 95)); err != nil {
			return err
		}
		st("95 sent done=" + pyBool(tk.Done()))
		if err := send(bytes.Repeat([]byte("w"), 10)); err != nil {
			return err
		}
		st("10 sent done=" + pyBool(tk.Done()))
		b, err := tk.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("got %d", len(b)))
		tk = asyncio.CreateTask(at, r.ReadLine)
		if err := tick(); err != nil {
			return err
		}
		if err := send([]byte("abcdefghij")); err != nil {
			return err
		}
		st("10 more, readline done=" + pyBool(tk.Done()))
		_, err = tk.Await(at)
		log = append(log, pyOutcome(r, "readline", nil, err))
		st("after readline")
		if err := unix.Shutdown(fds[1], unix.SHUT_WR); err != nil {
			return err
		}
		if err := tick(); err != nil {
			return err
		}
		st(fmt.Sprintf("shut at_eof=%s closing=%s", pyBool(r.AtEOF()), pyBool(w.IsClosing())))
		b, err = r.Read(at, -1)
		log = append(log, fmt.Sprintf("read %s %v", pyBytes(b), err))
		st("end at_eof=" + pyBool(r.AtEOF()))
		return nil
	})
	expectLog(t, []string{
		"9 sent: buf=9 paused=True reading=False",
		"read 1: buf=8 paused=True reading=False",
		"read 4: buf=4 paused=False reading=True",
		"100 sent: buf=104 paused=True reading=False",
		"readexactly(200) waiting: buf=104 paused=False reading=True",
		"95 sent done=False: buf=199 paused=False reading=True",
		"10 sent done=True: buf=9 paused=True reading=False",
		"got 200",
		"10 more, readline done=True: buf=10 paused=True reading=False",
		"readline: ValueError Separator is not found, and chunk exceed the limit buf=b'abcdefghij'",
		"after readline: buf=10 paused=True reading=False",
		"shut at_eof=False closing=False: buf=10 paused=True reading=False",
		"read b'abcdefghij' <nil>",
		"end at_eof=True: buf=0 paused=False reading=True",
	}, log)
}
