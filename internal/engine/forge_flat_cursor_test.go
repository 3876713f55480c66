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
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/skills"
)

const flatCfg = `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
  "skills": {"/fix": {"command": ["/bin/sh", "-c", "true"]}},
  "git": {"commit_state": false}}`

// newGitForge is the forge of a new process.
func newGitForge(t *testing.T, dir string) *forge.Git {
	t.Helper()
	fg, err := forge.NewGit(forge.GitOptions{Dir: dir, BranchPrefixes: []string{"auto/fix/"}})
	if err != nil {
		t.Fatal(err)
	}
	return fg
}

// A cycle reads of the default branch only what it gained since the
// cycle before: the cursor the first cycle saved lets the second find a
// new squash merge although the oldest commit of the history can no
// longer be read (a whole scan fails on it). A dry run saves no cursor.
func TestStep1B_GitForgeReadsOnlyTheNewHistory(t *testing.T) {
	dir, _ := gitProject(t, flatCfg, nil)
	root := git(t, dir, "rev-parse", "HEAD")
	for _, c := range []string{"a", "b", "c"} {
		write(t, filepath.Join(dir, c+".txt"), c+"\n")
		git(t, dir, "add", c+".txt")
		git(t, dir, "commit", "--quiet", "-m", c)
	}
	git(t, dir, "push", "--quiet", "origin", "main")
	cursor := filepath.Join(dir, "agent", "state", "evolve", "forge_cursor.json")

	var out bytes.Buffer
	if _, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(t0), Registry: skills.Registry(),
		Out: &out, Forge: newGitForge(t, dir), DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(cursor); !os.IsNotExist(err) {
		t.Fatalf("a dry run saved the forge cursor (%v)\n%s", err, out.String())
	}

	_, out1 := runForge(t, dir, t0, newGitForge(t, dir))
	if _, err := os.Stat(cursor); err != nil {
		t.Fatalf("no cursor after a cycle: %v\n%s", err, out1)
	}

	git(t, dir, "checkout", "--quiet", "-b", "auto/fix/tidy")
	write(t, filepath.Join(dir, "tidy.txt"), "tidy\n")
	git(t, dir, "add", "tidy.txt")
	git(t, dir, "commit", "--quiet", "-m", "Tidy up")
	git(t, dir, "checkout", "--quiet", "main")
	git(t, dir, "merge", "--quiet", "--squash", "auto/fix/tidy")
	git(t, dir, "commit", "--quiet", "-m", "Tidy up (branch auto/fix/tidy)", "-m", "Ooda-Branch: auto/fix/tidy")
	git(t, dir, "branch", "--quiet", "-D", "auto/fix/tidy")
	if err := os.Remove(filepath.Join(dir, ".git", "objects", root[:2], root[2:])); err != nil {
		t.Fatal(err)
	}
	if _, err := newGitForge(t, dir).Status(context.Background()); err == nil {
		t.Fatal("a whole scan read a history with a missing commit: the test proves nothing")
	}

	_, out2 := runForge(t, dir, t0.Add(time.Hour), newGitForge(t, dir))
	if !strings.Contains(out2, "0 open PRs, 1 merged, 0 closed recently (git)") || strings.Contains(out2, "[WARN]") {
		t.Errorf("second cycle:\n%s", out2)
	}
}
