package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-asyncio/asyncio"
)

// Core ops: control, tasks, futures and callbacks (DSL.md section 3).
func init() {
	register("log", opLog)
	register("sleep", opSleep)
	register("return", opReturn)
	register("raise", opRaise)
	register("reraise", opReraise)
	register("try", opTry)
	register("spawn", opSpawn)
	register("spawn_in", opSpawnIn)
	register("await", opAwait)
	register("cancel", opCancel)
	register("cancelling", opCancelling)
	register("uncancel", opUncancel)
	register("current_task", opCurrentTask)
	register("all_tasks", opAllTasks)
	register("status", opStatus)
	register("new_future", opNewFuture)
	register("set_result", opSetResult)
	register("set_exception", opSetException)
	register("done_callback", opDoneCallback)
	register("call_soon", opCallSoon)
	register("call_later", opCallLater)
	register("call_at", opCallAt)
	register("cancel_handle", opCancelHandle)
}

func opLog(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	r.emit(f.who, str(a[0]))
	return nil, nil
}

// sleep MS: asyncio.sleep; MS=0 is one bare yield (SLEEP-1).
func opSleep(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, asyncio.Sleep(f.t, millis(a[0]))
}

func opReturn(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return &ret{value: value(a[0])}, nil
}

func opRaise(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, makeErr(str(a[0]))
}

// reraise: bare `raise` of the innermost handled exception (same value).
func opReraise(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, f.handled[len(f.handled)-1]
}

// try BODY HANDLERS FINALLY: try/except/finally.
func opTry(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	body := bodyOf(a[0])
	var handlers [][]json.RawMessage
	_ = json.Unmarshal(a[1], &handlers)
	sig, err := r.execBlock(f, body)
	if err != nil && !errors.Is(err, errRunOver) {
		for _, h := range handlers {
			kind := str(h[0])
			if !handlerMatches(kind, err) {
				continue
			}
			r.emit(f.who, "caught "+excDesc(err))
			f.handled = append(f.handled, err)
			sig, err = r.execBlock(f, bodyOf(h[1]))
			f.handled = f.handled[:len(f.handled)-1]
			break
		}
	}
	if !isNull(a[2]) && !r.finished {
		// A finally body cannot return; an error from it replaces the
		// pending outcome, like Python's finally.
		if _, ferr := r.execBlock(f, bodyOf(a[2])); ferr != nil {
			return nil, ferr
		}
	}
	return sig, err
}

// spawn NAME BODY: create_task, or tg.create_task of the innermost group of
// this task body.
func opSpawn(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name, body := str(a[0]), bodyOf(a[1])
	if len(f.groups) > 0 {
		return nil, r.spawnInGroup(f.groups[len(f.groups)-1], name, body)
	}
	t := asyncio.CreateTask[any](r.owner(f), r.taskBody(name, body), asyncio.WithName(name))
	r.addAwaitable(name, t)
	r.tasks[name] = t
	return nil, nil
}

// spawn_in GROUP NAME BODY: GROUP.create_task on a named group.
func opSpawnIn(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	gname, name := str(a[0]), str(a[1])
	g, ok := r.groups[gname]
	if !ok {
		return r.undefined(f, fmt.Sprintf("spawn_in %s %s", gname, name))
	}
	return nil, r.spawnInGroup(g, name, bodyOf(a[2]))
}

func (r *run) lookup(name string) (asyncio.AwaitableOf[any], bool) {
	x, ok := r.aw[name]
	return x, ok
}

func opAwait(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "await "+name)
	}
	_, err := r.waiting(f, "await "+name, func() (any, error) { return x.Await(f.t) })
	return nil, err
}

// cancel NAME [MSG]: Task.cancel / Future.cancel.
func opCancel(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "cancel "+name)
	}
	var res bool
	if len(a) > 1 {
		res = x.Cancel(str(a[1]))
	} else {
		res = x.Cancel()
	}
	r.emit(f.who, fmt.Sprintf("cancel %s -> %s", name, fmtValue(res)))
	return nil, nil
}

func opCancelling(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	r.emit(f.who, fmt.Sprintf("cancelling -> %d", f.t.Cancelling()))
	return nil, nil
}

func opUncancel(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	n := f.t.Uncancel()
	r.emit(f.who, fmt.Sprintf("uncancel -> %d", n))
	return nil, nil
}

func opCurrentTask(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := "none"
	if t := asyncio.CurrentTask(r.loop); t != nil {
		name = t.Name()
	}
	r.emit(f.who, "current_task -> "+name)
	return nil, nil
}

func opAllTasks(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	r.emit(f.who, fmt.Sprintf("all_tasks -> %d", len(asyncio.AllTasks(r.loop))))
	return nil, nil
}

// status NAME: done(), cancelled(), exception(), result() without waiting.
func opStatus(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "status "+name)
	}
	var s string
	switch {
	case !x.Done():
		s = "pending"
	case x.Cancelled():
		s = "cancelled"
	default:
		if e := x.Err(); e != nil {
			s = "error(" + spec(e) + ")"
		} else {
			v, _ := x.Result()
			s = outcomeValue(v)
		}
	}
	r.emit(f.who, fmt.Sprintf("status %s -> %s", name, s))
	return nil, nil
}

func opNewFuture(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	r.addAwaitable(str(a[0]), asyncio.NewFuture[any](r.loop))
	return nil, nil
}

// settable is the set_result/set_exception surface of *Future and *Task.
type settable interface {
	SetResult(any) error
	SetException(error) error
}

func opSetResult(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "set_result "+name)
	}
	s, ok := x.(settable)
	if !ok { // a task: Task.set_result raises RuntimeError
		return nil, &asyncio.RuntimeError{Msg: "Task does not support set_result operation"}
	}
	return nil, s.SetResult(value(a[1]))
}

func opSetException(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "set_exception "+name)
	}
	s, ok := x.(settable)
	if !ok { // a task: Task.set_exception raises RuntimeError
		return nil, &asyncio.RuntimeError{Msg: "Task does not support set_exception operation"}
	}
	return nil, s.SetException(makeErr(str(a[1])))
}

func opDoneCallback(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	x, ok := r.lookup(name)
	if !ok {
		return r.undefined(f, "done_callback "+name)
	}
	body := bodyOf(a[1])
	x.AddDoneCallback(func() { r.runCallback(body) })
	return nil, nil
}

func opCallSoon(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	body := bodyOf(a[1])
	r.handles[str(a[0])] = r.loop.CallSoon(func() { r.runCallback(body) })
	return nil, nil
}

func opCallLater(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	body := bodyOf(a[2])
	r.handles[str(a[0])] = r.loop.CallLater(millis(a[1]), func() { r.runCallback(body) })
	return nil, nil
}

func opCallAt(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	body := bodyOf(a[2])
	r.handles[str(a[0])] = r.loop.CallAt(millis(a[1]), func() { r.runCallback(body) })
	return nil, nil
}

func opCancelHandle(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	name := str(a[0])
	h, ok := r.handles[name]
	if !ok {
		return r.undefined(f, "cancel_handle "+name)
	}
	h.Cancel()
	return nil, nil
}

// sameAwaitable reports whether the library returned the very awaitable
// the interpreter created (possibly through its untyped *T view).
func sameAwaitable(mine asyncio.AwaitableOf[any], got asyncio.Awaitable) bool {
	if asyncio.Awaitable(mine) == got {
		return true
	}
	if tk, ok := mine.(*asyncio.Task[any]); ok {
		if t, ok := got.(*asyncio.T); ok && tk.T() == t {
			return true
		}
	}
	return false
}
