package asyncio

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// Where a failed task came from, for the reports of errors nobody
// retrieved (asyncio prints the task's repr, with its coroutine and where
// that is defined, and in debug mode where the task was created). The
// coroutine function's code pointer is kept in every task (a word, read
// from the func value: no stack walk); debug mode adds the creation stack
// (newUnretrieved) and the await graph at the moment the task failed.

// funcPC is the entry of fn's code.
func funcPC(fn any) uintptr { return reflect.ValueOf(fn).Pointer() }

// withFuncOf prepends to opts an option recording fn as the task's
// coroutine function: for wrappers (CreateTaskErr, SpawnErr) that hand
// CreateTask a closure of their own.
func withFuncOf(fn any, opts []TaskOption) []TaskOption {
	pc := funcPC(fn)
	return append([]TaskOption{func(t *T) { t.fnPC = pc }}, opts...)
}

func formatOrigin(repr string, fnPC uintptr, done bool, pcs []uintptr) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(repr, ">"))
	if f := runtime.FuncForPC(fnPC); f != nil && fnPC != 0 {
		file, line := f.FileLine(fnPC)
		state := "running"
		if done {
			state = "done"
		}
		fmt.Fprintf(&b, " coro=<%s() %s, defined at %s:%d>", f.Name(), state, file, line)
	}
	b.WriteString(">")
	if len(pcs) > 0 {
		if fr, ok := firstUserFrame(pcs); ok {
			fmt.Fprintf(&b, " created at %s:%d in %s", fr.File, fr.Line, fr.Function)
		}
	}
	return b.String()
}

// firstUserFrame is the first frame of pcs outside this package.
func firstUserFrame(pcs []uintptr) (runtime.Frame, bool) {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if !isLibFunction(f.Function) || strings.HasSuffix(f.File, "_test.go") {
			return f, true
		}
		if !more {
			return runtime.Frame{}, false
		}
	}
}

// isLibFunction reports whether a function name belongs to this package
// (not to its subpackages, whose frames are the user's side); the
// package's own tests are the user's side too.
func isLibFunction(name string) bool {
	const pkg = "github.com/go-asyncio/asyncio."
	return strings.HasPrefix(name, pkg)
}

// recordFailure keeps in r, when task t fails, what the report will say
// of it (r must not reach t: it is the argument of t's cleanup); in debug
// mode also the await graph (who awaits t) right then.
func (r *unretrieved) recordFailure(t *T) {
	r.taskRepr = t.String()
	r.owner = makeWeak(t)
	r.fnPC = t.fnPC
	r.ctx = t.baseContext()
	if t.fut.loop.debug {
		r.awaitChain = FormatCallGraph(CaptureCallGraph(t))
	}
}

// origin formats the failed task's origin ("" for a plain future).
func (r *unretrieved) origin() string {
	if r.taskRepr == "" {
		return ""
	}
	return formatOrigin(r.taskRepr, r.fnPC, true, r.pcs)
}
