package state_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	state.SetHelperCycle(func(root string, now time.Time) error {
		_, err := engine.RunCycle(context.Background(), engine.Options{Project: root, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: os.Stdout})
		return err
	})
}

// crashConfig is a project of two domains whose skill is the built-in
// noop, run every hour, without commits.
const crashConfig = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "api": {"weight": 1.0, "primary_skill": "/noop", "fallback": true, "mission_alignment": 1.0},
    "web": {"weight": 0.5, "primary_skill": "/noop", "mission_alignment": 1.0}
  },
  "skills": {"/noop": {"builtin": "noop"}},
  "safety": {"skill_allowlist": ["/noop"], "min_cycle_interval_minutes": 0},
  "saturation": {"auto_halt": false},
  "git": {"commit_state": false}
}
`

var crashT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func crashCycle(t *testing.T, dir string, now time.Time) string {
	t.Helper()
	var out bytes.Buffer
	res, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: &out})
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("cycle at %s: %+v, %v\n%s", now.Format(time.RFC3339), res, err, out.String())
	}
	return out.String()
}

// recordFiles is the bytes of the files a cycle writes in its record's
// batch — under agent/state/, every file but state.json, the lock, the
// cycle log and runs/ — by path relative to agent/state/. Temporary
// files are not among them.
func recordFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	root := filepath.Join(dir, "agent", "state")
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch name := d.Name(); {
		case d.IsDir() && name == "runs":
			return filepath.SkipDir
		case d.IsDir(), tempName.MatchString(name), name == state.StateFile, name == state.LockFile, strings.HasSuffix(name, ".jsonl"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".json") && !json.Valid(b) {
			t.Errorf("%s is not valid JSON after the kill:\n%s", p, b)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var tempName = regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if tempName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// copyDir copies the regular files and directories of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A real cycle killed by SIGKILL between two files of its record's batch
// — after the first file is renamed into place, after the second, and so
// on to the last — leaves state.json as the cycle's start wrote it (the
// previous cycle's count, cycle_in_progress set), so the next cycle
// reports the crash, reuses the number and records it, as after a crash
// between two single writes.
func TestBatch_SIGKILLBetweenTwoFilesIsRecoveredByTheNextCycle(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "config.json"), []byte(crashConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	crashCycle(t, base, crashT0)
	crashCycle(t, base, crashT0.Add(time.Hour))
	before := recordFiles(t, base)

	kills := 0
	for after := 1; ; after++ {
		dir := t.TempDir()
		copyDir(t, base, dir)
		evolve := filepath.Join(dir, "agent", "state", "evolve")
		cmd := state.HelperCommand(t, "cycle-killed-in-batch", "OODA_PROJECT="+dir, "OODA_KILL_AFTER="+strconv.Itoa(after),
			"OODA_HELPER_NOW="+crashT0.Add(2*time.Hour).Format(time.RFC3339))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			if kills < 2 || !strings.Contains(string(out), "NOT KILLED: <nil>") {
				t.Fatalf("after %d files the cycle was not killed in its batch: %v\n%s", after, err, out)
			}
			break
		}
		kills++

		var st state.State
		if b, err := os.ReadFile(filepath.Join(evolve, state.StateFile)); err != nil || json.Unmarshal(b, &st) != nil {
			t.Fatalf("killed after %d files: state.json: %v\n%s", after, err, b)
		}
		if st.CycleCount != 2 || !st.CycleInProgress {
			t.Fatalf("killed after %d files: state.json has cycle_count %d, cycle_in_progress %v; want 2 and true", after, st.CycleCount, st.CycleInProgress)
		}
		var changed []string
		for name, b := range recordFiles(t, dir) {
			if before[name] != b {
				changed = append(changed, name)
			}
		}
		if len(changed) != after || len(tempFiles(t, evolve)) == 0 {
			t.Fatalf("killed after %d files: changed %v, temporary files %v", after, changed, tempFiles(t, evolve))
		}

		r := crashCycle(t, dir, crashT0.Add(3*time.Hour))
		for _, want := range []string{"Stale lock detected", "Cycle #3 did not complete (crash/kill detected).", "Last completed: #2", "[Record] Cycle #3 recorded"} {
			if !strings.Contains(r, want) {
				t.Errorf("killed after %d files: the recovering cycle's output lacks %q\n%s", after, want, r)
			}
		}
		st = state.State{}
		if b, err := os.ReadFile(filepath.Join(evolve, state.StateFile)); err != nil || json.Unmarshal(b, &st) != nil {
			t.Fatalf("state.json after recovery: %v\n%s", err, b)
		}
		if st.CycleCount != 3 || st.CycleInProgress {
			t.Errorf("killed after %d files: after recovery state.json has cycle_count %d, cycle_in_progress %v; want 3 and false", after, st.CycleCount, st.CycleInProgress)
		}
		if left := tempFiles(t, evolve); len(left) > 0 {
			t.Errorf("killed after %d files: temporary files left after recovery: %v", after, left)
		}
		// The killed cycle's entry may be there already (docs/state.md:
		// files written before state.json may hold the interrupted
		// cycle's entries); the recovering cycle's is the newest.
		if cl := recordFiles(t, dir)["evolve/CHANGELOG.md"]; !strings.HasPrefix(cl[max(0, strings.Index(cl, "## Cycle #")):], "## Cycle #3 ") {
			t.Errorf("killed after %d files: the newest CHANGELOG.md entry is not cycle #3:\n%s", after, cl)
		}
	}
}
