package passes

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// This file holds what blockingcall knows about the values of one file:
// which readers provably block (files, connections and response bodies
// of the standard library, and bufio readers on them), which channel
// operations provably do not block (straight-line code on a local
// buffered channel, a closed channel), and which local mutexes nobody else
// can hold.

// srcKind says how a value blocks the goroutine that uses it.
type srcKind int

const (
	srcNone   srcKind = iota
	srcReader         // reading blocks: a file, a response body, a bufio reader on one of those
	srcConn           // reading and writing block: a connection from package net
	srcResp           // an *http.Response from net/http's client, whose Body is a srcReader
)

// source is what a value provably is, for messages ("os.Stdin", "a
// connection from package net"), and how it blocks.
type source struct {
	what string
	kind srcKind
}

// valueAt is one value assigned to a variable: result idx of e (idx > 0
// only for a multi-valued call or a comma-ok form).
type valueAt struct {
	e   ast.Expr
	idx int
}

// readMethods are the methods that read from their receiver: on a value
// that provably blocks, each blocks until data arrives.
var readMethods = map[string]bool{
	"Read": true, "ReadAt": true, "ReadByte": true, "ReadBytes": true, "ReadLine": true,
	"ReadRune": true, "ReadSlice": true, "ReadString": true, "Peek": true, "Discard": true,
	"Scan": true, "WriteTo": true, "ReadAll": true,
	"Decode": true, "DecodeElement": true, "DecodeValue": true, "Token": true, "RawToken": true, "More": true,
}

// readerWrappers are the functions that return a reader, scanner or
// decoder reading from their first argument: it blocks when that does.
var readerWrappers = []struct{ path, name string }{
	{"bufio", "NewScanner"}, {"bufio", "NewReader"}, {"bufio", "NewReaderSize"},
	{"encoding/json", "NewDecoder"}, {"encoding/xml", "NewDecoder"}, {"encoding/gob", "NewDecoder"},
	{"encoding/csv", "NewReader"}, {"io", "LimitReader"}, {"io", "TeeReader"}, {"io", "NopCloser"},
}

// isReaderWrapper reports whether fn is one of readerWrappers.
func isReaderWrapper(fn *types.Func) bool {
	for _, w := range readerWrappers {
		if funcIs(fn, w.path, "", w.name) {
			return true
		}
	}
	return false
}

// httpClientCall reports whether fn sends a request with net/http's
// client and returns its *http.Response first.
func httpClientCall(fn *types.Func) bool {
	return funcIs(fn, "net/http", "", "Get", "Head", "Post", "PostForm") ||
		funcIs(fn, "net/http", "Client", "Do", "Get", "Head", "Post", "PostForm") ||
		funcIs(fn, "net/http", "Transport", "RoundTrip")
}

// collectAssigns records every value assigned to a local variable of file;
// a variable assigned in a way the check does not follow (op-assignment,
// range, its address taken) is marked unknown, and the value variable of
// a range statement is noted with what it ranges over.
func (s *blockingSources) collectAssigns(file *ast.File) {
	add := func(id *ast.Ident, v valueAt) {
		if x := localVar(s.pass, id); x != nil {
			s.assigns[x] = append(s.assigns[x], v)
		}
	}
	unknown := func(e ast.Expr) {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if x := localVar(s.pass, id); x != nil {
				s.unknown[x] = true
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := ast.Unparen(l).(*ast.Ident)
				if !ok {
					continue
				}
				switch {
				case n.Tok != token.DEFINE && n.Tok != token.ASSIGN:
					unknown(id)
				case len(n.Lhs) == len(n.Rhs):
					add(id, valueAt{n.Rhs[i], 0})
				case len(n.Rhs) == 1:
					add(id, valueAt{n.Rhs[0], i})
				default:
					unknown(id)
				}
			}
		case *ast.ValueSpec:
			// A variable declared without a value holds nil until
			// assigned: reading from nil panics, it does not block.
			for i, id := range n.Names {
				switch {
				case len(n.Values) == len(n.Names):
					add(id, valueAt{n.Values[i], 0})
				case len(n.Values) == 1:
					add(id, valueAt{n.Values[0], i})
				}
			}
		case *ast.RangeStmt:
			if n.Key != nil {
				unknown(n.Key)
			}
			if n.Value != nil {
				unknown(n.Value)
				if id, ok := n.Value.(*ast.Ident); ok && n.Tok == token.DEFINE {
					if x := localVar(s.pass, id); x != nil {
						s.rangeOf[x] = n.X
					}
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				unknown(n.X)
			}
		}
		return true
	})
}

// varSource returns what every value assigned to v provably is, or
// srcNone when one of them is something else.
func (s *blockingSources) varSource(v *types.Var) source {
	if got, ok := s.memo[v]; ok {
		return got
	}
	if s.unknown[v] || s.visiting[v] || len(s.assigns[v]) == 0 {
		return source{}
	}
	s.visiting[v] = true
	var out source
	for i, a := range s.assigns[v] {
		got := s.sourceAt(a.e, a.idx)
		if got.kind == srcNone || (i > 0 && got.kind != out.kind) {
			out = source{}
			break
		}
		if i == 0 {
			out = got
		}
	}
	delete(s.visiting, v)
	s.memo[v] = out
	return out
}

// sourceAt returns what result idx of e provably is.
func (s *blockingSources) sourceAt(e ast.Expr, idx int) source {
	info := s.pass.TypesInfo
	e = ast.Unparen(e)
	if idx == 0 {
		if got, ok := s.typedSource(e); ok {
			return got
		}
	}
	switch e := e.(type) {
	case *ast.Ident:
		if v := localVar(s.pass, e); v != nil && idx == 0 {
			return s.varSource(v)
		}
	case *ast.SelectorExpr:
		sel := info.Selections[e]
		if idx == 0 && sel != nil && sel.Kind() == types.FieldVal && e.Sel.Name == "Body" &&
			namedIn(sel.Recv(), "net/http", "Response") && s.sourceAt(e.X, 0).kind == srcResp {
			return source{"the body of a response from net/http's client", srcReader}
		}
	case *ast.CallExpr:
		fn := callee(info, e)
		switch {
		case fn == nil || fn.Pkg() == nil:
		case fn.Pkg().Path() == "net":
			return source{"a connection from package net", srcConn}
		case idx == 0 && httpClientCall(fn):
			return source{"a response from net/http's client", srcResp}
		case idx == 0 && isReaderWrapper(fn) && len(e.Args) > 0:
			if in := s.sourceAt(e.Args[0], 0); in.kind == srcReader || in.kind == srcConn {
				return source{in.what, srcReader}
			}
		case libFuncIs(fn, "", "Go", "ToThread"):
			for _, a := range e.Args {
				if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok {
					return s.returnsSource(lit, idx)
				}
			}
		}
	}
	return source{}
}

// typedSource recognises values whose type alone says that they block:
// an *os.File (os.Stdin by name) and the concrete connections of package
// net.
func (s *blockingSources) typedSource(e ast.Expr) (source, bool) {
	t := s.pass.TypesInfo.TypeOf(e)
	if t == nil {
		return source{}, false
	}
	if _, ptr := types.Unalias(t).(*types.Pointer); !ptr {
		return source{}, false
	}
	switch {
	case namedIn(t, "os", "File"):
		if s.pseudoFile(e) {
			return source{}, true
		}
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if v, ok := s.pass.TypesInfo.Uses[sel.Sel].(*types.Var); ok && v.Pkg() != nil && v.Pkg().Path() == "os" && v.Parent() == v.Pkg().Scope() {
				return source{"os." + v.Name(), srcReader}, true
			}
		}
		return source{"an *os.File", srcReader}, true
	case namedIn(t, "net", "TCPConn", "UDPConn", "UnixConn", "IPConn"):
		return source{"a " + types.TypeString(t, nil), srcConn}, true
	}
	return source{}, false
}

// returnsSource returns what result idx of the function literal lit
// (given to asyncio.Go or ToThread, whose result is lit's) provably is:
// every return statement returns such a value there, or nil.
func (s *blockingSources) returnsSource(lit *ast.FuncLit, idx int) source {
	sig := litSig(s.pass.TypesInfo, lit)
	if sig == nil || sig.Results() == nil || idx >= sig.Results().Len() {
		return source{}
	}
	var out source
	ok := true
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			var got source
			switch {
			case len(n.Results) == 1 && sig.Results().Len() > 1:
				got = s.sourceAt(n.Results[0], idx)
			case idx < len(n.Results):
				if id, isID := ast.Unparen(n.Results[idx]).(*ast.Ident); isID && id.Name == "nil" {
					if _, isNil := s.pass.TypesInfo.Uses[id].(*types.Nil); isNil {
						return true
					}
				}
				got = s.sourceAt(n.Results[idx], 0)
			}
			if got.kind == srcNone || (out.kind != srcNone && got.kind != out.kind) {
				ok = false
				return false
			}
			out = got
		}
		return true
	})
	if !ok {
		return source{}
	}
	return out
}

// blockingMethod reports a call of a reading method on a value that
// provably blocks (a bufio.Scanner on os.Stdin, a net.Conn from
// net.Dial, a response body from net/http's client), and names it.
func (s *blockingSources) blockingMethod(call *ast.CallExpr, fn *types.Func) (string, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if x := s.pass.TypesInfo.Selections[sel]; x == nil || x.Kind() != types.MethodVal {
		return "", false
	}
	src := s.sourceAt(sel.X, 0)
	switch {
	case src.kind == srcReader && readMethods[fn.Name()],
		src.kind == srcConn && (readMethods[fn.Name()] || fn.Name() == "Write"):
		return displayName(fn) + " on " + src.what, true
	}
	return "", false
}

// noGoto reports whether file has no goto statement: the straight-line
// rules below assume that control enters a statement list only at its
// top.
func noGoto(file *ast.File) bool {
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.GOTO {
			found = true
		}
		return !found
	})
	return !found
}

// mentions reports whether n refers to v anywhere.
func (s *blockingSources) mentions(n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && s.pass.TypesInfo.ObjectOf(id) == v {
			found = true
		}
		return !found
	})
	return found
}

// chanVar returns the local variable of channel type that e names, or nil.
func (s *blockingSources) chanVar(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v := localVar(s.pass, id)
	if v == nil || !isChan(v.Type()) {
		return nil
	}
	return v
}

// closeOf returns the channel variable that statement st closes with the
// builtin close, or nil.
func (s *blockingSources) closeOf(st ast.Stmt) *types.Var {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return nil
	}
	call, ok := ast.Unparen(es.X).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || id.Name != "close" {
		return nil
	}
	if _, builtin := s.pass.TypesInfo.Uses[id].(*types.Builtin); !builtin {
		return nil
	}
	return s.chanVar(call.Args[0])
}

// recvOf returns the receive expression of statement st when st is a
// plain receive from v (<-v, x := <-v, x, ok = <-v, return <-v, nil) that
// does not otherwise mention v, or nil.
func (s *blockingSources) recvOf(st ast.Stmt, v *types.Var) *ast.UnaryExpr {
	var e ast.Expr
	switch st := st.(type) {
	case *ast.ExprStmt:
		e = st.X
	case *ast.ReturnStmt:
		for _, r := range st.Results {
			if !s.mentions(r, v) {
				continue
			}
			if e != nil {
				return nil // two results mention v
			}
			e = r
		}
	case *ast.AssignStmt:
		if len(st.Rhs) != 1 || (st.Tok != token.DEFINE && st.Tok != token.ASSIGN) {
			return nil
		}
		for _, l := range st.Lhs {
			if s.mentions(l, v) {
				return nil
			}
		}
		e = st.Rhs[0]
	}
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW || s.chanVar(u.X) != v {
		return nil
	}
	return u
}

// makeCap returns the buffer size of e when e is make(chan T, n) or
// make(chan T) with a constant n, or -1.
func (s *blockingSources) makeCap(e ast.Expr) int64 {
	info := s.pass.TypesInfo
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Args) > 2 {
		return -1
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || id.Name != "make" {
		return -1
	}
	if _, builtin := info.Uses[id].(*types.Builtin); !builtin || !isChan(info.TypeOf(call.Args[0])) {
		return -1
	}
	if len(call.Args) == 1 {
		return 0
	}
	tv, ok := info.Types[call.Args[1]]
	if !ok || tv.Value == nil {
		return -1
	}
	n, exact := constant.Int64Val(constant.ToInt(tv.Value))
	if !exact || n < 0 {
		return -1
	}
	return n
}

// madeChan returns the channel variable that statement st declares with
// make(chan T, n) and its buffer size.
func (s *blockingSources) madeChan(st ast.Stmt) (*types.Var, int64) {
	var id *ast.Ident
	var val ast.Expr
	switch st := st.(type) {
	case *ast.AssignStmt:
		if st.Tok != token.DEFINE || len(st.Lhs) != 1 || len(st.Rhs) != 1 {
			return nil, -1
		}
		id, _ = st.Lhs[0].(*ast.Ident)
		val = st.Rhs[0]
	case *ast.DeclStmt:
		gd, ok := st.Decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR || len(gd.Specs) != 1 {
			return nil, -1
		}
		vs, ok := gd.Specs[0].(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
			return nil, -1
		}
		id, val = vs.Names[0], vs.Values[0]
	}
	if id == nil {
		return nil, -1
	}
	v := s.chanVar(id)
	if v == nil || s.pass.TypesInfo.Defs[id] != v {
		return nil, -1
	}
	n := s.makeCap(val)
	if n < 0 {
		return nil, -1
	}
	return v, n
}

// findSafeChanOps fills s.safe with the channel operations of file that
// provably do not block:
//
//   - in the statements that follow ch := make(chan T, n) in the same
//     list, up to the first statement that uses ch otherwise: a send while
//     fewer than n values are buffered, a receive while one is, and after
//     close(ch), every receive and range;
//   - every receive from, and range over, a channel variable that is
//     never reassigned, in the statements that follow close(ch) in the
//     same list.
//
// The caller makes sure that file has no goto.
func (s *blockingSources) findSafeChanOps(file *ast.File) {
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
		for i, st := range list {
			if v, n := s.madeChan(st); v != nil {
				s.simulate(list[i+1:], v, n)
			}
			if v := s.closeOf(st); v != nil && s.stable(v) {
				for _, later := range list[i+1:] {
					s.markClosedOps(later, v)
				}
			}
		}
		return true
	})
}

// simulate follows the buffer of channel v, made with room for n values,
// through the statements of list, marking the operations that find room
// or a value.
func (s *blockingSources) simulate(list []ast.Stmt, v *types.Var, n int64) {
	buffered, closed := int64(0), false
	for _, st := range list {
		if _, labeled := st.(*ast.LabeledStmt); labeled {
			return
		}
		if !s.mentions(st, v) {
			continue
		}
		switch {
		case s.closeOf(st) == v:
			closed = true
			continue
		case s.recvOf(st, v) != nil:
			if !closed && buffered == 0 {
				return
			}
			s.safe[s.recvOf(st, v)] = true
			if !closed {
				buffered--
			}
			continue
		}
		switch st := st.(type) {
		case *ast.SendStmt:
			if closed || buffered >= n || s.chanVar(st.Chan) != v || s.mentions(st.Value, v) {
				return
			}
			s.roomy[st] = true
			buffered++
			continue
		case *ast.RangeStmt:
			// A range over the closed channel drains it and ends; its
			// body may use v in any way, so the simulation stops here.
			if closed && s.chanVar(st.X) == v {
				s.safe[st] = true
			}
		}
		return
	}
}

// stable reports whether the channel variable v is assigned only where it
// is declared, so that once closed it stays closed.
func (s *blockingSources) stable(v *types.Var) bool {
	if s.unknown[v] {
		return false
	}
	return len(s.assigns[v]) <= 1
}

// markClosedOps marks the receives from and ranges over the closed channel
// v inside n: none of them blocks.
func (s *blockingSources) markClosedOps(n ast.Node, v *types.Var) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && s.chanVar(n.X) == v {
				s.safe[n] = true
			}
		case *ast.RangeStmt:
			if s.chanVar(n.X) == v {
				s.safe[n] = true
			}
		}
		return true
	})
}

// lockMethods are the methods of sync.Mutex and RWMutex whose calls leave
// a local mutex uncontended.
var lockMethods = map[string]bool{"Lock": true, "Unlock": true, "RLock": true, "RUnlock": true, "TryLock": true, "TryRLock": true}

// findUncontended fills s.uncontended with the local sync.Mutex and
// RWMutex variables (not pointers) that nothing else can lock: every use
// is a call of one of their locking methods, in the function that declares
// the variable or in a function literal it calls there (deferred
// included), never in a go statement or in a literal that runs elsewhere.
func (s *blockingSources) findUncontended(file *ast.File) {
	info := s.pass.TypesInfo
	declFn := map[*types.Var]ast.Node{}
	bad := map[*types.Var]bool{}
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v := localVar(s.pass, id)
		if v == nil || !namedIn(v.Type(), "sync", "Mutex", "RWMutex") {
			return true
		}
		if _, ptr := types.Unalias(v.Type()).(*types.Pointer); ptr {
			return true
		}
		if info.Defs[id] == v {
			for k := len(stack) - 1; k >= 0; k-- {
				switch stack[k].(type) {
				case *ast.FuncDecl, *ast.FuncLit:
					declFn[v] = stack[k]
					k = -1
				}
			}
			return true
		}
		if !s.lockCallUse(stack, v, declFn[v]) {
			bad[v] = true
		}
		return true
	})
	for v := range declFn {
		if !bad[v] {
			s.uncontended[v] = true
		}
	}
}

// lockCallUse reports whether the use of v at the top of stack is a call
// of a locking method that runs in fn, v's declaring function, on the
// goroutine that runs fn.
func (s *blockingSources) lockCallUse(stack []ast.Node, v *types.Var, fn ast.Node) bool {
	k := len(stack) - 1
	if fn == nil || k < 2 {
		return false
	}
	sel, ok := stack[k-1].(*ast.SelectorExpr)
	if !ok || sel.X != stack[k] || !lockMethods[sel.Sel.Name] {
		return false
	}
	if call, ok := stack[k-2].(*ast.CallExpr); !ok || call.Fun != sel {
		return false
	}
	for k -= 3; k >= 0; k-- {
		switch n := stack[k].(type) {
		case *ast.FuncDecl:
			return n == fn
		case *ast.FuncLit:
			if n == fn {
				return true
			}
			if k < 2 {
				return false
			}
			call, ok := stack[k-1].(*ast.CallExpr)
			if !ok || call.Fun != n {
				return false
			}
			if _, isGo := stack[k-2].(*ast.GoStmt); isGo {
				return false
			}
		}
	}
	return false
}

// uncontendedLock reports whether call locks a local mutex that nothing
// else can hold.
func (s *blockingSources) uncontendedLock(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	v := localVar(s.pass, id)
	return v != nil && s.uncontended[v]
}

// pseudoFS are the prefixes of the kernel's in-memory file systems: a read
// there is served at once, it does not wait for a device.
var pseudoFS = []string{"/proc/", "/sys/", "/dev/fd/"}

// pseudoPath reports whether the path e provably names a file of an
// in-memory file system: a constant such as "/proc/self/statm", a sum
// that starts with one ("/proc/" + pid + "/stat"), a filepath.Join or
// path.Join whose first element is one (filepath.Join("/proc", pid,
// "stat")), an fmt.Sprintf whose constant format starts with one
// (fmt.Sprintf("/proc/%d/stat", pid)), or a local variable only ever
// assigned such paths.
func (s *blockingSources) pseudoPath(e ast.Expr) bool {
	e = ast.Unparen(e)
	if tv, ok := s.pass.TypesInfo.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		p := constant.StringVal(tv.Value)
		for _, pre := range pseudoFS {
			if strings.HasPrefix(p+"/", pre) {
				return true
			}
		}
		return false
	}
	switch e := e.(type) {
	case *ast.BinaryExpr:
		return e.Op == token.ADD && s.pseudoPath(e.X)
	case *ast.CallExpr:
		if len(e.Args) == 0 || e.Ellipsis.IsValid() {
			return false
		}
		fn := callee(s.pass.TypesInfo, e)
		if !funcIs(fn, "path/filepath", "", "Join") && !funcIs(fn, "path", "", "Join") && !funcIs(fn, "fmt", "", "Sprintf") {
			return false
		}
		if funcIs(fn, "fmt", "", "Sprintf") {
			// The format must be a constant: its prefix is the path's.
			if tv, ok := s.pass.TypesInfo.Types[e.Args[0]]; !ok || tv.Value == nil {
				return false
			}
		}
		return s.pseudoPath(e.Args[0])
	case *ast.Ident:
		v := localVar(s.pass, e)
		if lit, ok := s.rangeOf[v].(*ast.CompositeLit); ok && v != nil && len(s.assigns[v]) == 0 {
			// for _, dir := range []string{"/proc/self/fd", "/dev/fd"}
			for _, el := range lit.Elts {
				if !s.pseudoPath(el) {
					return false
				}
			}
			return len(lit.Elts) > 0
		}
		if v == nil || s.unknown[v] || len(s.assigns[v]) == 0 || s.visiting[v] {
			return false
		}
		s.visiting[v] = true
		defer delete(s.visiting, v)
		for _, a := range s.assigns[v] {
			if a.idx != 0 || !s.pseudoPath(a.e) {
				return false
			}
		}
		return true
	}
	return false
}

// pseudoFSCall reports whether call, of the blocking function fn of
// package os, reads a file of an in-memory file system:
// os.ReadFile("/proc/self/status"), or a method of a pseudoFile.
func (s *blockingSources) pseudoFSCall(call *ast.CallExpr, fn *types.Func) bool {
	switch {
	case funcIs(fn, "os", "", "ReadFile", "WriteFile", "ReadDir"), funcIs(fn, "path/filepath", "", "Walk", "WalkDir", "Glob"):
		return len(call.Args) > 0 && s.pseudoPath(call.Args[0])
	case funcIs(fn, "os", "File", fn.Name()):
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		return ok && s.pseudoFile(sel.X)
	}
	return false
}

// pseudoFile reports whether e is an *os.File variable only ever assigned
// os.Open or os.OpenFile of a file of an in-memory file system.
func (s *blockingSources) pseudoFile(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	v := localVar(s.pass, id)
	if v == nil || s.unknown[v] || len(s.assigns[v]) == 0 {
		return false
	}
	for _, a := range s.assigns[v] {
		open, ok := ast.Unparen(a.e).(*ast.CallExpr)
		if !ok || a.idx != 0 || len(open.Args) == 0 || !funcIs(callee(s.pass.TypesInfo, open), "os", "", "Open", "OpenFile") || !s.pseudoPath(open.Args[0]) {
			return false
		}
	}
	return true
}
