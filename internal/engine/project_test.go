package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/skills"
)

// A state directory that a merged change turned into a symlink out of the
// project stops the cycle with an error naming it — dry run or not —
// before the lock or any state file is touched outside.
func TestStep0_AStateDirectoryLeadingOutIsAProjectError(t *testing.T) {
	for _, dir := range []string{"agent/state", "agent/state/evolve"} {
		for _, dry := range []bool{false, true} {
			outer := t.TempDir()
			root := filepath.Join(outer, "proj")
			outside := filepath.Join(outer, "outside")
			write(t, filepath.Join(root, "config.json"), `{"domains": {"h": {"weight": 1, "primary_skill": "/noop", "fallback": true}},
			  "skills": {"/noop": {"builtin": "noop"}}, "safety": {"skill_allowlist": ["/noop"]}}`)
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, dir)); err != nil {
				t.Fatal(err)
			}
			_, err := RunCycle(context.Background(), Options{Project: root, Clock: clock.NewFixed(t0), DryRun: dry, Registry: skills.Registry()})
			// agent/state is caught by the config's default state_file
			// already; agent/state/evolve only here.
			var pe *ProjectError
			isProject := errors.As(err, &pe) && pe.Path == filepath.FromSlash(dir) && strings.Contains(err.Error(), "leads out of the project")
			if !isProject && !(config.IsConfigError(err) && strings.Contains(err.Error(), dir)) {
				t.Fatalf("%s symlinked out (dry run %v): err = %v, want an error naming it", dir, dry, err)
			}
			if dir == "agent/state/evolve" && !isProject {
				t.Fatalf("%s symlinked out (dry run %v): err = %v, want a ProjectError", dir, dry, err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("%s symlinked out (dry run %v): the cycle wrote %v outside the project", dir, dry, entries)
			}
		}
	}
}
