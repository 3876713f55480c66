package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A state commit reads what it can before Step 6 writes its files and
// builds the commit from the files after: no private index (read-tree,
// update-index of files, write-tree, diff-tree), one check-ignore, and
// the commit holds exactly the tree `git add` of its files on top of
// the previous commit makes; the repository stays sound and clean.
func TestCommitFast_TheTreeOfGitAddWithoutAnIndex(t *testing.T) {
	dir, _ := gitProject(t, threeDomains, map[string]string{"skill.sh": stateOnlySkill})
	run(t, dir, t0, false)
	g := &gitRunner{}
	res, out := runWith(t, dir, t0.Add(time.Hour), g)
	if !res.Committed {
		t.Fatalf("not committed\n%s", out)
	}
	files := strings.Split(git(t, dir, "show", "--name-only", "--format=", "HEAD"), "\n")
	index := filepath.Join(t.TempDir(), "index")
	for _, args := range [][]string{{"read-tree", "HEAD^"}, append([]string{"add", "--"}, files...)} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	cmd := exec.Command("git", "-C", dir, "write-tree")
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "rev-parse", "HEAD^{tree}"); got != strings.TrimSpace(string(want)) {
		t.Errorf("tree %s, want %s", got, want)
	}
	for _, sub := range []string{"read-tree", "write-tree", "diff-tree", "--add"} {
		if g.count(sub) != 0 {
			t.Errorf("%s ran", sub)
		}
	}
	if n := g.count("check-ignore"); n != 1 {
		t.Errorf("%d check-ignore processes, want 1", n)
	}
	if !slices.Contains(files, "agent/state/evolve/state.json") {
		t.Errorf("committed %q", files)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if st := git(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("git status: %q", st)
	}
}
