package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/secret"
)

// procCapture runs capture commands as real processes in the project
// root, as the engine will, and remembers what it was asked to run.
type procCapture struct {
	root  string
	calls []CaptureRequest
}

func (p *procCapture) Run(ctx context.Context, req CaptureRequest) ([]byte, error) {
	p.calls = append(p.calls, req)
	var cmd *exec.Cmd
	if len(req.Command.Argv) > 0 {
		cmd = exec.CommandContext(ctx, req.Command.Argv[0], req.Command.Argv[1:]...)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", req.Command.Shell)
	}
	cmd.Dir = p.root
	return cmd.Output()
}

// under protects every file below the given directories ("tools/*"), or
// everything for "*".
func under(patterns []string) func(string) bool {
	return func(file string) bool {
		for _, p := range patterns {
			if p == "*" || strings.HasPrefix(file, strings.TrimSuffix(p, "*")) {
				return true
			}
		}
		return false
	}
}

func writeFile(t *testing.T, root, name, content string) string {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func critique(t *testing.T, root, rubric string, env Env) (Critique, *procCapture) {
	t.Helper()
	r := mustParse(t, rubric)
	env.Root = root
	if env.MaxReadBytes == 0 {
		env.MaxReadBytes = 1 << 20
	}
	pc := &procCapture{root: root}
	return Run(context.Background(), r, env, pc), pc
}

func gapNames(gaps []Gap) string {
	var s []string
	for _, g := range gaps {
		s = append(s, g.Name)
	}
	return strings.Join(s, ",")
}

// A capture command prints metrics; the dimension scores the fraction of
// its targets met.
func Test5G_TargetsScoredAsFractionMet(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "load.sh", `echo "warming up"; echo '{"p95_ms": 180, "error_rate": 0.02, "rps": 90, "nested": {"p99_ms": 1}}'`)
	c, pc := critique(t, root, `{"capture_method": "benchmark", "capture_command": "sh load.sh", "dimensions": [
		{"name": "service", "targets": [
			{"metric": "p95_ms", "op": "<=", "value": 200},
			{"metric": "error_rate", "op": "<", "value": 0.01},
			{"metric": "rps", "op": ">=", "value": 100}]},
		{"name": "fast", "targets": [{"metric": "p95_ms", "op": "<", "value": 500}]}]}`, Env{})
	if len(pc.calls) != 2 || pc.calls[0].Method != MethodBenchmark {
		t.Fatalf("calls %+v", pc.calls)
	}
	d := c.Dimensions[0]
	if d.Status != StatusScored || d.Score == nil || *d.Score != 0.333 || d.ScoredBy != "targets" {
		t.Fatalf("service: %+v", d)
	}
	if !d.Targets[0].Met || d.Targets[1].Met || d.Targets[2].Met || *d.Targets[2].Actual != 90 {
		t.Errorf("targets %+v", d.Targets)
	}
	if f := c.Dimensions[1]; f.Score == nil || *f.Score != 1 {
		t.Errorf("fast: %+v", f)
	}
	if len(c.Gaps) != 0 || c.NeedsJudge() {
		t.Errorf("gaps %v, needs judge %v", c.Gaps, c.NeedsJudge())
	}
	s := c.Summary()
	if s.ArtifactScore == nil || *s.ArtifactScore != 0.667 || s.WeakestDimension != "service" || len(s.Missing) != 0 {
		t.Errorf("summary %+v", s)
	}
}

// A capture that fails is null with a gap: never a 0 that would drag the
// score down nor a 1 that would lift it, and it is left out of the mean.
func Test5G_CaptureFailureIsNullNotZero(t *testing.T) {
	root := t.TempDir()
	c, _ := critique(t, root, `{"capture_method": "command", "dimensions": [
		{"name": "ok", "capture_command": "echo '{\"x\": 1}'", "targets": [{"metric": "x", "op": "==", "value": 1}]},
		{"name": "crash", "weight": 5, "capture_command": "echo '{\"x\": 1}'; exit 3", "targets": [{"metric": "x", "op": "==", "value": 1}]},
		{"name": "prose", "capture_command": "echo all good", "targets": [{"metric": "x", "op": "==", "value": 1}]},
		{"name": "nocmd", "targets": [{"metric": "x", "op": "==", "value": 1}]}]}`, Env{})
	for _, name := range []string{"crash", "prose", "nocmd"} {
		var d DimensionResult
		for _, x := range c.Dimensions {
			if x.Name == name {
				d = x
			}
		}
		if d.Status != StatusFailed || d.Score != nil || d.Reason == "" {
			t.Errorf("%s: %+v", name, d)
		}
	}
	if got := gapNames(c.Gaps); got != "artifact_capture_failed_crash,artifact_capture_failed_prose,artifact_capture_command_missing_nocmd" {
		t.Errorf("gaps %s", got)
	}
	if !strings.Contains(c.Gaps[0].Detail, "quality_rubric.dimensions[1] (crash)") || c.Gaps[0].Type != GapCaptureFailure {
		t.Errorf("gap detail %+v", c.Gaps[0])
	}
	s := c.Summary()
	if s.ArtifactScore == nil || *s.ArtifactScore != 1 || strings.Join(s.Missing, ",") != "crash,prose,nocmd" || s.DimensionScores["crash"] != nil {
		t.Errorf("summary %+v", s)
	}
	if _, ok := s.DimensionScores["crash"]; !ok {
		t.Error("a missing dimension is still listed in dimension_scores (as null)")
	}
}

// Hiding a bad number does not help: a metric the capture does not print
// as a number fails its target, and the dimension still counts.
func Test5G_MissingMetricCountsAsUnmet(t *testing.T) {
	root := t.TempDir()
	c, _ := critique(t, root, `{"capture_method": "command", "dimensions": [
		{"name": "good", "weight": 1, "capture_command": "echo '{\"x\": 1}'", "targets": [{"metric": "x", "op": "==", "value": 1}]},
		{"name": "bad", "weight": 1, "capture_command": "echo '{\"p95_ms\": \"150\", \"ok\": true}'", "targets": [
			{"metric": "p95_ms", "op": "<", "value": 200}, {"metric": "ok", "op": "==", "value": 1}, {"metric": "error_rate", "op": "<", "value": 1}]}]}`, Env{})
	bad := c.Dimensions[1]
	if bad.Status != StatusScored || *bad.Score != 0 || bad.Targets[0].Actual != nil {
		t.Fatalf("bad: %+v", bad)
	}
	if gapNames(c.Gaps) != "artifact_metric_missing_bad" || !strings.Contains(c.Gaps[0].Detail, "p95_ms, ok, error_rate") {
		t.Errorf("gaps %+v", c.Gaps)
	}
	if s := c.Summary(); *s.ArtifactScore != 0.5 || len(s.Missing) != 0 {
		t.Errorf("the hidden metric must not lift the artifact: %+v", s)
	}
}

func Test5G_CaptureOutputOverTheReadCap(t *testing.T) {
	root := t.TempDir()
	c, _ := critique(t, root, `{"capture_method": "command", "dimensions": [
		{"name": "big", "capture_command": "head -c 5000 /dev/zero | tr '\\0' ' '; echo '{\"x\": 1}'", "targets": [{"metric": "x", "op": "==", "value": 1}]}]}`,
		Env{MaxReadBytes: 1000})
	if d := c.Dimensions[0]; d.Status != StatusFailed || !strings.Contains(d.Reason, "safety.max_read_mib") {
		t.Errorf("%+v", d)
	}
}

func Test5G_CaptureEvidenceHidesSecrets(t *testing.T) {
	secret.Register("tok-artifact-5g-0123456789")
	root := t.TempDir()
	c, _ := critique(t, root, `{"dimensions": [{"name": "look", "capture_command": "echo token=tok-artifact-5g-0123456789"}]}`, Env{HaveJudge: true})
	d := c.Dimensions[0]
	if d.Status != StatusJudgeNeeded || strings.Contains(string(d.Evidence), "tok-artifact") || !strings.Contains(string(d.Evidence), secret.Mask) {
		t.Errorf("%+v evidence %q", d, d.Evidence)
	}
}

// A screenshot (or a dimension without targets) is captured and left for
// the judge; the judge's answer fills it in.
func Test5G_ScreenshotAndNoTargetsNeedTheJudge(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "shot.sh", `echo shots/home.png`)
	c, pc := critique(t, root, `{"capture_command": "sh shot.sh", "dimensions": [
		{"name": "look"},
		{"name": "api", "capture_method": "api_call", "capture_command": ["sh", "-c", "echo '{\"status\": 200}'"]},
		{"name": "lat", "capture_method": "command", "capture_command": "echo '{\"p\": 1}'", "targets": [{"metric": "p", "op": "<", "value": 2}]}]}`,
		Env{HaveJudge: true})
	if len(pc.calls) != 3 || pc.calls[0].Method != MethodScreenshot {
		t.Fatalf("calls %+v", pc.calls)
	}
	if !c.NeedsJudge() || c.Dimensions[0].Status != StatusJudgeNeeded || strings.TrimSpace(string(c.Dimensions[0].Evidence)) != "shots/home.png" {
		t.Fatalf("look: %+v", c.Dimensions[0])
	}
	if c.Dimensions[1].Status != StatusJudgeNeeded || !strings.Contains(string(c.Dimensions[1].Evidence), `"status": 200`) {
		t.Fatalf("api: %+v", c.Dimensions[1])
	}
	if s := c.Summary(); *s.ArtifactScore != 1 || strings.Join(s.Missing, ",") != "look,api" {
		t.Errorf("before the judge: %+v", s)
	}
	var req struct {
		Mission    string
		Dimensions []struct {
			Name, Evidence string
			Rubric         map[string]any
		}
	}
	if err := json.Unmarshal(JudgeRequest(c, "fast, correct API"), &req); err != nil {
		t.Fatal(err)
	}
	if req.Mission != "fast, correct API" || len(req.Dimensions) != 2 || req.Dimensions[1].Name != "api" ||
		!strings.Contains(req.Dimensions[1].Evidence, `"status": 200`) || req.Dimensions[1].Rubric["capture_method"] != "api_call" {
		t.Errorf("judge request %+v", req)
	}
	j := ApplyJudge(c, []byte(`{"dimension_scores": {"look": 0.4, "api": 0.8, "lat": 0.0}, "weakest_dimension": "api"}`))
	if j.NeedsJudge() || *j.Dimensions[0].Score != 0.4 || j.Dimensions[0].ScoredBy != "judge" || *j.Dimensions[1].Score != 0.8 {
		t.Fatalf("after the judge: %+v", j.Dimensions)
	}
	if *j.Dimensions[2].Score != 1 || j.Dimensions[2].ScoredBy != "targets" {
		t.Errorf("the judge overrode a measured dimension: %+v", j.Dimensions[2])
	}
	if s := j.Summary(); *s.ArtifactScore != 0.733 || s.WeakestDimension != "look" {
		t.Errorf("summary %+v", s)
	}
	if c.Dimensions[0].Status != StatusJudgeNeeded {
		t.Error("ApplyJudge changed its input")
	}
}

// No judge and no targets: nothing can score the dimension, so it is not
// even captured; it is null with a gap.
func Test5G_NoJudgeNoTargetsIsNull(t *testing.T) {
	root := t.TempDir()
	c, pc := critique(t, root, `{"capture_command": "echo x", "dimensions": [
		{"name": "look"}, {"name": "api", "capture_method": "api_call"}]}`, Env{HaveJudge: false})
	if len(pc.calls) != 0 {
		t.Errorf("captured without a way to score: %+v", pc.calls)
	}
	if gapNames(c.Gaps) != "artifact_no_judge_look,artifact_no_judge_api" || c.Dimensions[0].Score != nil {
		t.Errorf("gaps %v dims %+v", c.Gaps, c.Dimensions)
	}
	if s := c.Summary(); s.ArtifactScore != nil || len(s.Missing) != 2 {
		t.Errorf("summary %+v", s)
	}
}

// Every answer the judge could give that is not a score in [0, 1] leaves
// the dimension null with a gap.
func Test5G_JudgeHostileAnswers(t *testing.T) {
	root := t.TempDir()
	c, _ := critique(t, root, `{"capture_command": "echo x", "dimensions": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]}`,
		Env{HaveJudge: true})
	j := ApplyJudge(c, []byte(`{"dimension_scores": {"a": 1.5, "b": "0.9", "c": null, "e": -0.1}}`))
	for _, d := range j.Dimensions {
		if d.Status != StatusFailed || d.Score != nil {
			t.Errorf("%s: %+v", d.Name, d)
		}
	}
	if gapNames(j.Gaps) != "artifact_judge_failed_a,artifact_judge_failed_b,artifact_judge_failed_c,artifact_judge_failed_d,artifact_judge_failed_e" {
		t.Errorf("gaps %v", gapNames(j.Gaps))
	}
	if !strings.Contains(j.Gaps[0].Detail, "dimension_scores.a is 1.5") || !strings.Contains(j.Gaps[3].Detail, "no score") {
		t.Errorf("details %+v", j.Gaps)
	}
	for _, answer := range [][]byte{nil, []byte("not json"), []byte(`[0.5]`), []byte(`{"scores": {"a": 0.5}}`), []byte(`{"dimension_scores": {"a": 1e999}}`)} {
		j := ApplyJudge(c, answer)
		if j.Dimensions[0].Status != StatusFailed || len(j.Gaps) != 5 {
			t.Errorf("answer %q: %+v", answer, j.Dimensions[0])
		}
	}
}

// The gameplay_metrics harness, protected and matching its hash, is run
// and its metrics scored.
func Test5G_GameplayMetricsIndependentHarnessRuns(t *testing.T) {
	root := t.TempDir()
	harness := `echo '{"input_lag_ms": 40, "completion_rate": 0.9}'`
	writeFile(t, root, "tools/feel.sh", harness)
	c, pc := critique(t, root, `{"dimensions": [{"name": "feel", "capture_method": "gameplay_metrics",
		"gameplay_metrics_command": "sh ./tools/feel.sh --seed 1", "gameplay_metrics_hash": "`+sha(harness)+`",
		"targets": [{"metric": "input_lag_ms", "op": "<=", "value": 50}, {"metric": "completion_rate", "op": ">=", "value": 0.95}]}]}`,
		Env{Protected: under([]string{"tools/*"})})
	if len(pc.calls) != 1 || pc.calls[0].Harness != "tools/feel.sh" || pc.calls[0].Command.Shell != "sh ./tools/feel.sh --seed 1" {
		t.Fatalf("calls %+v", pc.calls)
	}
	if d := c.Dimensions[0]; d.Status != StatusScored || *d.Score != 0.5 {
		t.Errorf("%+v", d)
	}
}

// The loop tries to grade itself through the harness: each way is a
// capture failure with a gap, and the harness is never run.
func Test5G_GameplayMetricsHarnessNotIndependent(t *testing.T) {
	harness := `echo '{"fun": 1}'`
	dim := func(cmd, hash string) string {
		return `{"dimensions": [{"name": "feel", "capture_method": "gameplay_metrics", "gameplay_metrics_command": ` + cmd +
			hash + `, "targets": [{"metric": "fun", "op": ">=", "value": 1}]}]}`
	}
	hashOK := `, "gameplay_metrics_hash": "` + sha(harness) + `"`
	cases := []struct {
		name, rubric string
		protected    []string // directories
		setup        func(root string)
		gap, reason  string
	}{
		{"unprotected harness", dim(`"sh tools/feel.sh"`, hashOK), []string{"agent/safety/*"}, nil,
			"gameplay_metrics_not_independent_feel", "tools/feel.sh is not under safety.protected_paths"},
		{"harness edited after its hash was recorded", dim(`"sh tools/feel.sh"`, hashOK), []string{"tools/*"},
			func(root string) { writeFile(t, root, "tools/feel.sh", `echo '{"fun": 1}' # tuned`) },
			"gameplay_metrics_not_independent_feel", "tools/feel.sh has sha256"},
		{"no hash recorded", dim(`"sh tools/feel.sh"`, ""), []string{"tools/*"}, nil,
			"gameplay_metrics_not_independent_feel", "gameplay_metrics_hash is not set"},
		{"unprotected file the harness reads", dim(`["sh", "tools/feel.sh", "cfg/params.json"]`, hashOK), []string{"tools/*"},
			func(root string) { writeFile(t, root, "cfg/params.json", `{}`) },
			"gameplay_metrics_not_independent_feel", "cfg/params.json is not under safety.protected_paths"},
		{"harness file missing", dim(`"sh tools/gone.sh"`, hashOK), []string{"tools/*"}, nil,
			"gameplay_metrics_harness_missing_feel", "names no file in the project"},
		{"no harness command", `{"dimensions": [{"name": "feel", "capture_method": "gameplay_metrics", "capture_command": "echo '{\"fun\": 1}'",
			"targets": [{"metric": "fun", "op": ">=", "value": 1}]}]}`, []string{"tools/*"}, nil,
			"gameplay_metrics_harness_missing_feel", "gameplay_metrics_command is not set"},
		{"harness outside the project", dim(`"sh ../feel.sh"`, hashOK), []string{"*"},
			func(root string) { writeFile(t, filepath.Dir(root), "feel.sh", harness) },
			"gameplay_metrics_harness_missing_feel", "names no file in the project"},
		{"symbolic link out of the project", dim(`"sh tools/link.sh"`, hashOK), []string{"tools/*"},
			func(root string) {
				out := writeFile(t, t.TempDir(), "feel.sh", harness)
				if err := os.Symlink(out, filepath.Join(root, "tools/link.sh")); err != nil {
					t.Fatal(err)
				}
			},
			"gameplay_metrics_harness_missing_feel", "names no file in the project"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "tools/feel.sh", harness)
			if tc.setup != nil {
				tc.setup(root)
			}
			c, pc := critique(t, root, tc.rubric, Env{Protected: under(tc.protected)})
			if len(pc.calls) != 0 {
				t.Errorf("the harness ran: %+v", pc.calls)
			}
			d := c.Dimensions[0]
			if d.Status != StatusFailed || d.Score != nil || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("dimension %+v, want reason containing %q", d, tc.reason)
			}
			if gapNames(c.Gaps) != tc.gap || !strings.Contains(c.Gaps[0].Detail, "quality_rubric.dimensions[0] (feel)") {
				t.Errorf("gaps %+v, want %s", c.Gaps, tc.gap)
			}
		})
	}
}

func Test5G_GameplayMetricsHarnessOverTheReadCap(t *testing.T) {
	root := t.TempDir()
	harness := "echo '{}'\n" + strings.Repeat("#", 2000)
	writeFile(t, root, "tools/feel.sh", harness)
	c, pc := critique(t, root, `{"dimensions": [{"name": "feel", "capture_method": "gameplay_metrics",
		"gameplay_metrics_command": "sh tools/feel.sh", "gameplay_metrics_hash": "`+sha(harness)+`"}]}`,
		Env{Protected: under([]string{"tools/*"}), HaveJudge: true, MaxReadBytes: 1000})
	if len(pc.calls) != 0 || !strings.Contains(c.Dimensions[0].Reason, "larger than safety.max_read_mib") {
		t.Errorf("%+v", c.Dimensions[0])
	}
}

// Without a way to tell protected paths, no harness is independent.
func Test5G_GameplayMetricsNothingProtected(t *testing.T) {
	root := t.TempDir()
	harness := `echo '{"fun": 1}'`
	writeFile(t, root, "tools/feel.sh", harness)
	c, pc := critique(t, root, `{"dimensions": [{"name": "feel", "capture_method": "gameplay_metrics",
		"gameplay_metrics_command": "sh tools/feel.sh", "gameplay_metrics_hash": "`+sha(harness)+`",
		"targets": [{"metric": "fun", "op": ">=", "value": 1}]}]}`, Env{})
	if len(pc.calls) != 0 || gapNames(c.Gaps) != "gameplay_metrics_not_independent_feel" {
		t.Errorf("%+v %+v", c.Dimensions[0], c.Gaps)
	}
}
