package passes

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Import paths of the library. The analyzers match the library by path and
// name rather than by importing it, so this module does not depend on it.
const (
	// AsyncioPath is the import path of the core package.
	AsyncioPath = "github.com/go-asyncio/asyncio"
	// AioPath is the import path of the networking package (issue 9 moves
	// networking there; until then it lives in AsyncioPath, and every check
	// accepts both).
	AioPath = "github.com/go-asyncio/asyncio/aio"
)

// ignoreDirective is the comment prefix that suppresses a finding on its
// line and the next; fileIgnoreDirective, placed before the package clause,
// suppresses a check in the whole file (for a test file whose every case
// breaks the rule on purpose, such as scheduler tests that yield with a
// discarded Sleep(t, 0)).
const (
	ignoreDirective     = "//asynciovet:ignore"
	fileIgnoreDirective = "//asynciovet:file-ignore"
)

// isLibPath reports whether path is one of the library's packages.
func isLibPath(path string) bool { return path == AsyncioPath || path == AioPath }

// isLibPkg reports whether p is one of the library's packages.
func isLibPkg(p *types.Package) bool { return p != nil && isLibPath(p.Path()) }

// namedOf strips aliases and one pointer and returns the generic origin of
// the named type, or nil if t is not (a pointer to) a named type.
func namedOf(t types.Type) *types.Named {
	if t == nil {
		return nil
	}
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok {
		return nil
	}
	return n.Origin()
}

// namedIn reports whether t is (a pointer to) a named type declared in the
// package with the given path and carrying one of names.
func namedIn(t types.Type, path string, names ...string) bool {
	n := namedOf(t)
	if n == nil || n.Obj() == nil || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != path {
		return false
	}
	for _, name := range names {
		if n.Obj().Name() == name {
			return true
		}
	}
	return false
}

// libNamed reports whether t is (a pointer to) one of the library's named
// types called one of names.
func libNamed(t types.Type, names ...string) bool {
	return namedIn(t, AsyncioPath, names...) || namedIn(t, AioPath, names...)
}

// isTaskHandle reports whether t is *asyncio.T, the running task's handle.
func isTaskHandle(t types.Type) bool {
	if t == nil {
		return false
	}
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && namedIn(p.Elem(), AsyncioPath, "T")
}

// isErrorType reports whether t is the predeclared error type.
func isErrorType(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

// callee returns the generic origin of the function or method that call
// invokes statically (interface methods included), or nil for calls of
// function values, builtins, conversions and calls the type checker did not
// resolve.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	if info == nil || call == nil {
		return nil
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn == nil {
		return nil
	}
	return fn.Origin()
}

// funcSig returns fn's signature, or nil.
func funcSig(fn *types.Func) *types.Signature {
	if fn == nil {
		return nil
	}
	sig, _ := fn.Type().(*types.Signature)
	return sig
}

// recvName returns the name of the named type that declares method fn
// ("" for a plain function or an unnamed receiver).
func recvName(fn *types.Func) string {
	sig := funcSig(fn)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	if n := namedOf(sig.Recv().Type()); n != nil && n.Obj() != nil {
		return n.Obj().Name()
	}
	return ""
}

// funcIs reports whether fn is declared in the package at path, on the
// receiver type recv ("" for a package-level function), with one of names.
func funcIs(fn *types.Func, path, recv string, names ...string) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != path || recvName(fn) != recv {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

// libFuncIs is funcIs for either of the library's packages.
func libFuncIs(fn *types.Func, recv string, names ...string) bool {
	return funcIs(fn, AsyncioPath, recv, names...) || funcIs(fn, AioPath, recv, names...)
}

// callSig returns the signature of the function value call.Fun, which also
// covers calls of function variables, or nil.
func callSig(info *types.Info, call *ast.CallExpr) *types.Signature {
	if info == nil || call == nil {
		return nil
	}
	sig, _ := types.Unalias(info.TypeOf(call.Fun)).(*types.Signature)
	if sig == nil {
		if tv, ok := info.Types[call.Fun]; ok && tv.Type != nil {
			sig, _ = tv.Type.Underlying().(*types.Signature)
		}
	}
	return sig
}

// paramTypeAt returns the type of the parameter that receives argument i of
// a call of sig, or nil.
func paramTypeAt(sig *types.Signature, i int, hasEllipsis bool) types.Type {
	if sig == nil || sig.Params() == nil {
		return nil
	}
	n := sig.Params().Len()
	if n == 0 {
		return nil
	}
	if i < n-1 || (i == n-1 && (!sig.Variadic() || hasEllipsis)) {
		return sig.Params().At(i).Type()
	}
	if !sig.Variadic() {
		return nil
	}
	s, ok := sig.Params().At(n - 1).Type().Underlying().(*types.Slice)
	if !ok {
		return nil
	}
	return s.Elem()
}

// localVar returns the local variable that id refers to, or nil if id is
// not a variable declared inside a function of the package being analyzed.
func localVar(pass *analysis.Pass, id *ast.Ident) *types.Var {
	if id == nil || pass.TypesInfo == nil {
		return nil
	}
	v, ok := pass.TypesInfo.ObjectOf(id).(*types.Var)
	if !ok || v == nil || v.IsField() || v.Pkg() != pass.Pkg || v.Parent() == nil {
		return nil
	}
	if pass.Pkg != nil && v.Parent() == pass.Pkg.Scope() {
		return nil
	}
	return v
}

// rootIdent returns the identifier an expression such as x, x.f, x.m(),
// x[i] or *x is rooted at, or nil.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.CallExpr:
			sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr)
			if !ok {
				return nil
			}
			e = sel.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// within reports whether pos lies inside n.
func within(pos token.Pos, n ast.Node) bool {
	return n != nil && pos.IsValid() && n.Pos() <= pos && pos < n.End()
}

// skipFile reports whether the analyzers leave file alone: generated code,
// and the library's own implementation, which parks the task's goroutine on
// purpose (its tests are checked like any user code).
func skipFile(pass *analysis.Pass, file *ast.File) bool {
	if file == nil || (ast.IsGenerated(file) && !isCgoOutput(file)) {
		return true
	}
	if isLibPkg(pass.Pkg) {
		name := pass.Fset.PositionFor(file.Package, false).Filename
		return !strings.HasSuffix(name, "_test.go")
	}
	return false
}

// isCgoOutput reports whether file is the rewrite of a user's cgo file by
// cmd/cgo, which drivers such as go/packages analyse in place of the
// original: it is marked generated, but its code is the user's.
func isCgoOutput(file *ast.File) bool {
	for _, cg := range file.Comments {
		if cg.Pos() >= file.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// Code generated by cmd/cgo") {
				return true
			}
		}
	}
	return false
}

// files returns the files of the package that the analyzers check.
func files(pass *analysis.Pass) []*ast.File {
	var out []*ast.File
	for _, f := range pass.Files {
		if !skipFile(pass, f) {
			out = append(out, f)
		}
	}
	return out
}

// reporter reports the findings of one analyzer run, dropping those that
// an ignore directive covers and duplicates at the same position.
type reporter struct {
	pass        *analysis.Pass
	ignored     map[string]map[int]bool // file name -> lines on which findings are suppressed
	ignoredFile map[string]bool         // file names in which findings are suppressed
	seen        map[token.Pos]bool
}

// newReporter indexes the ignore directives for pass.Analyzer in the
// package's files.
func newReporter(pass *analysis.Pass) *reporter {
	r := &reporter{pass: pass, ignored: map[string]map[int]bool{}, ignoredFile: map[string]bool{}, seen: map[token.Pos]bool{}}
	for _, f := range pass.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				p := pass.Fset.PositionFor(c.Slash, false)
				// A file directive counts only before the package clause,
				// where a reader of the file sees it first.
				if c.Slash < f.Package && directiveIn(c.Text, fileIgnoreDirective, pass.Analyzer.Name) {
					r.ignoredFile[p.Filename] = true
					continue
				}
				if !directiveCovers(c.Text, pass.Analyzer.Name) {
					continue
				}
				lines := r.ignored[p.Filename]
				if lines == nil {
					lines = map[int]bool{}
					r.ignored[p.Filename] = lines
				}
				// The directive covers its own line and the next one.
				lines[p.Line] = true
				lines[p.Line+1] = true
			}
		}
	}
	return r
}

// directiveCovers reports whether comment text is an ignore directive that
// names check and gives a reason.
func directiveCovers(text, check string) bool {
	return directiveIn(text, ignoreDirective, check)
}

// directiveIn reports whether comment text is the directive prefix that
// names check and gives a reason.
func directiveIn(text, prefix, check string) bool {
	rest, ok := strings.CutPrefix(text, prefix)
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return false
	}
	fields := strings.Fields(rest)
	if len(fields) < 2 { // a check list and at least one word of reason
		return false
	}
	for _, name := range strings.Split(fields[0], ",") {
		if name == check {
			return true
		}
	}
	return false
}

// report reports d unless an ignore directive covers its line or a finding
// was already reported at the same position.
func (r *reporter) report(d analysis.Diagnostic) {
	if !d.Pos.IsValid() || r.seen[d.Pos] {
		return
	}
	p := r.pass.Fset.PositionFor(d.Pos, false)
	if r.ignored[p.Filename][p.Line] || r.ignoredFile[p.Filename] {
		return
	}
	r.seen[d.Pos] = true
	r.pass.Report(d)
}

// reportf reports a finding without a fix.
func (r *reporter) reportf(pos token.Pos, format string, args ...any) {
	r.report(analysis.Diagnostic{Pos: pos, Message: fmt.Sprintf(format, args...)})
}
