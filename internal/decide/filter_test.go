package decide

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// Until the artifact axis exists every cycle is a feature cycle, whatever
// the rest of the input says.
func TestStep3K_FeatureMode(t *testing.T) {
	cases := map[string]Input{
		"normal":   newInput(2, dom("a", 1, 24), dom("b", 2, 5)),
		"empty":    newInput(2),
		"critical": withAlert(newInput(2, dom("a", 1, 24)), "a", "critical"),
		"level3":   implInput(3, 4),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(in)
			if d.CycleMode != "feature" {
				t.Errorf("CycleMode = %q, want feature", d.CycleMode)
			}
			if len(d.Notes) == 0 || !strings.HasPrefix(d.Notes[0], "3-K") {
				t.Errorf("first note = %q, want the 3-K note first (3-K runs before 3-G)", d.Notes)
			}
		})
	}
}

func withAlert(in Input, name, severity string) Input {
	for i := range in.Domains {
		if in.Domains[i].Name == name {
			in.Domains[i].Alerts = append(in.Domains[i].Alerts, Alert{Severity: severity, Message: severity + " in " + name})
		}
	}
	return in
}

// implInput is a level-N project with implementation enabled, two real
// domains and pending actions in the queue.
func implInput(level, pending int) Input {
	in := newInput(level, dom("health", 1, 24), dom("tests", 0.5, 12))
	in.Config.Implementation.Enabled = true
	in.Impl = Impl{PendingCount: pending, ActionablePending: pending, OldestPendingHours: 10, HighestRice: 120}
	return in
}

func TestStep3G_ProgressiveComplexityFilter(t *testing.T) {
	three := func(level int) Input {
		// Config order a, b, c; weight order b, a, c.
		return newInput(level, dom("a", 1.0, 24), dom("b", 2.0, 24), dom("c", 0.5, 24))
	}
	t.Run("level0 keeps the heaviest domain", func(t *testing.T) {
		d := Decide(three(0))
		wantOrder(t, d, "b")
		if !strings.Contains(d.Notes[1], "3-G: level 0 keeps 1 domain(s)") {
			t.Errorf("3-G note = %q", d.Notes[1])
		}
	})
	t.Run("level1 keeps two by weight", func(t *testing.T) {
		d := Decide(three(1))
		if got := sortedNames(d); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("kept %v, want [a b]", got)
		}
	})
	t.Run("level2 keeps all and no implementation", func(t *testing.T) {
		in := three(2)
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 9, ActionablePending: 9}
		d := Decide(in)
		if got := sortedNames(d); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("kept %v, want [a b c]", got)
		}
	})
	t.Run("level3 adds implementation only when enabled", func(t *testing.T) {
		in := three(3)
		in.Impl = Impl{PendingCount: 9, ActionablePending: 9}
		if d := Decide(in); hasOption(d, ImplementationDomain) || len(d.Options) != 3 {
			t.Fatalf("implementation disabled: options %v", optionNames(d))
		}
		in.Config.Implementation.Enabled = true
		d := Decide(in)
		if got := sortedNames(d); !slices.Equal(got, []string{"a", "b", "c", ImplementationDomain}) {
			t.Fatalf("kept %v, want a, b, c and implementation", got)
		}
		if o := option(t, d, ImplementationDomain); !o.Virtual {
			t.Error("implementation option is not marked virtual")
		}
		if !strings.Contains(d.Notes[1], "+ implementation") {
			t.Errorf("3-G note = %q", d.Notes[1])
		}
	})
	t.Run("weight ties keep config order", func(t *testing.T) {
		in := newInput(0, dom("first", 1, 24), dom("second", 1, 48))
		wantOrder(t, Decide(in), "first")
	})
	t.Run("configured level limit", func(t *testing.T) {
		in := three(0)
		in.Config.ProgressiveComplex.Levels = map[string]config.Level{"0": {Name: "wide", Domains: json.RawMessage(`2`)}}
		if got := sortedNames(Decide(in)); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("kept %v, want [a b]", got)
		}
	})
	for _, status := range []string{"disabled", "available"} {
		t.Run("status "+status+" removed before the limit", func(t *testing.T) {
			in := three(0)
			in.Config.Domains[1].Status = status // b, the heaviest
			d := Decide(in)
			// b no longer takes level 0's single slot: a, the next by weight, does.
			wantOrder(t, d, "a")
		})
	}
	t.Run("legacy enabled false removed", func(t *testing.T) {
		in := three(2)
		in.Config.Domains[0].Enabled = no()
		if got := sortedNames(Decide(in)); !slices.Equal(got, []string{"b", "c"}) {
			t.Fatalf("kept %v, want [b c]", got)
		}
	})
	t.Run("season-disabled removed", func(t *testing.T) {
		in := three(0)
		in.Config.SeasonModes = config.SeasonModes{Enabled: true, CurrentMode: "launch", Modes: map[string]config.SeasonMode{
			"launch": {DisabledDomains: []string{"b"}},
		}}
		wantOrder(t, Decide(in), "a")
	})
	t.Run("season-disabled ignored when season modes are off", func(t *testing.T) {
		in := three(0)
		in.Config.SeasonModes = config.SeasonModes{Enabled: false, CurrentMode: "launch", Modes: map[string]config.SeasonMode{
			"launch": {DisabledDomains: []string{"b"}},
		}}
		wantOrder(t, Decide(in), "b")
	})
	t.Run("zero left", func(t *testing.T) {
		in := three(2)
		for i := range in.Config.Domains {
			in.Config.Domains[i].Status = "available"
		}
		d := Decide(in)
		wantSkip(t, d, ReasonNoScoreable)
		if d.Scored || len(d.Options) != 0 {
			t.Errorf("Scored = %t with %d options, want an unscored, empty table", d.Scored, len(d.Options))
		}
	})
	t.Run("no domains at all", func(t *testing.T) {
		wantSkip(t, Decide(newInput(2)), ReasonNoScoreable)
	})
	t.Run("implementation alone is scoreable", func(t *testing.T) {
		in := newInput(3)
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 3, ActionablePending: 3, HighestRice: 100}
		d := Decide(in)
		wantWinner(t, d, ImplementationDomain)
	})
	t.Run("a real implementation domain stands in for the virtual one", func(t *testing.T) {
		in := newInput(3, dom(ImplementationDomain, 1, 24), dom("a", 1, 24))
		in.Config.Implementation.Enabled = true
		in.Impl = Impl{PendingCount: 3, ActionablePending: 3}
		d := Decide(in)
		if len(d.Options) != 2 || option(t, d, ImplementationDomain).Virtual {
			t.Fatalf("options %v: want the real implementation domain and a, nothing virtual", optionNames(d))
		}
	})
}

func sortedNames(d Decision) []string {
	n := optionNames(d)
	slices.Sort(n)
	return n
}
