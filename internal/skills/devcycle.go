package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	readOnly := false
	cost := devCycleCostUSD
	register("dev-cycle", DevCycle{}, contract.Contract{
		OODAPhase: "support",
		Description: "Takes the top pending action, has agent.command implement it on a new branch, enforces the size limits " +
			"and protected paths, runs the tests, commits, pushes and opens a draft pull request (docs/builtin-dev-cycle.md).",
		Output: contract.Files{Files: []string{"agent/state/evolve/action_queue.json"}},
		Safety: contract.Safety{ReadOnly: &readOnly, CostLimitUSD: &cost},
	})
}

const (
	// devCycleCostUSD is the cost a run is charged when the agent reports
	// none: the original's estimate for one implementation by a language
	// model. An agent that knows its cost writes it to $OODA_AGENT_REPORT.
	devCycleCostUSD = 0.10
	// devCycleMaxAttempts is how many runs may fail on one action before
	// it is marked blocked (queue hygiene then moves it to completed), so
	// an action no agent can do does not take every implementation turn.
	devCycleMaxAttempts = 3
	// devCycleMaxTitle bounds an action's title wherever it is shown or
	// sent: commit subject, PR title, environment.
	devCycleMaxTitle = 200
	// devCycleMaxText bounds the action's description in the prompt.
	devCycleMaxText = 8000
	// devCycleMaxListed bounds the paths named in a report or a note.
	devCycleMaxListed = 20
	// devCycleWorktrees is where the work happens, relative to the
	// project root: one git worktree per run, removed when it ends.
	devCycleWorktrees = "agent/state/evolve/worktrees"
)

// DevCycle is the built-in "dev-cycle" skill, the implementation skill:
// it takes the pending action with the highest effective RICE, lets the
// configured coding agent (agent.command) implement it in a git worktree
// on a new branch under the branch prefix, keeps the change inside
// safety.max_files_per_pr, safety.max_lines_per_pr and off
// safety.protected_paths, runs test_command, commits, pushes and opens a
// draft pull request through the forge, then moves the action to
// in_progress as "proposed" with its PR number (docs/builtin-dev-cycle.md).
type DevCycle struct{}

// Describe names the executor.
func (DevCycle) Describe() string { return "builtin dev-cycle" }

// WiredOnly keeps dev-cycle from running for a skill that is merely named
// /dev-cycle: the original OODA loop has a skill of that name, which a
// project that switched runs through agent.command. The built-in runs
// where a skills entry names it: "skills": {"/dev-cycle": {"builtin": "dev-cycle"}}.
func (DevCycle) WiredOnly() bool { return true }

// devOutcome is what one run did, as the report and the state file say it.
type devOutcome struct {
	// Result is one of pr_opened, no_action, abandoned, refused, failed.
	Result      string   `json:"result"`
	Reason      string   `json:"reason,omitempty"`
	ActionID    string   `json:"action_id,omitempty"`
	ActionTitle string   `json:"action_title,omitempty"`
	Branch      string   `json:"branch,omitempty"`
	BaseBranch  string   `json:"base_branch,omitempty"`
	Commit      string   `json:"commit,omitempty"`
	Pushed      bool     `json:"pushed"`
	PRNumber    int      `json:"pr_number,omitempty"`
	PRCreated   bool     `json:"pr_created"`
	TestStatus  string   `json:"test_status,omitempty"`
	Files       int      `json:"files_changed"`
	Lines       int      `json:"lines_changed"`
	ChangedList []string `json:"changed_files,omitempty"`
	Reverted    []string `json:"reverted_paths,omitempty"`
	cost        *float64
}

// devRun is one run's context.
type devRun struct {
	r      act.Request
	cfg    *config.Config
	store  *state.Store
	log    io.Writer
	runner proc.Runner
	out    devOutcome
	resp   act.Response
}

// Execute runs the implementation pipeline once (docs/builtin-dev-cycle.md).
func (d DevCycle) Execute(ctx context.Context, r act.Request) act.Response {
	start := time.Now()
	e := newBuiltinEnv(r)
	run := &devRun{r: r, cfg: e.cfg, log: r.Output, runner: r.Runner, store: e.store}
	run.r.Now = e.now
	if run.log == nil {
		run.log = io.Discard
	}
	if run.runner == nil {
		run.runner = proc.Exec{}
	}
	run.resp = act.Response{OK: true, Executor: d.Describe()}
	run.pipeline(ctx)
	run.finish()
	run.resp.Elapsed = time.Since(start)
	return run.resp
}

// logf writes a line to the run log, secrets masked and every argument
// escaped (action titles and git's output are anyone's text).
func (run *devRun) logf(format string, a ...any) {
	fmt.Fprint(run.log, secret.Redact(fmt.Sprintf("dev-cycle: "+format+"\n", safetext.Args(a...)...)))
}

// stop ends the run with a result that is not a pull request. A failed
// run (fail true) is an error of the skill, which the engine counts; the
// others (nothing to do, a change over the limits) are results.
func (run *devRun) stop(result, reason string, fail bool) {
	run.out.Result, run.out.Reason = result, reason
	run.logf("%s", reason)
	if fail {
		run.resp.OK = false
		run.resp.Error = reason
	}
}

// pipeline is the run, step by step; every step that fails stops it with
// the reason.
func (run *devRun) pipeline(ctx context.Context) {
	cfg, r := run.cfg, run.r
	q, ok := run.loadQueue()
	if !ok {
		return
	}
	idx := topAction(q.Pending)
	if idx < 0 {
		run.stop("no_action", "no pending action to implement in agent/state/evolve/action_queue.json", false)
		return
	}
	a := q.Pending[idx]
	run.out.ActionID, run.out.ActionTitle = cleanLine(a.ID, 100), actionTitle(a)
	run.logf("action %s: %s (RICE %s)", run.out.ActionID, run.out.ActionTitle, strconv.FormatFloat(a.Rice(), 'f', -1, 64))
	if len(cfg.Agent.Command) == 0 {
		run.stop("refused", `agent.command is not set in config.json: dev-cycle needs a coding agent, e.g. "agent": {"command": ["claude", "-p", "{prompt}", "--permission-mode", "acceptEdits"]} (docs/builtin-dev-cycle.md)`, true)
		run.resp.NotStarted = true
		return
	}
	g, ok := run.openRepo(ctx)
	if !ok {
		return
	}
	base, baseSHA, ok := run.baseBranch(ctx, g)
	if !ok {
		return
	}
	run.out.BaseBranch = base
	prefix := run.branchPrefix()
	branch, ok := run.newBranchName(ctx, g, prefix, a)
	if !ok {
		return
	}
	wt, ok := run.addWorktree(ctx, g, branch, baseSHA)
	if !ok {
		return
	}
	run.out.Branch = branch
	keepBranch := false
	defer func() {
		// Whatever happened, the worktree goes (a copy of the project
		// inside the project would be found by test runners and linters),
		// and a branch that holds no proposal goes with it.
		run.removeWorktree(g, wt, branch, keepBranch)
	}()

	if !run.runAgent(ctx, a, wt, branch, base) {
		if !run.resp.Halted && !run.resp.Canceled {
			// An operator's stop is no failure of the action.
			run.requeue(&q, idx, run.out.Reason)
		}
		return
	}
	wg := &gitrepo.Repo{Dir: wt, Runner: run.runner, HaltFile: r.HaltFile, MaxOutput: cfg.Safety.MaxReadBytes()}
	changes, ok := run.inspect(ctx, wg, baseSHA)
	if !ok {
		run.requeue(&q, idx, run.out.Reason)
		return
	}
	if len(changes) == 0 {
		msg := "the agent changed nothing"
		if len(run.out.Reverted) > 0 {
			msg = "the agent changed only protected paths, which were reverted: " + strings.Join(run.out.Reverted, ", ")
		}
		run.stop("abandoned", msg+"; the action stays pending", false)
		run.requeue(&q, idx, msg)
		return
	}
	if over := run.overLimits(changes); over != "" {
		run.stop("abandoned", "the change is too large: "+over+"; it is discarded and the action stays pending", false)
		run.requeue(&q, idx, "the change was too large: "+over)
		return
	}
	if !run.runTests(ctx, wt) {
		return
	}
	if !run.commit(ctx, wg, baseSHA, a) {
		run.requeue(&q, idx, run.out.Reason)
		return
	}
	keepBranch = true
	f, ok := run.push(ctx, g, branch)
	if !ok {
		run.requeue(&q, idx, run.out.Reason)
		return
	}
	if !run.openPR(ctx, f, a, branch, base) {
		run.requeue(&q, idx, run.out.Reason)
		return
	}
	run.propose(&q, idx)
}

// loadQueue reads the action queue. A queue that cannot be read is left
// alone: writing it back would lose what it holds.
func (run *devRun) loadQueue() (state.ActionQueue, bool) {
	snap, err := run.store.LoadFiles(state.ActionQueueFile)
	if err == nil && len(snap.Corrupt) > 0 {
		err = snap.Corrupt[0].Err
	}
	if err != nil {
		run.stop("failed", "agent/state/evolve/action_queue.json cannot be read, so no action is taken from it: "+safetext.Error(err), true)
		return state.ActionQueue{}, false
	}
	return snap.ActionQueue, true
}

// topAction is the index of the pending action with the highest effective
// RICE (the earlier one on a tie) among those waiting for work: not
// blocked, not already in progress or proposed. -1 when there is none.
func topAction(pending []state.Action) int {
	best := -1
	for i, a := range pending {
		switch a.Status {
		case "", "pending":
		default:
			continue
		}
		if best < 0 || a.Rice() > pending[best].Rice() {
			best = i
		}
	}
	return best
}

// actionTitle is the action's title on one line, bounded, never empty.
func actionTitle(a state.Action) string {
	if t := cleanLine(a.Title, devCycleMaxTitle); t != "" {
		return t
	}
	return "action " + cleanLine(a.ID, 100)
}

// cleanLine makes anyone's text one line of printable text: white space
// runs become one space, control and bidirectional characters go, known
// secrets are masked, and it is cut to max runes.
func cleanLine(s string, max int) string {
	s = strings.ToValidUTF8(secret.Redact(s), "\uFFFD")
	s = strings.Map(func(c rune) rune {
		if c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x2028 || c == 0x2029 {
			return ' '
		}
		if safetext.Unsafe(c) {
			return -1
		}
		return c
	}, s)
	s = secret.Redact(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// cleanText is cleanLine for text that keeps its lines (a description).
func cleanText(s string, max int) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = cleanLine(l, max)
	}
	out := strings.TrimSpace(strings.Join(lines, "\n"))
	if r := []rune(out); len(r) > max {
		out = string(r[:max-1]) + "…"
	}
	return out
}

// branchPrefix is where the skill's branches go: the branch prefix of the
// domain it runs for, else implementation.branch_prefix (default
// "auto/dev-cycle/"), which the forge knows as pull requests.
func (run *devRun) branchPrefix() string {
	if dc, ok := run.cfg.Domains.Get(run.r.Domain); ok && dc.BranchPrefix != "" {
		return dc.BranchPrefix
	}
	if p := run.cfg.Implementation.BranchPrefix; p != "" {
		return p
	}
	return "auto/dev-cycle/"
}

// slug is s as a branch name component: lower-case letters and digits,
// runs of anything else one '-', at most max bytes.
func slug(s string, max int) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			if b.Len() >= max {
				break
			}
			continue
		}
		dash = true
	}
	return strings.Trim(b.String(), "-")
}

// timeoutOf parses a duration setting such as agent.timeout; 0 when unset
// or unreadable (validation has already named a bad value).
func timeoutOf(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// requeue leaves the action pending, with why the run did not propose it
// and how many runs failed on it; the devCycleMaxAttempts-th failure
// marks it blocked.
func (run *devRun) requeue(q *state.ActionQueue, idx int, why string) {
	a := &q.Pending[idx]
	if a.Extra == nil {
		a.Extra = state.Extra{}
	}
	attempts := 0
	_ = json.Unmarshal(a.Extra["dev_cycle_attempts"], &attempts)
	if attempts < 0 || attempts > 1000 {
		attempts = 0
	}
	attempts++
	a.Extra["dev_cycle_attempts"] = jsonRaw(attempts)
	a.Extra["dev_cycle_note"] = jsonRaw(fmt.Sprintf("cycle %d: %s", run.r.Cycle, cleanLine(why, 500)))
	if attempts >= devCycleMaxAttempts {
		a.Status = "blocked"
		run.logf("action %s failed %d times: marked blocked", run.out.ActionID, attempts)
	}
	run.saveQueue(*q)
}

// propose moves the action to in_progress as "proposed", with its pull
// request: the engine follows the PR from there (merged, rejected).
func (run *devRun) propose(q *state.ActionQueue, idx int) {
	a := q.Pending[idx]
	q.Pending = append(q.Pending[:idx:idx], q.Pending[idx+1:]...)
	a.Status = "proposed"
	if run.out.PRNumber > 0 {
		n := run.out.PRNumber
		a.PRNumber = &n
	}
	if a.Extra == nil {
		a.Extra = state.Extra{}
	}
	a.Extra["branch"] = jsonRaw(run.out.Branch)
	a.Extra["test_status"] = jsonRaw(run.out.TestStatus)
	delete(a.Extra, "dev_cycle_note")
	q.InProgress = append(q.InProgress, a)
	run.saveQueue(*q)
}

func (run *devRun) saveQueue(q state.ActionQueue) {
	if err := run.store.SaveActionQueue(q); err != nil {
		run.logf("the action queue was not written: %s", safetext.Error(err))
		run.resp.OK, run.resp.Error = false, "action_queue.json not written: "+safetext.Error(err)
	}
}

func jsonRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// finish writes the report and, when the skill runs for a domain, its
// state file.
func (run *devRun) finish() {
	o := run.out
	created := o.PRCreated
	had := created
	rep := act.Report{HadOutput: &had, Summary: run.summary(), TestStatus: o.TestStatus, PRCreated: &created}
	if o.PRNumber > 0 {
		n := o.PRNumber
		rep.PRNumber = &n
	}
	if len(o.Reverted) > 0 {
		blocked := true
		rep.ProtectedBlocked = &blocked
	}
	rep.CostUSD = o.cost
	rep.Vars = map[string]json.RawMessage{
		"result": jsonRaw(o.Result), "action_id": jsonRaw(o.ActionID), "branch": jsonRaw(o.Branch),
		"files_changed": jsonRaw(o.Files), "lines_changed": jsonRaw(o.Lines),
	}
	if len(o.Reverted) > 0 {
		rep.Vars["reverted_paths"] = jsonRaw(o.Reverted)
	}
	if p := run.r.Env["OODA_REPORT"]; p != "" {
		if err := writeJSON(run.store, "dev-cycle", p, rep); err != nil {
			run.logf("report not written: %s", safetext.Error(err))
		}
	}
	if p := run.r.Env["OODA_STATE_FILE"]; p != "" {
		doc := struct {
			LastRun string `json:"last_run"`
			devOutcome
		}{state.FormatTime(run.r.Now), o}
		if err := writeJSON(run.store, "dev-cycle", p, doc); err != nil {
			run.logf("state file not written: %s", safetext.Error(err))
		}
	}
	run.logf("%s", rep.Summary)
}

// summary is the report's one line: what was done to which action.
func (run *devRun) summary() string {
	o := run.out
	action := ""
	if o.ActionID != "" {
		action = fmt.Sprintf("action %s %q", o.ActionID, o.ActionTitle)
	}
	switch o.Result {
	case "pr_opened":
		s := fmt.Sprintf("opened PR #%d (branch %s) for %s: %d file(s), %d line(s) changed, tests %s", o.PRNumber, o.Branch, action, o.Files, o.Lines, o.TestStatus)
		if len(o.Reverted) > 0 {
			s += fmt.Sprintf("; %d protected path(s) reverted", len(o.Reverted))
		}
		return s
	case "no_action":
		return "no pending action to implement"
	}
	if action != "" {
		return fmt.Sprintf("%s %s: %s", o.Result, action, o.Reason)
	}
	return o.Result + ": " + o.Reason
}

// runAgent runs agent.command in the worktree with the action as its
// prompt: a file ($OODA_PROMPT_FILE, or {prompt_file} in the command),
// the text itself as one argument ({prompt}), and the action's fields in
// OODA_ACTION_* variables. Nothing of the action is ever part of a shell
// string: each placeholder becomes (part of) one argv element.
func (run *devRun) runAgent(ctx context.Context, a state.Action, wt, branch, base string) bool {
	cfg, r := run.cfg, run.r
	prompt := run.prompt(a)
	promptRel := filepath.Join("agent", "state", "evolve", "runs", fmt.Sprintf("%d-dev-cycle.prompt.md", r.Cycle))
	agentRel := filepath.Join("agent", "state", "evolve", "runs", fmt.Sprintf("%d-dev-cycle.agent.json", r.Cycle))
	if err := run.store.WriteProjectFile(promptRel, []byte(prompt)); err != nil {
		run.stop("failed", "the prompt file was not written: "+safetext.Error(err), true)
		return false
	}
	promptFile, err := run.store.Resolve(promptRel)
	if err != nil {
		run.stop("failed", "the prompt file: "+safetext.Error(err), true)
		return false
	}
	agentReport, err := run.store.Resolve(agentRel)
	if err != nil {
		run.stop("failed", "the agent report file: "+safetext.Error(err), true)
		return false
	}
	_ = os.Remove(agentReport)
	key := config.SkillKey(r.Skill)
	if key == "" {
		key = "dev-cycle"
	}
	rep := strings.NewReplacer("{skill}", "/"+key, "{skill_name}", key, "{prompt}", prompt, "{prompt_file}", promptFile)
	argv := make([]string, len(cfg.Agent.Command))
	hasPrompt := false
	for i, s := range cfg.Agent.Command {
		hasPrompt = hasPrompt || strings.Contains(s, "{prompt}") || strings.Contains(s, "{prompt_file}")
		argv[i] = rep.Replace(s)
	}
	if !hasPrompt {
		run.logf("agent.command has neither {prompt} nor {prompt_file}: the agent finds the action in $OODA_PROMPT_FILE and $OODA_ACTION_TITLE")
	}
	env := map[string]string{}
	for k, v := range r.Env {
		// The report and the state file are dev-cycle's to write.
		if k != "OODA_REPORT" && k != "OODA_STATE_FILE" {
			env[k] = v
		}
	}
	files := make([]string, 0, len(a.RelatedFiles))
	for _, f := range a.RelatedFiles {
		if c := cleanLine(f, 300); c != "" && len(files) < devCycleMaxListed {
			files = append(files, c)
		}
	}
	for k, v := range map[string]string{
		"OODA_PROJECT_DIR": r.ProjectDir, "OODA_WORKTREE": wt, "OODA_BRANCH": branch, "OODA_BASE_BRANCH": base,
		"OODA_ACTION_ID": run.out.ActionID, "OODA_ACTION_TITLE": run.out.ActionTitle,
		"OODA_ACTION_FILES": strings.Join(files, "\n"), "OODA_PROMPT_FILE": promptFile, "OODA_AGENT_REPORT": agentReport,
		"OODA_MAX_FILES": strconv.Itoa(cfg.Safety.MaxFilesPerPR), "OODA_MAX_LINES": strconv.Itoa(cfg.Safety.MaxLinesPerPR),
	} {
		env[k] = v
	}
	timeout := timeoutOf(cfg.Agent.Timeout)
	if timeout <= 0 {
		timeout = r.Timeout
	}
	cmd := &act.Command{Argv: argv, Timeout: timeout, Env: cfg.Agent.Env, Policy: cfg.Agent.EnvPolicy,
		Runner: run.runner, Agent: true, Source: "agent"}
	shown, _ := json.Marshal(cfg.Agent.Command)
	run.logf("running agent.command %s in %s (time limit %s)", string(shown), wt, timeout)
	res := cmd.Execute(ctx, act.Request{Skill: r.Skill, Domain: r.Domain, Cycle: r.Cycle, ProjectDir: wt, Now: r.Now,
		Env: env, Timeout: timeout, HaltFile: r.HaltFile, Output: run.r.Output, OnStart: r.OnStart})
	run.resp.Warnings = append(run.resp.Warnings, res.Warnings...)
	run.resp.Survivors = append(run.resp.Survivors, res.Survivors...)
	run.readAgentReport(agentRel)
	switch {
	case res.Halted || res.Canceled:
		run.stop("failed", "stopped while the agent ran: "+res.Error, true)
		run.resp.Halted, run.resp.Canceled = res.Halted, res.Canceled
		return false
	case res.TimedOut:
		run.stop("failed", fmt.Sprintf("the agent did not finish within %s (agent.timeout)", timeout), true)
		run.resp.TimedOut = true
		return false
	case !res.OK:
		run.stop("failed", "the agent failed: "+res.Error, true)
		run.resp.NotStarted = res.NotStarted
		return false
	}
	return true
}

// readAgentReport takes the cost an agent reported in $OODA_AGENT_REPORT
// ({"cost_usd": N}), checked as a skill report's is.
func (run *devRun) readAgentReport(rel string) {
	ds, err := run.store.ReadDomainState(rel)
	if err != nil {
		run.logf("the agent's report %s is ignored: %s", rel, safetext.Error(err))
		return
	}
	raw, ok := ds.Raw["cost_usd"]
	if !ds.Found || !ok {
		return
	}
	var c float64
	if json.Unmarshal(raw, &c) != nil || !(c >= 0 && c <= act.MaxCostUSD) {
		run.logf("the agent's report %s: cost_usd is not a number from 0 to %g; ignored", rel, act.MaxCostUSD)
		return
	}
	run.out.cost = &c
}

// prompt is the agent's task: the action, and the rules its change must
// keep to.
func (run *devRun) prompt(a state.Action) string {
	cfg := run.cfg
	var b strings.Builder
	fmt.Fprintf(&b, "# Implement one action\n\nYou are working in a git worktree of the project on branch %s. "+
		"Make the change described below in the files of the current directory, then stop.\n\n", run.out.Branch)
	fmt.Fprintf(&b, "## Action %s\n\n%s\n", run.out.ActionID, run.out.ActionTitle)
	if raw, ok := a.Extra["description"]; ok {
		var desc string
		if json.Unmarshal(raw, &desc) == nil && strings.TrimSpace(desc) != "" {
			fmt.Fprintf(&b, "\n%s\n", cleanText(desc, devCycleMaxText))
		}
	}
	if a.SourceDomain != "" {
		fmt.Fprintf(&b, "\nFound by: %s\n", cleanLine(a.SourceDomain, 100))
	}
	if len(a.RelatedFiles) > 0 {
		b.WriteString("\nRelated files:\n")
		for i, f := range a.RelatedFiles {
			if i == devCycleMaxListed {
				break
			}
			fmt.Fprintf(&b, "- %s\n", cleanLine(f, 300))
		}
	}
	b.WriteString("\n## Rules\n\n")
	if cfg.Safety.MaxFilesPerPR > 0 || cfg.Safety.MaxLinesPerPR > 0 {
		fmt.Fprintf(&b, "- Keep the change small: at most %d files and %d changed lines; a larger change is discarded.\n", cfg.Safety.MaxFilesPerPR, cfg.Safety.MaxLinesPerPR)
	}
	if len(cfg.Safety.ProtectedPaths) > 0 {
		fmt.Fprintf(&b, "- Do not change these protected paths; changes to them are reverted: %s\n", strings.Join(cfg.Safety.ProtectedPaths, ", "))
	}
	if strings.TrimSpace(cfg.TestCommand) != "" {
		fmt.Fprintf(&b, "- The tests run after you with: %s\n", cleanLine(cfg.TestCommand, 500))
	}
	b.WriteString("- Do not commit, push, switch branches or open a pull request: that is done for you.\n")
	if m := cleanLine(cfg.Mission, 1000); m != "" {
		fmt.Fprintf(&b, "\nThe project's mission: %s\n", m)
	}
	return b.String()
}

// overLimits says which of safety.max_files_per_pr and
// safety.max_lines_per_pr the change exceeds ("" for none; 0 is no limit).
func (run *devRun) overLimits(changes []devChange) string {
	s := run.cfg.Safety
	var over []string
	if s.MaxFilesPerPR > 0 && run.out.Files > s.MaxFilesPerPR {
		over = append(over, fmt.Sprintf("%d files > safety.max_files_per_pr %d", run.out.Files, s.MaxFilesPerPR))
	}
	if s.MaxLinesPerPR > 0 && run.out.Lines > s.MaxLinesPerPR {
		over = append(over, fmt.Sprintf("%d lines > safety.max_lines_per_pr %d", run.out.Lines, s.MaxLinesPerPR))
	}
	return strings.Join(over, ", ")
}

// runTests runs test_command in the worktree: a failing suite still gets
// its pull request (a draft, never auto-merged, since the engine's gate
// wants test_status "passed"), so the work is there for a person to
// finish. Only an operator's stop ends the run here.
func (run *devRun) runTests(ctx context.Context, wt string) bool {
	cfg, r := run.cfg, run.r
	if strings.TrimSpace(cfg.TestCommand) == "" {
		run.out.TestStatus = "skipped"
		run.logf("test_command is not set: the change is not tested (test_status skipped)")
		return true
	}
	timeout := testsDefaultTimeout
	if s := cfg.TestTimeoutSeconds; s > 0 && !math.IsInf(s, 0) && s < 1e6 {
		timeout = time.Duration(s * float64(time.Second))
	}
	spec := skillSpec(cfg, r.Skill)
	cmd := &act.Command{Argv: []string{"/bin/sh", "-c", cfg.TestCommand}, Timeout: timeout,
		Env: spec.Env, Policy: spec.EnvPolicy, Runner: run.runner, Source: "test_command"}
	run.logf("running test_command %s in the worktree (time limit %s)", strconv.Quote(cfg.TestCommand), timeout)
	tail := proc.NewTailBuffer(proc.LogTailSize)
	res := cmd.Execute(ctx, act.Request{Skill: r.Skill, Domain: r.Domain, Cycle: r.Cycle, ProjectDir: wt, Now: r.Now,
		Timeout: timeout, HaltFile: r.HaltFile, Output: teeWriter{tail, r.Output}, OnStart: r.OnStart})
	switch {
	case res.Halted || res.Canceled:
		run.stop("failed", "stopped while the tests ran: "+res.Error, true)
		run.resp.Halted, run.resp.Canceled = res.Halted, res.Canceled
		return false
	case res.OK:
		run.out.TestStatus = "passed"
	default:
		run.out.TestStatus = "failed"
		run.logf("the tests fail with the change (%s): the pull request is opened as a draft for a person to finish", res.Error)
	}
	return true
}

// push publishes the branch when the project has an origin remote, and
// finds the forge. A push that fails is fatal only for a hosted forge,
// which cannot see an unpushed branch; the plain-git forge sees the local
// branch.
func (run *devRun) push(ctx context.Context, g *gitrepo.Repo, branch string) (forge.Forge, bool) {
	f, err := forge.Select(ctx, run.cfg, run.r.ProjectDir)
	if err != nil {
		run.stop("failed", "the forge is not available: "+safetext.Error(err)+"; the branch "+branch+" is kept", true)
		return nil, false
	}
	remotes, _ := g.Run(ctx, "remote")
	if !containsLine(remotes, "origin") {
		run.logf("no origin remote: the branch %s is not pushed", branch)
		return f, true
	}
	ref := "refs/heads/" + branch
	if _, err := g.Run(ctx, "push", "--quiet", "origin", "--", ref+":"+ref); err != nil {
		if _, local := f.(*forge.Git); local {
			run.logf("push of %s to origin failed (%s); the local branch is the pull request", branch, safetext.Error(err))
			return f, true
		}
		run.stop("failed", "push of "+branch+" to origin failed: "+safetext.Error(err)+"; the branch is kept locally", true)
		return nil, false
	}
	run.out.Pushed = true
	run.logf("pushed %s to origin", branch)
	return f, true
}

func containsLine(out, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// openPR opens the draft pull request through the forge.
func (run *devRun) openPR(ctx context.Context, f forge.Forge, a state.Action, branch, base string) bool {
	if f == nil {
		run.stop("failed", "no forge (forge.provider is \"none\"): the branch "+branch+" is kept, but no pull request is opened", true)
		return false
	}
	c, ok := f.(forge.Creator)
	if !ok {
		run.stop("failed", "the forge "+f.Name()+" cannot open pull requests; the branch "+branch+" is kept", true)
		return false
	}
	body := fmt.Sprintf("Implements action %s: %s\n\nOpened by ooda's dev-cycle skill (cycle %d). %d file(s), %d line(s) changed; tests: %s.\n",
		run.out.ActionID, run.out.ActionTitle, run.r.Cycle, run.out.Files, run.out.Lines, run.out.TestStatus)
	if len(run.out.Reverted) > 0 {
		body += "\nChanges to protected paths were reverted and are not part of this pull request: " + strings.Join(run.out.Reverted, ", ") + "\n"
	}
	title := run.out.ActionTitle
	if run.out.TestStatus == "failed" {
		title = "[tests failing] " + title
	}
	pr, err := c.CreateDraft(ctx, forge.NewPR{Head: branch, Base: base, Title: title, Body: body})
	if err != nil {
		run.stop("failed", "opening the pull request failed: "+safetext.Error(err)+"; the branch "+branch+" is kept", true)
		return false
	}
	run.out.PRNumber, run.out.PRCreated, run.out.Result = pr.Number, true, "pr_opened"
	run.logf("opened PR #%d from %s (%s)", pr.Number, branch, f.Name())
	return true
}
