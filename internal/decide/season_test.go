package decide

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// seasonDir is the original project's season-mode fixture (SPEC-NOTES §9).
const seasonDir = "../../../shared/compat/ooda-loop/fixtures/season-mode-toggle"

// seasonInput loads a fixture config and observes its domains the way
// Step 1 does on a fresh project: never run (hours_if_never_run), with the
// active season mode's weight overrides already applied.
func seasonInput(t *testing.T, path string) Input {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("fixture %s not available: %v", path, err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, mode, _ := cfg.SeasonModes.Active()
	in := Input{Now: testNow, Config: cfg, Confidence: map[string]float64{}, Memo: map[string]float64{}, DomainExecutions: map[string]int{}}
	for _, cd := range cfg.Domains {
		w := cd.Weight
		if o, ok := mode.WeightOverrides[cd.Name]; ok {
			w = o
		}
		in.Domains = append(in.Domains, Domain{
			Name: cd.Name, Index: cd.Index, Weight: w, Hours: cfg.Scoring.HoursIfNeverRun, NeverRun: true,
			Fallback: cd.Fallback, MissionAlignment: cd.Alignment(), PrimarySkill: cd.PrimarySkill,
		})
		in.Confidence[cd.Name] = 0.7
	}
	in.SignalBonuses = mode.SignalBonuses
	return in
}

func TestSeasonModeFixture(t *testing.T) {
	type row struct {
		domain    string
		reference float64 // the original's reference scorer: staleness + confidence term
	}
	cases := []struct {
		file string
		rows []row // in rank order
	}{
		{"config.default.json", []row{{"service_health", 75.364}, {"test_coverage", 18.946}, {"backlog", 11.424}}},
		{"config.preparation.json", []row{{"backlog", 75.364}, {"service_health", 37.752}, {"test_coverage", 18.946}}},
	}
	// The full engine adds the goal term (0.5 × 0.3) and the balance bonus of
	// a project with no executions (5 × 1/3) to every domain.
	const extra = 0.15 + 5.0/3
	near(t, "extra", extra, 1.817, 0.001)
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			in := seasonInput(t, filepath.Join(seasonDir, c.file))
			if in.Config.Scoring.HoursIfNeverRun != 168 || in.Config.ProgressiveComplex.CurrentLevel != 2 || in.Config.MissionSet() {
				t.Fatalf("fixture changed: hours_if_never_run %v, level %d, mission %q",
					in.Config.Scoring.HoursIfNeverRun, in.Config.ProgressiveComplex.CurrentLevel, in.Config.Mission)
			}
			d := Decide(in)
			want := make([]string, len(c.rows))
			for i, r := range c.rows {
				want[i] = r.domain
			}
			wantOrder(t, d, want...)
			wantWinner(t, d, c.rows[0].domain)
			if d.Gated || d.Guidance != "" || !d.ScoreVerified {
				t.Errorf("gated %t guidance %q verified %t", d.Gated, d.Guidance, d.ScoreVerified)
			}
			for i, r := range c.rows {
				o := d.Options[i]
				near(t, r.domain+" score", o.Score, r.reference+1.817, 0.001)
				near(t, r.domain+" reference part", o.Staleness+o.ConfidenceTerm, r.reference, 0.001)
				exact(t, r.domain+" goal", o.Goal, 0.15)
				exact(t, r.domain+" balance", o.Balance, 5.0/3)
				exact(t, r.domain+" mission", o.Mission, 0)
				exact(t, r.domain+" alert", o.Alert, 0)
				exact(t, r.domain+" memo", o.Memo, 0)
			}
		})
	}
}
