package asyncio

// Outcome is one child's outcome in a return_exceptions gather: Value on
// success, else Err (the child's error, or a *CancelledError).
type Outcome[V any] struct {
	Value V
	Err   error
}

// Gather runs the awaitables concurrently and completes with their results
// in argument order (asyncio.gather(*aws)). The same awaitable passed twice
// is one child whose result appears twice (GATHER-1). With no awaitables
// the result is an already-completed empty slice on owner's loop
// (GATHER-2). The first child to fail — or to be cancelled, as a
// *CancelledError *error*, so Cancelled() is false — fails the gather at
// once; the other children keep running and their later errors are marked
// retrieved (GATHER-3). Children already done are processed before Gather
// returns, so a gather of done futures is done on return (GATHER-7, 3.12).
// All awaitables must belong to one loop; Gather panics with a *ValueError
// otherwise.
//
// The returned future's Cancel is _GatheringFuture.cancel (GATHER-5): false
// if the gather is done; otherwise every child is cancelled with the
// message, and if any of those cancels returned true the gather, once its
// last child finishes, fails with a *CancelledError (also in the Outcomes
// forms; Cancelled() stays false). Cancelling a task awaiting the gather
// cancels it the same way (GATHER-6).
func Gather[V any](owner LoopOwner, aws ...AwaitableOf[V]) *Future[[]V] {
	return gather(owner, untypedOf(aws), false, func(c Awaitable, _ error) V {
		v, _ := c.(AwaitableOf[V]).Result()
		return v
	})
}

// GatherOutcomes is asyncio.gather(*aws, return_exceptions=True): it
// completes after every child, with each child's value or error in place
// (GATHER-4). A cancelled child appears as a *CancelledError carrying the
// future's cancel message; for a task child the message is lost ("") as in
// asyncio.
func GatherOutcomes[V any](owner LoopOwner, aws ...AwaitableOf[V]) *Future[[]Outcome[V]] {
	return gather(owner, untypedOf(aws), true, func(c Awaitable, err error) Outcome[V] {
		if err != nil {
			return Outcome[V]{Err: err}
		}
		v, _ := c.(AwaitableOf[V]).Result()
		return Outcome[V]{Value: v}
	})
}

// GatherFuncs is asyncio.gather(*coros): each fn becomes a task on owner's
// loop (in argument order), gathered as by Gather.
func GatherFuncs[V any](owner LoopOwner, fns ...func(*T) (V, error)) *Future[[]V] {
	return Gather(owner, tasksOf(owner, "GatherFuncs", fns)...)
}

// GatherOutcomesFuncs is asyncio.gather(*coros, return_exceptions=True):
// each fn becomes a task on owner's loop (in argument order), gathered as
// by GatherOutcomes.
func GatherOutcomesFuncs[V any](owner LoopOwner, fns ...func(*T) (V, error)) *Future[[]Outcome[V]] {
	return GatherOutcomes(owner, tasksOf(owner, "GatherOutcomesFuncs", fns)...)
}

// tasksOf makes a task of each fn, in order, after checking them all.
func tasksOf[V any](owner LoopOwner, op string, fns []func(*T) (V, error)) []AwaitableOf[V] {
	loopOf(owner, op).checkThread(op)
	for _, fn := range fns {
		if fn == nil {
			panic(valueErrorf("%s: nil coroutine function", op))
		}
	}
	aws := make([]AwaitableOf[V], len(fns))
	for i, fn := range fns {
		aws[i] = CreateTask(owner, fn)
	}
	return aws
}

// GatherAny is Gather over awaitables of different result types: each
// element of the result is the child's value as returned by its Result
// method (nil for an awaitable without one, such as *T).
func GatherAny(owner LoopOwner, aws ...Awaitable) *Future[[]any] {
	return gather(owner, aws, false, func(c Awaitable, _ error) any { return resultAny(c) })
}

// GatherAnyOutcomes is GatherOutcomes over awaitables of different result
// types (gather(*aws, return_exceptions=True)).
func GatherAnyOutcomes(owner LoopOwner, aws ...Awaitable) *Future[[]Outcome[any]] {
	return gather(owner, aws, true, func(c Awaitable, err error) Outcome[any] {
		if err != nil {
			return Outcome[any]{Err: err}
		}
		return Outcome[any]{Value: resultAny(c)}
	})
}

// Awaitables converts a slice of one awaitable type, such as []*Task[V] or
// []*Future[V], to the []AwaitableOf[V] that Gather, GatherOutcomes and
// AsCompletedOf take (Go does not convert slices of interface
// implementations): Gather(t, Awaitables(tasks)...). Wait and AsCompleted
// take such a slice directly.
func Awaitables[V any, A AwaitableOf[V]](aws []A) []AwaitableOf[V] {
	out := make([]AwaitableOf[V], len(aws))
	for i, aw := range aws {
		out[i] = aw
	}
	return out
}

func untypedOf[V any](aws []AwaitableOf[V]) []Awaitable {
	out := make([]Awaitable, len(aws))
	for i, aw := range aws {
		out[i] = aw
	}
	return out
}

// resultAny returns the value of aw, which finished successfully, whatever
// its value type.
func resultAny(aw Awaitable) any { return aw.valueAny() }

// errOtherLoopFuture is asyncio's ensure_future(fut, loop=loop) message
// for a future of another loop (gather, as_completed, run_until_complete).
const errOtherLoopFuture = "The future belongs to a different loop than the one specified as the loop argument"

// gather is asyncio.gather over already-created awaitables. value builds one
// result element from a finished child and, with returnExceptions, its
// error (nil on success).
func gather[R any](owner LoopOwner, args []Awaitable, returnExceptions bool, value func(c Awaitable, err error) R) *Future[[]R] {
	loopOf(owner, "Gather").checkThread("Gather")
	for _, a := range args {
		coreOf(a, "Gather")
	}
	if len(args) == 0 {
		f := NewFuture[[]R](owner)
		f.SetResult([]R{})
		return f
	}
	loop := args[0].Loop()
	seen := make(map[Awaitable]bool, len(args))
	var distinct, doneAtStart []Awaitable
	for _, a := range args {
		if a.Loop() != loop {
			panic(&ValueError{Msg: errOtherLoopFuture})
		}
		if !seen[a] {
			seen[a] = true
			distinct = append(distinct, a)
		}
	}
	outer := NewFuture[[]R](loop)
	outer.kind = kindGather
	cancelRequested := false
	// _GatheringFuture.cancel (GATHER-5), also reached when the task
	// awaiting outer is cancelled (GATHER-6).
	outer.setOps(nil, cancelFunc(func(msg string) bool {
		// (A task that awaits a gather holding itself comes back to its
		// own cancel from here: T.cancel stops that cycle, see inCancel.)
		if outer.Done() {
			return false
		}
		ret := false
		for _, c := range args {
			if c.Cancel(msg) {
				ret = true
			}
		}
		if ret {
			cancelRequested = true
		}
		return ret
	}))
	nFinished := 0

	onChildDone := func(c Awaitable) {
		nFinished++
		if outer.Done() {
			if !c.Cancelled() {
				c.Err() // mark retrieved
			}
			return
		}
		if !returnExceptions {
			if c.Cancelled() {
				outer.SetException(c.Err())
				return
			}
			if err := c.Err(); err != nil {
				outer.SetException(err)
				return
			}
		}
		if nFinished < len(distinct) {
			return
		}
		results := make([]R, len(args))
		for i, c := range args {
			var err error
			if c.Cancelled() {
				err = cancelledInPlace(c)
			} else {
				err = c.Err()
			}
			results[i] = value(c, err)
		}
		if cancelRequested {
			outer.SetException(lastChildCancelledError(args[len(args)-1]))
			return
		}
		outer.SetResult(results)
	}

	for _, c := range distinct {
		if c.Done() {
			doneAtStart = append(doneAtStart, c)
		} else {
			c.core().addDoneCallbackFrom(func() { onChildDone(c) }, &outer.futureCore)
		}
	}
	// GATHER-7 (3.12): children done already are handled now, in order.
	for _, c := range doneAtStart {
		onChildDone(c)
	}
	return outer
}

// cancelledInPlace is the CancelledError a return_exceptions gather puts in
// place of a cancelled child: built from the child's stored cancel message
// (GATHER-4). A plain future keeps the message it was cancelled with; a
// task keeps it only if it ended by returning while a cancellation was
// pending (CANCEL-2), not if its function returned the CancelledError.
func cancelledInPlace(c Awaitable) error {
	return &CancelledError{Msg: c.core().cancelMessage()}
}

// lastChildCancelledError is asyncio's fut._make_cancelled_error() on the
// last child, for a gather whose cancellation was requested (GATHER-5): a
// cancelled child gives its own error; a task that swallowed the
// cancellation gives one with the message its Cancel stored.
func lastChildCancelledError(c Awaitable) error {
	if c.Cancelled() {
		return c.Err()
	}
	if t := taskOf(c); t != nil {
		return &CancelledError{Msg: t.cancelMessage()}
	}
	return &CancelledError{Msg: c.core().cancelMessage()}
}
