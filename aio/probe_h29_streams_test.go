//go:build unix

package aio

// Hostile probe h29 of StreamReader: every read cancelled at any phase of
// its wakeup leaves every byte fed in the buffer (as CPython's reads do,
// and Read(-1) too, where CPython drops the blocks it took), and the
// next read gets them.

import (
	"testing"

	"github.com/go-asyncio/asyncio"
)

func TestH29_StreamReadsCancelledKeepEveryByte(t *testing.T) {
	reads := []struct {
		name string
		read func(at *asyncio.T, r *StreamReader) ([]byte, error)
	}{
		{"Read(10)", func(at *asyncio.T, r *StreamReader) ([]byte, error) { return r.Read(at, 10) }},
		{"Read(-1)", func(at *asyncio.T, r *StreamReader) ([]byte, error) { return r.Read(at, -1) }},
		{"ReadExactly(6)", func(at *asyncio.T, r *StreamReader) ([]byte, error) { return r.ReadExactly(at, 6) }},
		{"ReadUntil(;)", func(at *asyncio.T, r *StreamReader) ([]byte, error) { return r.ReadUntil(at, []byte(";")) }},
		{"ReadLine", func(at *asyncio.T, r *StreamReader) ([]byte, error) { return r.ReadLine(at) }},
	}
	// What is fed, and when the task is cancelled: before anything
	// arrives, after a part woke it, after all of it (the read could
	// complete, but the task has not resumed).
	phases := []struct {
		name  string
		feeds []string
	}{
		{"waiting", nil},
		{"after a part", []string{"ab"}},
		{"after all", []string{"ab", "c;\nde"}},
	}
	for _, rd := range reads {
		for _, ph := range phases {
			t.Run(rd.name+"/"+ph.name, func(t *testing.T) {
				runVirtual(t, func(at *asyncio.T) error {
					r := NewStreamReader(at, DefaultStreamLimit)
					task := asyncio.CreateTask(at, func(x *asyncio.T) ([]byte, error) { return rd.read(x, r) })
					fed := ""
					if err := asyncio.Sleep(at, 0); err != nil { // the read waits
						return err
					}
					for _, f := range ph.feeds {
						r.FeedData([]byte(f))
						fed += f
						if f != ph.feeds[len(ph.feeds)-1] {
							if err := asyncio.Sleep(at, 0); err != nil { // the read takes the part in
								return err
							}
						}
					}
					reached := task.Cancel()
					b, err := task.Await(at)
					switch {
					case asyncio.IsCancelled(err) && b != nil:
						t.Fatalf("cancelled read returned %q too", b)
					case err != nil && !asyncio.IsCancelled(err):
						t.Fatalf("read: %v", err)
					case err == nil && reached:
						t.Fatalf("read returned %q though the cancellation reached it first (CANCEL-4)", b)
					}
					// Read(10) is done before the cancellation once a part
					// came: what it returned and what is buffered is all.
					if string(b)+string(r.buf) != fed {
						t.Fatalf("returned %q, buffered %q after the cancellation; want %q in all", b, r.buf, fed)
					}
					rest := fed[len(b):]
					r.FeedData([]byte("f;"))
					r.FeedEOF()
					if all, err := r.Read(at, -1); string(all) != rest+"f;" || err != nil {
						t.Fatalf("next Read(-1): %q, %v; want %q", all, err, rest+"f;")
					}
					return nil
				})
			})
		}
	}
}
