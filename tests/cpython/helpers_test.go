// Package cpython ports CPython 3.13's own test_asyncio, one Go test per
// CPython test method (Test<File>_<method>, or Test<File>_<Class>_<method>
// where a file has the method in several classes), one Go file per CPython
// file. Each test checks what the CPython test checks, through the public
// API, with the same inputs and expected outcome; the virtual clock stands
// in for CPython's real sleeps. docs/cpython-tests.md lists every method
// and its status (scripts/cpython-tests.py).
package cpython

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
)

const ms = time.Millisecond

// run is IsolatedAsyncioTestCase: body runs as the main task of
// asyncio.Run on a virtual clock, and an error it returns fails the test.
func run(t *testing.T, body func(tk *asyncio.T) error, opts ...asyncio.LoopOption) {
	t.Helper()
	opts = append([]asyncio.LoopOption{asyncio.WithVirtualTime()}, opts...)
	if _, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) { return struct{}{}, body(tk) }, opts...); err != nil {
		t.Fatalf("test body: %v", err)
	}
}

// pyError stands for an instance of a Python exception class in the
// ported tests (ZeroDivisionError for `1 / 0`, ValueError(t), MyExc ...).
type pyError struct {
	class string
	args  []any
}

func (e *pyError) Error() string {
	if len(e.args) == 0 {
		return e.class
	}
	return fmt.Sprintf("%s%v", e.class, e.args)
}

// exc returns a new instance of the Python exception class (raise
// class(*args)).
func exc(class string, args ...any) error { return &pyError{class: class, args: args} }

// classOf is type(err).__name__ for the errors the ported tests see.
func classOf(err error) string {
	var pe *pyError
	var eg *asyncio.ExceptionGroup
	var ce *asyncio.CancelledError
	var te *asyncio.TimeoutError
	switch {
	case err == nil:
		return "None"
	case errors.As(err, &eg) && eg == err:
		return "ExceptionGroup"
	case errors.As(err, &pe) && error(pe) == err:
		return pe.class
	case errors.As(err, &ce) && error(ce) == err:
		return "CancelledError"
	case errors.As(err, &te) && error(te) == err:
		return "TimeoutError"
	}
	return fmt.Sprintf("%T", err)
}

// isClass reports whether err is an instance of class (exactly, not
// through a wrapper).
func isClass(err error, class string) bool { return classOf(err) == class }

// errorTypes is get_error_types(eg): the sorted classes of the direct
// members of an ExceptionGroup (nil if err is not one).
func errorTypes(err error) []string {
	eg, ok := err.(*asyncio.ExceptionGroup)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range eg.Errs {
		if c := classOf(e); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// group returns err as an *ExceptionGroup, failing the test if it is not.
func group(t *testing.T, err error) *asyncio.ExceptionGroup {
	t.Helper()
	eg, ok := err.(*asyncio.ExceptionGroup)
	if !ok {
		t.Errorf("got %v (%T), want an ExceptionGroup", err, err)
		return &asyncio.ExceptionGroup{}
	}
	return eg
}

// allFields lets eq compare the unexported fields of the tests' own types.
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// eq is assertEqual.
func eq[V any](t *testing.T, got, want V, what ...any) {
	t.Helper()
	if d := cmp.Diff(want, got, allFields); d != "" {
		t.Errorf("%s: (-want +got)\n%s", fmt.Sprint(what...), d)
	}
}

// check is assertTrue.
func check(t *testing.T, cond bool, what ...any) {
	t.Helper()
	if !cond {
		t.Errorf("not true: %s", fmt.Sprint(what...))
	}
}

// raises is assertRaises(class): err must be an instance of class.
func raises(t *testing.T, err error, class string, what ...any) {
	t.Helper()
	if !isClass(err, class) {
		t.Errorf("%s: got %v (%s), want %s", fmt.Sprint(what...), err, classOf(err), class)
	}
}

// raisesRegex is assertRaisesRegex(class, pattern).
func raisesRegex(t *testing.T, err error, class, pattern string) {
	t.Helper()
	raises(t, err, class)
	if err != nil && !regexp.MustCompile(pattern).MatchString(err.Error()) {
		t.Errorf("error %q does not match %q", err.Error(), pattern)
	}
}

// cancelled is assertRaises(asyncio.CancelledError): err must be a
// cancellation (IsCancelled).
func cancelled(t *testing.T, err error, what ...any) {
	t.Helper()
	if !asyncio.IsCancelled(err) {
		t.Errorf("%s: got %v, want a CancelledError", fmt.Sprint(what...), err)
	}
}

// noErr fails the test on an unexpected error.
func noErr(t *testing.T, err error, what ...any) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: unexpected error %v", fmt.Sprint(what...), err)
	}
}

// result returns a finished task's or future's value, failing the test if
// it has none.
func result[V any](t *testing.T, aw asyncio.AwaitableOf[V]) V {
	t.Helper()
	v, err := aw.Result()
	if err != nil {
		t.Errorf("result: %v", err)
	}
	return v
}

// sleepReturn is `async def f(): await asyncio.sleep(d); return v`.
func sleepReturn[V any](d time.Duration, v V) func(*asyncio.T) (V, error) {
	return func(tk *asyncio.T) (V, error) {
		if err := asyncio.Sleep(tk, d); err != nil {
			var zero V
			return zero, err
		}
		return v, nil
	}
}

// sleepFn is `asyncio.sleep(d)` made into a task body.
func sleepFn(d time.Duration) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) { return struct{}{}, asyncio.Sleep(tk, d) }
}

// fn0 adapts a body without a result.
func fn0(f func(tk *asyncio.T) error) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) { return struct{}{}, f(tk) }
}

// spawn is tg.create_task(...), failing the test if the group refuses.
func spawn[V any](t *testing.T, g *asyncio.Group, fn func(*asyncio.T) (V, error), opts ...asyncio.TaskOption) *asyncio.Task[V] {
	t.Helper()
	task, err := asyncio.Spawn(g, fn, opts...)
	if err != nil {
		t.Errorf("create_task: %v", err)
	}
	return task
}

var tasksRE = regexp.MustCompile(`tasks=(\d+)`)

// groupTasks is len(tg._tasks): the children not yet handled, as the
// group's repr shows them.
func groupTasks(g *asyncio.Group) int {
	m := tasksRE.FindStringSubmatch(g.String())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// recorder keeps what the loop's exception handler is given.
type recorder struct{ contexts []asyncio.ExceptionContext }

// handle installs r as l's exception handler.
func (r *recorder) handle(l *asyncio.Loop) *recorder {
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { r.contexts = append(r.contexts, c) })
	return r
}

func (r *recorder) messages() []string {
	var out []string
	for _, c := range r.contexts {
		out = append(out, c.Message)
	}
	return out
}
