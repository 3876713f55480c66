package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// Hostile numbers, write failures, bad values in state and huge reports,
// performed through whole cycles with real command skills: none may lose a
// cycle whose skill ran, or make a cycle run unbounded.

// hardProject is one domain, "only", whose skill is skill.sh; safety and
// top are spliced into the safety object and the top level of config.json.
func hardProject(t *testing.T, safety, top, script string, files map[string]string) string {
	t.Helper()
	cfg := `{
  "domains": {"only": {"weight": 1, "primary_skill": "/only", "fallback": true}},
  "skills": {"/only": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/only"], "first_cycle_observe_only": false` + safety + `}` + top + `
}`
	all := map[string]string{"skill.sh": script}
	for k, v := range files {
		all[k] = v
	}
	return project(t, cfg, all)
}

// runOpts runs one cycle; an error is returned, not fatal.
func runOpts(t *testing.T, ctx context.Context, dir string, now time.Time, cfg *config.Config) (Result, string, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(ctx, Options{Project: dir, Config: cfg, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: &out})
	return res, out.String(), err
}

// loadConfig reads the project's config.json the way the CLI does.
func loadConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg, err := config.Load(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// assertStateParses checks every evolve file still parses and the lock is
// gone: whatever the cycle met, what it left behind is readable.
func assertStateParses(t *testing.T, dir string) {
	t.Helper()
	evolve := filepath.Join(dir, "agent/state/evolve")
	names, _ := filepath.Glob(filepath.Join(evolve, "*.json"))
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // not a regular file: a test planted it
		}
		if !json.Valid(b) {
			t.Errorf("%s does not parse:\n%s", filepath.Base(p), b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(evolve, "cycle_log.jsonl")); err == nil {
		for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !json.Valid([]byte(l)) {
				t.Errorf("cycle_log.jsonl line %d does not parse: %s", i+1, l)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(evolve, ".lock")); err == nil {
		t.Errorf("lock not released")
	}
}

func ledgerOf(t *testing.T, dir string) state.CostLedger {
	t.Helper()
	var l state.CostLedger
	evolveJSON(t, dir, "cost_ledger.json", &l)
	return l
}

func assertFiniteLedger(t *testing.T, l state.CostLedger) {
	t.Helper()
	if math.IsInf(l.TotalEstimatedUSD, 0) || math.IsNaN(l.TotalEstimatedUSD) {
		t.Errorf("ledger total %v", l.TotalEstimatedUSD)
	}
	for _, e := range l.Entries {
		if math.IsInf(e.EstimatedUSD, 0) || math.IsNaN(e.EstimatedUSD) {
			t.Errorf("ledger entry %+v", e)
		}
	}
}

// A report claiming $1e303 twice used to overflow the day's total to +Inf:
// Step 6 could not encode the ledger, nothing was recorded, the cap never
// tripped and the skill ran again every cycle. The report is now refused
// (a report_invalid gap naming cost_usd), the run costs its contract's
// estimate, and both cycles are recorded.
func TestStep6_ACostOf1e303IsRefusedAndEveryCycleRecorded(t *testing.T) {
	dir := hardProject(t, "", `, "cost": {"daily_limit_usd": 5}`,
		skillScript+`printf '{"cost_usd": 1e303, "had_output": true}' > "$OODA_REPORT"`+"\n", nil)
	for i := 1; i <= 2; i++ {
		res, out := mustComplete(t, dir, t0.Add(time.Duration(i)*time.Hour))
		if res.Cycle != i || res.Result != "success" || !strings.Contains(out, fmt.Sprintf("[WARN] /only: ignoring its report agent/state/evolve/runs/%d-only.report.json: skill report: cost_usd 1e+303 is out of range (0 to 1e+06)", i)) {
			t.Fatalf("cycle %d: %+v\n%s", i, res, out)
		}
	}
	st := loadState(t, dir)
	if st.CycleCount != 2 || st.CycleInProgress || len(st.DecisionLog) != 2 {
		t.Fatalf("state = %+v", st)
	}
	l := ledgerOf(t, dir)
	assertFiniteLedger(t, l)
	if len(l.Entries) != 2 || l.TotalEstimatedUSD != 0.04 {
		t.Errorf("ledger = %+v, want two $0.02 estimates", l)
	}
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Name != "report_invalid_only" || gaps.Gaps[0].Frequency != 2 || !strings.Contains(gaps.Gaps[0].Detail, "cost_usd") {
		t.Errorf("gaps = %+v", gaps.Gaps)
	}
	assertStateParses(t, dir)
}

// A day's total already at the float limit (a damaged ledger) plus the
// largest cost a report may claim must still be written, finite, and trip
// the cap: never rounded to +Inf, never reset to 0.
func TestStep6C5b_ATotalAtTheFloatLimitStillTripsTheCap(t *testing.T) {
	ledger := fmt.Sprintf(`{"schema_version": "1.0.0", "date": "2026-04-14", "entries": [], "total_estimated_usd": %g}`, 1.7e308)
	dir := hardProject(t, "", `, "cost": {"daily_limit_usd": 5}`,
		skillScript+`printf '{"cost_usd": 1000000}' > "$OODA_REPORT"`+"\n",
		map[string]string{"agent/state/evolve/cost_ledger.json": ledger})
	res, out, err := runOpts(t, context.Background(), dir, t0, nil)
	if err != nil || res.Cycle != 1 || !res.HaltCreated || !strings.Contains(out, "[HALT] Daily cost cap reached") {
		t.Fatalf("res %+v, err %v\n%s", res, err, out)
	}
	if st := loadState(t, dir); st.CycleCount != 1 || st.CycleInProgress {
		t.Errorf("cycle not recorded: %+v", st)
	}
	l := ledgerOf(t, dir)
	assertFiniteLedger(t, l)
	if l.TotalEstimatedUSD < 1e6 || strings.Contains(out, "written as 0") {
		t.Errorf("the day's spend must stay above the cap, not reset: total %v\n%s", l.TotalEstimatedUSD, out)
	}
	assertStateParses(t, dir)
}

// A weight of 1e308 (a Config built in code, past validation) scores +Inf:
// the record used to fail on "json: unsupported value: +Inf" every cycle.
// Each non-finite value is now written as 0 with a warning naming the file
// and the field, and both cycles are recorded.
func TestStep6_AnInfiniteScoreIsWrittenAsZeroAndTheCycleRecorded(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, nil)
	cfg := loadConfig(t, dir)
	cfg.Domains[0].Weight = 1e308
	for i := 1; i <= 2; i++ {
		res, out, err := runOpts(t, context.Background(), dir, t0.Add(time.Duration(i)*time.Hour), cfg)
		if err != nil || res.Status != StatusCompleted || res.Cycle != i {
			t.Fatalf("cycle %d: %+v, %v\n%s", i, res, err, out)
		}
		want := fmt.Sprintf("[WARN] state.json: decision_log[%d].score was +Inf, not a number a state file can hold; written as 0.", i-1)
		if !strings.Contains(out, want) {
			t.Errorf("cycle %d: no warning %q:\n%s", i, want, out)
		}
	}
	st := loadState(t, dir)
	if st.CycleCount != 2 || len(st.DecisionLog) != 2 || *st.DecisionLog[1].Score != 0 {
		t.Fatalf("state = %+v", st)
	}
	assertFiniteLedger(t, ledgerOf(t, dir))
	assertStateParses(t, dir)
}

// A Step 6 write that fails (here the skill replaced metrics.json with a
// directory) must not lose the cycle: every other file is written, the
// cycle is recorded as an error naming the file, a gap is kept, and the
// silent-failure breaker counts it even though the skill itself succeeded,
// so a record that keeps failing ends in the HALT file.
func TestStep6_AFailedWriteIsRecordedAsAnErrorAndTripsTheBreaker(t *testing.T) {
	sabotage := skillScript + `rm -rf agent/state/evolve/metrics.json; mkdir -p agent/state/evolve/metrics.json/x` + "\n"
	dir := hardProject(t, `, "max_silent_failures": 2`, "", sabotage, nil)
	metrics := filepath.Join(dir, "agent/state/evolve/metrics.json")
	for i := 1; i <= 2; i++ {
		if err := os.RemoveAll(metrics); err != nil {
			t.Fatal(err)
		}
		res, out, err := runOpts(t, context.Background(), dir, t0.Add(time.Duration(i)*time.Hour), nil)
		if err == nil || !strings.Contains(err.Error(), "metrics.json") {
			t.Fatalf("cycle %d: the failed write must be reported: %v\n%s", i, err, out)
		}
		if res.Cycle != i || res.Result != "error" || res.ResultType != "error" || res.HaltCreated != (i == 2) || res.ExitCode() == 0 {
			t.Fatalf("cycle %d: %+v\n%s", i, res, out)
		}
		st := loadState(t, dir)
		e := st.DecisionLog[len(st.DecisionLog)-1]
		if st.CycleCount != i || st.CycleInProgress || st.ConsecutiveSilentFailures != i || e.Cycle != i || e.Result != "error" ||
			e.ResultType != "error" || !strings.Contains(e.Error, "metrics.json") {
			t.Fatalf("cycle %d: state = %+v, entry %+v", i, st, e)
		}
		if line := lastCycleLogLine(t, dir); line["cycle_id"] != float64(i) || line["result"] != "error" || line["result_type"] != "error" {
			t.Errorf("cycle %d: cycle log line %v", i, line)
		}
		l := ledgerOf(t, dir)
		if n := len(l.Entries); n != i || l.Entries[n-1].CycleID != i {
			t.Errorf("cycle %d: cost ledger %+v", i, l)
		}
		if _, err := os.Stat(filepath.Join(dir, "agent/state/evolve/.lock")); err == nil {
			t.Errorf("cycle %d: lock not released", i)
		}
	}
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Name != "record_write_failed" || gaps.Gaps[0].Frequency != 2 {
		t.Errorf("gaps = %+v", gaps.Gaps)
	}
	halt, err := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if err != nil || !strings.HasPrefix(string(halt), "2 consecutive cycles failed; the last one could not write its record (step 6: metrics.json:") {
		t.Errorf("HALT = %q, %v", halt, err)
	}
}

// A last_cycle far in the future (clock skew, an edit) skipped every cycle
// with "Too soon. 44670 min". More than the interval ahead, it is ignored
// with a warning; within the interval, the wait printed is at most the
// interval.
func TestStep0D_AFutureLastCycleIsClockSkew(t *testing.T) {
	far := state.FormatTime(t0.Add(44670 * time.Minute))
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json": `{"cycle_count": 3, "last_cycle": "` + far + `"}`})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 4 || !strings.Contains(out, "[WARN] state.json: last_cycle "+far+" is 744h30m0s in the future, more than min_cycle_interval_minutes ahead (clock skew?); running without waiting.") {
		t.Fatalf("%+v\n%s", res, out)
	}

	near := state.FormatTime(t0.Add(2*time.Hour + 10*time.Minute))
	write(t, filepath.Join(dir, "agent/state/evolve/state.json"), `{"cycle_count": 4, "last_cycle": "`+near+`"}`)
	res, out, err := runOpts(t, context.Background(), dir, t0.Add(2*time.Hour), nil)
	if err != nil || res.Status != StatusSkipped || res.Reason != ReasonTooSoon || !strings.Contains(out, "[SKIP] Too soon. 30 min until next cycle.") ||
		!strings.Contains(out, "is 10m0s in the future (clock skew?); waiting at most min_cycle_interval_minutes.") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
}

// min_cycle_interval_minutes 1e308 (a Config built in code) overflowed the
// conversion to a duration and printed a negative wait.
func TestStep0D_AHugeIntervalPrintsAPositiveWait(t *testing.T) {
	last := state.FormatTime(t0.Add(-time.Hour))
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json": `{"cycle_count": 3, "last_cycle": "` + last + `"}`})
	cfg := loadConfig(t, dir)
	cfg.Safety.MinCycleIntervalMin = 1e308
	res, out, err := runOpts(t, context.Background(), dir, t0, cfg)
	m := regexp.MustCompile(`\[SKIP\] Too soon\. (-?\d+) min until next cycle\.`).FindStringSubmatch(out)
	if err != nil || res.Reason != ReasonTooSoon || m == nil {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if n, _ := strconv.Atoi(m[1]); n <= 0 {
		t.Errorf("wait printed as %d min", n)
	}
	// A last_cycle an hour ahead is within such an interval: still a wait,
	// not an overflow into "run now".
	write(t, filepath.Join(dir, "agent/state/evolve/state.json"), `{"cycle_count": 3, "last_cycle": "`+state.FormatTime(t0.Add(time.Hour))+`"}`)
	res, out, err = runOpts(t, context.Background(), dir, t0, cfg)
	if err != nil || res.Reason != ReasonTooSoon {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
}

// A negative cycle_count numbered the next cycle -4; it is #1.
func TestStep0_ANegativeCycleCountNumbersTheCycleOne(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json": `{"cycle_count": -5}`})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 1 {
		t.Fatalf("cycle %d\n%s", res.Cycle, out)
	}
	if st := loadState(t, dir); st.CycleCount != 1 || st.DecisionLog[0].Cycle != 1 {
		t.Errorf("state = %+v", st)
	}
}

// A negative total_estimated_usd must not let cycles run past the cap: the
// cap reads the larger of the total and today's entries.
func TestStep6C5b_ANegativeLedgerTotalDoesNotDefeatTheCap(t *testing.T) {
	ledger := `{"schema_version": "1.0.0", "date": "2026-04-14", "total_estimated_usd": -1000,
	  "entries": [{"cycle_id": 1, "timestamp": "2026-04-14T08:00:00Z", "skill": "/only", "chain": [], "estimated_usd": 4.99}]}`
	dir := hardProject(t, "", `, "cost": {"daily_limit_usd": 5}`, skillScript, map[string]string{
		"agent/state/evolve/state.json":       `{"cycle_count": 1, "last_cycle": "2026-04-14T08:00:00Z"}`,
		"agent/state/evolve/cost_ledger.json": ledger})
	res, out, err := runOpts(t, context.Background(), dir, t0, nil)
	if err != nil || res.Cycle != 2 || !res.HaltCreated || !strings.Contains(out, "[HALT] Daily cost cap reached: $5.01 spent today") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
}

// A cycle killed after metrics.json was written but before state.json is
// recovered under the same number; total_cycles (182 against a
// cycle_count of 162 after many such kills) follows the cycle number.
func TestStep0C_MetricsCountersAreReconciledAfterACrash(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json":   `{"cycle_count": 162, "last_cycle": "2026-04-13T09:00:00Z", "cycle_in_progress": true, "cycle_started_at": "2026-04-13T10:00:00Z"}`,
		"agent/state/evolve/metrics.json": `{"schema_version": "1.0.0", "counters": {"total_cycles": 182, "total_futile_cycles": 4, "domain_executions": {}}, "cost": {"total_estimated_usd": 1}}`})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 163 || !strings.Contains(out, "[WARN] Cycle #163 did not complete (crash/kill detected).") ||
		!strings.Contains(out, "[WARN] metrics.json: counters.total_cycles was 183 after cycle #163; reconciled to 163.") {
		t.Fatalf("%+v\n%s", res, out)
	}
	var m state.Metrics
	evolveJSON(t, dir, "metrics.json", &m)
	if m.Counters.TotalCycles != 163 {
		t.Errorf("total_cycles = %d, want 163", m.Counters.TotalCycles)
	}
	// Consistent from now on: no warning.
	_, out = mustComplete(t, dir, t0.Add(time.Hour))
	if strings.Contains(out, "metrics.json") {
		t.Errorf("reconciled twice:\n%s", out)
	}
}

// A report of 100,000 actions took minutes of de-duplication while holding
// the lock. At most MaxReportActions are taken, with one warning naming the
// count, and the cycle is recorded.
func TestStep5C2_AHugeReportIsCappedAndTheCycleRecorded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"actions": [`)
	for i := 0; i < 100_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"title": "fix issue %d", "reach": 1, "impact": 1, "confidence": 1, "effort": 1}`, i)
	}
	b.WriteString(`]}`)
	dir := hardProject(t, "", "", skillScript+`cp big.json "$OODA_REPORT"`+"\n", map[string]string{"big.json": b.String()})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 1 || !strings.Contains(out, "[WARN] the report lists 100000 actions; only the first 200 are taken, 99800 dropped") ||
		!strings.Contains(out, "[Reflect] Actions: 200 extracted, 0 duplicate(s).") {
		t.Fatalf("%+v\n%s", res, out)
	}
	var q state.ActionQueue
	evolveJSON(t, dir, "action_queue.json", &q)
	if len(q.Pending) != 20 || len(q.Pending)+len(q.Completed) > 200 {
		t.Errorf("queue: %d pending, %d completed", len(q.Pending), len(q.Completed))
	}
	assertStateParses(t, dir)
}

// A signal (the cycle's context) that arrives before the skill starts ends
// the cycle there: nothing runs, nothing is recorded, the lock is released
// and state.json does not claim a cycle in progress.
func TestStep4_AnInterruptBeforeTheSkillRunsNothing(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, out, err := runOpts(t, ctx, dir, t0, nil)
	if err != nil || res.Status != StatusSkipped || res.Reason != ReasonInterrupted || !strings.Contains(out, "[SKIP] Interrupted before Orient; nothing ran.") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Errorf("the skill ran")
	}
	if st := loadState(t, dir); st.CycleInProgress || st.CycleCount != 0 {
		t.Errorf("state = %+v", st)
	}
	assertStateParses(t, dir)
}

// gapNamed is the named gap of skill_gaps.json, or nil.
func gapNamed(t *testing.T, dir, name string) *state.Gap {
	t.Helper()
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	for i := range gaps.Gaps {
		if gaps.Gaps[i].Name == name {
			return &gaps.Gaps[i]
		}
	}
	t.Errorf("no gap %s in %+v", name, gaps.Gaps)
	return nil
}

// A report that is a named pipe would block the read forever, holding the
// lock; one larger than safety.max_read_mib would be read whole. Each is
// refused with a warning and an input_* gap, and the cycle is recorded.
func TestStep4_AReportThatIsAPipeOrTooLargeIsRefused(t *testing.T) {
	cases := []struct{ name, script, gap string }{
		{"fifo", `mkfifo "$OODA_REPORT"`, "input_not_regular_report_only"},
		{"too large", `head -c 1200000 /dev/zero | tr '\0' ' ' > "$OODA_REPORT"`, "input_too_large_report_only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := hardProject(t, `, "max_read_mib": 1`, "", skillScript+tc.script+"\n", nil)
			res, out := mustComplete(t, dir, t0)
			if res.Cycle != 1 || res.Result != "success" || !strings.Contains(out, "; continuing without it.") {
				t.Fatalf("%+v\n%s", res, out)
			}
			if g := gapNamed(t, dir, tc.gap); g != nil && (g.Type != "input_refused" || g.Frequency != 1) {
				t.Errorf("gap = %+v", g)
			}
			if st := loadState(t, dir); st.CycleCount != 1 || st.CycleInProgress {
				t.Errorf("state = %+v", st)
			}
			assertStateParses(t, dir)
		})
	}
}

// A domain state file that is a named pipe is refused by Observe and after
// the skill: one gap per cycle, and every cycle is recorded.
func TestStep1A_ADomainStateFileThatIsAPipeIsRefused(t *testing.T) {
	dir := hardProject(t, "", "", "echo ran >> ran.txt\n", nil)
	fifo := filepath.Join(dir, "agent/state/only.json")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(fifo); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for i := 1; i <= 2; i++ {
		res, out := mustComplete(t, dir, t0.Add(time.Duration(i)*time.Hour))
		if res.Cycle != i || !strings.Contains(out, "not a regular file") {
			t.Fatalf("cycle %d: %+v\n%s", i, res, out)
		}
	}
	if g := gapNamed(t, dir, "input_not_regular_only"); g != nil && g.Frequency != 2 {
		t.Errorf("gap = %+v, want one per cycle", g)
	}
	assertStateParses(t, dir)
}

// Temporary files that a killed write left behind are removed by the next
// cycle, and every value Load did not take as written is printed.
func TestStep0B_LeftoverTempFilesAreRemovedAndLoadWarningsPrinted(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/.state.json.tmp-123456": `{"cycle_count": 9`,
		"agent/state/evolve/state.json":             `{"cycle_count": 2, "cycle_count": 3, "last_cycle": "2026-04-13T09:00:00Z"}`,
		"agent/state/evolve/cost_ledger.json":       `{"schema_version": "1.0.0", "date": "2026-04-14", "entries": [], "total_estimated_usd": -4}`,
	})
	snap, err := state.New(dir).Load()
	if err != nil || len(snap.Warnings) == 0 {
		t.Fatalf("Load: %v, warnings %q", err, snap.Warnings)
	}
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 4 {
		t.Errorf("cycle %d", res.Cycle)
	}
	for _, w := range snap.Warnings {
		if !strings.Contains(out, "[WARN] "+w+"\n") {
			t.Errorf("warning %q not printed:\n%s", w, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agent/state/evolve/.state.json.tmp-123456")); err == nil || !strings.Contains(out, "[WARN] Removed 1 temporary file(s)") {
		t.Errorf("temporary file left in place (%v):\n%s", err, out)
	}
}

// 0-B: a cycle whose lock another process took while its skill ran (that
// process judged it stale: older than lock_timeout_minutes by its own
// clock, which --now may set days away) records nothing — that process
// runs the same cycle number — and leaves the new holder's lock alone.
func TestStep0B_ACycleThatLostItsLockRecordsNothing(t *testing.T) {
	script := "#!/bin/sh\ntouch started\nwhile [ ! -e taken ]; do sleep 0.02; done\n" + strings.TrimPrefix(skillScript, "#!/bin/sh\n")
	dir := hardProject(t, "", "", script, nil)
	lockPath := filepath.Join(dir, "agent/state/evolve/.lock")
	other := `{"pid": 1, "host": "elsewhere", "started_at": "2026-04-20T00:00:00Z"}`
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.WriteFile(lockPath+".new", []byte(other), 0o644)
		_ = os.Rename(lockPath+".new", lockPath)
		_ = os.WriteFile(filepath.Join(dir, "taken"), nil, 0o644)
	}()
	res, out, err := runOpts(t, context.Background(), dir, t0, nil)
	var lost *LockLostError
	if !errors.As(err, &lost) || res.Status != StatusError || lost.Holder.Host != "elsewhere" ||
		!strings.Contains(err.Error(), "cycle #1 not recorded: its lock was taken by pid 1 on elsewhere") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl")); err == nil {
		t.Error("the cycle log was written")
	}
	if st := loadState(t, dir); st.CycleCount != 0 || len(st.DecisionLog) != 0 {
		t.Errorf("state = %+v", st)
	}
	if b, err := os.ReadFile(lockPath); err != nil || string(b) != other {
		t.Errorf("the new holder's lock: %q, %v", b, err)
	}
}

// 0-C: a cycle_count at the ceiling Load reads back (state.MaxCounter)
// numbered every later cycle the same — a count above it is read back as
// the highest cycle recorded at or below it — so each overwrote the run
// log of the one before. No cycle runs past it, and nothing is written.
func TestStep0C_NoCycleIsNumberedPastTheCeiling(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json": fmt.Sprintf(`{"cycle_count": %d, "last_cycle": "2026-04-13T09:00:00Z"}`, state.MaxCounter-1)})
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != state.MaxCounter {
		t.Fatalf("cycle %d\n%s", res.Cycle, out)
	}
	before, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/state.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, out, err = runOpts(t, context.Background(), dir, t0.Add(time.Hour), nil)
	if err == nil || res.Status != StatusError || !strings.Contains(err.Error(), "the highest cycle number ooda reads back") {
		t.Fatalf("%+v, %v\n%s", res, err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/state.json")); string(after) != string(before) {
		t.Errorf("state.json changed:\n%s", after)
	}
	if strings.Count(readFile(t, filepath.Join(dir, "agent/state/evolve/cycle_log.jsonl")), "\n") != 1 {
		t.Error("a second cycle was logged")
	}
}

// 5-E: a lens changelog that cannot be read (corrupt, or larger than
// safety.max_read_mib) stopped the domain's lens from learning in every
// cycle after, for good. It is set aside, as a corrupt evolve file is, and
// a new one started: the lens learns again from this cycle.
func TestStep5E_ALensChangelogThatCannotBeReadIsSetAside(t *testing.T) {
	for name, content := range map[string]string{
		"corrupt":   `{"domain": "only", "changes": [`,
		"too large": `{"domain": "only", "changes": [], "pad": "` + strings.Repeat("x", 1<<20+10) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := hardProject(t, `, "max_read_mib": 1`, "", skillScript, map[string]string{"agent/state/only/lens_changelog.json": content})
			res, out := mustComplete(t, dir, t0)
			if res.Cycle != 1 || strings.Contains(out, "lens of only not updated") || !strings.Contains(out, "[WARN] lens changelog of only set aside") {
				t.Fatalf("%+v\n%s", res, out)
			}
			aside, _ := filepath.Glob(filepath.Join(dir, "agent/state/only/lens_changelog.json.corrupt-*"))
			if len(aside) != 1 {
				t.Errorf("set aside: %v", aside)
			}
			var cl state.LensChangelog
			readJSON(t, filepath.Join(dir, "agent/state/only/lens_changelog.json"), &cl)
			if cl.Domain != "only" {
				t.Errorf("new changelog = %+v", cl)
			}
			// The next cycle reads it: nothing more is set aside.
			_, out = mustComplete(t, dir, t0.Add(time.Hour))
			if strings.Contains(out, "set aside") {
				t.Errorf("set aside again:\n%s", out)
			}
		})
	}
}
