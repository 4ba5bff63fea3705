package passes

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// UnawaitedTask reports tasks that are created and then provably
// forgotten.
var UnawaitedTask = &analysis.Analyzer{
	Name: "unawaitedtask",
	Doc: `report tasks created with CreateTask and never awaited, stored or grouped

asyncio.CreateTask (or CreateTaskErr) starts a task and returns its *Task. When the result is
discarded, nothing awaits the task: its error (a failure or a cancellation)
is lost, nothing waits for it before the caller returns, and the loop
reports it as never retrieved or still pending when it closes. This is
asyncio's "Task was destroyed but it is pending!", caught at compile time.

The check reports CreateTask when its result is discarded by an expression
statement or a defer statement, assigned to _, or assigned to a local variable whose only other
appearances are assignments to it and "_ = v". Anything else (awaiting it,
passing it anywhere, storing it in a field, slice or map) counts as kept,
on every path: a task awaited on one branch of an if and dropped on the
other is not reported (a known limit; the check does not follow control
flow).
asyncio.Spawn into a TaskGroup is never reported: the group awaits its
tasks.

Fix: await the task (v, err := tk.Await(t)), keep it and await it later,
or start it in a TaskGroup with asyncio.Spawn(g, fn).`,
	Run:              runUnawaitedTask,
	RunDespiteErrors: true,
}

func runUnawaitedTask(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	if info == nil {
		return nil, nil
	}
	rep := newReporter(pass)
	isCreate := func(e ast.Expr) (*ast.CallExpr, bool) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return nil, false
		}
		return call, libFuncIs(callee(info, call), "", "CreateTask", "CreateTaskErr")
	}
	const msg = "the task started by CreateTask is never awaited: its error, a cancellation included, is lost and nothing waits for it; await it (tk.Await(t)), keep it, or start it in a TaskGroup with asyncio.Spawn"
	for _, f := range files(pass) {
		var candidates []struct {
			call *ast.CallExpr
			v    *types.Var
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ExprStmt:
				if call, ok := isCreate(n.X); ok {
					rep.reportf(call.Pos(), "%s", msg)
				}
			case *ast.DeferStmt:
				// defer asyncio.CreateTask(l, cleanup): the deferred call's
				// result is dropped as surely as a statement's.
				if call, ok := isCreate(n.Call); ok {
					rep.reportf(call.Pos(), "%s", msg)
				}
			case *ast.AssignStmt:
				if len(n.Lhs) != len(n.Rhs) || (n.Tok != token.ASSIGN && n.Tok != token.DEFINE) {
					break
				}
				for i, r := range n.Rhs {
					call, ok := isCreate(r)
					if !ok {
						continue
					}
					if isBlank(n.Lhs[i]) {
						rep.reportf(call.Pos(), "%s", msg)
						continue
					}
					if id, ok := n.Lhs[i].(*ast.Ident); ok {
						if v := localVar(pass, id); v != nil {
							candidates = append(candidates, struct {
								call *ast.CallExpr
								v    *types.Var
							}{call, v})
						}
					}
				}
			case *ast.ValueSpec:
				if len(n.Names) != len(n.Values) {
					break
				}
				for i, r := range n.Values {
					call, ok := isCreate(r)
					if !ok {
						continue
					}
					if n.Names[i].Name == "_" {
						rep.reportf(call.Pos(), "%s", msg)
					} else if v := localVar(pass, n.Names[i]); v != nil {
						candidates = append(candidates, struct {
							call *ast.CallExpr
							v    *types.Var
						}{call, v})
					}
				}
			}
			return true
		})
		if len(candidates) == 0 {
			continue
		}
		kept := keptVars(pass, f)
		for _, c := range candidates {
			if !kept[c.v] {
				rep.reportf(c.call.Pos(), "%s", msg)
			}
		}
	}
	return nil, nil
}

// keptVars returns the local variables of file that are read somewhere: an
// appearance that is neither the left side of an assignment nor the right
// side of an assignment to _ alone.
func keptVars(pass *analysis.Pass, file *ast.File) map[*types.Var]bool {
	info := pass.TypesInfo
	// Identifiers that are written, not read, or read only to be dropped.
	notRead := map[*ast.Ident]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		if as.Tok == token.ASSIGN || as.Tok == token.DEFINE {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					notRead[id] = true
				}
			}
		}
		allBlank := true
		for _, l := range as.Lhs {
			allBlank = allBlank && isBlank(l)
		}
		if allBlank && as.Tok == token.ASSIGN {
			for _, r := range as.Rhs {
				if id, ok := ast.Unparen(r).(*ast.Ident); ok {
					notRead[id] = true
				}
			}
		}
		return true
	})
	kept := map[*types.Var]bool{}
	for id, obj := range info.Uses {
		v, ok := obj.(*types.Var)
		if !ok || notRead[id] || !within(id.Pos(), file) {
			continue
		}
		kept[v] = true
	}
	return kept
}
