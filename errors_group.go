package asyncio

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// ExceptClause is one `except* T as eg:` clause for ExceptStar: which
// leaves it takes and the body that handles them. Make one with Except or
// ExceptIs.
type ExceptClause struct {
	match  func(error) bool
	handle func(eg *ExceptionGroup) error
}

// Except is `except* E as eg:`: the clause takes the leaves that are (or
// wrap) an E, as errors.As finds them, e.g. Except[*ValueError](...). A nil
// handle panics with a *ValueError.
func Except[E error](handle func(eg *ExceptionGroup) error) ExceptClause {
	if handle == nil {
		panic(valueErrorf("Except: nil handler"))
	}
	return ExceptClause{match: func(err error) bool {
		var target E
		return errors.As(err, &target)
	}, handle: handle}
}

// ExceptIs is `except* T as eg:` for a sentinel: the clause takes the
// leaves for which errors.Is(leaf, target) holds (ErrTimeout,
// syscall.ECONNREFUSED, ErrCancelled...). A nil target or handle panics
// with a *ValueError.
func ExceptIs(target error, handle func(eg *ExceptionGroup) error) ExceptClause {
	if target == nil || handle == nil {
		panic(valueErrorf("ExceptIs: nil target or handler"))
	}
	return ExceptClause{match: func(err error) bool { return errors.Is(err, target) }, handle: handle}
}

// ExceptStar is a try statement's except* clauses applied to err, the
// error of a TaskGroup, say:
//
//	err = asyncio.ExceptStar(asyncio.TaskGroup(t, body),
//		asyncio.Except[*MyError](func(eg *asyncio.ExceptionGroup) error {
//			log.Print("my errors:", eg.Errs)
//			return nil
//		}),
//		asyncio.ExceptIs(asyncio.ErrTimeout, func(eg *asyncio.ExceptionGroup) error {
//			return nil
//		}),
//	)
//
// As Python runs them (the interpreter's _PyExc_PrepReraiseStar): the
// clauses are tried in order, each with the leaves no earlier clause took
// (Split keeps the nesting and messages); a clause whose group is empty
// does not run. What no clause took is raised again, as err's own group,
// and so is the group a handler returns unchanged (a bare raise). With
// what the handlers raise: ExceptStar returns nil if nothing is left; the
// rest alone if no handler raised; the one error if one handler raised
// and nothing is left; else an ExceptionGroup with message "" holding
// the handlers' errors and then the rest. An err that is not an
// *ExceptionGroup is matched as a group of one, as Python wraps a naked
// exception: if no clause takes it, it comes back unchanged; the clause
// that takes it gets the wrapping group, and what it raises is returned
// as it is (that group itself for a bare raise).
//
// A clause not made by Except or ExceptIs (the zero ExceptClause) panics
// with a *ValueError naming its index, whether or not err is nil.
func ExceptStar(err error, clauses ...ExceptClause) error {
	for i, c := range clauses {
		if c.match == nil || c.handle == nil {
			panic(valueErrorf("ExceptStar: clause %d is the zero ExceptClause (make it with Except or ExceptIs)", i))
		}
	}
	if err == nil {
		return nil
	}
	eg, isGroup := err.(*ExceptionGroup)
	if !isGroup {
		eg = &ExceptionGroup{Errs: []error{err}}
	}
	// owner is the index of the clause that takes leaf: the first that
	// matches it.
	owner := func(leaf error) int {
		for i, c := range clauses {
			if c.match(leaf) {
				return i
			}
		}
		return -1
	}
	reraise := make([]bool, len(clauses))
	var raised []error
	for i, c := range clauses {
		matched := eg.Subgroup(func(leaf error) bool { return owner(leaf) == i })
		if matched == nil {
			continue
		}
		herr := c.handle(matched)
		if !isGroup {
			// The wrapped naked error: this is the only clause that runs,
			// and what it raises is the outcome.
			if herr == error(matched) {
				return matched
			}
			return herr
		}
		switch {
		case herr == nil:
		case herr == error(matched):
			reraise[i] = true
		default:
			raised = append(raised, herr)
		}
	}
	if !isGroup {
		return err // no clause took it
	}
	rest := eg.Subgroup(func(leaf error) bool {
		i := owner(leaf)
		return i < 0 || reraise[i]
	})
	var restErr error
	if rest != nil {
		restErr = rest
	}
	if len(raised) == 0 {
		return restErr
	}
	if restErr != nil {
		raised = append(raised, restErr)
	}
	if len(raised) == 1 {
		return raised[0]
	}
	return &ExceptionGroup{Errs: raised}
}

// Format implements fmt.Formatter: %v and %s are Error(); %+v is the
// group and its members, one per line and indented by depth, as
// Python's traceback lists them ("msg (2 sub-exceptions)", then "1:
// ..." for each member).
func (e *ExceptionGroup) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('+'):
		e.writeTree(f, "")
	case verb == 'q':
		fmt.Fprintf(f, "%q", e.Error())
	default:
		io.WriteString(f, e.Error())
	}
}

func (e *ExceptionGroup) writeTree(w io.Writer, indent string) {
	io.WriteString(w, e.Error())
	for i, err := range e.Errs {
		fmt.Fprintf(w, "\n%s  %d: ", indent, i+1)
		if g, ok := err.(*ExceptionGroup); ok {
			g.writeTree(w, indent+"  ")
		} else {
			io.WriteString(w, strings.ReplaceAll(err.Error(), "\n", "\n"+indent+"     "))
		}
	}
}
