package passes

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// ForeignGoroutine reports goroutines started by a task that use the loop
// or its objects directly.
var ForeignGoroutine = &analysis.Analyzer{
	Name: "foreigngoroutine",
	Doc: `report loop and task methods called from a goroutine started inside a task

The event loop, its tasks, futures, locks, events, queues, streams and
connections belong to the loop's goroutine schedule: only code that the
loop runs (tasks and callbacks) may use them. A goroutine started inside a
task (a go statement, sync.WaitGroup.Go, errgroup's Group.Go,
time.AfterFunc, context.AfterFunc), and the function given to asyncio.Go, ToThread,
RunInExecutor or RunInExecutorOn, run beside the loop, so calling CallSoon, Sleep, Set,
PutNowait, SetResult, Cancel... from it is a data race that the library
cannot detect outside debug mode.

The check reports such calls when their receiver (or their *T, *Loop or
LoopOwner argument) is a variable of the enclosing task, captured by the
goroutine (also a goroutine that a callback of the task starts, and a
method value given to time.AfterFunc or WaitGroup.Go: time.AfterFunc(d,
ev.Set)); and calls there of the program's own functions that are given
the task's *T (go poll(t)): a function that takes a *asyncio.T is a
coroutine of that task. Objects the goroutine makes itself (a loop of its own) are fine,
and so are the thread-safe entry points: Loop.CallSoonThreadsafe,
asyncio.RunCoroutineThreadsafe, asyncio.Threadsafe, Loop.ExpectExternal,
Loop.IsRunning, OnLoopGoroutine, SnapshotThreadsafe and WriteDump,
the methods of ConcurrentFuture, and the Loop() accessors.

Fix: hand the work back to the loop with l.CallSoonThreadsafe(func() {...})
(capture l := t.Loop() before the go statement) or
asyncio.RunCoroutineThreadsafe(l, fn); or, instead of a goroutine, use
asyncio.Go(t, fn), which awaits a blocking call and returns its result to
the task.`,
	Run:              runForeignGoroutine,
	RunDespiteErrors: true,
}

// loopBoundTypes are the library's types whose methods only the loop's
// schedule may call. Handles (cancellable from any goroutine) and
// ConcurrentFuture (made for other goroutines) are not among them.
var loopBoundTypes = []string{
	"Loop", "T", "Task", "Future", "futureCore", "Group", "TimeoutScope",
	"Lock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "Barrier", "Queue",
	"StreamReader", "StreamWriter", "Server", "Transport", "DatagramTransport",
	// Documented as the loop's only ("must be called on the loop", "must
	// only be used from tasks of its loop").
	"BoundedGroup", "Limiter", "Process", "DatagramQueue", "FlowControl",
	// Not Conn: its Read, Write and Close are documented to work from any
	// goroutine (they run a short-lived task through CallSoonThreadsafe).
}

// threadSafe reports whether fn may be called from any goroutine.
func threadSafe(fn *types.Func) bool {
	return libFuncIs(fn, "Loop", "CallSoonThreadsafe") ||
		libFuncIs(fn, "", "RunCoroutineThreadsafe", "Threadsafe") ||
		libFuncIs(fn, "Loop", "ExpectExternal") ||
		// Documented for any goroutine: an atomic flag, a goroutine-id
		// test, and the diagnostics a signal handler or watchdog takes
		// through CallSoonThreadsafe.
		libFuncIs(fn, "Loop", "IsRunning", "OnLoopGoroutine", "SnapshotThreadsafe", "WriteDump") ||
		(isLibPkg(fn.Pkg()) && recvName(fn) != "" && fn.Name() == "Loop") // returns an immutable field
}

func runForeignGoroutine(pass *analysis.Pass) (any, error) {
	if pass.TypesInfo == nil {
		return nil, nil
	}
	rep := newReporter(pass)
	roots := findRoots(pass)
	for _, r := range roots {
		c := &foreignChecker{pass: pass, rep: rep, root: r, owner: ownerOf(r, roots)}
		w := &loopWalker{
			visit: func(n ast.Node, _ bool) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					c.spawner(call)
				}
				return true
			},
			onGo: c.goStmt,
		}
		w.walk(r.body)
	}
	return nil, nil
}

// foreignChecker checks the goroutines started by one root.
type foreignChecker struct {
	pass *analysis.Pass
	rep  *reporter
	root *root
	// owner is the function whose variables the root's goroutines must
	// not use: the root itself, or for a callback or body literal the
	// innermost task function around it (the task's event, captured by a
	// CallSoon callback that starts a goroutine, is still the loop's).
	owner ast.Node
}

// ownerOf returns the innermost task function of roots that encloses r,
// or r's own node.
func ownerOf(r *root, roots []*root) ast.Node {
	if r.kind == rootTask {
		return r.node
	}
	owner := r.node
	for _, o := range roots {
		if o.kind != rootTask || o.node == r.node || !within(r.node.Pos(), o.node) {
			continue
		}
		if owner == r.node || within(o.node.Pos(), owner) {
			owner = o.node // a task function nested deeper
		}
	}
	return owner
}

// goStmt checks a go statement of the root.
func (c *foreignChecker) goStmt(g *ast.GoStmt) {
	if g.Call == nil {
		return
	}
	if lit, ok := ast.Unparen(g.Call.Fun).(*ast.FuncLit); ok {
		c.goroutine(lit.Body, "a goroutine started by the task")
		return
	}
	// go l.CallSoon(fn), go tk.Await(t): the call itself runs on the new
	// goroutine (its receiver and arguments are evaluated here, which is
	// fine).
	c.call(g.Call, nil, "a goroutine started by the task")
}

// spawner checks the function literals that sync.WaitGroup.Go,
// errgroup.Group.Go, time.AfterFunc and context.AfterFunc run on a goroutine of their own, and
// those the library runs off the loop while the task awaits them
// (asyncio.Go, ToThread, RunInExecutor, RunInExecutorOn): their ctx is
// theirs, the task's handle and loop objects are not.
func (c *foreignChecker) spawner(call *ast.CallExpr) {
	fn := callee(c.pass.TypesInfo, call)
	if !funcIs(fn, "sync", "WaitGroup", "Go") && !funcIs(fn, "golang.org/x/sync/errgroup", "Group", "Go", "TryGo") &&
		!funcIs(fn, "time", "", "AfterFunc") && !funcIs(fn, "context", "", "AfterFunc") &&
		!libFuncIs(fn, "", "Go", "ToThread", "RunInExecutor", "RunInExecutorOn") {
		return
	}
	for _, a := range call.Args {
		if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok {
			c.goroutine(lit.Body, "a function that "+displayName(fn)+" runs on another goroutine")
			continue
		}
		c.methodValue(a, "a function that "+displayName(fn)+" runs on another goroutine")
	}
}

// methodValue reports a method value of a loop object the task owns given
// to a spawner, which calls it on another goroutine:
// time.AfterFunc(d, ev.Set) is go ev.Set() later.
func (c *foreignChecker) methodValue(e ast.Expr, where string) {
	info := c.pass.TypesInfo
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return
	}
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.MethodVal {
		return
	}
	m, ok := s.Obj().(*types.Func)
	if !ok {
		return
	}
	m = m.Origin()
	sig := funcSig(m)
	if sig == nil || sig.Recv() == nil || !isLibPkg(m.Pkg()) || !m.Exported() || threadSafe(m) ||
		!libNamed(sig.Recv().Type(), loopBoundTypes...) {
		return
	}
	v := localVar(c.pass, rootIdent(sel.X))
	if v == nil || !within(v.Pos(), c.owner) {
		return
	}
	c.rep.reportf(sel.Pos(), "%s is called on %s from %s: only the loop's own schedule may use it (a data race); hand the work back with Loop.CallSoonThreadsafe or asyncio.RunCoroutineThreadsafe, or use asyncio.Go(t, ...) instead of a goroutine", displayName(m), v.Name(), where)
}

// goroutine checks the body of a function that runs on another goroutine,
// including the literals it calls on the spot and the goroutines it starts
// in turn; other literals (a callback for CallSoonThreadsafe, a coroutine
// for RunCoroutineThreadsafe) run elsewhere and are skipped.
func (c *foreignChecker) goroutine(body *ast.BlockStmt, where string) {
	w := &loopWalker{}
	w.visit = func(n ast.Node, _ bool) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			c.call(call, body, where)
		}
		return true
	}
	w.onGo = func(g *ast.GoStmt) {
		if lit, ok := ast.Unparen(g.Call.Fun).(*ast.FuncLit); ok {
			w.walk(lit.Body)
		}
	}
	w.walk(body)
}

// call reports call if it is a non-thread-safe use of a loop object that
// the task owns: a variable declared in the root, outside body (nil: the
// call is the go statement's own).
func (c *foreignChecker) call(call *ast.CallExpr, body *ast.BlockStmt, where string) {
	info := c.pass.TypesInfo
	fn := callee(info, call)
	sig := funcSig(fn)
	// Only the library's API is known: its unexported helpers, which only
	// its own tests can call, guard themselves (a test helper that polls
	// loop state under its mutex from a worker is fine).
	if sig == nil || (isLibPkg(fn.Pkg()) && (!fn.Exported() || threadSafe(fn))) {
		return
	}
	owned := func(e ast.Expr) (string, bool) {
		id := rootIdent(ast.Unparen(e))
		v := localVar(c.pass, id)
		if v == nil || !within(v.Pos(), c.owner) || (body != nil && within(v.Pos(), body)) {
			return "", false
		}
		return v.Name(), true
	}
	report := func(name string) {
		c.rep.reportf(call.Pos(), "%s is called on %s from %s: only the loop's own schedule may use it (a data race); hand the work back with Loop.CallSoonThreadsafe or asyncio.RunCoroutineThreadsafe, or use asyncio.Go(t, ...) instead of a goroutine", displayName(fn), name, where)
	}
	if !isLibPkg(fn.Pkg()) {
		// A function of the program that takes a *asyncio.T is a coroutine
		// of that task (its awaits name it): run here, it awaits, reads
		// and schedules on the task's loop from another goroutine.
		for i, a := range call.Args {
			if !isTaskHandle(paramTypeAt(sig, i, call.Ellipsis.IsValid())) {
				continue
			}
			if name, ok := owned(a); ok {
				c.rep.reportf(call.Pos(), "%s is given the task's handle %s on %s: a function that takes a *asyncio.T runs as part of that task, and from another goroutine it races with the loop; run it in the task (or as a task of its own with asyncio.CreateTask), and keep only blocking work in the goroutine (asyncio.Go)", displayName(fn), name, where)
				return
			}
		}
		return
	}
	if sig.Recv() != nil {
		if !libNamed(sig.Recv().Type(), loopBoundTypes...) {
			return
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return
		}
		if name, ok := owned(sel.X); ok {
			report(name)
		}
		return
	}
	// A package function that takes the task, the loop or a loop owner.
	for i, a := range call.Args {
		pt := paramTypeAt(sig, i, call.Ellipsis.IsValid())
		if !isTaskHandle(pt) && !libNamed(pt, "Loop", "LoopOwner") {
			continue
		}
		if name, ok := owned(a); ok {
			report(name)
			return
		}
	}
}
