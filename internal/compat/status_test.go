package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// status is a re-statement, in Go, of what the original's /ooda-status
// dashboard reads from the state files (its Step 1 and Step 2, and the
// "New columns and rows" notes). Each field is read the way that reader
// describes, from the key it names: nothing here knows ooda's own types.
type status struct {
	cycleCount      int
	lastCycle       string
	saturation      int
	saturationPct   float64            // saturation / config saturation.halt_threshold
	confidence      map[string]float64 // confidence.json, value per domain
	pending         int                // action_queue: items with status "pending"
	proposed        int                // action_queue: items with status "proposed"
	topAction       string             // highest rice_score
	oldestDays      float64            // age of the oldest pending action (extracted_at), in days
	hasOldest       bool
	totalCycles     int // metrics.json counters.total_cycles
	velocity        float64
	hasVelocity     bool
	costToday       float64 // cost_ledger total_estimated_usd when date == today
	costDateOK      bool
	costLimit       float64 // config cost.daily_limit_usd
	costRate        float64 // $/h: today's spend / hours since midnight UTC
	alerts          int     // alerts across the domain state files
	rows            map[string]row
	episodes        int
	lastEpisodeWeek string
	principles      int
	principlesHigh  int
	lensDomains     int
	chainLast10     int // decision_log[-10:] with a non-empty chain_executed
	interventions   int
	gapsUnaddressed int // gaps with resolved != true
	gapsLoopBreak   int // of those, type == "learning_loop_break"
	reflections     int
	lastLesson      string
	qualityMean     float64
	outcomes        int
}

// row is one domain's dashboard row. A value the reader cannot find is
// the dashboard's "—" or "?": has* false, symbol "?".
type row struct {
	score    float64
	hasScore bool
	conf     float64
	hasConf  bool
	trend    string // ↑ ↓ →
	last     string // Xm, Xh, Xd or —
	symbol   string // ✓ ⚠ ✗ ?
}

// ago is the dashboard's time formatting.
func ago(d time.Duration) string {
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

func readStatus(t *testing.T, dir string, now time.Time) status {
	t.Helper()
	var s status
	today := now.UTC().Format("2006-01-02")
	obj := func(rel string) map[string]json.RawMessage {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			t.Errorf("[WARN] Corrupt state file: %s", rel)
			return nil
		}
		return m
	}
	num := func(raw json.RawMessage) float64 {
		var f float64
		_ = json.Unmarshal(raw, &f)
		return f
	}
	// null is the original's "no value", never 0.
	isNum := func(raw json.RawMessage) bool {
		var f float64
		return raw != nil && compact(raw) != "null" && json.Unmarshal(raw, &f) == nil
	}
	arr := func(raw json.RawMessage) []map[string]json.RawMessage {
		var l []map[string]json.RawMessage
		_ = json.Unmarshal(raw, &l)
		return l
	}
	sub := func(m map[string]json.RawMessage, key string) map[string]json.RawMessage {
		var o map[string]json.RawMessage
		_ = json.Unmarshal(m[key], &o)
		return o
	}
	when := func(raw json.RawMessage) (time.Time, bool) {
		ts, err := time.Parse(time.RFC3339, str(raw))
		return ts, err == nil
	}

	cfg := obj("config.json")
	st := obj(evolve + "/state.json")
	s.cycleCount = int(num(st["cycle_count"]))
	s.lastCycle = str(st["last_cycle"])
	s.saturation = int(num(st["consecutive_observe_only_cycles"]))
	// The bar runs toward saturation.halt_threshold, 15 when unset (the
	// original's 2-A2 default).
	halt := 15.0
	if sat := sub(cfg, "saturation"); isNum(sat["halt_threshold"]) {
		halt = num(sat["halt_threshold"])
	}
	s.saturationPct = float64(s.saturation) / halt
	fullLog := arr(st["decision_log"])
	log := fullLog
	if len(log) > 10 {
		log = log[len(log)-10:]
	}
	for _, e := range log {
		var chain []string
		if json.Unmarshal(e["chain_executed"], &chain) == nil && len(chain) > 0 {
			s.chainLast10++
		}
	}

	// A value per domain: flat ({"d": 0.9}) or the state design's
	// {"domains": {"d": {"score": 0.9}}}.
	s.confidence = map[string]float64{}
	conf := obj(evolve + "/confidence.json")
	if doms, ok := conf["domains"]; ok {
		var m map[string]map[string]json.RawMessage
		_ = json.Unmarshal(doms, &m)
		for k, v := range m {
			if isNum(v["score"]) {
				s.confidence[k] = num(v["score"])
			}
		}
	} else {
		for k, v := range conf {
			var f float64
			if json.Unmarshal(v, &f) == nil {
				s.confidence[k] = f
			}
		}
	}

	// Trend: the winner's confidence is all decision_log keeps, so a
	// domain's trend compares its two most recent appearances as
	// selected_domain, by confidence_at_decision (the state design's
	// name; the evolve spec's 6-A names it confidence, read when the
	// former is absent). Fewer than two: →.
	appear := map[string][]float64{}
	for _, e := range fullLog {
		d := str(e["selected_domain"])
		c := e["confidence_at_decision"]
		if !isNum(c) {
			c = e["confidence"]
		}
		if d != "" && isNum(c) {
			appear[d] = append(appear[d], num(c))
		}
	}

	// One row per enabled domain; a domain without a status is active.
	s.rows = map[string]row{}
	for name, raw := range sub(cfg, "domains") {
		var d map[string]json.RawMessage
		_ = json.Unmarshal(raw, &d)
		if use := str(d["status"]); use == "disabled" || use == "available" {
			continue
		}
		r := row{trend: "→", last: "—", symbol: "?"}
		if a := appear[name]; len(a) >= 2 {
			switch delta := a[len(a)-1] - a[len(a)-2]; {
			case delta > 1e-9:
				r.trend = "↑"
			case delta < -1e-9:
				r.trend = "↓"
			}
		}
		r.conf, r.hasConf = s.confidence[name]
		if file := str(d["state_file"]); file != "" {
			ds := obj(file)
			if isNum(ds["score"]) {
				r.score, r.hasScore = num(ds["score"]), true
			}
			if ts, ok := when(ds["last_run"]); ok {
				r.last = ago(now.Sub(ts))
				switch str(ds["status"]) {
				case "healthy":
					r.symbol = "✓"
				case "degraded":
					r.symbol = "⚠"
				case "critical", "error":
					r.symbol = "✗"
				}
			}
			s.alerts += len(arr(ds["alerts"]))
		}
		s.rows[name] = r
	}

	q := obj(evolve + "/action_queue.json")
	best := -1.0
	var oldest time.Time
	for _, list := range []string{"pending", "in_progress", "completed"} {
		for _, a := range arr(q[list]) {
			switch str(a["status"]) {
			case "pending":
				s.pending++
				if ts, ok := when(a["extracted_at"]); ok && (oldest.IsZero() || ts.Before(oldest)) {
					oldest = ts
				}
			case "proposed":
				s.proposed++
			}
			if list == "pending" && num(a["rice_score"]) > best {
				best, s.topAction = num(a["rice_score"]), str(a["title"])
			}
		}
	}
	if !oldest.IsZero() {
		s.oldestDays, s.hasOldest = now.Sub(oldest).Hours()/24, true
	}

	// Vel: total_cycles over the days since the first cycle. The
	// dashboard does not say where the first cycle's time is; the one
	// place the original writes it is metrics.json first_cycle_at (6-C5:
	// "Set first_cycle_at if null"), so that is read.
	metrics := obj(evolve + "/metrics.json")
	counters := sub(metrics, "counters")
	s.totalCycles = int(num(counters["total_cycles"]))
	if first, ok := when(metrics["first_cycle_at"]); ok && now.After(first) {
		s.velocity, s.hasVelocity = float64(s.totalCycles)/(now.Sub(first).Hours()/24), true
	}

	l := obj(evolve + "/cost_ledger.json")
	if str(l["date"]) == today {
		s.costDateOK = true
		s.costToday = num(l["total_estimated_usd"])
	}
	s.costLimit = num(sub(cfg, "cost")["daily_limit_usd"])
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if h := now.Sub(midnight).Hours(); h > 0 {
		s.costRate = s.costToday / h
	}

	eps := arr(obj(evolve + "/episodes.json")["episodes"])
	s.episodes = len(eps)
	if len(eps) > 0 {
		last := eps[len(eps)-1]
		s.lastEpisodeWeek = strings.TrimPrefix(str(last["id"]), "EP-")
		if s.lastEpisodeWeek == "" {
			s.lastEpisodeWeek = str(last["week_year"])
		}
	}
	for _, p := range arr(obj(evolve + "/principles.json")["principles"]) {
		s.principles++
		if num(p["confidence"]) >= 0.5 {
			s.principlesHigh++
		}
	}
	lens, _ := filepath.Glob(filepath.Join(dir, "agent/state/*/lens.json"))
	s.lensDomains = len(lens)
	s.interventions = len(arr(obj(evolve + "/memos.json")["interventions"]))
	for _, g := range arr(obj(evolve + "/skill_gaps.json")["gaps"]) {
		if compact(g["resolved"]) != "true" {
			s.gapsUnaddressed++
			if str(g["type"]) == "learning_loop_break" {
				s.gapsLoopBreak++
			}
		}
	}
	refl := arr(obj(evolve + "/reflections.json")["reflections"])
	s.reflections = len(refl)
	if len(refl) > 0 {
		s.lastLesson = str(refl[len(refl)-1]["lesson"])
	}
	outs := arr(obj(evolve + "/outcomes.json")["entries"])
	for _, o := range outs {
		s.qualityMean += num(o["quality_multiplier"])
	}
	if len(outs) > 0 {
		s.qualityMean /= float64(len(outs))
	}
	s.outcomes = len(outs)
	return s
}

// The report each cycle's skill writes: one action and a cost.
const reportingSkill = `#!/bin/sh
echo "$OODA_DOMAIN" >> ran.txt
printf '{"last_run": "%s", "status": "healthy", "alerts": []}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
printf '{"had_output": true, "summary": "ok", "cost_usd": 0.03, "actions": [{"title": "Follow up on %s", "reach": 2, "impact": 1, "confidence": 1, "effort": 1}]}\n' "$OODA_DOMAIN" > "$OODA_REPORT"
`

// statusProject runs four real cycles with ooda: the third finds the
// ledger entry of the second gone (as after a crash between the run and
// its record), so 6-C8 backfills it and records its loop-break gap.
func statusProject(t *testing.T) (string, []time.Time) {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, "testdata/config.json", dir+"/config.json")
	writeFile(t, dir+"/skill.sh", []byte(reportingSkill))
	var times []time.Time
	for i := 0; i < 4; i++ {
		now := t0.Add(time.Duration(i) * time.Hour)
		if i == 2 {
			// Cycle 2's entry goes missing; cycle 1's stays.
			first := load(t, dir, evolve+"/cost_ledger.json").list("entries")[0]
			writeFile(t, filepath.Join(dir, evolve, "cost_ledger.json"), []byte(`{"schema_version": "1.0.0", "date": "2026-04-14", "entries": [`+
				string(first)+`], "total_estimated_usd": `+string(field(first, "estimated_usd"))+`}`))
		}
		completed(t, dir, now, nil)
		times = append(times, now)
	}
	return dir, times
}

// What ooda writes reads back through the status reader with the numbers
// ooda itself acted on.
func TestCompat_StatusReaderSeesConsistentNumbers(t *testing.T) {
	dir, times := statusProject(t)
	last := times[len(times)-1]
	s := readStatus(t, dir, last)

	if s.cycleCount != 4 || s.totalCycles != 4 {
		t.Errorf("cycle_count %d, metrics counters.total_cycles %d; want 4 and 4", s.cycleCount, s.totalCycles)
	}
	if s.lastCycle != last.Format(time.RFC3339) {
		t.Errorf("last_cycle = %q, want %s", s.lastCycle, last.Format(time.RFC3339))
	}
	if s.saturation != 0 {
		t.Errorf("consecutive_observe_only_cycles = %d after four acting cycles", s.saturation)
	}
	for _, d := range []string{"service_health", "test_coverage", "backlog"} {
		if c, ok := s.confidence[d]; !ok || c < 0 || c > 1 {
			t.Errorf("confidence.json %s = %v (present %v): the dashboard reads a number in [0,1] per domain", d, c, ok)
		}
	}
	if s.lensDomains != 3 {
		t.Errorf("lens.json files = %d, want one per active domain (3)", s.lensDomains)
	}
	if s.outcomes != 4 {
		t.Errorf("outcomes.json entries = %d, want 4", s.outcomes)
	}

	// The dashboard's counts against ooda's own records.
	ran := strings.Split(strings.TrimSpace(string(readFile(t, dir, "ran.txt"))), "\n")
	if len(ran) != 4 {
		t.Fatalf("skills ran %d times, want 4", len(ran))
	}
	q := load(t, dir, evolve+"/action_queue.json")
	if s.pending != len(q.list("pending")) || s.pending == 0 {
		t.Errorf("dashboard pending = %d, action_queue.json pending[] holds %d: every pending item carries status \"pending\"",
			s.pending, len(q.list("pending")))
	}
	if s.topAction == "" {
		t.Errorf("no top action: rice_score missing from pending items")
	}
	ledger := load(t, dir, evolve+"/cost_ledger.json")
	var sum float64
	for _, e := range ledger.list("entries") {
		var f float64
		_ = json.Unmarshal(field(e, "estimated_usd"), &f)
		sum += f
	}
	if !s.costDateOK || s.costToday < sum-1e-9 || s.costToday > sum+1e-9 {
		t.Errorf("cost today = %v (date ok %v), the entries sum to %v", s.costToday, s.costDateOK, sum)
	}
	if n := len(ledger.list("entries")); n != 4 {
		t.Errorf("ledger entries = %d, want one per cycle (4, the second backfilled)", n)
	}
	gaps := load(t, dir, evolve+"/skill_gaps.json").list("gaps")
	open := 0
	for _, g := range gaps {
		if compact(field(g, "resolved")) != "true" {
			open++
		}
	}
	if s.gapsUnaddressed != open || open == 0 {
		t.Errorf("dashboard unaddressed gaps = %d, skill_gaps.json has %d unresolved (want ≥ 1: the 6-C8 gap)", s.gapsUnaddressed, open)
	}
	entries := load(t, dir, evolve+"/state.json").list("decision_log")
	executed := 0
	for _, e := range entries {
		if str(field(e, "result")) == "success" {
			executed++
		}
	}
	if executed != 4 {
		t.Errorf("decision_log successes = %d, want 4", executed)
	}
	memos := load(t, dir, evolve+"/memos.json")
	if s.interventions != len(memos.list("interventions")) {
		t.Errorf("interventions = %d", s.interventions)
	}
	if s.qualityMean <= 0 || s.qualityMean > 1 {
		t.Errorf("Loop Value Score = %v, want in (0,1]", s.qualityMean)
	}
}

// The reads below are ones the original's status reader makes on fields
// ooda writes in the original's shape.

// Gaps: the reader breaks out type == "learning_loop_break" (6-C8's
// cost-ledger auto-patch), whose id is gap-cost-ledger-autopatch-<cycle>.
func TestCompat_StatusLoopBreakGapCountedByType(t *testing.T) {
	dir, times := statusProject(t)
	s := readStatus(t, dir, times[len(times)-1])
	if s.gapsLoopBreak != 1 {
		t.Errorf("learning_loop_break gaps by type = %d, want 1", s.gapsLoopBreak)
	}
	for _, g := range load(t, dir, evolve+"/skill_gaps.json").list("gaps") {
		if str(field(g, "type")) == "learning_loop_break" && !strings.HasPrefix(str(field(g, "id")), "gap-cost-ledger-autopatch-") {
			t.Errorf("loop-break gap id = %s", field(g, "id"))
		}
	}
}

// Gap entries: the original's readers and its state design expect the
// 6-C8 / STATE_DESIGN fields on every gap.
func TestCompat_StatusGapEntriesCarryTheOriginalsFields(t *testing.T) {
	dir, _ := statusProject(t)
	want := []string{"id", "description", "detected_at", "detected_in_cycle", "ooda_phase", "frequency", "last_seen_cycle",
		"related_domain", "proposed_skill", "resolved", "resolved_at", "resolution", "type"}
	for i, g := range load(t, dir, evolve+"/skill_gaps.json").list("gaps") {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(g, &m)
		var missing []string
		for _, k := range want {
			if _, ok := m[k]; !ok {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("gaps[%d] lacks %v: %s", i, missing, compact(g))
		}
	}
}

// Trend and --share: the reader takes the winner's confidence and score
// from decision_log entries; the state design names them
// confidence_at_decision and scores (the full score table).
func TestCompat_StatusDecisionLogConfidenceAtDecision(t *testing.T) {
	dir, _ := statusProject(t)
	for i, e := range load(t, dir, evolve+"/state.json").list("decision_log") {
		for _, k := range []string{"confidence_at_decision", "scores"} {
			if field(e, k) == nil {
				t.Errorf("decision_log[%d] lacks %s: %s", i, k, compact(e))
			}
		}
	}
}
