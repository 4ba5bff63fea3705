package passes

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// A suggested fix is offered only when it is mechanical: the new code
// compiles and means what the old code meant plus the propagation of the
// error. The helpers below refuse (return false) whenever that is not
// certain, and the finding is then reported without a fix.

// zeroLiteral returns a literal for the zero value of t when one exists
// that needs no type name: 0, "", false, nil, struct{}{}.
func zeroLiteral(t types.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return "", false
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false", true
		case u.Info()&types.IsString != 0:
			return `""`, true
		case u.Info()&types.IsNumeric != 0:
			return "0", true
		case u.Kind() == types.UnsafePointer:
			return "nil", true
		}
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return "nil", true
	case *types.Struct:
		// Only the unnamed empty struct, which the library's examples use
		// for tasks without a value: any other struct needs its type name.
		if _, named := types.Unalias(t).(*types.Named); !named && u.NumFields() == 0 {
			return "struct{}{}", true
		}
	}
	return "", false
}

// errReturn returns `return <zeros>, err` for a function with signature
// sig whose last result is an error, or false.
func errReturn(sig *types.Signature) (string, bool) {
	if sig == nil || sig.Results() == nil || sig.Results().Len() == 0 {
		return "", false
	}
	res := sig.Results()
	if !isErrorType(res.At(res.Len() - 1).Type()) {
		return "", false
	}
	parts := make([]string, 0, res.Len())
	for i := 0; i < res.Len()-1; i++ {
		z, ok := zeroLiteral(res.At(i).Type())
		if !ok {
			return "", false
		}
		parts = append(parts, z)
	}
	parts = append(parts, "err")
	return "return " + strings.Join(parts, ", "), true
}

// resolvesTo reports whether name, written at pos, denotes obj.
func resolvesTo(pass *analysis.Pass, pos token.Pos, name string, obj types.Object) bool {
	if pass.Pkg == nil || obj == nil || name == "" || name == "_" {
		return false
	}
	s := pass.Pkg.Scope().Innermost(pos)
	if s == nil {
		return false
	}
	_, got := s.LookupParent(name, pos)
	return got == obj
}

// asyncioQualifier returns the name under which file imports the asyncio
// package, provided that name denotes the package at pos.
func asyncioQualifier(pass *analysis.Pass, file *ast.File, pos token.Pos) (string, bool) {
	if pass.Pkg == nil {
		return "", false
	}
	for _, spec := range file.Imports {
		if spec.Path == nil || strings.Trim(spec.Path.Value, "\"`") != AsyncioPath {
			continue
		}
		name := "asyncio"
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name == "_" || name == "." {
			return "", false
		}
		s := pass.Pkg.Scope().Innermost(pos)
		if s == nil {
			return "", false
		}
		_, obj := s.LookupParent(name, pos)
		if pn, ok := obj.(*types.PkgName); ok && pn.Imported() != nil && pn.Imported().Path() == AsyncioPath {
			return name, true
		}
		return "", false
	}
	return "", false
}

// propagateFix turns the statement stmt, which runs the call call whose
// last result is an error, into
//
//	if _, err := call; err != nil {
//		return <zeros>, err
//	}
//
// keeping the call's source text. prefixEnd is where the call's text
// starts in stmt (after `_ = ` for an assignment). results is the number of
// results of the call.
func propagateFix(pass *analysis.Pass, stmt ast.Stmt, prefixEnd token.Pos, results int, ret, message string) analysis.SuggestedFix {
	lhs := strings.Repeat("_, ", results-1) + "err"
	ind := indentOf(pass.Fset, stmt.Pos())
	return analysis.SuggestedFix{
		Message: message,
		TextEdits: []analysis.TextEdit{
			{Pos: stmt.Pos(), End: prefixEnd, NewText: []byte("if " + lhs + " := ")},
			{Pos: stmt.End(), End: stmt.End(), NewText: []byte("; err != nil {\n" + ind + "\t" + ret + "\n" + ind + "}")},
		},
	}
}
