package passes

import (
	"go/ast"
	"go/build"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// blocksFact marks a function that blocks the goroutine that calls it: a
// helper that is not a task function (no *asyncio.T parameter) and calls,
// on its own goroutine, a blocking function of the standard library
// (time.Sleep, os.ReadFile, net.Dial...) or another function with the
// fact. blockingcall reports a call of such a helper inside a task as it
// reports the blocking call itself; the fact carries that across packages.
//
// Mutex locking, channel operations and raw file-descriptor reads
// (syscall.Read) do not make a helper blocking: a helper that guards its
// state with a mutex, hands a value over a channel or reads a
// non-blocking fd is the common, harmless case, and the check cannot see
// how the caller set things up.
type blocksFact struct {
	Why  string // "calls time.Sleep", "calls pkg.f, which calls time.Sleep"
	Root string // the blocking call at the end of the chain: "time.Sleep"
}

// AFact marks blocksFact as an analysis fact.
func (*blocksFact) AFact() {}

func (f *blocksFact) String() string { return "blocks: " + f.Why }

// blockingFacts computes the facts of the functions declared in the
// package and exports them. It returns them by function, for the calls
// inside the package's own tasks.
type blockingFacts struct {
	pass  *analysis.Pass
	local map[*types.Func]*blocksFact
}

// goroot is the source directory of the standard library, whose packages
// are not given facts: their helpers are not user code, and their
// blocking calls are what the check's own tables list.
var goroot = filepath.Join(build.Default.GOROOT, "src") + string(filepath.Separator)

// isStdPass reports whether pass analyses a package of the standard
// library.
func isStdPass(pass *analysis.Pass) bool {
	if build.Default.GOROOT == "" || len(pass.Files) == 0 {
		return false
	}
	name := pass.Fset.PositionFor(pass.Files[0].Package, false).Filename
	return strings.HasPrefix(name, goroot)
}

// newBlockingFacts computes, to a fixed point over the package's calls,
// which of its functions block, and exports those facts.
func newBlockingFacts(pass *analysis.Pass, srcs func(*ast.File) *blockingSources) *blockingFacts {
	bf := &blockingFacts{pass: pass, local: map[*types.Func]*blocksFact{}}
	if isStdPass(pass) {
		return bf
	}
	type decl struct {
		fn   *types.Func
		body *ast.BlockStmt
		file *ast.File
	}
	var decls []decl
	for _, f := range files(pass) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, _ := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if fn == nil || taskParam(funcSig(fn)) != nil {
				continue // a task function is checked as a root of its own
			}
			decls = append(decls, decl{fn, fd.Body, f})
		}
	}
	for changed := true; changed; {
		changed = false
		for _, d := range decls {
			if bf.local[d.fn] != nil {
				continue
			}
			if f := bf.reason(d.body, srcs(d.file)); f != nil {
				bf.local[d.fn] = f
				changed = true
			}
		}
	}
	for _, d := range decls {
		if f := bf.local[d.fn]; f != nil {
			pass.ExportObjectFact(d.fn, f)
		}
	}
	return bf
}

// reason returns the fact of a function with body body, or nil: the first
// call, in source order, of a blocking function or of a function with the
// fact, outside go statements and function literals that body does not
// call on the spot.
func (bf *blockingFacts) reason(body *ast.BlockStmt, srcs *blockingSources) *blocksFact {
	var out *blocksFact
	w := &loopWalker{visit: func(n ast.Node, nested bool) bool {
		if out != nil {
			return false
		}
		if call, ok := n.(*ast.CallExpr); ok {
			out = bf.callFact(call, srcs)
		}
		return out == nil
	}}
	w.walk(body)
	return out
}

// callFact returns the fact that a call gives its caller, or nil.
func (bf *blockingFacts) callFact(call *ast.CallExpr, srcs *blockingSources) *blocksFact {
	fn := callee(bf.pass.TypesInfo, call)
	if fn == nil {
		return nil
	}
	if _, ok := findBlocker(fn); ok {
		if isMutexLock(fn) || isRawFDCall(fn) || srcs.pseudoFSCall(call, fn) {
			return nil
		}
		return &blocksFact{Why: "calls " + displayName(fn), Root: displayName(fn)}
	}
	if what, ok := ioReaderCall(srcs, call, fn); ok {
		return &blocksFact{Why: "calls " + what, Root: what}
	}
	if what, ok := srcs.blockingMethod(call, fn); ok {
		return &blocksFact{Why: "calls " + what, Root: what}
	}
	if funcIs(fn, "sync", "Once", "Do") {
		// The function given to once.Do runs on the spot, on the caller's
		// goroutine: the lazy-init helper blocks as its loader does.
		for _, a := range call.Args {
			if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok && lit.Body != nil {
				if f := bf.reason(lit.Body, srcs); f != nil {
					return f
				}
			} else if g := funcValue(bf.pass.TypesInfo, a); g != nil {
				if f := bf.lookup(g); f != nil {
					return &blocksFact{Why: "calls " + displayName(g) + " through sync.Once.Do, which calls " + f.Root, Root: f.Root}
				}
			}
		}
		return nil
	}
	if g := bf.lookup(fn); g != nil {
		verb := ", which calls "
		if g.Why != "calls "+g.Root {
			verb = ", which leads to "
		}
		return &blocksFact{Why: "calls " + displayName(fn) + verb + g.Root, Root: g.Root}
	}
	return nil
}

// lookup returns the fact of fn, declared in this package or imported.
func (bf *blockingFacts) lookup(fn *types.Func) *blocksFact {
	if f := bf.local[fn]; f != nil {
		return f
	}
	if fn.Pkg() == nil || fn.Pkg() == bf.pass.Pkg || isLibPkg(fn.Pkg()) {
		return nil
	}
	var f blocksFact
	if bf.pass.ImportObjectFact(fn, &f) {
		return &f
	}
	return nil
}

// isMutexLock reports whether fn locks a sync.Mutex or RWMutex.
func isMutexLock(fn *types.Func) bool {
	return funcIs(fn, "sync", "Mutex", "Lock") || funcIs(fn, "sync", "RWMutex", "Lock", "RLock")
}

// isRawFDCall reports whether fn is a system call on a file descriptor,
// which does not block on a non-blocking fd such as one a Loop.AddReader
// callback reads.
func isRawFDCall(fn *types.Func) bool {
	return fn.Pkg() != nil && (fn.Pkg().Path() == "syscall" || fn.Pkg().Path() == "golang.org/x/sys/unix")
}

// ioReaderCall reports a call of io.ReadAll, io.Copy... on a reader that
// provably blocks, and names it ("io.ReadAll on an *os.File").
func ioReaderCall(srcs *blockingSources, call *ast.CallExpr, fn *types.Func) (string, bool) {
	idx, ok := ioReaders[fn.Name()]
	if !ok || !funcIs(fn, "io", "", fn.Name()) || idx >= len(call.Args) {
		return "", false
	}
	what, ok := srcs.blocks(call.Args[idx])
	if !ok {
		return "", false
	}
	return "io." + fn.Name() + " on " + what, true
}
