package cpython

// CPython 3.14 Lib/test/test_asyncio/test_graph.py (CallStackTestBase,
// which CPython runs for its C and Python backends: one Go test each).
//
// capture_test_stack's walk becomes graphNode: a label ("T<name>" for a
// task, "T<anon>" when its name has a '-' as the default "Task-N" does,
// "F" for a future), the call stack, and the awaiters sorted by label.
//
// Go has one kind of frame, so the call-stack labels have no "s "/"a "/
// "ag " prefix: a frame of the test is its function's name (the methods of
// each test's type stand for CPython's nested functions; a closure keeps
// its ".funcN"; they keep CPython's names, underscores included, so that
// the frames read as CPython's), and a frame of the library is
// "asyncio.<function>". A
// suspended task's stack starts with the library call it waits in
// (asyncio.(*Task[...]).Await for `await task`, asyncio.TaskGroup for the
// end of `async with TaskGroup()`, asyncio.Wait for `await wait(...)`),
// where CPython lists the library's coroutines (_aexit, __aexit__; _wait,
// wait) or nothing (an `await` of a task or future is not a frame); the
// running task's stack is all of its Go frames, where CPython shows only
// the coroutines it can reach from the task.
//
// CaptureCallGraph has no depth argument: the stack of the running task
// starts at CaptureCallGraph's caller, as capture_call_graph(depth=1)'s
// does; test_stack_tgroup's depth=2 (starting at c5, not at
// capture_test_stack) is c5 calling CaptureCallGraph itself.

import (
	"iter"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// graphNode is one level of capture_test_stack's walk.
type graphNode struct {
	Label     string
	Stack     []string
	AwaitedBy []graphNode
}

// frameLabel names a frame as the expectations do: "c4" for
// cpython.(*stackTgroup).c4 (and for the names the compiler gives a
// method value or an inlined closure, such as
// cpython.(*stackTimeout).c1-fm.(*stackTimeout).c1.func1: "c1.func1"),
// "asyncio.TaskGroup" for the library's.
func frameLabel(fr asyncio.Frame) string {
	name := fr.Function[strings.LastIndexByte(fr.Function, '/')+1:]
	if !strings.HasPrefix(name, "cpython.") {
		return name
	}
	if i := strings.LastIndex(name, ")."); i >= 0 {
		return name[i+2:]
	}
	return strings.TrimPrefix(name, "cpython.")
}

// walkCallGraph is capture_test_stack's walk.
func walkCallGraph(g *asyncio.FutureCallGraph) graphNode {
	n := graphNode{Label: "F"}
	if task, ok := g.Future.(*asyncio.T); ok {
		n.Label = "T<" + task.Name() + ">"
		if strings.Contains(task.Name(), "-") {
			n.Label = "T<anon>"
		}
	}
	for _, fr := range g.CallStack {
		n.Stack = append(n.Stack, frameLabel(fr))
	}
	for i := range g.AwaitedBy {
		n.AwaitedBy = append(n.AwaitedBy, walkCallGraph(&g.AwaitedBy[i]))
	}
	slices.SortStableFunc(n.AwaitedBy, func(a, b graphNode) int { return strings.Compare(a.Label, b.Label) })
	return n
}

// graphCapture holds what capture_test_stack returns: the walk and the
// printed graph.
type graphCapture struct {
	walk    graphNode
	printed string
	taken   bool
}

// capture_test_stack prints the graph of fut (the running task when nil)
// and captures it, from the caller's frame.
func (c *graphCapture) capture_test_stack(tk *asyncio.T, fut asyncio.Awaitable) {
	if fut == nil {
		fut = tk
	}
	var b strings.Builder
	if err := asyncio.PrintCallGraph(&b, fut); err != nil {
		panic(err)
	}
	c.printed = b.String()
	c.walk = walkCallGraph(asyncio.CaptureCallGraph(fut))
	c.taken = true
}

// runGraphTest runs body as the test method's task, on a virtual clock,
// with the suspended tasks' stacks recorded (WithTaskStacks: CPython walks
// every coroutine, Go reads a goroutine's stack only when asked to).
func runGraphTest(t *testing.T, c *graphCapture, body func(tk *asyncio.T) (struct{}, error)) {
	t.Helper()
	if _, err := asyncio.Run(body, asyncio.WithVirtualTime(), asyncio.WithTaskStacks()); err != nil {
		t.Fatalf("test body: %v", err)
	}
	if !c.taken {
		t.Fatal("the graph was never captured")
	}
}

// ---- test_stack_tgroup

type stackTgroup struct {
	graphCapture
	task *asyncio.Task[struct{}]
}

// c5 is the sync function that captures with depth=2: its own frame first.
func (s *stackTgroup) c5(tk *asyncio.T) {
	var b strings.Builder
	if err := asyncio.PrintCallGraph(&b, tk); err != nil {
		panic(err)
	}
	s.printed = b.String()
	s.walk = walkCallGraph(asyncio.CaptureCallGraph(tk))
	s.taken = true
}

func (s *stackTgroup) c4(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.c5(tk)
	return nil
}

func (s *stackTgroup) c3(tk *asyncio.T) error { return s.c4(tk) }

func (s *stackTgroup) c2(tk *asyncio.T) (struct{}, error) { return struct{}{}, s.c3(tk) }

func (s *stackTgroup) c1(tk *asyncio.T) (struct{}, error) { return s.task.Await(tk) }

func (s *stackTgroup) main(tk *asyncio.T) error {
	return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
		var err error
		if s.task, err = asyncio.Spawn(g, s.c2, asyncio.WithName("c2_root")); err != nil {
			return err
		}
		if _, err := asyncio.Spawn(g, s.c1, asyncio.WithName("sub_main_1")); err != nil {
			return err
		}
		_, err = asyncio.Spawn(g, s.c1, asyncio.WithName("sub_main_2"))
		return err
	})
}

func (s *stackTgroup) test_stack_tgroup(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_tgroup(t *testing.T) {
	s := &stackTgroup{}
	runGraphTest(t, &s.graphCapture, s.test_stack_tgroup)
	// The main task waits at the end of the TaskGroup (CPython: _aexit,
	// __aexit__ of `async with`).
	mainTask := graphNode{"T<anon>", []string{"asyncio.TaskGroup", "main", "test_stack_tgroup"}, nil}
	eq(t, s.walk, graphNode{"T<c2_root>", []string{"c5", "c4", "c3", "c2"}, []graphNode{
		mainTask,
		{"T<sub_main_1>", []string{"asyncio.(*Task[...]).Await", "c1"}, []graphNode{mainTask}},
		{"T<sub_main_2>", []string{"asyncio.(*Task[...]).Await", "c1"}, []graphNode{mainTask}},
	}}, "graph")
	check(t, strings.Contains(s.printed, ", in cpython.(*stackTgroup).test_stack_tgroup()\n"), "printed graph names the test's frame:\n", s.printed)
}

// ---- test_stack_async_gen: `async for` over an async generator is a
// range-over-func loop over an iterator that awaits between its yields.

type stackAsyncGen struct{ graphCapture }

func (s *stackAsyncGen) gen_nested_call(tk *asyncio.T) { s.capture_test_stack(tk, nil) }

func (s *stackAsyncGen) gen(tk *asyncio.T) iter.Seq[int] {
	return func(yield func(int) bool) {
		for num := range 2 {
			if !yield(num) {
				return
			}
			if num == 1 {
				s.gen_nested_call(tk)
			}
		}
	}
}

func (s *stackAsyncGen) main(tk *asyncio.T) error {
	for range s.gen(tk) {
	}
	return nil
}

func (s *stackAsyncGen) test_stack_async_gen(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_async_gen(t *testing.T) {
	s := &stackAsyncGen{}
	runGraphTest(t, &s.graphCapture, s.test_stack_async_gen)
	eq(t, s.walk, graphNode{"T<anon>", []string{"capture_test_stack", "gen_nested_call", "gen.func1", "main", "test_stack_async_gen"}, nil}, "graph")
	check(t, regexp.MustCompile(`, in cpython\.\(\*stackAsyncGen\)\.\S*gen\.func1\(\)\n`).MatchString(s.printed), "printed graph names the generator's frame:\n", s.printed)
}

// ---- test_stack_gather

type stackGather struct{ graphCapture }

func (s *stackGather) deep(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.capture_test_stack(tk, nil)
	return nil
}

func (s *stackGather) c1(tk *asyncio.T) (struct{}, error) {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, s.deep(tk)
}

func (s *stackGather) c2(tk *asyncio.T) (struct{}, error) { return struct{}{}, asyncio.Sleep(tk, 0) }

func (s *stackGather) main(tk *asyncio.T) error {
	_, err := asyncio.GatherFuncs(tk, s.c1, s.c2).Await(tk)
	return err
}

func (s *stackGather) test_stack_gather(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_gather(t *testing.T) {
	s := &stackGather{}
	runGraphTest(t, &s.graphCapture, s.test_stack_gather)
	// The gather child is awaited by the task that awaits the gather.
	eq(t, s.walk, graphNode{"T<anon>", []string{"capture_test_stack", "deep", "c1"}, []graphNode{
		{"T<anon>", []string{"asyncio.(*Future[...]).Await", "main", "test_stack_gather"}, nil},
	}}, "graph")
}

// ---- test_stack_shield

type stackShield struct{ graphCapture }

func (s *stackShield) deep(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.capture_test_stack(tk, nil)
	return nil
}

func (s *stackShield) c1(tk *asyncio.T) (struct{}, error) {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, s.deep(tk)
}

func (s *stackShield) main(tk *asyncio.T) error {
	// shield(c1()) wraps the coroutine in a task.
	_, err := asyncio.Shield[struct{}](asyncio.CreateTask(tk, s.c1)).Await(tk)
	return err
}

func (s *stackShield) test_stack_shield(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_shield(t *testing.T) {
	s := &stackShield{}
	runGraphTest(t, &s.graphCapture, s.test_stack_shield)
	eq(t, s.walk, graphNode{"T<anon>", []string{"capture_test_stack", "deep", "c1"}, []graphNode{
		{"T<anon>", []string{"asyncio.(*Future[...]).Await", "main", "test_stack_shield"}, nil},
	}}, "graph")
}

// ---- test_stack_timeout

type stackTimeout struct{ graphCapture }

func (s *stackTimeout) inner(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.capture_test_stack(tk, nil)
	return nil
}

// c1 is `async with asyncio.timeout(1)`: the block is a closure of c1 that
// Timeout calls.
func (s *stackTimeout) c1(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, asyncio.Timeout(tk, time.Second, func(*asyncio.TimeoutScope) error {
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		return s.inner(tk)
	})
}

func (s *stackTimeout) main(tk *asyncio.T) error {
	_, err := asyncio.Shield[struct{}](asyncio.CreateTask(tk, s.c1)).Await(tk)
	return err
}

func (s *stackTimeout) test_stack_timeout(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_timeout(t *testing.T) {
	s := &stackTimeout{}
	runGraphTest(t, &s.graphCapture, s.test_stack_timeout)
	eq(t, s.walk, graphNode{"T<anon>", []string{"capture_test_stack", "inner", "c1.func1", "asyncio.Timeout", "c1"}, []graphNode{
		{"T<anon>", []string{"asyncio.(*Future[...]).Await", "main", "test_stack_timeout"}, nil},
	}}, "graph")
}

// ---- test_stack_wait

type stackWait struct{ graphCapture }

func (s *stackWait) inner(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.capture_test_stack(tk, nil)
	return nil
}

func (s *stackWait) c1(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, asyncio.Timeout(tk, time.Second, func(*asyncio.TimeoutScope) error {
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		return s.inner(tk)
	})
}

func (s *stackWait) c2(tk *asyncio.T) (struct{}, error) {
	for range 3 {
		if err := asyncio.Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
}

func (s *stackWait) main(tk *asyncio.T, t1, t2 *asyncio.Task[struct{}]) error {
	for {
		_, pending, err := asyncio.Wait(tk, []*asyncio.Task[struct{}]{t1, t2}, asyncio.Never, asyncio.AllCompleted)
		if err != nil || len(pending) == 0 {
			return err
		}
	}
}

func (s *stackWait) test_stack_wait(tk *asyncio.T) (struct{}, error) {
	t1 := asyncio.CreateTask(tk, s.c1)
	t2 := asyncio.CreateTask(tk, s.c2)
	err := s.main(tk, t1, t2)
	if _, err1 := t1.Await(tk); err == nil {
		err = err1
	}
	if _, err2 := t2.Await(tk); err == nil {
		err = err2
	}
	return struct{}{}, err
}

func TestGraph_test_stack_wait(t *testing.T) {
	s := &stackWait{}
	runGraphTest(t, &s.graphCapture, s.test_stack_wait)
	eq(t, s.walk, graphNode{"T<anon>", []string{"capture_test_stack", "inner", "c1.func1", "asyncio.Timeout", "c1"}, []graphNode{
		{"T<anon>", []string{"asyncio.Wait[...]", "main", "test_stack_wait"}, nil},
	}}, "graph")
}

// ---- test_stack_task

type stackTask struct{ graphCapture }

func (s *stackTask) inner(tk *asyncio.T) error {
	if err := asyncio.Sleep(tk, 0); err != nil {
		return err
	}
	s.capture_test_stack(tk, nil)
	return nil
}

func (s *stackTask) c1(tk *asyncio.T) (struct{}, error) { return struct{}{}, s.inner(tk) }

func (s *stackTask) c2(tk *asyncio.T) error {
	_, err := asyncio.CreateTask(tk, s.c1, asyncio.WithName("there there")).Await(tk)
	return err
}

func (s *stackTask) main(tk *asyncio.T) error { return s.c2(tk) }

func (s *stackTask) test_stack_task(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_task(t *testing.T) {
	s := &stackTask{}
	runGraphTest(t, &s.graphCapture, s.test_stack_task)
	eq(t, s.walk, graphNode{"T<there there>", []string{"capture_test_stack", "inner", "c1"}, []graphNode{
		{"T<anon>", []string{"asyncio.(*Task[...]).Await", "c2", "main", "test_stack_task"}, nil},
	}}, "graph")
}

// ---- test_stack_future

type stackFuture struct {
	graphCapture
	fut *asyncio.Future[struct{}]
}

func (s *stackFuture) a2(tk *asyncio.T) (struct{}, error) { return s.fut.Await(tk) }

func (s *stackFuture) a1(tk *asyncio.T) (struct{}, error) { return s.a2(tk) }

func (s *stackFuture) b1(tk *asyncio.T) (struct{}, error) { return s.fut.Await(tk) }

func (s *stackFuture) main(tk *asyncio.T) error {
	s.fut = asyncio.NewFuture[struct{}](tk)
	return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
		if _, err := asyncio.Spawn(g, s.a1, asyncio.WithName("task A")); err != nil {
			return err
		}
		if _, err := asyncio.Spawn(g, s.b1, asyncio.WithName("task B")); err != nil {
			return err
		}
		for range 5 {
			// A few iterations, so that both a1 and b1 await the future.
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}
		s.capture_test_stack(tk, s.fut)
		return s.fut.SetResult(struct{}{})
	})
}

func (s *stackFuture) test_stack_future(tk *asyncio.T) (struct{}, error) {
	return struct{}{}, s.main(tk)
}

func TestGraph_test_stack_future(t *testing.T) {
	s := &stackFuture{}
	runGraphTest(t, &s.graphCapture, s.test_stack_future)
	// The main task, running, awaits both through the TaskGroup; its stack
	// is where it runs: in capture_test_stack, inside the group's body.
	mainTask := graphNode{"T<anon>", []string{"capture_test_stack", "main.func1", "asyncio.TaskGroup", "main", "test_stack_future"}, nil}
	eq(t, s.walk, graphNode{"F", nil, []graphNode{
		{"T<task A>", []string{"asyncio.(*Future[...]).Await", "a2", "a1"}, []graphNode{mainTask}},
		{"T<task B>", []string{"asyncio.(*Future[...]).Await", "b1"}, []graphNode{mainTask}},
	}}, "graph")
	check(t, strings.HasPrefix(s.printed, "* Future(id="), "printed graph starts with the future:\n", s.printed)
}
