// Command scenario is the Go interpreter of the asyncio conformance DSL
// (/work/shared/conformance/DSL.md). It runs one scenario on the library's
// virtual-time loop and prints the trace on stdout:
//
//	go run ./tests/conformance/scenario CASE.json
//
// It mirrors ref/asyncio_ref.py (the CPython reference) op for op and drives
// the library only through its public API. It never reorders, filters or
// special-cases anything: a trace difference must come from the library.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: scenario CASE.json")
		os.Exit(2)
	}
	run := func(path string) error { return runFile(path, os.Stdout) }
	if os.Getenv(busyGroupEnv) == "1" {
		run = runFileOnBusyGroup
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "scenario:", err)
		os.Exit(1)
	}
	// Leftover tasks are neither cancelled nor run (DSL.md section 5); the
	// process simply ends.
	os.Exit(0)
}

// scenario is the JSON file (DSL.md section 1).
type scenario struct {
	Description string            `json:"description"`
	Tags        []string          `json:"tags"`
	Events      []string          `json:"events"`
	Locks       []string          `json:"locks"`
	Semaphores  orderedInts       `json:"semaphores"`
	Queues      orderedInts       `json:"queues"`
	Main        []json.RawMessage `json:"main"`
}

// orderedInts is a JSON object name -> int with its names sorted, so that
// primitives are created in a deterministic order (the order is not
// observable in a trace).
type orderedInts struct {
	names  []string
	values map[string]int
}

func (o *orderedInts) UnmarshalJSON(b []byte) error {
	o.values = map[string]int{}
	if err := json.Unmarshal(b, &o.values); err != nil {
		return err
	}
	for n := range o.values {
		o.names = append(o.names, n)
	}
	sort.Strings(o.names)
	return nil
}

// runFile runs one scenario file and writes its trace to w.
func runFile(path string, w io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := validate(&sc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	bw := bufio.NewWriter(w)
	r := newRun(&sc, bw)
	if err := r.run(); err != nil {
		bw.Flush()
		return err
	}
	return bw.Flush()
}

// ret is the `return V` signal threaded through the interpreter as a normal
// value (not an error), so task groups and timeouts see a normal exit.
type ret struct{ value any }

// frame is the per-task (or per-callback) interpretation state.
type frame struct {
	who      string
	t        *asyncio.T // nil in a callback body
	groups   []*groupRef
	timeouts []*timeoutRef
	handled  []error // exceptions being handled, for reraise
}

// canceller is what `cancel_handle` needs from *Handle and *TimerHandle.
type canceller interface{ Cancel() }

// run is one execution of a scenario (the reference's Run).
type run struct {
	sc       *scenario
	out      *bufio.Writer
	loop     *asyncio.Loop
	finished bool

	internal error // first interpreter error (bad op); ends the run, exit 1

	// maxIterations, if > 0, ends the run with an error after that many
	// loop iterations (the fuzz target's livelock check).
	maxIterations int

	awNames  []string                            // creation order, for nameOf
	aw       map[string]asyncio.AwaitableOf[any] // awaitable name -> task/future
	tasks    map[string]asyncio.AwaitableOf[any] // DSL task name -> task
	outcomes map[string]string                   // DSL task name -> OUTCOME of its body
	handles  map[string]canceller
	groups   map[string]*groupRef
	prims    map[string]any
}

func newRun(sc *scenario, out *bufio.Writer) *run {
	return &run{
		sc:       sc,
		out:      out,
		aw:       map[string]asyncio.AwaitableOf[any]{},
		tasks:    map[string]asyncio.AwaitableOf[any]{},
		outcomes: map[string]string{},
		handles:  map[string]canceller{},
		groups:   map[string]*groupRef{},
		prims:    map[string]any{},
	}
}

// newScenarioLoop makes the loop a scenario runs on: a new test loop, or
// (group_test.go) loop 0 of a LoopGroup whose other loops are busy.
var newScenarioLoop = asyncio.NewTestLoop

// errRunOver stops DSL code that would run after the closing lines
// (the reference's _RunOver).
var errRunOver = errors.New("scenario: run is over")

func (r *run) emit(who, text string) {
	if r.finished {
		return
	}
	fmt.Fprintf(r.out, "%s %s: %s\n", fmtTime(r.loop.Time()), who, text)
}

func (r *run) addAwaitable(name string, x asyncio.AwaitableOf[any]) {
	if _, ok := r.aw[name]; !ok {
		r.awNames = append(r.awNames, name)
	}
	r.aw[name] = x
}

// nameOf finds the DSL name of an awaitable returned by the library (wait).
func (r *run) nameOf(x asyncio.Awaitable) string {
	for _, n := range r.awNames {
		if sameAwaitable(r.aw[n], x) {
			return n
		}
	}
	return "?unnamed"
}

func (r *run) run() error {
	r.loop = newScenarioLoop()
	// Callback errors are logged by the interpreter; silence the handler,
	// except for a panic: a bug of the interpreter or the library, which
	// must not pass for a trace.
	r.loop.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		var pe *asyncio.PanicError
		if errors.As(c.Err, &pe) {
			r.fail(fmt.Errorf("panic: %v\n%s", pe.Value, pe.Stack))
		}
	})
	r.makePrimitives()
	if r.maxIterations > 0 {
		n := 0
		r.loop.SetBeforePoll(func() {
			if n++; n == r.maxIterations {
				r.fail(fmt.Errorf("no end after %d loop iterations (at %v)", n, r.loop.Time()))
			}
		})
	}
	main := asyncio.CreateTask[any](r.loop, r.taskBody("main", r.sc.Main), asyncio.WithName("main"))
	r.addAwaitable("main", main)
	r.tasks["main"] = main
	main.AddDoneCallback(r.loop.Stop)
	err := r.loop.RunForever()
	for _, n := range slices.Sorted(maps.Keys(r.tasks)) {
		var pe *asyncio.PanicError
		if t := r.tasks[n]; t.Done() && errors.As(t.Err(), &pe) {
			r.fail(fmt.Errorf("task %s panicked: %v\n%s", n, pe.Value, pe.Stack))
		}
	}
	if r.internal != nil {
		return r.internal
	}
	deadlock := false
	if err != nil {
		if !errors.Is(err, asyncio.ErrDeadlock) {
			r.finished = true
			return fmt.Errorf("RunForever: %w", err)
		}
		deadlock = true
	}
	if deadlock {
		r.emit("loop", "deadlock")
	}
	mo, ok := r.outcomes["main"]
	if !ok {
		mo = "pending"
	}
	r.emit("loop", "main -> "+mo)
	var unfinished []string
	for n, t := range r.tasks {
		if !t.Done() {
			unfinished = append(unfinished, n)
		}
	}
	sort.Strings(unfinished)
	u := strings.Join(unfinished, ",")
	if u == "" {
		u = "-"
	}
	r.emit("loop", "unfinished "+u)
	r.finished = true
	return nil
}

// taskBody wraps a DSL body as a task function that logs `start` and
// `end OUTCOME` and lets the result or error through unchanged.
func (r *run) taskBody(name string, body []json.RawMessage) func(*asyncio.T) (any, error) {
	return func(t *asyncio.T) (any, error) {
		f := &frame{who: name, t: t}
		r.emit(name, "start")
		sig, err := r.execBlock(f, body)
		if errors.Is(err, errRunOver) {
			return nil, err
		}
		if err != nil {
			o := outcomeExc(err)
			r.outcomes[name] = o
			r.emit(name, "end "+o)
			return nil, err
		}
		var v any
		if sig != nil {
			v = sig.value
		}
		o := outcomeValue(v)
		r.outcomes[name] = o
		r.emit(name, "end "+o)
		return v, nil
	}
}

// runCallback runs a callback body outside any task; an escaping error is
// logged as `uncaught EXC`.
func (r *run) runCallback(body []json.RawMessage) {
	if r.finished {
		return
	}
	f := &frame{who: "cb"}
	_, err := r.execBlock(f, body)
	if err != nil && !errors.Is(err, errRunOver) {
		r.emit("cb", "uncaught "+excDesc(err))
	}
}

func (r *run) execBlock(f *frame, body []json.RawMessage) (*ret, error) {
	for _, raw := range body {
		if r.finished {
			return nil, errRunOver
		}
		var op []json.RawMessage
		if err := json.Unmarshal(raw, &op); err != nil || len(op) == 0 {
			return nil, r.fail(fmt.Errorf("bad op %s", raw))
		}
		name := str(op[0])
		fn, ok := ops[name]
		if !ok {
			return nil, r.fail(fmt.Errorf("op %q not supported", name))
		}
		sig, err := fn(r, f, op[1:])
		if err != nil || sig != nil {
			return sig, err
		}
	}
	return nil, nil
}

// opFunc implements one DSL op; args excludes the op name.
type opFunc func(r *run, f *frame, args []json.RawMessage) (*ret, error)

// ops is the op table; files register their ops in init.
var ops = map[string]opFunc{}

func register(name string, fn opFunc) {
	if _, dup := ops[name]; dup {
		panic("duplicate op " + name)
	}
	ops[name] = fn
}

// fail records an interpreter error (not a library outcome): the run stops
// and the command exits non-zero instead of printing a misleading trace.
func (r *run) fail(err error) error {
	if r.internal == nil {
		r.internal = err
	}
	r.finished = true
	r.loop.Stop()
	return errRunOver
}

func (r *run) undefined(f *frame, text string) (*ret, error) {
	r.emit(f.who, text+" -> undefined")
	return nil, nil
}

// waiting runs a waiting op, logs `text -> OUTCOME` and re-raises failures.
func (r *run) waiting(f *frame, text string, wait func() (any, error)) (any, error) {
	v, err := wait()
	if errors.Is(err, errRunOver) {
		return nil, err
	}
	if err != nil {
		r.emit(f.who, text+" -> "+outcomeExc(err))
		return nil, err
	}
	r.emit(f.who, text+" -> "+outcomeValue(v))
	return v, nil
}

// owner is what create_task runs against: the current task or the loop.
func (r *run) owner(f *frame) asyncio.LoopOwner {
	if f.t != nil {
		return f.t
	}
	return r.loop
}

// groupRef is a TaskGroup as the interpreter sees it (set up by the
// taskgroup op): spawn is tg.create_task.
type groupRef struct {
	spawn func(name string, fn func(*asyncio.T) (any, error)) (asyncio.AwaitableOf[any], error)
}

// timeoutRef is an entered timeout scope: reschedule(when) is
// cm.reschedule(when) with an absolute loop time (asyncio.Never = None).
type timeoutRef struct {
	reschedule func(when time.Duration) error
}

func (r *run) spawnInGroup(g *groupRef, name string, body []json.RawMessage) error {
	t, err := g.spawn(name, r.taskBody(name, body))
	if err != nil {
		return err
	}
	r.addAwaitable(name, t)
	r.tasks[name] = t
	return nil
}

// makePrimitives creates the declared events, locks, semaphores and queues
// (set by the file implementing the sync ops).
func (r *run) makePrimitives() { primitiveMaker(r) }

var primitiveMaker = func(r *run) {}
