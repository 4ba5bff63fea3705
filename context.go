package asyncio

// A context per task: the Go analogue of asyncio's contextvars (CTX-2).
//
// Every task has a context.Context, its *base*, and hands out Context(): a
// context derived from the base that is cancelled when the task is done.
// A task created while another task runs starts with its creator's base
// (create_task copies the current context); WithContext sets another one
// at creation and also binds it: when it is done, the task is cancelled.
// That end is the bound task's cancellation, so the tasks it creates get
// its values without its cancellation (context.WithoutCancel): as Shield
// protects an inner task from the outer one's cancellation, RunContext's
// ctx being cancelled does not cancel the context or the Go calls of a
// task main shielded or does not await (structured code, a TaskGroup,
// cancels its children, whose contexts then end with them).
// SetContext and ContextVar.Set replace a task's base for what it does
// next; children created earlier keep the base they started with
// (copy-on-create), and nothing a child sets reaches its creator.
//
// Cost: a task that nobody asks for a context costs one nil pointer. A
// child shares its creator's node (no allocation) until it changes its own
// context or asks for Context(); only a creator that changes its base after
// handing it out allocates a new node for itself.

import (
	"context"
	"fmt"
)

// taskCtx is a task's context state. A node is owned by one task; the
// tasks it created before its base changed share it read-only (they only
// read base) until they make their own.
type taskCtx struct {
	// base carries the values, and the cancellation of a context given by
	// WithContext, SetContext or inherited, without the task's own end.
	base  context.Context
	owner *T
	// shared: a child holds this node, so the owner must not change base
	// in place (it moves to a copy instead).
	shared bool
	// derived is what Context() returns for base, made on first use.
	derived context.Context
	// cancels cancels every derived context handed out, when the task is
	// done (or its loop closes with the task pending).
	cancels []context.CancelCauseFunc
	// bound is the context of WithContext, whose end cancels the task;
	// stopWatch unregisters that watch; fired records that it cancelled
	// the task (RunWith then reports the cause).
	bound     context.Context
	stopWatch func() bool
	fired     bool
	// boundBase: base is bound or derived from it (ContextVar.Set), so it
	// carries the bound context's cancellation, which is the owner's
	// cancellation and not its children's: they start with children, the
	// same values without it (see inheritedContext). SetContext clears it.
	boundBase bool
	children  *taskCtx
	// vars is the VarContext the task runs in (varcontext.go): each
	// change of base is written through to it, and a change another task
	// wrote to it (varsGen behind vars.gen) is read back before base is
	// used (T.baseContext).
	vars    *VarContext
	varsGen uint64
}

// inheritedContext is the context node a task created now starts with: its
// creator's (the running task's), shared, or nil (context.Background) when
// no task runs or the creator has none. A creator bound to a context
// (WithContext, RunContext) hands out its values without that context's
// cancellation: the bound context's end is the creator's cancellation, and
// as in asyncio a task's cancellation does not reach the tasks it created
// (a shielded task, one it does not await) except through structured code
// (TaskGroup, Gather), which cancels them, and ends their contexts then.
func (l *Loop) inheritedContext() *taskCtx {
	p := l.current
	if p == nil || p.ctx == nil {
		return nil
	}
	p.baseContext() // up to date with its VarContext
	c := p.ctx
	if c.owner != p {
		return c
	}
	if c.boundBase {
		if c.children == nil {
			c.children = &taskCtx{base: context.WithoutCancel(c.base), shared: true}
		}
		return c.children
	}
	c.shared = true
	return c
}

// baseContext is t's base: what its children and Go calls start from.
func (t *T) baseContext() context.Context {
	c := t.ctx
	if c == nil {
		return context.Background()
	}
	if c.vars != nil && c.owner == t && c.varsGen != c.vars.gen {
		// Another task running in the same VarContext changed it since t
		// last looked (Python's tasks each enter the one context object).
		t.setBase(c.vars.base)
		return t.ctx.base
	}
	return c.base
}

// ownContext returns t's own node, making it (from the inherited one) if
// needed.
func (t *T) ownContext() *taskCtx {
	if c := t.ctx; c != nil && c.owner == t {
		return c
	}
	t.ctx = &taskCtx{base: t.baseContext(), owner: t}
	return t.ctx
}

// setBase replaces t's base. A node that children share is left to them,
// unchanged; t moves to a copy, keeping what it must cancel at its end.
func (t *T) setBase(base context.Context) {
	c := t.ownContext()
	if c.shared {
		cp := *c
		cp.shared = false
		c = &cp
		t.ctx = c
	}
	c.base = base
	c.derived = nil
	c.children = nil
	if c.vars != nil {
		c.vars.base = base // varcontext.go
		c.vars.gen++
		c.varsGen = c.vars.gen
	}
}

// Context returns the task's context.Context: it carries the values of the
// task's base (WithContext, SetContext, ContextVar.Set, or the creator's at
// creation) and is done when the task is done — or when the base itself is
// done (for a task created by a task bound with WithContext or RunContext:
// not when that bound context is done, see the top of context.go).
// context.Cause then wraps ErrTaskDone and the task's outcome (its
// error, or a *CancelledError), or ErrLoopClosed when the loop closed with
// the task pending. The first call allocates it; a task that never asks
// pays nothing. Pass it to Go code the task starts; for a blocking call use
// Go, whose ctx also ends when the task is cancelled.
func (t *T) Context() context.Context {
	t.baseContext() // up to date with its VarContext
	c := t.ownContext()
	if c.derived == nil {
		d, cancel := context.WithCancelCause(c.base)
		c.derived = d
		if cause := t.contextEndCause(); cause != nil {
			cancel(cause) // asked after the end
		} else {
			c.cancels = append(c.cancels, cancel)
		}
	}
	return c.derived
}

// SetContext replaces the task's context for what it does next: Context
// derives from ctx from now on, tasks it creates from now on start with
// ctx, and ContextVar reads see ctx's values. Tasks created earlier keep
// what they started with. Unlike WithContext it does not bind ctx: the
// task is not cancelled when ctx is done (its Context and Go calls are).
// A nil ctx panics with a *ValueError.
func (t *T) SetContext(ctx context.Context) {
	if ctx == nil {
		panic(&ValueError{Msg: "SetContext: nil context"})
	}
	t.setBase(ctx)
	t.ctx.boundBase = false // not bound: children keep ctx's cancellation
}

// contextEndCause is the cause a derived context of t is cancelled with,
// nil while t is pending on an open loop.
func (t *T) contextEndCause() error {
	f := t.fut
	switch f.state {
	case stateFinished:
		if f.err != nil {
			return fmt.Errorf("%w: %w", ErrTaskDone, f.err)
		}
		return ErrTaskDone
	case stateCancelled:
		// Read without consuming (FUT-8): the context only reports.
		err := f.err
		if !f.errOnce {
			err = &CancelledError{Msg: f.cancelMessage()}
		}
		return fmt.Errorf("%w: %w", ErrTaskDone, err)
	}
	if f.loop.closed {
		return errLoopClosed()
	}
	return nil
}

// endContext cancels the contexts t handed out and stops watching a bound
// context. It is called when t is done and, for a task still pending, when
// its loop closes.
func (t *T) endContext() {
	c := t.ctx
	if c == nil || c.owner != t {
		return
	}
	if c.stopWatch != nil {
		c.stopWatch()
		c.stopWatch = nil
	}
	if len(c.cancels) == 0 {
		return
	}
	cause := t.contextEndCause()
	if cause == nil {
		cause = errLoopClosed()
	}
	for _, cancel := range c.cancels {
		cancel(cause)
	}
	c.cancels = nil
}

// watchBoundContext makes the task created with WithContext(ctx) be
// cancelled when ctx is done, with context.Cause(ctx)'s text as the
// message: at once if ctx is done already (the function then never runs,
// CANCEL-3), else from a context.AfterFunc through CallSoonThreadsafe.
func (t *T) watchBoundContext() {
	c := t.ctx
	if c == nil || c.owner != t || c.bound == nil || c.bound.Done() == nil {
		return
	}
	if c.bound.Err() != nil {
		t.cancelByContext()
		return
	}
	l := t.fut.loop
	c.stopWatch = context.AfterFunc(c.bound, func() {
		_, _ = l.CallSoonThreadsafe(t.cancelByContext)
	})
}

// cancelByContext cancels t because its bound context is done.
func (t *T) cancelByContext() {
	c := t.ctx
	if t.fut.done() {
		return
	}
	c.fired = true
	t.cancel(context.Cause(c.bound).Error())
}

// boundContextError is what RunWith returns for main's error err: when
// main ended cancelled because its WithContext context was done, the
// cancellation also matches that context's cause (errors.Is(err,
// context.Canceled), or the cause given to a CancelCauseFunc).
func (t *T) boundContextError(err error) error {
	c := t.ctx
	if c == nil || c.owner != t || !c.fired || !IsCancelled(err) {
		return err
	}
	cause := context.Cause(c.bound)
	if ce, ok := err.(*CancelledError); ok {
		return &CancelledError{Msg: ce.Msg, Cause: cause}
	}
	return fmt.Errorf("%w (%w)", err, cause)
}

// ContextVar is a typed variable of the running task's context, the Go
// form of contextvars.ContextVar. Its values live in the task's
// context.Context (so Go code handed t.Context(), or a Go call's ctx, reads
// them with Value). A task created by another starts with the values its
// creator had at that moment; later Sets in either are invisible to the
// other (CTX-2). Use it on the loop's goroutine; Value is safe anywhere.
type ContextVar[V any] struct {
	name string
	def  V
	key  *contextVarKey
	// noDefault: made by NewContextVarNoDefault (contextvar_lookup.go).
	noDefault bool
}

// contextVarKey is a ContextVar's context key: a pointer, so every
// variable has its own, and it cannot collide with other packages' keys.
type contextVarKey struct{ name string }

// contextVarBox is what a ContextVar stores in a context: boxed, so that a
// nil interface value is a value, and so that Reset back to "no value" can
// be stored (set false: the default again).
type contextVarBox[V any] struct {
	v   V
	set bool
}

// NewContextVar returns a context variable whose Get returns def until a
// value is set (contextvars.ContextVar(name, default=def)).
func NewContextVar[V any](name string, def V) *ContextVar[V] {
	return &ContextVar[V]{name: name, def: def, key: &contextVarKey{name: name}}
}

// Name returns the variable's name.
func (v *ContextVar[V]) Name() string { return v.name }

// String returns a repr like contextvars': <ContextVar name='x'>.
func (v *ContextVar[V]) String() string { return fmt.Sprintf("<ContextVar name=%s>", pyQuote(v.name)) }

// Get returns the variable's value in task t's context, or its default.
// A nil t panics with a *ValueError.
func (v *ContextVar[V]) Get(t *T) V {
	if t == nil {
		panicNilT("ContextVar.Get")
	}
	return v.Value(t.baseContext())
}

// Value returns the variable's value in ctx (any context derived from a
// task's: t.Context(), a Go call's ctx), or its default. It is safe from
// any goroutine. A nil ctx panics with a *ValueError.
func (v *ContextVar[V]) Value(ctx context.Context) V {
	if ctx == nil {
		panic(&ValueError{Msg: "ContextVar.Value: nil context"})
	}
	if b, ok := ctx.Value(v.key).(contextVarBox[V]); ok && b.set {
		return b.v
	}
	return v.def
}

// Set sets the variable in task t's context (what t reads next and the
// tasks it creates from now on see) and returns a token for Reset. As
// contextvars' set changes only the current context, t must be the
// running task: a nil t panics with a *ValueError, any other t that is
// not the running task with a *RuntimeError, before any change (a task
// starts with a copy of its creator's values: to give it some, Set them
// in the creator before creating it).
func (v *ContextVar[V]) Set(t *T, value V) *ContextVarToken[V] {
	t.checkRunning("ContextVar.Set")
	base := t.baseContext()
	tok := &ContextVarToken[V]{v: v, t: t, old: base.Value(v.key)}
	t.setBase(context.WithValue(base, v.key, contextVarBox[V]{v: value, set: true}))
	tok.vars = t.ctx.vars
	return tok
}

// Reset restores the value the variable had in t's context before the Set
// that returned tok (contextvars' reset). Errors, before any change, in
// contextvars' order: a *RuntimeError if tok was used already ("Token has
// already been used once"), whichever variable or context it belongs to,
// else a *ValueError if it belongs to another variable ("Token was created
// by a different ContextVar") or another task ("Token was created in a
// different Context"). A nil t panics with a *ValueError, a t that is not
// the running task with a *RuntimeError, as in Set.
func (v *ContextVar[V]) Reset(t *T, tok *ContextVarToken[V]) error {
	t.checkRunning("ContextVar.Reset")
	switch {
	case tok != nil && tok.used:
		return &RuntimeError{Msg: "Token has already been used once"}
	case tok == nil || tok.v != v:
		return &ValueError{Msg: "Token was created by a different ContextVar"}
	case !tok.sameContext(t):
		return &ValueError{Msg: "Token was created in a different Context"}
	}
	tok.used = true
	old, _ := tok.old.(contextVarBox[V]) // none before: the zero box, unset
	t.setBase(context.WithValue(t.baseContext(), v.key, old))
	return nil
}

// ContextVarToken is what ContextVar.Set returns, for Reset
// (contextvars.Token).
type ContextVarToken[V any] struct {
	v    *ContextVar[V]
	t    *T
	vars *VarContext // the VarContext t ran in at the Set, if any
	old  any         // the previous box in the context (nil: none)
	used bool
}

// sameContext reports whether task t runs in the context tok was made in:
// tok's own task, or another task running in the same VarContext (which
// may have been made from tok's task's context: a Runner's, T.VarContext).
func (tok *ContextVarToken[V]) sameContext(t *T) bool {
	if tok.t == t {
		return true
	}
	c := t.ctx
	if c == nil || c.owner != t || c.vars == nil {
		return false
	}
	return c.vars == tok.vars || c.vars.origin == tok.t
}

// Var returns the variable the token belongs to (Token.var).
func (tok *ContextVarToken[V]) Var() *ContextVar[V] { return tok.v }
