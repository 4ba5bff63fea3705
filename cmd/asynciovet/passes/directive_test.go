package passes

import "testing"

func TestDirectiveCovers(t *testing.T) {
	for _, tc := range []struct {
		text, check string
		want        bool
	}{
		{"//asynciovet:ignore blockingcall the test freezes the loop on purpose", "blockingcall", true},
		{"//asynciovet:ignore blockingcall,droppedcancel both on purpose", "droppedcancel", true},
		{"//asynciovet:ignore\tblockingcall tab-separated", "blockingcall", true},
		{"//asynciovet:ignore blockingcall", "blockingcall", false},          // no reason
		{"//asynciovet:ignore droppedcancel reason", "blockingcall", false},  // another check
		{"//asynciovet:ignoreblockingcall reason", "blockingcall", false},    // malformed
		{"// asynciovet:ignore blockingcall reason", "blockingcall", false},  // not a directive (space)
		{"/*asynciovet:ignore blockingcall reason*/", "blockingcall", false}, // block comment
		{"//asynciovet:ignore blockingcallx reason", "blockingcall", false},  // name must match exactly
	} {
		if got := directiveCovers(tc.text, tc.check); got != tc.want {
			t.Errorf("directiveCovers(%q, %q) = %v, want %v", tc.text, tc.check, got, tc.want)
		}
	}
}
