package asyncio

import "context"

// The rest of contextvars.ContextVar: a variable without a default, whose
// get() raises LookupError until it is set, and get(default), a default
// for one call.

// NewContextVarNoDefault returns a context variable with no default
// (contextvars.ContextVar(name)): Lookup reports false until a value is
// set in the task's context; Get returns V's zero value then.
func NewContextVarNoDefault[V any](name string) *ContextVar[V] {
	return &ContextVar[V]{name: name, key: &contextVarKey{name: name}, noDefault: true}
}

// Lookup is var.get() without an argument: the value set in task t's
// context and true, else the variable's default and true, else (for a
// variable made by NewContextVarNoDefault) V's zero value and false, where
// Python raises LookupError. A nil t panics with a *ValueError.
func (v *ContextVar[V]) Lookup(t *T) (V, bool) {
	if t == nil {
		panicNilT("ContextVar.Lookup")
	}
	return v.LookupValue(t.baseContext())
}

// LookupValue is Lookup in ctx (a context derived from a task's); it is
// safe from any goroutine.
func (v *ContextVar[V]) LookupValue(ctx context.Context) (V, bool) {
	if b, ok := ctx.Value(v.key).(contextVarBox[V]); ok && b.set {
		return b.v, true
	}
	return v.def, !v.noDefault
}

// GetDefault is var.get(default): the value set in task t's context, else
// def (the variable's own default is not used). A nil t panics with a
// *ValueError.
func (v *ContextVar[V]) GetDefault(t *T, def V) V {
	if t == nil {
		panicNilT("ContextVar.GetDefault")
	}
	if b, ok := t.baseContext().Value(v.key).(contextVarBox[V]); ok && b.set {
		return b.v
	}
	return def
}

// IsSet reports whether the variable has a value in task t's context: set
// there, or inherited from the task's creator, and not Reset back to
// unset (`var in contextvars.copy_context()`). A nil t panics with a
// *ValueError.
func (v *ContextVar[V]) IsSet(t *T) bool {
	if t == nil {
		panicNilT("ContextVar.IsSet")
	}
	b, ok := t.baseContext().Value(v.key).(contextVarBox[V])
	return ok && b.set
}
