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

func TestFileDirective(t *testing.T) {
	for _, tc := range []struct {
		text, check string
		want        bool
	}{
		{"//asynciovet:file-ignore droppedcancel yields on purpose", "droppedcancel", true},
		{"//asynciovet:file-ignore blockingcall,droppedcancel both", "blockingcall", true},
		{"//asynciovet:file-ignore droppedcancel", "droppedcancel", false},             // no reason
		{"//asynciovet:file-ignore blockingcall reason", "droppedcancel", false},       // another check
		{"//asynciovet:file-ignoredroppedcancel reason", "droppedcancel", false},       // malformed
		{"//asynciovet:ignore droppedcancel a line directive", "droppedcancel", false}, // not a file directive
	} {
		if got := directiveIn(tc.text, fileIgnoreDirective, tc.check); got != tc.want {
			t.Errorf("directiveIn(%q, file-ignore, %q) = %v, want %v", tc.text, tc.check, got, tc.want)
		}
	}
	// A file directive is not a line directive.
	if directiveCovers("//asynciovet:file-ignore droppedcancel reason", "droppedcancel") {
		t.Error("directiveCovers accepted a file directive")
	}
}
