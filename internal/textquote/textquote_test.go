package textquote

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"worker-1":     "worker-1",
		"naïve name":   "naïve name",
		"x\n└── fake":  `"x\n└── fake"`,
		"\x1b[31mred":  `"\x1b[31mred"`,
		`"quoted"`:     `"\"quoted\""`,
		"bad\xffutf-8": `"bad\xffutf-8"`,
		"tab\there":    `"tab\there"`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %s, want %s", in, got, want)
		}
	}
}
