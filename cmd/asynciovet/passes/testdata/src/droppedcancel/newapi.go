package droppedcancel

import (
	"context"
	"errors"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// Cases for the APIs added after the first version of the check. The
// functions return nothing, so no fix is offered.

// Positive cases.
func bridgeDropped(t *asyncio.T) {
	asyncio.Go(t, func(ctx context.Context) (int, error) { return 0, nil }) // want `the error of asyncio.Go is discarded`
}

func channelsDropped(t *asyncio.T, ch chan int) {
	_ = asyncio.Send(t, ch, 1)     // want `the error of asyncio.Send is assigned to _`
	v, _, _ := asyncio.Recv(t, ch) // want `the error of asyncio.Recv is assigned to _`
	_ = v
}

func genericWaitDropped(t *asyncio.T, tasks []*asyncio.Task[int]) {
	done, _, _ := asyncio.Wait(t, tasks, time.Second, asyncio.AllCompleted) // want `the error of asyncio.Wait is assigned to _`
	_ = done
}

func processDropped(t *asyncio.T, p *aio.Process) {
	p.Wait(t)                          // want `the error of aio.Process.Wait is discarded`
	out, _, _ := p.Communicate(t, nil) // want `the error of aio.Process.Communicate is assigned to _`
	_ = out
}

// Negative cases.
func contextVarReset(t *asyncio.T, v *asyncio.ContextVar[string]) {
	tok := v.Set(t, "x")
	_ = v.Reset(t, tok) // never suspends: its error is a misused token
}

func offLoopDrops(t *asyncio.T) error {
	_, err := asyncio.Go(t, func(ctx context.Context) (int, error) {
		<-ctx.Done() // not an await of the loop
		return 0, nil
	})
	return err
}

func concurrentFutureWait(tk *asyncio.Task[int]) {
	cf := asyncio.Threadsafe[int](tk)
	_ = cf.Wait(context.Background()) // a goroutine's wait, not a task's
}

func executorFuture(t *asyncio.T) error {
	f := asyncio.RunInExecutorOn(t, nil, func(ctx context.Context) (int, error) { return 0, nil })
	_, err := f.Await(t)
	return err
}

func asCompletedChecked(t *asyncio.T, tasks []*asyncio.Task[int]) error {
	for _, err := range asyncio.AsCompleted(t, tasks, 0) {
		if err != nil {
			return err
		}
	}
	return nil
}

// Cleanup after a delivered cancellation, then the cancellation returned:
// nothing is swallowed.
func goodbye(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	for {
		line, err := r.ReadLine(t)
		if asyncio.IsCancelled(err) {
			_ = w.Write([]byte("goodbye\n"))
			w.Drain(t) // negative: the task returns err next
			return err
		}
		if errors.Is(err, asyncio.ErrCancelled) {
			_ = w.Drain(t) // negative: the same with errors.Is
			return err
		}
		if err != nil {
			return err
		}
		_ = line
	}
}

// Positive: the cleanup branch does not return the cancellation.
func goodbyeCarriesOn(t *asyncio.T, r *aio.StreamReader, w *aio.StreamWriter) error {
	_, err := r.ReadLine(t)
	if asyncio.IsCancelled(err) {
		w.Drain(t) // want `the error of aio.StreamWriter.Drain is discarded`
		return nil
	}
	if asyncio.IsCancelled(err) {
		err = nil
		w.Drain(t) // want `the error of aio.StreamWriter.Drain is discarded`
		return err
	}
	return err
}
