// Package asyncio is an asyncio-compatible coroutine scheduler for Go.
//
// One event loop, structured like CPython's BaseEventLoop._run_once, runs
// plain callbacks and task steps one at a time. A task is a goroutine that
// runs only while the loop has handed it control, so user code needs no locks and
// every interleaving is as deterministic as in asyncio.
//
// # Running a loop
//
// [Run] runs a coroutine function on a new loop and closes it
// (asyncio.run); [RunWith] and [Runner] (asyncio.Runner) run several on one
// loop, and [RunContext] ties a run to a context.Context. A [Loop] can also
// be driven by hand: [NewLoop] (options: [WithVirtualTime], [WithDebug],
// ...), [Loop.RunUntilComplete], [Loop.RunForever] and [Loop.Stop],
// [Loop.Close]. [NewTestLoop] is a loop on virtual time, for tests.
//
// # Tasks
//
// A coroutine function is a func(t *T) (V, error): t is the running task,
// the first argument of every call that suspends ([Sleep], every Await).
// [CreateTask] schedules one on a loop and returns its [Task]; a [Future]
// ([NewFuture]) is an outcome set by hand. Cancel a task with Cancel; the
// cancellation arrives as a [CancelledError] at its next await (match it
// with [IsCancelled] or errors.Is(err, [ErrCancelled])). [CurrentTask] and
// [AllTasks] look tasks up.
//
// # Structure
//
// [TaskGroup] (with [Spawn]) runs child tasks and waits for all of them,
// cancelling the rest when one fails; [Timeout], [TimeoutAt] and [WaitFor]
// bound how long code may take; [Shield] keeps a task from its awaiter's
// cancellation. [Gather], [Wait] and [AsCompleted] combine awaitables as
// their asyncio namesakes do.
//
// # Fan-out
//
// [BoundedTaskGroup] runs at most n children at once (the rest queued, with
// no goroutine until they start); [GatherBounded] and [AsCompletedBounded]
// are the bounded combinators; [NewLimiter] is a token bucket that wakes one
// waiter per token; [Retry] retries with backoff and jitter, never a
// cancellation; [Hedge], [FirstSuccess] and [StaggeredRace] (asyncio's
// staggered_race) race attempts and cancel the losers. Package aio's simulated network (NewSimNetwork) runs network code
// on the loop's virtual clock.
//
// # Every core
//
// A [LoopGroup] runs one loop per core, each an unchanged asyncio loop
// ([RunEach], [RunGroup]); [CallOn] and [SubmitTo] await a task on another
// loop, [CrossQueue] carries items between loops with backpressure, and
// package aio spreads a server over the loops of a group.
//
// # Synchronisation
//
// [Lock], [Event], [Condition], [Semaphore], [Barrier] and the queues
// ([NewQueue], [NewPriorityQueue], [NewLifoQueue]) are asyncio's
// primitives, for tasks of one loop.
//
// # The loop's callbacks
//
// [Loop.CallSoon], [Loop.CallLater] and [Loop.CallAt] schedule plain
// callbacks; [Loop.CallSoonThreadsafe] and [RunCoroutineThreadsafe] do so
// from other goroutines. [Loop.AddReader] and [Loop.AddWriter] watch file
// descriptors (package aio builds sockets, streams and subprocesses on
// them). [Loop.SetExceptionHandler] receives what fails in callbacks and
// tasks; [Loop.OnClose] runs cleanups when the loop closes.
//
// # Ordinary Go code
//
// Blocking Go code (net/http, database/sql, a channel) must not run in a
// task step: await it instead. [Go] runs a function on its own goroutine
// with a context that the task's cancellation cancels; [RunInExecutor] and
// [ToThread] use the loop's default executor (a bounded pool, or yours:
// [Loop.SetDefaultExecutor]); [Recv] and [Send] await a Go channel. A task's
// context.Context is [T.Context]; [ContextVar] is asyncio's contextvars.
//
// # Seeing inside
//
// The watchdog reports a step or callback that blocks the loop while it
// blocks ([Loop.SetBlockedThreshold]). [Snapshot] and
// [Loop.SnapshotThreadsafe] describe every task and what it waits on
// ([LoopSnapshot.WriteTree] renders it as python -m asyncio pstree does);
// [CaptureCallGraph] is asyncio's call graph; [Loop.Stats] counts what the
// loop did. [WithTaskStacks], [WithTaskLabels] (pprof) and [WithStepTiming]
// record more; runtime/trace shows tasks and steps while tracing. Package
// debug/asynciohttp serves all of it over HTTP, and package cancelcheck
// tests that code survives a cancellation at each of its awaits.
package asyncio
