package asyncio

// Call graphs (CPython 3.14's asyncio.graph): from a task or future, the
// graph of who awaits it, each task with the Go frames it is suspended in.
//
// The awaited-by edges come from the futures themselves, at no cost: a task
// suspended on a future is its waiter; a combinator that waits through a
// done callback (Gather, Shield, Wait, AsCompleted, WaitFor's cancel-and-
// wait, TaskGroup for its children) registers it with its outer future or
// task as the awaiter; FutureAddToAwaitedBy adds a bare edge for a
// user-written combinator. Edges vanish when the future completes.

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FutureCallGraph is one node of an await graph (asyncio.FutureCallGraph):
// a task or future, the frames a task is suspended in, and the graphs of
// what awaits it.
type FutureCallGraph struct {
	// Future is the task (a *T) or the future. A plain future reached
	// through an edge, rather than passed in, is an untyped view of it:
	// Done, Cancel, Err... work, its value is not reachable.
	Future Awaitable
	// CallStack is, for a task, where it is suspended: innermost first,
	// the library call it waits in, then the user's frames (as in
	// TaskInfo.Stack). For a task other than the running one it needs the
	// task's goroutine, recorded with WithTaskStacks or in debug mode;
	// it is empty otherwise, and for futures.
	CallStack []Frame
	// AwaitedBy are the graphs of the tasks and futures awaiting Future.
	AwaitedBy []FutureCallGraph
}

// CaptureCallGraph returns the await graph of aw (asyncio's
// capture_call_graph(future)); for the running task, pass its *T: its call
// stack is taken right here, starting at CaptureCallGraph's caller. Call it
// on aw's loop. A cycle (tasks awaiting each other) is cut where it closes.
// As in asyncio, the tasks and futures given to a Gather, Shield or Wait
// are awaited by the task awaiting the combinator (its future is a node
// of the graph only while nothing awaits it, or when it is aw).
func CaptureCallGraph(aw Awaitable) *FutureCallGraph {
	f := coreOf(aw, "CaptureCallGraph")
	f.loop.checkThread("CaptureCallGraph") // it walks the loop's futures
	g := buildGraph(aw, f, nil)
	// The suspended tasks' stacks, from one goroutine dump.
	want := map[uint64]bool{}
	walkGraph(&g, func(n *FutureCallGraph) {
		if gid := suspendedGoroutine(n.Future.core()); gid != 0 {
			want[gid] = true
		}
	})
	if len(want) > 0 {
		stacks, _ := goroutineStacks(want)
		walkGraph(&g, func(n *FutureCallGraph) {
			if gid := suspendedGoroutine(n.Future.core()); gid != 0 {
				n.CallStack = trimTaskStack(stacks[gid])
			}
		})
	}
	return &g
}

// suspendedGoroutine is the recorded goroutine of a pending task that is
// not the running one (0 if none).
func suspendedGoroutine(f *futureCore) uint64 {
	t := f.task
	if t == nil || f.done() || t.fut.loop.current == t || t.diag == nil {
		return 0
	}
	return t.diag.goroutine
}

func walkGraph(g *FutureCallGraph, fn func(*FutureCallGraph)) {
	fn(g)
	for i := range g.AwaitedBy {
		walkGraph(&g.AwaitedBy[i], fn)
	}
}

func buildGraph(aw Awaitable, f *futureCore, path []*futureCore) FutureCallGraph {
	g := FutureCallGraph{Future: aw}
	if t := f.task; t != nil && !f.done() && t.fut.loop.current == t {
		// The running task: we are on its goroutine.
		st := trimTaskStack(framesOf(callers(3)))
		for len(st) > 0 && isLibFrame(st[0]) {
			st = st[1:] // CaptureCallGraph itself, PrintCallGraph
		}
		g.CallStack = st
	}
	path = append(path, f)
	// asyncio's gather, shield and wait record the task that called them
	// as the awaiter of each child (future_add_to_awaited_by), so a
	// child's graph goes straight to that task: here the future of a
	// Gather, Shield or Wait met as an awaiter gives way to what awaits it
	// (one that nothing awaits yet stays, to show what holds the child).
	var awaiters []*futureCore
	var splice func(ws []*futureCore, depth int)
	splice = func(ws []*futureCore, depth int) {
		for _, w := range ws {
			if k := w.kind; w.task == nil && depth < 8 && (k == kindGather || k == kindShield || k == kindWait) {
				if up := directAwaiters(w); len(up) > 0 {
					splice(up, depth+1)
					continue
				}
			}
			awaiters = append(awaiters, w)
		}
	}
	splice(directAwaiters(f), 0)
	for _, w := range awaiters {
		if slices.Contains(path, w) {
			continue // a cycle: cut it here
		}
		g.AwaitedBy = append(g.AwaitedBy, buildGraph(awaitableOf(w), w, path))
	}
	return g
}

// directAwaiters are the futures (a task's future for a task) waiting on
// f: the one walk over awaited-by edges that call graphs and snapshots
// (awaitersOf) share.
func directAwaiters(f *futureCore) []*futureCore {
	var out []*futureCore
	if f.waiter != nil {
		out = append(out, f.waiter.fut)
	}
	for _, cb := range f.registered() {
		switch {
		case cb.task != nil:
			out = append(out, cb.task.fut)
		case cb.awaiter != nil:
			out = append(out, cb.awaiter)
		}
	}
	return out
}

// awaitableOf is the Awaitable of a future core: its task, or a view.
func awaitableOf(f *futureCore) Awaitable {
	if f.task != nil {
		return f.task
	}
	return &futureView{f}
}

// futureView is an untyped view of a future met along an await graph.
type futureView struct{ *futureCore }

func (v *futureView) Cancel(msg ...string) bool { return v.cancel(joinMsg(msg)) }
func (v *futureView) valueAny() any             { return nil }
func (v *futureView) isNil() bool               { return v == nil }

// String is "<Future pending kind=gather>" and the like.
func (v *futureView) String() string {
	state := "pending"
	switch v.state {
	case stateFinished:
		state = "finished"
	case stateCancelled:
		state = "cancelled"
	}
	return "<Future " + state + " kind=" + v.kind.String() + ">"
}

// FormatCallGraph renders g as asyncio's format_call_graph does: a line
// "* Task(name='worker', id=0x…)" per task ("* Future(id=0x…)" for a
// future, with its kind when it is a combinator's or a primitive's, such as
// kind='gather'), then "+ Call stack:" with one "|   File '…', line N, in
// function()" line per frame, innermost first, then "+ Awaited by:" and the
// awaiters' graphs indented by four spaces (ExampleCaptureCallGraph shows
// one).
//
// A nil g panics with a *ValueError (CaptureCallGraph never returns nil).
func FormatCallGraph(g *FutureCallGraph) string {
	if g == nil {
		panic(valueErrorf("FormatCallGraph: nil graph (make it with CaptureCallGraph)"))
	}
	var b strings.Builder
	renderGraph(&b, g, 0)
	return strings.TrimRight(b.String(), "\n")
}

// PrintCallGraph writes the call graph of aw (CaptureCallGraph) to w
// (asyncio's print_call_graph). A nil w panics with a *ValueError before
// the graph is captured (where asyncio's file=None means sys.stdout, pass
// os.Stdout).
func PrintCallGraph(w io.Writer, aw Awaitable) error {
	if w == nil {
		panic(valueErrorf("PrintCallGraph: nil writer (pass os.Stdout for asyncio's file=None)"))
	}
	_, err := io.WriteString(w, FormatCallGraph(CaptureCallGraph(aw))+"\n")
	return err
}

func renderGraph(b *strings.Builder, g *FutureCallGraph, level int) {
	ind := strings.Repeat("    ", level)
	f := g.Future.core()
	if t := f.task; t != nil {
		fmt.Fprintf(b, "%s* Task(name=%s, id=%s)\n", ind, pyQuote(t.Name()), taskID(t))
	} else if f.kind != kindPlain {
		fmt.Fprintf(b, "%s* Future(id=%s, kind=%s)\n", ind, futureID(f), pyQuote(f.kind.String()))
	} else {
		fmt.Fprintf(b, "%s* Future(id=%s)\n", ind, futureID(f))
	}
	if t := f.task; t != nil && len(g.CallStack) == 0 && !f.done() && !stacksRecorded(t.fut.loop) {
		// Not the layout's business, but an empty graph is no answer.
		fmt.Fprintf(b, "%s  + Call stack: not recorded (create the loop with WithTaskStacks() or in debug mode)\n", ind)
	}
	if len(g.CallStack) > 0 {
		fmt.Fprintf(b, "%s  + Call stack:\n", ind)
		for _, fr := range g.CallStack {
			fmt.Fprintf(b, "%s  |   File %s, line %d, in %s()\n", ind, pyQuote(fr.File), fr.Line, quoteText(shortFunc(fr.Function)))
		}
	}
	if len(g.AwaitedBy) > 0 {
		fmt.Fprintf(b, "%s  + Awaited by:\n", ind)
		for i := range g.AwaitedBy {
			renderGraph(b, &g.AwaitedBy[i], level+1)
		}
	}
}

// pyQuote quotes s as Python's repr of a str does: in single quotes
// (double quotes when s holds a single quote and no double one), with
// backslashes, the quote, and every character that is not printable
// escaped (\n, \r, \t, \xhh, \uhhhh, \Uhhhhhhhh); bytes that are not
// UTF-8 are escaped as \xhh.
func pyQuote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + hex2(s[i]))
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case strconv.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x` + hex2(byte(r)))
		case r < 0x10000:
			b.WriteString(`\u` + hexN(uint32(r), 4))
		default:
			b.WriteString(`\U` + hexN(uint32(r), 8))
		}
		i += size
	}
	b.WriteByte(q)
	return b.String()
}

// FutureAddToAwaitedBy records that waiter awaits fut
// (asyncio.future_add_to_awaited_by), for a combinator written outside
// this package that waits on fut through a done callback rather than an
// await: call graphs and snapshots then show the edge. Adding an edge
// that is there already does nothing (asyncio keeps a set). The edge vanishes
// when fut completes, or with FutureDiscardFromAwaitedBy. Both must belong
// to one loop, and it must be called on that loop; nil panics with a
// *ValueError.
func FutureAddToAwaitedBy(fut, waiter Awaitable) {
	f, w := coreOf(fut, "FutureAddToAwaitedBy"), coreOf(waiter, "FutureAddToAwaitedBy")
	if f.loop != w.loop {
		panic(&ValueError{Msg: "FutureAddToAwaitedBy: the future and the waiter belong to different loops"})
	}
	f.loop.checkThread("FutureAddToAwaitedBy")
	if f.done() {
		return
	}
	if slices.Contains(directAwaiters(f), w) {
		// One edge per pair, whoever made it (an await, a combinator, an
		// earlier call): asyncio keeps a set of awaiters.
		return
	}
	f.register(doneCallback{awaiter: w})
}

// FutureDiscardFromAwaitedBy removes one edge added by FutureAddToAwaitedBy
// (asyncio.future_discard_from_awaited_by); there is nothing to do if
// there is none.
func FutureDiscardFromAwaitedBy(fut, waiter Awaitable) {
	f, w := coreOf(fut, "FutureDiscardFromAwaitedBy"), coreOf(waiter, "FutureDiscardFromAwaitedBy")
	f.loop.checkThread("FutureDiscardFromAwaitedBy")
	for i, cb := range f.registered() {
		if cb.fn == nil && cb.task == nil && cb.awaiter == w {
			f.unregister(i)
			return
		}
	}
}

// stacksRecorded reports whether l records its tasks' goroutines, which a
// call graph needs for the frames of suspended tasks (stackObserver).
func stacksRecorded(l *Loop) bool { return l.debug || l.diagSet.stacks || l.diagSet.labels }
