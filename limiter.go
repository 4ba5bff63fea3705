package asyncio

import (
	"container/list"
	"fmt"
	"math"
	"time"
)

// Limiter is a token bucket on the loop's clock (aiolimiter's
// AsyncLimiter, AnyIO's CapacityLimiter with a rate): it holds at most
// burst tokens, starts full, and gains rate tokens per second of loop time.
// An acquisition of k tokens (AcquireN) takes them at once if no one is
// waiting and the bucket holds k; otherwise the task waits in FIFO order.
//
// Waiters are served one by one: a single timer is armed for the moment
// the first waiter's tokens are there, and when it fires exactly the
// waiters whose tokens are there are woken, each once (never a broadcast
// to all waiters, aiolimiter #73). A waiter cancelled while it waits
// leaves the queue and takes no token; one cancelled after its tokens were
// granted but before it resumed gives them back. On a virtual clock
// (WithVirtualTime) the admission times are exact: a Limiter of rate 10
// and burst 5 admits at 0, 0, 0, 0, 0, 100ms, 200ms, ...
//
// A Limiter binds to the loop of its first acquisition and must only be
// used from that loop's tasks and callbacks. Create it with NewLimiter: the
// zero Limiter has a burst of 0, and its AcquireN and TryAcquire panic with
// a *ValueError that says so.
type Limiter struct {
	binding loopBinding
	loop    *Loop
	rate    float64 // tokens per second
	burst   int
	tokens  float64 // at last
	// last is the loop time of tokens, to a fraction of a nanosecond: a
	// waiter's tokens are taken at the exact moment they were there, not at
	// the whole nanosecond its timer fired, so admissions do not drift.
	last    instant
	waiters list.List // of *limiterWaiter
	timer   *TimerHandle
	stats   LimiterStats
}

type limiterWaiter struct {
	fut     *Future[struct{}]
	k       int
	granted bool
}

// LimiterStats counts what a Limiter did (for benchmarks and metrics).
type LimiterStats struct {
	// Granted counts acquisitions granted (at once or after waiting).
	Granted int64
	// Waited counts acquisitions that had to wait.
	Waited int64
	// Wakeups counts waiter wakeups: exactly one per acquisition granted
	// to a waiter.
	Wakeups int64
	// Refunded counts grants given back by a waiter cancelled before it
	// resumed.
	Refunded int64
	// Ticks counts the limiter's timer firings.
	Ticks int64
}

// NewLimiter returns a full token bucket of burst tokens that refills at
// rate tokens per second of loop time. rate 0 is a fixed budget of burst
// tokens. A burst <= 0 or above 2^53, or a rate that is negative, NaN or
// infinite, is a programming error: NewLimiter panics with a *ValueError
// naming it.
func NewLimiter(rate float64, burst int) *Limiter {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
		panic(valueErrorf("NewLimiter: rate must be a finite number >= 0, got %v", rate))
	}
	if burst <= 0 || int64(burst) > maxBurst {
		panic(valueErrorf("NewLimiter: burst must be > 0 and <= 2^53, got %d", burst))
	}
	return &Limiter{rate: rate, burst: burst, tokens: float64(burst)}
}

// maxBurst is the largest burst the bucket counts exactly: its tokens are
// a float64, which past 2^53 cannot tell n from n-1, so a larger bucket
// would grant without ever emptying.
const maxBurst = 1 << 53

// Rate returns the refill rate in tokens per second.
func (l *Limiter) Rate() float64 { return l.rate }

// Burst returns the bucket's capacity.
func (l *Limiter) Burst() int { return l.burst }

// Waiters returns the number of tasks waiting. A waiter cancelled counts
// until its task resumes and leaves the queue, or an acquisition (AcquireN,
// TryAcquire) that finds it at the front drops it.
func (l *Limiter) Waiters() int { return l.waiters.Len() }

// Stats returns the counters.
func (l *Limiter) Stats() LimiterStats { return l.stats }

// Tokens returns the tokens in the bucket now (fractional while it refills).
// It is burst for a Limiter never used.
func (l *Limiter) Tokens() float64 {
	if l.loop != nil {
		return l.tokensAt(instant{ns: l.loop.Time()})
	}
	return l.tokens
}

// String returns a repr like "<Limiter rate=10 burst=5 tokens=2.5 waiters=3>".
func (l *Limiter) String() string {
	return fmt.Sprintf("<Limiter rate=%v burst=%d tokens=%.3g waiters=%d>", l.rate, l.burst, l.Tokens(), l.waiters.Len())
}

// tokenEps absorbs floating-point error in the refill (a token due at a
// timer's exact moment must be there when the timer fires).
const tokenEps = 1e-9

func (l *Limiter) refill(now time.Duration) { l.refillTo(instant{ns: now}) }

// tokensAt returns the tokens the bucket holds at at, without moving
// last: only a grant, a refund or the limiter's timer moves it, at the
// moments a waiter's admission is computed from. (A read, or an
// acquisition that only queues, moving it to a whole nanosecond of its
// own would round the bucket each time, and admissions at a rate whose
// interval is not a whole number of nanoseconds would drift late.)
func (l *Limiter) tokensAt(at instant) float64 {
	if d := at.sub(l.last); d > 0 {
		return math.Min(float64(l.burst), l.tokens+d*l.rate/1e9)
	}
	return l.tokens
}

// refillTo adds the tokens that came from last to at.
func (l *Limiter) refillTo(at instant) {
	if d := at.sub(l.last); d > 0 {
		l.tokens = math.Min(float64(l.burst), l.tokens+d*l.rate/1e9)
		l.last = at
	}
}

// due returns the moment the bucket holds k tokens; ok is false if that
// is never (rate 0) or past Never.
func (l *Limiter) due(k int) (at instant, ok bool) {
	if l.tokens+tokenEps >= float64(k) {
		return l.last, true
	}
	if l.rate == 0 {
		return instant{}, false
	}
	return l.last.add((float64(k) - l.tokens) * 1e9 / l.rate)
}

// instant is a loop time to a fraction of a nanosecond: ns + frac, 0 <=
// frac < 1. A float64 of nanoseconds would lose that fraction to rounding
// after hours of loop time.
type instant struct {
	ns   time.Duration
	frac float64
}

// fracEps is the rounding error of frac below which an instant counts as
// a whole nanosecond.
const fracEps = 1e-6

// sub returns a - b in nanoseconds (exact for differences below 2^53 ns).
func (a instant) sub(b instant) float64 { return float64(a.ns-b.ns) + (a.frac - b.frac) }

// add returns a + d nanoseconds (d >= 0); ok is false past Never.
func (a instant) add(d float64) (instant, bool) {
	whole := math.Floor(a.frac + d)
	if whole >= float64(Never-a.ns) {
		return instant{}, false
	}
	return instant{ns: a.ns + time.Duration(whole), frac: a.frac + d - whole}, true
}

// ceil returns the first whole nanosecond at or after a.
func (a instant) ceil() time.Duration {
	if a.frac > fracEps {
		return a.ns + 1
	}
	return a.ns
}

// checkMade panics with a *ValueError naming op when l was not made by
// NewLimiter: the zero Limiter has a burst of 0, so that no acquisition
// could ever be served.
func (l *Limiter) checkMade(op string) {
	if l.burst == 0 {
		panic(valueErrorf("%s: zero Limiter (make it with NewLimiter(rate, burst))", op))
	}
}

// Acquire takes one token (AcquireN(t, 1)).
func (l *Limiter) Acquire(t *T) error { return l.AcquireN(t, 1) }

// AcquireN takes k tokens, waiting in FIFO order behind the tasks already
// waiting (no barging). It returns nil once they are taken; the
// *CancelledError if t is cancelled meanwhile (no token is taken then); a
// *ValueError, at once and changing nothing, if k <= 0 or k > Burst (such a
// request could never be served); a *RuntimeError if the Limiter is bound
// to another loop. A rate-0 Limiter that cannot serve k waits until t is
// cancelled. A t that is not the running task panics with a *RuntimeError,
// whether or not the tokens are there, taking none.
func (l *Limiter) AcquireN(t *T, k int) error {
	// checkRunning, not just checkCaller: with a t that is not running
	// (a callback holding a task's handle), the await below panics only
	// after the waiter is queued, and that waiter, which nobody awaits,
	// would then be granted the next tokens and lose them.
	l.checkMade("Limiter.AcquireN")
	t.checkRunning("Limiter.AcquireN")
	if k <= 0 || k > l.burst {
		return &ValueError{Msg: fmt.Sprintf("Limiter.AcquireN: weight must be in 1..burst (%d), got %d", l.burst, k)}
	}
	if err := l.bind(t.Loop()); err != nil {
		return err
	}
	if l.takeAtOnce(k) {
		return nil
	}
	w := &limiterWaiter{fut: NewFuture[struct{}](t), k: k}
	elem := l.waiters.PushBack(w)
	l.stats.Waited++
	if elem == l.waiters.Front() {
		l.schedule()
	}
	if _, err := w.fut.Await(t); err != nil {
		if w.granted {
			// Granted, then cancelled before it resumed: give them back.
			l.refill(l.loop.Time())
			l.tokens = math.Min(float64(l.burst), l.tokens+float64(k))
			l.stats.Granted--
			l.stats.Refunded++
		} else {
			w.fut.Cancel()
			wasFront := elem == l.waiters.Front()
			l.waiters.Remove(elem)
			if !wasFront {
				return err
			}
		}
		// The first waiter changed, or tokens came back: serve anew.
		l.dispatch()
		return err
	}
	return nil
}

// TryAcquire takes k tokens if it can do so at once (no one waiting and
// k tokens in the bucket) and reports whether it did. It never suspends;
// owner gives the loop whose clock the bucket runs on. A weight outside
// 1..Burst returns false. An owner on another loop than the one the
// Limiter is bound to is a programming error (false would read as "no
// token now", and a caller polling would wait for ever): TryAcquire
// panics with the *RuntimeError AcquireN returns.
func (l *Limiter) TryAcquire(owner LoopOwner, k int) bool {
	l.checkMade("Limiter.TryAcquire")
	loop := loopOf(owner, "Limiter.TryAcquire")
	loop.checkThread("Limiter.TryAcquire")
	if k <= 0 || k > l.burst {
		return false
	}
	if err := l.bind(loop); err != nil {
		panic(err)
	}
	return l.takeAtOnce(k)
}

// bind binds the Limiter to loop on its first use. A call from another
// loop runs on that loop's goroutine, concurrently with the owner's: it
// reads only the binding (atomic) and, for its error, the fields that
// never change (not l.loop, the bucket or the queue, which String reads
// and Tokens read).
func (l *Limiter) bind(loop *Loop) error {
	if l.binding.loop.Load() != loop {
		if err := l.binding.bind(loop, limiterName{l}); err != nil {
			return err
		}
	}
	if l.loop == nil {
		l.loop = loop
		l.last = instant{ns: loop.Time()}
	}
	return nil
}

// limiterName is the Limiter in the error of a use from another loop:
// its immutable fields only, whether or not its loop runs (the Limiter's
// String refills the bucket from its loop's clock).
type limiterName struct{ l *Limiter }

func (n limiterName) String() string { return "<" + n.identity() + ">" }
func (n limiterName) identity() string {
	return fmt.Sprintf("Limiter rate=%v burst=%d", n.l.rate, n.l.burst)
}

func (l *Limiter) take(k int) {
	l.tokens -= float64(k)
	if l.tokens < 0 {
		l.tokens = 0 // only ever the floating-point residue
	}
	l.stats.Granted++
}

// takeAtOnce takes k tokens if they are there and nobody waits before
// the caller (no barging), the fast path of AcquireN and TryAcquire.
func (l *Limiter) takeAtOnce(k int) bool {
	l.dropCancelledHead()
	now := l.loop.Time()
	if l.waiters.Len() > 0 || l.tokensAt(instant{ns: now})+tokenEps < float64(k) {
		return false
	}
	l.refill(now)
	l.take(k)
	return true
}

// dropCancelledHead removes the waiters at the front of the queue that
// were cancelled but whose tasks have not resumed yet to leave it: they
// no longer wait (asyncio's Semaphore.locked skips cancelled waiters), so
// they must not hold back an acquisition that can be served now. If the
// front changed, the new first waiters are served (or the timer re-armed)
// before the caller looks at the queue.
func (l *Limiter) dropCancelledHead() {
	if e := l.waiters.Front(); e != nil && e.Value.(*limiterWaiter).fut.Done() {
		l.dispatch() // drops them, then serves in FIFO order
	}
}

// dispatch grants the first waiters whose tokens are there, in order, one
// wakeup each, then arms the timer for the next one.
func (l *Limiter) dispatch() {
	now := instant{ns: l.loop.Time()}
	for e := l.waiters.Front(); e != nil; e = l.waiters.Front() {
		w := e.Value.(*limiterWaiter)
		if w.fut.Done() {
			// Cancelled and not resumed yet: it leaves the line without
			// a token and without a wakeup (Acquire's removal is then a
			// no-op).
			l.waiters.Remove(e)
			continue
		}
		at, ok := l.due(w.k)
		if !ok || at.sub(now) > fracEps {
			break
		}
		if now.sub(at) < 1 {
			// On time (its timer rounded the moment up to a whole
			// nanosecond): taken at the exact moment, so that nothing
			// drifts.
			l.refillTo(at)
		} else {
			// Late (the loop was busy): taken now, from a bucket capped at
			// burst, so that no more than burst are admitted at once.
			l.refillTo(now)
		}
		l.waiters.Remove(e)
		l.take(w.k)
		w.granted = true
		l.stats.Wakeups++
		_ = w.fut.SetResult(struct{}{})
	}
	l.refillTo(now)
	l.schedule()
}

// schedule arms the timer for the moment the first waiter's tokens are
// there (none when no one waits or the rate is 0).
func (l *Limiter) schedule() {
	if l.timer != nil {
		l.timer.Cancel()
		l.timer = nil
	}
	e := l.waiters.Front()
	if e == nil || l.rate == 0 {
		return
	}
	at, ok := l.due(e.Value.(*limiterWaiter).k)
	if !ok {
		// A tiny rate puts it past Never: no timer, as for rate 0 (one
		// at Never would fire, grant nothing and re-arm, for ever, once a
		// virtual clock got there).
		return
	}
	l.timer = l.loop.CallAt(at.ceil(), l.tick)
}

func (l *Limiter) tick() {
	l.timer = nil
	l.stats.Ticks++
	l.dispatch()
}
