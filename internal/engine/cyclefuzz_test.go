package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/skills"
)

// fuzzOuterSecret is the content of a file beside the project: a cycle
// that copies it anywhere, or writes next to it, followed a path or a
// symlink out of the project.
const fuzzOuterSecret = "outer-secret-7f3a9c1e5b"

// fuzzTargets are the files a hostile body is planted in: every evolve
// file, a domain state file, a lens and the cycle log.
var fuzzTargets = []string{
	"agent/state/evolve/state.json",
	"agent/state/evolve/confidence.json",
	"agent/state/evolve/goals.json",
	"agent/state/evolve/memos.json",
	"agent/state/evolve/action_queue.json",
	"agent/state/evolve/skill_gaps.json",
	"agent/state/evolve/metrics.json",
	"agent/state/evolve/cost_ledger.json",
	"agent/state/evolve/outcomes.json",
	"agent/state/evolve/checkpoints.json",
	"agent/state/evolve/episodes.json",
	"agent/state/evolve/principles.json",
	"agent/state/evolve/reflections.json",
	"agent/state/evolve/cascades.json",
	"agent/state/evolve/cycle_log.jsonl",
	"agent/state/a.json",
	"agent/state/a/lens.json",
	"report.json",
}

// fuzzConfig is a two-domain project whose skill copies report.json to
// $OODA_REPORT and writes its state file.
const fuzzConfig = `{
  "domains": {
    "a": {"weight": 1.0, "primary_skill": "/a", "fallback": true},
    "b": {"weight": 0.5, "primary_skill": "/b"}
  },
  "skills": {
    "/a": {"command": ["/bin/sh", "skill.sh"], "timeout": "20s"},
    "/b": {"command": ["/bin/sh", "skill.sh"], "timeout": "20s"}
  },
  "progressive_complexity": {"current_level": 2},
  "safety": {"first_cycle_observe_only": false, "min_cycle_interval_minutes": 1, "skill_allowlist": ["/a", "/b"]}
}`

// fuzzSkill hands report.json on as its report: a symlink or a FIFO
// planted there becomes a symlink or a FIFO at $OODA_REPORT.
const fuzzSkill = `#!/bin/sh
if [ -L report.json ]; then ln -sf "$(readlink -f report.json)" "$OODA_REPORT"
elif [ -p report.json ]; then rm -f "$OODA_REPORT"; mkfifo "$OODA_REPORT"
else head -c 4194304 report.json > "$OODA_REPORT" 2>/dev/null; fi
printf '{"last_run": "%s", "status": "ok"}\n' "$OODA_NOW" > "$OODA_STATE_FILE"
`

// FuzzCycle drives whole cycles — a real cycle, a second one an hour
// later, and a dry run — from a hostile config.json, a hostile body in
// one state file (or a symlink or FIFO in its place) and a hostile skill
// report, and checks the promises of docs/security.md: no panic, nothing
// written outside the project, no byte of an outside file copied in, the
// lock released, and every evolve file ooda wrote still parses.
//
// A body "symlink:TARGET" plants a symlink to TARGET (relative to the
// project) and "fifo:" a named pipe instead of a regular file.
func FuzzCycle(f *testing.F) {
	big := `{"actions": [` + strings.Repeat(`{"title": "t", "reach": 1, "impact": 1, "confidence": 1, "effort": 1},`, 2000) + `{"title": "last"}]}`
	seeds := []struct {
		cfg    string
		target int
		body   string
		report string
	}{
		{fuzzConfig, 0, `{"cycle_count": 3}`, `{"had_output": true, "summary": "ok"}`},
		{fuzzConfig, 0, `{"cycle_count": -5, "last_cycle": "2099-01-01T00:00:00Z"}`, `{}`},
		{fuzzConfig, 7, `{"schema_version": "1.0.0", "total_estimated_usd": -1e300, "entries": []}`, `{"cost_usd": 1e303}`},
		{fuzzConfig, 9, `{"checkpoints": [{"cycle": 1, "commit_sha": "--output=../outer.txt"}]}`, `{}`},
		{fuzzConfig, 3, "symlink:../outer.txt", `{}`},
		{fuzzConfig, 15, "symlink:/dev/zero", `{}`},
		{fuzzConfig, 17, "symlink:/dev/zero", `{}`},
		{fuzzConfig, 4, "fifo:", `{}`},
		{fuzzConfig, 17, "fifo:", `{}`},
		{fuzzConfig, 17, "symlink:../outer.txt", `{}`},
		{fuzzConfig, 17, "", big},
		{fuzzConfig, 17, "", `{"summary": "\u001b[2J\n[Record] forged", "actions": [{"title": "\u001b]0;x\u0007", "reach": 1e308, "impact": 1e308, "confidence": 1e308, "effort": 1e-308}]}`},
		{fuzzConfig, 14, "{\"ts\": 1}\n{not json\n", `{"pr_number": -1, "pr_created": true}`},
		{strings.Replace(fuzzConfig, `"a": {"weight": 1.0`, `"../../escaped": {"weight": 1.0`, 1), 0, `{}`, `{}`},
		{strings.Replace(fuzzConfig, `"primary_skill": "/a", "fallback": true`, `"primary_skill": "/a", "fallback": true, "state_file": "../outer.txt"`, 1), 0, `{}`, `{}`},
		{strings.Replace(fuzzConfig, `"weight": 1.0`, `"weight": 1e308`, 1), 0, `{}`, `{}`},
		{strings.Replace(fuzzConfig, `"progressive_complexity"`, `"forge": {"provider": "github", "repo": "noslash"}, "progressive_complexity"`, 1), 0, `{}`, `{}`},
		{strings.Replace(fuzzConfig, `"min_cycle_interval_minutes": 1`, `"min_cycle_interval_minutes": 1e308, "halt_file": "../HALT"`, 1), 0, `{}`, `{}`},
	}
	for _, s := range seeds {
		f.Add(s.cfg, uint8(s.target), s.body, s.report)
	}
	f.Fuzz(func(t *testing.T, cfg string, target uint8, body, report string) {
		outer := t.TempDir()
		dir := filepath.Join(outer, "proj")
		write(t, filepath.Join(outer, "outer.txt"), fuzzOuterSecret)
		write(t, filepath.Join(dir, "config.json"), cfg)
		write(t, filepath.Join(dir, "skill.sh"), fuzzSkill)
		rel := fuzzTargets[int(target)%len(fuzzTargets)]
		planted := filepath.Join(dir, rel)
		if rel != "report.json" {
			write(t, filepath.Join(dir, "report.json"), report)
		}
		if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(body, "symlink:"):
			if err := os.Symlink(strings.TrimPrefix(body, "symlink:"), planted); err != nil {
				t.Skip(err)
			}
		case strings.HasPrefix(body, "fifo:"):
			if err := syscall.Mkfifo(planted, 0o644); err != nil {
				t.Skip(err)
			}
		default:
			write(t, planted, body)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for i, step := range []struct {
			at  time.Time
			dry bool
		}{{t0, false}, {t0.Add(time.Hour), false}, {t0.Add(2 * time.Hour), true}} {
			var out bytes.Buffer
			_, err := RunCycle(ctx, Options{Project: dir, Clock: clock.NewFixed(step.at), DryRun: step.dry, Registry: skills.Registry(), Out: &out})
			var cerr *config.Error
			if err != nil && !errors.As(err, &cerr) {
				t.Fatalf("cycle %d: %v\n%s", i+1, err, out.String())
			}
			if strings.Contains(out.String(), fuzzOuterSecret) {
				t.Fatalf("cycle %d printed the bytes of a file outside the project:\n%s", i+1, out.String())
			}
			if ctx.Err() != nil {
				t.Fatalf("cycle %d did not end: %v", i+1, ctx.Err())
			}
		}

		// Nothing beside the project changed.
		entries, err := os.ReadDir(outer)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "proj" && e.Name() != "outer.txt" {
				t.Errorf("a cycle wrote %s outside the project", filepath.Join(outer, e.Name()))
			}
		}
		if b, err := os.ReadFile(filepath.Join(outer, "outer.txt")); err != nil || string(b) != fuzzOuterSecret {
			t.Errorf("the file outside the project was changed: %q, %v", b, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "agent/state/evolve/.lock")); err == nil {
			t.Errorf("the lock was left behind")
		}
		// Every file ooda wrote under agent/state parses; no file holds
		// the outside bytes. A file still byte-identical to the planted
		// body is the attacker's, not ooda's.
		_ = filepath.WalkDir(filepath.Join(dir, "agent"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return nil
			}
			if bytes.Contains(b, []byte(fuzzOuterSecret)) {
				t.Errorf("%s holds the bytes of a file outside the project", p)
			}
			if p == planted && string(b) == body {
				return nil
			}
			name := d.Name()
			switch {
			case strings.Contains(name, ".corrupt"), strings.HasPrefix(name, "."):
			case strings.HasSuffix(name, ".report.json"):
				// A report is the skill's file, not ooda's.
			case strings.HasSuffix(name, ".jsonl"):
				for n, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
					if p == planted && strings.Contains(body, string(line)) {
						continue
					}
					if len(line) > 0 && !json.Valid(line) {
						t.Errorf("%s line %d does not parse: %.200s", p, n+1, line)
					}
				}
			case strings.HasSuffix(name, ".json"):
				if !json.Valid(b) {
					t.Errorf("%s does not parse after the cycles: %.200s", p, b)
				}
			}
			return nil
		})
	})
}
