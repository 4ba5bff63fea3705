package droppedcancel

import (
	"errors"
	"log"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06): an await's error handed to
// a helper of the package that only logs it.

func logErr(err error) {
	if err != nil {
		log.Printf("ignored: %v", err)
	}
}

func discard(_ int, err error) {}

type reporterH struct{ errs []error }

func (r *reporterH) warn(err error) { log.Print("warning: ", err) }

func sinks(t *asyncio.T, q *asyncio.Queue[int], r *reporterH) {
	logErr(asyncio.Sleep(t, time.Second)) // want `the error of asyncio.Sleep is given to droppedcancel.logErr, which only logs or drops it`
	r.warn(q.Put(t, 1))                   // want `the error of asyncio.Queue.Put is given to droppedcancel.reporterH.warn, which only logs or drops it`
}

// Not reported: helpers that keep, return, panic with or test the error.
func (r *reporterH) keep(err error) { r.errs = append(r.errs, err) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func wrapH(err error) error { return err }

func quietUnlessCancelled(err error) {
	if errors.Is(err, asyncio.ErrCancelled) {
		panic(err)
	}
	log.Print(err)
}

func notSinks(t *asyncio.T, q *asyncio.Queue[int], r *reporterH) error {
	r.keep(asyncio.Sleep(t, time.Second))
	must(q.Put(t, 1))
	quietUnlessCancelled(q.Put(t, 2))
	discard(1, nil)
	return wrapH(asyncio.Sleep(t, time.Second))
}
