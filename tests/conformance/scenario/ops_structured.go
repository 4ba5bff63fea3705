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

// Structured-concurrency ops: taskgroup, timeout, wait_for, shield, gather,
// wait, as_completed (DSL.md section 3).
func init() {
	groupLeaves = func(err error) ([]error, bool) {
		var eg *asyncio.ExceptionGroup
		if errors.As(err, &eg) {
			return eg.Errs, true
		}
		return nil, false
	}
	isTimeout = func(err error) bool { return errors.Is(err, asyncio.ErrTimeout) }
	newTimeoutError = func() error { return &asyncio.TimeoutError{} }
	isValue = func(err error) bool { return errors.Is(err, asyncio.ErrValue) }
	newValueError = func() error { return &asyncio.ValueError{} }

	register("taskgroup", opTaskGroup)
	register("timeout", opTimeout)
	register("timeout_at", opTimeoutAt)
	register("reschedule", opReschedule)
	register("wait_for", opWaitFor)
	register("wait_for_task", opWaitForTask)
	register("shield", opShield)
	register("gather", opGather)
	register("wait", opWait)
	register("as_completed", opAsCompleted)
}

// taskgroup BODY [GROUP]: async with asyncio.TaskGroup() as tg: BODY.
func opTaskGroup(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	g := &groupRef{}
	if len(a) > 1 {
		r.groups[str(a[1])] = g
	}
	body := bodyOf(a[0])
	var sig *ret
	err := asyncio.TaskGroup(f.t, func(tg *asyncio.Group) error {
		g.spawn = func(name string, fn func(*asyncio.T) (any, error)) (asyncio.AwaitableOf[any], error) {
			return asyncio.Spawn(tg, fn, asyncio.WithName(name))
		}
		f.groups = append(f.groups, g)
		defer func() { f.groups = f.groups[:len(f.groups)-1] }()
		var err error
		sig, err = r.execBlock(f, body)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sig, nil
}

// nullableMillis is MS|null; null is asyncio.Never (None).
func nullableMillis(raw json.RawMessage) time.Duration {
	if isNull(raw) {
		return asyncio.Never
	}
	return millis(raw)
}

func (r *run) timeoutScope(f *frame, enter func(body func(*asyncio.TimeoutScope) error) error, body []json.RawMessage) (*ret, error) {
	var sig *ret
	err := enter(func(s *asyncio.TimeoutScope) error {
		f.timeouts = append(f.timeouts, &timeoutRef{reschedule: s.Reschedule})
		defer func() { f.timeouts = f.timeouts[:len(f.timeouts)-1] }()
		var err error
		sig, err = r.execBlock(f, body)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sig, nil
}

// timeout MS|null BODY: async with asyncio.timeout(MS/1000 or None).
func opTimeout(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	d := nullableMillis(a[0])
	return r.timeoutScope(f, func(body func(*asyncio.TimeoutScope) error) error {
		return asyncio.Timeout(f.t, d, body)
	}, bodyOf(a[1]))
}

// timeout_at T|null BODY: async with asyncio.timeout_at(T/1000 or None).
func opTimeoutAt(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	when := nullableMillis(a[0])
	return r.timeoutScope(f, func(body func(*asyncio.TimeoutScope) error) error {
		return asyncio.TimeoutAt(f.t, when, body)
	}, bodyOf(a[1]))
}

// reschedule MS|null: cm.reschedule(loop.time() + MS/1000) on the innermost
// timeout of this task body (null: None).
func opReschedule(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	when := asyncio.Never
	if !isNull(a[0]) {
		when = r.loop.Time() + millis(a[0])
	}
	return nil, f.timeouts[len(f.timeouts)-1].reschedule(when)
}

// wait_for MS BODY: await asyncio.wait_for(body(), MS/1000). The body's
// lines are attributed to the waiting task, in a fresh frame.
func opWaitFor(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	d, body := millis(a[0]), bodyOf(a[1])
	_, err := r.waiting(f, "wait_for", func() (any, error) {
		return asyncio.WaitForFunc(f.t, d, func(t *asyncio.T) (any, error) {
			inner := &frame{who: f.who, t: t}
			sig, err := r.execBlock(inner, body)
			if err != nil || sig == nil {
				return nil, err
			}
			return sig.value, nil
		})
	})
	return nil, err
}

// wait_for_task MS NAME: await asyncio.wait_for(x, MS/1000).
func opWaitForTask(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	d, name := millis(a[0]), str(a[1])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "wait_for "+name)
	}
	_, err := r.waiting(f, "wait_for "+name, func() (any, error) {
		return asyncio.WaitFor(f.t, d, x)
	})
	return nil, err
}

// shield NAME: await asyncio.shield(x).
func opShield(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "shield "+name)
	}
	_, err := r.waiting(f, "shield "+name, func() (any, error) {
		return asyncio.Shield(x).Await(f.t)
	})
	return nil, err
}

// many looks up a name list; ok is false (and `undefined` logged) if one
// of the names does not exist yet.
func (r *run) many(f *frame, text string, names []string) ([]asyncio.AwaitableOf[any], bool) {
	xs := make([]asyncio.AwaitableOf[any], len(names))
	for i, n := range names {
		x, ok := r.lookup(n)
		if !ok {
			r.undefined(f, text)
			return nil, false
		}
		xs[i] = x
	}
	return xs, true
}

func untyped(xs []asyncio.AwaitableOf[any]) []asyncio.Awaitable {
	out := make([]asyncio.Awaitable, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// gather [NAMES] RET_EXC: await asyncio.gather(*xs, return_exceptions=RET_EXC).
func opGather(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	names := strList(a[0])
	var retExc bool
	_ = json.Unmarshal(a[1], &retExc)
	text := "gather " + strings.Join(names, ",")
	xs, ok := r.many(f, text, names)
	if !ok {
		return nil, nil
	}
	_, err := r.waiting(f, text, func() (any, error) {
		if !retExc {
			vs, err := asyncio.Gather(f.t, xs...).Await(f.t)
			if err != nil {
				return nil, err
			}
			return vs, nil
		}
		outs, err := asyncio.GatherOutcomes(f.t, xs...).Await(f.t)
		if err != nil {
			return nil, err
		}
		items := make([]any, len(outs))
		for i, o := range outs {
			if o.Err != nil {
				items[i] = o.Err
			} else {
				items[i] = o.Value
			}
		}
		return items, nil
	})
	return nil, err
}

var returnWhen = map[string]asyncio.ReturnWhen{
	"FIRST_COMPLETED": asyncio.FirstCompleted,
	"FIRST_EXCEPTION": asyncio.FirstException,
	"ALL_COMPLETED":   asyncio.AllCompleted,
}

// wait [NAMES] MS|null WHEN: asyncio.wait(xs, timeout=..., return_when=WHEN).
func opWait(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	names := strList(a[0])
	text := "wait " + strings.Join(names, ",")
	xs, ok := r.many(f, text, names)
	if !ok {
		return nil, nil
	}
	done, pending, err := asyncio.Wait(f.t, untyped(xs), nullableMillis(a[1]), returnWhen[str(a[2])])
	if err != nil {
		r.emit(f.who, text+" -> "+outcomeExc(err))
		return nil, err
	}
	d, p := r.sortedNames(done), r.sortedNames(pending)
	r.emit(f.who, fmt.Sprintf("%s -> done[%s] pending[%s]", text, strings.Join(d, ","), strings.Join(p, ",")))
	return nil, nil
}

func (r *run) sortedNames(xs []asyncio.Awaitable) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = r.nameOf(x)
	}
	sort.Strings(out)
	return out
}

// as_completed [NAMES] MS|null: for i, c in enumerate(as_completed(xs,
// timeout), 1): await c — stopping at the first exception. The library's
// 3.13 form yields the completed awaitable; awaiting it (done: no suspension)
// gives c's outcome.
func opAsCompleted(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	names := strList(a[0])
	text := "as_completed " + strings.Join(names, ",")
	xs, ok := r.many(f, text, names)
	if !ok {
		return nil, nil
	}
	i := 0
	for aw, err := range asyncio.AsCompleted(f.t, untyped(xs), nullableMillis(a[1])) {
		i++
		_, werr := r.waiting(f, fmt.Sprintf("as_completed #%d", i), func() (any, error) {
			if err != nil {
				return nil, err
			}
			return aw.(asyncio.AwaitableOf[any]).Await(f.t)
		})
		if werr != nil {
			return nil, werr
		}
	}
	return nil, nil
}
