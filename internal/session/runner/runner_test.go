package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/session"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// t0 is the simulated start of every session here.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// oneDomain is a project whose only domain, health, runs x.sh; a cycle
// may come every 30 minutes, and the first one acts.
const oneDomain = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/x", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/x": {"command": ["/bin/sh", "x.sh"]}},
  "forge": {"provider": "none"},
  "safety": {"skill_allowlist": ["/x"], "min_cycle_interval_minutes": 30, "first_cycle_observe_only": false}
}`

// countRuns is the start of every skill script: runs.txt counts its runs,
// and $n is this run's number.
const countRuns = `n=$(cat runs.txt 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs.txt
`

// delivers is a skill result the ledger reads as improved
// (action_extracted).
const delivers = `printf '{"had_output": true}' > "$OODA_REPORT"
`

// flakySkill delivers on odd runs and fails on even ones: improved, fail,
// improved, fail …
const flakySkill = countRuns + `if [ $((n % 2)) -eq 1 ]; then printf '{"had_output": true}' > "$OODA_REPORT"; exit 0; fi
echo "broke it" >&2
exit 1
`

// warningAlert is a domain state file with one active alert: a finding
// that stays until the file changes.
const warningAlert = `{"status": "degraded", "alerts": [{"severity": "warning", "id": "slow", "message": "p95 820ms"}]}`

func project(t *testing.T, cfg string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.json"), cfg)
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
	return dir
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// session runs a session with simulated time from t0 (unless o.Clock is
// set) and returns its summary and output.
func runSession(t *testing.T, dir string, o Options) (Summary, string) {
	t.Helper()
	return runSessionCtx(t, context.Background(), dir, o)
}

func runSessionCtx(t *testing.T, ctx context.Context, dir string, o Options) (Summary, string) {
	t.Helper()
	var out bytes.Buffer
	o.Project = dir
	if o.Clock == nil {
		o.Clock = clock.NewFixed(t0)
	}
	if o.Schedule == nil {
		o.Schedule = Every(30 * time.Minute)
	}
	o.Registry = skills.Registry()
	if o.Out == nil {
		o.Out = &out
	}
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	return sum, out.String()
}

// runs is how many times the project's skill ran.
func runs(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ledger reads cycle-history.jsonl.
func ledger(t *testing.T, dir string) []state.LedgerLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "agent", "state", "evolve", state.CycleHistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []state.LedgerLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l state.LedgerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("ledger line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func loadSession(t *testing.T, dir, id string) state.Session {
	t.Helper()
	rec, found, warns, err := state.New(dir).LoadSession(id)
	if err != nil || !found || len(warns) > 0 {
		t.Fatalf("session %s: found %v, warnings %v, error %v", id, found, warns, err)
	}
	return rec
}

func TestSeed002_OscillatingDomainQuarantinedAtTheThirdTransition(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": flakySkill})
	sum, out := runSession(t, dir, Options{Session: "run-a", MaxCycles: 9})

	// improved, fail, improved, fail, improved, fail: the third
	// improved→fail transition is cycle 6's; from then on the domain is
	// never selected in this session.
	if got := runs(t, dir); got != 6 {
		t.Fatalf("the skill ran %d times, want 6 (quarantined after its 6th run)\n%s", got, out)
	}
	if q := sum.Record.Quarantined; len(q) != 1 || q[0] != "health" {
		t.Fatalf("quarantined %v, want [health]", q)
	}
	var results []string
	quarantinedAt := 0
	for _, l := range ledger(t, dir) {
		if l.Target != "health" || l.Session != "run-a" {
			continue
		}
		if l.Result == state.ResultQuarantined {
			quarantinedAt = l.Cycle
			continue
		}
		results = append(results, l.Result)
	}
	want := "improved fail improved fail improved fail idle idle idle"
	if strings.Join(results, " ") != want {
		t.Errorf("ledger results %q, want %q", strings.Join(results, " "), want)
	}
	if quarantinedAt != 6 {
		t.Errorf("the quarantined line is at cycle %d, want 6", quarantinedAt)
	}
	if !strings.Contains(out, "[Run] QUARANTINED health: 3 improved→fail transitions in session run-a") {
		t.Errorf("the quarantine is not announced:\n%s", out)
	}
	if !strings.Contains(out, "quarantined (health would have won") {
		t.Errorf("the idle cycles do not say why:\n%s", out)
	}
	if sum.Cycles != 9 || sum.Record.Iteration != 9 {
		t.Errorf("cycles %d, iterations %d, want 9 and 9 (idle cycles are iterations)", sum.Cycles, sum.Record.Iteration)
	}

	// Resumed, the quarantine holds.
	_, out = runSession(t, dir, Options{Clock: clock.NewFixed(t0.Add(10 * time.Hour)), Session: "run-a", MaxCycles: 2})
	if got := runs(t, dir); got != 6 {
		t.Fatalf("a resumed session selected its quarantined domain (%d runs)\n%s", got, out)
	}

	// A new session starts with no quarantine: the domain is selectable.
	sum, out = runSession(t, dir, Options{Clock: clock.NewFixed(t0.Add(20 * time.Hour)), Session: "run-b", MaxCycles: 1})
	if got := runs(t, dir); got != 7 {
		t.Fatalf("a new session did not select the domain (%d runs)\n%s", got, out)
	}
	if len(sum.Record.Quarantined) != 0 {
		t.Errorf("a new session starts quarantined: %v", sum.Record.Quarantined)
	}

	// --unquarantine lifts it in the first session.
	sum, out = runSession(t, dir, Options{Clock: clock.NewFixed(t0.Add(30 * time.Hour)), Session: "run-a", MaxCycles: 1, Unquarantine: []string{"health"}})
	if got := runs(t, dir); got != 8 {
		t.Fatalf("--unquarantine did not make the domain selectable (%d runs)\n%s", got, out)
	}
	if !strings.Contains(out, "health is no longer quarantined in session run-a") || len(sum.Record.Quarantined) != 0 {
		t.Errorf("unquarantine: %v\n%s", sum.Record.Quarantined, out)
	}
	if rec := loadSession(t, dir, "run-a"); rec.IsQuarantined("health") || rec.Targets["health"].Transitions != 0 {
		t.Errorf("the saved record still quarantines health: %+v", rec.Targets["health"])
	}
}

// stopCase is a session built to end with one stop reason.
type stopCase struct {
	name   string
	cfg    string
	files  map[string]string
	opts   Options
	want   string
	iter   int    // the iteration it stops at
	reason string // a part of the reason
}

func TestSeed003_EachStopReason(t *testing.T) {
	withCompletion := func(extra string) string {
		return strings.Replace(oneDomain, `"forge":`, extra+`, "forge":`, 1)
	}
	// The goal is measured in Orient, before the skill: the skill's
	// first run makes the second cycle read 1.0.
	goalFiles := map[string]string{
		"x.sh":                          countRuns + "echo 1 > progress.txt\n" + delivers,
		"progress.txt":                  "0.5\n",
		"agent/state/health.json":       warningAlert,
		"agent/state/evolve/goals.json": `{"goals": [{"id": "coverage", "title": "Raise coverage", "status": "active", "progress": 0.5, "metric_command": "cat progress.txt"}]}`,
	}
	cases := []stopCase{
		{name: "done_completed by the goals", cfg: oneDomain, files: goalFiles,
			opts: Options{UntilDone: true}, want: session.DoneCompleted, iter: 2, reason: "all 1 goal(s) met"},
		{name: "done_completed by completion_command", cfg: withCompletion(`"session": {"completion_command": ["/bin/sh", "-c", "test -f done.flag"]}`),
			files: map[string]string{"x.sh": countRuns + `[ $n -ge 2 ] && touch done.flag` + "\n" + delivers, "agent/state/health.json": warningAlert},
			opts:  Options{UntilDone: true}, want: session.DoneCompleted, iter: 2, reason: "completion_command exited 0"},
		{name: "done_completed by the judge", cfg: withCompletion(`"session": {"completion": "the service answers within 500ms"}, "judge": {"command": ["/bin/sh", "judge.sh"]}`),
			files: map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert, "judge.sh": completionJudge},
			opts:  Options{UntilDone: true}, want: session.DoneCompleted, iter: 2, reason: "judge: p95 is 410ms now"},
		{name: "done_no_work", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers},
			opts: Options{UntilDone: true}, want: session.DoneNoWork, iter: 1, reason: "no remaining actionable work"},
		{name: "stopped_stagnation", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert},
			opts: Options{UntilDone: true}, want: session.StoppedStagnation, iter: 3, reason: "all remaining work deferred"},
		{name: "stopped_no_progress", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers +
			// A new alert each cycle, the last one gone: one resolved,
			// one new, net 0, three times.
			`printf '{"status": "degraded", "alerts": [{"severity": "warning", "id": "a%s", "message": "new problem"}]}' $n > agent/state/health.json` + "\n"},
			opts: Options{UntilDone: true}, want: session.StoppedNoProgress, iter: 3, reason: "no net progress for 3 consecutive iterations"},
		{name: "stopped_max_iterations", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert},
			opts: Options{MaxCycles: 2}, want: session.StoppedMaxIterations, iter: 2, reason: "iteration limit reached (2 of 2)"},
		{name: "halted by a HALT file the skill wrote", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers + `[ $n -ge 2 ] && mkdir -p agent/safety && echo stop > agent/safety/HALT` + "\n"},
			opts: Options{MaxCycles: 10}, want: session.StoppedHalted, iter: 2, reason: "the HALT file exists"},
		{name: "halted by a breaker", cfg: strings.Replace(oneDomain, `"first_cycle_observe_only": false`, `"first_cycle_observe_only": false, "max_silent_failures": 2`, 1),
			files: map[string]string{"x.sh": countRuns + "exit 1\n"},
			opts:  Options{MaxCycles: 10}, want: session.StoppedHalted, iter: 2, reason: "a breaker created the HALT file"},
		{name: "halted at the start", cfg: oneDomain, files: map[string]string{"x.sh": countRuns + delivers, "agent/safety/HALT": "maintenance\n"},
			opts: Options{MaxCycles: 10}, want: session.StoppedHalted, iter: 0, reason: "the HALT file exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := project(t, c.cfg, c.files)
			c.opts.Session = "run-stop"
			sum, out := runSession(t, dir, c.opts)
			if sum.StopReason != c.want || sum.Record.Iteration != c.iter {
				t.Fatalf("stopped with %q at iteration %d, want %q at %d\n%s", sum.StopReason, sum.Record.Iteration, c.want, c.iter, out)
			}
			if !strings.Contains(sum.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", sum.Reason, c.reason)
			}
			rec := loadSession(t, dir, "run-stop")
			if rec.StopReason != c.want || rec.EndedAt == "" {
				t.Errorf("saved record: stop_reason %q, ended_at %q", rec.StopReason, rec.EndedAt)
			}
			wantStatus := state.SessionStopped
			if session.IsSuccess(c.want) {
				wantStatus = state.SessionDone
			}
			if rec.Status != wantStatus {
				t.Errorf("status %q, want %q: a stop is never a success", rec.Status, wantStatus)
			}
			if c.iter > 0 {
				last, _ := session.LastJudgment(rec)
				if c.want != session.StoppedHalted && (last.StopReason != c.want || !strings.HasPrefix(lastResult(out), "RESULT: done ("+c.want+": ")) {
					t.Errorf("the last verdict is %q, printed %q", last.StopReason, lastResult(out))
				}
			}
			if sum.Halted() != (c.want == session.StoppedHalted) {
				t.Errorf("Halted() = %v", sum.Halted())
			}
			if _, err := os.Stat(filepath.Join(dir, "agent", "state", "evolve", ".lock")); !os.IsNotExist(err) {
				t.Errorf("the lock is left behind: %v", err)
			}
		})
	}
}

// completionJudge answers the completion question: not done the first
// time, done the second; every other kind is declined.
const completionJudge = `req=$(cat)
case "$req" in
*'"kind":"completion"'*)
  n=$(cat judged.txt 2>/dev/null || echo 0); n=$((n+1)); echo $n > judged.txt
  if [ $n -ge 2 ]; then echo '{"answer": {"done": true, "reason": "p95 is 410ms now"}}'
  else echo '{"answer": {"done": false, "reason": "p95 is 820ms"}}'; fi ;;
*) echo '{"error": "not this kind"}' ;;
esac
`

func lastResult(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "RESULT: ") {
			return lines[i]
		}
	}
	return ""
}

// A signal (the end of the context) between two cycles ends the session
// with stop reason signal; nothing more runs.
func TestRunStopsOnSignal(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, out := runSessionCtx(t, ctx, dir, Options{Session: "run-sig", MaxCycles: 10,
		AfterTick: func(tk Tick, _ *state.Session) {
			if tk.N == 2 {
				cancel()
			}
		}})
	if sum.StopReason != session.StoppedSignal || runs(t, dir) != 2 || sum.Record.Iteration != 2 {
		t.Fatalf("stop %q after %d runs, iteration %d\n%s", sum.StopReason, runs(t, dir), sum.Record.Iteration, out)
	}
	if rec := loadSession(t, dir, "run-sig"); rec.StopReason != session.StoppedSignal || rec.Status != state.SessionStopped {
		t.Errorf("saved %q %q", rec.StopReason, rec.Status)
	}
}

// A cycle that fails (here: config.json no longer valid) is a warning; the
// session goes on and the next cycle, the file repaired, runs.
func TestRunGoesOnAfterAFailedCycle(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	cfgPath := filepath.Join(dir, "config.json")
	sum, out := runSession(t, dir, Options{Session: "run-err", MaxCycles: 4,
		AfterTick: func(tk Tick, _ *state.Session) {
			switch tk.N {
			case 1:
				write(t, cfgPath, `{"domains": `)
			case 2:
				write(t, cfgPath, oneDomain)
			}
		}})
	if !strings.Contains(out, "[WARN] Cycle not run: ") || !strings.Contains(out, "the session goes on at the next tick") {
		t.Fatalf("the failed cycle is not reported:\n%s", out)
	}
	// Four cycles: one failed, three recorded.
	if runs(t, dir) != 3 || sum.Record.Iteration != 3 || sum.Cycles != 4 {
		t.Fatalf("runs %d, iterations %d, cycles %d; want 3, 3, 4\n%s", runs(t, dir), sum.Record.Iteration, sum.Cycles, out)
	}
	if sum.StopReason != session.StoppedMaxIterations {
		t.Errorf("stop reason %q", sum.StopReason)
	}
}

// The engine's minimum interval wins over a shorter --every: a tick is
// never before the engine's next instant, so no cycle is skipped as too
// soon and none runs early.
func TestRunTicksNeverBeforeTheMinimumInterval(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	_, out := runSession(t, dir, Options{Session: "run-every", MaxCycles: 3, Schedule: Every(10 * time.Minute)})
	var at []string
	for _, l := range ledger(t, dir) {
		if l.Target == "health" {
			at = append(at, l.Timestamp)
		}
	}
	want := "2026-03-02T09:00:00Z 2026-03-02T09:30:00Z 2026-03-02T10:00:00Z"
	if strings.Join(at, " ") != want {
		t.Errorf("cycles at %v, want %s", at, want)
	}
	if strings.Contains(out, "Too soon") {
		t.Errorf("a tick came too soon:\n%s", out)
	}
	// Said at the start: "every 10m" alone reads as a promise.
	if !strings.Contains(out, "[Run] safety.min_cycle_interval_minutes is 30: a cycle runs at most every 30m0s, not every 10m0s.") {
		t.Errorf("the minimum interval was not told:\n%s", out)
	}
	// A longer --every is kept as it is, and nothing is said.
	dir = project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	_, out = runSession(t, dir, Options{Session: "run-every", MaxCycles: 2, Schedule: Every(2 * time.Hour)})
	if strings.Contains(out, "min_cycle_interval_minutes") {
		t.Errorf("told with a longer schedule:\n%s", out)
	}
	if l := ledger(t, dir); l[len(l)-1].Timestamp != "2026-03-02T11:00:00Z" {
		t.Errorf("second cycle at %s, want 11:00", l[len(l)-1].Timestamp)
	}
}

// A cron schedule runs at the instants it names; the first is the first
// after the start.
func TestRunOnACronSchedule(t *testing.T) {
	c, err := ParseCron("CRON_TZ=UTC 15 */2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	runSession(t, dir, Options{Session: "run-cron", MaxCycles: 3, Schedule: c})
	var at []string
	for _, l := range ledger(t, dir) {
		if l.Target == "health" {
			at = append(at, l.Timestamp)
		}
	}
	want := "2026-03-02T10:15:00Z 2026-03-02T12:15:00Z 2026-03-02T14:15:00Z"
	if strings.Join(at, " ") != want {
		t.Errorf("cycles at %v, want %s", at, want)
	}
}

func TestParseCron(t *testing.T) {
	for _, bad := range []string{"", "* * *", "61 * * * *", "@every 5m", "* * * * * *", "0 0 30 2 *"} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("ParseCron(%q) accepted", bad)
		}
	}
	c, err := ParseCron("CRON_TZ=UTC */30 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.First(t0.Add(10 * time.Minute)); !got.Equal(t0.Add(30 * time.Minute)) {
		t.Errorf("first tick after 09:10 is %s, want 09:30", got)
	}
	if c.Interval() != 30*time.Minute {
		t.Errorf("interval %s", c.Interval())
	}
}

// A session id is a file name: one that is not a plain short name is
// refused before anything is written.
func TestRunRefusesABadSessionID(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers})
	for _, id := range []string{"../x", "a/b", ".hidden", strings.Repeat("a", 65), "a b"} {
		var out bytes.Buffer
		_, err := Run(context.Background(), Options{Project: dir, Clock: clock.NewFixed(t0), Schedule: Every(time.Hour), MaxCycles: 1, Session: id, Out: &out})
		var ue *UsageError
		if err == nil || !errorsAs(err, &ue) {
			t.Errorf("session %q: err %v, want a usage error", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agent")); !os.IsNotExist(err) {
		t.Errorf("a refused session wrote under agent/: %v", err)
	}
	if runs(t, dir) != 0 {
		t.Error("a refused session ran a cycle")
	}
}

// A resumed session's --max-cycles counts the cycles of this run: its
// limit is its iteration plus the flag.
func TestResumedSessionLimitCountsThisRun(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	runSession(t, dir, Options{Session: "run-res", MaxCycles: 2})
	sum, out := runSession(t, dir, Options{Clock: clock.NewFixed(t0.Add(5 * time.Hour)), Session: "run-res", MaxCycles: 2})
	if !sum.Resumed || sum.Record.Iteration != 4 || sum.Record.MaxIterations != 4 || sum.Cycles != 2 {
		t.Fatalf("resumed %v, iteration %d, limit %d, cycles %d\n%s", sum.Resumed, sum.Record.Iteration, sum.Record.MaxIterations, sum.Cycles, out)
	}
	if !strings.Contains(out, "[Run] Session run-res resumed at iteration 2") {
		t.Errorf("the resume is not said:\n%s", out)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// On the real clock, a HALT file that appears while the session waits for
// its next tick (an hour away) ends the session at once.
func TestRunHaltWhileWaitingEndsTheSession(t *testing.T) {
	dir := project(t, oneDomain, map[string]string{"x.sh": countRuns + delivers, "agent/state/health.json": warningAlert})
	sum, out := runSession(t, dir, Options{Clock: clock.Real{}, Session: "run-wait", MaxCycles: 5, Schedule: Every(time.Hour),
		Jitter: func(time.Duration) time.Duration { return 0 },
		AfterTick: func(tk Tick, _ *state.Session) {
			if tk.N == 1 {
				write(t, filepath.Join(dir, "agent", "safety", "HALT"), "stop\n")
			}
		}})
	if sum.StopReason != session.StoppedHalted || runs(t, dir) != 1 {
		t.Fatalf("stop %q after %d runs\n%s", sum.StopReason, runs(t, dir), out)
	}
	if !strings.Contains(out, "[HALT] The HALT file appeared while the session waited for its next cycle.") {
		t.Errorf("not said:\n%s", out)
	}
}
