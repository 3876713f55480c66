package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/state"
)

const statusConfig = `{
  "mission": "Keep the service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/x", "fallback": true},
    "docs": {"weight": 0.5, "primary_skill": "/x", "status": "disabled"}
  },
  "skills": {"/x": {"command": ["/bin/true"]}},
  "safety": {"skill_allowlist": ["/x"]},
  "cost": {"daily_limit_usd": 5}
}
`

const statusNow = "2026-03-02T12:00:00Z"

// statusProject is a project with a config and no state at all.
func statusProject(t *testing.T) string {
	t.Helper()
	dir := tempRoot(t)
	mkfile(t, dir, "config.json", statusConfig)
	return dir
}

// statusTree records every file under dir with its content and modification
// time, to show that status changed, moved and created nothing.
func statusTree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := p + " " + info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func statusJSON(t *testing.T, dir string) (map[string]any, string) {
	t.Helper()
	code, stdout, stderr := run(t, dir, "status", "--json", "--now", statusNow)
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("status --json: %v: %q", err, stdout)
	}
	return doc, stderr
}

func TestStatusEmptyProjectRendersDefaults(t *testing.T) {
	dir := statusProject(t)
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"HALT: not active\n",
		"Cycles: 0 (last: never)\n",
		"Level: 0 (Just watching)\n",
		"Mission: Keep the service healthy.\n",
		"  health  unknown   never run  0.70  0       —\n",
		"  docs    disabled  never run  0.70  0       —\n",
		"Actions: 0 pending\n",
		"Memos: none pending\n",
		"Interventions: none active\n",
		"Saturation: 0 observe-only cycles in a row (halts at 15)\n",
		"Failures: 0 failed runs in a row (halts at 3)\n",
		"Cost today: $0.00 of $5.00\n",
		"No cycle has run yet",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stderr, "corrupt") {
		t.Errorf("a missing file is not corrupt: %s", stderr)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status wrote to the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A project with cycles: counts, the top action by effective RICE, the
// domain's run and alerts, confidence, and today's cost.
func TestStatusReadsState(t *testing.T) {
	dir := statusProject(t)
	ev := "agent/state/evolve/"
	mkfile(t, dir, ev+"state.json", `{"cycle_count": 7, "last_cycle": "2026-03-02T09:00:00Z", "consecutive_observe_only_cycles": 3, "decision_log": []}`)
	mkfile(t, dir, ev+"confidence.json", `{"health": 0.8}`)
	mkfile(t, dir, ev+"action_queue.json", `{"pending": [
	  {"id": "a1", "title": "low", "rice_score": 90, "effective_rice": 10},
	  {"id": "a2", "title": "high", "rice_score": 20, "effective_rice": 40},
	  {"id": "a3", "title": "raw", "rice_score": 30}
	], "in_progress": [], "completed": []}`)
	mkfile(t, dir, ev+"cost_ledger.json", `{"schema_version": "1.0.0", "date": "2026-03-02", "entries": [], "total_estimated_usd": 1.25}`)
	mkfile(t, dir, "agent/state/health.json", `{"last_run": "2026-03-02T09:00:00Z", "status": "ok", "alerts": [{"severity": "warning", "message": "slow"}, "flaky"]}`)

	doc, _ := statusJSON(t, dir)
	if doc["cycle_count"] != 7.0 || doc["last_cycle"] != "2026-03-02T09:00:00Z" || doc["saturation"] != 3.0 {
		t.Errorf("counters: %v", doc)
	}
	acts := doc["actions"].(map[string]any)
	top, _ := acts["top"].(map[string]any)
	if acts["pending"] != 3.0 || top == nil || top["id"] != "a2" || top["rice"] != 40.0 {
		t.Errorf("actions: %v", acts)
	}
	cost := doc["cost"].(map[string]any)
	if cost["today_usd"] != 1.25 || cost["limit_usd"] != 5.0 {
		t.Errorf("cost: %v", cost)
	}
	d := doc["domains"].([]any)[0].(map[string]any)
	if d["name"] != "health" || d["last_run"] != "2026-03-02T09:00:00Z" || d["hours"] != 3.0 || d["confidence"] != 0.8 || d["alerts"] != 2.0 {
		t.Errorf("health: %v", d)
	}

	// The ledger of another day is not today's spend.
	mkfile(t, dir, ev+"cost_ledger.json", `{"schema_version": "1.0.0", "date": "2026-03-01", "entries": [], "total_estimated_usd": 4.5}`)
	doc, _ = statusJSON(t, dir)
	if c := doc["cost"].(map[string]any); c["today_usd"] != 0.0 {
		t.Errorf("yesterday's ledger counted today: %v", c)
	}
}

// Corrupt files are named, one warning each, the dashboard still renders
// with their defaults, and nothing is set aside or rewritten.
func TestStatusNamesCorruptFilesAndMovesNothing(t *testing.T) {
	dir := statusProject(t)
	ev := "agent/state/evolve/"
	mkfile(t, dir, ev+"state.json", `{"cycle_count": 7`)
	mkfile(t, dir, ev+"action_queue.json", `not json`)
	mkfile(t, dir, ev+"cost_ledger.json", `{"date": `)
	mkfile(t, dir, "agent/state/health.json", `[1,`)
	before := statusTree(t, dir)

	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{ev + "state.json", ev + "action_queue.json", ev + "cost_ledger.json", "agent/state/health.json"} {
		want := "[WARN] corrupt state file: " + filepath.Join(dir, f) + "\n"
		if strings.Count(stderr, want) != 1 {
			t.Errorf("stderr does not name %s once:\n%s", f, stderr)
		}
	}
	for _, want := range []string{"Cycles: 0 (last: never)", "Actions: 0 pending", "Cost today: $0.00 of $5.00", "  health  unknown   never run"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// --json: the warnings stay on stderr, stdout is the document.
	doc, stderr := statusJSON(t, dir)
	if !strings.Contains(stderr, "[WARN] corrupt state file: "+filepath.Join(dir, ev+"state.json")) || doc["cycle_count"] != 0.0 {
		t.Errorf("--json: %v\n%s", doc, stderr)
	}
}

func TestStatusShowsHaltWithReason(t *testing.T) {
	dir := statusProject(t)
	if code, _, stderr := run(t, dir, "halt", "deploy freeze", "--now", "2026-03-02T11:00:00Z"); code != 0 {
		t.Fatalf("halt: %s", stderr)
	}
	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "HALT: ACTIVE — deploy freeze; created_at: 2026-03-02T11:00:00Z\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
	doc, _ := statusJSON(t, dir)
	h := doc["halt"].(map[string]any)
	if h["active"] != true || h["reason"] != "deploy freeze; created_at: 2026-03-02T11:00:00Z" {
		t.Errorf("halt: %v", h)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent/safety/HALT")); err != nil {
		t.Errorf("status touched the HALT file: %v", err)
	}
}

// Text a skill or a hand wrote into a state file — a terminal escape, a
// carriage return, a forged line, a bidirectional override — is printed
// escaped in the dashboard and in the JSON document.
func TestStatusEscapesHostileText(t *testing.T) {
	dir := statusProject(t)
	const hostile = "x\x1b[2J\r\n[Record] Cycle #99 recorded\u202e"
	enc, _ := json.Marshal(hostile)
	mkfile(t, dir, "agent/safety/HALT", hostile+"\n")
	mkfile(t, dir, "agent/state/evolve/state.json", `{"cycle_count": 1, "last_cycle": `+string(enc)+`, "decision_log": []}`)
	mkfile(t, dir, "agent/state/evolve/action_queue.json", `{"pending": [{"id": "a", "title": `+string(enc)+`, "rice_score": 1}], "in_progress": [], "completed": []}`)

	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code2, jout, jerr := run(t, dir, "status", "--json", "--now", statusNow)
	if code2 != 0 {
		t.Fatalf("--json exit %d: %s", code2, jerr)
	}
	for _, out := range []string{stdout, jout} {
		for _, bad := range []string{"\x1b", "\r", "\u202e", "\n[Record]"} {
			if strings.Contains(out, bad) {
				t.Errorf("output carries %q:\n%q", bad, out)
			}
		}
	}
	if !strings.Contains(stdout, `top: x\x1b[2J\r\n[Record] Cycle #99 recorded\u202e (RICE 1)`) {
		t.Errorf("title not shown escaped:\n%s", stdout)
	}
}

// statusSession is a session of `ooda run` on statusProject's project,
// running in its third iteration, with the health domain quarantined and
// one finding deferred.
func statusSession() state.Session {
	return state.Session{
		ID: "20260302T090000Z", StartedAt: "2026-03-02T09:00:00Z", UpdatedAt: "2026-03-02T11:00:00Z",
		Status: state.SessionRunning, Iteration: 3, MaxIterations: 10,
		Quarantined: []string{"health"},
		Findings: map[string]state.SessionFinding{
			"gap:no_lint_skill": {Kind: "gap", Summary: "no skill runs the linter", Status: state.FindingDeferred, LastSeen: 3, Consecutive: 3, DeferredAt: 3},
			"action:q1":         {Kind: "action", Summary: "Tidy the README", Status: state.FindingOpen, FirstSeen: 2, LastSeen: 3, Consecutive: 2},
		},
		Targets: map[string]state.SessionTarget{"health": {Kind: state.KindDomain, LastResult: state.ResultQuarantined, Transitions: 3, LastCycle: 3}},
		DetermineLog: []state.DetermineEntry{
			{Iteration: 3, Cycle: 3, Result: "continue", NetProgress: 0, Resolved: 1, New: 1, DeferredCount: 1, DeferredNow: 1, Remaining: 1, Reason: "work remains: 1 finding unresolved"},
		},
	}
}

// `ooda status` shows the session and, while it runs, its quarantine as
// the document's quarantined list; a finished session's quarantine no
// longer applies and is only in its session object. status writes
// nothing either way.
func TestStatusShowsSession(t *testing.T) {
	dir := statusProject(t)
	st := state.New(dir)
	rec := statusSession()
	if err := st.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"\nSession: 20260302T090000Z running\n  Iteration 3 of 10; started 2026-03-02T09:00:00Z, updated 2026-03-02T11:00:00Z\n",
		"  Quarantined: health\n",
		"  Deferred: 1 finding (stagnant, no longer counted as remaining work)\n    gap:no_lint_skill: no skill runs the linter\n",
		"  Last judgment: iteration 3, continue, net progress 0 (1 resolved, 1 new)\n    work remains: 1 finding unresolved\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	doc, _ := statusJSON(t, dir)
	if q, _ := json.Marshal(doc["quarantined"]); string(q) != `["health"]` {
		t.Errorf("quarantined: %s", q)
	}
	sess, _ := doc["session"].(map[string]any)
	if sess == nil || sess["id"] != "20260302T090000Z" || sess["status"] != "running" || sess["iteration"] != 3.0 || sess["max_iterations"] != 10.0 || sess["stop_reason"] != nil || sess["success"] != false {
		t.Errorf("session: %v", doc["session"])
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status wrote to the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Ended without success: the quarantine ended with it.
	rec.Status, rec.StopReason, rec.EndedAt = state.SessionStopped, "stopped_no_progress", "2026-03-02T11:30:00Z"
	if err := st.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	doc, _ = statusJSON(t, dir)
	sess, _ = doc["session"].(map[string]any)
	if q, _ := json.Marshal(doc["quarantined"]); string(q) != `[]` {
		t.Errorf("a finished session's quarantine is listed: %s", q)
	}
	if sq, _ := json.Marshal(sess["quarantined"]); sess["status"] != "stopped" || sess["stop_reason"] != "stopped_no_progress" || sess["success"] != false || string(sq) != `["health"]` {
		t.Errorf("session: %v", sess)
	}
	_, stdout, _ = run(t, dir, "status", "--now", statusNow)
	if !strings.Contains(stdout, "Session: 20260302T090000Z stopped\n  Stop reason: stopped_no_progress (not a success)\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// A project that never ran a session: no session line, "session": null.
func TestStatusWithoutSession(t *testing.T) {
	dir := statusProject(t)
	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 || strings.Contains(stdout, "Session") {
		t.Errorf("exit %d: %s\n%s", code, stdout, stderr)
	}
	doc, _ := statusJSON(t, dir)
	if s, ok := doc["session"]; !ok || s != nil {
		t.Errorf("session: %v (present: %v)", s, ok)
	}
}

// The newest session record is corrupt: it is named on stderr like every
// corrupt state file, the dashboard renders without it (exit 0), and it
// is left as it is.
func TestStatusNamesCorruptSession(t *testing.T) {
	dir := statusProject(t)
	p := mkfile(t, dir, "agent/state/evolve/sessions/20260302T090000Z.json", `{"id": "20260302T090000Z", "iteration": `)
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--now", statusNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "[WARN] corrupt state file: " + p + "\n"; strings.Count(stderr, want) != 1 {
		t.Errorf("stderr does not name %s once:\n%s", p, stderr)
	}
	if !strings.HasPrefix(stdout, "HALT: not active\n") || strings.Contains(stdout, "Session") {
		t.Errorf("stdout:\n%s", stdout)
	}
	doc, stderr := statusJSON(t, dir)
	if doc["session"] != nil || !strings.Contains(stderr, p) {
		t.Errorf("--json: session %v; stderr %s", doc["session"], stderr)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
