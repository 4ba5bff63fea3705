package asyncio

// Go frames: classifying them (the library's or the user's), trimming a
// task's stack to what a reader wants, and the one goroutine-dump reader
// that snapshots, call graphs and the watchdog share.

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
)

// ---- frames

// Frame is one Go frame of a call stack.
type Frame struct {
	Function string `json:"function"` // package-qualified, e.g. "main.worker"
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// String formats the frame as "function file:line", the function and
// the file quoted when they must be (see WriteTree).
func (f Frame) String() string {
	if f.Function == "" {
		return "?"
	}
	return fmt.Sprintf("%s %s:%d", quoteText(shortFunc(f.Function)), quoteText(f.File), f.Line)
}

// shortFunc drops the import path before the package name:
// "github.com/x/y.(*T).f" -> "y.(*T).f".
func shortFunc(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	return fn[slash+1:]
}

// libPath is this package's import path, which is also its module's path
// (the package is the module's root): taken from the name of a function
// of the package, so it is right however the module is built or vendored.
var libPath = funcPackage(libPathProbe())

// libPathProbe is a function of this package, whose name gives libPath.
//
//go:noinline
func libPathProbe() string {
	pc, _, _, _ := runtime.Caller(0)
	return runtime.FuncForPC(pc).Name()
}

// funcPackage is the import path of a function's package, from its
// package-qualified name: "github.com/x/y/z.(*T).f" -> "github.com/x/y/z".
func funcPackage(fn string) string {
	if i := strings.IndexByte(fn, '['); i >= 0 {
		fn = fn[:i] // type arguments may contain dots and slashes
	}
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// isLibFrame reports whether a frame belongs to the library or to the Go
// runtime machinery under a task (runtime, iter), not to user code. The
// library is every package of this module (the core, aio, cancelcheck,
// debug/..., internal/..., and any package added later), told by the
// module-path prefix of the frame's function, not by a list of folders;
// the module's _test.go files are users, and so are its main packages
// (their functions are named "main.").
func isLibFrame(f Frame) bool {
	if strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "iter.") {
		return true
	}
	if strings.HasSuffix(f.File, "_test.go") {
		return false
	}
	p := funcPackage(f.Function)
	return p == libPath || strings.HasPrefix(p, libPath) && p[len(libPath)] == '/'
}

// callers returns the calling goroutine's PCs, skipping skip frames.
func callers(skip int) []uintptr {
	var pcs [48]uintptr
	n := runtime.Callers(skip+1, pcs[:])
	return append([]uintptr(nil), pcs[:n]...)
}

// sameAwaitSite reports whether two stacks taken inside park (as an await
// suspends, and as it returns) are the same await: the same frames from
// park's caller down.
func sameAwaitSite(a, b []uintptr) bool {
	fa, fb := belowPark(framesOf(a)), belowPark(framesOf(b))
	if len(fa) == 0 || len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

// belowPark drops the frames down to and including (*T).park.
func belowPark(fs []Frame) []Frame {
	for i, f := range fs {
		if strings.HasSuffix(f.Function, ".(*T).park") {
			return fs[i+1:]
		}
	}
	return nil
}

func framesOf(pcs []uintptr) []Frame {
	var out []Frame
	it := runtime.CallersFrames(pcs)
	for {
		f, more := it.Next()
		out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
		if !more {
			return out
		}
	}
}

// userFrame is the innermost user frame of pcs, else the innermost frame.
func userFrame(pcs []uintptr) (Frame, bool) {
	fs := framesOf(pcs)
	for _, f := range fs {
		if !isLibFrame(f) {
			return f, true
		}
	}
	if len(fs) > 0 {
		return fs[0], false
	}
	return Frame{}, false
}

// requesterFrame picks the frame that asked for a cancellation: skipping
// the cancel plumbing, the first user frame reached before the loop's own
// machinery, else the first library frame past the plumbing (the timer of
// a Timeout, a TaskGroup abort).
func requesterFrame(pcs []uintptr) (Frame, bool) {
	fs := framesOf(pcs)
	i := 0
	for i < len(fs) && isLibFrame(fs[i]) && isCancelPlumbing(fs[i].Function) {
		i++
	}
	if i == len(fs) {
		return Frame{}, false
	}
	first := fs[i]
	for ; i < len(fs); i++ {
		f := fs[i]
		if !isLibFrame(f) {
			return f, true
		}
		if isLoopMachinery(f.Function) {
			break
		}
	}
	return first, true
}

func isCancelPlumbing(fn string) bool {
	for _, s := range []string{".Cancel", ".cancel", ".cancelPlain", ".noteCancelRequest", ".callers"} {
		if strings.HasSuffix(fn, s) {
			return true
		}
	}
	return false
}

func isLoopMachinery(fn string) bool {
	for _, s := range []string{".(*Loop).runCallbacks", ".(*Loop).runReady", ".(*Loop).startIteration", ".(*Loop).runPollHook"} {
		if strings.HasSuffix(fn, s) {
			return true
		}
	}
	return false
}

// trimTaskStack turns a suspended (or running) task's goroutine stack,
// innermost frame first, into the frames a reader wants: the library call
// the user made, then the user's frames, with each run of library frames
// between them reduced to the call the user made (a TaskGroup, a
// WaitForFunc: its outermost frame), and the task harness under them
// dropped.
func trimTaskStack(fs []Frame) []Frame {
	first := -1
	last := -1
	for i, f := range fs {
		if !isLibFrame(f) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	var out []Frame
	if first > 0 && !strings.HasPrefix(fs[first-1].Function, "runtime.") {
		out = append(out, fs[first-1]) // the library call: Queue.Get, Sleep, ...
	}
	for i := first; i <= last; i++ {
		if isLibFrame(fs[i]) && isLibFrame(fs[i+1]) {
			continue // not the outermost of its run (i < last: fs[last] is the user's)
		}
		out = append(out, fs[i])
	}
	return out
}

// goroutineStacks takes the stacks of every goroutine (goroutineDump) and
// parses those of the goroutines in want. truncated reports a dump larger
// than maxStackDump.
func goroutineStacks(want map[uint64]bool) (stacks map[uint64][]Frame, truncated bool) {
	buf, truncated := goroutineDump()
	return parseGoroutineStacks(string(buf), want), truncated
}

// goroutineDump is the one reader of every goroutine's stack that the
// snapshot, call graphs and the watchdog share: one runtime.Stack(all),
// which stops the world while it formats every goroutine. Its buffer is
// sized once, from the number of goroutines, instead of growing by retries
// (each a full stop-the-world traceback: with 100,000 parked tasks, ten of
// them froze the process for seconds). Only when that estimate proves too
// small is there one more capture, sized from what the first one showed.
// The dump is cut at maxStackDump (truncated).
func goroutineDump() (buf []byte, truncated bool) {
	n := runtime.NumGoroutine()
	buf, full := stackAll(min(n*dumpBytesPerGoroutine+minStackDump, maxStackDump))
	if !full || len(buf) >= maxStackDump {
		return buf, full
	}
	// The estimate was short: the goroutines seen so far give the size.
	seen := max(bytes.Count(buf, []byte("\ngoroutine ")), 1)
	per := len(buf)/seen + 1
	buf, full = stackAll(min(per*(runtime.NumGoroutine()+n/8+16)+minStackDump, maxStackDump))
	return buf, full
}

// dumpBytesPerGoroutine is what goroutineDump reserves per goroutine: a
// parked task's traceback is about 1.5 KiB.
const dumpBytesPerGoroutine = 2 << 10

// minStackDump is the smallest dump buffer.
const minStackDump = 64 << 10

// stackAll is one runtime.Stack(all) into a buffer of size bytes; full
// reports that it filled the buffer (the dump may be cut).
func stackAll(size int) (buf []byte, full bool) {
	stackDumps.full.Add(1)
	buf = make([]byte, size)
	n := runtime.Stack(buf, true)
	return buf[:n], n == len(buf)
}

// stackDumps counts the goroutine captures, for tests: full dumps
// (runtime.Stack(all), a stop-the-world traceback of every goroutine) and
// reads of the goroutine profile.
var stackDumps struct{ full, profiles atomic.Int64 }

// parseGoroutineStacks parses runtime.Stack(all) text: "goroutine N
// [state]:", then a "function(args)" line and a "\tfile:line +0x.." line
// per frame, up to "created by".
func parseGoroutineStacks(dump string, want map[uint64]bool) map[uint64][]Frame {
	out := map[uint64][]Frame{}
	for _, block := range strings.Split(dump, "\n\n") {
		if !strings.HasPrefix(block, "goroutine ") {
			continue
		}
		lines := strings.Split(block, "\n")
		var id uint64
		if _, err := fmt.Sscanf(lines[0], "goroutine %d", &id); err != nil || !want[id] {
			continue
		}
		var frames []Frame
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if strings.HasPrefix(fn, "created by ") || !strings.HasPrefix(lines[i+1], "\t") {
				break
			}
			if p := strings.LastIndexByte(fn, '('); p > 0 {
				fn = fn[:p]
			}
			loc := strings.TrimSpace(lines[i+1])
			if sp := strings.IndexByte(loc, ' '); sp >= 0 {
				loc = loc[:sp]
			}
			var f Frame
			f.Function = fn
			if c := strings.LastIndexByte(loc, ':'); c >= 0 {
				f.File = loc[:c]
				fmt.Sscanf(loc[c+1:], "%d", &f.Line)
			}
			frames = append(frames, f)
		}
		out[id] = frames
	}
	return out
}
