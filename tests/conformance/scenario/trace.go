package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

// userError is a DSL user error (a name starting with an upper-case letter);
// each name is its own "class".
type userError struct{ name string }

func (e *userError) Error() string { return e.name }

// Is makes two userErrors of the same name match, like isinstance on a class.
func (e *userError) Is(target error) bool {
	u, ok := target.(*userError)
	return ok && u.name == e.name
}

// fmtTime prints the virtual clock as seconds with 3 decimals of the
// millisecond clock (DSL.md section 4).
func fmtTime(d time.Duration) string {
	ms := int64(d / time.Millisecond)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// errKind classifies an error by its top-level "class", as Python's
// isinstance would: a TimeoutError caused by a CancelledError is a timeout,
// an ExceptionGroup is a group whatever its leaves are.
type errKind int

const (
	kindUnknown errKind = iota
	kindGroup
	kindUser
	kindTimeout
	kindCancelled
	kindInvalidState
	kindRuntime
	kindValue
)

// Hooks for error classes of the APIs beyond the core (set by the files
// that use those APIs, so the core ops build on their own).
var (
	groupLeaves     = func(error) ([]error, bool) { return nil, false } // *asyncio.ExceptionGroup
	isTimeout       = func(error) bool { return false }                 // asyncio.ErrTimeout
	isValue         = func(error) bool { return false }                 // asyncio.ErrValue
	newTimeoutError = func() error { return errors.New("timeout: not supported") }
	newValueError   = func() error { return errors.New("value: not supported") }
)

func classify(err error) errKind {
	var ue *userError
	if _, ok := groupLeaves(err); ok {
		return kindGroup
	}
	switch {
	case errors.As(err, &ue):
		return kindUser
	case isTimeout(err):
		return kindTimeout
	case errors.Is(err, asyncio.ErrCancelled):
		return kindCancelled
	case errors.Is(err, asyncio.ErrInvalidState):
		return kindInvalidState
	case errors.Is(err, asyncio.ErrRuntime):
		return kindRuntime
	case isValue(err):
		return kindValue
	}
	return kindUnknown
}

// leaves returns the EXC texts of the leaf errors of a (nested) group.
func leaves(err error) []string {
	if errs, ok := groupLeaves(err); ok {
		var out []string
		for _, e := range errs {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []string{excDesc(err)}
}

// spec is the SPEC text of a non-cancellation error.
func spec(err error) string {
	switch classify(err) {
	case kindGroup:
		l := leaves(err)
		sort.Strings(l)
		return "group[" + strings.Join(l, ",") + "]"
	case kindUser:
		var ue *userError
		errors.As(err, &ue)
		return ue.name
	case kindTimeout:
		return "timeout"
	case kindInvalidState:
		return "invalid_state"
	case kindRuntime:
		return "runtime"
	case kindValue:
		return "value"
	case kindCancelled:
		return "cancelled?" // not a SPEC; only reached through a bug
	}
	return fmt.Sprintf("unknown(%v)", err)
}

// cancelMsg is the message of a cancellation error ("" = none).
func cancelMsg(err error) string {
	var ce *asyncio.CancelledError
	if errors.As(err, &ce) {
		return ce.Msg
	}
	return ""
}

// excDesc is the EXC form: cancelled | cancelled('m') | SPEC.
func excDesc(err error) string {
	if classify(err) == kindCancelled {
		if m := cancelMsg(err); m != "" {
			return "cancelled('" + m + "')"
		}
		return "cancelled"
	}
	return spec(err)
}

// outcomeExc is the OUTCOME form of an error.
func outcomeExc(err error) string {
	if classify(err) == kindCancelled {
		return excDesc(err)
	}
	return "error(" + spec(err) + ")"
}

func fmtValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return fmt.Sprint(x)
	case int:
		return fmt.Sprint(x)
	case string:
		return "'" + x + "'"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmtValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case error:
		return outcomeExc(x)
	}
	return fmt.Sprintf("?%T(%v)", v, v)
}

func outcomeValue(v any) string { return "result(" + fmtValue(v) + ")" }

// makeErr builds the error raised by `raise ERR` / `set_exception F ERR`.
func makeErr(name string) error {
	switch name {
	case "timeout":
		return newTimeoutError()
	case "cancelled":
		return &asyncio.CancelledError{}
	case "runtime":
		return &asyncio.RuntimeError{}
	case "value":
		return newValueError()
	case "invalid_state":
		return &asyncio.InvalidStateError{}
	}
	return &userError{name: name}
}

// handlerMatches reports whether a `try` handler of KIND catches err, with
// Python's except-clause semantics on the top-level class.
func handlerMatches(kind string, err error) bool {
	k := classify(err)
	switch kind {
	case "cancelled":
		return k == kindCancelled
	case "timeout":
		return k == kindTimeout
	case "group":
		return k == kindGroup
	case "runtime":
		return k == kindRuntime
	case "value":
		return k == kindValue
	case "invalid_state":
		return k == kindInvalidState
	case "any":
		// Exception: everything but CancelledError (and BaseExceptionGroups
		// holding one).
		if k == kindCancelled {
			return false
		}
		if k == kindGroup {
			for _, l := range leaves(err) {
				if strings.HasPrefix(l, "cancelled") {
					return false
				}
			}
		}
		return true
	}
	if k != kindUser {
		return false
	}
	var ue *userError
	errors.As(err, &ue)
	return ue.name == kind
}

// --- JSON argument helpers (scenarios are valid: errors are not checked) ---

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// millis parses an integer number of milliseconds.
func millis(raw json.RawMessage) time.Duration {
	var n int64
	_ = json.Unmarshal(raw, &n)
	return time.Duration(n) * time.Millisecond
}

func bodyOf(raw json.RawMessage) []json.RawMessage {
	var b []json.RawMessage
	_ = json.Unmarshal(raw, &b)
	return b
}

func strList(raw json.RawMessage) []string {
	var l []string
	_ = json.Unmarshal(raw, &l)
	return l
}

// value parses a DSL value: integer (int64), null, bool or string.
func value(raw json.RawMessage) any {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	_ = d.Decode(&v)
	if n, ok := v.(json.Number); ok {
		i, _ := n.Int64()
		return i
	}
	return v
}
