package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// validate checks a scenario against the DSL (DSL.md sections 1-3) before
// anything runs: every op known, with its arguments of the right shape,
// names well formed and defined once, primitives declared with the kind
// the op needs, callback bodies restricted to their ops, reraise only in a
// handler, return never in a finally, reschedule only inside a timeout of
// the same body. The interpreter trusts what passed (it indexes arguments
// and asserts primitive types), so a malformed scenario gets an error
// naming the mistake instead of a panic in the middle of a run.
func validate(sc *scenario) error {
	v := &validator{defined: map[string]bool{}, prims: map[string]string{}}
	for _, n := range sc.Events {
		v.declare(n, "event")
	}
	for _, n := range sc.Locks {
		v.declare(n, "lock")
	}
	for _, n := range sc.Semaphores.names {
		v.declare(n, "semaphore")
		if sc.Semaphores.values[n] < 0 {
			v.failf("semaphore %q: initial value %d < 0", n, sc.Semaphores.values[n])
		}
	}
	for _, n := range sc.Queues.names {
		v.declare(n, "queue")
		if sc.Queues.values[n] < 0 {
			v.failf("queue %q: maxsize %d < 0", n, sc.Queues.values[n])
		}
	}
	if sc.Main == nil {
		v.failf("no main body")
	}
	v.body("main", sc.Main, vctx{})
	return v.err
}

var (
	nameRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	strRE   = regexp.MustCompile(`^[A-Za-z0-9_.:-]*$`)
	msgRE   = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
	logRE   = regexp.MustCompile(`^[ -~]+$`)
	userErr = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)
)

const maxMillis = 100000000 // DSL.md section 1

// vctx is where a body is: in a callback, in a try handler (reraise), in
// a finally (no return), inside a timeout of this body (reschedule).
type vctx struct{ cb, handler, finally, timeout bool }

// callbackOps are the ops a callback body may hold (DSL.md section 3).
var callbackOps = map[string]bool{
	"log": true, "spawn": true, "spawn_in": true, "cancel": true, "status": true, "new_future": true,
	"set_result": true, "set_exception": true, "done_callback": true, "call_soon": true,
	"call_later": true, "call_at": true, "cancel_handle": true, "event_set": true, "event_clear": true,
	"lock_release": true, "sem_release": true, "put_nowait": true, "get_nowait": true,
	"task_done": true, "all_tasks": true, "current_task": true, "try": true, "raise": true, "reraise": true,
}

var builtinErrs = map[string]bool{"timeout": true, "cancelled": true, "runtime": true, "value": true, "invalid_state": true}

var handlerKinds = map[string]bool{"cancelled": true, "timeout": true, "group": true, "runtime": true,
	"value": true, "invalid_state": true, "any": true}

type validator struct {
	defined map[string]bool
	prims   map[string]string // primitive name -> event|lock|semaphore|queue
	path    []string          // where we are, for the message
	err     error
}

func (v *validator) failf(format string, args ...any) {
	if v.err == nil {
		where := ""
		if len(v.path) > 0 {
			where = " (in " + strings.Join(v.path, " > ") + ")"
		}
		v.err = fmt.Errorf("invalid scenario: "+format+where, args...)
	}
}

func (v *validator) declare(name, kind string) {
	v.define(name)
	v.prims[name] = kind
}

// define checks a name that an op or a declaration creates.
func (v *validator) define(name string) {
	switch {
	case !nameRE.MatchString(name):
		v.failf("bad name %q", name)
	case name == "main" || name == "cb" || name == "loop":
		v.failf("name %q is reserved", name)
	case v.defined[name]:
		v.failf("name %q defined twice", name)
	}
	v.defined[name] = true
}

// ref checks a name an op refers to; main too if allowMain.
func (v *validator) ref(raw json.RawMessage, allowMain bool) string {
	name, ok := jsonString(raw)
	if !ok || !nameRE.MatchString(name) {
		v.failf("bad name %s", raw)
	} else if name == "main" && !allowMain {
		v.failf("main cannot be waited for here")
	} else if name == "cb" || name == "loop" {
		v.failf("name %q is reserved", name)
	}
	return name
}

func (v *validator) prim(raw json.RawMessage, kind string) {
	name, _ := jsonString(raw)
	if v.prims[name] != kind {
		v.failf("%s %s is not declared", kind, raw)
	}
}

func (v *validator) body(what string, raw []json.RawMessage, c vctx) {
	v.path = append(v.path, what)
	defer func() { v.path = v.path[:len(v.path)-1] }()
	for i, op := range raw {
		if v.err != nil {
			return
		}
		v.op(i, op, c)
	}
}

// bodyArg checks that raw is a JSON array (a body) and validates it.
func (v *validator) bodyArg(what string, raw json.RawMessage, c vctx) {
	var b []json.RawMessage
	if !isArray(raw) || json.Unmarshal(raw, &b) != nil {
		v.failf("%s: a body must be a list of ops, not %s", what, raw)
		return
	}
	v.body(what, b, c)
}

func (v *validator) op(i int, raw json.RawMessage, c vctx) {
	var a []json.RawMessage
	if !isArray(raw) || json.Unmarshal(raw, &a) != nil || len(a) == 0 {
		v.failf("op %d: not a list: %s", i, raw)
		return
	}
	name, ok := jsonString(a[0])
	if !ok {
		v.failf("op %d: no op name: %s", i, raw)
		return
	}
	args := a[1:]
	if _, known := ops[name]; !known {
		v.failf("op %q not supported", name)
		return
	}
	if c.cb && !callbackOps[name] {
		v.failf("op %q is not allowed in a callback body", name)
		return
	}
	nargs := func(ns ...int) bool {
		for _, n := range ns {
			if len(args) == n {
				return true
			}
		}
		v.failf("op %q takes %v arguments, not %d: %s", name, ns, len(args), raw)
		return false
	}
	task := vctx{} // a new task body (spawn)
	cb := vctx{cb: true}
	switch name {
	case "log":
		if nargs(1) {
			if s, ok := jsonString(args[0]); !ok || !logRE.MatchString(s) {
				v.failf("log: message %s is not printable ASCII", args[0])
			}
		}
	case "sleep":
		if nargs(1) {
			v.millis(args[0], false, false)
		}
	case "return":
		if c.finally {
			v.failf("return inside a finally body")
		} else if nargs(1) {
			v.value(args[0])
		}
	case "raise":
		if nargs(1) {
			v.errName(args[0], true)
		}
	case "reraise":
		if !c.handler {
			v.failf("reraise outside a handler")
		}
		nargs(0)
	case "try":
		if !nargs(3) {
			return
		}
		v.bodyArg("try", args[0], c)
		var hs []json.RawMessage
		if !isArray(args[1]) || json.Unmarshal(args[1], &hs) != nil {
			v.failf("try: handlers must be a list: %s", args[1])
			return
		}
		for _, h := range hs {
			var kb []json.RawMessage
			if !isArray(h) || json.Unmarshal(h, &kb) != nil || len(kb) != 2 {
				v.failf("try: a handler is [KIND, BODY], not %s", h)
				return
			}
			kind, ok := jsonString(kb[0])
			if !ok || !handlerKinds[kind] && !userErr.MatchString(kind) {
				v.failf("try: bad handler kind %s", kb[0])
				return
			}
			hc := c
			hc.handler = true
			v.bodyArg("except "+kind, kb[1], hc)
		}
		if !isNull(args[2]) {
			fc := c
			fc.finally = true
			v.bodyArg("finally", args[2], fc)
		}
	case "spawn":
		if nargs(2) {
			v.define(v.ref(args[0], false))
			v.bodyArg("spawn", args[1], task)
		}
	case "spawn_in":
		if nargs(3) {
			v.ref(args[0], false)
			v.define(v.ref(args[1], false))
			v.bodyArg("spawn_in", args[2], task)
		}
	case "await", "shield":
		if nargs(1) {
			v.ref(args[0], false)
		}
	case "cancel":
		if nargs(1, 2) {
			v.ref(args[0], true)
			if len(args) == 2 {
				if s, ok := jsonString(args[1]); !ok || !msgRE.MatchString(s) {
					v.failf("cancel: bad message %s", args[1])
				}
			}
		}
	case "cancelling", "uncancel", "current_task", "all_tasks":
		nargs(0)
	case "status":
		if nargs(1) {
			v.ref(args[0], true)
		}
	case "new_future":
		if nargs(1) {
			v.define(v.ref(args[0], false))
		}
	case "set_result":
		if nargs(2) {
			v.ref(args[0], true)
			v.value(args[1])
		}
	case "set_exception":
		if nargs(2) {
			v.ref(args[0], true)
			v.errName(args[1], false)
		}
	case "done_callback":
		if nargs(2) {
			v.ref(args[0], true)
			v.bodyArg("done_callback", args[1], cb)
		}
	case "call_soon":
		if nargs(2) {
			v.define(v.ref(args[0], false))
			v.bodyArg("call_soon", args[1], cb)
		}
	case "call_later", "call_at":
		if nargs(3) {
			v.define(v.ref(args[0], false))
			v.millis(args[1], false, false)
			v.bodyArg(name, args[2], cb)
		}
	case "cancel_handle":
		if nargs(1) {
			v.ref(args[0], false)
		}
	case "taskgroup":
		if nargs(1, 2) {
			if len(args) == 2 {
				v.define(v.ref(args[1], false))
			}
			v.bodyArg("taskgroup", args[0], c)
		}
	case "timeout", "timeout_at":
		if nargs(2) {
			v.millis(args[0], true, false)
			tc := c
			tc.timeout = true
			v.bodyArg(name, args[1], tc)
		}
	case "reschedule":
		if !c.timeout {
			v.failf("reschedule outside a timeout of the same body")
		} else if nargs(1) {
			v.millis(args[0], true, false)
		}
	case "wait_for":
		if nargs(2) {
			v.millis(args[0], false, true)
			// The body runs in a new coroutine: no enclosing handler or
			// timeout of its own, but a return is its result.
			v.bodyArg("wait_for", args[1], vctx{})
		}
	case "wait_for_task":
		if nargs(2) {
			v.millis(args[0], false, true)
			v.ref(args[1], false)
		}
	case "gather":
		if nargs(2) {
			v.nameList(args[0])
			if s := strings.TrimSpace(string(args[1])); s != "true" && s != "false" {
				v.failf("gather: RET_EXC must be true or false, not %s", args[1])
			}
		}
	case "wait":
		if nargs(3) {
			v.nameList(args[0])
			v.millis(args[1], true, false)
			if w, _ := jsonString(args[2]); !knownWhen(w) {
				v.failf("wait: bad WHEN %s", args[2])
			}
		}
	case "as_completed":
		if nargs(2) {
			v.nameList(args[0])
			v.millis(args[1], true, false)
		}
	case "event_set", "event_clear", "event_wait":
		if nargs(1) {
			v.prim(args[0], "event")
		}
	case "lock_acquire", "lock_release":
		if nargs(1) {
			v.prim(args[0], "lock")
		}
	case "sem_acquire", "sem_release":
		if nargs(1) {
			v.prim(args[0], "semaphore")
		}
	case "put", "put_nowait":
		if nargs(2) {
			v.prim(args[0], "queue")
			v.value(args[1])
		}
	case "get", "join", "get_nowait", "task_done":
		if nargs(1) {
			v.prim(args[0], "queue")
		}
	default:
		v.failf("op %q has no validation rule", name)
	}
}

// millis checks a time in milliseconds: an integer 0..maxMillis (> 0 if
// positive), or null if nullable.
func (v *validator) millis(raw json.RawMessage, nullable, positive bool) {
	if nullable && isNull(raw) {
		return
	}
	var n int64
	if !isNumber(raw) || json.Unmarshal(raw, &n) != nil || n < 0 || n > maxMillis || positive && n == 0 {
		v.failf("bad time %s (integer milliseconds, 0..%d%s)", raw, maxMillis, map[bool]string{true: ", > 0"}[positive])
	}
}

// value checks a DSL value: an integer |v| <= 2^53, null, a bool or a
// string of [A-Za-z0-9_.:-].
func (v *validator) value(raw json.RawMessage) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null" || s == "true" || s == "false":
	case isNumber(raw):
		var n int64
		if json.Unmarshal(raw, &n) != nil || n > 1<<53 || n < -(1<<53) {
			v.failf("bad value %s (an integer |v| <= 2^53)", raw)
		}
	default:
		if str, ok := jsonString(raw); !ok || !strRE.MatchString(str) {
			v.failf("bad value %s", raw)
		}
	}
}

// errName checks ERR: a user error (upper-case first letter) or a built-in
// one; cancelled only if allowed (raise, not set_exception).
func (v *validator) errName(raw json.RawMessage, cancelOK bool) {
	s, ok := jsonString(raw)
	switch {
	case !ok:
		v.failf("bad error %s", raw)
	case s == "cancelled" && !cancelOK:
		v.failf("set_exception with cancelled")
	case !builtinErrs[s] && !userErr.MatchString(s):
		v.failf("bad error name %q", s)
	}
}

// nameList checks a non-empty list of awaitable names without duplicates.
func (v *validator) nameList(raw json.RawMessage) {
	var l []json.RawMessage
	if !isArray(raw) || json.Unmarshal(raw, &l) != nil || len(l) == 0 {
		v.failf("bad name list %s", raw)
		return
	}
	seen := map[string]bool{}
	for _, n := range l {
		name := v.ref(n, false)
		if seen[name] {
			v.failf("name %q twice in a list", name)
		}
		seen[name] = true
	}
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isArray(raw json.RawMessage) bool { return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) }

func isNumber(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9')
}

func knownWhen(w string) bool {
	_, ok := returnWhen[w]
	return ok
}
