package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/cli"
)

// dryRunConfig has two domains whose skills write their state files and
// reports, so that two real cycles leave every kind of state behind.
const dryRunConfig = `{
  "mission": "Keep the example service healthy and its tests green.",
  "domains": {
    "health": {"weight": 2.0, "primary_skill": "/scan", "fallback": true, "mission_alignment": 1.0},
    "tests": {"weight": 1.0, "primary_skill": "/check", "mission_alignment": 0.8}
  },
  "skills": {
    "/scan": {"command": ["/bin/sh", "scan.sh"]},
    "/check": {"command": ["/bin/sh", "check.sh"]}
  },
  "progressive_complexity": {"current_level": 2},
  "safety": {"skill_allowlist": ["/scan", "/check"]}
}
`

const scanScript = `cat > "$OODA_STATE_FILE" <<JSON
{"last_run": "$OODA_NOW", "status": "degraded", "alerts": [{"severity": "warning", "id": "p95", "message": "p95 820ms"}]}
JSON
printf '{"summary": "scanned", "cost_usd": 0.5, "actions": [{"title": "Cache the index", "reach": 3, "impact": 2, "confidence": 0.8, "effort": 1}]}\n' > "$OODA_REPORT"
`

const checkScript = `cat > "$OODA_STATE_FILE" <<JSON
{"last_run": "$OODA_NOW", "status": "passed"}
JSON
`

// oodaInProcess runs the CLI in this process; the dry run needs no
// process of its own, and in-process the race detector sees all of it.
func oodaInProcess(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// entry is what must not change about a file or directory.
type entry struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

func snapshotTree(t *testing.T, root string) map[string]entry {
	t.Helper()
	snap := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{mode: info.Mode(), mtime: info.ModTime()}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = string(b)
		}
		rel, _ := filepath.Rel(root, p)
		snap[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffTrees(t *testing.T, before, after map[string]entry) {
	t.Helper()
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s was removed", p)
		case a.data != b.data:
			t.Errorf("%s was rewritten:\n--- before\n%s\n--- after\n%s", p, b.data, a.data)
		case a.mode != b.mode:
			t.Errorf("%s changed mode from %v to %v", p, b.mode, a.mode)
		case !a.mtime.Equal(b.mtime):
			t.Errorf("%s was touched (mtime %v → %v)", p, b.mtime, a.mtime)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	// Two real cycles build a project with state, lens files, a ledger,
	// metrics, outcomes and a changelog; each case then copies it and
	// puts it in a situation where a real cycle would write something.
	tmpl := t.TempDir()
	writeFile(t, filepath.Join(tmpl, "config.json"), dryRunConfig)
	writeFile(t, filepath.Join(tmpl, "scan.sh"), scanScript)
	writeFile(t, filepath.Join(tmpl, "check.sh"), checkScript)
	for _, now := range []string{at(0), at(time.Hour)} {
		if out, errOut, code := oodaInProcess(t, "cycle", "--project", tmpl, "--now", now); code != 0 {
			t.Fatalf("setup cycle at %s: exit %d\n%s%s", now, code, out, errOut)
		}
	}
	evolve := func(dir, name string) string { return filepath.Join(dir, "agent", "state", "evolve", name) }
	// A memo a real cycle would consume.
	writeFile(t, evolve(tmpl, "memos.json"), `{"schema_version": "1.1.0", "score_adjustments": {"tests": 3.5}, "interventions": [], "history": [], "last_memo": null}`+"\n")

	for _, tc := range []struct {
		name  string
		now   string
		setup func(t *testing.T, dir string)
		note  string // expected in notes, when the case is one a dry run ignores
	}{
		{name: "after_two_cycles", now: at(2 * time.Hour)},
		{name: "too_soon", now: at(time.Hour + 5*time.Minute), note: "too_soon ignored for dry run"},
		{name: "new_utc_day", now: at(26 * time.Hour), note: "cost ledger reset for a new UTC day"},
		{name: "crashed_cycle_and_stale_lock", now: at(3 * time.Hour), setup: func(t *testing.T, dir string) {
			b, err := os.ReadFile(evolve(dir, "state.json"))
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Replace(b, []byte(`"cycle_in_progress": false`), []byte(`"cycle_in_progress": true`), 1)
			writeFile(t, evolve(dir, "state.json"), string(b))
			writeFile(t, evolve(dir, ".lock"), `{"pid": 999999, "host": "elsewhere.invalid", "started_at": "`+at(time.Hour)+`"}`)
		}},
		{name: "corrupt_memos", now: at(2 * time.Hour), note: "corrupt state file: memos.json", setup: func(t *testing.T, dir string) {
			writeFile(t, evolve(dir, "memos.json"), `{"score_adjustments": {`)
		}},
		{name: "domain_without_lens", now: at(2 * time.Hour), setup: func(t *testing.T, dir string) {
			cfg := strings.Replace(dryRunConfig, `"tests": {`, `"docs": {"weight": 0.5, "primary_skill": "/check"},
    "tests": {`, 1)
			writeFile(t, filepath.Join(dir, "config.json"), cfg)
		}},
		{name: "fresh_project", now: at(0), note: "first_cycle ignored for dry run", setup: func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "agent")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			// A file system with coarse timestamps could hide a rewrite
			// made within the same tick as the setup.
			time.Sleep(20 * time.Millisecond)
			before := snapshotTree(t, dir)

			out, errOut, code := oodaInProcess(t, "cycle", "--dry-run", "--json", "--project", dir, "--now", tc.now)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			diffTrees(t, before, snapshotTree(t, dir))

			if err := exactlyOneJSON([]byte(out)); err != nil {
				t.Fatalf("stdout: %v\n%s", err, out)
			}
			var doc struct {
				Status string `json:"status"`
				Result string `json:"result"`
				Scores []struct {
					Domain string   `json:"domain"`
					Score  *float64 `json:"score"`
				} `json:"scores"`
				Winner *struct {
					Skill string `json:"skill"`
				} `json:"winner"`
				Notes []string `json:"notes"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Status != "dry_run" || doc.Result != "dry-run" {
				t.Errorf("status %q, result %q; want dry_run, dry-run", doc.Status, doc.Result)
			}
			if len(doc.Scores) == 0 || doc.Scores[0].Score == nil {
				t.Errorf("no score table in the dry run:\n%s", out)
			}
			if doc.Winner == nil {
				t.Errorf("no winner in the dry run:\n%s", out)
			}
			if tc.note != "" && !strings.Contains(strings.Join(doc.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", doc.Notes, tc.note)
			}
			if !strings.Contains(errOut, "[Dry-run] No changes applied") {
				t.Errorf("stderr lacks the dry-run line:\n%s", errOut)
			}
		})
	}
}
