package asyncio

import "testing"

// GOASYNCIODEBUG set to any non-empty string turns debug mode on for new
// loops (Run's too), as PYTHONASYNCIODEBUG does; empty or unset, it is off.
func TestDebugEnv_TurnsDebugModeOn(t *testing.T) {
	for _, c := range []struct {
		value string
		want  bool
	}{{"1", true}, {"0", true}, {"", false}} {
		t.Setenv(DebugEnv, c.value)
		l := NewLoop()
		got := l.Debug()
		mustClose(t, l)
		v, err := Run(func(tk *T) (bool, error) { return tk.Loop().Debug(), nil })
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want || v != c.want {
			t.Errorf("%s=%q: NewLoop debug %v, Run debug %v, want %v", DebugEnv, c.value, got, v, c.want)
		}
	}
}
