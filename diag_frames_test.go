package asyncio

import "testing"

// TestIsLibFrameByModulePath: frames are the library's by the module-path
// prefix of their function, so a package added to the module later, or a
// binary built with -trimpath (file paths without the source directory),
// is classified right without a list of folders.
func TestIsLibFrameByModulePath(t *testing.T) {
	cases := []struct {
		fn, file string
		lib      bool
	}{
		{libPath + ".(*T).park", "/src/asyncio/step.go", true},
		{libPath + ".CreateTask[...].func1", "/src/asyncio/task.go", true},
		{libPath + "/newpkg.Helper", libPath + "/newpkg/helper.go", true}, // -trimpath, a package the core does not name
		{libPath + "/aio.(*Conn).Read", "/elsewhere/aio/conn.go", true},
		{libPath + ".TestSomething", "/src/asyncio/step_test.go", false}, // the module's tests are users
		{libPath + "_test.ExampleSleep", "/src/asyncio/example_test.go", false},
		{libPath + "x.F", "/src/asynciox/f.go", false}, // a module whose path only starts alike
		{"main.worker", "/src/asyncio/examples/hello/main.go", false},
		{"example.com/app.run", "/home/u/app/run.go", false},
		{"runtime.gopark", "/go/src/runtime/proc.go", true},
	}
	for _, c := range cases {
		if got := isLibFrame(Frame{Function: c.fn, File: c.file, Line: 1}); got != c.lib {
			t.Errorf("isLibFrame(%s, %s) = %v, want %v", c.fn, c.file, got, c.lib)
		}
	}
	if libPath != "github.com/go-asyncio/asyncio" {
		t.Errorf("libPath = %q", libPath)
	}
}

func TestFuncPackage(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/x/y/z.(*T).f":              "github.com/x/y/z",
		"github.com/x/y.F[go.shape.*uint8].f1": "github.com/x/y",
		"main.main":                            "main",
		"fmt.Println":                          "fmt",
	} {
		if got := funcPackage(fn); got != want {
			t.Errorf("funcPackage(%q) = %q, want %q", fn, got, want)
		}
	}
}
