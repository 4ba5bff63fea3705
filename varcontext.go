package asyncio

import "context"

// VarContext is contextvars.Context: a set of context variable values
// that a task runs in and writes to. A task's ContextVar values normally
// live in its own context (copied from its creator's at creation, CTX-2);
// a task created WithVarContext(c) runs in c instead, so what it sets is
// in c afterwards, for whoever reads c or runs the next task in it
// (create_task(coro, context=ctx)). Tasks running in the same VarContext
// share it as Python's do (each task step enters the one context object):
// what one sets, the others read from then on. Use it on the loop's
// goroutine.
type VarContext struct {
	base context.Context
	gen  uint64 // counts the changes written to base
	// origin is the task whose own context this was made from (a
	// Runner's first main, T.VarContext): its tokens belong here too.
	origin *T
}

// CopyContext returns a new VarContext holding the values of task t's
// context now (contextvars.copy_context()). A nil t panics with a
// *ValueError.
func CopyContext(t *T) *VarContext {
	if t == nil {
		panicNilT("CopyContext")
	}
	return &VarContext{base: t.baseContext()}
}

// NewVarContext returns a VarContext holding ctx's values (an empty
// contextvars.Context for context.Background()). A nil ctx panics with a
// *ValueError.
func NewVarContext(ctx context.Context) *VarContext {
	if ctx == nil {
		panic(&ValueError{Msg: "NewVarContext: nil context"})
	}
	return &VarContext{base: ctx}
}

// Context returns c's values as a context.Context: read a variable in c
// with v.LookupValue(c.Context()) (ctx.get(var)) or v.Value(c.Context()).
func (c *VarContext) Context() context.Context { return c.base }

// WithVarContext runs the task in c (create_task(coro, context=c),
// TaskGroup.create_task(..., context=c)): it starts with c's values, and
// its Sets and Resets are written to c. Tasks it creates start with a copy,
// as in Python. Unlike WithContext it does not bind a context.Context to
// the task's cancellation. A nil c, or the zero VarContext (not made by
// NewVarContext or CopyContext), panics with a *ValueError.
func WithVarContext(c *VarContext) TaskOption {
	if c == nil || c.base == nil {
		panic(&ValueError{Msg: "WithVarContext: nil or zero VarContext (make it with NewVarContext or CopyContext)"})
	}
	return func(t *T) { t.ctx = &taskCtx{base: c.base, owner: t, vars: c, varsGen: c.gen} }
}

// VarContext returns the VarContext task t runs in (Task.get_context()):
// the one given WithVarContext, else one made now that shares t's values
// from here on (t's later Sets are written to it). Each call returns the
// same VarContext. A nil t panics with a *ValueError.
func (t *T) VarContext() *VarContext {
	if t == nil {
		panicNilT("T.VarContext")
	}
	c := t.ownContext()
	if c.vars == nil {
		c.vars = &VarContext{base: c.base, origin: t}
		c.varsGen = 0
	}
	return c.vars
}
