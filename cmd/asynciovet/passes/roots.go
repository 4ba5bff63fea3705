package passes

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// rootKind says why a function runs on the event loop.
type rootKind int

const (
	// rootTask is a function with a *asyncio.T parameter: a coroutine, run
	// by a task.
	rootTask rootKind = iota
	// rootInline is a function the library calls inside the calling task:
	// a TaskGroup, BoundedTaskGroup or Timeout body, a Condition.WaitFor
	// predicate, the function given to WithLock or aio.WithServer.
	rootInline
	// rootCallback is a loop callback: CallSoon, CallLater, CallAt,
	// CallSoonThreadsafe, AddReader, AddWriter, AddDoneCallback, the
	// function CallFuncOn runs on its target loop, the loop's exception
	// handler, its poll hooks (SetBeforePoll, SetAfterPoll) and signal
	// handlers (AddSignalHandler).
	rootCallback
)

// root is a function whose body runs on the event loop's schedule, so
// anything that blocks its goroutine stalls every task and timer.
type root struct {
	node   ast.Node // *ast.FuncDecl or *ast.FuncLit
	body   *ast.BlockStmt
	sig    *types.Signature
	tparam *types.Var // the *asyncio.T parameter of a rootTask, else nil
	kind   rootKind
	file   *ast.File
	// fdReady is set for AddReader and AddWriter callbacks, which the
	// loop calls when their fd is ready: a raw read there does not block.
	fdReady bool
	// withLock is set for the function given to WithLock, which runs
	// inside the calling task while it holds the lock.
	withLock bool
	// withServer is set for the function given to aio.WithServer, which
	// runs inside the calling task while the server serves.
	withServer bool
	// predicate is set for a Condition.WaitFor predicate, which runs
	// inside the waiting task each time it is woken.
	predicate bool
	// protocol is set for a method of a type that implements one of
	// aio's protocol interfaces, which the loop calls as a callback
	// (DataReceived, ConnectionLost...).
	protocol bool
}

// taskParam returns the first *asyncio.T parameter of sig, or nil.
func taskParam(sig *types.Signature) *types.Var {
	if sig == nil || sig.Params() == nil {
		return nil
	}
	for i := 0; i < sig.Params().Len(); i++ {
		if p := sig.Params().At(i); isTaskHandle(p.Type()) {
			return p
		}
	}
	return nil
}

// litSig returns the signature of a function literal, or nil.
func litSig(info *types.Info, lit *ast.FuncLit) *types.Signature {
	if info == nil || lit == nil {
		return nil
	}
	sig, _ := types.Unalias(info.TypeOf(lit)).(*types.Signature)
	return sig
}

// declSig returns the signature of a declared function, or nil.
func declSig(info *types.Info, decl *ast.FuncDecl) *types.Signature {
	if info == nil || decl == nil || decl.Name == nil {
		return nil
	}
	fn, _ := info.Defs[decl.Name].(*types.Func)
	return funcSig(fn)
}

// bodyKind says whether the library runs function arguments of a call of fn
// inside the calling task or as loop callbacks.
func bodyKind(fn *types.Func) (rootKind, bool) {
	switch {
	case libFuncIs(fn, "", "TaskGroup", "BoundedTaskGroup", "Timeout", "TimeoutAt", "WithLock", "WithServer"),
		libFuncIs(fn, "Condition", "WaitFor"):
		return rootInline, true
	case libFuncIs(fn, "Loop", "CallSoon", "CallLater", "CallAt", "CallSoonThreadsafe", "AddReader", "AddWriter",
		"SetExceptionHandler", "SetBeforePoll", "SetAfterPoll", "AddSignalHandler"),
		libFuncIs(fn, "", "CallFuncOn"): // fn runs as a callback of the target loop
		return rootCallback, true
	case fn != nil && isLibPkg(fn.Pkg()) && recvName(fn) != "" && fn.Name() == "AddDoneCallback":
		return rootCallback, true
	}
	return 0, false
}

// findRoots returns the functions of the checked files that run on the
// loop: declared functions and literals with a *asyncio.T parameter, and
// literals handed to the library as task bodies or loop callbacks.
func findRoots(pass *analysis.Pass) []*root {
	info := pass.TypesInfo
	protos := protocolsOf(pass.Pkg)
	var roots []*root
	for _, f := range files(pass) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				sig := declSig(info, n)
				if p := taskParam(sig); p != nil && n.Body != nil {
					roots = append(roots, &root{node: n, body: n.Body, sig: sig, tparam: p, kind: rootTask, file: f})
				} else if n.Body != nil && protos.callback(info, n) {
					roots = append(roots, &root{node: n, body: n.Body, sig: sig, kind: rootCallback, file: f, protocol: true})
				}
			case *ast.FuncLit:
				sig := litSig(info, n)
				if p := taskParam(sig); p != nil && n.Body != nil {
					roots = append(roots, &root{node: n, body: n.Body, sig: sig, tparam: p, kind: rootTask, file: f})
				}
			case *ast.CallExpr:
				fn := callee(info, n)
				kind, ok := bodyKind(fn)
				if !ok {
					break
				}
				fdReady := libFuncIs(fn, "Loop", "AddReader", "AddWriter")
				for _, a := range n.Args {
					lit, ok := ast.Unparen(a).(*ast.FuncLit)
					if !ok || lit.Body == nil {
						continue
					}
					sig := litSig(info, lit)
					if taskParam(sig) != nil {
						continue // a root of its own (rootTask)
					}
					roots = append(roots, &root{node: lit, body: lit.Body, sig: sig, kind: kind, file: f, fdReady: fdReady, withLock: libFuncIs(fn, "", "WithLock"), withServer: libFuncIs(fn, "", "WithServer"), predicate: libFuncIs(fn, "Condition", "WaitFor")})
				}
			}
			return true
		})
	}
	return roots
}

// loopWalker visits the code that runs on the loop's schedule when a root
// runs: the root's body and the function literals it calls on the spot
// (deferred ones included). It does not enter other function literals (they
// run when and where their receiver decides: another goroutine, the
// executor, or as a root of their own) nor go statements, which it hands to
// onGo.
type loopWalker struct {
	visit  func(n ast.Node, nested bool) bool // false: skip n's children
	onGo   func(g *ast.GoStmt)
	nested int // > 0 inside a literal called on the spot
}

// walk visits n and what it contains.
func (w *loopWalker) walk(n ast.Node) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if w.onGo != nil {
				w.onGo(n)
			}
			return false
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
				if w.visit(n, w.nested > 0) {
					for _, a := range n.Args {
						w.walk(a)
					}
					w.nested++
					w.walk(lit.Body)
					w.nested--
				}
				return false
			}
		}
		if n == nil {
			return true
		}
		return w.visit(n, w.nested > 0)
	})
}

// listStmts returns the statements of file that sit directly in a
// statement list (a block or a case clause), where one statement may be
// replaced by another, such as an if statement.
func listStmts(file *ast.File) map[ast.Stmt]bool {
	out := map[ast.Stmt]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		}
		for _, s := range list {
			out[s] = true
		}
		return true
	})
	return out
}

// indentOf returns the indentation of the line at pos in gofmt-formatted
// source (one tab per level).
func indentOf(fset *token.FileSet, pos token.Pos) string {
	col := fset.PositionFor(pos, false).Column
	ind := make([]byte, 0, col)
	for i := 1; i < col; i++ {
		ind = append(ind, '\t')
	}
	return string(ind)
}

// protocolNames are aio's protocol interfaces (asyncio's Protocol,
// BufferedProtocol, DatagramProtocol, SubprocessProtocol): the transports
// call their methods on the loop, as callbacks.
var protocolNames = []string{"Protocol", "BufferedProtocol", "DatagramProtocol", "SubprocessProtocol"}

// protocols holds the protocol interfaces that the package under analysis
// can see (it imports the package that declares them).
type protocols []*types.Interface

// protocolsOf returns the protocol interfaces of the library packages
// that pkg imports.
func protocolsOf(pkg *types.Package) protocols {
	if pkg == nil {
		return nil
	}
	var out protocols
	for _, imp := range pkg.Imports() {
		if !isLibPkg(imp) {
			continue
		}
		for _, name := range protocolNames {
			tn, ok := imp.Scope().Lookup(name).(*types.TypeName)
			if !ok {
				continue
			}
			if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
				out = append(out, it)
			}
		}
	}
	return out
}

// callback reports whether decl is a method that the loop calls as a
// protocol callback: its receiver's type (or a pointer to it) implements
// one of the protocol interfaces, and that interface has a method of
// decl's name.
func (ps protocols) callback(info *types.Info, decl *ast.FuncDecl) bool {
	if len(ps) == 0 || decl.Recv == nil || decl.Name == nil {
		return false
	}
	fn, ok := info.Defs[decl.Name].(*types.Func)
	if !ok {
		return false
	}
	sig := funcSig(fn)
	if sig == nil || sig.Recv() == nil {
		return false
	}
	n := namedOf(sig.Recv().Type())
	if n == nil || n.TypeParams().Len() > 0 {
		return false
	}
	for _, it := range ps {
		if !types.Implements(types.NewPointer(n), it) {
			continue
		}
		for i := 0; i < it.NumMethods(); i++ {
			if it.Method(i).Name() == fn.Name() {
				return true
			}
		}
	}
	return false
}
