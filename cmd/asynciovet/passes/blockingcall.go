package passes

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/analysis"
)

// BlockingCall reports calls that block the goroutine inside code that runs
// on the event loop.
var BlockingCall = &analysis.Analyzer{
	Name: "blockingcall",
	Doc: `report blocking Go calls inside asyncio tasks

A task runs on its own goroutine, but only while the event loop has handed
it control: while it runs, nothing else on the loop does. A call that
blocks the goroutine (time.Sleep, a channel send or receive, a select
without default, sync.Mutex.Lock, WaitGroup.Wait, Cond.Wait, net.Dial,
net/http client calls, os/exec Cmd.Run/Wait/Output, os.Process.Wait,
database/sql queries,
os.ReadFile, (*os.File).Read, fmt.Scan, syscall.Read, io.ReadAll, a bufio
reader or a json decoder on a file, a net connection or an HTTP response
body)
therefore freezes every task and every timer of the loop, timeouts
included, until it returns. So does a call of a helper function that does
one of those (not counting mutexes, channels and raw fd reads): the check
follows calls within the package and, through facts, across packages.

The check looks inside functions with a *asyncio.T parameter, TaskGroup,
BoundedTaskGroup and Timeout bodies, Condition.WaitFor predicates, the
function given to WithLock or aio.WithServer, and loop callbacks (CallSoon,
CallLater, AddDoneCallback..., CallFuncOn's function, run on its target
loop, the exception handler and the SetBeforePoll/SetAfterPoll hooks),
and the methods of a type implementing one of aio's protocol interfaces
that the interface declares (DataReceived, ConnectionLost...). A
blocking function or method given to those by name (l.CallSoon(s.flush))
is reported where it is given. It does not look inside go statements, nor
inside function literals that are not called on the spot, such as the
functions given to asyncio.Go, asyncio.ToThread and asyncio.RunInExecutor,
which run off the loop. Raw fd reads and (*os.File).Read are not reported
in AddReader and AddWriter callbacks, which the loop calls when the fd is
ready; reads of
/proc, /sys and /dev/fd, served from memory, are not reported.

A loop that only polls (for { select { case ...; default: } }, nothing else
in the loop, nothing but continue in the default case, no use of the task
handle in it) is reported: it never awaits, so nothing else on the loop
runs until it ends.

Channel operations that provably do not block are not reported: a send on
a local buffered channel that has room (counted in straight-line code after
its make, or over the whole file for a channel used only by sends,
receives and close), a receive from one that holds a value, and a receive
or range over a channel after close(ch) when the variable is never
reassigned.

sync.Mutex and RWMutex locking is reported too: the loop stalls for as
long as another goroutine holds the lock. A local mutex that never leaves
its function (used only by its locking methods, there or in literals
called on the spot) is not. When the critical sections are known to be
short, -blockingcall.mutex=false turns that part off.

Fix: await instead of blocking. asyncio.Sleep(t, d) for time.Sleep (offered
as a suggested fix where the error can be returned mechanically);
asyncio.Recv(t, ch) / asyncio.Send(t, ch, v) for channels; asyncio.Lock,
Event, Condition and Queue between tasks; the aio package's loop
connections for networking; and asyncio.Go(t, func(ctx context.Context)
(V, error)) for any other blocking call, which runs it on its own goroutine
while the task awaits it.`,
	Run:              runBlockingCall,
	RunDespiteErrors: true,
	FactTypes:        []analysis.Fact{new(blocksFact)},
}

// reportMutex is the -blockingcall.mutex flag. sync.Mutex and RWMutex
// locking is reported by default, but a short critical section shared with
// another goroutine is a common and usually harmless pattern, so it can be
// turned off on its own.
var reportMutex = true

func init() {
	BlockingCall.Flags.BoolVar(&reportMutex, "mutex", true,
		"report sync.Mutex.Lock and RWMutex.Lock/RLock inside tasks (a short critical section shared with another goroutine is often harmless)")
}

// blocker describes blocking functions of one package and receiver.
type blocker struct {
	path, recv string
	names      []string
	hint       string
}

const (
	hintGo      = "call it inside asyncio.Go(t, func(ctx context.Context) (V, error) {...}), which runs it off the loop while the task awaits"
	hintLock    = "use an asyncio.Lock between tasks, or take the lock inside asyncio.Go(t, ...)"
	hintNetDial = "connect with aio.DialConn or aio.OpenConnection, or " + hintGo
	hintHTTP    = "make the request inside asyncio.Go(t, ...) with http.NewRequestWithContext(ctx, ...), or over an aio.Conn"
	hintCtx     = "run it inside asyncio.Go(t, ...) with the ...Context variant and its ctx"
	hintFD      = "make the fd non-blocking and read it in a Loop.AddReader callback, or " + hintGo
)

var blockers = []blocker{
	{"time", "", []string{"Sleep"}, "use asyncio.Sleep(t, d)"},
	{"sync", "Mutex", []string{"Lock"}, hintLock},
	{"sync", "RWMutex", []string{"Lock", "RLock"}, hintLock},
	{"sync", "WaitGroup", []string{"Wait"}, "await the work with asyncio.Go(t, ...), or run tasks in an asyncio.TaskGroup"},
	{"sync", "Cond", []string{"Wait"}, "use an asyncio.Condition between tasks, or wait inside asyncio.Go(t, ...)"},
	{"golang.org/x/sync/semaphore", "Weighted", []string{"Acquire"}, "use an asyncio.Semaphore between tasks, or acquire inside asyncio.Go(t, ...)"},
	{"net", "", []string{"Dial", "DialTimeout", "DialTCP", "DialUDP", "DialIP", "DialUnix"}, hintNetDial},
	{"net", "Dialer", []string{"Dial", "DialContext"}, hintNetDial},
	{"net", "Listener", []string{"Accept"}, "serve with aio.StartServer, or " + hintGo},
	{"net", "TCPListener", []string{"Accept", "AcceptTCP"}, "serve with aio.StartServer, or " + hintGo},
	{"net", "UnixListener", []string{"Accept", "AcceptUnix"}, "serve with aio.StartServer, or " + hintGo},
	{"net", "", []string{"LookupHost", "LookupIP", "LookupAddr", "LookupCNAME", "LookupMX", "LookupNS", "LookupPort", "LookupSRV", "LookupTXT"}, hintGo},
	{"net", "Resolver", []string{"LookupHost", "LookupIP", "LookupIPAddr", "LookupNetIP", "LookupAddr", "LookupCNAME", "LookupMX", "LookupNS", "LookupPort", "LookupSRV", "LookupTXT"}, hintGo},
	// The Read and Write methods of *net.TCPConn, *net.UnixConn... are
	// promoted from the unexported net.conn, so this matches only calls on
	// those concrete types, never on a net.Conn that may be a loop Conn.
	{"net", "conn", []string{"Read", "Write"}, "use a loop connection (aio.DialConn), or " + hintGo},
	{"net/http", "", []string{"Get", "Head", "Post", "PostForm"}, hintHTTP},
	{"net/http", "Client", []string{"Do", "Get", "Head", "Post", "PostForm"}, hintHTTP},
	{"net/http", "Transport", []string{"RoundTrip"}, hintHTTP},
	{"net/http", "", []string{"ListenAndServe", "ListenAndServeTLS", "Serve", "ServeTLS"}, "serve on a goroutine of its own (go srv.ListenAndServe()) or with aio.StartServer"},
	{"net/http", "Server", []string{"ListenAndServe", "ListenAndServeTLS", "Serve", "ServeTLS"}, "serve on a goroutine of its own (go srv.ListenAndServe()) or with aio.StartServer"},
	{"net/http", "Server", []string{"Shutdown"}, "shut it down inside asyncio.Go(t, func(ctx context.Context) (V, error) {...}): Shutdown waits for every connection to go idle"},
	{"os", "", []string{"ReadFile", "WriteFile", "ReadDir"}, hintGo},
	{"path/filepath", "", []string{"Walk", "WalkDir", "Glob"}, hintGo}, // they read directories, as os.ReadDir does
	{"os", "File", []string{"Read", "ReadAt", "ReadDir", "Readdir", "Readdirnames"}, hintGo},
	{"fmt", "", []string{"Scan", "Scanln", "Scanf"}, "read standard input inside asyncio.Go(t, func(ctx context.Context) (V, error) {...}), which runs it off the loop while the task awaits"},
	{"syscall", "", []string{"Read", "Pread", "Recvfrom", "Recvmsg", "Accept", "Accept4"}, hintFD},
	{"golang.org/x/sys/unix", "", []string{"Read", "Pread", "Recvfrom", "Recvmsg", "Accept", "Accept4"}, hintFD},
	{"os/exec", "Cmd", []string{"Run", "Wait", "Output", "CombinedOutput"}, "run the command inside asyncio.Go(t, ...) with exec.CommandContext(ctx, ...)"},
	{"os", "Process", []string{"Wait"}, "wait for it inside asyncio.Go(t, ...), or start it with aio.CreateSubprocessExec and await its Wait"},
	{"database/sql", "DB", []string{"Query", "QueryContext", "QueryRow", "QueryRowContext", "Exec", "ExecContext", "Ping", "PingContext", "Begin", "BeginTx", "Prepare", "PrepareContext", "Conn"}, hintCtx},
	{"database/sql", "Tx", []string{"Query", "QueryContext", "QueryRow", "QueryRowContext", "Exec", "ExecContext", "Prepare", "PrepareContext", "Commit", "Rollback"}, hintCtx},
	{"database/sql", "Conn", []string{"QueryContext", "QueryRowContext", "ExecContext", "PingContext", "BeginTx", "PrepareContext"}, hintCtx},
	{"database/sql", "Stmt", []string{"Query", "QueryContext", "QueryRow", "QueryRowContext", "Exec", "ExecContext"}, hintCtx},
}

// ioReaders maps the io functions that read until EOF or a count to the
// index of their reader argument. They block only when the reader does:
// the check reports them only for readers that provably block (files and
// net connections), never for a loop Conn or a reader built on one.
var ioReaders = map[string]int{"ReadAll": 0, "Copy": 1, "CopyN": 1, "CopyBuffer": 1, "ReadFull": 0, "ReadAtLeast": 0}

// displayName renders fn as pkg.Func or pkg.Recv.Method.
func displayName(fn *types.Func) string {
	name := fn.Name()
	if r := recvName(fn); r != "" {
		if r == "conn" { // promoted into TCPConn, UnixConn, UDPConn, IPConn
			r = "Conn"
		}
		name = r + "." + name
	}
	if fn.Pkg() != nil {
		name = fn.Pkg().Name() + "." + name
	}
	return name
}

// findBlocker returns the blocker entry matching fn.
func findBlocker(fn *types.Func) (blocker, bool) {
	for _, b := range blockers {
		if funcIs(fn, b.path, b.recv, b.names...) {
			return b, true
		}
	}
	return blocker{}, false
}

func runBlockingCall(pass *analysis.Pass) (any, error) {
	if pass.TypesInfo == nil {
		return nil, nil
	}
	rep := newReporter(pass)
	lists := map[*ast.File]map[ast.Stmt]bool{}
	srcs := map[*ast.File]*blockingSources{}
	srcsOf := func(f *ast.File) *blockingSources {
		if srcs[f] == nil {
			srcs[f] = newBlockingSources(pass, f)
		}
		return srcs[f]
	}
	facts := newBlockingFacts(pass, srcsOf)
	for _, r := range findRoots(pass) {
		if lists[r.file] == nil {
			lists[r.file] = listStmts(r.file)
		}
		c := &blockingChecker{pass: pass, rep: rep, root: r, lists: lists[r.file], srcs: srcsOf(r.file), facts: facts}
		c.w = &loopWalker{visit: c.visit}
		c.w.walk(r.body)
	}
	reportBlockingFuncValues(pass, rep, facts)
	return nil, nil
}

// reportBlockingFuncValues reports a declared function or a method value
// that blocks (it has the blocks fact) given by name to the library as a
// loop callback or as a body that runs inside the calling task:
// l.CallSoon(s.flush), asyncio.TaskGroup(t, w.body). The function runs on
// the loop as surely as a literal would; a literal is checked as a root of
// its own. AddReader and AddWriter callbacks, whose fd is ready when they
// run, are left alone.
func reportBlockingFuncValues(pass *analysis.Pass, rep *reporter, facts *blockingFacts) {
	info := pass.TypesInfo
	for _, f := range files(pass) {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn := callee(info, call)
			if _, ok := bodyKind(fn); !ok || libFuncIs(fn, "Loop", "AddReader", "AddWriter") {
				return true
			}
			for _, a := range call.Args {
				g := funcValue(info, a)
				if g == nil {
					continue
				}
				if fact := facts.lookup(g); fact != nil {
					rep.reportf(a.Pos(), "%s, given to %s, blocks the whole event loop when it runs: it %s; make it await, or run the blocking part inside asyncio.Go(t, ...)", displayName(g), displayName(fn), fact.Why)
				}
			}
			return true
		})
	}
}

// funcValue returns the declared function or method that e names as a
// value (f, pkg.F, x.M), or nil.
func funcValue(info *types.Info, e ast.Expr) *types.Func {
	var fn *types.Func
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		fn, _ = info.Uses[x].(*types.Func)
	case *ast.SelectorExpr:
		if sel := info.Selections[x]; sel != nil {
			if sel.Kind() != types.MethodVal {
				return nil
			}
			fn, _ = sel.Obj().(*types.Func)
		} else {
			fn, _ = info.Uses[x.Sel].(*types.Func)
		}
	}
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// blockingChecker checks one root.
type blockingChecker struct {
	pass  *analysis.Pass
	rep   *reporter
	root  *root
	lists map[ast.Stmt]bool
	srcs  *blockingSources
	facts *blockingFacts
	w     *loopWalker
	stmt  *ast.ExprStmt // the expression statement being visited, if any
}

// where names the kind of function being checked, for messages.
func (c *blockingChecker) where() string {
	switch c.root.kind {
	case rootInline:
		if c.root.withLock {
			return "a task's WithLock body"
		}
		if c.root.withServer {
			return "a task's WithServer body"
		}
		if c.root.predicate {
			return "a Condition.WaitFor predicate (it runs inside the waiting task)"
		}
		return "a task's TaskGroup/Timeout body"
	case rootCallback:
		if c.root.protocol {
			return "a protocol callback (the loop calls it)"
		}
		return "a loop callback"
	}
	return "a task"
}

func (c *blockingChecker) visit(n ast.Node, nested bool) bool {
	info := c.pass.TypesInfo
	switch n := n.(type) {
	case *ast.ExprStmt:
		c.stmt = n
	case *ast.CallExpr:
		c.checkCall(n, nested)
		c.calledNow(n)
	case *ast.SendStmt:
		if isChan(info.TypeOf(n.Chan)) && !c.srcs.roomy[n] {
			c.rep.reportf(n.Arrow, "channel send inside %s blocks the whole event loop until a receiver is ready; use asyncio.Send(t, ch, v)", c.where())
		}
	case *ast.UnaryExpr:
		if n.Op == token.ARROW && isChan(info.TypeOf(n.X)) && !c.srcs.safe[n] {
			c.rep.reportf(n.OpPos, "channel receive inside %s blocks the whole event loop until a value arrives; use asyncio.Recv(t, ch)", c.where())
		}
	case *ast.RangeStmt:
		if isChan(info.TypeOf(n.X)) && !c.srcs.safe[n] {
			c.rep.reportf(n.For, "range over a channel inside %s blocks the whole event loop at every receive; loop on asyncio.Recv(t, ch) instead", c.where())
		}
	case *ast.SelectStmt:
		c.checkSelect(n)
		return false
	case *ast.ForStmt:
		c.checkPollingLoop(n)
	}
	return true
}

// checkPollingLoop reports a loop that only polls: `for { select { case
// ...: ...; default: } }` with nothing else in the loop and nothing in the
// default case. Inside a task it never gives the loop control, so nothing
// else on the loop runs until it ends, and a value that a task or a
// callback would send never comes: the "add a default case to poll" fix of
// a select without default, taken without the await. A loop with a
// condition, with other statements, with work in its default case, or
// that uses the task handle anywhere (an await in a case, or in a
// literal) is not reported.
func (c *blockingChecker) checkPollingLoop(f *ast.ForStmt) {
	if f.Cond != nil || f.Post != nil || f.Body == nil || len(f.Body.List) != 1 {
		return
	}
	sel, ok := f.Body.List[0].(*ast.SelectStmt)
	if !ok {
		return
	}
	polls := false
	for _, cl := range sel.Body.List {
		if cc, ok := cl.(*ast.CommClause); ok && cc.Comm == nil {
			polls = true
			for _, st := range cc.Body {
				if br, ok := st.(*ast.BranchStmt); !ok || br.Tok != token.CONTINUE || br.Label != nil {
					return // work or an exit in the default case
				}
			}
		}
	}
	if !polls || usesTaskHandle(c.pass.TypesInfo, f.Body) {
		return
	}
	c.rep.reportf(f.For, "this loop only polls with select and default inside %s: it never awaits, so the event loop runs nothing else (no task, timer or callback) until it ends, and a value a task would send never comes; wait with asyncio.Recv(t, ch) or asyncio.Wait, or await asyncio.Sleep(t, 0) in the default case", c.where())
}

// usesTaskHandle reports whether n mentions a value of type *asyncio.T,
// function literals included: such a loop may await.
func usesTaskHandle(info *types.Info, n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if found {
			return false
		}
		if e, ok := n.(ast.Expr); ok && isTaskHandle(info.TypeOf(e)) {
			found = true
		}
		return !found
	})
	return found
}

// calledNow walks the function literals that a call runs before it
// returns, on the caller's goroutine: the function given to sync.Once.Do
// (once.Do(func() { cfg, _ = os.ReadFile(path) }) loads inside the task).
func (c *blockingChecker) calledNow(call *ast.CallExpr) {
	if !funcIs(callee(c.pass.TypesInfo, call), "sync", "Once", "Do") {
		return
	}
	for _, a := range call.Args {
		if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok && lit.Body != nil {
			c.w.nested++
			c.w.walk(lit.Body)
			c.w.nested--
			continue
		}
		// once.Do(loadSettings): the named function runs here as well.
		if g := funcValue(c.pass.TypesInfo, a); g != nil {
			if fact := c.facts.lookup(g); fact != nil {
				c.rep.reportf(a.Pos(), "%s, given to sync.Once.Do, blocks the whole event loop when it runs (on the first call, inside %s): it %s; load it inside asyncio.Go(t, ...), or before the loop starts", displayName(g), c.where(), fact.Why)
			}
		}
	}
}

// checkSelect reports a select without a default case and checks the
// clauses' bodies; the communications of a select are not reported one by
// one, since the select is what blocks.
func (c *blockingChecker) checkSelect(s *ast.SelectStmt) {
	hasDefault := false
	for _, cl := range s.Body.List {
		if cc, ok := cl.(*ast.CommClause); ok && cc.Comm == nil {
			hasDefault = true
		}
	}
	if !hasDefault {
		c.rep.reportf(s.Select, "select without a default case inside %s blocks the whole event loop until a case is ready; wait with asyncio.Recv/asyncio.Wait, or add a default case to poll", c.where())
	}
	for _, cl := range s.Body.List {
		if cc, ok := cl.(*ast.CommClause); ok {
			for _, st := range cc.Body {
				c.w.walk(st)
			}
		}
	}
}

// isChan reports whether t is a channel type (not a type parameter, whose
// operations the check does not try to resolve).
func isChan(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return false
	}
	_, ok := t.Underlying().(*types.Chan)
	return ok
}

func (c *blockingChecker) checkCall(call *ast.CallExpr, nested bool) {
	fn := callee(c.pass.TypesInfo, call)
	if fn == nil {
		return
	}
	if b, ok := findBlocker(fn); ok {
		if isMutexLock(fn) && (!reportMutex || c.srcs.uncontendedLock(call)) {
			return
		}
		if c.root.fdReady && (isRawFDCall(fn) || funcIs(fn, "os", "File", "Read", "ReadAt")) {
			return // one read, and the loop calls it when the fd is ready
		}
		if c.srcs.pseudoFSCall(call, fn) {
			return
		}
		d := analysis.Diagnostic{
			Pos:     call.Pos(),
			Message: displayName(fn) + " inside " + c.where() + " blocks the whole event loop until it returns; " + b.hint,
		}
		if fix, ok := c.sleepFix(call, fn, nested); ok {
			d.SuggestedFixes = []analysis.SuggestedFix{fix}
		}
		c.rep.report(d)
		return
	}
	what, ok := ioReaderCall(c.srcs, call, fn)
	if !ok {
		what, ok = c.srcs.blockingMethod(call, fn)
	}
	if ok {
		c.rep.reportf(call.Pos(), "%s inside %s blocks the whole event loop until the read completes; read inside asyncio.Go(t, ...), or from a loop connection", what, c.where())
		return
	}
	if f := c.facts.lookup(fn); f != nil {
		c.rep.reportf(call.Pos(), "%s inside %s blocks the whole event loop until it returns: it %s; make it await (pass it the task's *asyncio.T), or call it inside asyncio.Go(t, ...)", displayName(fn), c.where(), f.Why)
	}
}

// sleepFix offers, for a statement time.Sleep(d) directly in a task's body
// whose results end with an error, the replacement
//
//	if err := asyncio.Sleep(t, d); err != nil {
//		return <zeros>, err
//	}
func (c *blockingChecker) sleepFix(call *ast.CallExpr, fn *types.Func, nested bool) (analysis.SuggestedFix, bool) {
	var none analysis.SuggestedFix
	r := c.root
	stmt := c.stmt
	if !funcIs(fn, "time", "", "Sleep") || nested || r.kind != rootTask || r.tparam == nil ||
		stmt == nil || stmt.X != call || !c.lists[stmt] || len(call.Args) != 1 || call.Ellipsis.IsValid() {
		return none, false
	}
	if !resolvesTo(c.pass, call.Pos(), r.tparam.Name(), r.tparam) {
		return none, false
	}
	qual, ok := asyncioQualifier(c.pass, r.file, call.Pos())
	if !ok {
		return none, false
	}
	ret, ok := errReturn(r.sig)
	if !ok {
		return none, false
	}
	// The time import must stay in use once this call is gone.
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return none, false
	}
	pkgID, ok := sel.X.(*ast.Ident)
	if !ok || !usedElsewhere(c.pass, r.file, pkgID) {
		return none, false
	}
	ind := indentOf(c.pass.Fset, stmt.Pos())
	return analysis.SuggestedFix{
		Message: "Replace time.Sleep with asyncio.Sleep and return its error",
		TextEdits: []analysis.TextEdit{
			{Pos: stmt.Pos(), End: call.Lparen + 1, NewText: []byte("if err := " + qual + ".Sleep(" + r.tparam.Name() + ", ")},
			{Pos: stmt.End(), End: stmt.End(), NewText: []byte("; err != nil {\n" + ind + "\t" + ret + "\n" + ind + "}")},
		},
	}, true
}

// usedElsewhere reports whether the package name id refers to is used in
// file at another place than id.
func usedElsewhere(pass *analysis.Pass, file *ast.File, id *ast.Ident) bool {
	obj := pass.TypesInfo.Uses[id]
	if obj == nil {
		return false
	}
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		if found {
			return false
		}
		if x, ok := n.(*ast.Ident); ok && x != id && pass.TypesInfo.Uses[x] == obj {
			found = true
		}
		return true
	})
	return found
}

// blockingSources holds what the check knows about the values of one
// file (blockingsrc.go): which readers provably block, which channel
// operations provably do not, which local mutexes nobody else can hold.
type blockingSources struct {
	pass     *analysis.Pass
	assigns  map[*types.Var][]valueAt // every value assigned to a local variable
	unknown  map[*types.Var]bool      // assigned in a way the check does not follow
	rangeOf  map[*types.Var]ast.Expr  // what the value variable of a range statement ranges over
	memo     map[*types.Var]source
	visiting map[*types.Var]bool
	// roomy holds the sends that cannot block: on a local channel made
	// only with make(chan T, n), n a constant, that the file sends on at
	// most n times, never inside a loop, and uses in no other way than
	// sending, receiving and closing (so nothing else fills it), the
	// common "report the result on a buffered channel" idiom; and the
	// sends that findSafeChanOps proves find room.
	roomy map[*ast.SendStmt]bool
	// safe holds the receives and ranges that cannot block (findSafeChanOps).
	safe map[ast.Node]bool
	// uncontended holds the local mutexes that nothing else can lock.
	uncontended map[*types.Var]bool
}

func newBlockingSources(pass *analysis.Pass, file *ast.File) *blockingSources {
	s := &blockingSources{
		pass:        pass,
		assigns:     map[*types.Var][]valueAt{},
		unknown:     map[*types.Var]bool{},
		rangeOf:     map[*types.Var]ast.Expr{},
		memo:        map[*types.Var]source{},
		visiting:    map[*types.Var]bool{},
		roomy:       map[*ast.SendStmt]bool{},
		safe:        map[ast.Node]bool{},
		uncontended: map[*types.Var]bool{},
	}
	s.collectAssigns(file)
	if noGoto(file) { // a goto may repeat a send that the count saw once
		s.findRoomySends(file)
		s.findSafeChanOps(file)
	}
	s.findUncontended(file)
	return s
}

// blocks reports whether reading from e blocks the goroutine, and what e
// is, for the message.
func (s *blockingSources) blocks(e ast.Expr) (string, bool) {
	src := s.sourceAt(e, 0)
	if src.kind == srcReader || src.kind == srcConn {
		return src.what, true
	}
	return "", false
}

// findRoomySends fills s.roomy for file.
func (s *blockingSources) findRoomySends(file *ast.File) {
	info := s.pass.TypesInfo
	capOf := map[*types.Var]int64{} // buffer of every make seen; -1 once anything else is assigned
	setCap := func(v *types.Var, rhs ast.Expr) {
		c := int64(-1)
		if call, ok := ast.Unparen(rhs).(*ast.CallExpr); ok && len(call.Args) == 2 {
			if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
				if _, builtin := info.Uses[id].(*types.Builtin); builtin && id.Name == "make" {
					if tv, ok := info.Types[call.Args[1]]; ok && tv.Value != nil {
						if n, exact := constant.Int64Val(constant.ToInt(tv.Value)); exact && n > 0 {
							c = n
						}
					}
				}
			}
		}
		if prev, seen := capOf[v]; seen && (prev < 0 || c < 0) {
			c = -1
		} else if seen {
			c = min(prev, c)
		}
		capOf[v] = c
	}
	sends := map[*types.Var][]*ast.SendStmt{}
	okUse := map[*ast.Ident]bool{} // uses as a send's, receive's or close's channel
	inLoop := map[*ast.SendStmt]bool{}
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				if v := localVar(s.pass, id); v != nil && len(n.Lhs) == len(n.Rhs) {
					setCap(v, n.Rhs[i])
				} else if v != nil {
					capOf[v] = -1
				}
				okUse[id] = true
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if v := localVar(s.pass, id); v != nil {
					if len(n.Values) == len(n.Names) {
						setCap(v, n.Values[i])
					} else {
						capOf[v] = -1
					}
				}
			}
		case *ast.SendStmt:
			if id, ok := ast.Unparen(n.Chan).(*ast.Ident); ok {
				if v := localVar(s.pass, id); v != nil {
					sends[v] = append(sends[v], n)
					okUse[id] = true
				}
			}
			for _, a := range stack[:len(stack)-1] {
				switch a.(type) {
				case *ast.ForStmt, *ast.RangeStmt:
					inLoop[n] = true
				}
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.ARROW {
				okUse[id] = true
			}
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "close" && len(n.Args) == 1 {
				if _, builtin := info.Uses[id].(*types.Builtin); builtin {
					if a, ok := ast.Unparen(n.Args[0]).(*ast.Ident); ok {
						okUse[a] = true
					}
				}
			}
		}
		return true
	})
	escapes := map[*types.Var]bool{}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && within(id.Pos(), file) && !okUse[id] {
			escapes[v] = true
		}
	}
	for v, ss := range sends {
		c, ok := capOf[v]
		if !ok || c < int64(len(ss)) || escapes[v] || slices.ContainsFunc(ss, func(st *ast.SendStmt) bool { return inLoop[st] }) {
			continue
		}
		for _, st := range ss {
			s.roomy[st] = true
		}
	}
}
