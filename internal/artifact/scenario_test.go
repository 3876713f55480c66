package artifact

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rubric domain driven through the whole axis with real files and
// processes, the way the engine will call this package: a capture script
// measures a number the "build" writes into the project; feature cycles
// plateau, a leap that helps is kept, leaps that do not are reverted, the
// stall escalates to one rewrite and then to a HALT, and an edited rubric
// HALTs on its own.
func Test5G2G_ScriptedArtifactThroughPlateauLeapRewriteHalt(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "app/p95.txt", "180")
	writeFile(t, root, "capture.sh", `echo "load test: 100 requests"; printf '{"p95_ms": %s, "error_rate": 0.01}\n' "$(cat app/p95.txt)"`)
	rubricJSON := `{"bar": 0.7, "bar_leap": 0.5, "bar_coast": 0.85, "capture_method": "benchmark", "capture_command": "sh capture.sh",
		"dimensions": [
			{"name": "latency", "weight": 0.6, "targets": [
				{"metric": "p95_ms", "op": "<=", "value": 200}, {"metric": "p95_ms", "op": "<=", "value": 150},
				{"metric": "p95_ms", "op": "<=", "value": 100}, {"metric": "p95_ms", "op": "<=", "value": 50}]},
			{"name": "errors", "weight": 0.4, "targets": [
				{"metric": "error_rate", "op": "<=", "value": 0.05}, {"metric": "error_rate", "op": "<=", "value": 0.01}]}]}`
	raw, path := Select("api", nil, json.RawMessage(rubricJSON))
	r, err := Parse(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	integrity, err := CheckIntegrity(path, raw, "")
	if err != nil || !integrity.Record {
		t.Fatalf("first use: %+v %v", integrity, err)
	}
	recorded := integrity.Hash
	leap := defaultLeap()
	env := Env{Root: root, MaxReadBytes: 1 << 20}
	capture := &procCapture{root: root}
	critiqueNow := func() Summary {
		c := Run(context.Background(), r, env, capture)
		if len(c.Gaps) != 0 {
			t.Fatalf("gaps %+v", c.Gaps)
		}
		return c.Summary()
	}
	setP95 := func(v string) { writeFile(t, root, "app/p95.txt", v) }
	var history []Entry
	record := func(mode, result, target string, s Summary, attempt *LeapAttempt) {
		e := Entry{CycleID: len(history) + 1, Domain: "api", ResultType: result, CycleMode: mode, LeapTarget: target,
			ArtifactScore: s.ArtifactScore, WeakestDimension: s.WeakestDimension, DimensionScores: s.DimensionScores}
		if attempt != nil {
			e.LeapAttempts = []LeapAttempt{*attempt}
		}
		history = append(history, e)
	}
	// leapCycle runs a leap or rewrite whose build sets p95 to v.
	leapCycle := func(d Decision, v string) LeapVerdict {
		t.Helper()
		before := critiqueNow()
		old, _ := os.ReadFile(filepath.Join(root, "app/p95.txt"))
		setP95(v)
		after := critiqueNow()
		fails, _ := failedLeaps(history, d.LeapTarget, leap.MinDimensionDelta)
		verdict := VerifyLeap(r, before.DimensionScores, after.DimensionScores, d.LeapTarget, leap, fails+1)
		if verdict.Kept {
			record(d.Mode, "pr_created", d.LeapTarget, after, &verdict.Attempt)
		} else {
			setP95(string(old))
			record(d.Mode, ResultLeapRegressed, d.LeapTarget, before, &verdict.Attempt)
		}
		return verdict
	}

	// Four feature cycles that do not move the artifact: 0.6×0.25 + 0.4×1.
	for i := 0; i < 4; i++ {
		s := critiqueNow()
		if *s.ArtifactScore != 0.55 || s.LeapTarget != "latency" {
			t.Fatalf("cycle %d: %+v", i+1, s)
		}
		d := Plan(history, "api", r, leap)
		if d.Mode != ModeFeature {
			t.Fatalf("before cycle %d: %+v", i+1, d)
		}
		record(ModeFeature, "pr_created", "", s, nil)
	}
	d := Plan(history, "api", r, leap)
	if !d.Plateau || d.Mode != ModeLeap || d.LeapTarget != "latency" {
		t.Fatalf("plateau after 4 flat cycles: %+v", d)
	}
	if mode, deferred := Gate(d, leap, Budget{DailyLimitUSD: 10, LeapsToday: 2}); mode != ModeFeature || deferred == "" {
		t.Fatalf("per-day cap: %s %s", mode, deferred)
	}
	if mode, _ := Gate(d, leap, Budget{DailyLimitUSD: 10}); mode != ModeLeap {
		t.Fatalf("gate: %s", mode)
	}

	// A leap that helps (180 → 140 ms: latency 0.25 → 0.5) is kept, with
	// the rest queued.
	if v := leapCycle(d, "140"); !v.Kept || *v.Delta != 0.25 || v.Remainder == "" {
		t.Fatalf("good leap: %+v", v)
	}
	// Two leaps that do not help are reverted: the file is back to 140.
	for i := 0; i < 2; i++ {
		d = Plan(history, "api", r, leap)
		if d.Mode != ModeLeap || d.LeapTarget != "latency" || d.FailedLeaps != i {
			t.Fatalf("leap %d: %+v", i+2, d)
		}
		if v := leapCycle(d, "145"); v.Kept {
			t.Fatalf("useless leap kept: %+v", v)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "app/p95.txt")); string(b) != "140" {
			t.Fatalf("leap not reverted: %s", b)
		}
	}
	// The stall escalates to one rewrite, with its memo…
	d = Plan(history, "api", r, leap)
	if d.Mode != ModeRewrite || d.Memo == nil || !strings.Contains(d.Memo.StalledApproach, "cycle #6") {
		t.Fatalf("rewrite: %+v", d)
	}
	leapCycle(d, "141")
	// …and when the rewrite does not help either, a HALT.
	d = Plan(history, "api", r, leap)
	if d.Mode != ModeHalt || d.Halt == "" || d.Gaps[0].Name != "leap_stuck_latency" {
		t.Fatalf("halt: %+v", d)
	}

	// The loop loosens its own target: the rubric hash no longer matches.
	mutated := strings.Replace(rubricJSON, `"value": 50}`, `"value": 500}`, 1)
	integrity, err = CheckIntegrity(path, json.RawMessage(mutated), recorded)
	if err != nil || integrity.Halt == "" {
		t.Fatalf("mutated rubric: %+v %v", integrity, err)
	}
	// A capture that breaks is null with a gap, not a score.
	writeFile(t, root, "capture.sh", `echo "connection refused" >&2; exit 7`)
	c := Run(context.Background(), r, env, capture)
	if s := c.Summary(); s.ArtifactScore != nil || len(s.Missing) != 2 || gapNames(c.Gaps) != "artifact_capture_failed_latency,artifact_capture_failed_errors" {
		t.Fatalf("broken capture: %+v %+v", s, c.Gaps)
	}
}
