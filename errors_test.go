package asyncio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCANCEL12_ErrorKinds(t *testing.T) {
	ce := &CancelledError{Msg: "m"}
	checks := []struct {
		name string
		ok   bool
	}{
		{"CE is ErrCancelled", errors.Is(ce, ErrCancelled)},
		{"wrapped CE is ErrCancelled", errors.Is(fmt.Errorf("x: %w", ce), ErrCancelled)},
		{"IsCancelled wrapped", IsCancelled(fmt.Errorf("x: %w", ce))},
		{"IsCancelled(nil) false", !IsCancelled(nil)},
		{"IsCancelled(other) false", !IsCancelled(errors.New("x"))},
		{"InvalidState", errors.Is(&InvalidStateError{Msg: "x"}, ErrInvalidState)},
		{"Runtime", errors.Is(&RuntimeError{Msg: "x"}, ErrRuntime)},
		{"closed is runtime", errors.Is(errLoopClosed(), ErrRuntime)},
		{"closed is ErrLoopClosed", errors.Is(errLoopClosed(), ErrLoopClosed)},
		{"CE is not runtime", !errors.Is(ce, ErrRuntime)},
		{"panic(err) unwraps", errors.Is(&PanicError{Value: ErrDeadlock}, ErrDeadlock)},
		{"panic(string) does not unwrap", errors.Unwrap(&PanicError{Value: "s"}) == nil},
	}
	var failed []string
	for _, c := range checks {
		if !c.ok {
			failed = append(failed, c.name)
		}
	}
	if len(failed) > 0 {
		t.Errorf("failed: %v", failed)
	}
}

func TestTimeoutError_Matching(t *testing.T) {
	err := error(&TimeoutError{Cause: &CancelledError{Msg: "x"}})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || IsCancelled(err) {
		t.Error("TimeoutError matching")
	}
	if te, ok := err.(interface{ Timeout() bool }); !ok || !te.Timeout() {
		t.Error("Timeout() method")
	}
	if err.Error() != "asyncio: timeout" {
		t.Error(err.Error())
	}
}

func TestTG_ExceptionGroupError(t *testing.T) {
	eg := &ExceptionGroup{Msg: tgErrorMessage, Errs: []error{errBoom, errKey}}
	if got := eg.Error(); got != "unhandled errors in a TaskGroup (2 sub-exceptions)" {
		t.Errorf("Error() = %q", got)
	}
	if !strings.HasPrefix((&ExceptionGroup{Msg: "m", Errs: []error{errBoom}}).Error(), "m (1 sub-exception)") {
		t.Error("singular form")
	}
}

// Split and Subgroup follow Python's split/subgroup: nested groups keep
// their structure and message in both parts, empty parts are nil, match
// sees leaves only (errors.Is would match a group by any leaf).
func TestExceptionGroupSplitSubgroup(t *testing.T) {
	inner := &ExceptionGroup{Msg: "inner", Errs: []error{errBoom, errKey}}
	eg := &ExceptionGroup{Msg: "outer", Errs: []error{errMy, inner, fmt.Errorf("wrapped: %w", errBoom)}}
	isBoom := func(err error) bool { return errors.Is(err, errBoom) }
	matched, rest := eg.Split(isBoom)
	var r eventLog
	r.log("matched: %s", describe(matched))
	r.log("rest: %s", describe(rest))
	r.log("subgroup: %s", describe(eg.Subgroup(isBoom)))
	all, none := eg.Split(func(error) bool { return true })
	r.log("all: %s, rest nil: %v", describe(all), none == nil)
	r.log("no match: %v", eg.Subgroup(func(error) bool { return false }) == nil)
	m2, r2 := (&ExceptionGroup{Msg: "only inner", Errs: []error{inner}}).Split(func(err error) bool { return err == errKey })
	r.log("nested: %s | %s", describe(m2), describe(r2))
	checkEvents(t, []string{
		`matched: ExceptionGroup("outer", [ExceptionGroup("inner", [*errors.errorString("boom")]), *fmt.wrapError("wrapped: boom") wrapping *errors.errorString("boom")])`,
		`rest: ExceptionGroup("outer", [*errors.errorString("my"), ExceptionGroup("inner", [*errors.errorString("key")])])`,
		`subgroup: ExceptionGroup("outer", [ExceptionGroup("inner", [*errors.errorString("boom")]), *fmt.wrapError("wrapped: boom") wrapping *errors.errorString("boom")])`,
		`all: ExceptionGroup("outer", [*errors.errorString("my"), ExceptionGroup("inner", [*errors.errorString("boom"), *errors.errorString("key")]), *fmt.wrapError("wrapped: boom") wrapping *errors.errorString("boom")]), rest nil: true`,
		`no match: true`,
		`nested: ExceptionGroup("only inner", [ExceptionGroup("inner", [*errors.errorString("key")])]) | ExceptionGroup("only inner", [ExceptionGroup("inner", [*errors.errorString("boom")])])`,
	}, &r)
	mustPanic(t, "Split(nil)", func() { eg.Split(nil) })
	mustPanic(t, "Subgroup(nil)", func() { eg.Subgroup(nil) })
}

// A CancelledError with a Cause unwraps to it (RunContext's error).
func TestCancelledErrorCause(t *testing.T) {
	err := error(&CancelledError{Msg: "context canceled", Cause: context.Canceled})
	if !IsCancelled(err) || !errors.Is(err, context.Canceled) || errors.Is(&CancelledError{}, context.Canceled) {
		t.Error("CancelledError.Cause matching")
	}
}
