//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

var connectTarget = regexp.MustCompile(`connect to (\S+?):\d+:`)

// attemptOrder lists the addresses a failed connect tried, in the order
// of its joined errors (one per attempt, in attempt order).
func attemptOrder(err error) string {
	var out []string
	for _, m := range connectTarget.FindAllStringSubmatch(fmt.Sprint(err), -1) {
		out = append(out, m[1])
	}
	return fmt.Sprint(out)
}

// Name resolution runs on a goroutine that the virtual-time loop counts as
// external work: the loop waits for it instead of reporting a deadlock.
func TestResolveOnGoroutineVirtualTime(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := resolverFunc(func(ctx context.Context, host string) ([]net.IPAddr, error) {
		<-release
		if host == "two.test" {
			return []net.IPAddr{{IP: net.ParseIP("::1")}, {IP: net.ParseIP("127.0.0.1")}}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	})
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		go close(release)
		ips, err := resolveHost(at, r, "two.test")
		log = append(log, fmt.Sprint(ips, err))
		_, err = resolveHost(at, r, "missing.test")
		var de *net.DNSError
		log = append(log, fmt.Sprint(errors.As(err, &de)))
		ips, err = resolveHost(at, r, "10.0.0.1")
		log = append(log, fmt.Sprint(ips, err))
		return nil
	})
	want := []string{"[::1 127.0.0.1] <nil>", "true", "[10.0.0.1] <nil>"}
	expectLog(t, want, log)
}

// Cancelling a task during name resolution cancels the lookup's context
// and returns at once: the loop stops waiting for the lookup (external
// work back to zero) while the resolver is still running.
func TestResolveCancelled(t *testing.T) {
	t.Parallel()
	sawCancel, mayReturn := make(chan struct{}), make(chan struct{})
	r := resolverFunc(func(ctx context.Context, host string) ([]net.IPAddr, error) {
		<-ctx.Done()
		close(sawCancel)
		<-mayReturn
		return nil, ctx.Err()
	})
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		res := asyncio.CreateTask(at, func(t *asyncio.T) ([]net.IP, error) { return resolveHost(t, r, "slow.test") })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		res.Cancel()
		_, err := res.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v external=%d", asyncio.IsCancelled(err), at.Loop().Stats().External))
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		asyncio.Go(at, func(context.Context) (int, error) { <-sawCancel; return 0, nil })
		log = append(log, "resolver saw its context cancelled")
		close(mayReturn)
		return nil
	})
	want := []string{"cancelled=true external=0", "resolver saw its context cancelled"}
	expectLog(t, want, log)
}

// Lookups do not queue behind the default executor's bounded pool: more
// lookups than its worker count, each waiting until all have started,
// complete (each runs on a goroutine of its own).
func TestResolveLookupsRunConcurrently(t *testing.T) {
	t.Parallel()
	const n = 40 // the executor has min(32, NumCPU+4) workers
	var started sync.WaitGroup
	started.Add(n)
	r := resolverFunc(func(ctx context.Context, host string) ([]net.IPAddr, error) {
		started.Done()
		started.Wait()
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	})
	runVirtual(t, func(at *asyncio.T) error {
		tasks := make([]*asyncio.Task[[]net.IP], n)
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(at, func(t *asyncio.T) ([]net.IP, error) {
				return resolveHost(t, r, fmt.Sprintf("h%d.test", i))
			})
		}
		res, err := asyncio.Gather(at, asyncio.Awaitables(tasks)...).Await(at)
		if err != nil || len(res) != n {
			t.Errorf("gather: %d results, %v", len(res), err)
		}
		return nil
	})
}

// Sequential connects (WithHappyEyeballsDelay(0)) try the resolved
// addresses in order, and WithInterleave(1) reorders them to alternate
// families first (asyncio's create_connection: interleave defaults to 1
// only when happy_eyeballs_delay is set, RFC 8305 §4). Every address
// refuses here (nothing listens on the port on any of them), so the
// joined error lists the attempts in order.
func TestResolveInterleaveOrdersSequentialAttempts(t *testing.T) {
	t.Parallel()
	three := fakeResolver("127.0.0.2", "127.0.0.3", "::1")
	var log []string
	runNet(t, func(at *asyncio.T) error {
		// A listener on 127.0.0.1 only reserves the port; the three
		// addresses tried have no listener on it.
		fd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		unix.Listen(fd, 1)
		port := localAddr(fd, "tcp").(*net.TCPAddr).Port
		_, _, err = OpenConnection(at, "three.test", port, three, WithHappyEyeballsDelay(0))
		log = append(log, "sequential: "+attemptOrder(err))
		_, _, err = OpenConnection(at, "three.test", port, three, WithHappyEyeballsDelay(0), WithInterleave(1))
		log = append(log, "sequential, interleaved: "+attemptOrder(err))
		_, err = DialConn(at, "tcp", net.JoinHostPort("three.test", fmt.Sprint(port)), three, WithHappyEyeballsDelay(0), WithInterleave(1))
		var oe *net.OpError
		log = append(log, fmt.Sprintf("DialConn sequential, interleaved: %s (OpError %v)", attemptOrder(err), errors.As(err, &oe)))
		return nil
	})
	want := []string{
		"sequential: [127.0.0.2 127.0.0.3 [::1]]",
		"sequential, interleaved: [127.0.0.2 [::1] 127.0.0.3]",
		"DialConn sequential, interleaved: [127.0.0.2 [::1] 127.0.0.3] (OpError true)",
	}
	expectLog(t, want, log)
}

// With happy eyeballs, interleaving is on by default and WithInterleave(0)
// turns it off: the two IPv4 addresses are black holes and only ::1
// accepts, so the connect takes one delay when ::1 is tried second
// (interleaved) and two when it is tried third.
func TestResolveInterleaveWithHappyEyeballs(t *testing.T) {
	t.Parallel()
	three := fakeResolver("127.0.0.2", "127.0.0.3", "::1")
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "::1", 0)
		if err != nil {
			return err
		}
		port := serverPort(srv)
		defer blackHole(t, at, [4]byte{127, 0, 0, 2}, port)()
		defer blackHole(t, at, [4]byte{127, 0, 0, 3}, port)()
		for _, c := range []struct {
			name string
			opts []Option
		}{
			{"default", []Option{WithHappyEyeballsDelay(100 * time.Millisecond)}},
			{"not interleaved", []Option{WithHappyEyeballsDelay(100 * time.Millisecond), WithInterleave(0)}},
		} {
			start := at.Loop().Time()
			_, w, err := OpenConnection(at, "three.test", port, append(c.opts, three)...)
			if err != nil {
				return err
			}
			peer := w.ExtraInfo("peername").(*net.TCPAddr).IP
			log = append(log, fmt.Sprintf("%s: connected to %v after %v", c.name, peer, at.Loop().Time()-start))
			w.Close()
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"default: connected to ::1 after 100ms",
		"not interleaved: connected to ::1 after 200ms",
	}
	expectLog(t, want, log)
}

// With happy eyeballs, the next address is tried happy_eyeballs_delay
// after an attempt that neither succeeds nor fails (RFC 8305 "Connection
// Attempt Delay"); the first address is a black hole here, the second
// accepts, so the connect takes exactly the delay on the virtual clock
// and reaches the second address.
func TestResolveHappyEyeballsDelayStartsNextAttempt(t *testing.T) {
	t.Parallel()
	two := fakeResolver("127.0.0.2", "127.0.0.1")
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := serverPort(srv)
		defer blackHole(t, at, [4]byte{127, 0, 0, 2}, port)()
		for _, d := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
			start := at.Loop().Time()
			_, w, err := OpenConnection(at, "two.test", port, two, WithHappyEyeballsDelay(d))
			if err != nil {
				return err
			}
			peer := w.ExtraInfo("peername").(*net.TCPAddr).IP
			log = append(log, fmt.Sprintf("delay %v: connected to %v after %v", d, peer, at.Loop().Time()-start))
			w.Close()
		}
		// Sequential: the black hole is waited on with no second attempt.
		start := at.Loop().Time()
		_, err = asyncio.WaitForFunc(at, 5*time.Second, func(t *asyncio.T) (struct{}, error) {
			_, w, err := OpenConnection(t, "two.test", port, two, WithHappyEyeballsDelay(0))
			if err == nil {
				w.Close()
			}
			return struct{}{}, err
		})
		log = append(log, fmt.Sprintf("sequential: timeout=%v after %v", errors.Is(err, asyncio.ErrTimeout), at.Loop().Time()-start))
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"delay 100ms: connected to 127.0.0.1 after 100ms",
		"delay 300ms: connected to 127.0.0.1 after 300ms",
		"sequential: timeout=true after 5s",
	}
	expectLog(t, want, log)
}

// The resolved addresses alternate families, starting with the first
// one's (asyncio's _interleave_addrinfos).
func TestInterleaveFamilies(t *testing.T) {
	var in []net.IP
	for _, s := range []string{"::1", "::2", "::3", "1.1.1.1", "2.2.2.2"} {
		in = append(in, net.ParseIP(s))
	}
	got := fmt.Sprint(interleaveFamilies(in, 1))
	if got != "[::1 1.1.1.1 ::2 2.2.2.2 ::3]" {
		t.Fatal(got)
	}
	// interleave=2: the first two of the first family come first (as
	// CPython's first_address_family_count).
	if got := fmt.Sprint(interleaveFamilies(in, 2)); got != "[::1 ::2 1.1.1.1 ::3 2.2.2.2]" {
		t.Fatalf("count 2: %s", got)
	}
}

// Happy eyeballs (RFC 8305): attempt i+1 starts delay after attempt i, or
// at once when attempt i fails; the first success wins and the others are
// cancelled; a loser that connects anyway is discarded.
func TestHappyEyeballsStaggeredRace(t *testing.T) {
	var log []string
	var winner, value int
	runVirtual(t, func(at *asyncio.T) error {
		l := at.Loop()
		attempt := func(t *asyncio.T, i int) (int, error) {
			log = append(log, fmt.Sprintf("%v start %d", l.Time(), i))
			var d time.Duration
			var fail bool
			switch i {
			case 0:
				d = time.Hour // a black hole
			case 1:
				d, fail = 100*time.Millisecond, true // refused quickly
			case 2:
				d = 300 * time.Millisecond
			case 3:
				d = 250 * time.Millisecond
			}
			if err := asyncio.Sleep(t, d); err != nil {
				log = append(log, fmt.Sprintf("%v cancel %d", l.Time(), i))
				return 0, err
			}
			if fail {
				log = append(log, fmt.Sprintf("%v fail %d", l.Time(), i))
				return 0, errors.New("refused")
			}
			log = append(log, fmt.Sprintf("%v ok %d", l.Time(), i))
			return 100 + i, nil
		}
		var err error
		value, winner, _, err = staggeredRace(at, 5, 250*time.Millisecond, attempt, func(v int) {
			log = append(log, fmt.Sprintf("discard %d", v))
		})
		return err
	})
	want := []string{
		"0s start 0",
		"250ms start 1",
		"350ms fail 1",
		"350ms start 2",
		"600ms start 3",
		"650ms ok 2",
		"650ms cancel 0",
		"650ms cancel 3",
	}
	expectLog(t, want, log)
	if winner != 2 || value != 102 {
		t.Fatalf("winner %d value %d", winner, value)
	}
}

// When every staggered attempt fails, staggeredRace reports no winner and
// each attempt's error, joined under "Multiple exceptions" as asyncio
// raises them.
func TestHappyEyeballsAllFail(t *testing.T) {
	var errs []error
	var winner int
	runVirtual(t, func(at *asyncio.T) error {
		var err error
		_, winner, errs, err = staggeredRace(at, 3, time.Second, func(t *asyncio.T, i int) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			asyncio.Sleep(t, time.Duration(i+1)*time.Millisecond)
			return 0, fmt.Errorf("e%d", i)
		}, func(int) {})
		return err
	})
	if winner != -1 || fmt.Sprint(errs) != "[e0 e1 e2]" || joinConnectErrors(errs, false).Error() != "Multiple exceptions: e0, e1, e2" {
		t.Fatalf("winner %d errs %v", winner, errs)
	}
}

// With happy eyeballs (delay > 0, two or more addresses) and every attempt
// refused, the connect fails with the refusals joined, as asyncio raises
// them; it used to return fd 0 (stdin) and no error.
func TestHappyEyeballsAllRefusedReturnsError(t *testing.T) {
	t.Parallel()
	runNet(t, func(at *asyncio.T) error {
		port := closedPort(t)
		ips := []net.IP{net.ParseIP("127.0.0.2"), net.ParseIP("127.0.0.3")}
		fd, err := connectAny(at, ips, port, defaultHappyEyeballsDelay)
		if err == nil || fd >= 0 {
			t.Errorf("connectAny = fd %d, err %v; want -1 and the joined refusals", fd, err)
		}
		return nil
	})
}

// CreateConnection with a name that resolves to several addresses races
// them; here ::1 has no listener (refused) and 127.0.0.1 accepts.
func TestCreateConnectionHappyEyeballsRealSockets(t *testing.T) {
	t.Parallel()
	var peer string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "dual.test", serverPort(srv), fakeResolver("::1", "127.0.0.1"))
		if err != nil {
			return err
		}
		peer = w.ExtraInfo("peername").(net.Addr).String()
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if !strings.HasPrefix(peer, "127.0.0.1:") {
		t.Fatalf("peer %q", peer)
	}
}

// CreateServer looks a host name up with the WithResolver resolver and
// listens on every address it returns (asyncio's create_server with a
// host that resolves to several addresses).
func TestServerWithResolverListensOnEveryAddress(t *testing.T) {
	t.Parallel()
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := CreateServer(at, func() Protocol { return nil }, "both.test", 0, fakeResolver("127.0.0.1", "::1", "127.0.0.1"))
		if err != nil {
			return err
		}
		for _, a := range srv.Addrs() {
			log = append(log, a.(*net.TCPAddr).IP.String())
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	if d := cmp.Diff([]string{"127.0.0.1", "::1"}, log); d != "" {
		t.Fatal(d)
	}
}
