package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lookupIn(m map[string]any) Lookup {
	return func(f string) (any, bool) {
		v, ok := m[f]
		return v, ok
	}
}

func TestStep4B_ChainConditionLanguage(t *testing.T) {
	vars := map[string]any{"consecutive_failures": 3.0, "new_failures": 0.0, "coverage_drop": 7.5,
		"pr_created": true, "status": "degraded", "n_str": "12", "nothing": nil}
	cases := []struct {
		cond      string
		want      bool
		undecided []string
	}{
		{"consecutive_failures >= 3", true, nil},
		{"consecutive_failures > 3", false, nil},
		{"new_failures >= 1 OR coverage_drop > 5", true, nil},
		{"new_failures >= 1 AND coverage_drop > 5", false, nil},
		{"new_failures >= 1 AND coverage_drop > 5 OR pr_created == true", true, nil},
		{"pr_created == true", true, nil},
		{"pr_created != false", true, nil},
		{"status == 'degraded'", true, nil},
		{`status != "healthy"`, true, nil},
		{"n_str > 10", true, nil},
		{"3 <= consecutive_failures", true, nil},
		{"nothing == 1", false, nil},
		{"missing >= 1", false, []string{"missing"}},
		{"missing >= 1 OR pr_created == true", true, []string{"missing"}},
		{"status == 1", false, nil},
		{"status != 1", true, nil},
	}
	for _, c := range cases {
		cond, err := ParseCondition(c.cond)
		if err != nil {
			t.Fatalf("%q: %v", c.cond, err)
		}
		got, und := cond.Eval(lookupIn(vars))
		if got != c.want || strings.Join(und, ",") != strings.Join(c.undecided, ",") {
			t.Errorf("%q = %v (undecidable %v), want %v (%v)", c.cond, got, und, c.want, c.undecided)
		}
	}
}

func TestStep4B_MalformedConditionsRejected(t *testing.T) {
	for _, bad := range []string{"", "x >=", ">= 3", "x => 3", "x >= 3 AND", "x >= 3 XOR y < 2", "(x >= 3)", "x >= 'open", "x y z", "AND >= 1", "x == OR"} {
		if _, err := ParseCondition(bad); err == nil {
			t.Errorf("%q: accepted, want an error", bad)
		}
	}
}

func TestStep4B_OriginalContractConditionsParse(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/compat/ooda-loop/skill-contracts/*.yaml")
	if len(files) == 0 {
		t.Skip("compat skill contracts not available")
	}
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tr := range c.ChainTriggers {
			if _, err := ParseCondition(tr.Condition); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no chain triggers found in the original contracts")
	}
}

func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"a >= 1", "a == 'x' AND b != true OR c < -2.5", "new_failures >= 1 OR coverage_drop > 5", "x", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ParseCondition(src)
		if err != nil {
			return
		}
		// Whatever parses evaluates without panicking, against nothing and
		// against everything.
		c.Eval(func(string) (any, bool) { return nil, false })
		c.Eval(func(string) (any, bool) { return 1.0, true })
		if _, err := ParseCondition(c.String()); err != nil {
			t.Fatalf("re-parse of %q failed: %v", c.String(), err)
		}
	})
}
