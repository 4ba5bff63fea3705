package asyncio

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ExceptStar runs the clauses in order over the leaves no earlier clause
// took, keeps nesting in what it passes, and returns what none took.
func TestExceptStar_ClausesInOrder(t *testing.T) {
	var log []string
	inner := &ExceptionGroup{Msg: "inner", Errs: []error{fs.ErrNotExist, &ValueError{Msg: "v2"}}}
	eg := &ExceptionGroup{Msg: "outer", Errs: []error{&ValueError{Msg: "v1"}, fs.ErrPermission, inner}}
	rest := ExceptStar(eg,
		Except[*ValueError](func(g *ExceptionGroup) error {
			log = append(log, fmt.Sprintf("value: %+v", g))
			return nil
		}),
		ExceptIs(fs.ErrNotExist, func(g *ExceptionGroup) error {
			log = append(log, fmt.Sprintf("not exist: %+v", g))
			return nil
		}),
		ExceptIs(ErrTimeout, func(g *ExceptionGroup) error {
			log = append(log, "timeout clause ran")
			return nil
		}),
	)
	log = append(log, fmt.Sprintf("rest: %+v", rest))
	want := []string{
		"value: outer (2 sub-exceptions)\n  1: asyncio: v1\n  2: inner (1 sub-exception)\n    1: asyncio: v2",
		"not exist: outer (1 sub-exception)\n  1: inner (1 sub-exception)\n    1: file does not exist",
		"rest: outer (1 sub-exception)\n  1: permission denied",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
	if ExceptStar(eg, ExceptIs(fs.ErrPermission, func(*ExceptionGroup) error { return nil }),
		Except[*ValueError](func(*ExceptionGroup) error { return nil }),
		ExceptIs(fs.ErrNotExist, func(*ExceptionGroup) error { return nil })) != nil {
		t.Error("all handled: want nil")
	}
	if ExceptStar(nil, Except[*ValueError](func(*ExceptionGroup) error { t.Error("ran on nil"); return nil })) != nil {
		t.Error("nil error: want nil")
	}
}

// A handler's error is raised with the rest in a new group (message "");
// a handler returning its own group re-raises it, back into the rest.
func TestExceptStar_HandlersRaiseAndReraise(t *testing.T) {
	boom := errors.New("boom")
	eg := &ExceptionGroup{Msg: "tg", Errs: []error{&ValueError{Msg: "v"}, fs.ErrNotExist, fs.ErrPermission}}
	got := ExceptStar(eg,
		Except[*ValueError](func(*ExceptionGroup) error { return boom }),
		ExceptIs(fs.ErrNotExist, func(g *ExceptionGroup) error { return g }),
	)
	want := " (2 sub-exceptions)\n  1: boom\n  2: tg (2 sub-exceptions)\n    1: file does not exist\n    2: permission denied"
	if s := fmt.Sprintf("%+v", got); s != want {
		t.Errorf("got %q\nwant %q", s, want)
	}
	if !errors.Is(got, boom) || errors.As(got, new(*ValueError)) {
		t.Error("the handled ValueError must be gone, the handler's error raised")
	}
}

// A naked error is matched as a group of one; unmatched, it comes back
// unchanged; matched and handled, nothing is left.
func TestExceptStar_NakedError(t *testing.T) {
	ve := &ValueError{Msg: "v"}
	var got *ExceptionGroup
	if err := ExceptStar(ve, Except[*ValueError](func(g *ExceptionGroup) error { got = g; return nil })); err != nil {
		t.Errorf("handled: %v", err)
	}
	if got == nil || got.Msg != "" || len(got.Errs) != 1 || got.Errs[0] != error(ve) {
		t.Errorf("the clause got %+v", got)
	}
	if err := ExceptStar(ve, ExceptIs(fs.ErrNotExist, func(*ExceptionGroup) error { return nil })); err != error(ve) {
		t.Errorf("unmatched: %v, want the error itself", err)
	}
	mustPanic(t, "nil handler", func() { Except[*ValueError](nil) })
	mustPanic(t, "nil target", func() { ExceptIs(nil, func(*ExceptionGroup) error { return nil }) })
}

// str() of Python's ExceptionGroup and RuntimeError: no prefix, no
// leaves; %+v lists the members.
func TestErrors_PrintAsPythonStr(t *testing.T) {
	if got := (&RuntimeError{Msg: "Event loop is closed"}).Error(); got != "Event loop is closed" {
		t.Errorf("RuntimeError: %q", got)
	}
	eg := &ExceptionGroup{Msg: "m", Errs: []error{errors.New("a\nb")}}
	if got := fmt.Sprintf("%v|%s|%q", eg, eg, eg); got != `m (1 sub-exception)|m (1 sub-exception)|"m (1 sub-exception)"` {
		t.Errorf("group: %s", got)
	}
	if got := fmt.Sprintf("%+v", eg); got != "m (1 sub-exception)\n  1: a\n     b" {
		t.Errorf("%%+v: %q", got)
	}
}
