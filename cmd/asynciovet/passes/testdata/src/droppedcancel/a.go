package droppedcancel

import (
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// Positive cases without a fix.

func blankValue(t *asyncio.T, q *asyncio.Queue[int]) int {
	v, _ := q.Get(t) // want `the error of asyncio.Queue.Get is assigned to _: a cancellation is swallowed`
	return v
}

func noErrorResult(t *asyncio.T, r *aio.StreamReader) {
	r.ReadLine(t) // want `the error of aio.StreamReader.ReadLine is discarded`
}

func logsOnly(t *asyncio.T, ev *asyncio.Event) error {
	if err := ev.Wait(t); err != nil { // want `the error of asyncio.Event.Wait is checked but the branch only logs or continues`
		log.Printf("wait: %v", err)
	}
	return nil
}

func continues(t *asyncio.T, items []asyncio.Awaitable) int {
	n := 0
	for _, it := range items {
		err := t.Await(it)
		if err != nil { // want `the error of asyncio.T.Await is checked but`
			fmt.Println("skipping", err)
			continue
		}
		n++
	}
	return n
}

func emptyBranch(t *asyncio.T) (int, error) {
	if err := asyncio.Sleep(t, time.Second); err != nil { // want `the error of asyncio.Sleep is checked but`
	}
	return 1, nil
}

func namedResultStruct(t *asyncio.T, b *asyncio.Barrier) (res struct{ n int }, err error) {
	b.Wait(t) // want `the error of asyncio.Barrier.Wait is discarded`
	return res, nil
}

// Negative cases.

func propagates(t *asyncio.T, lk *asyncio.Lock) error {
	if err := lk.Acquire(t); err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer lk.Release() // not an await
	return nil
}

func deliberate(t *asyncio.T) (string, error) {
	if err := asyncio.Sleep(t, time.Hour); asyncio.IsCancelled(err) {
		t.Uncancel()
		return "finished anyway", nil
	}
	if err := asyncio.Sleep(t, time.Hour); err != nil {
		if errors.Is(err, asyncio.ErrCancelled) {
			return "", err
		}
	}
	if err := asyncio.Sleep(t, time.Hour); err != nil {
		t.Uncancel() // handled explicitly
	}
	return "slept", nil
}

func collects(t *asyncio.T, aws []asyncio.Awaitable) error {
	var errs []error
	for _, aw := range aws {
		if err := t.Await(aw); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func usedLater(t *asyncio.T) error {
	err := asyncio.Sleep(t, time.Second)
	if err != nil {
		log.Print(err)
	}
	return err
}

func breaks(t *asyncio.T, q *asyncio.Queue[int]) (int, error) {
	sum := 0
	for {
		v, err := q.Get(t)
		if err != nil {
			break
		}
		sum += v
	}
	return sum, nil
}

func namedResult(t *asyncio.T) (err error) {
	if err = asyncio.Sleep(t, time.Second); err != nil {
		log.Print(err) // err is the result: the bare return below propagates it
	}
	return
}

func notAwaits(t *asyncio.T, w *aio.StreamWriter, fut *asyncio.Future[int]) error {
	defer w.WaitClosed(t) // the task is ending anyway
	w.Write([]byte("x"))  // no *asyncio.T: not an await
	fut.SetResult(1)
	_ = fut.Cancel()
	return w.Drain(t)
}
