package skills

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// Statuses of the health state file's "status".
const (
	HealthHealthy  = "healthy"
	HealthDegraded = "degraded"
	HealthCritical = "critical"
)

// healthState is the domain state file the skill writes.
type healthState struct {
	LastRun string `json:"last_run"`
	// Status is healthy (every endpoint up and fast), degraded (a warning)
	// or critical (a critical alert).
	Status         string `json:"status"`
	EndpointsTotal int    `json:"endpoints_total"`
	EndpointsUp    int    `json:"endpoints_up"`
	// ConsecutiveFailures is the longest run of failed checks among the
	// endpoints: the field chain conditions compare
	// ("consecutive_failures >= 3").
	ConsecutiveFailures int `json:"consecutive_failures"`
	// FailingEndpoints counts the endpoints that failed this run; Failing
	// names them.
	FailingEndpoints int                   `json:"failing_endpoints"`
	Failing          []string              `json:"failing"`
	SlowEndpoints    int                   `json:"slow_endpoints"`
	Endpoints        []healthEndpointState `json:"endpoints"`
	Alerts           []state.Alert         `json:"alerts"`
	Metrics          map[string]float64    `json:"metrics"`
}

// healthEndpointState is one endpoint's entry; the next run reads its
// consecutive_failures, severity, slow flag and latency window back.
type healthEndpointState struct {
	Name       string  `json:"name"`
	URL        string  `json:"url"`
	Method     string  `json:"method"`
	Up         bool    `json:"up"`
	StatusCode int     `json:"status_code,omitempty"`
	LatencyMS  float64 `json:"latency_ms,omitempty"`
	Slow       bool    `json:"slow"`
	Error      string  `json:"error,omitempty"`
	// Severity is the alert the endpoint raised: "", "warning" or
	// "critical".
	Severity            string    `json:"severity,omitempty"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	RecentLatencyMS     []float64 `json:"recent_latency_ms"`
	P95MS               float64   `json:"p95_ms,omitempty"`
}

// healthReport is what the skill writes to $OODA_REPORT (SPEC-NOTES §3).
type healthReport struct {
	HadOutput *bool          `json:"had_output"`
	Summary   string         `json:"summary"`
	Alerts    []state.Alert  `json:"alerts,omitempty"`
	CostUSD   float64        `json:"cost_usd"`
	Vars      map[string]any `json:"vars,omitempty"`
}

// healthPrev is what the previous run recorded of one endpoint.
type healthPrev struct {
	Up                  bool
	Slow                bool
	Severity            string
	ConsecutiveFailures int
	Recent              []float64
}

// healthReadPrevious reads the endpoints of the previous state file by name. The
// file is only the skill's own output, but it lives in the project and may
// have been edited: every value is checked and bounded, and an unreadable
// file is a fresh start, said in the run log.
func healthReadPrevious(store *state.Store, path string, log io.Writer) map[string]healthPrev {
	out := map[string]healthPrev{}
	if path == "" {
		return out
	}
	ds, err := store.ReadDomainState(path)
	if err != nil {
		healthLogf(log, "health: previous state not read (%s); counting failures from zero\n", healthClean(err.Error()))
		return out
	}
	raw, ok := ds.Raw["endpoints"]
	if !ok {
		return out
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		healthLogf(log, "health: previous state's /endpoints is not an array; counting failures from zero\n")
		return out
	}
	for i, it := range items {
		if i >= MaxHealthEndpoints*2 {
			break
		}
		var e struct {
			Name     string            `json:"name"`
			Up       bool              `json:"up"`
			Slow     bool              `json:"slow"`
			Severity string            `json:"severity"`
			Consec   float64           `json:"consecutive_failures"`
			Recent   []json.RawMessage `json:"recent_latency_ms"`
		}
		if json.Unmarshal(it, &e) != nil || e.Name == "" {
			continue
		}
		p := healthPrev{Up: e.Up, Slow: e.Slow, Severity: e.Severity}
		if e.Consec >= 0 && e.Consec <= 1e6 {
			p.ConsecutiveFailures = int(e.Consec)
		}
		for _, rv := range e.Recent {
			var v float64
			if json.Unmarshal(rv, &v) == nil && v >= 0 && v <= 1e7 {
				p.Recent = append(p.Recent, v)
			}
		}
		if n := len(p.Recent); n > healthWindow {
			p.Recent = p.Recent[n-healthWindow:]
		}
		out[e.Name] = p
	}
	return out
}

// healthEvaluate turns the checks and the previous run into the new state
// file and the report. The report has output only when something changed
// since the previous run: an endpoint failed or recovered, its alert grew
// critical, it became slow or fast again, or its latency jumped.
func healthEvaluate(results []healthResult, prev map[string]healthPrev, now time.Time) (healthState, healthReport) {
	st := healthState{
		LastRun: state.FormatTime(now), EndpointsTotal: len(results),
		Failing: []string{}, Endpoints: []healthEndpointState{}, Alerts: []state.Alert{},
		Metrics: map[string]float64{},
	}
	var problems, changes, events []string
	var newAlerts []state.Alert
	slowest, slowestName := -1.0, ""
	for _, res := range results {
		ep := res.ep
		p, known := prev[ep.Name]
		es := healthEndpointState{Name: ep.Name, URL: ep.Display, Method: ep.Method, Up: res.ok, StatusCode: res.statusCode, LatencyMS: res.latencyMS, Slow: res.ok && res.slow}
		es.RecentLatencyMS = append([]float64{}, p.Recent...)
		if res.answered {
			es.RecentLatencyMS = append(es.RecentLatencyMS, res.latencyMS)
			if n := len(es.RecentLatencyMS); n > healthWindow {
				es.RecentLatencyMS = es.RecentLatencyMS[n-healthWindow:]
			}
			st.Metrics["latency_ms."+ep.Name] = res.latencyMS
		}
		if len(es.RecentLatencyMS) > 0 {
			es.P95MS = healthP95(es.RecentLatencyMS)
			st.Metrics["p95_ms."+ep.Name] = es.P95MS
		}
		var alert *state.Alert
		if res.ok {
			st.EndpointsUp++
			if res.latencyMS > slowest {
				slowest, slowestName = res.latencyMS, ep.Name
			}
			if es.Slow {
				st.SlowEndpoints++
				msg := fmt.Sprintf("%s slow: %s (threshold %s)", ep.Name, healthFormatMS(res.latencyMS), healthFormatMS(ep.SlowMS))
				alert = &state.Alert{Severity: "warning", ID: "health_slow_" + ep.Name, Message: msg}
				problems = append(problems, fmt.Sprintf("%s slow (%s)", ep.Name, healthFormatMS(res.latencyMS)))
			}
			if known && !p.Up {
				changes = append(changes, ep.Name+" recovered")
				events = append(events, "health_recovered")
			} else if es.Slow && !known {
				changes = append(changes, ep.Name+" slow at its first check")
			} else if es.Slow && !p.Slow {
				changes = append(changes, ep.Name+" became slow")
			} else if !es.Slow && known && p.Slow {
				changes = append(changes, ep.Name+" fast again")
			} else if healthJump(p.Recent, res.latencyMS) {
				changes = append(changes, fmt.Sprintf("%s latency jumped to %s (p95 was %s)", ep.Name, healthFormatMS(res.latencyMS), healthFormatMS(healthP95(p.Recent))))
			}
		} else {
			es.Error = res.problem
			es.ConsecutiveFailures = 1
			if known && !p.Up {
				es.ConsecutiveFailures = min(p.ConsecutiveFailures+1, 1_000_000)
			}
			st.Failing = append(st.Failing, ep.Name)
			sev := "warning"
			if res.refused || es.ConsecutiveFailures >= ep.CriticalAfter {
				sev = "critical"
			}
			msg := fmt.Sprintf("%s down: %s", ep.Name, res.problem)
			if es.ConsecutiveFailures > 1 {
				msg += fmt.Sprintf(" (%d checks in a row)", es.ConsecutiveFailures)
			}
			alert = &state.Alert{Severity: sev, ID: "health_down_" + ep.Name, Message: msg}
			problems = append(problems, fmt.Sprintf("%s down (%s)", ep.Name, res.problem))
			switch {
			case !known || p.Up:
				if known {
					changes = append(changes, ep.Name+" went down")
				} else {
					changes = append(changes, ep.Name+" down at its first check")
				}
				events = append(events, "health_failure")
			case sev == "critical" && p.Severity != "critical":
				changes = append(changes, fmt.Sprintf("%s critical after %d failed checks", ep.Name, es.ConsecutiveFailures))
			}
		}
		st.ConsecutiveFailures = max(st.ConsecutiveFailures, es.ConsecutiveFailures)
		if alert != nil {
			es.Severity = alert.Severity
			st.Alerts = append(st.Alerts, *alert)
			if !known || p.Severity != alert.Severity {
				newAlerts = append(newAlerts, *alert)
			}
		}
		st.Endpoints = append(st.Endpoints, es)
	}
	st.FailingEndpoints = len(st.Failing)
	st.Metrics["endpoints_up"] = float64(st.EndpointsUp)
	st.Metrics["endpoints_down"] = float64(st.FailingEndpoints)
	st.Metrics["consecutive_failures"] = float64(st.ConsecutiveFailures)
	st.Status = HealthHealthy
	for _, a := range st.Alerts {
		if a.Severity == "critical" {
			st.Status = HealthCritical
			break
		}
		st.Status = HealthDegraded
	}

	var summary string
	if len(problems) == 0 {
		summary = fmt.Sprintf("all %d endpoints up", st.EndpointsTotal)
		if st.EndpointsTotal == 1 {
			summary = "the endpoint is up"
		}
		if slowestName != "" {
			summary += fmt.Sprintf("; slowest %s %s", slowestName, healthFormatMS(slowest))
		}
	} else {
		summary = fmt.Sprintf("%d of %d endpoints up; %s", st.EndpointsUp, st.EndpointsTotal, healthList(problems, "; "))
	}
	if len(changes) > 0 {
		summary += ". Since the last check: " + healthList(changes, ", ")
	}
	had := len(changes) > 0
	sort.Strings(events)
	vars := map[string]any{
		"status": st.Status, "consecutive_failures": st.ConsecutiveFailures,
		"failing_endpoints": st.FailingEndpoints, "endpoints_up": st.EndpointsUp,
		"endpoints_total": st.EndpointsTotal,
	}
	if events = healthCompact(events); len(events) > 0 {
		vars["events"] = events
	}
	return st, healthReport{HadOutput: &had, Summary: summary, Alerts: newAlerts, CostUSD: 0, Vars: vars}
}

// healthJump reports a latency at least twice the recent p95 and 200 ms above
// it, once the window holds 5 answers: a change worth a look even below
// the slow threshold.
func healthJump(recent []float64, ms float64) bool {
	if len(recent) < 5 {
		return false
	}
	p := healthP95(recent)
	return ms >= 2*p && ms-p >= 200
}

// healthP95 is the nearest-rank 95th percentile.
func healthP95(vals []float64) float64 {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	i := int(math.Ceil(0.95*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// healthList joins the first items of a list for the summary, naming how
// many were left out, so the summary stays within a line.
func healthList(items []string, sep string) string {
	const show = 3
	if len(items) <= show {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:show], sep) + fmt.Sprintf("%sand %d more", sep, len(items)-show)
}

func healthCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
