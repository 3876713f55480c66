package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// commitState is Step 6-D: when the project is a git repository and
// git.commit_state is on, commit exactly the state files this cycle wrote
// (never `git add -A`), then push if a remote exists. Nothing here can fail
// the cycle: every problem is a warning.
func (c *cycle) commitState(ctx context.Context, f record.Facts, resultType string) {
	if !c.cfg.CommitState() {
		return
	}
	repo, ok := c.openRepo(ctx)
	if !ok {
		if halted, _ := c.store.HaltExists(c.cfg.Safety.HaltFile); halted && !c.res.HaltCreated {
			c.printf("[WARN] State not committed: %v.", gitrepo.ErrHalted)
		}
		return
	}
	stateRel := filepath.Join("agent", "state", "evolve", state.StateFile)
	if repo.Ignored(ctx, stateRel) {
		c.printf("[WARN] ==> %s is ignored by git: the loop's history is NOT being committed. Remove agent/state/ from .gitignore (keep only the lock and the HALT file there), or set git.commit_state to false to silence this. <==", stateRel)
		return
	}
	if why, busy := repo.Busy(ctx); busy {
		c.printf("[WARN] State not committed: %s in %s.", why, c.store.Root)
		return
	}
	var paths []string
	for _, p := range c.store.Written() {
		if !repo.Ignored(ctx, p) {
			paths = append(paths, p)
		}
	}
	domain := f.Domain
	if domain == "" {
		domain = "none"
	}
	msg := fmt.Sprintf("evolve: cycle #%d -- %s (%s)", f.Cycle, domain, resultType)
	committed, err := repo.CommitPaths(ctx, msg, paths)
	if err != nil {
		c.printf("[WARN] State not committed: %v", err)
		return
	}
	if !committed {
		return
	}
	c.printf("[Record] Committed %d state file(s): %s", len(paths), msg)
	c.res.Committed = true
	if !c.cfg.PushState() || !repo.HasRemote(ctx) {
		return
	}
	if err := repo.Push(ctx); err != nil {
		c.printf("[WARN] Push failed (the commit is kept locally; push it with `git push`): %s", strings.TrimSpace(err.Error()))
		return
	}
	c.res.Pushed = true
}
