//go:build unix && go1.25

package ports_test

// The ports of p211 onward with threads (ports211_test.go has the
// others): they run in a testing/synctest bubble on the loop's real
// clock (runPortBubble), so a thread's time.sleep and the loop's sleeps
// share the bubble's fake time.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// ---------------------------------------------------------------------------
// p214_aiofiles_executor.py

// nPool is ThreadPoolExecutor(max_workers=n): n goroutines take the
// submitted jobs in order; Shutdown is shutdown(wait=True).
type nPool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func newNPool(n int) *nPool {
	p := &nPool{jobs: make(chan func(), 64)}
	for range n {
		p.wg.Go(func() {
			for job := range p.jobs {
				job()
			}
		})
	}
	return p
}

func (p *nPool) Submit(fn func()) error {
	p.jobs <- fn
	return nil
}

func (p *nPool) Shutdown() {
	close(p.jobs)
	p.wg.Wait()
}

// asyncFile is the program's AsyncFile.
type asyncFile struct {
	p        *probe
	loop     *asyncio.Loop
	executor *nPool
	f        *os.File
	name     string
	closed   bool
}

func (af *asyncFile) tlog(format string, args ...any) {
	_, _ = af.loop.CallSoonThreadsafe(func() { af.p.log("thread: "+format, args...) })
}

func runOn[V any](t *asyncio.T, af *asyncFile, fn func(context.Context) (V, error)) (V, error) {
	return asyncio.RunInExecutorOn(t, af.executor, fn).Await(t)
}

func (af *asyncFile) write(t *asyncio.T, data string, latency time.Duration) (int, error) {
	return runOn(t, af, func(context.Context) (int, error) {
		time.Sleep(latency)
		n, err := af.f.WriteString(data)
		if err != nil {
			return 0, err
		}
		af.tlog("wrote %d to %s", n, af.name)
		return n, nil
	})
}

func (af *asyncFile) read(t *asyncio.T, latency time.Duration) (string, error) {
	return runOn(t, af, func(context.Context) (string, error) {
		time.Sleep(latency)
		if _, err := af.f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		data, err := io.ReadAll(af.f)
		if err != nil {
			return "", err
		}
		af.tlog("read %d from %s", len(data), af.name)
		return string(data), nil
	})
}

func (af *asyncFile) close(t *asyncio.T) error {
	_, err := runOn(t, af, func(context.Context) (struct{}, error) {
		af.closed = true
		return noValue, af.f.Close()
	})
	return err
}

func TestPortAiofilesExecutor(t *testing.T) {
	runPortBubble(t, cpythonTrace("p214_aiofiles_executor"), func(p *probe, tk *asyncio.T) error {
		aopen := func(t *asyncio.T, executor *nPool, path string) (*asyncFile, error) {
			f, err := asyncio.RunInExecutorOn(t, executor, func(context.Context) (*os.File, error) {
				return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			}).Await(t)
			if err != nil {
				return nil, err
			}
			return &asyncFile{p: p, loop: t.Loop(), executor: executor, f: f, name: filepath.Base(path)}, nil
		}

		p.restart()
		tmp, err := os.MkdirTemp("", "p214")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		ex := newNPool(2)
		err = func() error {
			//asynciovet:ignore blockingcall the program's `with ThreadPoolExecutor` ends with shutdown(wait=True) on the loop too; every job is done by then
			defer ex.Shutdown()
			var files []*asyncFile
			for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
				f, err := aopen(tk, ex, filepath.Join(tmp, name))
				if err != nil {
					return err
				}
				files = append(files, f)
			}
			a, b, c := files[0], files[1], files[2]
			writeFn := func(f *asyncFile, data string, latency time.Duration) func(*asyncio.T) (int, error) {
				return func(t *asyncio.T) (int, error) { return f.write(t, data, latency) }
			}
			sizes, err := asyncio.GatherFuncs(tk,
				writeFn(a, "alpha", 100*ms), writeFn(b, "bravo!", 120*ms), writeFn(c, "charlie", 80*ms)).Await(tk)
			if err != nil {
				return err
			}
			p.log("written %s", pints(sizes))

			readFn := func(f *asyncFile, latency time.Duration) func(*asyncio.T) (string, error) {
				return func(t *asyncio.T) (string, error) { return f.read(t, latency) }
			}
			datas, err := asyncio.GatherFuncs(tk, readFn(a, 300*ms), readFn(b, 100*ms), readFn(c, 120*ms)).Await(tk)
			if err != nil {
				return err
			}
			p.log("read in argument order %s", pstrs(datas))

			busy := asyncio.CreateTask(tk, readFn(c, 120*ms))
			running := asyncio.CreateTask(tk, readFn(a, 280*ms))
			queued := asyncio.CreateTask(tk, readFn(b, 200*ms))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			running.Cancel()
			queued.Cancel()
			p.log("cancelled the running and the queued read")
			res, err := asyncio.GatherOutcomes(tk, busy, running, queued).Await(tk)
			if err != nil {
				return err
			}
			var outs []string
			for _, o := range res {
				if o.Err != nil {
					outs = append(outs, "'"+pd(o.Err)+"'")
				} else {
					outs = append(outs, `"'`+o.Value+`'"`)
				}
			}
			p.log("outcomes [%s]", strings.Join(outs, ", "))
			if err := asyncio.Sleep(tk, 200*ms); err != nil {
				return err
			}
			p.log("after the running read's thread")

			closeFns := make([]func(*asyncio.T) error, len(files))
			for i, f := range files {
				closeFns[i] = f.close
			}
			if _, err := asyncio.GatherFuncs(tk, errFuncs(closeFns)...).Await(tk); err != nil {
				return err
			}
			var closed []bool
			for _, f := range files {
				closed = append(closed, f.closed)
			}
			p.log("closed %s", pbools(closed...))
			return nil
		}()
		if err != nil {
			return err
		}
		p.log("executor shut down")
		//asynciovet:ignore blockingcall the program lists the directory on the loop too (os.listdir)
		entries, err := os.ReadDir(tmp)
		if err != nil {
			return err
		}
		var names []string
		var sizes []int
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				return err
			}
			names = append(names, e.Name())
			sizes = append(sizes, int(info.Size()))
		}
		slices.Sort(names)
		p.log("files %s %s", pstrs(names), pints(sizes))
		return nil
	})
}
