package engine

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/forge"
)

// A plain-git auto-merge is a commit the cycle itself made on the branch:
// 6-D pushes it with the state commit (pushing only the loop's own
// commits must not leave the merge, and so every later state commit,
// unpushed forever).
func TestStep6D_PushesThePlainGitMergeTheCycleMade(t *testing.T) {
	cfg := `{"domains": {"fixer": {"weight": 1, "primary_skill": "/fix", "fallback": true, "branch_prefix": "auto/fix/"}},
	  "skills": {"/fix": {"command": ["/bin/sh", "fix.sh"]}},
	  "implementation": {"enabled": true},
	  "progressive_complexity": {"current_level": 3},
	  "test_command": "true",
	  "safety": {"skill_allowlist": [], "first_cycle_observe_only": false, "enable_auto_merge": true}}`
	dir, remote := gitProject(t, cfg, map[string]string{"agent/state/evolve/confidence.json": `{"fixer": 0.8}`})
	git(t, dir, "checkout", "--quiet", "-b", "auto/fix/tidy")
	write(t, filepath.Join(dir, "tidy.txt"), "tidy\n")
	git(t, dir, "add", "tidy.txt")
	git(t, dir, "commit", "--quiet", "-m", "Tidy up")
	git(t, dir, "checkout", "--quiet", "main")
	fg, err := forge.NewGit(forge.GitOptions{Dir: dir, BranchPrefixes: []string{"auto/fix/"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := fg.Status(context.Background())
	if err != nil || len(st.Open) != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	write(t, filepath.Join(dir, "fix.sh"), `printf '{"pr_number": `+strconv.Itoa(st.Open[0].Number)+`, "pr_created": true, "test_status": "passed"}' > "$OODA_REPORT"`+"\n")
	git(t, dir, "add", "fix.sh")
	git(t, dir, "commit", "--quiet", "-m", "the skill")
	git(t, dir, "push", "--quiet", "origin", "main")
	res, out := runForge(t, dir, t0, fg)
	if !res.AutoMerged || res.RolledBack {
		t.Fatalf("merged %v rolled back %v\n%s", res.AutoMerged, res.RolledBack, out)
	}
	if git(t, remote, "rev-parse", "main") != git(t, dir, "rev-parse", "HEAD") || !strings.Contains(out, "Pushed 2 commit") {
		t.Errorf("the merge and the state commit were not pushed:\n%s", out)
	}
}
