package decide

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
)

// testNow is fixed so that no test depends on the wall clock.
var testNow = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// Default term values for a domain with no goals, confidence.initial 0.7
// and the default weights: 3-C's 0.5 × goal_weight 0.3, 0.7 × 0.2.
const (
	defGoal = 0.5 * 0.3
	defConf = 0.7 * 0.2
)

// dom builds a domain observed hours ago with the given effective weight.
func dom(name string, weight, hours float64) Domain {
	return Domain{Name: name, Weight: weight, Hours: hours, PrimarySkill: "/" + name}
}

// newInput builds an input at the given level whose config declares the
// domains in the order given (that order is the final tie-break), with
// every other setting at its default and no mission.
func newInput(level int, ds ...Domain) Input {
	cfg := config.Default()
	cfg.ProgressiveComplex.CurrentLevel = level
	for i := range ds {
		ds[i].Index = i
		cfg.Domains = append(cfg.Domains, config.Domain{
			Name: ds[i].Name, Index: i, Weight: ds[i].Weight, PrimarySkill: ds[i].PrimarySkill,
			Fallback: ds[i].Fallback, Status: "active", MinIntervalHours: ds[i].MinIntervalHours,
			GoalContribution: ds[i].GoalContribution,
		})
	}
	return Input{
		Now:              testNow,
		Config:           cfg,
		Domains:          ds,
		Confidence:       map[string]float64{},
		Memo:             map[string]float64{},
		DomainExecutions: map[string]int{},
	}
}

// logStaleness is the seed's curve written out independently of Staleness,
// so a change to either shows up as a difference.
func logStaleness(weight, hours float64) float64 {
	return weight * 10 * math.Log(1+hours/4)
}

func f64(v float64) *float64 { return &v }
func yes() *bool             { v := true; return &v }
func no() *bool              { v := false; return &v }

func near(t testing.TB, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

func exact(t testing.TB, what string, got, want float64) {
	t.Helper()
	near(t, what, got, want, 1e-9)
}

// option returns the named row of the score table, failing the test when
// it is missing.
func option(t testing.TB, d Decision, name string) Option {
	t.Helper()
	for _, o := range d.Options {
		if o.Domain == name {
			return o
		}
	}
	t.Fatalf("no option %q in %v", name, optionNames(d))
	return Option{}
}

func hasOption(d Decision, name string) bool {
	return slices.Contains(optionNames(d), name)
}

// optionNames are the scored options in rank order: the rows of domains
// the level leaves out (never scored, always last) are checked on their
// own (levelNames).
func optionNames(d Decision) []string {
	out := make([]string, 0, len(d.Options))
	for _, o := range d.Options {
		if o.Excluded != ExcludedLevel {
			out = append(out, o.Domain)
		}
	}
	return out
}

// levelNames are the options excluded by level, in table order.
func levelNames(d Decision) []string {
	var out []string
	for _, o := range d.Options {
		if o.Excluded == ExcludedLevel {
			out = append(out, o.Domain)
		}
	}
	return out
}

func winner(d Decision) string {
	if d.Winner == nil {
		return ""
	}
	return d.Winner.Domain
}

func wantWinner(t testing.TB, d Decision, name string) {
	t.Helper()
	if got := winner(d); got != name {
		t.Fatalf("winner = %q (skip %q), want %q\n%s", got, d.SkipReason, name, render(d))
	}
}

func wantSkip(t testing.TB, d Decision, reason string) {
	t.Helper()
	if d.Winner != nil || d.SkipReason != reason {
		t.Fatalf("winner %q, skip %q; want no winner and skip %q\n%s", winner(d), d.SkipReason, reason, render(d))
	}
}

func wantOrder(t testing.TB, d Decision, names ...string) {
	t.Helper()
	if got := optionNames(d); !slices.Equal(got, names) {
		t.Fatalf("rank = %v, want %v\n%s", got, names, render(d))
	}
}

func hasReason(o Option, sub string) bool {
	for _, r := range o.Reasons {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

func wantReason(t testing.TB, o Option, sub string) {
	t.Helper()
	if !hasReason(o, sub) {
		t.Errorf("%s: no reason containing %q in %q", o.Domain, sub, o.Reasons)
	}
}

// sumTerms is the 3-A sum of an option's terms; the virtual domain has no
// staleness or balance, and its queue terms take their place.
func sumTerms(o Option) float64 {
	return o.Staleness + o.Queue + o.Alert + o.Mission + o.Goal + o.ConfidenceTerm + o.Memo + o.Balance
}

// render is the stable text form of a decision used by the golden files:
// every term of every option rounded to 4 places, so a change in any term,
// in the rank or in a reason shows up as a diff.
func render(d Decision) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("cycle_mode: %s\n", d.CycleMode)
	p("scored: %t\n", d.Scored)
	p("guidance: %s\n", dash(d.Guidance))
	p("skip_reason: %s\n", dash(d.SkipReason))
	p("result: %s\n", dash(d.Result))
	p("gated: %t\n", d.Gated)
	if d.Winner != nil {
		p("winner: %s (score %s, confidence %s)\n", d.Winner.Domain, r4(d.Winner.Score), r4(d.Winner.Confidence))
	} else {
		p("winner: -\n")
	}
	p("score_verified: %t\n", d.ScoreVerified)
	p("mismatch: %s\n", dash(d.Mismatch))
	p("notes:\n")
	for _, n := range d.Notes {
		p("  - %s\n", n)
	}
	p("options:\n")
	for i, o := range d.Options {
		kind := ""
		if o.Virtual {
			kind = " (virtual)"
		}
		p("  %d. %s%s skill=%s\n", i+1, o.Domain, kind, dash(o.Skill))
		hours, pending := "-", "-"
		if o.Hours != nil {
			hours = r4(*o.Hours)
		}
		if o.Pending != nil {
			pending = fmt.Sprint(*o.Pending)
		}
		p("     weight=%s hours=%s pending=%s executions=%d index=%d\n", r4(o.Weight), hours, pending, o.Executions, o.Index)
		p("     staleness=%s queue=%s alert=%s mission=%s goal=%s\n", r4(o.Staleness), r4(o.Queue), r4(o.Alert), r4(o.Mission), r4(o.Goal))
		p("     confidence=%s confidence_term=%s memo=%s balance=%s\n", r4(o.Confidence), r4(o.ConfidenceTerm), r4(o.Memo), r4(o.Balance))
		p("     raw_score=%s score=%s excluded=%s selected_by_alert=%t\n", r4(o.RawScore), r4(o.Score), dash(o.Excluded), o.SelectedByAlert)
		for _, r := range o.Reasons {
			p("     reason: %s\n", r)
		}
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// r4 rounds to 4 places; -0 prints as 0 so that a sign bit of a zero term
// never changes a golden file.
func r4(v float64) string {
	s := fmt.Sprintf("%.4f", math.Round(v*1e4)/1e4)
	if s == "-0.0000" {
		s = "0.0000"
	}
	return s
}

// seasonDisabling is a season mode that disables the named domains.
func seasonDisabling(names ...string) config.SeasonMode {
	return config.SeasonMode{DisabledDomains: names}
}
