package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ooda-loop/ooda/internal/secret"
)

// defaultMaxRead is safety.max_read_mib's default (16 MiB), for an Env
// that sets no limit.
const defaultMaxRead = 16 << 20

// Gap types of the skill gaps this package reports.
const (
	GapCaptureFailure = "capture_failure"
	GapHumanRequired  = "human_required"
	GapQuality        = "quality_gap"
)

// Gap is a skill gap for the engine to record (skill_gaps.json name, type,
// detail).
type Gap struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Detail string `json:"detail"`
}

// Status is what became of one dimension in a critique.
type Status string

// Dimension statuses.
const (
	// StatusScored: the dimension has a score.
	StatusScored Status = "scored"
	// StatusJudgeNeeded: the evidence was captured and only the judge can
	// score it (a screenshot, or a dimension without targets).
	StatusJudgeNeeded Status = "judge_needed"
	// StatusFailed: no score (capture failure); a gap says why.
	StatusFailed Status = "failed"
)

// CaptureRequest asks the engine to run one dimension's capture.
type CaptureRequest struct {
	// Dimension is the dimension's name, Method its capture method.
	Dimension string
	Method    string
	// Command is the command to run from the project root: the capture
	// command, or for gameplay_metrics the verified harness command.
	Command Command
	// Harness is the harness file (relative to the project root) whose
	// hash was verified, for gameplay_metrics; empty otherwise. The engine
	// may re-check it right before running to close the gap between check
	// and use.
	Harness string
}

// Capture runs capture commands. The engine implements it with real
// processes (its own environment policy, timeout and output cap); Run
// returns what the command printed on stdout, and an error when it could
// not run, failed (non-zero exit) or timed out.
type Capture interface {
	Run(ctx context.Context, req CaptureRequest) ([]byte, error)
}

// CaptureFunc adapts a function to Capture.
type CaptureFunc func(ctx context.Context, req CaptureRequest) ([]byte, error)

// Run calls f.
func (f CaptureFunc) Run(ctx context.Context, req CaptureRequest) ([]byte, error) { return f(ctx, req) }

// TargetResult is one target checked against the capture's JSON.
type TargetResult struct {
	Target
	// Actual is the metric's value; nil when the capture did not print it
	// as a number.
	Actual *float64 `json:"actual"`
	Met    bool     `json:"met"`
}

// DimensionResult is one dimension's outcome in a critique.
type DimensionResult struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Status Status `json:"status"`
	// Score is in [0, 1] when Status is scored, nil otherwise.
	Score *float64 `json:"score"`
	// ScoredBy is "targets" or "judge" for a scored dimension.
	ScoredBy string         `json:"scored_by,omitempty"`
	Targets  []TargetResult `json:"targets,omitempty"`
	// Evidence is what the capture printed (secrets masked), for the
	// judge and the record.
	Evidence []byte `json:"-"`
	// Reason says why the dimension failed or what it is waiting for.
	Reason string `json:"reason,omitempty"`
}

// Critique is the 5-G result for one rubric.
type Critique struct {
	Rubric     *Rubric
	Dimensions []DimensionResult
	// Gaps are the skill gaps the critique found (capture failures,
	// missing judge, missing metrics), in dimension order.
	Gaps []Gap
}

// NeedsJudge reports whether any dimension waits for the judge.
func (c Critique) NeedsJudge() bool {
	for _, d := range c.Dimensions {
		if d.Status == StatusJudgeNeeded {
			return true
		}
	}
	return false
}

// Scores are the dimension scores so far: every rubric dimension, nil for
// one without a score (including one still waiting for the judge).
func (c Critique) Scores() map[string]*float64 {
	out := make(map[string]*float64, len(c.Dimensions))
	for _, d := range c.Dimensions {
		out[d.Name] = d.Score
	}
	return out
}

// Summary aggregates the critique's scores (see Aggregate).
func (c Critique) Summary() Summary { return Aggregate(c.Rubric, c.Scores()) }

// Env is what a critique needs from the engine besides the rubric.
type Env struct {
	// Root is the project root; harness files are looked up under it.
	Root string
	// Protected reports whether a project file (a slash-separated path
	// relative to Root) is under safety.protected_paths, matched the way
	// the engine matches them everywhere else (config.MatchPath). Nil
	// protects nothing, so no harness is independent.
	Protected func(file string) bool
	// MaxReadBytes is safety.max_read_mib in bytes
	// (config.Safety.MaxReadBytes): the largest capture output and harness
	// file accepted; 0 means the 16 MiB default.
	MaxReadBytes int64
	// HaveJudge is true when a judge command is configured to score the
	// dimensions that have no targets.
	HaveJudge bool
}

// Run captures and scores every dimension of r (5-G), in rubric order.
//
// A dimension with targets is scored here, as the fraction of its targets
// met. A screenshot dimension, or one without targets, has its evidence
// captured and is left StatusJudgeNeeded for ApplyJudge; with no judge
// configured it is not captured at all, and is null with a gap. Whatever
// cannot be captured is null with a gap, never a 0 or a 1.
//
// Metrics are the top-level numbers of the JSON object the capture prints
// (the whole output, or else its last non-empty line, so that a capture
// may log before its result). Output that holds no such object is a
// capture failure. A metric the object lacks, or holds as something other
// than a number (true, "12", null), fails its target and adds an
// artifact_metric_missing_<dim> gap: the capture runs against the
// artifact the loop changes, and if a missing metric made the dimension
// null it would drop out of the weighted mean, so hiding a bad number
// would raise the score.
func Run(ctx context.Context, r *Rubric, env Env, c Capture) Critique {
	cr := Critique{Rubric: r}
	if r == nil {
		return cr
	}
	for _, d := range r.Dimensions {
		res, gaps := runDimension(ctx, d, env, c)
		cr.Dimensions = append(cr.Dimensions, res)
		cr.Gaps = append(cr.Gaps, gaps...)
	}
	return cr
}

func runDimension(ctx context.Context, d Dimension, env Env, c Capture) (DimensionResult, []Gap) {
	res := DimensionResult{Name: d.Name, Method: d.CaptureMethod, Status: StatusFailed}
	fail := func(gap, reason string) (DimensionResult, []Gap) {
		res.Reason = reason
		return res, []Gap{{Name: gap + "_" + d.Name, Type: GapCaptureFailure,
			Detail: fmt.Sprintf("%s (%s): %s", d.Path, d.Name, reason)}}
	}
	judged := d.CaptureMethod == MethodScreenshot || len(d.Targets) == 0
	if judged && !env.HaveJudge {
		return fail("artifact_no_judge", "no targets to check and no judge command to score it")
	}
	req := CaptureRequest{Dimension: d.Name, Method: d.CaptureMethod, Command: d.CaptureCommand}
	if d.CaptureMethod == MethodGameplayMetrics {
		h := CheckHarness(env.Root, d, env.Protected, env.MaxReadBytes)
		if !h.OK {
			res.Reason = h.Reason
			return res, []Gap{h.Gap}
		}
		req.Command, req.Harness = d.GameplayMetricsCommand, h.Path
	} else if d.CaptureCommand.Empty() {
		return fail("artifact_capture_command_missing", fmt.Sprintf("capture_method %s needs a capture_command (the dimension's or the rubric's)", d.CaptureMethod))
	}
	if c == nil {
		return fail("artifact_capture_failed", "no capture runner")
	}
	out, err := c.Run(ctx, req)
	if err != nil {
		return fail("artifact_capture_failed", fmt.Sprintf("capture command %q failed: %s", secret.Redact(req.Command.String()), secret.Redact(err.Error())))
	}
	maxRead := env.MaxReadBytes
	if maxRead <= 0 {
		maxRead = defaultMaxRead
	}
	if int64(len(out)) > maxRead {
		return fail("artifact_capture_failed", fmt.Sprintf("capture output is %d bytes, more than safety.max_read_mib allows", len(out)))
	}
	res.Evidence = secret.RedactBytes(out)
	if judged {
		res.Status = StatusJudgeNeeded
		res.Reason = "waiting for the judge"
		return res, nil
	}
	metrics, err := metricsObject(out)
	if err != nil {
		return fail("artifact_capture_failed", "capture output: "+err.Error())
	}
	met := 0
	var missing []string
	for _, t := range d.Targets {
		tr := TargetResult{Target: t}
		if f, ok := finite(metrics[t.Metric]); ok {
			tr.Actual = &f
			tr.Met = t.Met(f)
		} else {
			missing = append(missing, t.Metric)
		}
		if tr.Met {
			met++
		}
		res.Targets = append(res.Targets, tr)
	}
	s := round3(float64(met) / float64(len(d.Targets)))
	res.Status, res.Score, res.ScoredBy = StatusScored, &s, "targets"
	var gaps []Gap
	if len(missing) > 0 {
		res.Reason = "not a number in the capture output, counted as unmet: " + strings.Join(missing, ", ")
		gaps = append(gaps, Gap{Name: "artifact_metric_missing_" + d.Name, Type: GapCaptureFailure,
			Detail: fmt.Sprintf("%s (%s): the capture printed no number for %s; those targets count as unmet", d.Path, d.Name, strings.Join(missing, ", "))})
	}
	return res, gaps
}

// metricsObject finds the JSON object a capture printed: the whole output,
// else its last non-empty line.
func metricsObject(out []byte) (map[string]any, error) {
	parse := func(b []byte) (map[string]any, bool) {
		v, err := decodeValue(b)
		if err != nil {
			return nil, false
		}
		m, ok := v.(map[string]any)
		return m, ok
	}
	t := bytes.TrimSpace(out)
	if len(t) == 0 {
		return nil, errors.New("empty, expected a JSON object of metrics")
	}
	if m, ok := parse(t); ok {
		return m, nil
	}
	if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
		if m, ok := parse(bytes.TrimSpace(t[i+1:])); ok {
			return m, nil
		}
	}
	return nil, errors.New("neither the output nor its last line is a JSON object of metrics")
}

// HarnessCheck is the independence check of a gameplay_metrics harness.
type HarnessCheck struct {
	OK bool
	// Path is the harness file, relative to the project root.
	Path string
	// Reason and Gap say why the check failed.
	Reason string
	Gap    Gap
}

// CheckHarness checks that a gameplay_metrics dimension's harness is out
// of the loop's reach: it must exist, sit under safety.protected_paths,
// and have the SHA-256 the rubric records for it (gameplay_metrics_hash).
//
// The harness is the first word of gameplay_metrics_command that names a
// regular file under root (a relative path, as in "node tools/harness.mjs";
// the interpreter is usually not a project file). Every other word naming
// a project file (a config the harness reads, a local interpreter) must be
// protected too, or the loop could change what the harness measures
// without touching the harness. A missing command or file is
// gameplay_metrics_harness_missing_<dim>; any other failure is
// gameplay_metrics_not_independent_<dim>. Files are opened through an
// os.Root, so a symbolic link cannot lead the check outside the project.
func CheckHarness(root string, d Dimension, protected func(file string) bool, maxRead int64) HarnessCheck {
	missing := func(reason string) HarnessCheck {
		return HarnessCheck{Reason: reason, Gap: Gap{Name: "gameplay_metrics_harness_missing_" + d.Name,
			Type: GapCaptureFailure, Detail: fmt.Sprintf("%s (%s): %s", d.Path, d.Name, reason)}}
	}
	notIndep := func(p, reason string) HarnessCheck {
		return HarnessCheck{Path: p, Reason: reason, Gap: Gap{Name: "gameplay_metrics_not_independent_" + d.Name,
			Type: GapCaptureFailure, Detail: fmt.Sprintf("%s (%s): %s", d.Path, d.Name, reason)}}
	}
	if d.GameplayMetricsCommand.Empty() {
		return missing("gameplay_metrics_command is not set")
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return missing("cannot open the project root: " + err.Error())
	}
	defer rt.Close()
	var files []string
	for _, w := range d.GameplayMetricsCommand.Words() {
		if p, ok := projectFile(rt, w); ok {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return missing(fmt.Sprintf("gameplay_metrics_command %q names no file in the project", d.GameplayMetricsCommand.String()))
	}
	for _, f := range files {
		if protected == nil || !protected(f) {
			return notIndep(files[0], fmt.Sprintf("%s is not under safety.protected_paths, so the loop could edit what grades it", f))
		}
	}
	if d.GameplayMetricsHash == "" {
		return notIndep(files[0], fmt.Sprintf("%s.gameplay_metrics_hash is not set, so %s cannot be verified", d.Path, files[0]))
	}
	sum, err := fileHash(rt, files[0], maxRead)
	if err != nil {
		return notIndep(files[0], err.Error())
	}
	if sum != d.GameplayMetricsHash {
		return notIndep(files[0], fmt.Sprintf("%s has sha256 %s, not gameplay_metrics_hash %s", files[0], short(sum), short(d.GameplayMetricsHash)))
	}
	return HarnessCheck{OK: true, Path: files[0]}
}

// projectFile reports whether word is a relative path to a regular file
// inside the root, and its cleaned form.
func projectFile(rt *os.Root, word string) (string, bool) {
	if word == "" || strings.HasPrefix(word, "-") || filepath.IsAbs(word) || strings.ContainsRune(word, 0) {
		return "", false
	}
	p := path.Clean(filepath.ToSlash(word))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	fi, err := rt.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

func fileHash(rt *os.Root, p string, maxRead int64) (string, error) {
	f, err := rt.Open(p)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", p, err)
	}
	defer f.Close()
	if maxRead <= 0 {
		maxRead = defaultMaxRead
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxRead+1))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", p, err)
	}
	if n > maxRead {
		return "", fmt.Errorf("%s is larger than safety.max_read_mib allows", p)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ApplyJudge fills in the dimensions waiting for the judge from its answer
// (the JSON object the judge command printed, with dimension_scores {name:
// score|null}). A score must be a number in [0, 1]; anything else, an
// omitted dimension, or no usable answer (answer nil: the judge failed)
// leaves that dimension null with an artifact_judge_failed_<dim> gap. The
// judge cannot override a dimension scored by its targets: a score it
// gives one is ignored.
func ApplyJudge(c Critique, answer []byte) Critique {
	out := c
	out.Dimensions = append([]DimensionResult(nil), c.Dimensions...)
	out.Gaps = append([]Gap(nil), c.Gaps...)
	scores, whole := judgeScores(answer)
	for i := range out.Dimensions {
		d := &out.Dimensions[i]
		if d.Status != StatusJudgeNeeded {
			continue
		}
		reason := whole
		if reason == "" {
			v, ok := scores[d.Name]
			switch f, num := finite(v); {
			case !ok:
				reason = "the judge gave no score for it (dimension_scores." + d.Name + ")"
			case v == nil:
				reason = "the judge scored it null (dimension_scores." + d.Name + ")"
			case !num || f < 0 || f > 1:
				reason = fmt.Sprintf("the judge's dimension_scores.%s is %s, not a number from 0 to 1", d.Name, judgeValue(v))
			default:
				s := round3(f)
				d.Status, d.Score, d.ScoredBy, d.Reason = StatusScored, &s, "judge", ""
				continue
			}
		}
		d.Status, d.Reason = StatusFailed, reason
		path := d.Name
		if dim, ok := c.Rubric.Dimension(d.Name); ok {
			path = dim.Path + " (" + d.Name + ")"
		}
		out.Gaps = append(out.Gaps, Gap{Name: "artifact_judge_failed_" + d.Name, Type: GapCaptureFailure,
			Detail: path + ": " + reason})
	}
	return out
}

// judgeScores reads dimension_scores from a judge answer; the string is
// the reason when the answer as a whole is unusable.
func judgeScores(answer []byte) (map[string]any, string) {
	if answer == nil {
		return nil, "the judge gave no answer"
	}
	v, err := decodeValue(bytes.TrimSpace(answer))
	if err != nil {
		return nil, "the judge's answer is not JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "the judge's answer is " + kind(v) + ", not an object"
	}
	ds, ok := obj["dimension_scores"].(map[string]any)
	if !ok {
		return nil, "the judge's answer has no dimension_scores object"
	}
	return ds, ""
}

func judgeValue(v any) string {
	if n, ok := v.(json.Number); ok {
		if len(n) > 32 {
			return "an out-of-range number"
		}
		return string(n)
	}
	return kind(v)
}

// round3 rounds a score to 3 decimals, the precision scores are recorded
// with, so that what is recorded is what later decisions compare.
func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// JudgeRequest is the input for the judge command: the mission, and for
// each dimension waiting for the judge its rubric entry (description,
// reference anchors) and its captured evidence. Nothing of the build
// cycle's own reasoning is included, so the maker does not grade itself.
func JudgeRequest(c Critique, mission string) json.RawMessage {
	type dim struct {
		Name     string          `json:"name"`
		Rubric   json.RawMessage `json:"rubric,omitempty"`
		Evidence string          `json:"evidence"`
	}
	req := struct {
		Mission    string `json:"mission,omitempty"`
		Dimensions []dim  `json:"dimensions"`
		Answer     string `json:"answer"`
	}{Mission: mission, Dimensions: []dim{},
		Answer: `{"dimension_scores": {"<name>": <0..1 or null>}, "critique": "<one line>"}`}
	for _, d := range c.Dimensions {
		if d.Status != StatusJudgeNeeded {
			continue
		}
		x := dim{Name: d.Name, Evidence: string(d.Evidence)}
		if rd, ok := c.Rubric.Dimension(d.Name); ok {
			x.Rubric = rd.Raw
		}
		req.Dimensions = append(req.Dimensions, x)
	}
	b, _ := json.Marshal(req)
	return b
}
