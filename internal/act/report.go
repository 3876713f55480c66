package act

import (
	"bytes"
	"encoding/json"
	"fmt"
)

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
	if r.CostUSD != nil && *r.CostUSD < 0 {
		return nil, fmt.Errorf("skill report: cost_usd must not be negative")
	}
	return &r, nil
}

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
// extracted, a PR created, new alerts, or the domain state changed.
func (r *Report) HadOutputDefault(stateChanged bool) bool {
	if r == nil {
		return stateChanged
	}
	if r.HadOutput != nil {
		return *r.HadOutput
	}
	return len(r.Actions) > 0 || r.CreatedPR() || len(r.Alerts) > 0 || stateChanged
}
