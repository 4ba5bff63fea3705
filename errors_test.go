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
	if got := eg.Error(); got != "unhandled errors in a TaskGroup (2 sub-exceptions): boom; key" {
		t.Errorf("Error() = %q", got)
	}
	if !strings.HasPrefix((&ExceptionGroup{Msg: "m", Errs: []error{errBoom}}).Error(), "m (1 sub-exception)") {
		t.Error("singular form")
	}
}
