package asyncio

import (
	"errors"
	"strings"
	"testing"
)

// The quoting rule: printable one-line strings as they are, anything else
// as a Go string literal.
func TestQuoteText_Rule(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"worker":          "worker",
		"a b-c (d) é 世界":  "a b-c (d) é 世界",
		"└── (T) x":       "└── (T) x",
		"x\n└── (T) fake": `"x\n└── (T) fake"`,
		"\x1b[31mred":     `"\x1b[31mred"`,
		"tab\there":       `"tab\there"`,
		"cr\r":            `"cr\r"`,
		"\u202egnp.exe":   `"\u202egnp.exe"`,
		"bad\xffutf8":     `"bad\xffutf8"`,
		`"quoted"`:        `"\"quoted\""`,
		`mid"quote`:       `mid"quote`,
	} {
		if got := quoteText(in); got != want {
			t.Errorf("quoteText(%q) = %s, want %s", in, got, want)
		}
	}
}

// Python's repr of a str, for the renderings in Python's layouts.
func TestPyQuote_AsPythonRepr(t *testing.T) {
	for in, want := range map[string]string{
		"worker":           `'worker'`,
		"it's":             `"it's"`,
		`it's "x"`:         `'it\'s "x"'`,
		`back\slash`:       `'back\\slash'`,
		"x\n└── (T) y":     `'x\n└── (T) y'`,
		"\x1b[0m\t\r":      `'\x1b[0m\t\r'`,
		"\u202e\U000e0001": `'\u202e\U000e0001'`,
		"\xff":             `'\xff'`,
	} {
		if got := pyQuote(in); got != want {
			t.Errorf("pyQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

const (
	forgedName = "x\n└── (T) fake [waiting 1s on sleep]"
	escapeName = "\x1b[31mred\x1b[0m"
)

// checkNoForgery fails if text has a line that a task name made, or a raw
// escape byte.
func checkNoForgery(t *testing.T, what, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " │"), "└── (T) fake") {
			t.Errorf("%s: a task name forged the line %q in\n%s", what, line, text)
		}
	}
	if strings.ContainsAny(text, "\x1b") {
		t.Errorf("%s: a raw escape byte in\n%q", what, text)
	}
}

// Issue 19 item 6: task names cannot forge lines or print escape bytes in
// pstree, ps, the deadlock report, the call graph, task reprs and
// exception handler messages.
func TestTextRenderings_NamesCannotForgeLines(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	never := NewFuture[int](l)
	var graph string
	inner := CreateTask(l, func(tk *T) (int, error) {
		if err := Sleep(tk, 0); err != nil { // main awaits it now
			return 0, err
		}
		graph = FormatCallGraph(CaptureCallGraph(tk))
		return never.Await(tk)
	}, WithName(escapeName))
	main := CreateTask(l, func(tk *T) (int, error) { return inner.Await(tk) }, WithName(forgedName))
	err := l.RunUntilComplete(main)
	var de *DeadlockError
	if !errors.As(err, &de) {
		t.Fatalf("RunUntilComplete: %v, want a *DeadlockError", err)
	}
	report := de.Error()
	checkNoForgery(t, "deadlock report", report)
	if !strings.Contains(report, `(T) "x\n└── (T) fake [waiting 1s on sleep]" [waiting`) ||
		!strings.Contains(report, `(T) "\x1b[31mred\x1b[0m" [waiting`) {
		t.Errorf("deadlock report without the quoted names:\n%s", report)
	}
	var b strings.Builder
	if err := de.Snapshot.WritePS(&b); err != nil {
		t.Fatal(err)
	}
	ps := b.String()
	checkNoForgery(t, "ps", ps)
	if n := strings.Count(ps, "\n"); n != 2+2 {
		t.Errorf("ps: %d lines, want a header, a rule and one row per task:\n%s", n, ps)
	}
	if !strings.Contains(ps, `task '\x1b[31mred\x1b[0m'`) {
		t.Errorf("ps: the awaited task's name not quoted in awaits:\n%s", ps)
	}
	checkNoForgery(t, "call graph", graph)
	if !strings.Contains(graph, `* Task(name='\x1b[31mred\x1b[0m', id=`) ||
		!strings.Contains(graph, `* Task(name='x\n└── (T) fake [waiting 1s on sleep]', id=`) {
		t.Errorf("call graph:\n%s", graph)
	}
	if got := main.String(); got != `<Task pending name='x\n└── (T) fake [waiting 1s on sleep]'>` {
		t.Errorf("repr %s", got)
	}
	var msgs []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { msgs = append(msgs, c.Message) })
	mustClose(t, l)
	for _, m := range msgs {
		checkNoForgery(t, "exception message", m)
	}

	// A failed task nobody awaited: its name is quoted in the message.
	l = NewLoop(WithVirtualTime())
	var got []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { got = append(got, c.Message) })
	//asynciovet:ignore unawaitedtask the task fails unawaited on purpose: its report is under test
	CreateTask(l, func(tk *T) (int, error) { return 0, errors.New("boom") }, WithName(forgedName))
	runOne(t, l)
	mustClose(t, l)
	if len(got) != 1 || got[0] != `Task exception was never retrieved: "x\n└── (T) fake [waiting 1s on sleep]"` {
		t.Errorf("messages %q", got)
	}
}
