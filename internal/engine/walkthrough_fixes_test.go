package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// walkSkills replaces the /only skill's entry of a firstProject config.
func walkSkills(t *testing.T, dir, skills string) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	cfg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const old = `{"/only": {"command": ["/bin/sh", "skill.sh"]}}`
	if !bytes.Contains(cfg, []byte(old)) {
		t.Fatalf("no skills entry to replace in\n%s", cfg)
	}
	if err := os.WriteFile(p, bytes.Replace(cfg, []byte(old), []byte(skills), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func walkRead(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// `go test` aligns its summary with tabs: the last lines of a failed skill
// showed them as "FAIL\tgithub.com/...\t0.015s". They are spaces now, up
// to the next tab stop; other control characters are still escaped.
func TestWalkthrough_FailureTailShowsTabsAsSpaces(t *testing.T) {
	dir := firstProject(t, "", `printf -- '--- FAIL: TestPlanted (0.00s)\n\tplanted_test.go:13: want 3\nFAIL\n'
printf 'FAIL\tgithub.com/spf13/pflag\t0.015s\n'
printf 'bell\a\tend\n'
exit 1
`)
	res, out := firstRun(t, dir, t0)
	if res.ExitCode() != 4 {
		t.Fatalf("%+v\n%s", res, out)
	}
	for _, want := range []string{
		"  |         planted_test.go:13: want 3\n",
		"  | FAIL    github.com/spf13/pflag  0.015s\n",
		// An escape is as wide as it is shown: "bell\x07" fills the
		// first tab stop.
		`  | bell\x07        end` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, `\t`) || strings.Contains(out, "\t") {
		t.Errorf("a tab is printed escaped or raw:\n%s", out)
	}
}

// A failed cycle's CHANGELOG entry said only "Result: error (error)": it
// says why and where the log is. What is recorded (the entry, the
// decision log, the skill gap) has no path of this machine's: the
// project's own are relative to it. The printed message keeps them.
func TestWalkthrough_AFailureIsRecordedWithoutTheMachinesPaths(t *testing.T) {
	dir := firstProject(t, "", "")
	walkSkills(t, dir, `{"/only": {"command": ["./scripts/missing.sh"]}}`)
	res, out := firstRun(t, dir, t0)
	if res.ExitCode() != 4 {
		t.Fatalf("%+v\n%s", res, out)
	}
	abs := filepath.Join(dir, "scripts", "missing.sh")
	if !strings.Contains(out, "[Act] /only failed: cannot start ./scripts/missing.sh: fork/exec "+abs+": ") {
		t.Errorf("the printed message changed:\n%s", out)
	}
	const recorded = "cannot start ./scripts/missing.sh: fork/exec scripts/missing.sh: no such file or directory (no such file: the path is relative to the project root)"
	changelog := walkRead(t, dir, "agent/state/evolve/CHANGELOG.md")
	if !strings.Contains(changelog, "- **Result**: error (error)\n- **Error**: "+recorded+" (log: agent/state/evolve/runs/1-only.log)\n") {
		t.Errorf("CHANGELOG:\n%s", changelog)
	}
	if got := firstLastEntry(t, dir)["error"]; got != recorded {
		t.Errorf("decision log error %q, want %q", got, recorded)
	}
	for _, f := range []string{"agent/state/evolve/CHANGELOG.md", "agent/state/evolve/state.json", "agent/state/evolve/skill_gaps.json"} {
		if body := walkRead(t, dir, f); strings.Contains(body, dir) {
			t.Errorf("%s holds the project's absolute path %s:\n%s", f, dir, body)
		}
	}
	if gaps := walkRead(t, dir, "agent/state/evolve/skill_gaps.json"); !strings.Contains(gaps, "fork/exec scripts/missing.sh") {
		t.Errorf("skill_gaps.json:\n%s", gaps)
	}

	// A skill that ran and failed: its exit status and its log.
	dir = firstProject(t, "", "echo broken >&2\nexit 3\n")
	firstRun(t, dir, t0)
	if changelog := walkRead(t, dir, "agent/state/evolve/CHANGELOG.md"); !strings.Contains(changelog, "- **Error**: exit status 3 (log: agent/state/evolve/runs/1-only.log)\n") {
		t.Errorf("CHANGELOG:\n%s", changelog)
	}
}

// A skill that never started was charged the default $0.02: nothing ran,
// so it costs nothing. A skill that ran and failed costs what its report
// says, or the default without one.
func TestWalkthrough_ASkillThatDidNotStartCostsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, skills, script string
		setup                func(dir string)
		want                 float64
	}{
		{"missing", `{"/only": {"command": ["./scripts/missing.sh"]}}`, "", nil, 0},
		{"not executable", `{"/only": {"command": ["./skill.sh"]}}`, "#!/bin/sh\nexit 0\n", nil, 0},
		{"not in PATH", `{"/only": {"command": ["ooda-no-such-program-anywhere"]}}`, "", nil, 0},
		{"failed without a report", "", "exit 1\n", nil, 0.02},
		{"failed with a report", "", `printf '{"cost_usd": 0.5}' > "$OODA_REPORT"` + "\nexit 1\n", nil, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := firstProject(t, "", tc.script)
			if tc.skills != "" {
				walkSkills(t, dir, tc.skills)
			}
			res, out := firstRun(t, dir, t0)
			if res.ExitCode() != 4 {
				t.Fatalf("%+v\n%s", res, out)
			}
			var l state.CostLedger
			readJSON(t, filepath.Join(dir, "agent/state/evolve/cost_ledger.json"), &l)
			if len(l.Entries) != 1 || l.Entries[0].EstimatedUSD != tc.want || l.TotalEstimatedUSD != tc.want {
				t.Errorf("ledger %+v, want $%v\n%s", l, tc.want, out)
			}
			if got := firstLastEntry(t, dir)["cost_usd"]; got != tc.want {
				t.Errorf("decision log cost_usd %v, want %v", got, tc.want)
			}
		})
	}
}

// A command skill whose program is missing was reported only when its
// domain won, hours later. Every cycle now warns first, one line per
// skill, naming it, the path and the fix, and runs on: the domain that
// wins here is another one.
func TestWalkthrough_EveryCycleWarnsOfAMissingProgram(t *testing.T) {
	dir := t.TempDir()
	cfg := `{
  "domains": {
    "big":   {"weight": 5, "primary_skill": "/big", "fallback": true},
    "small": {"weight": 0.1, "primary_skill": "/small"}
  },
  "skills": {
    "/big":   {"command": ["/bin/sh", "-c", "echo ok"]},
    "/small": {"command": ["./scripts/small.sh"]},
    "/plain": {"command": ["./scripts/plain.sh"]}
  },
  "progressive_complexity": {"current_level": 2},
  "saturation": {"auto_halt": false},
  "safety": {"skill_allowlist": ["/big", "/small", "/plain"], "first_cycle_observe_only": false, "min_cycle_interval_minutes": 0}
}`
	write(t, filepath.Join(dir, "config.json"), cfg)
	write(t, filepath.Join(dir, "scripts", "plain.sh"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(dir, "scripts", "plain.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	missing := "[WARN] " + cfgPath + `: /skills/~1small/command/0: skill /small: "./scripts/small.sh" does not exist (looked for ` +
		filepath.Join(dir, "scripts", "small.sh") + "; a relative command is taken relative to the project root): write it there, or correct the path (a cycle that runs the skill fails until then)\n"
	plain := "[WARN] " + cfgPath + `: /skills/~1plain/command/0: skill /plain: "./scripts/plain.sh" is not executable: make it so with ` +
		"`chmod +x " + filepath.Join(dir, "scripts", "plain.sh") + "` (a cycle that runs the skill fails until then)\n"
	for i, dry := range []bool{true, false} {
		var buf bytes.Buffer
		res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(t0.Add(time.Duration(i) * time.Hour)), Registry: skills.Registry(), Out: &buf, DryRun: dry})
		out := buf.String()
		if err != nil || res.ExitCode() != 0 {
			t.Fatalf("cycle %d: %v %+v\n%s", i+1, err, res, out)
		}
		if !strings.HasPrefix(out, plain+missing) {
			t.Errorf("cycle %d (dry run %v): the warnings do not come first:\n%s", i+1, dry, out)
		}
		if strings.Count(out, "/small: ") != 1 || strings.Count(out, "/plain: ") != 1 {
			t.Errorf("cycle %d: one warning per skill:\n%s", i+1, out)
		}
	}

	// Fixed: no warning.
	write(t, filepath.Join(dir, "scripts", "small.sh"), "#!/bin/sh\nexit 0\n")
	for _, p := range []string{"small.sh", "plain.sh"} {
		if err := os.Chmod(filepath.Join(dir, "scripts", p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, out := run(t, dir, t0.Add(2*time.Hour), false); strings.Contains(out, "[WARN]") {
		t.Errorf("a warning once fixed:\n%s", out)
	}
}
