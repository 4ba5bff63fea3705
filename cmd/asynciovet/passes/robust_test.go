package passes_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

// combined runs every analyzer in one pass, prefixing each message with
// the check's name, so that one testdata package can hold the
// expectations of all the checks (analysistest matches every "want" of a
// package against the diagnostics of the one analyzer under test).
var combined = &analysis.Analyzer{
	Name:             "asynciovet",
	Doc:              "all asynciovet checks",
	RunDespiteErrors: true,
	FactTypes:        factTypes(),
	Run: func(pass *analysis.Pass) (any, error) {
		for _, a := range passes.All() {
			p := *pass
			p.Analyzer = a
			p.Report = func(d analysis.Diagnostic) {
				d.Message = a.Name + ": " + d.Message
				pass.Report(d)
			}
			if _, err := a.Run(&p); err != nil {
				return nil, err
			}
		}
		return nil, nil
	},
}

// factTypes returns the fact types of every analyzer, which the combined
// analyzer must declare to export them.
func factTypes() []analysis.Fact {
	var out []analysis.Fact
	for _, a := range passes.All() {
		out = append(out, a.FactTypes...)
	}
	return out
}

// TestRobust runs every check over generic code, method values, function
// values, build-constrained files and a package that does not type-check:
// no check may crash, and each reports only what it can resolve.
func TestRobust(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), combined,
		"robust/generics", "robust/tags", "robust/broken")
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Action, r.Err)
		}
	}
}

// TestCgo runs every check over a cgo package.
func TestCgo(t *testing.T) {
	out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is not enabled")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler")
	}
	analysistest.Run(t, analysistest.TestData(), combined, "robust/cgo")
}

// TestIgnoreDirective checks that //asynciovet:ignore suppresses the named
// checks on its own line and the next one only, and only with a reason.
func TestIgnoreDirective(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), combined, "ignore")
}

// TestFileIgnoreDirective checks that //asynciovet:file-ignore before the
// package clause suppresses the named checks in its file only, and only
// with a reason.
func TestFileIgnoreDirective(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), combined, "fileignore")
}

// TestPorts runs every check over three asyncio programs ported the way
// a careful user would write them (an echo server and client, a queue
// pipeline, a crawler): any finding there is a false positive.
func TestPorts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), combined, "ports/...")
}

// TestReadme checks the before/after snippets of README.md: every
// "before" is reported by its check, no "after" is reported at all.
func TestReadme(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), combined, "readme")
}

// syntaxErrorSrc does not parse. It lives here rather than under testdata
// so that gofmt -l over the repository (which CI runs) stays clean.
const syntaxErrorSrc = `package syntaxerr

import "github.com/go-asyncio/asyncio"

func missingParen(t *asyncio.T) (int, error) {
	asyncio.CreateTask(t, func(own *asyncio.T) (int, error) { // want "unawaitedtask: the task started by CreateTask"
		return 0, asyncio.Sleep(t // want "wronghandle: asyncio.Sleep awaits with t"
	})
}
`

// TestSyntaxError runs every check over a file that does not parse: the
// checks must not crash, and report what the parser recovered.
func TestSyntaxError(t *testing.T) {
	dir := t.TempDir()
	// The stub asyncio package, then the package under test.
	stub := filepath.Join("src", "github.com")
	if err := os.CopyFS(filepath.Join(dir, stub), os.DirFS(filepath.Join(analysistest.TestData(), stub))); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(dir, "src", "syntaxerr")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "a.go"), []byte(syntaxErrorSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, combined, "syntaxerr")
}
