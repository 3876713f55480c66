package act

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/safetext"
)

// Bounds on a report's numbers. JSON cannot carry an infinity, but finite
// values near the float limit overflow to one once summed or multiplied
// (1e303 dollars twice in a day, a RICE product of 1e308): every number a
// report gives is checked against a bound far above any real value, so the
// sums the engine keeps (the cost ledger, metrics, RICE scores) stay finite.
const (
	// MaxCostUSD is the most one report may claim a run cost.
	MaxCostUSD = 1e6
	// MaxRiceValue bounds each of an action's reach, impact, confidence
	// and effort, which must also not be negative.
	MaxRiceValue = 1e6
	// MaxExtensionValue bounds the magnitude of an action's extension
	// scores (which may be negative: an extension can lower a priority).
	MaxExtensionValue = 1e6
)

// SummaryMax bounds, in runes, a report's summary as the cycle prints and
// records it (the [Act] line, the CHANGELOG entry, the decision log); the
// report itself is kept whole under runs/.
const SummaryMax = 300

// ReportAction is one action a skill proposes (input to 5-C2).
type ReportAction struct {
	Title        string             `json:"title"`
	Reach        float64            `json:"reach"`
	Impact       float64            `json:"impact"`
	Confidence   float64            `json:"confidence"`
	Effort       float64            `json:"effort"`
	RelatedFiles []string           `json:"related_files,omitempty"`
	Extensions   map[string]float64 `json:"extensions,omitempty"`
}

// ResolvedAction names an action the skill reported in an earlier run that
// no longer applies (the finding behind it is fixed). It is ooda's addition
// to the report of SPEC-NOTES §3: in JSON either the action's title alone
// or {"title", "reason"}.
type ResolvedAction struct {
	Title  string `json:"title"`
	Reason string `json:"reason,omitempty"`
}

// ResolvedList is a report's "resolved" array.
type ResolvedList []ResolvedAction

// UnmarshalJSON reads each entry as a title string or a {"title",
// "reason"} object; an error names the entry by its JSON path
// (resolved[2].title), which the json package would not.
func (l *ResolvedList) UnmarshalJSON(b []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return fmt.Errorf("resolved is not an array of titles or {\"title\", \"reason\"} objects")
	}
	out := make(ResolvedList, 0, len(raws))
	for i, raw := range raws {
		var ra ResolvedAction
		switch t := bytes.TrimSpace(raw); {
		case len(t) > 0 && t[0] == '"':
			if err := json.Unmarshal(t, &ra.Title); err != nil {
				return fmt.Errorf("resolved[%d]: %w", i, err)
			}
		case len(t) > 0 && t[0] == '{':
			var fields struct {
				Title, Reason json.RawMessage
			}
			if err := json.Unmarshal(t, &fields); err != nil {
				return fmt.Errorf("resolved[%d]: %w", i, err)
			}
			for _, f := range []struct {
				name string
				raw  json.RawMessage
				dst  *string
			}{{"title", fields.Title, &ra.Title}, {"reason", fields.Reason, &ra.Reason}} {
				if f.raw == nil || string(f.raw) == "null" {
					continue
				}
				if json.Unmarshal(f.raw, f.dst) != nil {
					return fmt.Errorf("resolved[%d].%s is not a string", i, f.name)
				}
			}
		default:
			return fmt.Errorf("resolved[%d] is neither a title nor a {\"title\", \"reason\"} object", i)
		}
		out = append(out, ra)
	}
	*l = out
	return nil
}

// Report is the optional JSON a skill writes to $OODA_REPORT (SPEC-NOTES §3).
type Report struct {
	HadOutput       *bool             `json:"had_output,omitempty"`
	Summary         string            `json:"summary,omitempty"`
	Actions         []ReportAction    `json:"actions,omitempty"`
	Alerts          []json.RawMessage `json:"alerts,omitempty"`
	PRNumber        *int              `json:"pr_number,omitempty"`
	PRCreated       *bool             `json:"pr_created,omitempty"`
	TestStatus      string            `json:"test_status,omitempty"`
	CostUSD         *float64          `json:"cost_usd,omitempty"`
	ArtifactChanged *bool             `json:"artifact_changed,omitempty"`
	// ProtectedBlocked says the skill left out a change because it touched
	// a protected path: the PR may be incomplete and is never auto-merged.
	ProtectedBlocked *bool                      `json:"protected_blocked,omitempty"`
	Vars             map[string]json.RawMessage `json:"vars,omitempty"`
	// Resolved names the actions this skill reported earlier that no
	// longer apply; the engine completes the matching pending items of the
	// domain (reflect.ResolveActions).
	Resolved ResolvedList `json:"resolved,omitempty"`
}

// ParseReport decodes a report. An empty input is no report.
func ParseReport(b []byte) (*Report, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("skill report: %w", err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("skill report: %w", err)
	}
	return &r, nil
}

// check rejects the numbers no run can mean; the error names the field by
// its JSON path.
func (r *Report) check() error {
	if r.CostUSD != nil {
		if v := *r.CostUSD; v < 0 {
			return fmt.Errorf("cost_usd must not be negative (got %s)", num(v))
		} else if !inRange(v, 0, MaxCostUSD) {
			return fmt.Errorf("cost_usd %s is out of range (0 to %s)", num(v), num(MaxCostUSD))
		}
	}
	if r.PRNumber != nil && *r.PRNumber < 1 {
		return fmt.Errorf("pr_number %d is not a pull-request number (must be 1 or more)", *r.PRNumber)
	}
	for i, a := range r.Actions {
		for _, f := range []struct {
			name string
			v    float64
		}{{"reach", a.Reach}, {"impact", a.Impact}, {"confidence", a.Confidence}, {"effort", a.Effort}} {
			if !inRange(f.v, 0, MaxRiceValue) {
				return fmt.Errorf("actions[%d].%s %s is out of range (0 to %s)", i, f.name, num(f.v), num(MaxRiceValue))
			}
		}
		// Sorted, so the same report always names the same field.
		for _, k := range slices.Sorted(maps.Keys(a.Extensions)) {
			if v := a.Extensions[k]; !inRange(v, -MaxExtensionValue, MaxExtensionValue) {
				return fmt.Errorf("actions[%d].extensions.%s %s is out of range (%s to %s)", i, k, num(v), num(-MaxExtensionValue), num(MaxExtensionValue))
			}
		}
	}
	return nil
}

// inRange is lo ≤ v ≤ hi for a finite v.
func inRange(v, lo, hi float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= lo && v <= hi
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// CreatedPR reports whether the report says a PR was created.
func (r *Report) CreatedPR() bool {
	if r == nil {
		return false
	}
	if r.PRCreated != nil {
		return *r.PRCreated
	}
	return r.PRNumber != nil
}

// HadOutputDefault applies the report's had_output default: actions
// extracted, actions resolved, a PR created, new alerts, or the domain
// state changed.
func (r *Report) HadOutputDefault(stateChanged bool) bool {
	if r == nil {
		return stateChanged
	}
	if r.HadOutput != nil {
		return *r.HadOutput
	}
	return len(r.Actions) > 0 || len(r.Resolved) > 0 || r.CreatedPR() || len(r.Alerts) > 0 || stateChanged
}

// SummaryLine is the report's summary as the cycle shows and records it:
// on one line (every run of white space one space), without the
// characters that could drive a terminal (safetext.Unsafe), and cut to
// SummaryMax runes, "…" marking a cut. It is "" without a report or a
// summary.
func (r *Report) SummaryLine() string {
	if r == nil {
		return ""
	}
	s := strings.Map(func(c rune) rune {
		if c == utf8.RuneError || safetext.Unsafe(c) {
			return ' '
		}
		return c
	}, r.Summary)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > SummaryMax {
		s = string([]rune(s)[:SummaryMax-1]) + "…"
	}
	return s
}
