//go:build unix

package aio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/go-asyncio/asyncio"
)

type diffCase struct {
	Limit int                 `json:"limit"`
	Ops   [][]json.RawMessage `json:"ops"`
	Out   []string            `json:"out"`
}

func diffOutcome(tk *asyncio.Task[[]byte]) string {
	b, err := tk.Result()
	var ire *IncompleteReadError
	var loe *LimitOverrunError
	var ve *asyncio.ValueError
	var re *asyncio.RuntimeError
	switch {
	case err == nil:
		return pyBytes(b)
	case asyncio.IsCancelled(err):
		return "CancelledError"
	case errors.As(err, &ire):
		exp := "None"
		if ire.Expected >= 0 {
			exp = fmt.Sprint(ire.Expected)
		}
		return fmt.Sprintf("IRE %s %s", pyBytes(ire.Partial), exp)
	case errors.As(err, &ve):
		return "ValueError " + ve.Msg
	case errors.As(err, &loe):
		return fmt.Sprintf("LOE %s %d", loe.Msg, loe.Consumed)
	case errors.As(err, &re):
		return "RuntimeError " + re.Msg
	}
	return err.Error()
}

// TestProbeStreams_CPythonTrace replays the programs of
// testdata/streams_cpython_trace.json on a StreamReader and compares, line
// for line, what CPython 3.13 printed after each step (see
// scripts/probe-streams-cpython.py, which made the file): the reads that
// finished and how, the buffer, EOF, the pause and the waiter, and the
// transport's pause and resume calls. The programs race feeds, EOF and
// errors with cancellations and start reads while another waits.
func TestProbeStreams_CPythonTrace(t *testing.T) {
	data, err := os.ReadFile("testdata/streams_cpython_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []diffCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	fails := 0
	for ci, c := range cases {
		var log []string
		runVirtual(t, func(at *asyncio.T) error {
			r := NewStreamReader(at, c.Limit)
			r.setTransport(&fakeTransport{log: &log})
			var tasks []*asyncio.Task[[]byte]
			reported := map[int]bool{}
			cancel := func() {
				for j := len(tasks) - 1; j >= 0; j-- {
					if !tasks[j].Done() {
						tasks[j].Cancel()
						break
					}
				}
			}
			for i, op := range c.Ops {
				var k, s string
				json.Unmarshal(op[0], &k)
				if len(op) > 1 {
					json.Unmarshal(op[1], &s)
				}
				switch k {
				case "feed":
					r.FeedData([]byte(s))
				case "eof":
					r.FeedEOF()
				case "exc":
					r.SetException(&asyncio.ValueError{Msg: "E"})
				case "cancel":
					cancel()
				case "feedcancel":
					r.FeedData([]byte(s))
					cancel()
				case "cancelfeed":
					cancel()
					r.FeedData([]byte(s))
				case "feedexc":
					r.FeedData([]byte(s))
					r.SetException(&asyncio.ValueError{Msg: "E"})
				case "eofcancel":
					r.FeedEOF()
					cancel()
				case "start":
					var fn func(t *asyncio.T) ([]byte, error)
					switch s {
					case "read":
						var n int
						json.Unmarshal(op[2], &n)
						fn = func(t *asyncio.T) ([]byte, error) { return r.Read(t, n) }
					case "readexactly":
						var n int
						json.Unmarshal(op[2], &n)
						fn = func(t *asyncio.T) ([]byte, error) { return r.ReadExactly(t, n) }
					case "readline":
						fn = r.ReadLine
					case "readuntil":
						var ss []string
						json.Unmarshal(op[2], &ss)
						var seps [][]byte
						for _, s := range ss {
							seps = append(seps, []byte(s))
						}
						fn = func(t *asyncio.T) ([]byte, error) { return r.ReadUntil(t, seps...) }
					}
					tasks = append(tasks, asyncio.CreateTask(at, fn))
				}
				for range 4 {
					if err := asyncio.Sleep(at, 0); err != nil {
						return err
					}
				}
				for j, tk := range tasks {
					if tk.Done() && !reported[j] {
						reported[j] = true
						log = append(log, fmt.Sprintf("t%d: %s", j, diffOutcome(tk)))
					}
				}
				log = append(log, fmt.Sprintf("%d buf=%s eof=%s paused=%s waiter=%s", i, pyBytes(r.buf), pyBool(r.eof), pyBool(r.paused), pyBool(r.waiter != nil)))
			}
			for _, tk := range tasks {
				if !tk.Done() {
					tk.Cancel()
				}
			}
			// Each task's own outcome was logged above: wait for them to
			// end without taking their errors for main's.
			if len(tasks) == 0 {
				return nil
			}
			_, _, err := asyncio.Wait(at, tasks, asyncio.Never, asyncio.AllCompleted)
			return err
		})
		if fmt.Sprint(log) != fmt.Sprint(c.Out) {
			fails++
			if fails <= 3 { // the first few in full
				b, _ := json.Marshal(c.Ops)
				t.Errorf("case %d limit=%d ops=%s", ci, c.Limit, b)
				for i := 0; i < max(len(log), len(c.Out)); i++ {
					var g, w string
					if i < len(log) {
						g = log[i]
					}
					if i < len(c.Out) {
						w = c.Out[i]
					}
					mark := "  "
					if g != w {
						mark = "!!"
					}
					t.Logf("%s py=%-60s go=%s", mark, w, g)
				}
			}
		}
	}
	if fails > 0 || len(cases) == 0 {
		t.Errorf("%d of %d programs differ from CPython's trace", fails, len(cases))
	}
}
