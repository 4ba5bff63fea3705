// Package asyncio is an asyncio-compatible coroutine scheduler for Go.
//
// One event loop, structured like CPython's BaseEventLoop._run_once, runs
// plain callbacks and task steps one at a time. A task is a goroutine that
// runs only while the loop has handed it control, so user code needs no locks and
// every interleaving is as deterministic as in asyncio.
package asyncio
