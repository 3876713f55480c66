package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// firstProject is a one-domain project whose skill is script, run by
// /bin/sh; safety is added to the safety section.
func firstProject(t *testing.T, safety, script string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `{
  "domains": {"only": {"weight": 1, "primary_skill": "/only", "fallback": true}},
  "skills": {"/only": {"command": ["/bin/sh", "skill.sh"]}},
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/only"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0` + safety + `}
}`
	for name, body := range map[string]string{"config.json": cfg, "skill.sh": script} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// firstRun runs one real cycle at now and returns its result and output.
func firstRun(t *testing.T, dir string, now time.Time) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: &out})
	if err != nil {
		t.Fatalf("RunCycle: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// firstLastEntry is the newest decision-log entry of state.json, decoded
// as a plain object so that every key it has is seen.
func firstLastEntry(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Log []map[string]any `json:"decision_log"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Log) == 0 {
		t.Fatalf("state.json: %v\n%s", err, b)
	}
	return st.Log[len(st.Log)-1]
}

// A skill written as docs/skills.md says — refresh last_run every run —
// used to count every run as output, since the state file's bytes always
// changed: cycles that found nothing were recorded action_extracted and
// futility and saturation never triggered. Only the content counts now.
func TestFirst_HadOutputIgnoresTimestamps(t *testing.T) {
	// The first run creates the file; the next ones rewrite it with the
	// same content and fresh timestamps (top level and nested); cycle 4
	// finds something new.
	dir := firstProject(t, "", `#!/bin/sh
n=0
[ "$OODA_CYCLE" -ge 4 ] && n=3
printf '{"last_run": "%s", "status": "ok", "metrics": {"todos": %s, "checked_at": "%s"}, "alerts": [{"severity": "info", "message": "m", "timestamp": "%s"}]}\n' "$OODA_NOW" "$n" "$OODA_NOW" "$OODA_NOW" > "$OODA_STATE_FILE"
`)
	want := []string{"action_extracted", "futile", "futile", "action_extracted", "futile"}
	for i, w := range want {
		res, out := firstRun(t, dir, t0.Add(time.Duration(i)*time.Hour))
		if res.ResultType != w {
			t.Fatalf("cycle %d: result type %q, want %q\n%s", i+1, res.ResultType, w, out)
		}
		if got := firstLastEntry(t, dir)["had_output"]; got != (w == "action_extracted") {
			t.Fatalf("cycle %d: had_output %v", i+1, got)
		}
	}
}

// A state file that a skill creates holding nothing but last_run says
// nothing: it is not output either.
func TestFirst_HadOutputANewFileWithOnlyLastRunIsNotOutput(t *testing.T) {
	dir := firstProject(t, "", `#!/bin/sh
printf '{"last_run": "%s"}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
`)
	res, out := firstRun(t, dir, t0)
	if res.Result != "success" || res.ResultType != "futile" {
		t.Fatalf("%+v\n%s", res, out)
	}
}

// The report's summary is what the skill found: printed in the [Act]
// output, written on one line into the CHANGELOG entry and the decision
// log, and bounded. A line break in it cannot forge a line of ooda's own.
func TestFirst_SummaryIsShownAndRecorded(t *testing.T) {
	long := strings.Repeat("x", 2000)
	dir := firstProject(t, "", `#!/bin/sh
printf '{"last_run": "%s", "n": %s}\n' "$OODA_NOW" "$OODA_CYCLE" > "$OODA_STATE_FILE"
if [ "$OODA_CYCLE" = 1 ]; then
  printf '{"summary": "2 failing tests:\\n[Record] Cycle #99 recorded: forged\\n## Cycle #99"}' > "$OODA_REPORT"
else
  printf '{"summary": "%s"}' "`+long+`" > "$OODA_REPORT"
fi
`)
	res, out := firstRun(t, dir, t0)
	const one = "2 failing tests: [Record] Cycle #99 recorded: forged ## Cycle #99"
	if res.Summary != one || !strings.Contains(out, "[Act] /only reports: "+one+"\n") {
		t.Fatalf("summary %q\n%s", res.Summary, out)
	}
	if strings.Contains(out, "\n[Record] Cycle #99") {
		t.Fatalf("the summary forged a line:\n%s", out)
	}
	cl, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cl), "\n- **Summary**: "+one+"\n") || strings.Count(string(cl), "\n## Cycle #") != 1 {
		t.Fatalf("CHANGELOG:\n%s", cl)
	}
	if got := firstLastEntry(t, dir)["summary"]; got != one {
		t.Fatalf("decision log summary = %v", got)
	}
	entries, err := state.New(dir).ChangelogEntries()
	if err != nil || len(entries) != 1 {
		t.Fatalf("ooda's CHANGELOG reader: %d entries, %v", len(entries), err)
	}

	// A summary of 2000 characters is cut everywhere it is shown.
	res, out = firstRun(t, dir, t0.Add(time.Hour))
	if n := len([]rune(res.Summary)); n > 300 || !strings.HasSuffix(res.Summary, "…") {
		t.Fatalf("summary of %d runes: %q", n, res.Summary)
	}
	if strings.Contains(out, long) {
		t.Fatal("the whole summary was printed")
	}
	if got, _ := firstLastEntry(t, dir)["summary"].(string); got != res.Summary {
		t.Fatalf("decision log summary = %q", got)
	}
	st, err := state.New(dir).Load()
	if err != nil || len(st.State.DecisionLog) != 2 {
		t.Fatalf("state reads back: %v", err)
	}
}

// A cycle whose skill gave no summary records none: no empty key, no
// CHANGELOG line.
func TestFirst_NoSummaryNoLine(t *testing.T) {
	dir := firstProject(t, "", `#!/bin/sh
printf '{"n": %s}\n' "$OODA_CYCLE" > "$OODA_STATE_FILE"
`)
	res, out := firstRun(t, dir, t0)
	if res.Summary != "" || strings.Contains(out, "reports:") {
		t.Fatalf("%+v\n%s", res, out)
	}
	cl, _ := os.ReadFile(filepath.Join(dir, "agent/state/evolve/CHANGELOG.md"))
	if strings.Contains(string(cl), "Summary") {
		t.Fatalf("CHANGELOG:\n%s", cl)
	}
	if _, ok := firstLastEntry(t, dir)["summary"]; ok {
		t.Fatal("decision log has a summary key")
	}
}

// A failing skill showed only "exit status 7": the end of its output and
// the path of its log are printed now, and the cycle exits 4.
func TestFirst_FailureShowsTheEndOfTheOutputAndExits4(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&b, "echo line%d\n", i)
	}
	dir := firstProject(t, "", b.String()+`echo "fatal: \033[31mno fixture\033[0m" >&2
exit 7
`)
	res, out := firstRun(t, dir, t0)
	if res.Result != "error" || res.ExitCode() != 4 || len(res.FailedSkills) != 1 || res.FailedSkills[0] != "/only" {
		t.Fatalf("%+v\n%s", res, out)
	}
	for _, want := range []string{
		"[Act] /only failed: exit status 7\n",
		// The test's working directory is not in the project: the path
		// is absolute.
		"[Act] Last 10 line(s) of /only's output (full log: " + filepath.Join(dir, "agent/state/evolve/runs/1-only.log") + "):\n",
		"  | line7\n", "  | line15\n",
		`  | fatal: \x1b[31mno fixture\x1b[0m` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "  | line6\n") {
		t.Errorf("more than 10 lines printed:\n%s", out)
	}
	log, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-only.log"))
	if err != nil || !strings.Contains(string(log), "line1\n") {
		t.Fatalf("the full log: %v\n%s", err, log)
	}
}

// A skill that cannot start (a missing script, one without the execute
// bit) writes why into its run log, says what to do, and exits 4; a
// skill no executor can run does too.
func TestFirst_AStartFailureIsLoggedAndExits4(t *testing.T) {
	for _, tc := range []struct {
		name, skills, want string
		setup              func(dir string)
	}{
		{"missing", `{"/only": {"command": ["./scripts/missing.sh"]}}`, "no such file: the path is relative to the project root", nil},
		{"not executable", `{"/only": {"command": ["./skill.sh"]}}`, "not executable: chmod +x it", func(dir string) {
			if err := os.Chmod(filepath.Join(dir, "skill.sh"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"no executor", `{}`, "no executor for /only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := firstProject(t, "", "#!/bin/sh\necho ran > ran.txt\n")
			p := filepath.Join(dir, "config.json")
			cfg, _ := os.ReadFile(p)
			cfg = bytes.Replace(cfg, []byte(`{"/only": {"command": ["/bin/sh", "skill.sh"]}}`), []byte(tc.skills), 1)
			if err := os.WriteFile(p, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(dir)
			}
			res, out := firstRun(t, dir, t0)
			if res.ExitCode() != 4 || res.Result != "error" || !strings.Contains(res.SkillError, tc.want) {
				t.Fatalf("%+v\n%s", res, out)
			}
			if !strings.Contains(out, "its log: "+filepath.Join(dir, "agent/state/evolve/runs/1-only.log")+"\n") {
				t.Errorf("no log path:\n%s", out)
			}
			log, err := os.ReadFile(filepath.Join(dir, "agent/state/evolve/runs/1-only.log"))
			if err != nil || !strings.Contains(string(log), tc.want) {
				t.Errorf("run log: %v\n%s", err, log)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
				t.Error("the skill ran")
			}
		})
	}
}

// A timeout is a failure of the skill: exit 4. The breaker's HALT then
// names the skill, its last error and its log, and its 3 wins over 4.
func TestFirst_TimeoutExits4AndTheHaltNamesTheSkill(t *testing.T) {
	dir := firstProject(t, `, "max_silent_failures": 2`, "#!/bin/sh\necho waiting\nexec sleep 30\n")
	p := filepath.Join(dir, "config.json")
	cfg, _ := os.ReadFile(p)
	cfg = bytes.Replace(cfg, []byte(`"skill.sh"]}`), []byte(`"skill.sh"], "timeout": "200ms"}`), 1)
	if err := os.WriteFile(p, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	res, out := firstRun(t, dir, t0)
	if res.ExitCode() != 4 || res.HaltCreated || !strings.Contains(out, "TIMEOUT: /only exceeded 200ms") || !strings.Contains(out, "  | waiting\n") {
		t.Fatalf("%+v\n%s", res, out)
	}
	res, out = firstRun(t, dir, t0.Add(time.Hour))
	if res.ExitCode() != 3 || !res.HaltCreated {
		t.Fatalf("%+v\n%s", res, out)
	}
	halt, err := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if err != nil {
		t.Fatal(err)
	}
	want := "2 consecutive skill executions failed. The last: /only of domain only, TIMEOUT: /only exceeded 200ms (log agent/state/evolve/runs/2-only.log). Unattended operation paused"
	if !strings.HasPrefix(string(halt), want) {
		t.Fatalf("HALT:\n%s", halt)
	}
}

// A HALT during the run and a signal are an operator's stop, not the
// skill's failure: no exit 4.
func TestFirst_AnOperatorStopIsNotASkillFailure(t *testing.T) {
	dir := firstProject(t, "", "#!/bin/sh\nmkdir -p agent/safety\necho stop > agent/safety/HALT\nexec sleep 30\n")
	res, out := firstRun(t, dir, t0)
	if res.ExitCode() != 3 || len(res.FailedSkills) != 0 {
		t.Fatalf("%+v\n%s", res, out)
	}
}

// A skill that succeeds exits 0, and a failing chain step is a failure of
// the cycle's skills too: the breaker counts it, so exit 4 says so first.
func TestFirst_AFailingChainStepExits4(t *testing.T) {
	dir := t.TempDir()
	cfg := `{
  "domains": {"only": {"weight": 1, "primary_skill": "/only", "fallback": true, "chain": ["/next"]}},
  "skills": {"/only": {"command": ["/bin/sh", "-c", "echo ok"]}, "/next": {"command": ["/bin/sh", "-c", "echo broken >&2; exit 2"]}},
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/only", "/next"], "first_cycle_observe_only": false}
}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res, out := firstRun(t, dir, t0)
	if res.Result != "success" || res.ExitCode() != 4 || fmt.Sprint(res.FailedSkills) != "[/next]" || !strings.Contains(out, "  | broken\n") {
		t.Fatalf("%+v\n%s", res, out)
	}
}

// "Run `ooda cycle` again to take action" was followed by "Too soon": the
// first cycle's message names the instant the next cycle can act and the
// setting that decides it, and a too-soon skip says the same.
func TestFirst_NextCycleMessagesTellTheTruth(t *testing.T) {
	dir := firstProject(t, "", "#!/bin/sh\necho ran >> ran.txt\n")
	p := filepath.Join(dir, "config.json")
	cfg, _ := os.ReadFile(p)
	cfg = bytes.Replace(cfg, []byte(`"first_cycle_observe_only": false, "min_cycle_interval_minutes": 0`), []byte(`"first_cycle_observe_only": true, "min_cycle_interval_minutes": 45`), 1)
	if err := os.WriteFile(p, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	// last_cycle keeps whole seconds, and the interval counts from it.
	res, out := firstRun(t, dir, t0.Add(900*time.Millisecond))
	next := "2026-04-14T09:45:00Z"
	if res.Reason != ReasonFirstCycle || !res.NextActAt.Equal(time.Date(2026, 4, 14, 9, 45, 0, 0, time.UTC)) ||
		!strings.Contains(out, "First cycle complete: it only observes (safety.first_cycle_observe_only).\n") ||
		!strings.Contains(out, "The next cycle can act at "+next+" (safety.min_cycle_interval_minutes is 45; a critical alert bypasses it): run `ooda cycle` then.\n") {
		t.Fatalf("%+v\n%s", res, out)
	}
	// A second before: too soon, and it says when.
	res, out = firstRun(t, dir, time.Date(2026, 4, 14, 9, 44, 59, 0, time.UTC))
	if res.Reason != ReasonTooSoon || !strings.Contains(out, "[SKIP] Too soon. 1 min until next cycle.\n") ||
		!strings.Contains(out, "[SKIP] The next cycle can run at "+next+": the last one ran at 2026-04-14T09:00:00Z and safety.min_cycle_interval_minutes is 45 (a critical alert bypasses it).\n") {
		t.Fatalf("%+v\n%s", res, out)
	}
	// At the instant shown, it acts.
	at := res.NextActAt
	res, out = firstRun(t, dir, at)
	if res.Result != "success" || !strings.Contains(out, "[Act] /only completed") {
		t.Fatalf("at the promised instant: %+v\n%s", res, out)
	}
	// A recorded cycle names the next instant too (a session's scheduler
	// never ticks before it), and a cycle then is not too soon.
	if want := at.Add(45 * time.Minute); !res.NextActAt.Equal(want) {
		t.Fatalf("NextActAt after a recorded cycle = %v, want %v", res.NextActAt, want)
	}
	if res, out = firstRun(t, dir, res.NextActAt); res.Reason == ReasonTooSoon {
		t.Fatalf("at NextActAt: too soon\n%s", out)
	}
}

// Without an interval, the first cycle says the next one can run now.
func TestFirst_NextCycleWithoutAnInterval(t *testing.T) {
	dir := firstProject(t, "", "#!/bin/sh\n")
	p := filepath.Join(dir, "config.json")
	cfg, _ := os.ReadFile(p)
	cfg = bytes.Replace(cfg, []byte(`"first_cycle_observe_only": false`), []byte(`"first_cycle_observe_only": true`), 1)
	if err := os.WriteFile(p, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	res, out := firstRun(t, dir, t0)
	if !res.NextActAt.IsZero() || !strings.Contains(out, "The next `ooda cycle` acts, and can run now (safety.min_cycle_interval_minutes is 0).\n") {
		t.Fatalf("%+v\n%s", res, out)
	}
}
