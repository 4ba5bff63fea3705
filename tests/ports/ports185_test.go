//go:build unix

package ports_test

// Ports p185 onward (h40): the example programs of CPython 3.13's asyncio
// documentation, ported line for line as a newcomer would (what the docs
// show is what gets tried first). Each testdata/pNNN_doc_*.py says which
// page it comes from; the delays are scaled down and the wall-clock
// prints (time.strftime, datetime.now) are loop-time offsets. Same
// conventions as ports_test.go.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// ---------------------------------------------------------------------------
// p185_doc_say_after.py (asyncio-task.rst, Coroutines)

func TestPortDocSayAfter(t *testing.T) {
	runPort(t, cpythonTrace("p185_doc_say_after"), func(p *probe, tk *asyncio.T) error {
		sayAfter := func(delay time.Duration, what string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				p.log("%s", what)
				return nil
			}
		}

		p.restart()
		p.log("started at")
		if err := sayAfter(100*ms, "hello")(tk); err != nil {
			return err
		}
		if err := sayAfter(200*ms, "world")(tk); err != nil {
			return err
		}
		p.log("finished at")

		p.restart()
		task1 := asyncio.CreateTaskErr(tk, sayAfter(100*ms, "hello"))
		task2 := asyncio.CreateTaskErr(tk, sayAfter(200*ms, "world"))
		p.log("started at")
		if _, err := task1.Await(tk); err != nil {
			return err
		}
		if _, err := task2.Await(tk); err != nil {
			return err
		}
		p.log("finished at")

		p.restart()
		err := asyncio.TaskGroup(tk, func(tg *asyncio.Group) error {
			if _, err := asyncio.SpawnErr(tg, sayAfter(100*ms, "hello")); err != nil {
				return err
			}
			if _, err := asyncio.SpawnErr(tg, sayAfter(200*ms, "world")); err != nil {
				return err
			}
			p.log("started at")
			return nil
		})
		if err != nil {
			return err
		}
		p.log("finished at")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p186_doc_display_date.py (asyncio-task.rst, Sleeping)

func TestPortDocDisplayDate(t *testing.T) {
	runPort(t, cpythonTrace("p186_doc_display_date"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		endTime := loop.Time() + 500*ms
		for {
			p.log("now")
			if loop.Time()+100*ms >= endTime {
				break
			}
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p187_doc_gather_factorial.py (asyncio-task.rst, Running Tasks Concurrently)

func TestPortDocGatherFactorial(t *testing.T) {
	runPort(t, cpythonTrace("p187_doc_gather_factorial"), func(p *probe, tk *asyncio.T) error {
		factorial := func(name string, number int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				f := 1
				for i := 2; i <= number; i++ {
					p.log("Task %s: Compute factorial(%d), currently i=%d...", name, number, i)
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return 0, err
					}
					f *= i
				}
				p.log("Task %s: factorial(%d) = %d", name, number, f)
				return f, nil
			}
		}
		fails := func(name string, after time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, after); err != nil {
					return 0, err
				}
				p.log("Task %s: raising", name)
				return 0, newValueError(name)
			}
		}
		ints := func(l []int) string { return strings.ReplaceAll(fmt.Sprint(l), " ", ", ") }

		p.restart()
		L, err := asyncio.GatherFuncs(tk, factorial("A", 2), factorial("B", 3), factorial("C", 4)).Await(tk)
		if err != nil {
			return err
		}
		p.log("%s", ints(L))

		p.restart()
		outs, err := asyncio.GatherOutcomesFuncs(tk,
			factorial("A", 2),
			fails("F", 160*ms),
			factorial("C", 3),
		).Await(tk)
		if err != nil {
			return err
		}
		var parts []string
		for _, o := range outs {
			if o.Err != nil {
				parts = append(parts, "'"+pd(o.Err)+"'")
			} else {
				parts = append(parts, fmt.Sprint(o.Value))
			}
		}
		p.log("[%s]", strings.Join(parts, ", "))

		p.restart()
		_, err = asyncio.GatherFuncs(tk, factorial("A", 3), fails("F", 160*ms)).Await(tk)
		if ve := (*valueError)(nil); errors.As(err, &ve) {
			p.log("gather raised %s", pd(err))
		} else {
			return fmt.Errorf("gather: %v, want the ValueError", err)
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("A was not cancelled: it finished on its own")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p188_doc_shield.py (asyncio-task.rst, Shielding From Cancellation)

func TestPortDocShield(t *testing.T) {
	runPort(t, cpythonTrace("p188_doc_shield"), func(p *probe, tk *asyncio.T) error {
		backgroundTasks := map[*asyncio.Task[string]]bool{}
		something := func(t *asyncio.T) (string, error) {
			p.log("something starts")
			if err := asyncio.Sleep(t, 300*ms); err != nil {
				return "", err
			}
			p.log("something finishes")
			return "result", nil
		}
		caller := func(t *asyncio.T) error {
			res, err := asyncio.Shield(asyncio.CreateTask(t, something)).Await(t)
			if err != nil {
				return err
			}
			p.log("caller got %s", res)
			return nil
		}
		callerWithTask := func(t *asyncio.T) error {
			task := asyncio.CreateTask(t, something)
			backgroundTasks[task] = true
			task.AddDoneCallback(func() { delete(backgroundTasks, task) })
			res, err := asyncio.Shield(task).Await(t)
			if asyncio.IsCancelled(err) {
				p.log("caller cancelled, task done %s kept %s", pb(task.Done()), pb(backgroundTasks[task]))
				return err
			}
			if err != nil {
				return err
			}
			p.log("caller got %s", res)
			return nil
		}
		cancelAndAwait := func(outer *asyncio.Task[struct{}]) error {
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			outer.Cancel()
			_, err := outer.Await(tk)
			if !asyncio.IsCancelled(err) {
				return fmt.Errorf("outer: %v, want a cancellation", err)
			}
			p.log("outer %s", pd(err))
			return nil
		}

		p.restart()
		if err := cancelAndAwait(asyncio.CreateTaskErr(tk, caller)); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}

		p.restart()
		if err := cancelAndAwait(asyncio.CreateTaskErr(tk, callerWithTask)); err != nil {
			return err
		}
		p.log("background tasks %d", len(backgroundTasks))
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("background tasks %d", len(backgroundTasks))

		p.restart()
		outer := asyncio.CreateTaskErr(tk, caller)
		if err := asyncio.Sleep(tk, 400*ms); err != nil {
			return err
		}
		p.log("uncancelled caller done %s", pb(outer.Done()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p189_doc_timeouts.py (asyncio-task.rst, Timeouts)

func TestPortDocTimeouts(t *testing.T) {
	runPort(t, cpythonTrace("p189_doc_timeouts"), func(p *probe, tk *asyncio.T) error {
		longRunningTask := func(t *asyncio.T) error { return asyncio.Sleep(t, time.Hour) }
		eternity := func(t *asyncio.T) (struct{}, error) {
			if err := asyncio.Sleep(t, time.Hour); err != nil {
				return noValue, err
			}
			p.log("yay!")
			return noValue, nil
		}

		p.restart()
		err := asyncio.Timeout(tk, 100*ms, func(*asyncio.TimeoutScope) error {
			return longRunningTask(tk)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("The long operation timed out, but we've handled it.")
		} else if err != nil {
			return err
		}
		p.log("This statement will run regardless.")

		p.restart()
		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("when %s", p.rel(cm.When()))
			newDeadline := tk.Loop().Time() + 100*ms
			if err := cm.Reschedule(newDeadline); err != nil {
				return err
			}
			p.log("when %s", p.rel(cm.When()))
			return longRunningTask(tk)
		})
		if err != nil && !errors.Is(err, asyncio.ErrTimeout) {
			return err
		}
		if cm.Expired() {
			p.log("Looks like we haven't finished on time.")
		}

		p.restart()
		loop := tk.Loop()
		deadline := loop.Time() + 200*ms
		err = asyncio.TimeoutAt(tk, deadline, func(*asyncio.TimeoutScope) error {
			return longRunningTask(tk)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("The long operation timed out, but we've handled it.")
		} else if err != nil {
			return err
		}
		p.log("This statement will run regardless.")

		p.restart()
		_, err = asyncio.WaitForFunc(tk, 100*ms, eternity)
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("timeout!")
		} else if err != nil {
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p190_doc_sync_primitives.py (asyncio-sync.rst)

var docObjectAt = regexp.MustCompile(` object at 0x[0-9a-f]+`)

// docRepr is the program's r(obj): repr without the address.
func docRepr(obj fmt.Stringer) string { return docObjectAt.ReplaceAllString(obj.String(), "") }

func TestPortDocSyncPrimitives(t *testing.T) {
	runPort(t, cpythonTrace("p190_doc_sync_primitives"), func(p *probe, tk *asyncio.T) error {
		waiter := func(event *asyncio.Event) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				p.log("waiting for it ...")
				if err := event.Wait(t); err != nil {
					return err
				}
				p.log("... got it!")
				return nil
			}
		}
		eventMain := func(t *asyncio.T) error {
			event := asyncio.NewEvent()
			waiterTask := asyncio.CreateTaskErr(t, waiter(event))
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			event.Set()
			_, err := waiterTask.Await(t)
			return err
		}
		exampleBarrier := func(t *asyncio.T) error {
			b := asyncio.NewBarrier(3)
			//asynciovet:ignore unawaitedtask the docs' example drops both tasks: the barrier's third Wait lets them finish
			asyncio.CreateTask(t, b.Wait)
			//asynciovet:ignore unawaitedtask as above
			asyncio.CreateTask(t, b.Wait)
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
			p.log("%s", docRepr(b))
			if _, err := b.Wait(t); err != nil {
				return err
			}
			p.log("%s", docRepr(b))
			p.log("barrier passed")
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
			p.log("%s", docRepr(b))
			return nil
		}

		p.restart()
		lock := asyncio.NewLock()
		useLock := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				return noValue, asyncio.WithLock(t, lock, func() error {
					p.log("%s has the lock %s", name, docRepr(lock))
					return asyncio.Sleep(t, 100*ms)
				})
			}
		}
		useLockByHand := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (_ struct{}, err error) {
				if err := lock.Acquire(t); err != nil {
					return noValue, err
				}
				defer func() {
					if rerr := lock.Release(); rerr != nil && err == nil {
						err = rerr
					}
				}()
				p.log("%s has the lock by hand %s", name, docRepr(lock))
				return noValue, asyncio.Sleep(t, 100*ms)
			}
		}
		if _, err := asyncio.GatherFuncs(tk, useLock("a"), useLockByHand("b"), useLock("c")).Await(tk); err != nil {
			return err
		}
		p.log("unlocked %s", docRepr(lock))

		p.restart()
		if err := eventMain(tk); err != nil {
			return err
		}

		p.restart()
		cond := asyncio.NewCondition(nil)
		var items []int
		consumer := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				return noValue, asyncio.WithLock(t, cond, func() error {
					if err := cond.WaitFor(t, func() bool { return len(items) > 0 }); err != nil {
						return err
					}
					item := items[0]
					items = items[1:]
					p.log("%s took %d", name, item)
					return nil
				})
			}
		}
		producer := func(t *asyncio.T) (struct{}, error) {
			for i := range 2 {
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return noValue, err
				}
				err := asyncio.WithLock(t, cond, func() error {
					items = append(items, i)
					p.log("produced %d", i)
					cond.Notify(1)
					return nil
				})
				if err != nil {
					return noValue, err
				}
			}
			return noValue, nil
		}
		if _, err := asyncio.GatherFuncs(tk, consumer("c1"), consumer("c2"), producer).Await(tk); err != nil {
			return err
		}

		p.restart()
		sem := asyncio.NewSemaphore(2)
		useSem := func(name string, hold time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				err := asyncio.WithLock(t, sem, func() error {
					p.log("%s in %s", name, docRepr(sem))
					return asyncio.Sleep(t, hold)
				})
				if err != nil {
					return noValue, err
				}
				p.log("%s out", name)
				return noValue, nil
			}
		}
		if _, err := asyncio.GatherFuncs(tk, useSem("s1", 100*ms), useSem("s2", 200*ms), useSem("s3", 100*ms)).Await(tk); err != nil {
			return err
		}
		p.log("%s", docRepr(sem))

		p.restart()
		return exampleBarrier(tk)
	})
}

// ---------------------------------------------------------------------------
// p191_doc_queue_workers.py (asyncio-queue.rst, Examples)

func TestPortDocQueueWorkers(t *testing.T) {
	runPort(t, cpythonTrace("p191_doc_queue_workers"), func(p *probe, tk *asyncio.T) error {
		sleeps := []float64{0.031, 0.052, 0.017, 0.044, 0.063, 0.008, 0.029, 0.071, 0.036, 0.012}
		worker := func(name string, queue *asyncio.Queue[float64]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					sleepFor, err := queue.Get(t)
					if err != nil {
						return err
					}
					if err := asyncio.Sleep(t, time.Duration(sleepFor*float64(time.Second))); err != nil {
						return err
					}
					if err := queue.TaskDone(); err != nil {
						return err
					}
					p.log("%s has slept for %.3f seconds", name, sleepFor)
				}
			}
		}

		p.restart()
		loop := tk.Loop()
		queue := asyncio.NewQueue[float64](0)
		totalSleepTime := 0.0
		for _, sleepFor := range sleeps {
			totalSleepTime += sleepFor
			if err := queue.PutNowait(sleepFor); err != nil {
				return err
			}
		}
		var tasks []*asyncio.Task[struct{}]
		for i := range 3 {
			task := asyncio.CreateTaskErr(tk, worker(fmt.Sprintf("worker-%d", i), queue))
			tasks = append(tasks, task)
		}
		startedAt := loop.Time()
		if err := queue.Join(tk); err != nil {
			return err
		}
		totalSleptFor := loop.Time() - startedAt
		for _, task := range tasks {
			task.Cancel()
		}
		results, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		var names []string
		for _, r := range results {
			if asyncio.IsCancelled(r.Err) {
				names = append(names, "CancelledError")
			} else {
				names = append(names, pd(r.Err))
			}
		}
		p.log("%s", pstrs(names))
		p.log("====")
		p.log("3 workers slept in parallel for %.1f seconds", totalSleptFor.Seconds())
		p.log("total expected sleep time: %.2f seconds", totalSleepTime)
		return nil
	})
}

// ---------------------------------------------------------------------------
// p192_doc_loop_callbacks.py (asyncio-eventloop.rst, Examples)

func TestPortDocLoopCallbacks(t *testing.T) {
	var out strings.Builder
	p := &probe{}
	logf := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

	helloWorld := func(loop *asyncio.Loop) {
		p.restart()
		p.log("Hello World")
		loop.Stop()
	}
	loop := asyncio.NewTestLoop()
	p.l = loop
	loop.CallSoon(func() { helloWorld(loop) })
	err := loop.RunForever()
	if cerr := loop.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(p.b.String())
	p.b.Reset()
	logf("closed %s", pb(loop.IsClosed()))

	var displayDate func(endTime time.Duration, loop *asyncio.Loop)
	displayDate = func(endTime time.Duration, loop *asyncio.Loop) {
		p.log("now")
		if loop.Time()+100*ms < endTime {
			loop.CallLater(100*ms, func() { displayDate(endTime, loop) })
		} else {
			loop.Stop()
		}
	}
	start := func(endTime time.Duration, loop *asyncio.Loop) {
		p.restart()
		displayDate(endTime, loop)
	}
	loop = asyncio.NewTestLoop()
	p.l = loop
	endTime := loop.Time() + 500*ms
	loop.CallSoon(func() { start(endTime, loop) })
	err = loop.RunForever()
	if cerr := loop.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(p.b.String())
	logf("closed %s", pb(loop.IsClosed()))

	if want := cpythonTrace("p192_doc_loop_callbacks"); out.String() != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, out.String()))
	}
}

// ---------------------------------------------------------------------------
// p193_doc_as_completed.py (asyncio-task.rst, as_completed)

// docConn is the pair open_connection returns.
type docConn struct{ reader, writer string }

func TestPortDocAsCompleted(t *testing.T) {
	runPort(t, cpythonTrace("p193_doc_as_completed"), func(p *probe, tk *asyncio.T) error {
		openConnection := func(host string, _ int, delay time.Duration) func(*asyncio.T) (docConn, error) {
			return func(t *asyncio.T) (docConn, error) {
				if err := asyncio.Sleep(t, delay); err != nil {
					return docConn{}, err
				}
				return docConn{"reader(" + host + ")", "writer(" + host + ")"}, nil
			}
		}

		p.restart()
		ipv4Connect := asyncio.CreateTask(tk, openConnection("127.0.0.1", 80, 200*ms))
		ipv6Connect := asyncio.CreateTask(tk, openConnection("::1", 80, 100*ms))
		tasks := []*asyncio.Task[docConn]{ipv4Connect, ipv6Connect}
		for earliestConnect, err := range asyncio.AsCompleted(tk, tasks, asyncio.Never) {
			if err != nil {
				return err
			}
			c, err := earliestConnect.Await(tk)
			if err != nil {
				return err
			}
			if earliestConnect == ipv6Connect {
				p.log("IPv6 connection established. %s %s", c.reader, c.writer)
			} else {
				p.log("IPv4 connection established. %s %s", c.reader, c.writer)
			}
		}

		p.restart()
		ipv4Connect = asyncio.CreateTask(tk, openConnection("127.0.0.1", 80, 100*ms))
		ipv6Connect = asyncio.CreateTask(tk, openConnection("::1", 80, 200*ms))
		tasks = []*asyncio.Task[docConn]{ipv4Connect, ipv6Connect}
		for _, nextConnect := range asyncio.AsCompletedFuncs(tk, asyncio.Awaitables(tasks), asyncio.Never) {
			c, err := nextConnect(tk)
			if err != nil {
				return err
			}
			p.log("connected %s %s", c.reader, c.writer)
		}

		p.restart()
		ipv4Connect = asyncio.CreateTask(tk, openConnection("127.0.0.1", 80, 100*ms))
		ipv6Connect = asyncio.CreateTask(tk, openConnection("::1", 80, 300*ms))
		tasks = []*asyncio.Task[docConn]{ipv4Connect, ipv6Connect}
		for earliestConnect, err := range asyncio.AsCompleted(tk, tasks, 200*ms) {
			if errors.Is(err, asyncio.ErrTimeout) {
				p.log("as_completed raised %s ipv6 done %s", pd(err), pb(ipv6Connect.Done()))
				break
			}
			if err != nil {
				return err
			}
			c, err := earliestConnect.Await(tk)
			if err != nil {
				return err
			}
			p.log("connected %s %s", c.reader, c.writer)
		}
		ipv6Connect.Cancel()
		return nil
	})
}

// ---------------------------------------------------------------------------
// p194_doc_stream_echo.py (asyncio-stream.rst, Examples)

// docHostOf is addr[0] of a (host, port) tuple.
func docHostOf(a net.Addr) string {
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

func TestPortDocStreamEcho(t *testing.T) {
	runPort(t, cpythonTrace("p194_doc_stream_echo"), func(p *probe, tk *asyncio.T) error {
		// Real loopback sockets: a server on the simulated network
		// reports its host's address (10.0.0.1) as its sockname, where
		// the program prints 127.0.0.1 (README, "Testing network code in
		// virtual time").
		sim := aio.WithNetwork(nil)
		handleEcho := func(t *asyncio.T, reader *aio.StreamReader, writer *aio.StreamWriter) error {
			data, err := reader.Read(t, 100)
			if err != nil {
				return err
			}
			message := string(data)
			addr := aio.PeerName(writer)
			p.log("Received '%s' from '%s'", message, docHostOf(addr))
			p.log("Send: '%s'", message)
			if err := writer.Write(data); err != nil {
				return err
			}
			if err := writer.Drain(t); err != nil {
				return err
			}
			p.log("Close the connection")
			writer.Close()
			return writer.WaitClosed(t)
		}
		tcpEchoClient := func(t *asyncio.T, message string, port int) error {
			reader, writer, err := aio.OpenConnection(t, "127.0.0.1", port, sim)
			if err != nil {
				return err
			}
			p.log("Send: '%s'", message)
			if err := writer.Write([]byte(message)); err != nil {
				return err
			}
			if err := writer.Drain(t); err != nil {
				return err
			}
			data, err := reader.Read(t, 100)
			if err != nil {
				return err
			}
			p.log("Received: '%s'", data)
			p.log("Close the connection")
			writer.Close()
			return writer.WaitClosed(t)
		}
		serve := func(server *aio.Server) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				return aio.WithServer(t, server, func() error { return server.ServeForever(t) })
			}
		}
		handleHead := func(t *asyncio.T, reader *aio.StreamReader, writer *aio.StreamWriter) error {
			request, err := reader.ReadUntil(t, []byte("\r\n\r\n"))
			if err != nil {
				return err
			}
			p.log("server got %s", strings.SplitN(string(request), "\r\n", 2)[0])
			if err := writer.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n")); err != nil {
				return err
			}
			if err := writer.Drain(t); err != nil {
				return err
			}
			writer.Close()
			return writer.WaitClosed(t)
		}
		printHTTPHeaders := func(t *asyncio.T, rawURL string) error {
			u, err := url.Parse(rawURL)
			if err != nil {
				return err
			}
			port, err := strconv.Atoi(u.Port())
			if err != nil {
				return err
			}
			reader, writer, err := aio.OpenConnection(t, u.Hostname(), port, sim)
			if err != nil {
				return err
			}
			path := u.Path
			if path == "" {
				path = "/"
			}
			query := "HEAD " + path + " HTTP/1.0\r\n" +
				"Host: " + u.Hostname() + "\r\n" +
				"\r\n"
			if err := writer.Write([]byte(query)); err != nil {
				return err
			}
			for {
				line, err := reader.ReadLine(t)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
				if s := strings.TrimRight(string(line), " \t\r\n"); s != "" {
					p.log("HTTP header> %s", s)
				}
			}
			writer.Close()
			return writer.WaitClosed(t)
		}

		p.restart()
		server, err := aio.StartServer(tk, handleEcho, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		var addrs []string
		for _, a := range server.Addrs() {
			addrs = append(addrs, docHostOf(a))
		}
		p.log("Serving on %s", strings.Join(addrs, ", "))
		port := portOf(server)
		serving := asyncio.CreateTaskErr(tk, serve(server))
		if err := tcpEchoClient(tk, "Hello World!", port); err != nil {
			return err
		}
		serving.Cancel()
		if _, err := serving.Await(tk); asyncio.IsCancelled(err) {
			p.log("serve_forever %s serving %s", pd(err), pb(server.IsServing()))
		} else {
			return fmt.Errorf("serve_forever: %v, want a cancellation", err)
		}

		p.restart()
		server, err = aio.StartServer(tk, handleHead, "127.0.0.1", 0, sim)
		if err != nil {
			return err
		}
		port = portOf(server)
		err = aio.WithServer(tk, server, func() error {
			return printHTTPHeaders(tk, fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
		})
		if err != nil {
			return err
		}
		p.log("closed, serving %s", pb(server.IsServing()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p195_doc_socketpair.py (asyncio-eventloop.rst, asyncio-stream.rst and
// asyncio-protocol.rst socketpair examples)

// docSocketpair is socket.docSocketpair(): a connected pair of (blocking) Unix
// stream sockets.
func docSocketpair() (int, int, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, -1, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds[0], fds[1], nil
}

// docProtocol is the program's MyProtocol.
type docProtocol struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
	onConLost *asyncio.Future[bool]
}

func (m *docProtocol) ConnectionMade(tr aio.Transport) {
	m.transport = tr
	m.p.log("connection_made")
}

func (m *docProtocol) DataReceived(data []byte) {
	m.p.log("Received: %s", data)
	m.transport.Close()
}

func (m *docProtocol) ConnectionLost(err error) {
	m.p.log("connection_lost %s", pd(err))
	m.onConLost.SetResult(true)
}

func TestPortDocSocketpair(t *testing.T) {
	var out strings.Builder
	p := &probe{}

	rsock, wsock, err := docSocketpair()
	if err != nil {
		t.Fatal(err)
	}
	loop := asyncio.NewTestLoop()
	p.l = loop
	reader := func() {
		buf := make([]byte, 100)
		n, err := syscall.Read(rsock, buf)
		if err != nil {
			t.Error(err)
		}
		p.log("Received: %s", buf[:n])
		loop.RemoveReader(rsock)
		loop.Stop()
	}
	start := func() {
		p.restart()
		p.log("started")
		loop.CallSoon(func() {
			if _, err := syscall.Write(wsock, []byte("abc")); err != nil {
				t.Error(err)
			}
		})
	}
	if err := loop.AddReader(rsock, reader); err != nil {
		t.Fatal(err)
	}
	loop.CallSoon(start)
	err = loop.RunForever()
	syscall.Close(rsock)
	syscall.Close(wsock)
	if cerr := loop.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(p.b.String())

	waitForData := func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		rsock, wsock, err := docSocketpair()
		if err != nil {
			return err
		}
		reader, writer, err := aio.OpenConnection(tk, "", 0, aio.WithSocket(rsock))
		if err != nil {
			return err
		}
		loop.CallSoon(func() {
			if _, err := syscall.Write(wsock, []byte("abc")); err != nil {
				t.Error(err)
			}
		})
		data, err := reader.Read(tk, 100)
		if err != nil {
			return err
		}
		p.log("Received: %s", data)
		writer.Close()
		if err := writer.WaitClosed(tk); err != nil {
			return err
		}
		return syscall.Close(wsock)
	}
	main := func(p *probe, tk *asyncio.T) (err error) {
		loop := tk.Loop()
		p.restart()
		rsock, wsock, err := docSocketpair()
		if err != nil {
			return err
		}
		onConLost := asyncio.NewFuture[bool](loop)
		transport, _, err := aio.CreateConnection(tk, func() aio.Protocol {
			return &docProtocol{p: p, onConLost: onConLost}
		}, "", 0, aio.WithSocket(rsock))
		if err != nil {
			return err
		}
		loop.CallSoon(func() {
			if _, err := syscall.Write(wsock, []byte("abc")); err != nil {
				t.Error(err)
			}
		})
		func() {
			defer func() {
				transport.Close()
				if cerr := syscall.Close(wsock); err == nil {
					err = cerr
				}
			}()
			_, err = onConLost.Await(tk)
		}()
		if err != nil {
			return err
		}
		p.log("done")
		return nil
	}
	for _, m := range []func(*probe, *asyncio.T) error{waitForData, main} {
		p := &probe{}
		_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
			p.l = tk.Loop()
			return noValue, m(p, tk)
		}, asyncio.WithVirtualTime())
		out.WriteString(p.b.String())
		if err != nil {
			t.Fatalf("main failed: %v\ntrace so far:\n%s", err, out.String())
		}
	}
	if want := cpythonTrace("p195_doc_socketpair"); out.String() != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, out.String()))
	}
}

// ---------------------------------------------------------------------------
// p196_doc_subprocess.py (asyncio-subprocess.rst and asyncio-protocol.rst
// subprocess examples)

// docDateProtocol is the program's DateProtocol.
type docDateProtocol struct {
	aio.BaseSubprocessProtocol
	exitFuture *asyncio.Future[bool]
	output     []byte
	pipeClosed bool
	exited     bool
}

func (d *docDateProtocol) PipeConnectionLost(int, error) {
	d.pipeClosed = true
	d.checkForExit()
}

func (d *docDateProtocol) PipeDataReceived(_ int, data []byte) { d.output = append(d.output, data...) }

func (d *docDateProtocol) ProcessExited() {
	d.exited = true
	d.checkForExit()
}

func (d *docDateProtocol) checkForExit() {
	if d.pipeClosed && d.exited {
		d.exitFuture.SetResult(true)
	}
}

func TestPortDocSubprocess(t *testing.T) {
	var out strings.Builder
	say := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	run := func(t *asyncio.T, cmd string) error {
		proc, err := aio.CreateSubprocessShell(t, cmd, aio.WithStdout(aio.Pipe), aio.WithStderr(aio.Pipe))
		if err != nil {
			return err
		}
		stdout, stderr, err := proc.Communicate(t, nil)
		if err != nil {
			return err
		}
		say("['%s' exited with %s]", cmd, prc(proc))
		if len(stdout) > 0 {
			say("[stdout]\n%s", stdout)
		}
		if len(stderr) > 0 {
			say("[stderr]\n%s", stderr)
		}
		return nil
	}
	runMain := func(main func(*asyncio.T) error) {
		t.Helper()
		if _, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) { return noValue, main(tk) }, asyncio.WithVirtualTime()); err != nil {
			t.Fatalf("main failed: %v\noutput so far:\n%s", err, out.String())
		}
	}

	runMain(func(t *asyncio.T) error { return run(t, "ls /zzz") })

	runMain(func(t *asyncio.T) error {
		runner := func(cmd string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) { return noValue, run(t, cmd) }
		}
		_, err := asyncio.GatherFuncs(t, runner("ls /zzz"), runner(`sleep 0.1; echo "hello"`)).Await(t)
		return err
	})

	getDate := func(t *asyncio.T) (string, error) {
		code := "1970-01-01 00:00:00"
		proc, err := aio.CreateSubprocessExec(t, "printf", []string{`%s\n`, code}, aio.WithStdout(aio.Pipe))
		if err != nil {
			return "", err
		}
		data, err := proc.Stdout.ReadLine(t)
		if err != nil {
			return "", err
		}
		line := strings.TrimRight(string(data), " \t\r\n")
		if _, err := proc.Wait(t); err != nil {
			return "", err
		}
		return line, nil
	}
	date, err := asyncio.Run(getDate, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatal(err)
	}
	say("Current date: %s", date)

	getDateProtocol := func(t *asyncio.T) (string, error) {
		loop := t.Loop()
		code := "1970-01-01 00:00:00"
		exitFuture := asyncio.NewFuture[bool](loop)
		transport, protocol, err := aio.SubprocessExec(t, func() aio.SubprocessProtocol {
			return &docDateProtocol{exitFuture: exitFuture}
		}, "printf", []string{`%s\n`, code}, aio.WithStdin(aio.Inherit), aio.WithStderr(aio.Inherit))
		if err != nil {
			return "", err
		}
		if _, err := exitFuture.Await(t); err != nil {
			return "", err
		}
		transport.Close()
		data := protocol.(*docDateProtocol).output
		return strings.TrimRight(string(data), " \t\r\n"), nil
	}
	date, err = asyncio.Run(getDateProtocol, asyncio.WithVirtualTime())
	if err != nil {
		t.Fatal(err)
	}
	say("Current date: %s", date)

	if want := cpythonTrace("p196_doc_subprocess"); out.String() != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, out.String()))
	}
}

// ---------------------------------------------------------------------------
// p197_doc_protocol_echo.py (asyncio-protocol.rst, Examples)

type docEchoServerProtocol struct {
	aio.BaseProtocol
	p         *probe
	transport aio.Transport
}

func (e *docEchoServerProtocol) ConnectionMade(tr aio.Transport) {
	peername := aio.PeerName(tr)
	e.p.log("Connection from %s", docHostOf(peername))
	e.transport = tr
}

func (e *docEchoServerProtocol) DataReceived(data []byte) {
	message := string(data)
	e.p.log("Data received: '%s'", message)
	e.p.log("Send: '%s'", message)
	if err := e.transport.Write(data); err != nil {
		e.p.log("write: %v", err)
	}
	e.p.log("Close the client socket")
	e.transport.Close()
}

type docEchoClientProtocol struct {
	aio.BaseProtocol
	p         *probe
	message   string
	onConLost *asyncio.Future[bool]
}

func (e *docEchoClientProtocol) ConnectionMade(tr aio.Transport) {
	if err := tr.Write([]byte(e.message)); err != nil {
		e.p.log("write: %v", err)
	}
	e.p.log("Data sent: '%s'", e.message)
}

func (e *docEchoClientProtocol) DataReceived(data []byte) {
	e.p.log("Data received: '%s'", data)
}

func (e *docEchoClientProtocol) ConnectionLost(error) {
	e.p.log("The server closed the connection")
	e.onConLost.SetResult(true)
}

type docEchoUDPServerProtocol struct {
	aio.BaseDatagramProtocol
	p         *probe
	transport aio.DatagramTransport
}

func (e *docEchoUDPServerProtocol) ConnectionMade(tr aio.DatagramTransport) { e.transport = tr }

func (e *docEchoUDPServerProtocol) DatagramReceived(data []byte, addr net.Addr) {
	message := string(data)
	e.p.log("Received '%s' from %s", message, docHostOf(addr))
	e.p.log("Send '%s' to %s", message, docHostOf(addr))
	if err := e.transport.SendTo(data, addr); err != nil {
		e.p.log("sendto: %v", err)
	}
}

type docEchoUDPClientProtocol struct {
	aio.BaseDatagramProtocol
	p         *probe
	message   string
	onConLost *asyncio.Future[bool]
	transport aio.DatagramTransport
}

func (e *docEchoUDPClientProtocol) ConnectionMade(tr aio.DatagramTransport) {
	e.transport = tr
	e.p.log("Send: %s", e.message)
	if err := e.transport.SendTo([]byte(e.message), nil); err != nil {
		e.p.log("sendto: %v", err)
	}
}

func (e *docEchoUDPClientProtocol) DatagramReceived(data []byte, _ net.Addr) {
	e.p.log("Received: %s", data)
	e.p.log("Close the socket")
	e.transport.Close()
}

func (e *docEchoUDPClientProtocol) ErrorReceived(err error) { e.p.log("Error received: %v", err) }

func (e *docEchoUDPClientProtocol) ConnectionLost(error) {
	e.p.log("Connection closed")
	e.onConLost.SetResult(true)
}

func TestPortDocProtocolEcho(t *testing.T) {
	runPort(t, cpythonTrace("p197_doc_protocol_echo"), func(p *probe, tk *asyncio.T) error {
		tcpClient := func(t *asyncio.T, port int) (err error) {
			loop := t.Loop()
			onConLost := asyncio.NewFuture[bool](loop)
			message := "Hello World!"
			transport, _, err := aio.CreateConnection(t, func() aio.Protocol {
				return &docEchoClientProtocol{p: p, message: message, onConLost: onConLost}
			}, "127.0.0.1", port)
			if err != nil {
				return err
			}
			defer transport.Close()
			_, err = onConLost.Await(t)
			return err
		}
		tcpMain := func(t *asyncio.T) error {
			server, err := aio.CreateServer(t, func() aio.Protocol { return &docEchoServerProtocol{p: p} }, "127.0.0.1", 0)
			if err != nil {
				return err
			}
			port := portOf(server)
			serve := func(t *asyncio.T) error {
				return aio.WithServer(t, server, func() error { return server.ServeForever(t) })
			}
			serving := asyncio.CreateTaskErr(t, serve)
			if err := tcpClient(t, port); err != nil {
				return err
			}
			serving.Cancel()
			if _, err := serving.Await(t); asyncio.IsCancelled(err) {
				p.log("server %s serving %s", pd(err), pb(server.IsServing()))
			} else {
				return fmt.Errorf("server: %v, want a cancellation", err)
			}
			return nil
		}
		udpServer := func(started *asyncio.Future[int]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				p.log("Starting UDP server")
				transport, _, err := aio.CreateDatagramEndpoint(t, func() aio.DatagramProtocol {
					return &docEchoUDPServerProtocol{p: p}
				}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
				if err != nil {
					return err
				}
				started.SetResult(aio.SockName(transport).(*net.UDPAddr).Port)
				defer transport.Close()
				return asyncio.Sleep(t, time.Hour)
			}
		}
		udpClient := func(t *asyncio.T, port int) error {
			loop := t.Loop()
			onConLost := asyncio.NewFuture[bool](loop)
			message := "Hello World!"
			transport, _, err := aio.CreateDatagramEndpoint(t, func() aio.DatagramProtocol {
				return &docEchoUDPClientProtocol{p: p, message: message, onConLost: onConLost}
			}, nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
			if err != nil {
				return err
			}
			defer transport.Close()
			_, err = onConLost.Await(t)
			return err
		}

		p.restart()
		if err := tcpMain(tk); err != nil {
			return err
		}

		p.restart()
		started := asyncio.NewFuture[int](tk.Loop())
		server := asyncio.CreateTaskErr(tk, udpServer(started))
		port, err := started.Await(tk)
		if err != nil {
			return err
		}
		if err := udpClient(tk, port); err != nil {
			return err
		}
		server.Cancel()
		if _, err := server.Await(tk); asyncio.IsCancelled(err) {
			p.log("UDP server %s", pd(err))
		} else {
			return fmt.Errorf("UDP server: %v, want a cancellation", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p198_doc_signal_handlers.py (asyncio-eventloop.rst, Set signal handlers)

func TestPortDocSignalHandlers(t *testing.T) {
	// Keeps SIGTERM caught between the loop's Close (which gives it its
	// default action back) and the end of the test, should it arrive
	// late: the default action would end the test binary.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)

	var out strings.Builder
	p := &probe{}
	say := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	// On virtual time the loop cannot know a signal is on its way (as
	// p125): kill holds the clock until a handler has run.
	var inFlight func()
	askExit := func(signame string, loop *asyncio.Loop) func() {
		return func() {
			if inFlight != nil {
				inFlight()
				inFlight = nil
			}
			p.log("got signal %s: exit", signame)
			loop.Stop()
		}
	}
	main := func(tk *asyncio.T) (struct{}, error) {
		loop := tk.Loop()
		p.l = loop
		p.restart()
		for _, sig := range []struct {
			name string
			sig  syscall.Signal
		}{{"SIGINT", syscall.SIGINT}, {"SIGTERM", syscall.SIGTERM}} {
			if err := loop.AddSignalHandler(sig.sig, askExit(sig.name, loop)); err != nil {
				return noValue, err
			}
		}
		loop.CallLater(100*ms, func() {
			inFlight = loop.ExpectExternal()
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Error(err)
			}
		})
		err := asyncio.Sleep(tk, time.Hour)
		if asyncio.IsCancelled(err) {
			p.log("main %s", pd(err))
		}
		return noValue, err
	}
	say("Event loop running for 1 hour, press Ctrl+C to interrupt.")
	say("pid: send SIGINT or SIGTERM to exit.")
	_, err := asyncio.Run(main, asyncio.WithVirtualTime())
	out.WriteString(p.b.String())
	if re := (*asyncio.RuntimeError)(nil); errors.As(err, &re) {
		say("asyncio.run raised %s", pd(re))
	} else if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := cpythonTrace("p198_doc_signal_handlers"); out.String() != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, out.String()))
	}
}

// ---------------------------------------------------------------------------
// p199_doc_runner_debug.py (asyncio-runner.rst, asyncio-dev.rst)

// docException is Python's bare Exception.
type docException struct{ pyExc }

// The report's message names the task in Go ("Task exception was never
// retrieved: bug"): docs/rules.md FUT-10.
var wantDocRunnerDebugGo = goism(cpythonTrace("p199_doc_runner_debug"),
	[2]string{"handler: Task exception was never retrieved Exception(not consumed) bug",
		"handler: Task exception was never retrieved: bug Exception(not consumed) bug"})

func TestPortDocRunnerDebug(t *testing.T) {
	var out strings.Builder
	say := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	p := &probe{}
	main := func(tk *asyncio.T) (struct{}, error) {
		p.l = tk.Loop()
		p.restart()
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return noValue, err
		}
		p.log("hello")
		return noValue, nil
	}
	flush := func() { out.WriteString(p.b.String()); p.b.Reset() }

	if _, err := asyncio.Run(main, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
	flush()

	var loop *asyncio.Loop // the with block's loop, still named after it
	err := func() (err error) {
		runner := asyncio.NewRunner(asyncio.WithVirtualTime())
		defer func() {
			if cerr := runner.Close(); err == nil {
				err = cerr
			}
		}()
		loop = runner.Loop()
		if _, err := asyncio.RunWith(runner, main); err != nil {
			return err
		}
		if _, err := asyncio.RunWith(runner, main); err != nil {
			return err
		}
		flush()
		say("same loop %s closed %s", pb(runner.Loop() == loop), pb(loop.IsClosed()))
		return nil
	}()
	if err != nil {
		t.Fatal(err)
	}
	say("closed after with %s", pb(loop.IsClosed()))

	handler := func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		name := "None"
		if task, ok := c.Future.(*asyncio.T); ok {
			name = task.Name()
		}
		say("handler: %s %s %s", c.Message, pd(c.Err), name)
	}
	bug := func(*asyncio.T) error {
		return &docException{pyExc{"Exception", "not consumed"}}
	}
	debugMain := func(tk *asyncio.T) (struct{}, error) {
		tk.Loop().SetExceptionHandler(handler)
		//asynciovet:ignore unawaitedtask the docs' example: the task's error is never retrieved, which is what it shows
		asyncio.CreateTaskErr(tk, bug, asyncio.WithName("bug"))
		return noValue, nil
	}
	if _, err := asyncio.Run(debugMain, asyncio.WithVirtualTime(), asyncio.WithDebug()); err != nil {
		t.Fatal(err)
	}
	say("run returned")

	if want := wantDocRunnerDebugGo; out.String() != want {
		t.Errorf("trace differs from CPython 3.13\n%s", traceDiff(want, out.String()))
	}
}
