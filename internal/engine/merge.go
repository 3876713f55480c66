package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// Protected reports the first protected pattern a changed path matches
// (config.MatchPath: a shell glob, and "dir/*" protects the whole subtree).
func Protected(file string, patterns []string) (string, bool) {
	for _, p := range patterns {
		if config.MatchPath(p, file) {
			return p, true
		}
	}
	return "", false
}

// riskTier is 4-C: tier 1 (auto-merge) only when every condition holds,
// checked in the order of SPEC-NOTES §4, with the facts re-read from the
// forge itself; otherwise tier 3 and the first reason it failed.
func (c *cycle) riskTier(ctx context.Context, pr int, run skillRun) (int, string, forge.Facts) {
	cfg := c.cfg
	s := cfg.Safety
	if !s.EnableAutoMerge {
		return 3, "auto-merge is off (safety.enable_auto_merge)", forge.Facts{}
	}
	if cfg.ProgressiveComplex.CurrentLevel < 3 {
		return 3, fmt.Sprintf("level %d < 3", cfg.ProgressiveComplex.CurrentLevel), forge.Facts{}
	}
	if s.MaxPRsPerCycle < 1 {
		// The PR checked here is the cycle's first; only a zero limit puts
		// it over.
		return 3, "max_prs_per_cycle is 0", forge.Facts{}
	}
	if c.forge == nil {
		return 3, "no forge to re-read the PR's facts from", forge.Facts{}
	}
	fctx, cancel := c.forgeCtx(ctx)
	defer cancel()
	facts, err := c.forge.Facts(fctx, pr)
	if err != nil {
		return 3, "could not re-read the PR's facts: " + err.Error(), facts
	}
	if facts.Draft {
		return 3, "the PR is a draft", facts
	}
	for _, f := range facts.Files {
		if p, ok := Protected(f, s.ProtectedPaths); ok {
			return 3, fmt.Sprintf("%s matches protected path %s", f, p), facts
		}
	}
	if run.report != nil && run.report.ProtectedBlocked != nil && *run.report.ProtectedBlocked {
		return 3, "the skill skipped a protected path (protected_blocked)", facts
	}
	if n := max(facts.ChangedFiles, len(facts.Files)); n > s.AutoMergeMaxFiles {
		return 3, fmt.Sprintf("%d files > auto_merge_max_files %d", n, s.AutoMergeMaxFiles), facts
	}
	if lines := facts.Additions + facts.Deletions; lines > s.AutoMergeMaxLines {
		return 3, fmt.Sprintf("%d lines > auto_merge_max_lines %d", lines, s.AutoMergeMaxLines), facts
	}
	if run.report == nil || run.report.TestStatus != "passed" {
		ts := "not reported"
		if run.report != nil && run.report.TestStatus != "" {
			ts = run.report.TestStatus
		}
		return 3, "tests not green this cycle (test_status " + ts + ")", facts
	}
	return 1, "", facts
}

// postProcessPR is 4-C for a PR opened this cycle: its risk tier, and for
// tier 1 the auto-merge with its health check and automatic rollback.
func (c *cycle) postProcessPR(ctx context.Context, f *record.Facts, pr int, run skillRun) {
	tier, why, facts := c.riskTier(ctx, pr, run)
	f.RiskTier = &tier
	if tier != 1 {
		c.printf("[Act] PR #%d requires human review (Risk Tier 3: %s).", pr, why)
		return
	}
	c.printf("[Act] PR #%d Risk Tier 1 (auto-merge eligible).", pr)
	if halted, _ := c.store.HaltExists(c.cfg.Safety.HaltFile); halted {
		c.printf("[HALT] HALT file present: PR #%d is not merged.", pr)
		c.res.Status, c.res.Reason = StatusHalted, ReasonHalt
		return
	}
	c.checkpoint(ctx, "before auto-merge of PR #"+fmt.Sprint(pr))
	mctx, cancel := c.forgeCtx(ctx)
	defer cancel()
	if err := c.forge.MergeSquash(mctx, pr, facts.HeadSHA); err != nil {
		if errors.Is(err, forge.ErrHeadMoved) {
			c.printf("[Act] Auto-merge skipped: PR #%d changed after its facts were checked. It is left for a human.", pr)
			return
		}
		if errors.Is(err, forge.ErrSquashDisabled) {
			c.printf("[Act] Auto-merge skipped: enable squash-merge on the repo. PR #%d is left for a human.", pr)
		} else {
			c.printf("[WARN] Auto-merge of PR #%d failed: %v. It is left for a human.", pr, err)
		}
		return
	}
	c.res.AutoMerged = true
	repo, isRepo := c.openRepo(ctx)
	if isRepo {
		c.syncAfterMerge(ctx, repo)
		// A plain-git merge is a commit this cycle made on the branch:
		// the loop's own, to push with its state (6-D).
		c.noteOwnCommit(ctx, repo)
	}
	if err := c.healthCheck(ctx); err == nil {
		c.printf("[Act] Auto-merged PR #%d (low-risk, opt-in). Health: ok.", pr)
		return
	} else {
		c.printf("[Rollback] Health check failed after auto-merge of PR #%d: %v", pr, err)
	}
	c.rollbackMerge(ctx, repo, isRepo, pr)
}

// syncAfterMerge brings the local default branch up to the merge the forge
// made, so the health check runs the merged code and the revert of 4-C2
// reverts that merge.
func (c *cycle) syncAfterMerge(ctx context.Context, repo *gitrepo.Repo) {
	if !repo.HasRemote(ctx) {
		return
	}
	if _, err := repo.Run(ctx, "fetch", "--quiet"); err != nil {
		c.printf("[WARN] git fetch after the merge failed: %v", err)
		return
	}
	if _, err := repo.Run(ctx, "merge", "--ff-only", "--quiet", "@{upstream}"); err != nil {
		c.printf("[WARN] could not fast-forward to the merge: %v", err)
	}
}

// rollbackMerge is the automatic rollback of 4-C2: revert the squash-merge
// (a one-parent commit, so no -m), push, restore state from the checkpoint,
// and create the HALT — always, even when the push failed, and saying so.
func (c *cycle) rollbackMerge(ctx context.Context, repo *gitrepo.Repo, isRepo bool, pr int) {
	cp, _ := c.lastCheckpoint()
	pushFailed := ""
	if isRepo {
		// Revert only a HEAD that is the merge: a one-parent commit right on
		// top of the commit recorded just before merging. Anything else (the
		// fast-forward to the merge failed) must not be reverted blindly.
		// The checkpoint's commit is only compared here, never handed to
		// git; one that is not a commit id (checkpoints.json is a file
		// anyone may edit) matches nothing, so nothing is reverted.
		head, _ := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD")
		parent, _ := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^")
		head, parent = strings.TrimSpace(head), strings.TrimSpace(parent)
		switch {
		case !gitrepo.ValidSHA(cp.CommitSHA) || !gitrepo.ValidSHA(parent) || parent != cp.CommitSHA || head == cp.CommitSHA:
			pushFailed = fmt.Sprintf(" NOT REVERTED: the local HEAD (%s) is not the merge on top of %s; revert the merge of PR #%d by hand.", shortSHA(head), checkpointCommit(cp, true), pr)
			c.printf("[Rollback] ⚠ HEAD is not the merge of PR #%d; not reverting anything automatically.", pr)
		default:
			onRemote := false
			if _, err := repo.Run(ctx, "merge-base", "--is-ancestor", "HEAD", "@{upstream}"); err == nil {
				onRemote = true
			}
			if _, err := repo.Run(ctx, "revert", "--no-edit", "HEAD"); err != nil {
				pushFailed = " REVERT FAILED (" + err.Error() + ") — the bad merge is still on the branch."
			} else if repo.HasRemote(ctx) {
				// Pushed as 6-D pushes: to the current branch's upstream
				// only, and only the loop's own commits (the revert, state
				// commits), never whatever else is on HEAD.
				c.noteOwnCommit(ctx, repo)
				if _, err := repo.PushUpstream(ctx, c.ownCommit); err != nil {
					c.printf("[Rollback] ⚠ Revert committed locally but push FAILED: %v", err)
					if onRemote {
						c.printf("[Rollback] Remote still has the bad merge. Push the revert by hand: git push")
						pushFailed = " PUSH FAILED — remote still has the bad merge."
					} else {
						pushFailed = " PUSH FAILED (the merge itself was never pushed; push the revert with the next cycle or by hand)."
					}
				}
			}
		}
	} else {
		pushFailed = " The project is not a git repository: revert the merge by hand."
	}
	c.restoreCheckpoint(cp)
	reason := fmt.Sprintf("Auto-rollback: PR #%d merged but health check failed. Reverted to %s.%s", pr, checkpointCommit(cp, false), pushFailed)
	if err := c.store.WriteHalt(c.cfg.Safety.HaltFile, reason, c.now); err != nil {
		c.printf("[WARN] could not create the HALT file: %v", err)
	} else {
		c.res.HaltCreated = true
	}
	c.res.RolledBack = true
	c.printf("[Rollback] Reverted PR #%d. HALT created. Human review required.", pr)
}

// healthCheck is the post-merge check: every health endpoint answers 2xx
// within health_check_timeout_seconds, or, without endpoints, the test
// command passes.
func (c *cycle) healthCheck(ctx context.Context) error {
	cfg := c.cfg
	if len(cfg.HealthEndpoints) > 0 {
		timeout := durationOf(cfg.HealthCheckTimeout, time.Second)
		// A redirect is never followed (it could lead the check to any
		// host): a 3xx is not a 2xx, so it fails the check as it is.
		client := &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for _, raw := range cfg.HealthEndpoints {
			raw := endpointURL(raw)
			if raw == "" {
				continue
			}
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("health endpoint %s: not an http or https URL", redactURL(raw))
			}
			shown := u.Redacted()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return fmt.Errorf("%s: %v", shown, err)
			}
			resp, err := client.Do(req)
			if err != nil {
				// The client's error quotes the URL, user info and all.
				return fmt.Errorf("%s: %s", shown, strings.ReplaceAll(err.Error(), u.String(), shown))
			}
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return fmt.Errorf("%s: HTTP %d", shown, resp.StatusCode)
			}
		}
		return nil
	}
	if strings.TrimSpace(cfg.TestCommand) == "" {
		return nil
	}
	timeout := durationOf(cfg.TestTimeoutSeconds, time.Second)
	// test_command is the user's own shell command from config.json (never
	// built from state data), so it runs through the shell.
	// The HALT file is not watched here: stopping the check half-way would
	// read as a failed health check and revert a merge that may be fine.
	res := c.opts.Runner.Run(ctx, proc.Spec{Argv: []string{"/bin/sh", "-c", cfg.TestCommand}, Dir: c.store.Root,
		Env: envList(), Timeout: timeout})
	if !res.OK() {
		switch {
		case res.StartErr != nil:
			return fmt.Errorf("test command: %w", res.StartErr)
		case res.TimedOut:
			return fmt.Errorf("test command timed out after %s", timeout)
		}
		return fmt.Errorf("test command %q exited %d", cfg.TestCommand, res.ExitCode)
	}
	return nil
}

// endpointURL accepts an endpoint as a URL string or {"url": ...}.
func endpointURL(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.URL
	}
	return ""
}

// checkpoint is the 4-C2 pre-action checkpoint (kept: the last 5).
func (c *cycle) checkpoint(ctx context.Context, reason string) {
	cp := state.Checkpoint{Cycle: c.res.Cycle, Timestamp: state.FormatTime(c.now), Reason: reason}
	if repo, ok := c.openRepo(ctx); ok {
		if out, err := repo.Run(ctx, "rev-parse", "--abbrev-ref", "HEAD"); err == nil {
			cp.Branch = strings.TrimSpace(out)
		}
		if out, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil && gitrepo.ValidSHA(strings.TrimSpace(out)) {
			cp.CommitSHA = strings.TrimSpace(out)
		}
	}
	conf, _ := c.store.RawEvolveFile(state.ConfidenceFile)
	// The file tells which of the actions in progress it keeps inside
	// pending[]: the snapshot holds them too, as the original's does.
	queue, _ := c.store.RawEvolveFile(state.ActionQueueFile)
	cp.StateSnapshot = state.SnapshotOf(conf, c.snap.ActionQueue, queue)
	c.carryRubricHashes(&cp)
	if l := c.art.leap; l != nil && l.baseline != nil {
		if b, err := json.Marshal(l.baseline); err == nil {
			cp.LeapBaselineScores = b
		}
	}
	c.snap.Checkpoints.Add(cp)
	if err := c.store.SaveCheckpoints(c.snap.Checkpoints); err != nil {
		c.printf("[WARN] checkpoint not written: %v", err)
		return
	}
	c.printf("[Act] Checkpoint: cycle #%d at %s (%s).", cp.Cycle, orDash(shortSHA(cp.CommitSHA)), reason)
}

func (c *cycle) lastCheckpoint() (state.Checkpoint, bool) {
	n := len(c.snap.Checkpoints.Checkpoints)
	if n == 0 {
		return state.Checkpoint{}, false
	}
	return c.snap.Checkpoints.Checkpoints[n-1], true
}

// restoreCheckpoint puts confidence.json and the pending actions back as
// the checkpoint kept them; Step 6 then writes the rest of the record. A
// flat confidence snapshot (the original's) has its scores set in the
// file as it is (never flattening it nor dropping a key), a checkpoint
// that kept no queue leaves the queue as it is, and restoring the queue
// leaves every action in one list (see state.Checkpoint.RestoreQueue).
func (c *cycle) restoreCheckpoint(cp state.Checkpoint) {
	if conf, _, ok := cp.StateSnapshot.RestoreConfidence(c.snap.Confidence, c.now); ok {
		c.snap.Confidence = conf
		c.restoredConfidence = true
	}
	if q, ok := cp.RestoreQueue(c.snap.ActionQueue); ok {
		c.snap.ActionQueue = q
		c.restoredQueue = true
	}
}

// openRepo opens the project's repository with git's output bounded by
// safety.max_read_mib and every git command stopped by the HALT file, as
// a skill is: a hook that never returns must not hold the cycle (and its
// lock) after `ooda halt`. A HALT file this cycle wrote itself (a
// rollback, the cost cap, the breaker) is its own decision, taken knowing
// the state still has to be committed, so it stops nothing here.
func (c *cycle) openRepo(ctx context.Context) (*gitrepo.Repo, bool) {
	repo, ok := gitrepo.OpenHalting(ctx, c.store.Root, c.opts.Runner, c.repoHalt())
	if ok {
		repo.MaxOutput = c.cfg.Safety.MaxReadBytes()
	}
	return repo, ok
}

// repoHalt is the HALT file that stops the cycle's git commands (see
// openRepo): none when this cycle wrote it.
func (c *cycle) repoHalt() string {
	if c.res.HaltCreated {
		return ""
	}
	return c.haltPath()
}

// checkpointCommit is the checkpoint's commit as messages quote it (short:
// its first 12 digits). checkpoints.json is a file anyone may edit, so
// anything but a commit id is shown quoted and escaped.
func checkpointCommit(cp state.Checkpoint, short bool) string {
	switch {
	case cp.CommitSHA == "":
		return ""
	case gitrepo.ValidSHA(cp.CommitSHA) && short:
		return shortSHA(cp.CommitSHA)
	case gitrepo.ValidSHA(cp.CommitSHA):
		return cp.CommitSHA
	}
	return fmt.Sprintf("%q (not a commit SHA)", cp.CommitSHA)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// envList is the environment of test_command and goal metric commands:
// like a skill's, without ooda's credentials (goals.json is state a skill
// can write, so its commands are as untrusted as a skill).
func envList() []string { return secret.ChildEnv(os.Environ(), nil, false) }

// noteOwnCommit records HEAD as a commit this cycle made (see ownCommit).
func (c *cycle) noteOwnCommit(ctx context.Context, repo *gitrepo.Repo) {
	if head, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		if sha := strings.TrimSpace(head); gitrepo.ValidSHA(sha) {
			c.ownCommits = append(c.ownCommits, sha)
		}
	}
}

// redactURL hides the user info of a URL that may not parse, for a
// message: everything before an "@" of its authority.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		if k := strings.LastIndex(rest, "@"); k >= 0 {
			return raw[:i+3] + "***" + raw[i+3+k:]
		}
	}
	return raw
}
