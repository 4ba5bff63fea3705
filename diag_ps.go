package asyncio

// Text renderings of a LoopSnapshot in the layouts of CPython 3.14's
// `python -m asyncio ps` (a table, one row per task and awaiter) and
// `python -m asyncio pstree` (a tree of who awaits whom, each task's
// frames between it and the tasks it awaits), with this library's extra
// columns: state, what the task awaits and for how long, cancel requests,
// creator.

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WritePS writes the snapshot as a table in the layout of `python -m
// asyncio ps`: one row per task and task awaiting it (the awaiter columns
// empty, awaiter id 0x0, for a task nobody awaits), with the goroutine in
// the "tid" column ("-" when not recorded). The snapshot of a blocked or
// closed loop starts with the line WriteTree starts it with, so that its
// empty table is not read as a loop without tasks.
func (s *LoopSnapshot) WritePS(w io.Writer) error {
	ew := &errWriter{w: w}
	s.writeMarker(ew)
	byID := s.byID()
	ew.printf("%-10s %-20s %-20s %-9s %-24s %-10s %-8s %-24s %-50s %-50s %-15s %-15s\n",
		"tid", "task id", "task name", "state", "awaits", "waiting", "cancels", "creator",
		"coroutine stack", "awaiter chain", "awaiter name", "awaiter id")
	ew.printf("%s\n", strings.Repeat("-", 10+20+20+9+24+10+8+24+50+50+15+15+11))
	for _, ti := range s.Tasks {
		tid := "-"
		if ti.Goroutine != 0 {
			tid = fmt.Sprint(ti.Goroutine)
		}
		waiting := ""
		if ti.State == "waiting" {
			waiting = fmtDuration(ti.Waiting)
		}
		cancels := ""
		if ti.Cancelling > 0 || len(ti.CancelRequests) > 0 {
			cancels = fmt.Sprintf("%d/%d", ti.Cancelling, len(ti.CancelRequests))
		}
		row := func(chain, name, id string) {
			ew.printf("%-10s %-20s %-20s %-9s %-24s %-10s %-8s %-24s %-50s %-50s %-15s %-15s\n",
				tid, ti.ID, quoteText(ti.Name), ti.State, quoteText(ti.Awaits), waiting, cancels, quoteText(ti.Creator),
				stackChain(ti.Stack), chain, quoteText(name), id)
		}
		if len(ti.AwaitedBy) == 0 {
			row("", "", "0x0")
			continue
		}
		for _, a := range ti.AwaitedBy {
			chain, name := "", a.Name
			if p, ok := byID[a.ID]; ok {
				chain = stackChain(p.Stack)
			} else if name == "" {
				name = "Unknown" // as ps, for an awaiter it knows nothing of
			}
			row(chain, name, a.ID)
		}
	}
	s.writeFooter(ew)
	return ew.err
}

// WriteTree writes the snapshot as a tree in the layout of `python -m
// asyncio pstree`: each task nobody awaits is a root; under a task come its
// frames, outermost first (when its stack was recorded), and under the
// innermost one the tasks it awaits. A task awaited by several tasks is
// drawn under each, as in pstree, except that one awaiting other tasks is
// drawn in full under the first only ("(shown above)" after), so the
// output stays as long as the snapshot. A cycle of tasks awaiting each
// other (a deadlock), which pstree reports as an error, is cut where it
// closes, and listed after the trees as pstree lists it.
//
// In the tree and in WritePS's table, a task name, a source path or any
// other string from the program is printed as it is when it is printable
// and on one line, and as a Go string literal (strconv.Quote) otherwise,
// so that no name can forge a line or send raw escape bytes to a
// terminal: a task named "x\n└── (T) fake" is printed "x\n└── (T) fake"
// in double quotes, with the backslash.
func (s *LoopSnapshot) WriteTree(w io.Writer) error {
	ew := &errWriter{w: w}
	s.writeMarker(ew)
	byID := s.byID()
	children := s.awaitedChildren(byID) // awaiter id -> awaited task ids
	awaited := map[string]bool{}
	for _, kids := range children {
		for _, k := range kids {
			awaited[k] = true
		}
	}
	expanded := map[string]bool{} // a task awaited by several is drawn in full once
	var render func(id, prefix string, last bool, path []string)
	render = func(id, prefix string, last bool, path []string) {
		ti := byID[id]
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		for _, p := range path {
			if p == id {
				ew.printf("%s%s(T) %s (cycle: awaits itself through the tasks above)\n", prefix, branch, quoteText(ti.Name))
				return
			}
		}
		if expanded[id] && len(children[id]) > 0 {
			// A task awaiting others is drawn in full once (pstree
			// repeats it); one awaiting none is repeated, as in pstree.
			ew.printf("%s%s(T) %s (shown above)\n", prefix, branch, quoteText(ti.Name))
			return
		}
		expanded[id] = true
		ew.printf("%s%s(T) %s%s\n", prefix, branch, quoteText(ti.Name), treeLabel(*ti))
		prefix += next
		path = append(path, id)
		// The task's frames, outermost first, each under the previous.
		for i := len(ti.Stack) - 1; i >= 0; i-- {
			fr := ti.Stack[i]
			if fr.File == "" && fr.Line == 0 && fr.Function != "" {
				ew.printf("%s└──  %s\n", prefix, quoteText(shortFunc(fr.Function))) // no location: the name alone, as pstree
			} else {
				ew.printf("%s└──  %s\n", prefix, fr)
			}
			prefix += "    "
		}
		kids := children[id]
		for i, k := range kids {
			render(k, prefix, i == len(kids)-1, path)
		}
	}
	var roots []string
	for _, ti := range s.Tasks {
		if !awaited[ti.ID] {
			roots = append(roots, ti.ID)
		}
	}
	for _, r := range roots {
		render(r, "", true, nil)
	}
	// Tasks only in cycles have no root: start from each one not drawn.
	drawn := map[string]bool{}
	var mark func(id string)
	mark = func(id string) {
		if drawn[id] {
			return
		}
		drawn[id] = true
		for _, k := range children[id] {
			mark(k)
		}
	}
	for _, r := range roots {
		mark(r)
	}
	for _, ti := range s.Tasks {
		if !drawn[ti.ID] {
			render(ti.ID, "", true, nil)
			mark(ti.ID)
		}
	}
	cycles := s.awaitCycles(byID, children)
	for _, c := range cycles {
		names := make([]string, len(c))
		for i, id := range c {
			names[i] = quoteText(byID[id].Name)
		}
		ew.printf("cycle: %s\n", strings.Join(names, " → "))
	}
	s.writeFooter(ew)
	return ew.err
}

// AwaitCycles returns the cycles of the snapshot's await graph (tasks
// awaiting each other: a deadlock), each as the task IDs along it with the
// first repeated at the end, found as `python -m asyncio pstree` finds them
// (tools.py's depth-first search from each awaiter in the order met, one
// cycle per back edge); nil when there is none.
func (s *LoopSnapshot) AwaitCycles() [][]string {
	byID := s.byID()
	return s.awaitCycles(byID, s.awaitedChildren(byID))
}

// awaitedChildren maps each awaiter's ID to the IDs of the tasks it awaits,
// in snapshot order (only awaiters that are in the snapshot).
func (s *LoopSnapshot) awaitedChildren(byID map[string]*TaskInfo) map[string][]string {
	children := map[string][]string{}
	for _, ti := range s.Tasks {
		for _, a := range ti.AwaitedBy {
			if _, ok := byID[a.ID]; ok {
				children[a.ID] = append(children[a.ID], ti.ID)
			}
		}
	}
	return children
}

func (s *LoopSnapshot) awaitCycles(byID map[string]*TaskInfo, children map[string][]string) [][]string {
	// The cycles, found as pstree finds them: a depth-first search of the
	// awaiter -> awaited graph from each awaiter in the order met, each
	// back edge giving the path from the task it reaches.
	var parents []string
	isParent := map[string]bool{} // (a search of parents would be quadratic)
	for _, ti := range s.Tasks {
		for _, a := range ti.AwaitedBy {
			if _, ok := byID[a.ID]; ok && !isParent[a.ID] {
				isParent[a.ID] = true
				parents = append(parents, a.ID)
			}
		}
	}
	var cycles [][]string
	color := map[string]int{} // 0 not seen, 1 on the path, 2 done
	var dfsPath []string
	var dfs func(v string)
	dfs = func(v string) {
		color[v] = 1
		dfsPath = append(dfsPath, v)
		for _, w := range children[v] {
			switch color[w] {
			case 0:
				dfs(w)
			case 1:
				cycles = append(cycles, append(append([]string(nil), dfsPath[indexOf(dfsPath, w):]...), w))
			}
		}
		color[v] = 2
		dfsPath = dfsPath[:len(dfsPath)-1]
	}
	for _, p := range parents {
		if color[p] == 0 {
			dfs(p)
		}
	}
	return cycles
}

// Trees returns the snapshot's trees as WriteTree draws them, one slice of
// lines per root, as tools.py's build_async_tree does; when the await graph
// has a cycle it returns no tree and an *AwaitCycleError listing the cycles,
// as build_async_tree raises CycleFoundException (WriteTree draws the trees
// anyway, cut where a cycle closes).
func (s *LoopSnapshot) Trees() ([][]string, error) {
	if c := s.AwaitCycles(); len(c) > 0 {
		names := map[string]string{}
		for _, ti := range s.Tasks {
			names[ti.ID] = ti.Name
		}
		return nil, &AwaitCycleError{Cycles: c, Names: names}
	}
	only := *s
	only.Blocked, only.Closed, only.Omitted, only.Notes = false, false, 0, nil
	var b strings.Builder
	if err := only.WriteTree(&b); err != nil {
		return nil, err
	}
	var trees [][]string
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "└── "):
			trees = append(trees, []string{line})
		case len(trees) > 0:
			trees[len(trees)-1] = append(trees[len(trees)-1], line)
		}
	}
	return trees, nil
}

// AwaitCycleError is Trees' error for an await graph with cycles (pstree's
// CycleFoundException): Cycles as AwaitCycles returns them, Names the task
// names by ID.
type AwaitCycleError struct {
	Cycles [][]string
	Names  map[string]string
}

// Error lists the cycles by task name, as pstree prints them.
func (e *AwaitCycleError) Error() string {
	var b strings.Builder
	b.WriteString("await-graph contains cycles - cannot print a tree")
	for _, c := range e.Cycles {
		names := make([]string, len(c))
		for i, id := range c {
			names[i] = quoteText(e.Names[id])
		}
		b.WriteString("; cycle: " + strings.Join(names, " → "))
	}
	return b.String()
}

// treeLabel is what follows a task's name in the tree: " [waiting 1.5s on
// sleep; cancelling 1]".
func treeLabel(ti TaskInfo) string {
	var parts []string
	switch ti.State {
	case "waiting":
		parts = append(parts, "waiting "+fmtDuration(ti.Waiting)+" on "+quoteText(ti.Awaits))
	case "":
	default:
		parts = append(parts, ti.State)
	}
	if ti.Cancelling > 0 {
		parts = append(parts, fmt.Sprintf("cancelling %d", ti.Cancelling))
	}
	if ti.CancelDeliveredAt != nil {
		parts = append(parts, "CancelledError returned at "+ti.CancelDeliveredAt.String()+" not returned")
	}
	if len(parts) == 0 {
		return "" // nothing known but the name (a snapshot built by hand), as pstree
	}
	return " [" + strings.Join(parts, "; ") + "]"
}

// writeMarker says, before a tree or a table, that the snapshot is of a
// blocked or closed loop, so that its empty rendering is not read as a
// loop with no tasks.
func (s *LoopSnapshot) writeMarker(ew *errWriter) {
	switch {
	case s.Blocked:
		ew.printf("(loop blocked: no snapshot)\n")
	case s.Closed:
		ew.printf("(loop closed: no tasks)\n")
	}
}

func (s *LoopSnapshot) writeFooter(ew *errWriter) {
	if s.Omitted > 0 {
		ew.printf("... %d more tasks not shown; all tasks:", s.Omitted)
		keys := make([]string, 0, len(s.Summary))
		for k := range s.Summary {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ew.printf(" %s %d;", quoteText(k), s.Summary[k])
		}
		ew.printf("\n")
	}
	for _, n := range s.Notes {
		ew.printf("note: %s\n", n)
	}
}

func (s *LoopSnapshot) byID() map[string]*TaskInfo {
	m := make(map[string]*TaskInfo, len(s.Tasks))
	for i := range s.Tasks {
		m[s.Tasks[i].ID] = &s.Tasks[i]
	}
	return m
}

// stackChain joins the short function names of a stack, innermost first,
// with " -> ", as asyncio's ps does.
func stackChain(fs []Frame) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = quoteText(shortFunc(f.Function))
	}
	return strings.Join(names, " -> ")
}

// fmtDuration rounds d for a table: 1.5s, 250ms, 12µs.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String()
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
