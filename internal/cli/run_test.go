package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/session/runner"
)

// runProjectConfig is a one-domain project whose skill is x.sh; the first
// cycle acts.
const runProjectConfig = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/x", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/x": {"command": ["/bin/sh", "x.sh"]}},
  "forge": {"provider": "none"},
  "safety": {"skill_allowlist": ["/x"], "min_cycle_interval_minutes": 30, "first_cycle_observe_only": false}
}`

func runProject(t *testing.T, skill string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"config.json": runProjectConfig, "x.sh": skill} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const deliverSkill = `printf '{"had_output": true}' > "$OODA_REPORT"` + "\n"

// runHelperEnv makes the test binary run `ooda` with the arguments it
// holds (a JSON array) instead of the tests: a real process to signal.
const runHelperEnv = "OODA_CLI_RUN_HELPER_ARGS"

func TestRunHelperProcess(t *testing.T) {
	raw := os.Getenv(runHelperEnv)
	if raw == "" {
		t.Skip("a helper process of TestRunSIGTERMDuringASkill")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(100)
	}
	os.Exit(Main(args, strings.NewReader(""), os.Stdout, os.Stderr))
}

// waitFor polls for a file a process writes once it is running; limit
// only keeps a broken test from hanging (it is not what is tested).
func waitFor(t *testing.T, p string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %s", p, limit)
	return ""
}

// alive reports whether pid is a process that has not exited: a zombie
// waiting to be reaped by init (an orphan that was stopped) is not.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if rerr != nil {
		return true
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// SIGTERM while a skill runs: the skill and its own children are stopped,
// the lock is released, the session is recorded with stop reason
// "signal", and `ooda run` exits 0.
func TestRunSIGTERMDuringASkill(t *testing.T) {
	// The skill starts a child of its own and waits on it: both must go.
	dir := runProject(t, `echo $$ > skill.pid
sleep 300 &
echo $! > child.pid
wait
`)
	args, _ := json.Marshal([]string{"--project", dir, "run", "--every", "1s", "--max-cycles", "3", "--session", "run-term"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), runHelperEnv+"="+string(args), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	skill, _ := strconv.Atoi(waitFor(t, filepath.Join(dir, "skill.pid"), time.Minute))
	child, _ := strconv.Atoi(waitFor(t, filepath.Join(dir, "child.pid"), time.Minute))
	lock := filepath.Join(dir, "agent", "state", "evolve", ".lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no lock while the skill runs: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("ooda run did not end after SIGTERM\n%s", out.String())
	}
	if err != nil {
		t.Fatalf("ooda run: %v (want exit 0)\n%s", err, out.String())
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the lock is left behind: %v", err)
	}
	for name, pid := range map[string]int{"skill": skill, "skill's child": child} {
		if pid <= 0 || alive(pid) {
			t.Errorf("the %s (pid %d) still runs", name, pid)
		}
	}
	b, rerr := os.ReadFile(filepath.Join(dir, "agent", "state", "evolve", "sessions", "run-term.json"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	var rec struct {
		Status     string `json:"status"`
		StopReason string `json:"stop_reason"`
		EndedAt    string `json:"ended_at"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.StopReason != "signal" || rec.Status != "stopped" || rec.EndedAt == "" {
		t.Errorf("session record: %+v", rec)
	}
	if !strings.Contains(out.String(), "Session run-term stopped: signal") {
		t.Errorf("no summary:\n%s", out.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := runProject(t, deliverSkill)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--every", "1h", "--cron", "0 * * * *"}, "--every and --cron cannot be used together"},
		{[]string{"--forever", "--max-cycles", "5"}, "--forever and --max-cycles cannot be used together"},
		{[]string{"--max-cycles", "0"}, "--max-cycles 0: give at least 1"},
		{[]string{"--every", "10ms"}, "the interval must be at least 1s"},
		{[]string{"--cron", "every hour"}, "--cron: \"every hour\" is not a five-field cron expression"},
		{[]string{"--session", "../x"}, "--session: "},
		{[]string{"--unquarantine", "a\nb"}, "--unquarantine"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		code, out, errOut := run(t, dir, append([]string{"run", "--now", "2026-03-02T09:00:00Z"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("ooda run %v: exit %d, stderr %q; want exit 2 saying %q\n%s", c.args, code, errOut, c.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agent")); !os.IsNotExist(err) {
		t.Errorf("a refused command line wrote state: %v", err)
	}
}

// --json prints exactly one document on stdout, the determine_log of the
// session included; the cycles' lines go to stderr.
func TestRunJSON(t *testing.T) {
	dir := runProject(t, deliverSkill)
	code, out, errOut := run(t, dir, "run", "--json", "--now", "2026-03-02T09:00:00Z", "--max-cycles", "2", "--session", "run-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one document on stdout:\n%s", out)
	}
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	if len(keys) != 5 {
		t.Errorf("keys %v, want session, cycles, stop_reason, determine, quarantined", keys)
	}
	var d struct {
		Session     string           `json:"session"`
		Cycles      int              `json:"cycles"`
		StopReason  string           `json:"stop_reason"`
		Determine   []map[string]any `json:"determine"`
		Quarantined []string         `json:"quarantined"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Session != "run-json" || d.Cycles != 2 || d.StopReason != "done_no_work" || len(d.Determine) != 2 || d.Quarantined == nil {
		t.Errorf("document %+v", d)
	}
	if !strings.Contains(errOut, "RESULT: done (done_no_work: ") || !strings.Contains(errOut, "[Record] Cycle #2 recorded") {
		t.Errorf("the cycles' lines are not on stderr:\n%s", errOut)
	}
}

// HALT ends a session with exit 3, as it does a cycle.
func TestRunHaltedExits3(t *testing.T) {
	dir := runProject(t, "echo ran >> ran.txt\n"+deliverSkill)
	if code, out, errOut := run(t, dir, "halt", "maintenance"); code != 0 {
		t.Fatalf("halt: %d %s %s", code, out, errOut)
	}
	code, out, errOut := run(t, dir, "run", "--json", "--now", "2026-03-02T09:00:00Z", "--session", "run-halt")
	if code != ExitHalted {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `"stop_reason": "halted"`) || !strings.Contains(errOut, "[HALT] Agent stopped. Reason: maintenance") {
		t.Errorf("stdout %s\nstderr %s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !os.IsNotExist(err) {
		t.Error("the skill ran under HALT")
	}
}

// On a terminal the status line names the session, the cycle and the step
// running, and every line the cycle prints goes above it.
func TestRunProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgressLine(&b, present.Style{Terminal: true, Width: 200})
	p.setTick(runner.Tick{N: 1, Session: "run-x", Iteration: 3, Max: 10})
	p.Write([]byte("[Act] /x starting...\n"))
	p.Write([]byte("[Record] Cycle #3 recorded.\n"))
	p.close()
	got := b.String()
	for _, want := range []string{
		"[Act] /x starting...\n⟳ session run-x · cycle 3/10 · Act · 0s elapsed\r\x1b[K[Record] Cycle #3 recorded.\n⟳ session run-x · cycle 3/10 · Record · 0s elapsed\r\x1b[K",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output %q does not hold %q", got, want)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the status line is not cleared at the end: %q", got)
	}
}

// Step 7 in a session: every cycle that ran ends with its Cycle Card, as
// `ooda cycle`'s does, before the session's verdict on it; a skip has
// none, and output.cycle_card false turns the cards off.
func TestRunPrintsTheCycleCardOfEachCycle(t *testing.T) {
	dir := runProject(t, deliverSkill)
	code, out, errOut := run(t, dir, "run", "--now", "2026-03-02T09:00:00Z", "--max-cycles", "2", "--session", "cards")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []string{"1", "2"} {
		head := "· ooda cycle #" + c + " · "
		i := strings.Index(out, head)
		if i < 0 {
			t.Fatalf("no card for cycle %s:\n%s", c, out)
		}
		if j := strings.Index(out[i:], "RESULT: "); j < 0 || !strings.Contains(out[i:i+j], "\nDECIDE    health won") {
			t.Errorf("cycle %s's card does not come before its verdict:\n%s", c, out)
		}
	}
	cfg := strings.Replace(runProjectConfig, `"forge": {"provider": "none"},`, `"forge": {"provider": "none"}, "output": {"cycle_card": false},`, 1)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, dir, "run", "--now", "2026-03-02T10:00:00Z", "--max-cycles", "1", "--session", "nocards")
	if code != 0 || strings.Contains(out, "· ooda cycle #") || !strings.Contains(out, "[Record] Cycle #3 recorded") {
		t.Errorf("output.cycle_card false: exit %d\n%s\n%s", code, out, errOut)
	}
}
