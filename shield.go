package asyncio

// Shield protects aw from cancellation (asyncio.shield). If aw is already
// done, aw itself is returned (SHIELD-1). Otherwise a new future is
// returned that copies aw's outcome when aw finishes, and is cancelled if
// aw is cancelled (SHIELD-2). Cancelling the returned future — directly,
// or by cancelling a task awaiting it — leaves aw running (SHIELD-3); the
// copying callback is then removed from aw, or, if aw had already finished,
// aw's error is marked retrieved (SHIELD-4, 3.13).
func Shield[V any](aw AwaitableOf[V]) AwaitableOf[V] {
	coreOf(aw, "Shield").loop.checkThread("Shield")
	if aw.Done() {
		return aw
	}
	outer := NewFuture[V](aw.Loop())
	outer.kind = kindShield
	innerID := aw.core().addDoneCallbackFrom(func() {
		if outer.Cancelled() {
			if !aw.Cancelled() {
				aw.Err() // mark retrieved
			}
			return
		}
		if aw.Cancelled() {
			outer.Cancel()
			return
		}
		if err := aw.Err(); err != nil {
			outer.SetException(err)
			return
		}
		v, _ := aw.Result()
		outer.SetResult(v)
	}, &outer.futureCore)
	outer.AddDoneCallback(func() {
		if !aw.Done() {
			aw.RemoveDoneCallback(innerID)
		}
	})
	return outer
}
