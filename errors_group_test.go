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

// The shape of what is raised, as the interpreter's
// _PyExc_PrepReraiseStar builds it (outputs recorded from CPython 3.13):
// one raised error with nothing left is raised alone, a group included;
// a naked error's clause raises its error alone, or the wrapping group on
// a bare re-raise; two raised errors, or one and a rest, make a group "".
func TestExceptStar_RaisedShapesAsCPython(t *testing.T) {
	show := func(err error) string {
		var f func(error) string
		f = func(err error) string {
			switch e := err.(type) {
			case nil:
				return "None"
			case *ExceptionGroup:
				s := fmt.Sprintf("EG(%q, [", e.Msg)
				for i, x := range e.Errs {
					if i > 0 {
						s += ", "
					}
					s += f(x)
				}
				return s + "])"
			case *ValueError:
				return "ValueError(" + e.Msg + ")"
			case *RuntimeError:
				return "RuntimeError(" + e.Msg + ")"
			}
			return err.Error()
		}
		return f(err)
	}
	eg := func(msg string, errs ...error) *ExceptionGroup { return &ExceptionGroup{Msg: msg, Errs: errs} }
	reraise := errors.New("reraise")
	on := func(err, act error) string {
		return show(ExceptStar(err, Except[*ValueError](func(g *ExceptionGroup) error {
			if act == reraise {
				return g
			}
			return act
		})))
	}
	rt := &RuntimeError{Msg: "t"}
	cases := []struct{ name, got, want string }{
		{"group, one raised, nothing left", on(eg("eg", &ValueError{Msg: "1"}), rt), "RuntimeError(t)"},
		{"naked, one raised", on(&ValueError{Msg: "1"}, rt), "RuntimeError(t)"},
		{"group, a group raised", on(eg("eg", &ValueError{Msg: "1"}), eg("new", rt)), `EG("new", [RuntimeError(t)])`},
		{"naked, re-raised", on(&ValueError{Msg: "1"}, reraise), `EG("", [ValueError(1)])`},
		{"naked, handled", on(&ValueError{Msg: "1"}, nil), "None"},
		{"naked, not matched", show(ExceptStar(&ValueError{Msg: "1"}, Except[*RuntimeError](func(*ExceptionGroup) error { return nil }))), "ValueError(1)"},
		{"group, raised and a rest", on(eg("eg", &ValueError{Msg: "1"}, fs.ErrNotExist), rt), `EG("", [RuntimeError(t), EG("eg", [file does not exist])])`},
		{"group, re-raised with a rest", on(eg("eg", &ValueError{Msg: "1"}, fs.ErrNotExist), reraise), `EG("eg", [ValueError(1), file does not exist])`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}
