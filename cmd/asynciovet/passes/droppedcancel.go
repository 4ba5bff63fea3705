package passes

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// DroppedCancel reports awaits whose error, and so a cancellation, is
// dropped.
var DroppedCancel = &analysis.Analyzer{
	Name: "droppedcancel",
	Doc: `report awaits whose error is discarded, so that a cancellation is swallowed

Cancellation reaches a task as a *asyncio.CancelledError returned by the
await it is suspended in (Sleep, Await, Acquire, Get, Put, Wait, Timeout,
TaskGroup, WaitFor, ReadLine...). A task that drops that error carries on
as if nothing happened: it is asyncio's "swallowed CancelledError". The
canceller waits for a task that does not stop, a TaskGroup or Timeout
cannot unwind, and a shutdown hangs.

The check reports an await (a function or method of the asyncio or aio
package that takes the running task's *asyncio.T and returns an error)
whose error is:
  - discarded by an expression statement: asyncio.Sleep(t, d)
  - assigned to the blank identifier: _ = lk.Acquire(t), v, _ := q.Get(t)
  - checked by "if err != nil { ... }" where the body only logs and/or
    continues (or "if err == nil { ... } else { ... }" with such an
    else, or "if err != nil && !errors.Is(err, io.EOF) { ... }", other
    terms reading err only through errors.Is/As; not after an await that
    relays another awaitable's outcome), and err is not read anywhere
    else (its declaration
    without a value, var err error, assignments to it and other such
    checks of it are not reads);
  - tested by "if err != nil && !asyncio.IsCancelled(err) { ... }" (or
    !errors.Is(err, asyncio.ErrCancelled)), and not read anywhere else:
    a cancellation skips the branch with success and is forgotten. Not
    after an await that relays another awaitable's outcome (Await,
    WaitFor, Go, CallOn...), whose cancellation may be that of a task
    the caller cancelled itself;
  - stored in a local variable that nothing reads (only assignments and
    "_ = err"), or that the next statement assigns again without reading
    it;
  - given to a function of the package that only logs or drops its
    error parameter, logErr(q.Put(t, v)), or to a print function,
    log.Println("wait:", ev.Wait(t)).
It stays silent when the body returns, panics, breaks, calls Uncancel or
any other function, tests IsCancelled or errors.Is/As, or stores err; and
on cleanup awaits inside "if asyncio.IsCancelled(err) { ...; return err }"
(or a return of fmt.Errorf("...: %w", err) or errors.Join(..., err), which
still carry it): the task returns the cancellation right after, whatever
they say. Deferred awaits (defer w.WaitClosed(t), or the statements of a
deferred literal outside its loops) are the cleanup of a function that
is returning and are not reported either.

Fix: return the error (wrapped if you like) so the task ends cancelled;
or, to really keep going after a cancellation, handle it explicitly and
call t.Uncancel(). Where the enclosing function returns an error and its
other results have literal zero values, a suggested fix rewrites a
discarded await as
	if err := asyncio.Sleep(t, d); err != nil {
		return 0, err
	}`,
	Run:              runDroppedCancel,
	RunDespiteErrors: true,
}

// awaitResults returns the number of results of call if it is an await:
// a call of a function or method of the library that takes a *asyncio.T
// (or is T.Await) and whose last result is an error.
func awaitResults(info *types.Info, call *ast.CallExpr) (*types.Func, int, bool) {
	fn := callee(info, call)
	sig := funcSig(fn)
	if sig == nil || !isLibPkg(fn.Pkg()) || sig.Results() == nil || sig.Results().Len() == 0 {
		return nil, 0, false
	}
	if !isErrorType(sig.Results().At(sig.Results().Len() - 1).Type()) {
		return nil, 0, false
	}
	// ContextVar.Reset takes the task only to find its context: it never
	// suspends, and its error reports a misused token, not a cancellation.
	if libFuncIs(fn, "ContextVar", "Reset") {
		return nil, 0, false
	}
	if libFuncIs(fn, "T", "Await") || taskParam(sig) != nil {
		return fn, sig.Results().Len(), true
	}
	return nil, 0, false
}

func runDroppedCancel(pass *analysis.Pass) (any, error) {
	if pass.TypesInfo == nil {
		return nil, nil
	}
	rep := newReporter(pass)
	sinks := errorSinks(pass)
	for _, f := range files(pass) {
		d := &dropChecker{pass: pass, rep: rep, lists: listStmts(f), unwinding: unwindingStmts(pass.TypesInfo, f), sinks: sinks}
		// Visit every function body with its signature, innermost first on
		// the stack, so that a fix returns from the right function.
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil {
					d.function(n.Body, declSig(pass.TypesInfo, n))
				}
				return false
			case *ast.FuncLit:
				d.function(n.Body, litSig(pass.TypesInfo, n))
				return false
			}
			return true
		})
	}
	return nil, nil
}

// dropChecker checks the functions of one file.
type dropChecker struct {
	pass      *analysis.Pass
	rep       *reporter
	lists     map[ast.Stmt]bool
	unwinding map[ast.Stmt]bool                        // cleanup awaits of a function that returns right after (unwindingStmts, deferredStmts)
	captured  map[*ast.BlockStmt]map[types.Object]bool // per function body: the variables its literals refer to
	read      map[*types.Var]bool                      // whether a local variable is read in its function at all
	sinks     map[*types.Func]map[int]bool             // functions of the package that drop their error parameter i (errorSinks)
}

// unwindingStmts returns the statements of file that sit directly in the
// body of "if asyncio.IsCancelled(err) { ...; return ..., err }" (or
// errors.Is(err, asyncio.ErrCancelled)): the cleanup of a task whose
// cancellation was delivered and which then ends with it. A cleanup await
// there (say goodbye, drain) may drop its error: whatever it says, the task
// returns the cancellation next, so nothing is swallowed.
func unwindingStmts(info *types.Info, file *ast.File) map[ast.Stmt]bool {
	out := map[ast.Stmt]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		ifs, ok := n.(*ast.IfStmt)
		if !ok || ifs.Body == nil || len(ifs.Body.List) == 0 {
			return true
		}
		v := cancelledTest(info, ifs.Cond)
		if v == nil {
			return true
		}
		ret, ok := ifs.Body.List[len(ifs.Body.List)-1].(*ast.ReturnStmt)
		if !ok || len(ret.Results) == 0 {
			return true
		}
		if !returnsErr(info, ret.Results[len(ret.Results)-1], v) {
			return true
		}
		for _, st := range ifs.Body.List[:len(ifs.Body.List)-1] {
			if assigns(info, st, v) {
				break // what follows may return something else
			}
			out[st] = true
		}
		return true
	})
	deferredStmts(file, out)
	return out
}

// deferredStmts adds to out the statements of the function literals that
// file defers (defer func() { ...; w.WaitClosed(t) }()), outside loops:
// like a deferred await (defer w.WaitClosed(t)), they are the cleanup of a
// function that is returning, so a cancellation there ends nothing that
// would carry on.
func deferredStmts(file *ast.File, out map[ast.Stmt]bool) {
	ast.Inspect(file, func(n ast.Node) bool {
		ds, ok := n.(*ast.DeferStmt)
		if !ok || ds.Call == nil {
			return true
		}
		lit, ok := ast.Unparen(ds.Call.Fun).(*ast.FuncLit)
		if !ok || lit.Body == nil {
			return true
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
				return false // another function; a loop that may go on awaiting
			case ast.Stmt:
				out[n] = true
			}
			return true
		})
		return true
	})
}

// returnsErr reports whether e is v, or v wrapped so that errors.Is still
// finds the cancellation in it: fmt.Errorf with a constant format whose
// %w verb takes v, or errors.Join with v among its arguments.
func returnsErr(info *types.Info, e ast.Expr, v types.Object) bool {
	isV := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.ObjectOf(id) == v
	}
	if isV(e) {
		return true
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || call.Ellipsis.IsValid() {
		return false
	}
	fn := callee(info, call)
	switch {
	case funcIs(fn, "errors", "", "Join"):
		return slices.ContainsFunc(call.Args, isV)
	case funcIs(fn, "fmt", "", "Errorf") && len(call.Args) > 1:
		tv, ok := info.Types[call.Args[0]]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			return false
		}
		verbs, ok := printfVerbs(constant.StringVal(tv.Value))
		if !ok {
			return false
		}
		for i, a := range call.Args[1:] {
			if i < len(verbs) && verbs[i] == 'w' && isV(a) {
				return true
			}
		}
	}
	return false
}

// printfVerbs returns the verbs of a printf format, one per argument, in
// order; false for a format the scan does not follow (explicit argument
// indexes, a '*' width or precision).
func printfVerbs(format string) ([]byte, bool) {
	var verbs []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return nil, false
		}
		switch format[i] {
		case '%':
			continue
		case '[', '*':
			return nil, false
		}
		verbs = append(verbs, format[i])
	}
	return verbs, true
}

// cancelledTest returns v if cond is asyncio.IsCancelled(v),
// errors.Is(v, asyncio.ErrCancelled) or errors.As(v, &ce) with ce a
// *asyncio.CancelledError, else nil.
func cancelledTest(info *types.Info, cond ast.Expr) types.Object {
	call, ok := ast.Unparen(cond).(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	fn := callee(info, call)
	switch {
	case libFuncIs(fn, "", "IsCancelled") && len(call.Args) == 1:
	case funcIs(fn, "errors", "", "Is") && len(call.Args) == 2:
		sel, ok := ast.Unparen(call.Args[1]).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "ErrCancelled" {
			return nil
		}
		if obj := info.ObjectOf(sel.Sel); obj == nil || !isLibPkg(obj.Pkg()) {
			return nil
		}
	case funcIs(fn, "errors", "", "As") && len(call.Args) == 2:
		// errors.As(err, &ce) with ce a *asyncio.CancelledError
		u, ok := ast.Unparen(call.Args[1]).(*ast.UnaryExpr)
		if !ok || u.Op != token.AND {
			return nil
		}
		t := info.TypeOf(u.X)
		if _, isPtr := types.Unalias(t).(*types.Pointer); t == nil || !isPtr || !libNamed(t, "CancelledError") {
			return nil
		}
	default:
		return nil
	}
	id, ok := ast.Unparen(call.Args[0]).(*ast.Ident)
	if !ok {
		return nil
	}
	if _, ok := info.ObjectOf(id).(*types.Var); !ok {
		return nil
	}
	return info.ObjectOf(id)
}

// assigns reports whether st assigns to v, after which v may no longer
// hold the cancellation.
func assigns(info *types.Info, st ast.Stmt, v types.Object) bool {
	found := false
	ast.Inspect(st, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok && info.ObjectOf(id) == v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// function checks the statements of one function body, and the nested
// function literals as functions of their own.
func (d *dropChecker) function(body *ast.BlockStmt, sig *types.Signature) {
	if body == nil {
		return
	}
	var checked []checkedErr
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			d.function(n.Body, litSig(d.pass.TypesInfo, n))
			return false
		case *ast.ExprStmt:
			d.exprStmt(n, sig)
		case *ast.AssignStmt:
			d.blankAssign(n, sig)
		case *ast.BlockStmt:
			checked = append(checked, d.list(n.List, body)...)
		case *ast.CaseClause:
			checked = append(checked, d.list(n.Body, body)...)
		case *ast.CommClause:
			checked = append(checked, d.list(n.Body, body)...)
		}
		return true
	})
	d.reportChecked(checked, body)
}

// exprStmt reports an await used as a statement.
func (d *dropChecker) exprStmt(s *ast.ExprStmt, sig *types.Signature) {
	call, ok := ast.Unparen(s.X).(*ast.CallExpr)
	if !ok {
		return
	}
	fn, nres, ok := awaitResults(d.pass.TypesInfo, call)
	if !ok && !d.unwinding[s] {
		d.sunk(call)
	}
	if !ok || d.unwinding[s] {
		return
	}
	diag := analysis.Diagnostic{
		Pos:     call.Pos(),
		Message: "the error of " + displayName(fn) + " is discarded: a cancellation is swallowed and the task carries on; return the error (or handle the cancellation and call t.Uncancel())",
	}
	if ret, ok := errReturn(sig); ok && d.lists[s] {
		diag.SuggestedFixes = []analysis.SuggestedFix{propagateFix(d.pass, s, call.Pos(), nres, ret, "Return the error of "+displayName(fn))}
	}
	d.rep.report(diag)
}

// sunk reports the call h(await(...)) of a function of the package that
// drops (or only logs) the error it is given: logErr(q.Put(t, v)).
func (d *dropChecker) sunk(call *ast.CallExpr) {
	fn := callee(d.pass.TypesInfo, call)
	params := d.sinks[fn]
	if isLogCall(fn) && !call.Ellipsis.IsValid() {
		// log.Print(ev.Wait(t)): a print function only logs what it is
		// given, whichever argument the error is.
		params = map[int]bool{}
		for i := range call.Args {
			params[i] = true
		}
	}
	if len(params) == 0 || call.Ellipsis.IsValid() {
		return
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s := d.pass.TypesInfo.Selections[sel]; s != nil && s.Kind() == types.MethodExpr {
			return // T.m(x, err): the arguments are shifted by the receiver
		}
	}
	for i, a := range call.Args {
		inner, ok := ast.Unparen(a).(*ast.CallExpr)
		if !ok || !params[i] {
			continue
		}
		if fn, nres, ok := awaitResults(d.pass.TypesInfo, inner); ok && nres == 1 {
			d.rep.reportf(inner.Pos(), "the error of %s is given to %s, which only logs or drops it: a cancellation is swallowed and the task carries on; return the error (or handle the cancellation and call t.Uncancel())", displayName(fn), displayName(callee(d.pass.TypesInfo, call)))
		}
	}
}

// errorSinks returns the functions declared in the package whose error
// parameters are dropped: read nowhere, or only by logging calls and by
// "if err != nil" tests whose branch only logs or returns nothing. Given
// an await's error, such a helper swallows the cancellation as surely as
// "_ =" does.
func errorSinks(pass *analysis.Pass) map[*types.Func]map[int]bool {
	info := pass.TypesInfo
	out := map[*types.Func]map[int]bool{}
	for _, f := range files(pass) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Name == nil {
				continue
			}
			fn, ok := info.Defs[fd.Name].(*types.Func)
			sig := funcSig(fn)
			if !ok || sig == nil || sig.Variadic() {
				continue
			}
			for i := 0; i < sig.Params().Len(); i++ {
				p := sig.Params().At(i)
				if p.Name() == "" || p.Name() == "_" || !isErrorType(p.Type()) || !dropsParam(info, fd.Body, p) {
					continue
				}
				if out[fn] == nil {
					out[fn] = map[int]bool{}
				}
				out[fn][i] = true
			}
		}
	}
	return out
}

// dropsParam reports whether body reads p only as an argument of a
// logging call or in "if p != nil" tests whose branch only logs (or is
// "return" with no results).
func dropsParam(info *types.Info, body *ast.BlockStmt, p *types.Var) bool {
	allowed := map[*ast.Ident]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if n.Init == nil && n.Else == nil && isNotNil(info, n.Cond, p) && logsOnly(info, n.Body) {
				ast.Inspect(n, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						allowed[id] = true
					}
					return true
				})
			}
		case *ast.CallExpr:
			if isLogCall(callee(info, n)) {
				for _, a := range n.Args {
					if id, ok := ast.Unparen(a).(*ast.Ident); ok {
						allowed[id] = true
					}
				}
			}
		}
		return true
	})
	return !readElsewhereIdents(info, body, p, allowed)
}

// logsOnly reports whether body holds only logging calls and bare returns.
func logsOnly(info *types.Info, body *ast.BlockStmt) bool {
	for _, s := range body.List {
		switch s := s.(type) {
		case *ast.ExprStmt:
			call, ok := ast.Unparen(s.X).(*ast.CallExpr)
			if !ok || !isLogCall(callee(info, call)) {
				return false
			}
		case *ast.ReturnStmt:
			if len(s.Results) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// readElsewhereIdents reports whether v is read in body by an identifier
// not in allowed (assignments to v and "_ = v" are not reads).
func readElsewhereIdents(info *types.Info, body *ast.BlockStmt, v *types.Var, allowed map[*ast.Ident]bool) bool {
	read := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !allowed[id] && info.ObjectOf(id) == types.Object(v) {
			read = true
		}
		return !read
	})
	if !read {
		return false
	}
	return readElsewhere(info, body, v, identSet(allowed))
}

// identSet turns a set of identifiers into a set of nodes.
func identSet(ids map[*ast.Ident]bool) map[ast.Node]bool {
	out := make(map[ast.Node]bool, len(ids))
	for id := range ids {
		out[id] = true
	}
	return out
}

// blankAssign reports an await whose error result is assigned to _.
func (d *dropChecker) blankAssign(s *ast.AssignStmt, sig *types.Signature) {
	if len(s.Rhs) != 1 || (s.Tok != token.ASSIGN && s.Tok != token.DEFINE) {
		return
	}
	call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return
	}
	fn, nres, ok := awaitResults(d.pass.TypesInfo, call)
	if !ok || len(s.Lhs) != nres || !isBlank(s.Lhs[nres-1]) || d.unwinding[s] {
		return
	}
	diag := analysis.Diagnostic{
		Pos:     s.Lhs[nres-1].Pos(),
		Message: "the error of " + displayName(fn) + " is assigned to _: a cancellation is swallowed and the task carries on; return the error (or handle the cancellation and call t.Uncancel())",
	}
	allBlank := true
	for _, l := range s.Lhs {
		allBlank = allBlank && isBlank(l)
	}
	if ret, ok := errReturn(sig); ok && allBlank && s.Tok == token.ASSIGN && d.lists[s] {
		diag.SuggestedFixes = []analysis.SuggestedFix{propagateFix(d.pass, s, call.Pos(), nres, ret, "Return the error of "+displayName(fn))}
	}
	d.rep.report(diag)
}

// isBlank reports whether e is the blank identifier.
func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// checkedErr is an await whose error is stored in a local variable and
// then tested by the if statement that follows, in a way that drops a
// cancellation:
//
//	if err := await(); err != nil { log(err) }  // swallow: the branch only logs
//	err := await()
//	if err != nil && !asyncio.IsCancelled(err) { ... }  // filter: a cancellation skips the branch
//
// It is reported only if nothing else reads the variable (reportChecked).
type checkedErr struct {
	fn     *types.Func
	v      *types.Var
	def    ast.Stmt
	ifs    *ast.IfStmt
	filter bool // the condition keeps cancellations out of the branch
	// partial is set for a condition with terms besides the nil test
	// (err != nil && !errors.Is(err, io.EOF)): an error may reach the
	// else branch, whose reads then count.
	partial bool
}

// region returns the nodes of c in which the reads of c.v are the test's
// own: the assignment, and the whole if statement for a swallow (its else
// branch sees a nil error) or its condition and body for a filter (its
// else branch is where a cancellation goes).
func (c checkedErr) region() []ast.Node {
	if c.filter || c.partial {
		return []ast.Node{c.def, c.ifs.Cond, c.ifs.Body}
	}
	return []ast.Node{c.def, c.ifs}
}

// list looks in a statement list for an await whose error is checked and
// then ignored, or tested so that a cancellation skips the branch:
//
//	if err := await(); err != nil { log(err) }
//	err := await()
//	if err != nil { continue }
//	if err != nil && !asyncio.IsCancelled(err) { return err }
func (d *dropChecker) list(stmts []ast.Stmt, fnBody *ast.BlockStmt) []checkedErr {
	var out []checkedErr
	for i, s := range stmts {
		d.deadStore(stmts, i, fnBody)
		ifs, ok := s.(*ast.IfStmt)
		if !ok {
			continue
		}
		def := ifs.Init
		if def == nil && i > 0 {
			def = stmts[i-1]
		}
		if def == nil || d.unwinding[ifs] {
			continue
		}
		fn, _, errVar := d.awaitErrVar(def, fnBody)
		if errVar == nil {
			continue
		}
		switch {
		case !relaysOutcome(fn) && excludesCancellation(d.pass.TypesInfo, ifs.Cond, errVar):
			out = append(out, checkedErr{fn: fn, v: errVar, def: def, ifs: ifs, filter: true})
		case isNotNil(d.pass.TypesInfo, ifs.Cond, errVar) && swallows(d.pass.TypesInfo, ifs.Body):
			out = append(out, checkedErr{fn: fn, v: errVar, def: def, ifs: ifs})
		case !relaysOutcome(fn) && notNilAnd(d.pass.TypesInfo, ifs.Cond, errVar) && swallows(d.pass.TypesInfo, ifs.Body):
			// if err != nil && !errors.Is(err, io.EOF) { log(err) }: a
			// cancellation is not io.EOF, takes the branch and is logged;
			// or, failing another term, skips it, and is dropped all the
			// same unless something else reads err.
			out = append(out, checkedErr{fn: fn, v: errVar, def: def, ifs: ifs, partial: true})
		case isNil(d.pass.TypesInfo, ifs.Cond, errVar) && elseSwallows(d.pass.TypesInfo, ifs):
			// if err == nil { ... } else { log(err) }: the else branch is
			// the error's, and it only logs.
			out = append(out, checkedErr{fn: fn, v: errVar, def: def, ifs: ifs})
		}
	}
	return out
}

// awaitErrVar returns the await that st assigns and the local variable of
// fnBody that receives its error, if st is such an assignment.
func (d *dropChecker) awaitErrVar(st ast.Stmt, fnBody *ast.BlockStmt) (*types.Func, *ast.Ident, *types.Var) {
	as, ok := st.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 || (as.Tok != token.ASSIGN && as.Tok != token.DEFINE) {
		return nil, nil, nil
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return nil, nil, nil
	}
	fn, nres, ok := awaitResults(d.pass.TypesInfo, call)
	if !ok || len(as.Lhs) != nres {
		return nil, nil, nil
	}
	id, ok := as.Lhs[nres-1].(*ast.Ident)
	if !ok {
		return nil, nil, nil
	}
	v := localVar(d.pass, id)
	if v == nil || !within(v.Pos(), fnBody) {
		return nil, nil, nil // a result parameter or a captured variable: it may be returned
	}
	return fn, id, v
}

// deadStore reports the await assigned by stmts[i] when its error variable
// is never read in the function (only assigned, or "_ = err"), or when the
// next statement assigns the variable again without reading it: either
// way the error, a cancellation included, is gone before anything looks
// at it.
func (d *dropChecker) deadStore(stmts []ast.Stmt, i int, fnBody *ast.BlockStmt) {
	if d.unwinding[stmts[i]] {
		return
	}
	fn, id, v := d.awaitErrVar(stmts[i], fnBody)
	if v == nil {
		return
	}
	info := d.pass.TypesInfo
	if d.read == nil {
		d.read = map[*types.Var]bool{}
	}
	read, ok := d.read[v]
	if !ok {
		read = readElsewhere(info, fnBody, v, nil)
		d.read[v] = read
	}
	if !read {
		d.rep.reportf(id.Pos(), "the error of %s is assigned to %s, which nothing reads: a cancellation is swallowed and the task carries on; return the error (or handle the cancellation and call t.Uncancel())", displayName(fn), v.Name())
		return
	}
	if i+1 >= len(stmts) || d.capturedIn(fnBody, v) {
		return // a deferred or concurrent literal might read it in between
	}
	next, ok := stmts[i+1].(*ast.AssignStmt)
	if !ok || (next.Tok != token.ASSIGN && next.Tok != token.DEFINE) {
		return
	}
	writes := false
	for _, l := range next.Lhs {
		if lid, ok := l.(*ast.Ident); ok && info.ObjectOf(lid) == types.Object(v) {
			writes = true
		}
	}
	if !writes || slices.ContainsFunc(next.Rhs, func(e ast.Expr) bool { return mentions(info, e, v) }) {
		return
	}
	d.rep.reportf(id.Pos(), "the error of %s is assigned to %s and overwritten by the next statement before anything reads it: a cancellation is swallowed and the task carries on; check it first and return it", displayName(fn), v.Name())
}

// mentions reports whether v appears in n.
func mentions(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.ObjectOf(id) == types.Object(v) {
			found = true
		}
		return !found
	})
	return found
}

// capturedIn reports whether a function literal in fnBody refers to v.
// The variables the literals of a body refer to are collected once per
// body, so that a long function with many awaits stays linear.
func (d *dropChecker) capturedIn(fnBody *ast.BlockStmt, v *types.Var) bool {
	if d.captured == nil {
		d.captured = map[*ast.BlockStmt]map[types.Object]bool{}
	}
	refs, ok := d.captured[fnBody]
	if !ok {
		refs = map[types.Object]bool{}
		info := d.pass.TypesInfo
		ast.Inspect(fnBody, func(n ast.Node) bool {
			lit, ok := n.(*ast.FuncLit)
			if !ok {
				return true
			}
			ast.Inspect(lit.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					if obj := info.ObjectOf(id); obj != nil {
						refs[obj] = true
					}
				}
				return true
			})
			return false
		})
		d.captured[fnBody] = refs
	}
	return refs[v]
}

// reportChecked reports the checked awaits of one function whose variable
// nothing reads outside such tests: every error stored in it then ends
// in a branch that only logs, or never reaches one if it is a
// cancellation. (Two loops that each swallow the errors of their awaits
// into one err are both reported.)
func (d *dropChecker) reportChecked(checked []checkedErr, fnBody *ast.BlockStmt) {
	regions := map[*types.Var]map[ast.Node]bool{}
	for _, c := range checked {
		if regions[c.v] == nil {
			regions[c.v] = map[ast.Node]bool{}
		}
		for _, n := range c.region() {
			regions[c.v][n] = true
		}
	}
	readOutside := map[*types.Var]bool{}
	for v, skip := range regions {
		readOutside[v] = readElsewhere(d.pass.TypesInfo, fnBody, v, skip)
	}
	for _, c := range checked {
		if readOutside[c.v] {
			continue
		}
		if c.filter {
			d.rep.reportf(c.ifs.If, "the error of %s is tested so that a cancellation skips the branch, and nothing else reads it: a cancellation is swallowed and the task carries on (unlike Python's except Exception, nothing propagates it); return it: if asyncio.IsCancelled(err) { return err }", displayName(c.fn))
			continue
		}
		d.rep.reportf(c.ifs.If, "the error of %s is checked but the branch only logs or continues: a cancellation is swallowed and the task carries on; return the error (or test asyncio.IsCancelled(err) and call t.Uncancel() if carrying on is intended)", displayName(c.fn))
	}
}

// relaysOutcome reports whether the await fn returns the outcome of
// something else it waits for: an awaitable (Task.Await, Future.Await,
// T.Await, WaitFor, Wait) or a function it runs (Go, CallOn, TaskGroup).
// A cancellation from it may be that other thing's (a task the caller
// cancelled itself, then awaits), which code rightly filters out with
// !asyncio.IsCancelled(err). Any other await (Sleep, Acquire, Get, Wait
// on an Event, a stream read) returns only the calling task's own
// cancellation.
func relaysOutcome(fn *types.Func) bool {
	sig := funcSig(fn)
	if sig == nil || fn.Name() == "Await" {
		return true
	}
	for i := 0; i < sig.Params().Len(); i++ {
		t := sig.Params().At(i).Type()
		for {
			if s, ok := t.Underlying().(*types.Slice); ok {
				t = s.Elem()
				continue
			}
			break
		}
		if tp, ok := types.Unalias(t).(*types.TypeParam); ok {
			t = tp.Constraint()
		}
		if _, ok := t.Underlying().(*types.Signature); ok {
			return true
		}
		if libNamed(t, "Awaitable", "AwaitableOf", "Task", "Future") {
			return true
		}
	}
	return false
}

// conjuncts returns the terms of cond joined by &&, in order (cond
// itself when it is not a conjunction).
func conjuncts(cond ast.Expr) []ast.Expr {
	if b, ok := ast.Unparen(cond).(*ast.BinaryExpr); ok && b.Op == token.LAND {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	return []ast.Expr{cond}
}

// excludesCancellation reports whether cond is a conjunction with the
// terms v != nil and !asyncio.IsCancelled(v) (or !errors.Is(v,
// asyncio.ErrCancelled)): a cancellation then skips the branch together
// with success, and the code after it carries on as if the await had
// succeeded. (Without the nil test only a cancellation skips the branch,
// so the code after it is the cancellation's own handler.)
func excludesCancellation(info *types.Info, cond ast.Expr, v *types.Var) bool {
	terms := conjuncts(cond)
	notNil, notCancelled := false, false
	for _, e := range terms {
		if isNotNil(info, e, v) {
			notNil = true
		}
		if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.NOT && cancelledTest(info, u.X) == types.Object(v) {
			notCancelled = true
		}
	}
	return notNil && notCancelled
}

// notNilAnd reports whether cond is a conjunction of "v != nil" with other
// terms that read v, if at all, only as the error that errors.Is,
// errors.As or asyncio.IsCancelled tests (err != nil && !errors.Is(err,
// io.EOF)), and that does not keep a cancellation out of the branch
// (that is excludesCancellation's filter).
func notNilAnd(info *types.Info, cond ast.Expr, v *types.Var) bool {
	terms := conjuncts(cond)
	if len(terms) < 2 {
		return false
	}
	notNil := false
	for _, e := range terms {
		if isNotNil(info, e, v) {
			notNil = true
			continue
		}
		if !mentions(info, e, v) {
			continue
		}
		x := ast.Unparen(e)
		if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.NOT {
			if cancelledTest(info, u.X) == types.Object(v) {
				return false // the filter
			}
			x = ast.Unparen(u.X)
		}
		call, ok := x.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		fn := callee(info, call)
		if !funcIs(fn, "errors", "", "Is", "As") && !libFuncIs(fn, "", "IsCancelled") {
			return false
		}
		if id, ok := ast.Unparen(call.Args[0]).(*ast.Ident); !ok || info.ObjectOf(id) != types.Object(v) {
			return false
		}
		for _, a := range call.Args[1:] {
			if mentions(info, a, v) {
				return false
			}
		}
	}
	return notNil
}

// isNotNil reports whether cond is exactly "v != nil" or "nil != v".
func isNotNil(info *types.Info, cond ast.Expr, v *types.Var) bool {
	return comparesNil(info, cond, v, token.NEQ)
}

// isNil reports whether cond is exactly "v == nil" or "nil == v".
func isNil(info *types.Info, cond ast.Expr, v *types.Var) bool {
	return comparesNil(info, cond, v, token.EQL)
}

// comparesNil reports whether cond compares v with nil with op.
func comparesNil(info *types.Info, cond ast.Expr, v *types.Var, op token.Token) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok || b.Op != op {
		return false
	}
	is := func(e ast.Expr, want types.Object) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.ObjectOf(id) == want
	}
	isNil := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		_, isNil := info.ObjectOf(id).(*types.Nil)
		return isNil
	}
	return (is(b.X, v) && isNil(b.Y)) || (isNil(b.X) && is(b.Y, v))
}

// elseSwallows reports whether ifs has a plain else block that swallows.
func elseSwallows(info *types.Info, ifs *ast.IfStmt) bool {
	els, ok := ifs.Else.(*ast.BlockStmt)
	return ok && swallows(info, els)
}

// swallows reports whether body provably neither propagates nor handles an
// error: it is empty or holds only logging calls and a bare continue.
// Anything else (a return, a panic, a break, a call of any other function,
// an assignment) might handle it, so the check stays silent.
func swallows(info *types.Info, body *ast.BlockStmt) bool {
	if body == nil {
		return false
	}
	for _, s := range body.List {
		switch s := s.(type) {
		case *ast.EmptyStmt:
		case *ast.BranchStmt:
			if s.Tok != token.CONTINUE || s.Label != nil {
				return false
			}
		case *ast.ExprStmt:
			call, ok := ast.Unparen(s.X).(*ast.CallExpr)
			if !ok || !isLogCall(callee(info, call)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isLogCall reports whether fn only prints: fmt.Print*, log.Print*,
// log/slog's leveled functions and methods, testing's Log/Logf.
func isLogCall(fn *types.Func) bool {
	return funcIs(fn, "fmt", "", "Print", "Printf", "Println", "Fprint", "Fprintf", "Fprintln") ||
		funcIs(fn, "log", "", "Print", "Printf", "Println") ||
		funcIs(fn, "log", "Logger", "Print", "Printf", "Println") ||
		funcIs(fn, "log/slog", "", "Debug", "Info", "Warn", "Error", "DebugContext", "InfoContext", "WarnContext", "ErrorContext", "Log") ||
		funcIs(fn, "log/slog", "Logger", "Debug", "Info", "Warn", "Error", "DebugContext", "InfoContext", "WarnContext", "ErrorContext", "Log") ||
		funcIs(fn, "testing", "common", "Log", "Logf")
}

// readElsewhere reports whether v is read in fnBody outside the nodes
// skip. Writes are not reads: the left side of an assignment, a
// declaration without a value (var err error), and "_ = v", which only
// silences the compiler.
func readElsewhere(info *types.Info, fnBody *ast.BlockStmt, v *types.Var, skip map[ast.Node]bool) bool {
	notRead := map[*ast.Ident]bool{}
	read := false
	ast.Inspect(fnBody, func(n ast.Node) bool {
		if read || n == nil {
			return false
		}
		if skip[n] {
			return false
		}
		switch n := n.(type) {
		case *ast.ValueSpec:
			if len(n.Values) == 0 {
				return false
			}
		case *ast.AssignStmt:
			if n.Tok == token.ASSIGN || n.Tok == token.DEFINE {
				allBlank := true
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						notRead[id] = true
					}
					allBlank = allBlank && isBlank(l)
				}
				if allBlank && n.Tok == token.ASSIGN {
					for _, r := range n.Rhs {
						if id, ok := ast.Unparen(r).(*ast.Ident); ok {
							notRead[id] = true
						}
					}
				}
			}
		case *ast.Ident:
			if !notRead[n] && info.ObjectOf(n) == types.Object(v) {
				read = true
			}
		}
		return true
	})
	return read
}
