package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// rollbackOptions are the flags of `ooda config rollback`.
type rollbackOptions struct {
	confirm string
	hard    bool
}

func newRollbackCmd(g *globals) *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback CYCLE",
		Short: "Roll the project back to the checkpoint of a cycle (asks for the phrase \"rollback CYCLE\")",
		Long: `Roll the project's code back to the commit recorded by the checkpoint of
CYCLE (agent/state/evolve/checkpoints.json keeps the last 5), restore the
confidence and the pending actions it kept, and create the HALT file so
nothing runs until a human has looked.

The default is non-destructive: every commit since the checkpoint is
reverted in one new commit ("git revert" of CHECKPOINT..HEAD). The loop's
own history under agent/state/ is kept as it is — the cycle log is never
rewritten. --hard resets the branch to the checkpoint instead (git reset
--hard), discarding those commits.

The command asks for the exact phrase "rollback CYCLE"; --confirm supplies
it non-interactively. Anything else cancels.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("usage: ooda config rollback CYCLE"))
			}
			if _, err := strconv.Atoi(args[0]); err != nil {
				return usageError(fmt.Errorf("CYCLE must be a cycle number, got %q", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			n, _ := strconv.Atoi(args[0])
			return runRollback(cmd.Context(), g, n, o)
		},
	}
	cmd.Flags().StringVar(&o.confirm, "confirm", "", `the confirmation phrase, "rollback CYCLE"`)
	cmd.Flags().BoolVar(&o.hard, "hard", false, "git reset --hard to the checkpoint instead of reverting")
	return cmd
}

func runRollback(ctx context.Context, g *globals, cycle int, o rollbackOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}
	st, err := g.store(cfg)
	if err != nil {
		return err
	}
	root := st.Root
	snap, err := st.Load()
	var corrupt *state.CorruptLedgerError
	if err != nil && !errors.As(err, &corrupt) {
		return err
	}
	cp, ok := snap.Checkpoints.Find(cycle)
	if !ok {
		var have []string
		seen := map[int]bool{}
		for _, c := range snap.Checkpoints.Checkpoints {
			if !seen[c.Cycle] {
				seen[c.Cycle] = true
				have = append(have, strconv.Itoa(c.Cycle))
			}
		}
		msg := fmt.Sprintf("no checkpoint for cycle %d", cycle)
		if len(have) > 0 {
			msg += " (checkpoints exist for cycles " + strings.Join(have, ", ") + ")"
		}
		return usageError(errors.New(msg))
	}
	// The commit goes to git's argv: a value that is not a full commit id
	// (an option such as --output=FILE, a range, a reflog lookup) is
	// refused before anything is asked, locked or written.
	if cp.CommitSHA != "" && !gitrepo.ValidSHA(cp.CommitSHA) {
		return usageError(fmt.Errorf("%s: %s.commit_sha: %q is not a commit SHA (40 or 64 hexadecimal digits)",
			rollbackRel(root, st.EvolvePath(state.CheckpointsFile)), checkpointJSONPath(snap.Checkpoints, cycle), cp.CommitSHA))
	}
	phrase := fmt.Sprintf("rollback %d", cycle)
	answer := o.confirm
	if answer == "" {
		if !isTerminal(g.stdin) {
			return usageError(fmt.Errorf("confirmation needed: run again with --confirm %q", phrase))
		}
		fmt.Fprintf(g.stderr, "This reverts the project to commit %s (cycle #%d, %s) and creates the HALT file.\nType %q to confirm: ", cp.CommitSHA, cp.Cycle, safetext.Text(cp.Timestamp), phrase)
		line, _ := bufio.NewReader(g.stdin).ReadString('\n')
		answer = strings.TrimSpace(line)
	}
	if answer != phrase {
		return usageError(fmt.Errorf("cancelled: the confirmation %q is not %q", answer, phrase))
	}
	now := clk.Now()
	// Through the store, so a symlinked agent/state/evolve cannot put the
	// lock outside the project.
	lock, _, err := st.AcquireLock(now, cfg.Safety.LockTimeout())
	if err != nil {
		return fmt.Errorf("cannot roll back while a cycle runs: %w", err)
	}
	defer lock.Release()

	repo, isRepo := gitrepo.Open(ctx, root, nil)
	if isRepo {
		repo.MaxOutput = cfg.Safety.MaxReadBytes()
	}
	if cp.CommitSHA != "" {
		if !isRepo {
			return fmt.Errorf("%s is not a git repository; the checkpoint names commit %s", root, cp.CommitSHA)
		}
		sha, err := repo.ResolveCommit(ctx, cp.CommitSHA)
		if err != nil {
			return usageError(fmt.Errorf("%s: %s.commit_sha: %w",
				rollbackRel(root, st.EvolvePath(state.CheckpointsFile)), checkpointJSONPath(snap.Checkpoints, cycle), err))
		}
		cp.CommitSHA = sha
		if err := rollbackCode(ctx, repo, cp, o.hard); err != nil {
			return err
		}
	}
	// Restore the state the checkpoint kept. A checkpoint of the
	// original's may keep its confidence flat, perhaps only some scores
	// (they are then set in the file as it is, never flattening it nor
	// dropping a key), and may keep no queue (the queue is then left as it
	// is); every action ends in one list (state.Checkpoint.RestoreQueue).
	if conf, exact, ok := cp.StateSnapshot.RestoreConfidence(snap.Confidence, now); ok {
		if exact {
			err = st.RestoreEvolveFile(state.ConfidenceFile, append(indentJSON(cp.StateSnapshot.Confidence), '\n'))
		} else {
			err = st.SaveConfidence(conf)
		}
		if err != nil {
			return err
		}
	}
	if q, ok := cp.RestoreQueue(snap.ActionQueue); ok {
		if err := st.SaveActionQueue(q); err != nil {
			return err
		}
	}
	reason := fmt.Sprintf("Rolled back to cycle %d (commit %s) by `ooda config rollback`. Review the project, then run `ooda resume`.", cycle, orNone(cp.CommitSHA))
	if err := st.WriteHalt(cfg.Safety.HaltFile, reason, now); err != nil {
		return err
	}
	if isRepo && cfg.CommitState() {
		if _, err := repo.CommitPaths(ctx, fmt.Sprintf("ooda: restore state of cycle #%d after rollback", cycle), st.Written()); err != nil {
			fmt.Fprintf(g.stderr, "ooda: warning: restored state not committed: %v\n", err)
		}
	}
	if g.json {
		return g.printJSON(map[string]any{"rolled_back_to": cycle, "commit_sha": cp.CommitSHA, "hard": o.hard, "halt": true})
	}
	fmt.Fprintf(g.stdout, "Rolled back to cycle %d.\nHALT file created: review the project, then run `ooda resume`.\n", cycle)
	return nil
}

// rollbackCode reverts (or with hard, resets) the code to the checkpoint's
// commit. The revert leaves agent/state/ as it is: the loop's record of
// what happened, including the cycle log, is history, not code.
func rollbackCode(ctx context.Context, repo *gitrepo.Repo, cp state.Checkpoint, hard bool) error {
	if why, busy := repo.Busy(ctx); busy {
		return usageError(fmt.Errorf("cannot roll back: %s", why))
	}
	// Nothing staged: the rollback commit must hold the revert and nothing
	// of the user's.
	if _, err := repo.Run(ctx, "diff", "--cached", "--quiet"); err != nil {
		return usageError(fmt.Errorf("cannot roll back: changes are staged in the index; commit or unstage them first"))
	}
	// cp.CommitSHA is a full commit id (ResolveCommit); "--end-of-options"
	// keeps any other value from being read as an option all the same.
	// git reset does not take --end-of-options in every supported git
	// version, so there the validation alone keeps options out, and the
	// trailing "--" makes git read the commit as a revision, never a path.
	if hard {
		_, err := repo.Run(ctx, "reset", "--hard", cp.CommitSHA, "--")
		return err
	}
	// The code since the checkpoint, outside agent/state/: the loop's own
	// record (and any uncommitted state) is left exactly as it is.
	exclude := ":(exclude)agent/state"
	names, err := repo.Run(ctx, "diff", "--name-only", "--end-of-options", cp.CommitSHA, "HEAD", "--", ".", exclude)
	if err != nil {
		return err
	}
	if strings.TrimSpace(names) == "" {
		return nil
	}
	// The patch goes through a file, not memory: the code since the
	// checkpoint may hold large binary files.
	tmp, err := os.CreateTemp("", "ooda-rollback-*.patch")
	if err != nil {
		return err
	}
	tmp.Close()
	// git runs in the project: a relative TMPDIR must not change which
	// file it writes.
	patchFile, err := filepath.Abs(tmp.Name())
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	defer os.Remove(patchFile)
	if _, err := repo.Run(ctx, "diff", "--binary", "--output="+patchFile, "--end-of-options", cp.CommitSHA, "HEAD", "--", ".", exclude); err != nil {
		return err
	}
	if _, err := repo.Run(ctx, "apply", "-R", "--index", "--whitespace=nowarn", "--", patchFile); err != nil {
		return fmt.Errorf("cannot revert the code since cycle #%d cleanly (local changes in the same files?): %w", cp.Cycle, err)
	}
	var paths []string
	for _, p := range strings.Split(strings.TrimSpace(names), "\n") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	args := append([]string{"commit", "--quiet", "-m", fmt.Sprintf("Revert to cycle #%d (%s)", cp.Cycle, shortSHA(cp.CommitSHA)),
		"-m", "ooda config rollback " + strconv.Itoa(cp.Cycle), "--"}, paths...)
	_, err = repo.Run(ctx, args...)
	return err
}

// checkpointJSONPath is the JSON path of the checkpoint Find returns for
// cycle (the newest of that cycle), as errors name it.
func checkpointJSONPath(c state.Checkpoints, cycle int) string {
	for i := len(c.Checkpoints) - 1; i >= 0; i-- {
		if c.Checkpoints[i].Cycle == cycle {
			return fmt.Sprintf("checkpoints[%d]", i)
		}
	}
	return "checkpoints"
}

// rollbackRel names p relative to the project root when it is inside it.
func rollbackRel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return r
	}
	return p
}

// indentJSON is b indented, its keys in the order b has them (the file's
// own order, which a restore keeps).
func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Indent(&out, bytes.TrimSpace(b), "", "  ") != nil {
		return b
	}
	return out.Bytes()
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// isTerminal reports whether r is an interactive terminal; without one,
// ooda never prompts.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminalFd(f.Fd())
}
