package passes

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// WrongHandle reports task functions that await with the *asyncio.T of an
// enclosing task instead of their own.
var WrongHandle = &analysis.Analyzer{
	Name: "wronghandle",
	Doc: `report a task function that awaits with a *T captured from an enclosing task

Every await takes the running task's handle t: it tells the scheduler which
task suspends. A function literal that runs as a task of its own
(CreateTask, Spawn, GatherFuncs, RunCoroutineThreadsafe...) receives its own
*asyncio.T; if its body awaits with the t of the function that created it
(a classic slip when nesting closures, or when the parameter is named _),
the await suspends the wrong task: the outer task may not even be running,
and the library reports a misuse or the program deadlocks.

Fix: await with the literal's own parameter (name it if it is unnamed). A
suggested fix renames the captured handle to the parameter when the
parameter has a name.

Function literals passed to WaitForFunc or Retry are exempt (they run
their function inside the calling task and hand it the caller's own
handle, so both handles are the same task), as are literals called
directly or stored in a variable that is called directly.`,
	Run:              runWrongHandle,
	RunDespiteErrors: true,
}

func runWrongHandle(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	if info == nil {
		return nil, nil
	}
	rep := newReporter(pass)
	for _, f := range files(pass) {
		exempt := sameTaskLits(pass, f)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.FuncLit)
			if !ok || lit.Body == nil || exempt[lit] {
				return true
			}
			own := taskParam(litSig(info, lit))
			if own == nil {
				return true
			}
			checkHandles(pass, rep, lit, own)
			return true
		})
	}
	return nil, nil
}

// sameTaskLits returns the function literals of file that run inside the
// task that creates them, with the same handle: literals passed to
// WaitForFunc or Retry (which call them with the caller's own *T), called
// on the spot, or bound to a local variable that is called directly.
func sameTaskLits(pass *analysis.Pass, file *ast.File) map[*ast.FuncLit]bool {
	info := pass.TypesInfo
	out := map[*ast.FuncLit]bool{}
	called := map[*types.Var]bool{}
	bound := map[*ast.FuncLit]*types.Var{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch fun := ast.Unparen(n.Fun).(type) {
			case *ast.FuncLit:
				out[fun] = true
			case *ast.Ident:
				if v := localVar(pass, fun); v != nil {
					called[v] = true
				}
			}
			if libFuncIs(callee(info, n), "", "WaitForFunc", "Retry") {
				for _, a := range n.Args {
					if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok {
						out[lit] = true
					}
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, r := range n.Rhs {
					lit, ok := ast.Unparen(r).(*ast.FuncLit)
					id, ok2 := n.Lhs[i].(*ast.Ident)
					if ok && ok2 {
						if v := localVar(pass, id); v != nil {
							bound[lit] = v
						}
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) {
				for i, r := range n.Values {
					if lit, ok := ast.Unparen(r).(*ast.FuncLit); ok {
						if v := localVar(pass, n.Names[i]); v != nil {
							bound[lit] = v
						}
					}
				}
			}
		}
		return true
	})
	for lit, v := range bound {
		if called[v] {
			out[lit] = true
		}
	}
	return out
}

// checkHandles reports the awaits in lit's body that use a task handle
// declared outside lit. Nested task literals are checked on their own, and
// go statements belong to foreigngoroutine.
func checkHandles(pass *analysis.Pass, rep *reporter, lit *ast.FuncLit, own *types.Var) {
	info := pass.TypesInfo
	// captured returns the handle variable e denotes if it is declared
	// outside lit.
	captured := func(e ast.Expr) (*ast.Ident, *types.Var) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil, nil
		}
		v := localVar(pass, id)
		if v == nil || v == own || !isTaskHandle(v.Type()) || within(v.Pos(), lit) {
			return nil, nil
		}
		return id, v
	}
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			return false
		case *ast.FuncLit:
			return taskParam(litSig(info, n)) == nil
		case *ast.CallExpr:
			// outer.Await(aw)
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Await" {
				if fn := callee(info, n); fn != nil && libFuncIs(fn, "T", "Await") {
					if id, v := captured(sel.X); id != nil {
						reportHandle(pass, rep, id, v, own, "T.Await")
					}
				}
			}
			// f(..., outer, ...) where f's parameter is a *asyncio.T.
			sig := callSig(info, n)
			for i, a := range n.Args {
				if !isTaskHandle(paramTypeAt(sig, i, n.Ellipsis.IsValid())) {
					continue
				}
				if id, v := captured(a); id != nil {
					what := "the call"
					if fn := callee(info, n); fn != nil {
						what = displayName(fn)
					}
					reportHandle(pass, rep, id, v, own, what)
				}
			}
		}
		return true
	})
}

// reportHandle reports the use id of the outer handle outer where own was
// meant, with a fix when own has a name that resolves at id.
func reportHandle(pass *analysis.Pass, rep *reporter, id *ast.Ident, outer, own *types.Var, what string) {
	d := analysis.Diagnostic{Pos: id.Pos()}
	if own.Name() == "" || own.Name() == "_" {
		d.Message = what + " awaits with " + outer.Name() + ", the handle of an enclosing task, inside a task function whose own *asyncio.T parameter is unnamed: the await suspends the wrong task; name the parameter and await with it"
		rep.report(d)
		return
	}
	d.Message = what + " awaits with " + outer.Name() + ", the handle of an enclosing task, instead of this task's own " + own.Name() + ": the await suspends the wrong task; use " + own.Name()
	if resolvesTo(pass, id.Pos(), own.Name(), own) {
		d.SuggestedFixes = []analysis.SuggestedFix{{
			Message:   "Await with " + own.Name(),
			TextEdits: []analysis.TextEdit{{Pos: id.Pos(), End: id.End(), NewText: []byte(own.Name())}},
		}}
	}
	rep.report(d)
}
