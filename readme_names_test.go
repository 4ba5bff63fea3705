package asyncio_test

// TestDocNamesResolve checks that the Go names the Markdown documentation and
// the package doc comments mention exist in the exported API, so that a rename
// cannot leave README.md pointing a porting user at a name that is gone.
//
// The API is read from the source (go/parser, go/ast; no type checker, no
// build): every non-test .go file of the public packages below, whatever its
// build tags. For each package: its exported top-level names, and for each
// exported type its members: methods (value and pointer receivers), struct
// fields, interface methods, and what embedded types of these packages
// promote. A type that embeds a type from outside these packages, or is an
// alias or defined from another non-struct type, is "open": any member
// resolves (we cannot list them without a type checker).
//
// What is checked, in Markdown code spans (`...`) and ```go blocks of
// docMarkdownFiles (README.md, DESIGN.md, cmd/asynciovet/README.md and the
// docs/*.md that describe the current API; not the dated bench reports, nor
// docs/cpython-tests.md, which names CPython's test classes):
//
//   - pkg.Name and pkg.Name.Member, pkg one of asyncio, aio, cancelcheck,
//     asynciohttp, with an upper-case Name (lower-case is Python: asyncio.run);
//     "debug." is not ours (runtime/debug): the package is debug/asynciohttp;
//   - Type.Member and (*Type).Member, Type an exported type of these packages
//     not qualified by another package (http.Server.Close is not ours);
//   - WithX option names (not qualified by another package);
//   - in code spans, an unqualified call Name(...): a top-level name or a
//     member of some type of these packages (docForeignCalls: the few that
//     are another library's);
//   - in code spans, an unqualified *Name or Name{...}: a type of these
//     packages;
//   - in code spans, TestX, ExampleX, BenchmarkX and FuzzX names: a function
//     of some _test.go file of the module;
//   - a name followed by "*" or "…" (WithTask*, TestTHREAD4_*) is a prefix
//     that some name must have; X and WithX are placeholders;
//   - in code spans only (not in ```go blocks, where variables are declared
//     with other meanings), a method or field on one of the README's receiver
//     variables, by this convention (a union where the README uses one letter
//     for two types; any other variable is not checked):
//     t *T; l, loop *Loop; tk, task *Task; fut *Future; g *Group or
//     *LoopGroup; q *Queue, *PriorityQueue or *LifoQueue; lk *Lock;
//     ev *Event; c *Condition or *VarContext; s *TimeoutScope;
//     eg *ExceptionGroup; b *Barrier; h *Handle or *TimerHandle;
//     v *ContextVar; r *Runner or *aio.StreamReader; w *aio.StreamWriter;
//     tr aio.Transport.
//
// Not checked: the columns that name asyncio/Python or another system (a
// table column headed "asyncio", "Node.js / libuv", "Redis `ae.c`"), and the
// "old" column of "Renamed in 0.2", which names what no longer exists on
// purpose; docIntentional lists the names a document mentions because they
// do not exist. In every comment of the packages' non-test files (go doc's
// prose): every doc link ([Name], [Name.Method], [pkg.Name], [*pkg.Name]),
// Type.Member and WithX; not pkg.Name, which in Go prose names Python's
// asyncio (asyncio.QueueFull).

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// docAPIPackages are the module's public packages: directory → package name.
var docAPIPackages = map[string]string{
	".":                 "asyncio",
	"aio":               "aio",
	"cancelcheck":       "cancelcheck",
	"debug/asynciohttp": "asynciohttp",
}

// docMarkdownFiles are the Markdown files whose Go names are checked.
var docMarkdownFiles = []string{"README.md", "DESIGN.md", "cmd/asynciovet/README.md",
	"docs/every-core.md", "docs/first-touch.md", "docs/diagnostics-cost.md", "docs/scaling.md",
	"docs/soak.md", "docs/rules.md"}

// docReceivers is the README's receiver-variable convention (see above).
var docReceivers = map[string][]string{
	"t": {"asyncio.T", "testing.T"}, "l": {"asyncio.Loop"}, "loop": {"asyncio.Loop"},
	"tk": {"asyncio.Task"}, "task": {"asyncio.Task"}, "fut": {"asyncio.Future"},
	"g":  {"asyncio.Group", "asyncio.LoopGroup"},
	"q":  {"asyncio.Queue", "asyncio.PriorityQueue", "asyncio.LifoQueue"},
	"lk": {"asyncio.Lock"}, "ev": {"asyncio.Event"},
	"c": {"asyncio.Condition", "asyncio.VarContext"},
	"s": {"asyncio.TimeoutScope"}, "eg": {"asyncio.ExceptionGroup"},
	"b": {"asyncio.Barrier"}, "h": {"asyncio.Handle", "asyncio.TimerHandle"},
	"v": {"asyncio.ContextVar"},
	"r": {"asyncio.Runner", "aio.StreamReader"}, "w": {"aio.StreamWriter"},
	"tr": {"aio.Transport"},
}

// docTestingT is what a t of a Go test (*testing.T) has: the README's t is
// either, as in "what t.FailNow does".
var docTestingT = map[string]bool{
	"Cleanup": true, "Context": true, "Deadline": true, "Error": true, "Errorf": true, "Fail": true,
	"FailNow": true, "Failed": true, "Fatal": true, "Fatalf": true, "Helper": true, "Log": true,
	"Logf": true, "Name": true, "Parallel": true, "Run": true, "Setenv": true, "Chdir": true,
	"Skip": true, "SkipNow": true, "Skipf": true, "Skipped": true, "TempDir": true, "Attr": true,
	"Output": true,
}

// docPlaceholders stand for any name in prose ("asyncio.X", "WithX(value)").
var docPlaceholders = map[string]bool{"X": true, "WithX": true}

// docIntentional are names a document mentions because they do not exist
// (file: name → why).
var docIntentional = map[string]string{
	// "embedding would also promote T's running-side methods ... so that
	// tk.Context() ... would compile": why Task does not embed T.
	"DESIGN.md: tk.Context (asyncio.Task)": "the method Task deliberately lacks",
	// methodName's comment: the format "pkg.(*T).Method", T and Method placeholders.
	"aio/subprocess.go: T.Method": "a format",
}

// docForeignCalls are unqualified calls in the documents that are not ours.
var docForeignCalls = map[string]bool{
	"LookupAddr":         true, // net.Resolver's, what WithResolver's resolver has
	"MockClock":          true, // Trio's
	"AsyncLimiter":       true, // aiolimiter's
	"BaseExceptionGroup": true, // Python's
}

// docSkipColumns are table column headers whose cells are not Go.
var docSkipColumns = map[string]bool{
	"asyncio": true, "old": true, "Node.js / libuv": true, "Redis `ae.c`": true,
}

type docType struct {
	members  map[string]bool
	embedded []string // "pkg.Type" of embedded types of our packages
	open     bool
}

type docPkg struct {
	names map[string]bool
	types map[string]*docType
}

type docAPI struct {
	pkgs  map[string]*docPkg // by package name
	tests map[string]bool    // Test/Example/Benchmark/Fuzz funcs of the module
	files map[string][]*ast.File
	fset  *token.FileSet
}

var (
	docAPIOnce   sync.Once
	docAPICached *docAPI
	docAPIErr    error
)

func loadDocAPI(t *testing.T) *docAPI {
	docAPIOnce.Do(func() { docAPICached, docAPIErr = parseDocAPI() })
	if docAPIErr != nil {
		t.Fatal(docAPIErr)
	}
	return docAPICached
}

func parseDocAPI() (*docAPI, error) {
	api := &docAPI{pkgs: map[string]*docPkg{}, tests: map[string]bool{}, files: map[string][]*ast.File{}, fset: token.NewFileSet()}
	for dir, name := range docAPIPackages {
		p := &docPkg{names: map[string]bool{}, types: map[string]*docType{}}
		api.pkgs[name] = p
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		typ := func(n string) *docType {
			if p.types[n] == nil {
				p.types[n] = &docType{members: map[string]bool{}}
			}
			return p.types[n]
		}
		for _, e := range ents {
			fn := e.Name()
			if !strings.HasSuffix(fn, ".go") || strings.HasSuffix(fn, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(api.fset, filepath.Join(dir, fn), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			if f.Name.Name != name {
				continue
			}
			api.files[name] = append(api.files[name], f)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						p.names[d.Name.Name] = true
						continue
					}
					if rt := docRecvName(d.Recv.List[0].Type); rt != "" {
						typ(rt).members[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							for _, id := range s.Names {
								p.names[id.Name] = true
							}
						case *ast.TypeSpec:
							p.names[s.Name.Name] = true
							dt := typ(s.Name.Name)
							if s.Assign.IsValid() {
								dt.open = true
								continue
							}
							docTypeMembers(name, dt, s.Type)
						}
					}
				}
			}
		}
	}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for rest := b; ; {
			i := bytes.Index(rest, []byte("\nfunc "))
			if i < 0 {
				break
			}
			rest = rest[i+len("\nfunc "):]
			if j := bytes.IndexByte(rest, '('); j > 0 {
				if name := string(rest[:j]); docTestName.MatchString(name) {
					api.tests[name] = true
				}
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return api, nil
}

// anyName reports whether n is a top-level name or a member of a type of
// one of the packages.
func (api *docAPI) anyName(n string) bool {
	for _, p := range api.pkgs {
		if p.names[n] {
			return true
		}
		for _, dt := range p.types {
			if dt.members[n] {
				return true
			}
		}
	}
	return false
}

func docHasPrefix(names map[string]bool, prefix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func docRecvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// docEmbedded names an embedded type: "pkg.Type" for one of our packages,
// "" (open) for anything else.
func docEmbedded(pkg string, e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return pkg + "." + x.Name
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				for _, n := range docAPIPackages {
					if n == id.Name {
						return n + "." + x.Sel.Name
					}
				}
			}
			return ""
		default:
			return ""
		}
	}
}

func docTypeMembers(pkg string, dt *docType, e ast.Expr) {
	switch x := e.(type) {
	case *ast.StructType:
		for _, f := range x.Fields.List {
			if len(f.Names) == 0 {
				emb := docEmbedded(pkg, f.Type)
				if emb == "" {
					dt.open = true
					continue
				}
				dt.embedded = append(dt.embedded, emb)
				dt.members[emb[strings.Index(emb, ".")+1:]] = true // the field itself
				continue
			}
			for _, id := range f.Names {
				dt.members[id.Name] = true
			}
		}
	case *ast.InterfaceType:
		for _, f := range x.Methods.List {
			if len(f.Names) == 0 {
				switch f.Type.(type) {
				case *ast.Ident, *ast.SelectorExpr:
					emb := docEmbedded(pkg, f.Type)
					if emb == "" {
						dt.open = true
					} else {
						dt.embedded = append(dt.embedded, emb)
					}
				}
				continue
			}
			for _, id := range f.Names {
				dt.members[id.Name] = true
			}
		}
	case *ast.Ident:
		if !ast.IsExported(x.Name) && x.Name == strings.ToLower(x.Name) && !strings.Contains(x.Name, "_") {
			return // a basic type (int, string, func...): only its own methods
		}
		dt.open = true
	case *ast.FuncType, *ast.MapType, *ast.ChanType, *ast.ArrayType:
	default:
		dt.open = true
	}
}

// hasMember reports whether pkg.typ has member m (seen guards cycles).
func (api *docAPI) hasMember(pkg, typ, m string, seen map[string]bool) bool {
	if pkg == "testing" {
		return docTestingT[m]
	}
	key := pkg + "." + typ
	if seen[key] {
		return false
	}
	seen[key] = true
	p := api.pkgs[pkg]
	if p == nil {
		return false
	}
	dt := p.types[typ]
	if dt == nil {
		return false
	}
	if dt.open || dt.members[m] {
		return true
	}
	for _, emb := range dt.embedded {
		i := strings.Index(emb, ".")
		if api.hasMember(emb[:i], emb[i+1:], m, seen) {
			return true
		}
	}
	return false
}

// typesNamed lists the packages that declare exported type n.
func (api *docAPI) typesNamed(n string) []string {
	var out []string
	for name, p := range api.pkgs {
		if dt := p.types[n]; dt != nil && ast.IsExported(n) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// check returns the problems with the Go names in one piece of code.
func (api *docAPI) check(code string, receivers bool) []string {
	var bad []string
	// pkg.Name[.Member]
	for _, m := range docQualified.FindAllStringSubmatch(code, -1) {
		pkg, name, glob, member := m[1], m[2], m[3], m[4]
		if !ast.IsExported(name) || docPlaceholders[name] {
			continue // Python: asyncio.run, asyncio.create_task
		}
		p := api.pkgs[pkg]
		if docTestName.MatchString(name) { // aio.TestShutdownCompleteAtAnyMoment
			if !api.tests[name] && !(glob != "" && docHasPrefix(api.tests, name)) {
				bad = append(bad, pkg+"."+name+glob)
			}
			continue
		}
		if glob != "" {
			if !docHasPrefix(p.names, name) {
				bad = append(bad, pkg+"."+name+"*")
			}
			continue
		}
		if !p.names[name] {
			bad = append(bad, pkg+"."+name)
			continue
		}
		if member != "" && ast.IsExported(member) && p.types[name] != nil &&
			!api.hasMember(pkg, name, member, map[string]bool{}) {
			bad = append(bad, pkg+"."+name+"."+member)
		}
	}
	// Type.Member, (*Type).Member
	for _, m := range docTypeMember.FindAllStringSubmatch(code, -1) {
		typ, member := m[1]+m[3], m[2]+m[4]
		if !ast.IsExported(member) {
			continue
		}
		pkgs := api.typesNamed(typ)
		if len(pkgs) == 0 {
			continue // not one of our types (a Python or stdlib name)
		}
		ok := false
		for _, pkg := range pkgs {
			ok = ok || api.hasMember(pkg, typ, member, map[string]bool{})
		}
		if !ok {
			bad = append(bad, typ+"."+member)
		}
	}
	// WithX
	for _, m := range docOption.FindAllStringSubmatch(code, -1) {
		if docPlaceholders[m[1]] {
			continue
		}
		ok := false
		for _, p := range api.pkgs {
			ok = ok || p.names[m[1]] || m[2] != "" && docHasPrefix(p.names, m[1])
		}
		if !ok {
			bad = append(bad, m[1]+m[2])
		}
	}
	// Name(...), unqualified: a function, type or member of these packages
	if receivers {
		for _, m := range docBareCall.FindAllStringSubmatch(code, -1) {
			if !api.anyName(m[1]) && !docTestName.MatchString(m[1]) &&
				!strings.HasPrefix(m[1], "With") && !docForeignCalls[m[1]] {
				bad = append(bad, m[1]+"(")
			}
		}
	}
	// *Name, unqualified, in a code span: a type of these packages
	if receivers {
		for _, m := range docBarePointer.FindAllStringSubmatch(code, -1) {
			if len(api.typesNamed(m[1])) == 0 {
				bad = append(bad, "*"+m[1])
			}
		}
		for _, m := range docBareLiteral.FindAllStringSubmatch(code, -1) {
			if len(api.typesNamed(m[1])) == 0 {
				bad = append(bad, m[1]+"{")
			}
		}
	}
	// TestX, ExampleX, BenchmarkX, FuzzX: a function of some _test.go file
	if receivers {
		for _, m := range docTestName.FindAllStringSubmatch(code, -1) {
			if !(api.tests[m[1]] || m[2] != "" && docHasPrefix(api.tests, m[1])) {
				bad = append(bad, m[1]+m[2])
			}
		}
	}
	if receivers {
		for _, m := range docReceiver.FindAllStringSubmatch(code, -1) {
			types, member := docReceivers[m[1]], m[2]
			if types == nil {
				continue
			}
			ok := false
			for _, pt := range types {
				i := strings.Index(pt, ".")
				ok = ok || api.hasMember(pt[:i], pt[i+1:], member, map[string]bool{})
			}
			if !ok {
				bad = append(bad, m[1]+"."+member+" ("+strings.Join(types, " or ")+")")
			}
		}
	}
	return bad
}

var (
	docQualified   = regexp.MustCompile(`(?:^|[^\w.])(asyncio|aio|cancelcheck|asynciohttp)\.([A-Za-z_]\w*)(\*|…)?(?:\[[^\]]*\])?(?:\.([A-Za-z_]\w*))?`)
	docTypeMember  = regexp.MustCompile(`(?:^|[^\w.])(?:([A-Z]\w*)(?:\[[^\]]*\])?\.(\w+)|\(\*([A-Z]\w*)(?:\[[^\]]*\])?\)\.(\w+))`)
	docOption      = regexp.MustCompile(`(?:^|[^\w.])(With[A-Z]\w*)(\*|…)?`)
	docTestName    = regexp.MustCompile(`(?:^|[^\w.])((?:Test|Example|Benchmark|Fuzz)[A-Z_]\w*)(\*|…)?`)
	docBareCall    = regexp.MustCompile(`(?:^|[^\w.*])([A-Z]\w*)(?:\[[^\]]*\])?\(`)
	docBareLiteral = regexp.MustCompile(`(?:^|[^\w.])([A-Z]\w*)(?:\[[^\]]*\])?\{`)
	docBarePointer = regexp.MustCompile(`(?:^|[^\w.*])\*([A-Z]\w*)`)
	docReceiver    = regexp.MustCompile(`(?:^|[^\w.])([a-z]\w*)\.([A-Z]\w*)`)
)

// docSplitRow splits a Markdown table row on its unescaped pipes.
func docSplitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteString(`\|`)
			i++
			continue
		}
		if line[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

var docCodeSpan = regexp.MustCompile("`([^`]+)`")

// checkMarkdown returns "file:line: name" for each unresolved name.
func (api *docAPI) checkMarkdown(file, text string) []string {
	var out []string
	report := func(n int, code string, receivers bool) {
		code = strings.ReplaceAll(code, `\|`, "|")
		for _, b := range api.check(code, receivers) {
			if docIntentional[file+": "+b] != "" {
				continue
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", file, n, b))
		}
	}
	lines := strings.Split(text, "\n")
	fence, fenceGo := false, false
	var header []string
	open, openLine := "", 0 // a code span wrapped onto the next line
	for i, line := range lines {
		n := i + 1
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			open = ""
			if !fence {
				fence, fenceGo = true, strings.TrimPrefix(trim, "```") == "go"
			} else {
				fence = false
			}
			continue
		}
		if fence {
			if fenceGo {
				report(n, line, false)
			}
			continue
		}
		if !strings.HasPrefix(trim, "|") {
			header = nil
			// a code span may wrap onto the next line: carry it over
			if open != "" {
				j := strings.IndexByte(line, '`')
				if j < 0 || trim == "" {
					if trim == "" {
						open = "" // a blank line ends the paragraph: no span
					} else {
						open += " " + line
					}
					continue
				}
				report(openLine, open+" "+line[:j], true)
				open, line = "", line[j+1:]
			}
			for _, m := range docCodeSpan.FindAllStringSubmatch(line, -1) {
				report(n, m[1], true)
			}
			if strings.Count(line, "`")%2 == 1 {
				open, openLine = line[strings.LastIndexByte(line, '`')+1:], n
			}
			continue
		}
		open = ""
		if header == nil {
			header = docSplitRow(trim)
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|-") {
				continue // the header row names columns
			}
		}
		if strings.HasPrefix(trim, "|-") {
			continue
		}
		for c, cell := range docSplitRow(trim) {
			if c < len(header) && docSkipColumns[header[c]] {
				continue
			}
			for _, m := range docCodeSpan.FindAllStringSubmatch(cell, -1) {
				report(n, m[1], true)
			}
		}
	}
	return out
}

func TestDocNamesResolve(t *testing.T) {
	api := loadDocAPI(t)
	var bad []string
	for _, f := range docMarkdownFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bad = append(bad, api.checkMarkdown(f, string(b))...)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestDocLinksResolve checks the doc links of the public packages' comments
// ([Name], [Name.Method], [pkg.Name], [*pkg.Name]; what go doc and pkg.go.dev
// turn into links, and leave as plain text when the name is gone) and their
// qualified names (asyncio.Name, aio.Name ...), as in the Markdown.
func TestDocLinksResolve(t *testing.T) {
	api := loadDocAPI(t)
	for pkg, files := range api.files {
		for _, f := range files {
			for _, cg := range f.Comments {
				for _, b := range api.checkComment(pkg, cg.Text()) {
					// the line: the first comment line with the name's last part
					last := strings.Trim(b[strings.LastIndex(b, ".")+1:], "[]")
					word := regexp.MustCompile(`\b` + regexp.QuoteMeta(last) + `\b`)
					at := cg.Pos()
					for _, c := range cg.List {
						if word.MatchString(c.Text) {
							at = c.Pos()
							break
						}
					}
					pos := api.fset.Position(at)
					if docIntentional[pos.Filename+": "+b] != "" {
						continue
					}
					t.Errorf("%s:%d: %s", pos.Filename, pos.Line, b)
				}
			}
		}
	}
}

// docImportPaths maps the import paths of the public packages to their names.
func docImportPaths() map[string]string {
	m := map[string]string{}
	for dir, name := range docAPIPackages {
		path := "github.com/go-asyncio/asyncio"
		if dir != "." {
			path += "/" + dir
		}
		m[path] = name
	}
	return m
}

// checkComment returns the unresolved names of one comment of package pkg.
func (api *docAPI) checkComment(pkg, text string) []string {
	pathOf := docImportPaths()
	var parser comment.Parser
	parser.LookupPackage = func(name string) (string, bool) {
		for path, n := range pathOf {
			if n == name {
				return path, true
			}
		}
		return "", false
	}
	parser.LookupSym = func(recv, name string) bool { return true }
	var bad []string
	docWalk(parser.Parse(text), func(l *comment.DocLink) {
		if !ast.IsExported(l.Name) || l.Recv != "" && !ast.IsExported(l.Recv) {
			return
		}
		lp := pkg
		if l.ImportPath != "" {
			if lp = pathOf[l.ImportPath]; lp == "" {
				return // another package's
			}
		}
		p := api.pkgs[lp]
		switch {
		case l.Recv == "" && !p.names[l.Name]:
			bad = append(bad, "["+lp+"."+l.Name+"]")
		case l.Recv != "" && !api.hasMember(lp, l.Recv, l.Name, map[string]bool{}):
			bad = append(bad, "["+lp+"."+l.Recv+"."+l.Name+"]")
		}
	})
	for _, b := range api.check(text, false) {
		// asyncio.Name in Go prose is Python's (asyncio.QueueFull)
		if !docQualified.MatchString(" " + b) {
			bad = append(bad, b)
		}
	}
	return bad
}

// docWalk calls fn for each doc link of d.
func docWalk(d *comment.Doc, fn func(*comment.DocLink)) {
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, x := range ts {
			switch x := x.(type) {
			case *comment.DocLink:
				fn(x)
			case *comment.Link:
				text(x.Text)
			case comment.Italic, comment.Plain:
			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				text(b.Text)
			case *comment.Heading:
				text(b.Text)
			case *comment.List:
				for _, it := range b.Items {
					blocks(it.Content)
				}
			}
		}
	}
	blocks(d.Content)
}

// TestDocNamesCheckerCatches is the checker's own test: stale names of every
// form are reported with their line, and the names the README uses, Python's
// and other packages' are not.
func TestDocNamesCheckerCatches(t *testing.T) {
	api := loadDocAPI(t)
	md := "| asyncio | go-asyncio |\n" +
		"|---|---|\n" +
		"| `asyncio.Lockk()` `loop.call_soon(cb)` | `l.CallSoonThreadSafe(fn)` |\n" + // 3
		"\n" +
		"Good: `asyncio.CreateTask(owner, fn, asyncio.WithEagerStart())`, `aio.WithReuseAddress(on)`,\n" + // 5
		"`t.Loop()`, `l.CallSoonThreadsafe`, `*asyncio.ExceptionGroup`, `LoopGroup.SnapshotThreadsafe`,\n" +
		"`Server.CloseClients`, `(*Loop).Stop`, `asyncio.create_task`, `context.Cause`, `http.Server.Close`,\n" +
		"`ExceptionContext.Stack`, `aio.Server.CloseClients`, `WithTask*`, `t.FailNow`, `asyncio.Future[V].Await`.\n" +
		"Stale: `aio.WithReuseAddr(on)` `Server.CloseClient` `(*Loop).Stopp` `asyncio.ExceptionGroups`\n" + // 9
		"`g.SnapshotThreadSafe` `WithEagerStarts()` `aio.Server.CloseClient` `TestNoSuchTest` `WithNoSuch*`\n" + // 10
		"```go\n" +
		"tk := asyncio.CreateTaskk(t, fn)\n" + // 12
		"x.Foo()\n" +
		"```\n" +
		"| old | new |\n" +
		"|---|---|\n" +
		"| `Queue.Qsize()` | `Queue.Size()` |\n" + // 17
		"\n" +
		"A wrapped span `asyncio.Go(t, func(ctx) (V, error)\n" + // 19
		"{...})` and `aio.NoSuch(t,\n" + // 20
		"x)` and prose WithNot `Loop.Stop` between `t.Loop()`.\n" +
		"Bare: `FutureAddToAwaitedByy(fut, waiter)` `RunWith(r, fn)` `NewFuture[V](l)`.\n" + // 22
		"Types: `*ValueError`, `*LoopErr`, `*os.File`, `fn(*args)`, `Outcome{Value, Err}`, `Outcom{}`.\n" // 23
	got := api.checkMarkdown("x.md", md)
	want := []string{
		"x.md:3: l.CallSoonThreadSafe (asyncio.Loop)",
		"x.md:9: aio.WithReuseAddr", "x.md:9: Server.CloseClient", "x.md:9: Loop.Stopp",
		"x.md:9: asyncio.ExceptionGroups",
		"x.md:10: aio.Server.CloseClient", "x.md:10: WithEagerStarts", "x.md:10: WithNoSuch*",
		"x.md:10: TestNoSuchTest", "x.md:10: g.SnapshotThreadSafe (asyncio.Group or asyncio.LoopGroup)",
		"x.md:12: asyncio.CreateTaskk",
		"x.md:17: Queue.Size",
		"x.md:20: aio.NoSuch",
		"x.md:22: FutureAddToAwaitedByy(",
		"x.md:23: *LoopErr",
		"x.md:23: Outcom{",
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDocLinksCheckerCatches(t *testing.T) {
	api := loadDocAPI(t)
	text := "Good: [Run], [Loop.Close], [aio.Server], [*aio.StreamReader], [context.Context],\n" +
		"[Group.Cancel], asyncio.QueueFull (Python's), Loop.Stop, [WithDebug].\n" +
		"Stale: [Runn], [Loop.Closee], [aio.Serverr], [aio.Server.CloseClient], Runner.RunWith,\n" +
		"WithDebugg.\n"
	got := api.checkComment("asyncio", text)
	want := []string{"[asyncio.Runn]", "[asyncio.Loop.Closee]", "Loop.Closee", "[aio.Serverr]",
		"[aio.Server.CloseClient]", "Runner.RunWith", "WithDebugg"}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
