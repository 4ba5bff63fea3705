package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runVirtual runs main as a task on a virtual-time loop.
func runVirtual(t *testing.T, main func(t *asyncio.T) error) {
	t.Helper()
	if _, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) { return struct{}{}, main(at) }, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
}

func newReader(t *testing.T, owner asyncio.LoopOwner, limit int) *StreamReader {
	t.Helper()
	r, err := NewStreamReader(owner, limit)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSTREAM1_LimitValidation(t *testing.T) {
	l := asyncio.NewTestLoop()
	defer l.Close()
	_, err := NewStreamReader(l, 0)
	var ve *asyncio.ValueError
	if !errors.As(err, &ve) || ve.Msg != "Limit cannot be <= 0" {
		t.Fatalf("NewStreamReader(0) = %v", err)
	}
	if r := newReader(t, l, DefaultStreamLimit); r.limit != 65536 {
		t.Fatalf("default limit %d", r.limit)
	}
}

func TestSTREAM3_SecondReaderIsRuntimeError(t *testing.T) {
	var got error
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 100)
		first := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 10) })
		asyncio.Sleep(at, 0)
		_, got = r.ReadLine(at)
		r.FeedData([]byte("x"))
		_, err := first.Await(at)
		return err
	})
	if got == nil || got.Error() != "asyncio: readuntil() called while another coroutine is already waiting for incoming data" {
		t.Fatalf("second read: %v", got)
	}
}

func TestSTREAM4_ReadSemantics(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 4)
		b, _ := r.Read(at, 0)
		log = append(log, fmt.Sprintf("n=0:%q", b))
		r.FeedData([]byte("abcdef"))
		b, _ = r.Read(at, 2)
		log = append(log, fmt.Sprintf("n=2:%q", b))
		waiter := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 100) })
		asyncio.Sleep(at, 0)
		b, _ = waiter.Await(at)
		log = append(log, fmt.Sprintf("n=100:%q", b))
		r.FeedData([]byte("0123456789"))
		r.FeedEOF()
		b, _ = r.Read(at, -1)
		log = append(log, fmt.Sprintf("n=-1:%q", b))
		b, err := r.Read(at, 5)
		log = append(log, fmt.Sprintf("eof:%q %v %v", b, err, r.AtEOF()))
		return nil
	})
	want := []string{`n=0:""`, `n=2:"ab"`, `n=100:"cdef"`, `n=-1:"0123456789"`, `eof:"" <nil> true`}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func TestSTREAM5_ReadExactlyIncomplete(t *testing.T) {
	var got error
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 100)
		r.FeedData([]byte("abc"))
		r.FeedEOF()
		_, got = r.ReadExactly(at, 5)
		if !r.AtEOF() {
			return errors.New("buffer not cleared")
		}
		if _, err := r.ReadExactly(at, -1); !errors.Is(err, asyncio.ErrValue) {
			return fmt.Errorf("n<0: %v", err)
		}
		return nil
	})
	var ie *IncompleteReadError
	if !errors.As(got, &ie) || string(ie.Partial) != "abc" || ie.Expected != 5 ||
		got.Error() != "3 bytes read on a total of 5 expected bytes" || !errors.Is(got, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", got)
	}
}

// A cancelled ReadExactly loses nothing: what it saw stays buffered.
func TestSTREAM5_CancelledReadExactlyKeepsBytes(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 100)
		reader := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, 10) })
		asyncio.Sleep(at, 0)
		r.FeedData([]byte("abc"))
		asyncio.Sleep(at, 0) // the reader wakes, sees 3 < 10 bytes, waits again
		reader.Cancel()
		_, err := reader.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v buffered=%q", asyncio.IsCancelled(err), r.buf))
		r.FeedData([]byte("defghij"))
		b, err := r.ReadExactly(at, 10)
		log = append(log, fmt.Sprintf("%q %v", b, err))
		return nil
	})
	want := []string{`cancelled=true buffered="abc"`, `"abcdefghij" <nil>`}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func TestSTREAM6_ReadUntilLimits(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 10)
		_, err := r.ReadUntil(at, nil)
		log = append(log, err.Error())
		r.FeedData([]byte("0123456789abcdef")) // 16 bytes, no separator
		_, err = r.ReadUntil(at, []byte("\n"))
		var lo *LimitOverrunError
		errors.As(err, &lo)
		log = append(log, fmt.Sprintf("%s consumed=%d buffered=%d", lo.Msg, lo.Consumed, len(r.buf)))
		r.buf = nil
		r.FeedData([]byte("0123456789abc\nrest"))
		_, err = r.ReadUntil(at, []byte("\n"))
		errors.As(err, &lo)
		log = append(log, fmt.Sprintf("%s consumed=%d", lo.Msg, lo.Consumed))
		r.buf = nil
		r.FeedData([]byte("ab||cd"))
		b, _ := r.ReadUntil(at, []byte("||"))
		log = append(log, string(b))
		r.FeedEOF()
		_, err = r.ReadUntil(at, []byte("||"))
		log = append(log, err.Error())
		return nil
	})
	want := []string{
		"asyncio: Separator should be at least one-byte string",
		"Separator is not found, and chunk exceed the limit consumed=16 buffered=16",
		"Separator is found, but chunk is longer than limit consumed=13",
		"ab||",
		"2 bytes read on a total of undefined expected bytes",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// An oversized line is dropped and reported; the stream stays usable.
func TestSTREAM7_OversizedLineStreamStaysUsable(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 10)
		r.FeedData([]byte("this line is too long\nnext\n"))
		_, err := r.ReadLine(at)
		var lo *LimitOverrunError
		log = append(log, fmt.Sprintf("%v value=%v overrun=%v", err, errors.Is(err, asyncio.ErrValue), errors.As(err, &lo)))
		line, err := r.ReadLine(at)
		log = append(log, fmt.Sprintf("%q %v", line, err))
		r.FeedData([]byte("0123456789abcdef")) // no newline buffered: all dropped
		_, err = r.ReadLine(at)
		log = append(log, fmt.Sprintf("%v buffered=%d", err, len(r.buf)))
		r.FeedData([]byte("ok\nlast"))
		line, _ = r.ReadLine(at)
		log = append(log, string(line))
		r.FeedEOF()
		line, _ = r.ReadLine(at)
		log = append(log, string(line))
		line, _ = r.ReadLine(at)
		log = append(log, fmt.Sprintf("%q", line))
		return nil
	})
	want := []string{
		"asyncio: Separator is found, but chunk is longer than limit value=true overrun=true",
		`"next\n" <nil>`,
		"asyncio: Separator is not found, and chunk exceed the limit buffered=0",
		"ok\n",
		"last",
		`""`,
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func TestSTREAM3_StoredExceptionRaisedByNextRead(t *testing.T) {
	boom := errors.New("boom")
	var got []error
	runVirtual(t, func(at *asyncio.T) error {
		r := newReader(t, at, 10)
		waiting := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return r.Read(t, 1) })
		asyncio.Sleep(at, 0)
		r.SetException(boom)
		_, err := waiting.Await(at)
		got = append(got, err)
		_, err = r.ReadLine(at)
		got = append(got, err)
		return nil
	})
	if len(got) != 2 || got[0] != boom || got[1] != boom {
		t.Fatalf("got %v", got)
	}
}

func TestSTREAM8_WriteBufferLimits(t *testing.T) {
	cases := []struct{ high, low, wantHigh, wantLow int }{
		{UseDefault, UseDefault, 65536, 16384},
		{100, UseDefault, 100, 25},
		{UseDefault, 10, 40, 10},
		{0, 0, 0, 0},
	}
	for _, c := range cases {
		h, l, err := computeWriteLimits(c.high, c.low)
		if err != nil || h != c.wantHigh || l != c.wantLow {
			t.Errorf("limits(%d,%d) = %d,%d,%v", c.high, c.low, h, l, err)
		}
	}
	_, _, err := computeWriteLimits(1, 2)
	if err == nil || err.Error() != "asyncio: high (1) must be >= low (2) must be >= 0" {
		t.Fatalf("bad limits: %v", err)
	}
}
