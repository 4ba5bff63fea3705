package asyncio

import "testing"

// A variable without a default is unset (Lookup false, LookupError in
// Python) until set; Reset makes it unset again; a child inherits the
// set state; GetDefault's default is per call.
func TestContextVar_NoDefaultAndPerCallDefault(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v := NewContextVarNoDefault[string]("request_id")
		d := NewContextVar("level", "info")
		look := func(tk *T, when string) {
			val, ok := v.Lookup(tk)
			r.log("%s: lookup=%q,%v isSet=%v get=%q getDefault=%q", when, val, ok, v.IsSet(tk), v.Get(tk), v.GetDefault(tk, "none"))
		}
		look(tk, "unset")
		dv, dok := d.Lookup(tk)
		r.log("with default: lookup=%q,%v isSet=%v getDefault=%q", dv, dok, d.IsSet(tk), d.GetDefault(tk, "debug"))
		tok := v.Set(tk, "r1")
		look(tk, "set")
		child := startTask(tk, "child", func(ctk *T) error {
			look(ctk, "child")
			val, ok := v.LookupValue(ctk.Context())
			r.log("child's Context: %q,%v", val, ok)
			return nil
		})
		awaitAll(tk, child)
		if err := v.Reset(tk, tok); err != nil {
			return err
		}
		look(tk, "reset")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`0s unset: lookup="",false isSet=false get="" getDefault="none"`,
		`0s with default: lookup="info",true isSet=false getDefault="debug"`,
		`0s set: lookup="r1",true isSet=true get="r1" getDefault="r1"`,
		`0s child: lookup="r1",true isSet=true get="r1" getDefault="r1"`,
		`0s child's Context: "r1",true`,
		`0s reset: lookup="",false isSet=false get="" getDefault="none"`,
	}, r)
}
