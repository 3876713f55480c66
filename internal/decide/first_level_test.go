package decide

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// threeByWeight declares a, b, c in config order; by weight they rank
// b (2.0), a (1.0), c (0.5).
func threeByWeight(level int) Input {
	return newInput(level, dom("a", 1.0, 24), dom("b", 2.0, 24), dom("c", 0.5, 24))
}

// A domain the level leaves out is a row of the score table, after every
// scored row, marked excluded "level" with the level that would keep it:
// it never vanishes from the table without a word.
func TestFirstLevel_FilteredDomainsAreExcludedRows(t *testing.T) {
	cases := []struct {
		level    int
		scored   []string
		excluded []string
		needs    []int
	}{
		{0, []string{"b"}, []string{"a", "c"}, []int{1, 2}},
		{1, []string{"b", "a"}, []string{"c"}, []int{2}},
		{2, []string{"b", "a", "c"}, nil, nil},
	}
	for _, tc := range cases {
		d := Decide(threeByWeight(tc.level))
		wantWinner(t, d, "b")
		var names []string
		for _, o := range d.Options {
			names = append(names, o.Domain)
		}
		if want := append(slices.Clone(tc.scored), tc.excluded...); !slices.Equal(names, want) {
			t.Fatalf("level %d: table rows %v, want %v (scored first, then the excluded)\n%s", tc.level, names, want, render(d))
		}
		for i, name := range tc.excluded {
			o := option(t, d, name)
			if o.Excluded != ExcludedLevel || o.NeedsLevel != tc.needs[i] {
				t.Errorf("level %d: %s excluded %q needs level %d, want %q and %d", tc.level, name, o.Excluded, o.NeedsLevel, ExcludedLevel, tc.needs[i])
			}
			if o.Score != 0 || o.RawScore != 0 || o.Staleness != 0 || o.ConfidenceTerm != 0 || o.Balance != 0 {
				t.Errorf("level %d: %s was scored although excluded: %+v", tc.level, name, o)
			}
			if o.Hours == nil || *o.Hours != 24 || o.Skill != "/"+name || o.Weight == 0 {
				t.Errorf("level %d: %s row lost what was observed: %+v", tc.level, name, o)
			}
			wantReason(t, o, "progressive_complexity.current_level "+string(rune('0'+tc.level)))
			wantReason(t, o, "set progressive_complexity.current_level to "+string(rune('0'+tc.needs[i]))+" in config.json")
			if len(o.Reasons) != 1 {
				t.Errorf("level %d: %s reasons %q, want only the level reason", tc.level, name, o.Reasons)
			}
		}
		if d.Winner != &d.Options[0] {
			t.Errorf("level %d: the winner does not point into the table", tc.level)
		}
	}
}

// The level a domain needs follows the configured limits: with level 0
// keeping two domains and level 1 two as well, the third needs level 2.
func TestFirstLevel_NeededLevelFollowsConfiguredLimits(t *testing.T) {
	in := threeByWeight(0)
	in.Config.ProgressiveComplex.Levels = map[string]config.Level{
		"0": {Domains: json.RawMessage(`1`)},
		"1": {Domains: json.RawMessage(`"all"`)},
	}
	d := Decide(in)
	if a, c := option(t, d, "a"), option(t, d, "c"); a.NeedsLevel != 1 || c.NeedsLevel != 1 {
		t.Fatalf("with level 1 keeping all: a needs %d, c needs %d; want 1 and 1", a.NeedsLevel, c.NeedsLevel)
	}
	in.Config.ProgressiveComplex.Levels = map[string]config.Level{"0": {Domains: json.RawMessage(`2`)}, "1": {Domains: json.RawMessage(`2`)}}
	d = Decide(in)
	if got := levelNames(d); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("excluded %v, want [c]", got)
	}
	if c := option(t, d, "c"); c.NeedsLevel != 2 {
		t.Fatalf("c needs level %d, want 2 (level 1 keeps only two)", c.NeedsLevel)
	}
}

// An excluded row can never be selected: when the one scored domain is
// in cooldown the cycle skips below the minimum rather than run a domain
// the level leaves out, and the skip's explanation is not pinned on it.
func TestFirstLevel_ExcludedRowsNeverWin(t *testing.T) {
	in := newInput(0, dom("heavy", 2, 0.5), dom("light", 1, 1000))
	in.Domains[0].MinIntervalHours = f64(4)
	d := Decide(in)
	wantSkip(t, d, ReasonBelowMinimum)
	light := option(t, d, "light")
	if light.Excluded != ExcludedLevel {
		t.Fatalf("light excluded %q, want level", light.Excluded)
	}
	if hasReason(light, "below") {
		t.Errorf("the minimum-score skip was pinned on a row that was never scored: %q", light.Reasons)
	}
}

// A level that keeps no domain at all still shows every domain, and
// says why nothing was scored.
func TestFirstLevel_LevelKeepingNothingShowsAll(t *testing.T) {
	in := threeByWeight(0)
	in.Config.ProgressiveComplex.Levels = map[string]config.Level{"0": {Domains: json.RawMessage(`0`)}}
	d := Decide(in)
	wantSkip(t, d, ReasonNoScoreable)
	if got := levelNames(d); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("excluded rows %v, want [b a c] (heaviest first)", got)
	}
	if !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.Contains(n, "3-G: level 0 excludes 3 domain(s)") }) {
		t.Errorf("notes %q do not say what 3-G excluded", d.Notes)
	}
}

// Domains disabled by status or by the season are not level rows: they
// are not in the table at all, as before (they are reported by Observe).
func TestFirstLevel_OnlyTheLevelCutIsShown(t *testing.T) {
	in := threeByWeight(0)
	in.Config.Domains[0].Status = "disabled" // a
	d := Decide(in)
	if got := levelNames(d); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("excluded rows %v, want [c]", got)
	}
}
