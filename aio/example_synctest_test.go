//go:build unix && go1.25

package aio_test

import (
	"os"
	"testing"
	"testing/synctest"
)

// capture runs fn with os.Stdout sent to a file and returns what it wrote.
func capture(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = saved }()
	fn()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every runnable example of the package prints the same inside a synctest
// bubble as outside one.
func TestSynctestExamples(t *testing.T) {
	examples := []struct {
		name string
		fn   func()
	}{
		{"ExampleNewSimNetwork", ExampleNewSimNetwork},
		{"ExampleSimHost_HTTPTransport", ExampleSimHost_HTTPTransport},
		{"ExampleStartHTTPServer", ExampleStartHTTPServer},
		{"ExampleSearchSeeds", ExampleSearchSeeds},
		{"ExampleOpenConnection", ExampleOpenConnection},
		{"ExampleDialConn", ExampleDialConn},
		{"ExampleCreateDatagramEndpoint", ExampleCreateDatagramEndpoint},
		{"ExampleWithResolver", ExampleWithResolver},
		{"ExampleCreateSubprocessExec", ExampleCreateSubprocessExec},
		{"ExampleProcess_Communicate", ExampleProcess_Communicate},
		{"ExampleSubprocessExec", ExampleSubprocessExec},
		{"ExampleConnectReadPipe", ExampleConnectReadPipe},
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			want := capture(t, ex.fn)
			var got string
			synctest.Test(t, func(t *testing.T) { got = capture(t, ex.fn) })
			if got != want {
				t.Errorf("inside a bubble it printed\n%s\noutside\n%s", got, want)
			}
		})
	}
}
