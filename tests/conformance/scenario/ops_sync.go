package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-asyncio/asyncio"
)

// Synchronisation-primitive ops: Event, Lock, Semaphore, Queue (DSL.md
// section 3).
func init() {
	primitiveMaker = func(r *run) {
		for _, n := range r.sc.Events {
			r.prims[n] = asyncio.NewEvent()
		}
		for _, n := range r.sc.Locks {
			r.prims[n] = asyncio.NewLock()
		}
		for _, n := range r.sc.Semaphores.names {
			r.prims[n] = asyncio.NewSemaphore(r.sc.Semaphores.values[n])
		}
		for _, n := range r.sc.Queues.names {
			r.prims[n] = asyncio.NewQueue[any](r.sc.Queues.values[n])
		}
	}
	register("event_set", opEventSet)
	register("event_clear", opEventClear)
	register("event_wait", opEventWait)
	register("lock_acquire", opLockAcquire)
	register("lock_release", opLockRelease)
	register("sem_acquire", opSemAcquire)
	register("sem_release", opSemRelease)
	register("put", opPut)
	register("get", opGet)
	register("join", opJoin)
	register("put_nowait", opPutNowait)
	register("get_nowait", opGetNowait)
	register("task_done", opTaskDone)
}

func prim[P any](r *run, raw json.RawMessage) P { return r.prims[str(raw)].(P) }

// trueOnSuccess maps a Go acquire/wait (error only) to asyncio's `True`.
func trueOnSuccess(err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return true, nil
}

func noneOnSuccess(err error) (any, error) { return nil, err }

func opEventSet(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	prim[*asyncio.Event](r, a[0]).Set()
	return nil, nil
}

func opEventClear(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	prim[*asyncio.Event](r, a[0]).Clear()
	return nil, nil
}

func opEventWait(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	ev := prim[*asyncio.Event](r, a[0])
	_, err := r.waiting(f, "event_wait "+str(a[0]), func() (any, error) { return trueOnSuccess(ev.Wait(f.t)) })
	return nil, err
}

func opLockAcquire(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	lk := prim[*asyncio.Lock](r, a[0])
	_, err := r.waiting(f, "lock_acquire "+str(a[0]), func() (any, error) { return trueOnSuccess(lk.Acquire(f.t)) })
	return nil, err
}

func opLockRelease(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, prim[*asyncio.Lock](r, a[0]).Release()
}

func opSemAcquire(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	s := prim[*asyncio.Semaphore](r, a[0])
	_, err := r.waiting(f, "sem_acquire "+str(a[0]), func() (any, error) { return trueOnSuccess(s.Acquire(f.t)) })
	return nil, err
}

func opSemRelease(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, prim[*asyncio.Semaphore](r, a[0]).Release()
}

func opPut(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	q, v := prim[*asyncio.Queue[any]](r, a[0]), value(a[1])
	_, err := r.waiting(f, fmt.Sprintf("put %s %s", str(a[0]), fmtValue(v)), func() (any, error) {
		return noneOnSuccess(q.Put(f.t, v))
	})
	return nil, err
}

func opGet(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	q := prim[*asyncio.Queue[any]](r, a[0])
	_, err := r.waiting(f, "get "+str(a[0]), func() (any, error) { return q.Get(f.t) })
	return nil, err
}

func opJoin(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	q := prim[*asyncio.Queue[any]](r, a[0])
	_, err := r.waiting(f, "join "+str(a[0]), func() (any, error) { return noneOnSuccess(q.Join(f.t)) })
	return nil, err
}

func opPutNowait(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	q, v := prim[*asyncio.Queue[any]](r, a[0]), value(a[1])
	res := "ok"
	if err := q.PutNowait(v); err != nil {
		if !errors.Is(err, asyncio.ErrQueueFull) {
			return nil, err
		}
		res = "full"
	}
	r.emit(f.who, fmt.Sprintf("put_nowait %s %s -> %s", str(a[0]), fmtValue(v), res))
	return nil, nil
}

func opGetNowait(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	q := prim[*asyncio.Queue[any]](r, a[0])
	v, err := q.GetNowait()
	res := outcomeValue(v)
	if err != nil {
		if !errors.Is(err, asyncio.ErrQueueEmpty) {
			return nil, err
		}
		res = "empty"
	}
	r.emit(f.who, fmt.Sprintf("get_nowait %s -> %s", str(a[0]), res))
	return nil, nil
}

func opTaskDone(r *run, f *frame, a []json.RawMessage) (*ret, error) {
	return nil, prim[*asyncio.Queue[any]](r, a[0]).TaskDone()
}
