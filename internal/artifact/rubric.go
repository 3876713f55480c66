package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Capture methods a dimension may declare (capture_method).
const (
	MethodCommand         = "command"
	MethodAPICall         = "api_call"
	MethodBenchmark       = "benchmark"
	MethodGameplayMetrics = "gameplay_metrics"
	MethodScreenshot      = "screenshot"
)

// Rubric defaults (SPEC-NOTES §5, 5-G).
const (
	DefaultBar           = 0.70
	DefaultPlateauWindow = 4
	DefaultPlateauEps    = 0.05
)

// Limits on a rubric. A rubric is written by a human, so one past these is
// a mistake or an attack, and is refused rather than truncated.
const (
	maxDimensions   = 64
	maxTargets      = 64
	maxListItems    = 256
	maxTextLen      = 4096
	maxCommandLen   = 8192
	maxCommandWords = 256
	maxMetricLen    = 128
	maxWeight       = 1000
	maxWindow       = 100
	maxErrors       = 20
)

// validName reports whether s may be a dimension name. Names become parts of
// skill-gap names (and so of proposed-skills/<gap>.md file names), of
// environment values and of printed lines, so they are kept to plain
// identifier characters.
//
// It is the pattern ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$ checked by hand:
// compiled, that pattern's counted repetition cost every process 0.3 ms
// and 861 allocations at start, rubric or not.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Ops are the comparison operators a target may use.
var Ops = []string{"<", "<=", ">", ">=", "==", "!="}

// Rubric is a parsed quality_rubric.
type Rubric struct {
	// Path is where the rubric sits in config.json (quality_rubric, or
	// domains.<name>.quality_rubric); every error and gap names it.
	Path string
	// Raw is the rubric as written, for the integrity hash and the judge.
	Raw json.RawMessage
	// Dimensions are the rubric's dimensions (or axes), in order.
	Dimensions []Dimension
	// Bar is bar (DefaultBar when absent); BarLeap and BarCoast default
	// to Bar.
	Bar, BarLeap, BarCoast float64
	// PlateauWindow and PlateauEps tune 2-G plateau detection.
	PlateauWindow int
	PlateauEps    float64
}

// Active reports whether the rubric grades anything: an empty list of
// dimensions turns the artifact axis off.
func (r *Rubric) Active() bool { return r != nil && len(r.Dimensions) > 0 }

// Dimension returns the dimension called name.
func (r *Rubric) Dimension(name string) (Dimension, bool) {
	if r == nil {
		return Dimension{}, false
	}
	for _, d := range r.Dimensions {
		if d.Name == name {
			return d, true
		}
	}
	return Dimension{}, false
}

// Dimension is one rubric dimension, with the rubric-wide capture settings
// already applied.
type Dimension struct {
	Name   string
	Weight float64
	// CaptureMethod is the dimension's, else the rubric's, else
	// "screenshot".
	CaptureMethod string
	// CaptureCommand is the dimension's, else the rubric's.
	CaptureCommand Command
	Targets        []Target
	// GameplayMetricsCommand runs the harness of a gameplay_metrics
	// dimension; GameplayMetricsHash is the SHA-256 (lower-case hex) the
	// harness file must have.
	GameplayMetricsCommand Command
	GameplayMetricsHash    string
	AssetSources           []string
	// CeilingWithoutAssets is the score a change to code alone cannot get
	// past (nil when the rubric sets none); it no longer applies once
	// AssetSources is non-empty.
	CeilingWithoutAssets *float64
	CeilingNote          string
	Techniques           []string
	// Path is the dimension's JSON path (quality_rubric.dimensions[1]).
	Path string
	// Raw is the dimension as written (description, reference anchors),
	// for the judge.
	Raw json.RawMessage
}

// AssetCeiling is the ceiling that applies to the dimension now: nil when
// it has none or when assets have been supplied.
func (d Dimension) AssetCeiling() *float64 {
	if len(d.AssetSources) > 0 {
		return nil
	}
	return d.CeilingWithoutAssets
}

// Target is one {metric, op, value} check against the capture's JSON.
type Target struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
}

// Met reports whether actual satisfies the target. Equality is exact: the
// rubric author compares integers or chooses < and >.
func (t Target) Met(actual float64) bool {
	switch t.Op {
	case "<":
		return actual < t.Value
	case "<=":
		return actual <= t.Value
	case ">":
		return actual > t.Value
	case ">=":
		return actual >= t.Value
	case "==":
		return actual == t.Value
	case "!=":
		return actual != t.Value
	}
	return false
}

// Select returns the rubric that applies to a domain: the domain's own
// quality_rubric when it has one, else the top-level one, with its JSON
// path. A rubric that is absent or JSON null does not count as given.
func Select(domain string, domainRubric, topRubric json.RawMessage) (json.RawMessage, string) {
	if Given(domainRubric) {
		return domainRubric, "domains." + domain + ".quality_rubric"
	}
	if Given(topRubric) {
		return topRubric, "quality_rubric"
	}
	return nil, ""
}

// Given reports whether a quality_rubric is given: not absent, not JSON
// null. It is what Select decides by, for a caller that must know without
// parsing.
func Given(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// Parse parses the quality_rubric raw found at path. No rubric (absent or
// null) is (nil, nil). Every problem is reported with its JSON path (at
// most 20 of them); a rubric with any problem is not returned, since
// grading against part of a rubric would be grading against a standard
// nobody wrote.
func Parse(raw json.RawMessage, path string) (*Rubric, error) {
	if !Given(raw) {
		return nil, nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, errAt(path, "is not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errAt(path, "must be an object, not %s", kind(v))
	}
	p := parser{}
	r := &Rubric{Path: path, Raw: append(json.RawMessage(nil), raw...)}

	r.Bar = p.bar(obj, "bar", path, DefaultBar)
	r.BarLeap = p.bar(obj, "bar_leap", path, r.Bar)
	r.BarCoast = p.bar(obj, "bar_coast", path, r.Bar)
	if r.BarLeap > r.BarCoast {
		p.add(errAt(path+".bar_leap", "%g is above bar_coast %g: below bar_leap the loop always leaps, above bar_coast it may coast", r.BarLeap, r.BarCoast))
	}
	r.PlateauWindow = DefaultPlateauWindow
	if x, ok := obj["plateau_window"]; ok {
		n, err := intIn(x, path+".plateau_window", 1, maxWindow)
		p.add(err)
		if err == nil {
			r.PlateauWindow = n
		}
	}
	r.PlateauEps = DefaultPlateauEps
	if x, ok := obj["plateau_eps"]; ok {
		f, err := numberIn(x, path+".plateau_eps", 0, 1)
		p.add(err)
		if err == nil {
			r.PlateauEps = f
		}
	}
	defMethod := MethodScreenshot
	if x, ok := obj["capture_method"]; ok && x != nil {
		m, err := method(x, path+".capture_method")
		p.add(err)
		if err == nil {
			defMethod = m
		}
	}
	defCmd, err := command(obj["capture_command"], path+".capture_command")
	p.add(err)

	listKey, list := dimensionList(obj, path, &p)
	if list != nil {
		if len(list) > maxDimensions {
			p.add(errAt(path+"."+listKey, "has %d dimensions, more than %d", len(list), maxDimensions))
			list = nil
		}
		seen := map[string]string{}
		positive := false
		for i, e := range list {
			dp := fmt.Sprintf("%s.%s[%d]", path, listKey, i)
			d, ok := p.dimension(e, dp, defMethod, defCmd)
			if !ok {
				continue
			}
			if prev, dup := seen[d.Name]; dup {
				p.add(errAt(dp+".name", "%q is also the name of %s", d.Name, prev))
				continue
			}
			seen[d.Name] = dp
			if d.Weight > 0 {
				positive = true
			}
			d.Raw, _ = json.Marshal(e)
			r.Dimensions = append(r.Dimensions, d)
		}
		if len(list) > 0 && len(p.errs) == 0 && !positive {
			p.add(errAt(path+"."+listKey, "no dimension has a positive weight, so no artifact score can be formed"))
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return r, nil
}

// dimensionList finds the list of dimensions: dimensions or axes. Both
// being non-empty is refused, since only one of them would be graded.
func dimensionList(obj map[string]any, path string, p *parser) (string, []any) {
	get := func(key string) ([]any, bool) {
		x, ok := obj[key]
		if !ok || x == nil {
			return nil, false
		}
		l, isList := x.([]any)
		if !isList {
			p.add(errAt(path+"."+key, "must be a list of dimensions, not %s", kind(x)))
			return nil, false
		}
		return l, true
	}
	dims, hasDims := get("dimensions")
	axes, hasAxes := get("axes")
	switch {
	case len(dims) > 0 && len(axes) > 0:
		p.add(errAt(path+".axes", "both dimensions and axes list dimensions; keep one"))
		return "", nil
	case len(axes) > 0:
		return "axes", axes
	case hasDims:
		return "dimensions", dims
	case hasAxes:
		return "axes", axes
	}
	return "", nil
}

type parser struct{ errs []error }

func (p *parser) add(err error) {
	if err != nil && len(p.errs) < maxErrors {
		p.errs = append(p.errs, err)
	}
}

func (p *parser) err() error { return errors.Join(p.errs...) }

func (p *parser) bar(obj map[string]any, key, path string, def float64) float64 {
	x, ok := obj[key]
	if !ok || x == nil {
		return def
	}
	f, err := numberIn(x, path+"."+key, 0, 1)
	p.add(err)
	if err != nil {
		return def
	}
	return f
}

func method(v any, path string) (string, error) {
	s, err := stringMax(v, path, maxMetricLen)
	if err != nil {
		return "", err
	}
	switch s {
	case MethodCommand, MethodAPICall, MethodBenchmark, MethodGameplayMetrics, MethodScreenshot:
		return s, nil
	}
	return "", errAt(path, "%q is not a capture method (command, api_call, benchmark, gameplay_metrics, screenshot)", s)
}

func (p *parser) dimension(v any, path, defMethod string, defCmd Command) (Dimension, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.add(errAt(path, "must be an object, not %s", kind(v)))
		return Dimension{}, false
	}
	before := len(p.errs)
	d := Dimension{Path: path, Weight: 1, CaptureMethod: defMethod, CaptureCommand: defCmd}

	if name, err := stringMax(obj["name"], path+".name", 64); err != nil {
		p.add(err)
	} else if !validName(name) {
		p.add(errAt(path+".name", "%q must be 1 to 64 letters, digits, '_', '-' or '.', not starting with '-' or '.'", name))
	} else {
		d.Name = name
	}
	if x, ok := obj["weight"]; ok {
		w, err := numberIn(x, path+".weight", 0, maxWeight)
		p.add(err)
		d.Weight = w
	}
	if x, ok := obj["capture_method"]; ok && x != nil {
		m, err := method(x, path+".capture_method")
		p.add(err)
		d.CaptureMethod = m
	}
	if x, ok := obj["capture_command"]; ok && x != nil {
		c, err := command(x, path+".capture_command")
		p.add(err)
		if !c.Empty() {
			d.CaptureCommand = c
		}
	}
	if x, ok := obj["targets"]; ok && x != nil {
		d.Targets = p.targets(x, path+".targets")
		if len(d.Targets) > 0 && d.CaptureMethod == MethodScreenshot {
			p.add(errAt(path+".targets", "a screenshot dimension is graded by the judge, so its targets would never be checked; use capture_method command, api_call, benchmark or gameplay_metrics"))
		}
	}
	c, err := command(obj["gameplay_metrics_command"], path+".gameplay_metrics_command")
	p.add(err)
	d.GameplayMetricsCommand = c
	if x, ok := obj["gameplay_metrics_hash"]; ok && x != nil {
		h, err := stringMax(x, path+".gameplay_metrics_hash", 128)
		p.add(err)
		d.GameplayMetricsHash = normalHash(h)
		if err == nil && !isHexHash(d.GameplayMetricsHash) {
			p.add(errAt(path+".gameplay_metrics_hash", "must be a SHA-256 in hex (64 digits), not %q", h))
		}
	}
	d.AssetSources, err = stringList(obj["asset_sources"], path+".asset_sources", maxListItems, maxTextLen)
	p.add(err)
	d.Techniques, err = stringList(obj["techniques"], path+".techniques", maxListItems, maxTextLen)
	p.add(err)
	if x, ok := obj["ceiling_without_assets"]; ok && x != nil {
		f, err := numberIn(x, path+".ceiling_without_assets", 0, 1)
		p.add(err)
		if err == nil {
			d.CeilingWithoutAssets = &f
		}
	}
	if x, ok := obj["ceiling_note"]; ok && x != nil {
		d.CeilingNote, err = stringMax(x, path+".ceiling_note", maxTextLen)
		p.add(err)
	}
	return d, len(p.errs) == before && d.Name != ""
}

func (p *parser) targets(v any, path string) []Target {
	l, ok := v.([]any)
	if !ok {
		p.add(errAt(path, "must be a list of {metric, op, value}, not %s", kind(v)))
		return nil
	}
	if len(l) > maxTargets {
		p.add(errAt(path, "has %d targets, more than %d", len(l), maxTargets))
		return nil
	}
	out := make([]Target, 0, len(l))
	for i, e := range l {
		tp := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := e.(map[string]any)
		if !ok {
			p.add(errAt(tp, "must be an object {metric, op, value}, not %s", kind(e)))
			continue
		}
		var t Target
		var err error
		if t.Metric, err = stringMax(obj["metric"], tp+".metric", maxMetricLen); err != nil {
			p.add(err)
		} else if strings.TrimSpace(t.Metric) == "" {
			p.add(errAt(tp+".metric", "is empty"))
		}
		if t.Op, err = stringMax(obj["op"], tp+".op", 8); err != nil {
			p.add(err)
		} else if !validOp(t.Op) {
			p.add(errAt(tp+".op", "%q is not one of %s", t.Op, strings.Join(Ops, " ")))
		}
		if t.Value, err = numberIn(obj["value"], tp+".value", -math.MaxFloat64, math.MaxFloat64); err != nil {
			p.add(err)
		}
		out = append(out, t)
	}
	return out
}

func validOp(op string) bool {
	for _, o := range Ops {
		if o == op {
			return true
		}
	}
	return false
}

func normalHash(h string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(h)), "sha256:")
}

func isHexHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
