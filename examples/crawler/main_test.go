//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testConfig = config{workers: 4, perHost: 2, hedgeAfter: 30 * time.Millisecond, seed: 1}

// On the virtual clock the crawl is exact: the server latencies are loop
// sleeps, loopback I/O takes no loop time, the jitter is seeded. Every
// page is crawled once; the per-host limit holds; host a's budget (20/s,
// burst 2) keeps it at one request in flight; the 503s are retried; the
// hedged races on host c are won by replica 1 exactly for the paths where
// replica 0 is slow (/1 ... /9).
func TestCrawlVirtual(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 12, testConfig, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
	want := "crawled 36 pages in 710ms (12 retries of a 503, 0 not found)\n" +
		"  host a: 12 pages, at most 1 in flight (limit 2), rate 20/s burst 2\n" +
		"  host b: 12 pages, at most 2 in flight (limit 2), rate 40/s burst 2\n" +
		"  host c: 12 pages, at most 2 in flight (limit 2), rate 60/s burst 2, hedged races won by replica 0: 3, replica 1: 9\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// Another seed gives other backoff waits, but the same pages and retries.
func TestCrawlVirtualSeeds(t *testing.T) {
	for _, seed := range []uint64{2, 3} {
		var out strings.Builder
		cfg := testConfig
		cfg.seed = seed
		if err := run(&out, 12, cfg, asyncio.WithVirtualTime()); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "crawled 36 pages in ") || !strings.Contains(out.String(), "(12 retries of a 503, 0 not found)") {
			t.Errorf("seed %d:\n%s", seed, out.String())
		}
	}
}

// The whole crawl, servers included, cancelled at every moment any of its
// tasks (workers, hedged attempts, server handlers) waits: every run ends
// cancelled, with no task or goroutine left.
func TestCrawlCancellation(t *testing.T) {
	hosts := world(3)
	r := cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
		return withSite(t, hosts, func(ports map[string][]int) error {
			_, err := crawl(t, testConfig, []string{"a", "b", "c"}, ports, "a/")
			return err
		})
	}, cancelcheck.AllTasks(), cancelcheck.CancelMain())
	if r.Points < 50 {
		t.Errorf("only %d suspension points", r.Points)
	}
	t.Logf("%d suspension points, %d runs", r.Points, len(r.Runs))
}
