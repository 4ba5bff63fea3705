//go:build unix

package aio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// defaultHappyEyeballsDelay is RFC 8305's recommended "Connection Attempt
// Delay". asyncio's happy_eyeballs_delay defaults to None (sequential);
// its docs recommend 0.25 s, which is our default.
const defaultHappyEyeballsDelay = 250 * time.Millisecond

// resolveHost returns the addresses of host (asyncio's getaddrinfo, which
// asyncio runs in the default executor). IP literals are returned without
// a lookup, as in asyncio's _ipaddr_info, and so is a scoped IPv6 literal
// (whose zone the callers take from scopedLiteral), which asyncio leaves
// to getaddrinfo's numeric parsing. Names are looked up with r
// through asyncio.Go: each lookup on a goroutine of its own, so lookups do
// not queue behind the bounded default executor (or behind other blocking
// work there); its result comes back through CallSoonThreadsafe, and the
// loop counts it as outside work (a virtual-time loop waits for it instead
// of reporting a deadlock). Cancelling t cancels the lookup's context and
// returns at once.
func resolveHost(t *asyncio.T, r Resolver, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	if ip, _, ok := scopedLiteral(host); ok {
		return []net.IP{ip}, nil
	}
	return asyncio.Go(t, func(ctx context.Context) ([]net.IP, error) {
		addrs, err := r.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("getaddrinfo() returned empty list for %q", host)
		}
		ips := make([]net.IP, len(addrs))
		for i, a := range addrs {
			ips[i] = a.IP
		}
		return ips, nil
	})
}

// scopedLiteral returns the address and zone of host if it is an IPv6
// literal with a zone ("fe80::1%eth0"), which net.ParseIP refuses and
// asyncio's getaddrinfo resolves, without a lookup, to an address whose
// scope id is the zone's interface.
func scopedLiteral(host string) (net.IP, string, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() == "" {
		return nil, "", false
	}
	return net.IP(a.WithZone("").AsSlice()), a.Zone(), true
}

// byFamily keeps the addresses of ips of family (WithFamily; AF_UNSPEC
// keeps all), as getaddrinfo's family does. None left is getaddrinfo's
// error: EAI_ADDRFAMILY for an address literal, EAI_NODATA for a name.
func byFamily(host string, ips []net.IP, family int) ([]net.IP, error) {
	if family == unix.AF_UNSPEC {
		return ips, nil
	}
	var kept []net.IP
	for _, ip := range ips {
		if (ip.To4() != nil) == (family == unix.AF_INET) {
			kept = append(kept, ip)
		}
	}
	if len(kept) == 0 {
		msg := "No address associated with hostname"
		if _, _, scoped := scopedLiteral(host); net.ParseIP(host) != nil || scoped {
			msg = "Address family for hostname not supported"
		}
		return nil, &net.DNSError{Err: msg, Name: host, IsNotFound: true}
	}
	return kept, nil
}

// resolveFamily is resolveHost keeping WithFamily's family only.
func resolveFamily(t *asyncio.T, o *options, host string) ([]net.IP, error) {
	ips, err := resolveHost(t, o.resolver, host)
	if err != nil {
		return nil, err
	}
	return byFamily(host, ips, o.family)
}

// dialHost resolves host and connects a new stream socket to one of its
// addresses at port, as CreateConnection and DialConn do: families
// interleaved and attempts staggered as the options say.
func dialHost(t *asyncio.T, host string, port int, o *options) (int, error) {
	if o.simHost != nil {
		return o.simHost.dial(t, host, port, o.allErrors)
	}
	ips, err := resolveFamily(t, o, host)
	if err != nil {
		return -1, err
	}
	if o.interleaves() {
		ips = interleaveFamilies(ips, o.interleaveCount())
	}
	local, err := resolveLocal(t, o)
	if err != nil {
		return -1, err
	}
	_, zone, _ := scopedLiteral(host) // "" for any other host
	return connectAnyFrom(t, ips, port, zone, o.happyEyeballsDelay, local, o.allErrors)
}

// localBind is WithLocalAddr resolved: the addresses to bind to, and the
// port.
type localBind struct {
	ips  []net.IP
	port int
	zone string // a scoped literal host's IPv6 zone
}

// resolveLocal looks up WithLocalAddr's host (nil without the option).
func resolveLocal(t *asyncio.T, o *options) (*localBind, error) {
	if o.localAddr == nil {
		return nil, nil
	}
	host := o.localAddr.host
	if host == "" {
		host = "0.0.0.0" // asyncio's local_addr=(None, port): the wildcard
	}
	ips, err := resolveFamily(t, o, host)
	if err != nil {
		return nil, err
	}
	_, zone, _ := scopedLiteral(host)
	return &localBind{ips, o.localAddr.port, zone}, nil
}

// bindLocal binds fd, of family, to the first address of local of that
// family it can (asyncio's _connect_sock). failed are the errors of the
// binds that failed, in order, also when a later one succeeded: asyncio
// counts each among the connect's errors if the attempt fails. When every
// bind fails, err is the one bind's error, or an attemptErrors of each.
func bindLocal(fd, family int, local *localBind) (failed []error, err error) {
	for _, ip := range local.ips {
		sa, f := sockaddrForZone(ip, local.port, local.zone)
		if f != family {
			continue // skip local addresses of different family
		}
		err := unix.Bind(fd, sa)
		if err == nil {
			return failed, nil
		}
		name := ip.String()
		if local.zone != "" {
			name += "%" + local.zone
		}
		failed = append(failed, fmt.Errorf("error while attempting to bind on address %s: %w", addrString(name, local.port), os.NewSyscallError("bind", err)))
	}
	switch len(failed) {
	case 0:
	case 1:
		return failed, failed[0]
	default:
		return failed, attemptErrors(failed)
	}
	name := "AF_INET"
	if family == unix.AF_INET6 {
		name = "AF_INET6"
	}
	return nil, fmt.Errorf("no matching local address with family=%s found", name)
}

// attemptErrors are the errors of one connect attempt that failed more
// than once: the binds to local addresses of its family that failed, then
// the connect's error if one bind succeeded (asyncio's _connect_sock
// keeps each in the attempt's list of exceptions). It reads
// as its last error, and joinConnectErrors counts each.
type attemptErrors []error

func (e attemptErrors) Error() string   { return e[len(e)-1].Error() }
func (e attemptErrors) Unwrap() []error { return e }

// flattenAttemptErrors lists each error of errs, those of an
// attemptErrors one by one (asyncio's
// `[exc for sub in exceptions for exc in sub]`).
func flattenAttemptErrors(errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		if ae, ok := err.(attemptErrors); ok {
			out = append(out, ae...)
		} else {
			out = append(out, err)
		}
	}
	return out
}

// addrString formats host:port for messages.
func addrString(host string, port int) string {
	return net.JoinHostPort(host, fmt.Sprint(port))
}

// interleaveFamilies reorders addrs so that the address families
// alternate, starting with the first address's family, of which the first
// firstCount addresses come first (asyncio's _interleave_addrinfos).
func interleaveFamilies(addrs []net.IP, firstCount int) []net.IP {
	var v4, v6 []net.IP
	for _, ip := range addrs {
		if ip.To4() != nil {
			v4 = append(v4, ip)
		} else {
			v6 = append(v6, ip)
		}
	}
	if len(v4) == 0 || len(v6) == 0 {
		return addrs
	}
	first, second := v6, v4
	if addrs[0].To4() != nil {
		first, second = v4, v6
	}
	out := make([]net.IP, 0, len(addrs))
	if n := min(firstCount-1, len(first)); n > 0 {
		out = append(out, first[:n]...)
		first = first[n:]
	}
	for i := 0; i < len(first) || i < len(second); i++ {
		if i < len(first) {
			out = append(out, first[i])
		}
		if i < len(second) {
			out = append(out, second[i])
		}
	}
	return out
}

// connectAny connects to one of ips:port: one after the other when delay
// <= 0 or there is one address, else with staggered, racing attempts.
func connectAny(t *asyncio.T, ips []net.IP, port int, delay time.Duration) (int, error) {
	return connectAnyFrom(t, ips, port, "", delay, nil, false)
}

// connectAnyFrom is connectAny binding each socket to local first (nil:
// no bind), with zone the IPv6 zone of a scoped literal host ("" for
// none). If every attempt fails, allErrors (WithAllErrors) returns
// their errors as an *asyncio.ExceptionGroup (see joinConnectErrors).
func connectAnyFrom(t *asyncio.T, ips []net.IP, port int, zone string, delay time.Duration, local *localBind, allErrors bool) (int, error) {
	attempt := func(t *asyncio.T, i int) (int, error) {
		sa, family := sockaddrForZone(ips[i], port, zone)
		fd, err := dialOneFrom(t, family, sa, local)
		if err == nil || asyncio.IsCancelled(err) {
			return fd, err
		}
		host := ips[i].String()
		if zone != "" && family == unix.AF_INET6 {
			host += "%" + zone
		}
		where := addrString(host, port)
		if ae, ok := err.(attemptErrors); ok {
			wrapped := make(attemptErrors, len(ae))
			for j, e := range ae {
				wrapped[j] = fmt.Errorf("connect to %s: %w", where, e)
			}
			return fd, wrapped
		}
		return fd, fmt.Errorf("connect to %s: %w", where, err)
	}
	if delay <= 0 || len(ips) == 1 {
		var errs []error
		for i := range ips {
			fd, err := attempt(t, i)
			if err == nil {
				return fd, nil
			}
			if asyncio.IsCancelled(err) {
				return -1, err
			}
			errs = append(errs, err)
		}
		return -1, joinConnectErrors(errs, allErrors)
	}
	fd, winner, errs, err := staggeredRace(t, len(ips), delay, attempt, func(fd int) { unix.Close(fd) })
	if err != nil {
		return -1, err
	}
	if winner < 0 {
		// No attempt succeeded: fd is the zero value, not a socket.
		return -1, joinConnectErrors(errs, allErrors)
	}
	return fd, nil
}

// joinConnectErrors is asyncio's rule for failed connects
// (base_events.py create_connection): with all (all_errors=True) every
// error is a member of an *asyncio.ExceptionGroup "create_connection
// failed", even one; else one error is returned as is, and so is the
// first when all have the same text, and several are one error reading
// "Multiple exceptions: " and their texts joined with ", ", which unwraps
// to each of them (errors.Is and errors.As reach every attempt's error
// either way).
func joinConnectErrors(errs []error, all bool) error {
	errs = flattenAttemptErrors(errs)
	if len(errs) == 0 {
		return errors.New("no addresses to connect to")
	}
	if all {
		return &asyncio.ExceptionGroup{Msg: "create_connection failed", Errs: errs}
	}
	same := true
	for _, e := range errs[1:] {
		if e.Error() != errs[0].Error() {
			same = false
		}
	}
	if same {
		return errs[0]
	}
	return &multipleConnectErrors{errs}
}

// multipleConnectErrors is asyncio's OSError('Multiple exceptions: ...')
// of a connect whose attempts failed with different errors.
type multipleConnectErrors struct{ errs []error }

func (e *multipleConnectErrors) Error() string {
	texts := make([]string, len(e.errs))
	for i, err := range e.errs {
		texts[i] = err.Error()
	}
	return "Multiple exceptions: " + strings.Join(texts, ", ")
}

func (e *multipleConnectErrors) Unwrap() []error { return e.errs }

// staggeredRace is asyncio.staggered.staggered_race for n attempts of
// type V: attempt 0 starts at once; attempt i+1 starts when attempt i
// fails or delay after attempt i started, whichever is first. The first
// attempt to succeed wins and every other one is cancelled; a loser that
// succeeds anyway is handed to discard. It returns the winner's value and
// index (-1 if all failed), the error of each failed attempt, and a
// cancellation of t itself (all attempts are then cancelled and awaited).
func staggeredRace[V any](t *asyncio.T, n int, delay time.Duration, attempt func(t *asyncio.T, i int) (V, error), discard func(V)) (V, int, []error, error) {
	l := t.Loop()
	var zero V
	tasks := make([]*asyncio.Task[V], 0, n)
	errs := make([]error, n)
	failed := make([]bool, n)
	var wake *asyncio.Future[struct{}]
	signal := func() {
		if wake != nil && !wake.Done() {
			wake.SetResult(struct{}{})
		}
	}
	var lastStart time.Duration
	start := func() {
		i := len(tasks)
		tk := asyncio.CreateTask(t, func(ct *asyncio.T) (V, error) { return attempt(ct, i) })
		tk.AddDoneCallback(signal)
		tasks = append(tasks, tk)
		lastStart = l.Time()
	}
	winner := -1
	// If the loop closes while this waits (Close unwinds t), no attempt
	// that connected may keep its socket: the winner's, or a loser's that
	// was not discarded yet.
	handedOut := false
	discarded := make([]bool, n)
	defer func() {
		if handedOut {
			return
		}
		for i, tk := range tasks {
			if v, err := tk.Result(); tk.Done() && err == nil && !discarded[i] {
				discarded[i] = true
				discard(v)
			}
		}
	}()
	// cancelRest cancels every attempt but the winner, waits for them, and
	// discards any that connected anyway.
	cancelRest := func() {
		for i, tk := range tasks {
			if i != winner {
				tk.Cancel()
			}
		}
		for i, tk := range tasks {
			if i == winner {
				continue
			}
			for !tk.Done() {
				// Awaiting a task we cancelled; a second cancellation of t
				// does not stop the cleanup.
				w := asyncio.NewFuture[struct{}](l)
				tk.AddDoneCallback(func() {
					if !w.Done() {
						w.SetResult(struct{}{})
					}
				})
				w.Await(t)
			}
			if v, err := tk.Result(); err == nil && !discarded[i] {
				discarded[i] = true
				discard(v)
			}
		}
	}
	start()
	for {
		// Collect finished attempts.
		for i, tk := range tasks {
			if !tk.Done() || failed[i] || i == winner {
				continue
			}
			v, err := tk.Result()
			if err == nil && winner < 0 {
				winner = i
				cancelRest()
				handedOut = true
				return v, i, errs, nil
			}
			failed[i] = true
			errs[i] = err
		}
		running := 0
		for i, tk := range tasks {
			if !tk.Done() && !failed[i] {
				running++
			}
		}
		lastFailed := failed[len(tasks)-1]
		if len(tasks) < n && (lastFailed || l.Time() >= lastStart+delay) {
			start()
			continue
		}
		if running == 0 && len(tasks) == n {
			var out []error
			for _, e := range errs {
				if e != nil {
					out = append(out, e)
				}
			}
			handedOut = true
			return zero, -1, out, nil
		}
		wake = asyncio.NewFuture[struct{}](l)
		var timer *asyncio.TimerHandle
		if len(tasks) < n {
			timer = l.CallAt(lastStart+delay, signal)
		}
		_, err := wake.Await(t)
		wake = nil
		if timer != nil {
			timer.Cancel()
		}
		if err != nil {
			cancelRest()
			handedOut = true
			return zero, -1, nil, err
		}
	}
}
