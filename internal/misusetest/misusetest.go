// Package misusetest holds the checks the misuse probes of the packages
// share (misuse_probe_test.go in asyncio, aio and cancelcheck): a misuse
// must get a clear error naming it, of the expected type, before anything
// changes. It is imported by tests only.
package misusetest

import (
	"errors"
	"strings"
	"testing"
)

// Panic runs call, which must panic with an error of the type target
// points to (a **asyncio.ValueError, **asyncio.RuntimeError, ...) whose
// message contains want; it reports what happened instead.
func Panic(t testing.TB, name, want string, target any, call func()) {
	t.Helper()
	var v any
	func() {
		defer func() { v = recover() }()
		call()
	}()
	err, _ := v.(error)
	switch {
	case v == nil:
		t.Errorf("%s: no panic, want one containing %q", name, want)
	case err == nil:
		t.Errorf("%s: panicked with %T %v, want an error", name, v, v)
	case !errors.As(err, target):
		t.Errorf("%s: panicked with %T %q, want %T", name, err, err, target)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: message %q does not name the mistake (want %q in it)", name, err, want)
	}
}

// Err checks a returned error as Panic checks a panic.
func Err(t testing.TB, name, want string, target any, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one containing %q", name, want)
	case !errors.As(err, target):
		t.Errorf("%s: error %T %q, want %T", name, err, err, target)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: message %q does not name the mistake (want %q in it)", name, err, want)
	}
}
