package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// doctorNetTimeout bounds each network check (the git remote, the
// forge): doctor answers in seconds whatever the network does.
var doctorNetTimeout = 10 * time.Second

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, state files, skills, chains, git and the forge (exit 0 only when nothing is wrong)",
		Long: `Check everything a cycle depends on and print a checklist, one line per
check, each failing line naming the file, the field and what to do:

  config      config.json loads and validates
  skill /X    every skill a cycle may run (the primary skills of the domains
              that run, their chain targets, config.skills entries): its
              executor, its program, its contract, the allowlist
  chains      the chain graph has no cycle
  state       every state file under agent/state/ reads (nothing is
              repaired: a cycle sets corrupt files aside, doctor only says
              so); the HALT file and the lock
  git         the project is a git repository; its upstream answers
  forge       the forge answers (skipped when forge.provider is "none")

Network checks time out after 10 s. Exit 0 when nothing failed, 2 when
anything did (a warning does not fail). --json prints
{"ok": bool, "checks": [{"name", "ok", "status", "detail"}]} with status
ok, fail, warn or skip.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd.Context(), g) },
	}
}

// doctorCheck is one line of the checklist.
type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Check statuses: only "fail" makes doctor exit non-zero.
const (
	checkOK   = "ok"
	checkFail = "fail"
	checkWarn = "warn"
	checkSkip = "skip"
)

type doctorRun struct {
	g      *globals
	ctx    context.Context
	root   string
	path   string
	cfg    *config.Config
	checks []doctorCheck
}

func (d *doctorRun) add(name, status string, detail ...string) {
	var lines []string
	for _, l := range detail {
		if l != "" {
			lines = append(lines, l)
		}
	}
	d.checks = append(d.checks, doctorCheck{Name: name, OK: status != checkFail, Status: status, Detail: strings.Join(lines, "\n")})
}

// rel shows a path relative to the project root when it is inside it.
func (d *doctorRun) rel(p string) string {
	if r, err := filepath.Rel(d.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func runDoctor(ctx context.Context, g *globals) error {
	if ctx == nil {
		ctx = context.Background()
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	path, err := g.configPath()
	if err != nil {
		return err
	}
	d := &doctorRun{g: g, ctx: ctx, root: root, path: path}
	d.checkConfig()
	if d.cfg != nil {
		registerSecrets(d.cfg)
		contracts := d.checkSkills()
		d.checkChains(contracts)
	} else {
		d.add("skills", checkSkip, "not checked: the configuration does not load")
	}
	d.checkState()
	d.checkGit()
	d.checkForge()

	ok := true
	for _, c := range d.checks {
		ok = ok && c.OK
	}
	if g.json {
		if err := g.printJSON(struct {
			OK     bool          `json:"ok"`
			Checks []doctorCheck `json:"checks"`
		}{ok, d.checks}); err != nil {
			return err
		}
	} else {
		d.print(ok)
	}
	if !ok {
		return withCode(ExitUsage, nil)
	}
	return nil
}

// print writes the checklist: ✓ ✗ ! – on a terminal, ok FAIL warn skip
// otherwise, so a log or a grep reads it.
func (d *doctorRun) print(ok bool) {
	w := d.g.stdout
	term := d.g.style(w).Terminal
	marks := map[string]string{checkOK: "ok  ", checkFail: "FAIL", checkWarn: "warn", checkSkip: "skip"}
	if term {
		marks = map[string]string{checkOK: "✓", checkFail: "✗", checkWarn: "!", checkSkip: "–"}
	}
	width := 0
	for _, c := range d.checks {
		width = max(width, len(c.Name))
	}
	fails, warns := 0, 0
	for _, c := range d.checks {
		switch c.Status {
		case checkFail:
			fails++
		case checkWarn:
			warns++
		}
		lines := strings.Split(c.Detail, "\n")
		fmt.Fprintf(w, "%s %-*s  %s\n", marks[c.Status], width, safetext.Text(c.Name), safetext.Text(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%s %-*s    %s\n", strings.Repeat(" ", len([]rune(marks[c.Status]))), width, "", safetext.Text(l))
		}
	}
	switch {
	case ok && warns == 0:
		fmt.Fprintf(w, "All %d checks passed.\n", len(d.checks))
	case ok:
		fmt.Fprintf(w, "No problem found (%s).\n", plural(warns, "warning", "warnings"))
	default:
		fmt.Fprintf(w, "%s failed, %s: fix the lines marked %s above.\n", plural(fails, "check", "checks"), plural(warns, "warning", "warnings"), strings.TrimSpace(marks[checkFail]))
	}
}

func (d *doctorRun) checkConfig() {
	cfg, err := config.LoadProject(d.path, d.root)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) && ce.NotFound {
			d.add("config", checkFail, fmt.Sprintf("%s: not found: run `ooda init` to create it", d.path))
			return
		}
		d.add("config", checkFail, strings.Split(errorText(err), "\n")...)
		d.checks[len(d.checks)-1].Detail += "\n(ooda config validate shows the same; ooda config set KEY VALUE fixes a value)"
		return
	}
	d.cfg = cfg
	var warns []string
	for _, w := range cfg.Warnings {
		warns = append(warns, "warning: "+w.String())
	}
	status := checkOK
	if len(warns) > 0 {
		status = checkWarn
	}
	d.add("config", status, append([]string{fmt.Sprintf("%s: valid (%d domains, level %d)", d.path, len(cfg.Domains), cfg.ProgressiveComplex.CurrentLevel)}, warns...)...)
}

// runs reports whether a cycle may run the domain.
func runs(dm config.Domain) bool { return dm.Scoreable() && dm.IsEnabled() }

// checkSkills checks every skill a cycle may run and returns the
// contracts that loaded, by skill name ("/x").
func (d *doctorRun) checkSkills() map[string]contract.Contract {
	cfg := d.cfg
	reg := skills.Registry()
	primary := map[string][]string{} // skill -> domains running it
	var pending []string
	seen := map[string]bool{}
	add := func(s string) {
		if s == "" {
			return
		}
		k := "/" + config.SkillKey(s)
		if !seen[k] {
			seen[k] = true
			pending = append(pending, k)
		}
	}
	for _, dm := range cfg.Domains {
		if !runs(dm) {
			continue
		}
		if dm.PrimarySkill != "" {
			k := "/" + config.SkillKey(dm.PrimarySkill)
			primary[k] = append(primary[k], dm.Name)
			add(k)
		}
		for _, c := range dm.Chain {
			add(c)
		}
	}
	if cfg.Implementation.Enabled {
		add(cfg.Implementation.PrimarySkill)
	}
	for _, n := range cfg.SkillNames() {
		add(n)
	}
	sort.Strings(pending)
	// Executable problems, by the JSON pointer of the program.
	exe := map[string]string{}
	for _, is := range cfg.ExecutableIssues(d.root) {
		exe[is.Path] = is.Reason
	}
	agentProblem := exe[config.Pointer("agent", "command", "0")]
	if agentProblem != "" {
		d.add("agent", checkFail, fmt.Sprintf("%s: /agent/command/0: %s", d.path, agentProblem))
	}
	if p := exe[config.Pointer("judge", "command", "0")]; p != "" {
		d.add("judge", checkFail, fmt.Sprintf("%s: /judge/command/0: %s", d.path, p))
	}
	contracts := map[string]contract.Contract{}
	for i := 0; i < len(pending); i++ {
		name := pending[i]
		var problems, notes []string
		ex, err := reg.Resolve(cfg, name)
		desc := ""
		switch {
		case err != nil && strings.Contains(err.Error(), "unknown builtin"):
			ptr := "/skills"
			for _, n := range cfg.SkillNames() {
				if config.SkillKey(n) == config.SkillKey(name) {
					ptr = config.Pointer("skills", n, "builtin")
				}
			}
			problems = append(problems, fmt.Sprintf("%s: %s: %s: the built-in skills are %s", d.path, ptr, strings.TrimPrefix(err.Error(), "skill "+name+": "), strings.Join(reg.Names(), ", ")))
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %s: add \"skills\": {%q: {\"command\": [...]}} to config.json, set agent.command, or scaffold one with `ooda skill create %s`",
				d.path, err.Error(), name, config.SkillKey(name)))
		default:
			desc = ex.Describe()
			if strings.HasPrefix(desc, "command") {
				for _, n := range cfg.SkillNames() {
					if config.SkillKey(n) == config.SkillKey(name) {
						if p := exe[config.Pointer("skills", n, "command", "0")]; p != "" {
							problems = append(problems, fmt.Sprintf("%s: %s: %s", d.path, config.Pointer("skills", n, "command", "0"), p))
						}
					}
				}
			}
			if strings.HasPrefix(desc, "agent") && agentProblem != "" {
				problems = append(problems, "runs through agent.command, which cannot start (see agent)")
			}
		}
		ct, cerr := contract.Load(d.root, cfg, name)
		if cerr != nil {
			problems = append(problems, "contract: "+cerr.Error()+": fix the file (docs/skills.md#contracts)")
		} else {
			contracts[name] = ct
			for _, t := range ct.ChainTriggers {
				if k := "/" + config.SkillKey(t.Target); !seen[k] {
					seen[k] = true
					pending = append(pending, k)
				}
			}
		}
		if doms := primary[name]; len(doms) > 0 && !cfg.Safety.Allowed(name) {
			problems = append(problems, fmt.Sprintf("%s: /safety/skill_allowlist: %s is not in it, so a cycle that selects %s refuses to run it: add %q", d.path, name, strings.Join(doms, ", "), name))
		} else if len(doms) == 0 && !cfg.Safety.Allowed(name) {
			notes = append(notes, "warning: not in safety.skill_allowlist: a cycle will not run it")
		}
		status := checkOK
		switch {
		case len(problems) > 0:
			status = checkFail
		case len(notes) > 0:
			status = checkWarn
		}
		summary := desc
		if cerr == nil {
			summary += "; contract " + ct.Source
			if ct.OODAPhase != "" {
				summary += ", phase " + ct.OODAPhase
			}
		}
		if len(problems) > 0 {
			d.add("skill "+name, status, append(problems, notes...)...)
		} else {
			d.add("skill "+name, status, append([]string{summary}, notes...)...)
		}
	}
	if len(pending) == 0 {
		d.add("skills", checkWarn, "no domain runs a skill: add a domain (ooda skill create NAME --domain DOMAIN)")
	}
	return contracts
}

// chainEdge is one edge of the chain graph and where it is written.
type chainEdge struct{ from, to, where string }

func (d *doctorRun) checkChains(contracts map[string]contract.Contract) {
	graph := map[string]contract.Contract{}
	var edges []chainEdge
	for name, ct := range contracts {
		graph[name] = ct
		for i, t := range ct.ChainTriggers {
			edges = append(edges, chainEdge{name, "/" + config.SkillKey(t.Target), d.triggerSource(name, ct, i)})
		}
	}
	// A domain's legacy chain list runs when its skill's contract has no
	// triggers: those edges are the graph too.
	for _, dm := range d.cfg.Domains {
		k := "/" + config.SkillKey(dm.PrimarySkill)
		if !runs(dm) || dm.PrimarySkill == "" || len(dm.Chain) == 0 || len(contracts[k].ChainTriggers) > 0 {
			continue
		}
		ct := graph[k]
		for i, c := range dm.Chain {
			ct.ChainTriggers = append(ct.ChainTriggers, contract.ChainTrigger{Target: c})
			edges = append(edges, chainEdge{k, "/" + config.SkillKey(c), fmt.Sprintf("%s: %s", d.rel(d.path), config.Pointer("domains", dm.Name, "chain", strconv.Itoa(i)))})
		}
		graph[k] = ct
	}
	cycles := contract.ChainCycles(graph)
	if len(cycles) == 0 {
		d.add("chains", checkOK, fmt.Sprintf("%s, no cycle", plural(len(edges), "chain trigger", "chain triggers")))
		return
	}
	var lines []string
	for _, c := range cycles {
		lines = append(lines, "circular chain "+strings.Join(c, " -> ")+": remove one of its triggers:")
		for i := 0; i+1 < len(c); i++ {
			for _, e := range edges {
				if e.from == c[i] && e.to == c[i+1] {
					lines = append(lines, "  "+e.where)
				}
			}
		}
	}
	d.add("chains", checkFail, lines...)
}

// triggerSource names the file and field of a contract's i-th chain trigger.
func (d *doctorRun) triggerSource(name string, ct contract.Contract, i int) string {
	key := config.SkillKey(name)
	t := ct.ChainTriggers[i]
	field := fmt.Sprintf("chain_triggers[%d] (target %s)", i, t.Target)
	switch ct.Source {
	case "config":
		return fmt.Sprintf("%s: %s", d.rel(d.path), config.Pointer("skills", name, "contract", "chain_triggers", strconv.Itoa(i)))
	case "SKILL.md":
		return fmt.Sprintf("skills/%s/SKILL.md: front matter: %s", key, field)
	default:
		return fmt.Sprintf("skills/%s/%s: %s", key, ct.Source, field)
	}
}

func (d *doctorRun) checkState() {
	st := state.New(d.root)
	haltFile := config.Default().Safety.HaltFile
	if d.cfg != nil {
		st.MaxRead = d.cfg.Safety.MaxReadBytes()
		haltFile = d.cfg.Safety.HaltFile
	}
	// Load reads and decodes; it repairs nothing (Quarantine and Reset
	// are separate steps that only a cycle takes).
	snap, err := st.Load()
	var fails, warns []string
	var le *state.CorruptLedgerError
	switch {
	case errors.As(err, &le):
		fails = append(fails, fmt.Sprintf("%s: %v: the next cycle moves it aside and HALTs (today's spend is unknown); restore it from git (git log -- %s) or check today's spend, then delete it", d.rel(le.Path), le.Err, d.rel(le.Path)))
	case err != nil:
		fails = append(fails, err.Error())
	}
	if snap != nil {
		for _, c := range snap.Corrupt {
			fails = append(fails, fmt.Sprintf("%s: %v: the next cycle copies it to %s.corrupt-<time> and starts it over; restore it from git first if its content matters (git log -- %s)", d.rel(c.Path), c.Err, c.File, d.rel(c.Path)))
		}
		for _, w := range snap.Warnings {
			warns = append(warns, "warning: "+w)
		}
	}
	if _, _, sw, serr := st.LatestSession(); serr != nil {
		fails = append(fails, serr.Error()+": the next `ooda run` starts a new session; move the file aside to keep it")
	} else {
		for _, w := range sw {
			warns = append(warns, "warning: "+w)
		}
	}
	read := 0
	if d.cfg != nil {
		for _, dm := range d.cfg.Domains {
			if !runs(dm) {
				continue
			}
			read++
			ds, derr := st.ReadDomainState(dm.StateFile)
			if derr != nil {
				fails = append(fails, fmt.Sprintf("%s (domain %s): %v: its skill rewrites it on its next run; until then the domain reads as never run", dm.StateFile, dm.Name, derr))
			}
			for _, w := range ds.Warnings {
				warns = append(warns, fmt.Sprintf("warning: %s: %s", dm.StateFile, w))
			}
			if _, _, lerr := st.ReadLens(dm.Name); lerr != nil {
				fails = append(fails, fmt.Sprintf("%s: %v: the cycle runs without a lens; restore it from git, or delete it to start a new one", d.rel(st.LensPath(dm.Name)), lerr))
			}
			if len(dm.Rotation) > 0 {
				if _, rerr := st.ReadRotationCursor(dm.Name); rerr != nil {
					fails = append(fails, fmt.Sprintf("%s: %v: rotation restarts at the first item; delete the file to silence this", d.rel(st.RotationCursorPath(dm.Name)), rerr))
				}
			}
		}
	}
	status := checkOK
	switch {
	case len(fails) > 0:
		status = checkFail
	case len(warns) > 0:
		status = checkWarn
	}
	summary := "agent/state/evolve/ reads"
	if read > 0 {
		summary += fmt.Sprintf(", and %s", plural(read, "domain state file", "domain state files"))
	}
	if snap != nil && !snap.StateFound && len(fails) == 0 {
		summary += " (no cycle has run yet)"
	}
	if len(fails) > 0 {
		d.add("state", status, append(fails, warns...)...)
	} else {
		d.add("state", status, append([]string{summary}, warns...)...)
	}

	if halted, reason := st.HaltExists(haltFile); halted {
		d.add("halt", checkFail, fmt.Sprintf("%s exists (%s): no cycle runs until `ooda resume` removes it", haltFile, state.HaltLine(reason)))
	} else {
		d.add("halt", checkOK, "no HALT file ("+haltFile+")")
	}
	if li, held := state.ReadLock(st.LockPath()); held {
		d.add("lock", checkWarn, fmt.Sprintf("%s is held by pid %d on %s since %s: a cycle is running, or one crashed (the next cycle recovers it after safety.lock_timeout_minutes)", d.rel(st.LockPath()), li.PID, li.Host, li.StartedAt))
	}
}

func (d *doctorRun) checkGit() {
	if d.cfg != nil && !d.cfg.CommitState() && !d.cfg.PushState() {
		d.add("git", checkSkip, "git.commit_state and git.push are false: ooda does not use git")
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, doctorNetTimeout)
	defer cancel()
	repo, ok := gitrepo.Open(ctx, d.root, nil)
	if !ok {
		d.add("git", checkFail, fmt.Sprintf("%s is not in a git repository (or git is not installed): run `git init`, or set git.commit_state false to keep the state uncommitted", d.root))
		return
	}
	repo.Timeout = doctorNetTimeout
	if d.cfg != nil {
		repo.MaxOutput = d.cfg.Safety.MaxReadBytes()
	}
	detail := "git repository"
	if d.cfg == nil || d.cfg.CommitState() {
		// A state commit needs an identity; without one every cycle's
		// commit fails.
		if err := repo.CheckIdentity(ctx); gitrepo.IdentityUnknown(err) {
			d.add("git", checkFail, gitrepo.IdentityHelp+" in "+d.rel(d.path))
			return
		}
	}
	if d.cfg != nil && !d.cfg.PushState() {
		d.add("git", checkOK, detail+"; git.push is false: nothing is pushed")
		return
	}
	u, err := repo.Upstream(ctx)
	var np *gitrepo.NoPushError
	if errors.As(err, &np) {
		d.add("git", checkOK, detail+"; state commits stay local: "+np.Why)
		return
	}
	if err != nil {
		d.add("git", checkFail, err.Error())
		return
	}
	if _, err := repo.Run(ctx, "ls-remote", "--exit-code", "--heads", "--end-of-options", u.Remote, u.Ref); err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no answer within %s", doctorNetTimeout)
		}
		d.add("git", checkFail, fmt.Sprintf("the upstream %s does not answer: %s: check the remote's URL (git remote -v) and your credentials, or set git.push false", u, firstLine(msg)))
		return
	}
	d.add("git", checkOK, fmt.Sprintf("%s; upstream %s answers", detail, u))
}

func (d *doctorRun) checkForge() {
	if d.cfg == nil {
		d.add("forge", checkSkip, "not checked: the configuration does not load")
		return
	}
	if d.cfg.Forge.Provider == "none" {
		d.add("forge", checkSkip, "forge.provider is \"none\": no pull requests or issues are read")
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, doctorNetTimeout)
	defer cancel()
	f, err := forge.Select(ctx, d.cfg, d.root)
	if err != nil {
		d.add("forge", checkFail, fmt.Sprintf("%s: /forge: %s", d.path, err.Error()))
		return
	}
	if f == nil {
		d.add("forge", checkSkip, "no forge found (forge.provider \"auto\": no GitHub remote and not a git repository)")
		return
	}
	stt, err := f.Status(ctx)
	if err != nil {
		msg := err.Error()
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", doctorNetTimeout)
		}
		hint := "check forge.api_url, forge.repo and the token (docs/forge.md)"
		if !strings.HasPrefix(f.Name(), "github") {
			hint = "check forge.default_branch and that the branch has a commit (docs/forge.md)"
		}
		d.add("forge", checkFail, fmt.Sprintf("%s: %s: %s", f.Name(), firstLine(msg), hint))
		return
	}
	d.add("forge", checkOK, fmt.Sprintf("%s answers: %s, %s", f.Name(), plural(len(stt.Open), "open pull request", "open pull requests"), plural(len(stt.Issues), "open issue", "open issues")))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
