package cpython

// CPython 3.14 Lib/test/test_asyncio/test_tools.py: the layouts of
// `python -m asyncio pstree` (build_async_tree) and `ps`
// (build_task_table), fed with made-up task lists. Here the same lists
// become a hand-built asyncio.LoopSnapshot, rendered by WriteTree and
// WritePS.
//
// A snapshot has one stack per task, the frames it is suspended in, and
// each task awaiting another is suspended in those frames: so the stack of
// an awaiter, which the inputs give on every edge it awaits through
// (always the same one), is the awaiter's Stack. The inputs' thread id is
// the task's goroutine (the tid column).

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// toolsEdge is an awaiter of a task: its id and the frames it awaits in,
// innermost first.
type toolsEdge struct {
	stack  []asyncio.Frame
	parent int
}

type toolsTask struct {
	id        int
	name      string
	awaitedBy []toolsEdge
}

type toolsThread struct {
	tid   uint64
	tasks []toolsTask
}

// fr is a frame known by its function only; frl one with a location.
func fr(fn string) asyncio.Frame { return asyncio.Frame{Function: fn} }

func frl(fn, file string, line int) asyncio.Frame {
	return asyncio.Frame{Function: fn, File: file, Line: line}
}

func frs(fns ...string) []asyncio.Frame {
	out := make([]asyncio.Frame, len(fns))
	for i, f := range fns {
		out[i] = fr(f)
	}
	return out
}

// aw is an edge whose awaiter's frames are known by their functions.
func aw(parent int, fns ...string) toolsEdge { return toolsEdge{frs(fns...), parent} }

func hexID(id int) string { return fmt.Sprintf("0x%x", id) }

// toolsSnapshot builds the snapshot of a tools input.
func toolsSnapshot(t *testing.T, threads []toolsThread) *asyncio.LoopSnapshot {
	t.Helper()
	names := map[int]string{}
	for _, th := range threads {
		for _, tk := range th.tasks {
			names[tk.id] = tk.name
		}
	}
	stacks := map[int][]asyncio.Frame{}
	s := &asyncio.LoopSnapshot{}
	for _, th := range threads {
		for _, tk := range th.tasks {
			ti := asyncio.TaskInfo{ID: hexID(tk.id), Name: tk.name, Goroutine: th.tid}
			for _, e := range tk.awaitedBy {
				if prev, ok := stacks[e.parent]; ok && fmt.Sprint(prev) != fmt.Sprint(e.stack) {
					t.Fatalf("task %d awaits in two stacks: %v and %v", e.parent, prev, e.stack)
				}
				stacks[e.parent] = e.stack
				ti.AwaitedBy = append(ti.AwaitedBy, asyncio.Awaiter{ID: hexID(e.parent), Name: names[e.parent]})
			}
			s.Tasks = append(s.Tasks, ti)
		}
	}
	for i := range s.Tasks {
		var id int
		fmt.Sscanf(s.Tasks[i].ID, "0x%x", &id)
		s.Tasks[i].Stack = stacks[id]
	}
	return s
}

// tree renders the snapshot with WriteTree, split into the trees
// build_async_tree returns (one per root, each a list of lines).
func tree(t *testing.T, s *asyncio.LoopSnapshot) [][]string {
	t.Helper()
	var b strings.Builder
	if err := s.WriteTree(&b); err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		switch {
		case line == "" && len(out) == 0:
		case strings.HasPrefix(line, "cycle: "):
			return out // the cycles listed after the trees
		case strings.HasPrefix(line, "└── ") || len(out) == 0:
			out = append(out, []string{line})
		default:
			out[len(out)-1] = append(out[len(out)-1], line)
		}
	}
	return out
}

// cycleLines are the "cycle: a → b → a" lines after the trees, built from
// CPython's cycles of task ids.
func cycleLines(s *asyncio.LoopSnapshot, cycles [][]int) []string {
	names := map[string]string{}
	for _, ti := range s.Tasks {
		names[ti.ID] = ti.Name
	}
	var out []string
	for _, c := range cycles {
		var ns []string
		for _, id := range c {
			ns = append(ns, names[hexID(id)])
		}
		out = append(out, "cycle: "+strings.Join(ns, " → "))
	}
	return out
}

// listedCycles are the cycle lines WriteTree printed.
func listedCycles(t *testing.T, s *asyncio.LoopSnapshot) []string {
	t.Helper()
	var b strings.Builder
	if err := s.WriteTree(&b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "cycle: ") {
			out = append(out, line)
		}
	}
	return out
}

// psColumns are the columns of WritePS's header: asyncio ps's seven, with
// state, awaits, waiting, cancels and creator after the task name.
var psColumns = []string{"tid", "task id", "task name", "state", "awaits", "waiting", "cancels", "creator",
	"coroutine stack", "awaiter chain", "awaiter name", "awaiter id"}

// toolsColumns are build_task_table's: the indexes into psColumns.
var toolsColumns = []int{0, 1, 2, 8, 9, 10, 11}

// table renders the snapshot with WritePS and cuts its rows at the
// header's column starts; it returns the header's starts and the rows
// reduced to build_task_table's seven columns.
func table(t *testing.T, s *asyncio.LoopSnapshot) (starts []int, rows [][]string) {
	t.Helper()
	var b strings.Builder
	if err := s.WritePS(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 2 || strings.Trim(lines[1], "-") != "" {
		t.Fatalf("no header and rule:\n%s", b.String())
	}
	pos := 0
	for _, c := range psColumns {
		i := strings.Index(lines[0][pos:], c)
		if i < 0 {
			t.Fatalf("header %q has no column %q", lines[0], c)
		}
		starts = append(starts, pos+i)
		pos += i + len(c)
	}
	for _, line := range lines[2:] {
		var row []string
		for _, c := range toolsColumns {
			end := len(line)
			if c+1 < len(starts) {
				end = min(starts[c+1]-1, len(line))
			}
			row = append(row, strings.TrimRight(line[starts[c]:end], " "))
		}
		rows = append(rows, row)
	}
	return starts, rows
}

// withChains fills the coroutine-stack column of CPython's expected rows
// (empty in test_tools.py, whose tasks have no frames of their own) with
// the task's frames, which in a snapshot are the ones it awaits others in.
func withChains(s *asyncio.LoopSnapshot, want [][]string) [][]string {
	chains := map[string]string{}
	for _, ti := range s.Tasks {
		var fns []string
		for _, f := range ti.Stack {
			fns = append(fns, f.Function)
		}
		chains[ti.ID] = strings.Join(fns, " -> ")
	}
	out := make([][]string, len(want))
	for i, r := range want {
		out[i] = append([]string(nil), r...)
		out[i][3] = chains[r[1]]
	}
	return out
}

// ---- TEST_INPUTS_TREE / TEST_INPUTS_TABLE

// timerInput: a task "timer" awaited by four subtasks of two TaskGroup
// children (root1, root2) of Task-1; with locations when located.
func timerInput(located bool) []toolsThread {
	f := func(fn string, line int) asyncio.Frame {
		if located {
			return frl(fn, "/path/to/app.py", line)
		}
		return fr(fn)
	}
	a := func(parent int) toolsEdge {
		return toolsEdge{[]asyncio.Frame{f("awaiter3", 130), f("awaiter2", 120), f("awaiter", 110)}, parent}
	}
	b := func(parent int) toolsEdge {
		if located {
			return toolsEdge{[]asyncio.Frame{f("awaiterB3", 190), f("awaiterB2", 180), f("awaiterB", 170)}, parent}
		}
		return aw(parent, "awaiter1_3", "awaiter1_2", "awaiter1")
	}
	return []toolsThread{{1, []toolsTask{
		{2, "Task-1", nil},
		{3, "timer", []toolsEdge{a(4), b(5), b(6), a(7)}},
		{8, "root1", []toolsEdge{aw(2, "_aexit", "__aexit__", "main")}},
		{9, "root2", []toolsEdge{aw(2, "_aexit", "__aexit__", "main")}},
		{4, "child1_1", []toolsEdge{aw(8, "_aexit", "__aexit__", "blocho_caller", "bloch")}},
		{6, "child2_1", []toolsEdge{aw(8, "_aexit", "__aexit__", "blocho_caller", "bloch")}},
		{7, "child1_2", []toolsEdge{aw(9, "_aexit", "__aexit__", "blocho_caller", "bloch")}},
		{5, "child2_2", []toolsEdge{aw(9, "_aexit", "__aexit__", "blocho_caller", "bloch")}},
	}}, {0, nil}}
}

func twoRootsInput() []toolsThread {
	return []toolsThread{
		{9, []toolsTask{{5, "Task-5", nil}, {6, "Task-6", []toolsEdge{aw(5, "main2")}},
			{7, "Task-7", []toolsEdge{aw(5, "main2")}}, {8, "Task-8", []toolsEdge{aw(5, "main2")}}}},
		{10, []toolsTask{{1, "Task-1", nil}, {2, "Task-2", []toolsEdge{aw(1, "main")}},
			{3, "Task-3", []toolsEdge{aw(1, "main")}}, {4, "Task-4", []toolsEdge{aw(1, "main")}}}},
		{11, nil}, {0, nil},
	}
}

func rootWithoutSubtasksInput() []toolsThread {
	return []toolsThread{
		{1, []toolsTask{{2, "Task-5", nil}}},
		{3, []toolsTask{{4, "Task-1", nil}, {5, "Task-2", []toolsEdge{aw(4, "main")}},
			{6, "Task-3", []toolsEdge{aw(4, "main")}}, {7, "Task-4", []toolsEdge{aw(4, "main")}}}},
		{8, nil}, {0, nil},
	}
}

// oneCycleInput: a and b await each other; Task-1 awaits a.
func oneCycleInput() []toolsThread {
	return []toolsThread{{1, []toolsTask{
		{2, "Task-1", nil},
		{3, "a", []toolsEdge{aw(4, "awaiter2"), aw(2, "main")}},
		{4, "b", []toolsEdge{aw(3, "awaiter")}},
	}}, {0, nil}}
}

// twoCyclesInput: A and B await each other, and B, Task-2 and C await
// each other in a ring.
func twoCyclesInput() []toolsThread {
	return []toolsThread{{1, []toolsTask{
		{2, "Task-1", nil},
		{3, "A", []toolsEdge{aw(4, "nested", "nested", "task_b")}},
		{4, "B", []toolsEdge{aw(5, "nested", "nested", "task_c"), aw(3, "nested", "nested", "task_a")}},
		{5, "C", []toolsEdge{aw(6, "nested", "nested")}},
		{6, "Task-2", []toolsEdge{aw(4, "nested", "nested", "task_b")}},
	}}, {0, nil}}
}

func TestTools_TestAsyncioToolsTree_test_asyncio_utils(t *testing.T) {
	cases := []struct {
		input []toolsThread
		want  [][]string
	}{
		{timerInput(true), [][]string{{
			"└── (T) Task-1",
			"    └──  main",
			"        └──  __aexit__",
			"            └──  _aexit",
			"                ├── (T) root1",
			"                │   └──  bloch",
			"                │       └──  blocho_caller",
			"                │           └──  __aexit__",
			"                │               └──  _aexit",
			"                │                   ├── (T) child1_1",
			"                │                   │   └──  awaiter /path/to/app.py:110",
			"                │                   │       └──  awaiter2 /path/to/app.py:120",
			"                │                   │           └──  awaiter3 /path/to/app.py:130",
			"                │                   │               └── (T) timer",
			"                │                   └── (T) child2_1",
			"                │                       └──  awaiterB /path/to/app.py:170",
			"                │                           └──  awaiterB2 /path/to/app.py:180",
			"                │                               └──  awaiterB3 /path/to/app.py:190",
			"                │                                   └── (T) timer",
			"                └── (T) root2",
			"                    └──  bloch",
			"                        └──  blocho_caller",
			"                            └──  __aexit__",
			"                                └──  _aexit",
			"                                    ├── (T) child1_2",
			"                                    │   └──  awaiter /path/to/app.py:110",
			"                                    │       └──  awaiter2 /path/to/app.py:120",
			"                                    │           └──  awaiter3 /path/to/app.py:130",
			"                                    │               └── (T) timer",
			"                                    └── (T) child2_2",
			"                                        └──  awaiterB /path/to/app.py:170",
			"                                            └──  awaiterB2 /path/to/app.py:180",
			"                                                └──  awaiterB3 /path/to/app.py:190",
			"                                                    └── (T) timer",
		}}},
		{twoRootsInput(), [][]string{
			{"└── (T) Task-5", "    └──  main2", "        ├── (T) Task-6", "        ├── (T) Task-7", "        └── (T) Task-8"},
			{"└── (T) Task-1", "    └──  main", "        ├── (T) Task-2", "        ├── (T) Task-3", "        └── (T) Task-4"},
		}},
		{rootWithoutSubtasksInput(), [][]string{
			{"└── (T) Task-5"},
			{"└── (T) Task-1", "    └──  main", "        ├── (T) Task-2", "        ├── (T) Task-3", "        └── (T) Task-4"},
		}},
	}
	for i, c := range cases {
		eq(t, tree(t, toolsSnapshot(t, c.input)), c.want, "case ", i)
	}
}

func TestTools_test_asyncio_utils_cycles(t *testing.T) {
	cases := []struct {
		input  []toolsThread
		cycles [][]int
	}{
		{oneCycleInput(), [][]int{{4, 3, 4}}},
		{twoCyclesInput(), [][]int{{4, 3, 4}, {4, 6, 5, 4}}},
	}
	for i, c := range cases {
		s := toolsSnapshot(t, c.input)
		eq(t, listedCycles(t, s), cycleLines(s, c.cycles), "case ", i)
	}
}

func TestTools_TestAsyncioToolsTable_test_asyncio_utils(t *testing.T) {
	cases := []struct {
		input []toolsThread
		want  [][]string
	}{
		{timerInput(false), [][]string{
			{"1", "0x2", "Task-1", "", "", "", "0x0"},
			{"1", "0x3", "timer", "", "awaiter3 -> awaiter2 -> awaiter", "child1_1", "0x4"},
			{"1", "0x3", "timer", "", "awaiter1_3 -> awaiter1_2 -> awaiter1", "child2_2", "0x5"},
			{"1", "0x3", "timer", "", "awaiter1_3 -> awaiter1_2 -> awaiter1", "child2_1", "0x6"},
			{"1", "0x3", "timer", "", "awaiter3 -> awaiter2 -> awaiter", "child1_2", "0x7"},
			{"1", "0x8", "root1", "", "_aexit -> __aexit__ -> main", "Task-1", "0x2"},
			{"1", "0x9", "root2", "", "_aexit -> __aexit__ -> main", "Task-1", "0x2"},
			{"1", "0x4", "child1_1", "", "_aexit -> __aexit__ -> blocho_caller -> bloch", "root1", "0x8"},
			{"1", "0x6", "child2_1", "", "_aexit -> __aexit__ -> blocho_caller -> bloch", "root1", "0x8"},
			{"1", "0x7", "child1_2", "", "_aexit -> __aexit__ -> blocho_caller -> bloch", "root2", "0x9"},
			{"1", "0x5", "child2_2", "", "_aexit -> __aexit__ -> blocho_caller -> bloch", "root2", "0x9"},
		}},
		{twoRootsInput(), [][]string{
			{"9", "0x5", "Task-5", "", "", "", "0x0"},
			{"9", "0x6", "Task-6", "", "main2", "Task-5", "0x5"},
			{"9", "0x7", "Task-7", "", "main2", "Task-5", "0x5"},
			{"9", "0x8", "Task-8", "", "main2", "Task-5", "0x5"},
			{"10", "0x1", "Task-1", "", "", "", "0x0"},
			{"10", "0x2", "Task-2", "", "main", "Task-1", "0x1"},
			{"10", "0x3", "Task-3", "", "main", "Task-1", "0x1"},
			{"10", "0x4", "Task-4", "", "main", "Task-1", "0x1"},
		}},
		{rootWithoutSubtasksInput(), [][]string{
			{"1", "0x2", "Task-5", "", "", "", "0x0"},
			{"3", "0x4", "Task-1", "", "", "", "0x0"},
			{"3", "0x5", "Task-2", "", "main", "Task-1", "0x4"},
			{"3", "0x6", "Task-3", "", "main", "Task-1", "0x4"},
			{"3", "0x7", "Task-4", "", "main", "Task-1", "0x4"},
		}},
		{oneCycleInput(), [][]string{
			{"1", "0x2", "Task-1", "", "", "", "0x0"},
			{"1", "0x3", "a", "", "awaiter2", "b", "0x4"},
			{"1", "0x3", "a", "", "main", "Task-1", "0x2"},
			{"1", "0x4", "b", "", "awaiter", "a", "0x3"},
		}},
		{twoCyclesInput(), [][]string{
			{"1", "0x2", "Task-1", "", "", "", "0x0"},
			{"1", "0x3", "A", "", "nested -> nested -> task_b", "B", "0x4"},
			{"1", "0x4", "B", "", "nested -> nested -> task_c", "C", "0x5"},
			{"1", "0x4", "B", "", "nested -> nested -> task_a", "A", "0x3"},
			{"1", "0x5", "C", "", "nested -> nested", "Task-2", "0x6"},
			{"1", "0x6", "Task-2", "", "nested -> nested -> task_b", "B", "0x4"},
		}},
	}
	for i, c := range cases {
		s := toolsSnapshot(t, c.input)
		_, rows := table(t, s)
		eq(t, rows, withChains(s, c.want), "case ", i)
	}
}

func TestTools_test_empty_input_tree(t *testing.T) {
	eq(t, tree(t, &asyncio.LoopSnapshot{}), [][]string(nil))
}

func TestTools_test_empty_input_table(t *testing.T) {
	_, rows := table(t, &asyncio.LoopSnapshot{})
	eq(t, rows, [][]string(nil))
}

func independentInput() []toolsThread {
	return []toolsThread{{1, []toolsTask{{10, "taskA", nil}, {11, "taskB", nil}}}}
}

func TestTools_test_only_independent_tasks_tree(t *testing.T) {
	eq(t, tree(t, toolsSnapshot(t, independentInput())), [][]string{{"└── (T) taskA"}, {"└── (T) taskB"}})
}

func TestTools_test_only_independent_tasks_table(t *testing.T) {
	_, rows := table(t, toolsSnapshot(t, independentInput()))
	eq(t, rows, [][]string{{"1", "0xa", "taskA", "", "", "", "0x0"}, {"1", "0xb", "taskB", "", "", "", "0x0"}})
}

func TestTools_test_single_task_tree(t *testing.T) {
	eq(t, tree(t, toolsSnapshot(t, []toolsThread{{1, []toolsTask{{2, "Task-1", nil}}}})), [][]string{{"└── (T) Task-1"}})
}

func TestTools_test_single_task_table(t *testing.T) {
	_, rows := table(t, toolsSnapshot(t, []toolsThread{{1, []toolsTask{{2, "Task-1", nil}}}}))
	eq(t, rows, [][]string{{"1", "0x2", "Task-1", "", "", "", "0x0"}})
}

// test_cycle_detection and the cycle tests below are divergences: pstree
// refuses to draw a graph with a cycle (CycleFoundException), WriteTree
// draws it cut and lists the cycles; these check the cycles listed.
// treesCycles is build_async_tree's contract: Trees returns no tree and an
// *AwaitCycleError whose cycles (task IDs) are the ones CPython expects.
func treesCycles(t *testing.T, s *asyncio.LoopSnapshot, want [][]int) {
	t.Helper()
	trees, err := s.Trees()
	var ce *asyncio.AwaitCycleError
	if !errors.As(err, &ce) {
		t.Fatalf("Trees() = %v, %v; want an *AwaitCycleError", trees, err)
	}
	if trees != nil {
		t.Errorf("Trees() drew %v despite the cycle", trees)
	}
	var wantIDs [][]string
	for _, c := range want {
		var ids []string
		for _, id := range c {
			ids = append(ids, hexID(id))
		}
		wantIDs = append(wantIDs, ids)
	}
	eq(t, ce.Cycles, wantIDs, "cycles")
}

func TestTools_test_cycle_detection(t *testing.T) {
	s := toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{2, "Task-1", []toolsEdge{aw(3, "main")}},
		{3, "Task-2", []toolsEdge{aw(2, "main")}},
	}}})
	treesCycles(t, s, [][]int{{3, 2, 3}})
	eq(t, listedCycles(t, s), cycleLines(s, [][]int{{3, 2, 3}}))
	// Where pstree stops, the tree is drawn up to where the cycle closes.
	eq(t, tree(t, s)[0], []string{
		"└── (T) Task-1",
		"    └──  main",
		"        └── (T) Task-2",
		"            └──  main",
		"                └── (T) Task-1 (cycle: awaits itself through the tasks above)",
	})
}

func complexInput() []toolsThread {
	return []toolsThread{{1, []toolsTask{
		{2, "Task-1", nil},
		{3, "Task-2", []toolsEdge{aw(2, "main")}},
		{4, "Task-3", []toolsEdge{aw(3, "main")}},
	}}}
}

func TestTools_test_complex_tree(t *testing.T) {
	eq(t, tree(t, toolsSnapshot(t, complexInput())), [][]string{{
		"└── (T) Task-1",
		"    └──  main",
		"        └── (T) Task-2",
		"            └──  main",
		"                └── (T) Task-3",
	}})
}

func TestTools_test_complex_table(t *testing.T) {
	s := toolsSnapshot(t, complexInput())
	_, rows := table(t, s)
	eq(t, rows, withChains(s, [][]string{
		{"1", "0x2", "Task-1", "", "", "", "0x0"},
		{"1", "0x3", "Task-2", "", "main", "Task-1", "0x2"},
		{"1", "0x4", "Task-3", "", "main", "Task-2", "0x3"},
	}))
}

func TestTools_test_deep_coroutine_chain(t *testing.T) {
	s := toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{10, "leaf", []toolsEdge{aw(11, "c1", "c2", "c3", "c4", "c5")}},
		{11, "root", nil},
	}}})
	eq(t, tree(t, s), [][]string{{
		"└── (T) root",
		"    └──  c5",
		"        └──  c4",
		"            └──  c3",
		"                └──  c2",
		"                    └──  c1",
		"                        └── (T) leaf",
	}})
}

func TestTools_test_multiple_cycles_same_node(t *testing.T) {
	// Task-B awaits Task-A in call1 and Task-C in call4, which a snapshot
	// cannot hold (a task is suspended in one stack): call1 for both here;
	// the cycles do not depend on the frames.
	s := toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{1, "Task-A", []toolsEdge{aw(2, "call1")}},
		{2, "Task-B", []toolsEdge{aw(3, "call2")}},
		{3, "Task-C", []toolsEdge{aw(1, "call3"), aw(2, "call1")}},
	}}})
	// CPython asserts that build_async_tree raises with a cycle through
	// all three tasks.
	_, err := s.Trees()
	var ce *asyncio.AwaitCycleError
	if !errors.As(err, &ce) {
		t.Fatalf("Trees() error = %v, want an *AwaitCycleError", err)
	}
	through3 := false
	for _, c := range ce.Cycles {
		seen := map[string]bool{}
		for _, id := range c {
			seen[id] = true
		}
		through3 = through3 || len(seen) == 3
	}
	check(t, through3, "a cycle through Task-A, Task-B and Task-C: ", ce.Cycles)
	all3 := false
	for _, line := range listedCycles(t, s) {
		names := strings.Split(strings.TrimPrefix(line, "cycle: "), " → ")
		seen := map[string]bool{}
		for _, n := range names {
			seen[n] = true
		}
		all3 = all3 || len(seen) == 3
	}
	check(t, all3, "a cycle through Task-A, Task-B and Task-C is listed: ", listedCycles(t, s))
}

func TestTools_test_table_output_format(t *testing.T) {
	s := toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{1, "Task-A", []toolsEdge{aw(2, "foo")}},
		{2, "Task-B", nil},
	}}})
	starts, rows := table(t, s)
	check(t, len(rows) == 2, "two rows: ", rows)
	for _, row := range rows {
		eq(t, len(row), 7, "columns")
		var tid int
		_, err := fmt.Sscan(row[0], &tid)
		noErr(t, err, "thread id ", row[0])
		check(t, strings.HasPrefix(row[1], "0x"), "hex task id ", row[1])
		check(t, strings.HasPrefix(row[6], "0x"), "hex awaiter id ", row[6])
	}
	// The columns ps shares keep its widths: tid 10, task id 20, task name
	// 20, coroutine stack 50, awaiter chain 50, awaiter name 15 (and the
	// rule under the header is as long as the header).
	width := func(i int) int { return starts[i+1] - starts[i] - 1 }
	eq(t, []int{width(0), width(1), width(2), width(8), width(9), width(10)}, []int{10, 20, 20, 50, 50, 15}, "widths")
}

func TestTools_test_task_awaits_self(t *testing.T) {
	s := toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{1, "Self-Awaiter", []toolsEdge{aw(1, "loopback")}},
	}}})
	treesCycles(t, s, [][]int{{1, 1}})
	eq(t, listedCycles(t, s), cycleLines(s, [][]int{{1, 1}}))
}

func TestTools_test_task_with_missing_awaiter_id(t *testing.T) {
	_, rows := table(t, toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{1, "Task-A", []toolsEdge{aw(999, "coro")}},
	}}}))
	eq(t, len(rows), 1, "rows")
	if len(rows) == 1 {
		eq(t, rows[0][5], "Unknown", "awaiter name")
	}
}

func TestTools_test_duplicate_coroutine_frames(t *testing.T) {
	trees := tree(t, toolsSnapshot(t, []toolsThread{{1, []toolsTask{
		{1, "Task-1", []toolsEdge{aw(2, "frameA"), aw(3, "frameA")}},
		{2, "Task-2", nil},
		{3, "Task-3", nil},
	}}}))
	eq(t, len(trees), 2, "trees")
	for i, other := range []string{"Task-2", "Task-3"} {
		if i < len(trees) {
			flat := strings.Join(trees[i], "\n")
			for _, want := range []string{"frameA", other, "Task-1"} {
				check(t, strings.Contains(flat, want), "tree ", i, " has ", want, ":\n", flat)
			}
		}
	}
}
