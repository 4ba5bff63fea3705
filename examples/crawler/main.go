//go:build unix

// Command crawler is the classic asyncio web crawler — a queue of URLs, N
// workers, per-host limits — written with the fan-out toolkit, against a
// simulated site of loop servers on loopback with injected latency and
// failures:
//
//   - every host's budget comes from its /robots page, read two hosts at a
//     time with GatherBounded, and is enforced with a Limiter (a token
//     bucket on the loop's clock);
//   - at most -per-host requests are in flight per host (a Semaphore);
//   - a 503 is retried with exponential backoff and full jitter (Retry,
//     seeded, so the run is reproducible); a 404 is not;
//   - host c has two replicas, the first one slow: each request to it is
//     hedged (Hedge), the second replica asked after -hedge-after, and the
//     loser cancelled and awaited.
//
// -virtual runs it on the loop's virtual clock: the servers' latencies are
// loop sleeps and loopback I/O takes no loop time, so the figures are the
// same on every run.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

func main() {
	pages := flag.Int("pages", 12, "pages per host")
	workers := flag.Int("workers", 4, "crawler workers")
	perHost := flag.Int("per-host", 2, "requests in flight per host")
	hedgeAfter := flag.Duration("hedge-after", 30*time.Millisecond, "hedge delay for a host with replicas")
	seed := flag.Uint64("seed", 1, "seed of the retries' jitter")
	virtual := flag.Bool("virtual", false, "run on the loop's virtual clock")
	flag.Parse()
	var opts []asyncio.LoopOption
	if *virtual {
		opts = append(opts, asyncio.WithVirtualTime())
	}
	cfg := config{workers: *workers, perHost: *perHost, hedgeAfter: *hedgeAfter, seed: *seed}
	if err := run(os.Stdout, *pages, cfg, opts...); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
