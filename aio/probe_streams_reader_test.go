//go:build unix

package aio

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// pyBytes is Python's repr of a bytes object (b'...'), for logs compared
// line for line with what a CPython 3.13 program prints.
func pyBytes(b []byte) string {
	var sb strings.Builder
	sb.WriteString("b'")
	for _, c := range b {
		switch {
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\\' || c == '\'':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteString("'")
	return sb.String()
}

// pyOutcome is how the CPython programs quoted in these tests print the
// outcome of a read: the value or the exception, then the buffer and
// at_eof (the buffer only, after an exception).
func pyOutcome(r *StreamReader, name string, b []byte, err error) string {
	var ire *IncompleteReadError
	var loe *LimitOverrunError
	var ve *asyncio.ValueError
	var re *asyncio.RuntimeError
	buf := pyBytes(r.buf)
	switch {
	case err == nil:
		return fmt.Sprintf("%s: %s buf=%s eof=%v", name, pyBytes(b), buf, pyBool(r.AtEOF()))
	case errors.As(err, &ire):
		exp := "None"
		if ire.Expected >= 0 {
			exp = fmt.Sprint(ire.Expected)
		}
		return fmt.Sprintf("%s: IRE partial=%s expected=%s buf=%s", name, pyBytes(ire.Partial), exp, buf)
	case errors.As(err, &ve):
		// before LimitOverrunError: ReadLine's error is both, and asyncio
		// raises a ValueError
		return fmt.Sprintf("%s: ValueError %s buf=%s", name, ve.Msg, buf)
	case errors.As(err, &loe):
		return fmt.Sprintf("%s: LOE %s consumed=%d buf=%s", name, loe.Msg, loe.Consumed, buf)
	case errors.As(err, &re):
		return fmt.Sprintf("%s: RuntimeError %s buf=%s", name, re.Msg, buf)
	case asyncio.IsCancelled(err):
		return fmt.Sprintf("%s: CancelledError buf=%s", name, buf)
	}
	return fmt.Sprintf("%s: %v buf=%s", name, err, buf)
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// TestProbeStreams_ReaderAgainstCPython: the reader fed directly, every
// outcome as CPython 3.13 prints it for the equivalent program
// (PYENV_VERSION=3.13.0; FT is a transport that logs pause_reading and
// resume_reading, do(name, coro) awaits and prints as pyOutcome does):
//
//	r = asyncio.StreamReader(limit=4); r.set_transport(FT(log))
//	r.feed_data(b"abcd\nabcde\nX")
//	await do("rl4", r.readline()); await do("rl5", r.readline())
//	r.feed_data(b"abcd"); t = create_task(r.readline()); await sleep(0)
//	r.feed_data(b"e"); await do("rl-nosep", t)
//	r = asyncio.StreamReader(limit=2)
//	r.feed_data(b"xxabcd"); await do("longsep-ok", r.readuntil(b"abcd"))
//	r.feed_data(b"xxxabcd"); await do("longsep-over", r.readuntil(b"abcd"))
//	r._buffer.clear(); r.feed_data(b"xxxxx")
//	t = create_task(r.readuntil(b"abcd")); await sleep(0)   # waits
//	r.feed_data(b"x"); await do("longsep-notfound", t)
//	r._buffer.clear(); r.feed_data(b"xxab")
//	t = create_task(r.readuntil(b"abcd")); await sleep(0)   # waits
//	r.feed_data(b"cd"); await do("longsep-split", t)
//	r = asyncio.StreamReader(limit=100); r.feed_data(b"a--b==c")
//	await do("tuple", r.readuntil((b"==", b"--")))   # and "tuple2"
//	r.feed_eof(); await do("tuple-eof", r.readuntil((b"==", b"--")))
//	await do("tuple-empty", r.readuntil(()))
//	await do("tuple-emptysep", r.readuntil((b"", b"x")))
//	r = asyncio.StreamReader(limit=4); r.set_transport(FT(log))
//	await do("rx0", r.readexactly(0)); r.feed_data(b"0123456789")
//	await do("rx3", r.readexactly(3)); await do("rx3b", r.readexactly(3))
//	r.feed_eof(); await do("rx9", r.readexactly(9)); await do("read0", r.read(0))
//	r = asyncio.StreamReader(limit=4); r.feed_data(b"abc"); r.feed_eof()
//	read(2), read(5), read(5), read(-1), read()
//	r = asyncio.StreamReader(limit=4); r.feed_data(b"abc")
//	r.set_exception(ValueError("boom")); r.feed_data(b"def")
//	await do("exc read", r.read(1)); r.feed_eof()   # at_eof False
//	r = asyncio.StreamReader(limit=4); t = create_task(r.readexactly(5))
//	await sleep(0); r.feed_data(b"ab"); await sleep(0); r.feed_eof()
//	await do("rx-eofwait", t)
//	r = asyncio.StreamReader(limit=4); t = create_task(r.readuntil(b"!"))
//	await sleep(0); read(3), readexactly(2), readline(), read()
//	r.feed_data(b"ab"); await do("c-read-buffered", r.read(1))
//	r.feed_data(b"!"); await do("c-first", t)
func TestProbeStreams_ReaderAgainstCPython(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		do := func(r *StreamReader, name string, b []byte, err error) {
			log = append(log, pyOutcome(r, name, b, err))
		}
		task := func(fn func(t *asyncio.T) ([]byte, error)) (*asyncio.Task[[]byte], error) {
			tk := asyncio.CreateTask(at, fn)
			return tk, asyncio.Sleep(at, 0)
		}
		r := NewStreamReader(at, 4)
		r.setTransport(&fakeTransport{log: &log})
		r.FeedData([]byte("abcd\nabcde\nX"))
		b, err := r.ReadLine(at)
		do(r, "rl4", b, err)
		b, err = r.ReadLine(at)
		do(r, "rl5", b, err)
		r.FeedData([]byte("abcd"))
		tk, err := task(r.ReadLine)
		if err != nil {
			return err
		}
		r.FeedData([]byte("e"))
		b, err = tk.Await(at)
		do(r, "rl-nosep", b, err)

		r = NewStreamReader(at, 2)
		abcd := []byte("abcd")
		r.FeedData([]byte("xxabcd"))
		b, err = r.ReadUntil(at, abcd)
		do(r, "longsep-ok", b, err)
		r.FeedData([]byte("xxxabcd"))
		b, err = r.ReadUntil(at, abcd)
		do(r, "longsep-over", b, err)
		r.buf = nil
		r.FeedData([]byte("xxxxx"))
		tk, err = task(func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, abcd) })
		if err != nil {
			return err
		}
		log = append(log, "waiting="+pyBool(!tk.Done()))
		r.FeedData([]byte("x"))
		b, err = tk.Await(at)
		do(r, "longsep-notfound", b, err)
		r.buf = nil
		r.FeedData([]byte("xxab"))
		tk, err = task(func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, abcd) })
		if err != nil {
			return err
		}
		log = append(log, "waiting="+pyBool(!tk.Done()))
		r.FeedData([]byte("cd"))
		b, err = tk.Await(at)
		do(r, "longsep-split", b, err)

		r = NewStreamReader(at, 100)
		r.FeedData([]byte("a--b==c"))
		seps := [][]byte{[]byte("=="), []byte("--")}
		b, err = r.ReadUntil(at, seps...)
		do(r, "tuple", b, err)
		b, err = r.ReadUntil(at, seps...)
		do(r, "tuple2", b, err)
		r.FeedEOF()
		b, err = r.ReadUntil(at, seps...)
		do(r, "tuple-eof", b, err)
		b, err = r.ReadUntil(at)
		do(r, "tuple-empty", b, err)
		b, err = r.ReadUntil(at, []byte(""), []byte("x"))
		do(r, "tuple-emptysep", b, err)

		r = NewStreamReader(at, 4)
		r.setTransport(&fakeTransport{log: &log})
		b, err = r.ReadExactly(at, 0)
		do(r, "rx0", b, err)
		r.FeedData([]byte("0123456789"))
		log = append(log, "paused="+pyBool(r.paused))
		b, err = r.ReadExactly(at, 3)
		do(r, "rx3", b, err)
		log = append(log, "paused="+pyBool(r.paused))
		b, err = r.ReadExactly(at, 3)
		do(r, "rx3b", b, err)
		log = append(log, "paused="+pyBool(r.paused))
		r.FeedEOF()
		b, err = r.ReadExactly(at, 9)
		do(r, "rx9", b, err)
		b, err = r.Read(at, 0)
		do(r, "read0", b, err)

		r = NewStreamReader(at, 4)
		r.FeedData([]byte("abc"))
		r.FeedEOF()
		log = append(log, "at_eof="+pyBool(r.AtEOF()))
		for _, c := range []struct {
			name string
			n    int
		}{{"read2", 2}, {"read5", 5}, {"read5b", 5}, {"read-1", -1}, {"read-1b", -1}} {
			b, err = r.Read(at, c.n)
			do(r, c.name, b, err)
		}

		r = NewStreamReader(at, 4)
		r.FeedData([]byte("abc"))
		r.SetException(&asyncio.ValueError{Msg: "boom"})
		r.FeedData([]byte("def"))
		b, err = r.Read(at, 1)
		do(r, "exc read", b, err)
		r.FeedEOF()
		log = append(log, fmt.Sprintf("exc at_eof=%s exception=ValueError('%s')", pyBool(r.AtEOF()), r.Err().(*asyncio.ValueError).Msg))

		r = NewStreamReader(at, 4)
		tk, err = task(func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 5) })
		if err != nil {
			return err
		}
		r.FeedData([]byte("ab"))
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.FeedEOF()
		b, err = tk.Await(at)
		do(r, "rx-eofwait", b, err)

		r = NewStreamReader(at, 4)
		tk, err = task(func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, []byte("!")) })
		if err != nil {
			return err
		}
		b, err = r.Read(at, 3)
		do(r, "c-read", b, err)
		b, err = r.ReadExactly(at, 2)
		do(r, "c-readexactly", b, err)
		b, err = r.ReadLine(at)
		do(r, "c-readline", b, err)
		b, err = r.Read(at, -1)
		do(r, "c-read-1", b, err)
		r.FeedData([]byte("ab"))
		b, err = r.Read(at, 1)
		do(r, "c-read-buffered", b, err)
		r.FeedData([]byte("!"))
		b, err = tk.Await(at)
		do(r, "c-first", b, err)
		return nil
	})
	want := strings.Split(strings.TrimSpace(`
pause
rl4: b'abcd\n' buf=b'abcde\nX' eof=False
resume
rl5: ValueError Separator is found, but chunk is longer than limit buf=b'X'
rl-nosep: ValueError Separator is not found, and chunk exceed the limit buf=b'e'
longsep-ok: b'xxabcd' buf=b'' eof=False
longsep-over: LOE Separator is found, but chunk is longer than limit consumed=3 buf=b'xxxabcd'
waiting=True
longsep-notfound: LOE Separator is not found, and chunk exceed the limit consumed=3 buf=b'xxxxxx'
waiting=True
longsep-split: b'xxabcd' buf=b'' eof=False
tuple: b'a--' buf=b'b==c' eof=False
tuple2: b'b==' buf=b'c' eof=False
tuple-eof: IRE partial=b'c' expected=None buf=b''
tuple-empty: ValueError Separator should contain at least one element buf=b''
tuple-emptysep: ValueError Separator should be at least one-byte string buf=b''
rx0: b'' buf=b'' eof=False
pause
paused=True
rx3: b'012' buf=b'3456789' eof=False
paused=True
resume
rx3b: b'345' buf=b'6789' eof=False
paused=False
rx9: IRE partial=b'6789' expected=9 buf=b''
read0: b'' buf=b'' eof=True
at_eof=False
read2: b'ab' buf=b'c' eof=False
read5: b'c' buf=b'' eof=True
read5b: b'' buf=b'' eof=True
read-1: b'' buf=b'' eof=True
read-1b: b'' buf=b'' eof=True
exc read: ValueError boom buf=b'abcdef'
exc at_eof=False exception=ValueError('boom')
rx-eofwait: IRE partial=b'ab' expected=5 buf=b''
c-read: RuntimeError read() called while another coroutine is already waiting for incoming data buf=b''
c-readexactly: RuntimeError readexactly() called while another coroutine is already waiting for incoming data buf=b''
c-readline: RuntimeError readuntil() called while another coroutine is already waiting for incoming data buf=b''
c-read-1: RuntimeError read() called while another coroutine is already waiting for incoming data buf=b''
c-read-buffered: b'a' buf=b'b' eof=False
c-first: b'b!' buf=b'' eof=False`), "\n")
	expectLog(t, want, log)
}

// TestProbeStreams_HugeLimitDoesNotPause: a limit past half of math.MaxInt
// (math.MaxInt is the Go way to say "no limit") must not overflow the
// "more than twice the limit" test: CPython 3.13, whose integers do not
// overflow, never pauses such a reader (PYENV_VERSION=3.13.0):
//
//	r = asyncio.StreamReader(limit=sys.maxsize); r.set_transport(FT(log))
//	r.feed_data(b"abc"); r._paused                  # False
//	r.feed_data(b"x" * 100000); r._paused           # False
//	len(await r.read(5))                            # 5
//	t = create_task(r.readuntil(b"!")); await sleep(0); r.feed_data(b"!")
//	len(await t)                                    # 99999
//	r = asyncio.StreamReader(limit=sys.maxsize // 2 + 1); ...
//	r.feed_data(b"abc"); r._paused                  # False
//
// and no pause_reading or resume_reading reaches the transport.
func TestProbeStreams_HugeLimitDoesNotPause(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, math.MaxInt)
		r.setTransport(&fakeTransport{log: &log})
		r.FeedData([]byte("abc"))
		log = append(log, "paused="+pyBool(r.paused))
		r.FeedData(make([]byte, 100000))
		log = append(log, "paused="+pyBool(r.paused))
		b, err := r.Read(at, 5)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("read %d", len(b)))
		tk := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, []byte("!")) })
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		r.FeedData([]byte("!"))
		b, err = tk.Await(at)
		if err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("readuntil %d", len(b)))
		r = NewStreamReader(at, math.MaxInt/2+1)
		r.setTransport(&fakeTransport{log: &log})
		r.FeedData([]byte("abc"))
		log = append(log, "half+1 paused="+pyBool(r.paused))
		return nil
	})
	expectLog(t, []string{"paused=False", "paused=False", "read 5", "readuntil 99999", "half+1 paused=False"}, log)
}
