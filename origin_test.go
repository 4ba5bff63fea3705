package asyncio

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// failingWorker is a named coroutine function for the origin reports.
func failingWorker(t *T) error { return errors.New("worker failed") }

// closeAndCollect runs main on a fresh loop (debug as asked), closes it and
// returns the "never retrieved" reports Close made.
func unretrievedReports(t *testing.T, debug bool, main func(tk *T) error) []ExceptionContext {
	t.Helper()
	l := NewTestLoop()
	l.SetDebug(debug)
	var got []ExceptionContext
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if strings.Contains(c.Message, "never retrieved") {
			got = append(got, c)
		}
	})
	task := CreateTask(l, func(tk *T) (struct{}, error) { return struct{}{}, main(tk) })
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// A task's error nobody retrieved is reported with the task as asyncio
// prints it: its name and its coroutine function with where that is
// defined, also through CreateTaskErr's and SpawnErr's wrappers.
func TestOrigin_UnretrievedNamesTaskAndCoroutine(t *testing.T) {
	got := unretrievedReports(t, false, func(tk *T) error {
		//asynciovet:ignore unawaitedtask a failed task nobody awaits is the scenario under test
		CreateTaskErr(tk, failingWorker, WithName("w1"))
		//asynciovet:ignore unawaitedtask a failed task nobody awaits is the scenario under test
		CreateTask(tk, func(tk *T) (int, error) { return 0, errors.New("closure failed") }, WithName("w2"))
		return Sleep(tk, 0)
	})
	if len(got) != 2 {
		t.Fatalf("reports: %+v", got)
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^<Task finished name='w1' coro=<github.com/go-asyncio/asyncio.failingWorker\(\) done, defined at .*/origin_test.go:11>>$`),
		regexp.MustCompile(`^<Task finished name='w2' coro=<github.com/go-asyncio/asyncio.TestOrigin_UnretrievedNamesTaskAndCoroutine.func1.1\(\) done, defined at .*/origin_test.go:\d+>>$`),
	}
	for i, c := range got {
		if !want[i].MatchString(c.Origin) {
			t.Errorf("report %d origin %q, want %v", i, c.Origin, want[i])
		}
		if c.AwaitChain != "" {
			t.Errorf("report %d: an await chain outside debug mode: %q", i, c.AwaitChain)
		}
	}
}

// In debug mode the report also says where the task was created (the
// first frame outside the package) and who awaited it when it failed.
func TestOrigin_DebugCreationSiteAndAwaitChain(t *testing.T) {
	got := unretrievedReports(t, true, func(tk *T) error {
		w := CreateTaskErr(tk, failingWorker, WithName("w"))
		// Wait awaits w through a done callback and never reads its error.
		_, _, err := Wait(tk, []*Task[struct{}]{w}, Never, AllCompleted)
		return err
	})
	if len(got) != 1 {
		t.Fatalf("reports: %+v", got)
	}
	c := got[0]
	if !regexp.MustCompile(` created at .*/origin_test.go:\d+ in github.com/go-asyncio/asyncio.TestOrigin_DebugCreationSiteAndAwaitChain.func1$`).MatchString(c.Origin) {
		t.Errorf("origin %q lacks the creation site", c.Origin)
	}
	for _, want := range []string{"* Task(name='w'", "+ Awaited by:", "* Task(name='Task-"} {
		if !strings.Contains(c.AwaitChain, want) {
			t.Errorf("await chain %q lacks %q", c.AwaitChain, want)
		}
	}
}

// The default handler logs the origin and the await chain, and the stack
// of a PanicError even inside a group.
func TestOrigin_DefaultHandlerLogsOriginAndPanicStack(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	defer mustClose(t, l)
	l.CallExceptionHandler(ExceptionContext{Message: "m", Origin: "<Task finished name='x'>", AwaitChain: "* Task(name='x')"})
	l.CallExceptionHandler(ExceptionContext{Message: "grouped", Err: &ExceptionGroup{Msg: "g", Errs: []error{newPanicError("boom")}}})
	checkLines(t, []string{
		"ERROR m origin=<Task finished name='x'> await_chain=* Task(name='x')",
		"ERROR grouped exception=g (1 sub-exception) stack=...",
	}, logs.take())
}

// A report about a task carries the task's ContextVar values: from the
// moment it failed for an error nobody retrieved, from the task itself
// for a report naming it (CallExceptionHandler fills Context from Task).
func TestOrigin_ReportsCarryTheTasksContext(t *testing.T) {
	v := NewContextVar("v", "default")
	l := NewTestLoop()
	var got []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { got = append(got, c.Message+": "+v.Value(c.Context)) })
	main := CreateTask(l, func(tk *T) (struct{}, error) {
		//asynciovet:ignore unawaitedtask a failed task nobody awaits is the scenario under test
		CreateTaskErr(tk, func(st *T) error {
			v.Set(st, "failed task's")
			return errors.New("x")
		})
		v.Set(tk, "main's")
		l.CallExceptionHandler(ExceptionContext{Message: "about main", Task: tk})
		return struct{}{}, Sleep(tk, 0)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	if len(got) != 2 || got[0] != "about main: main's" || !strings.HasSuffix(got[1], ": failed task's") {
		t.Errorf("reports: %q", got)
	}
}
