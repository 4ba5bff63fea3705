package passes

import "golang.org/x/tools/go/analysis"

// All returns every asynciovet analyzer, in the order the README documents
// them.
func All() []*analysis.Analyzer {
	return []*analysis.Analyzer{BlockingCall, WrongHandle, DroppedCancel, ForeignGoroutine, UnawaitedTask}
}
