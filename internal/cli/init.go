package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/stack"
	"github.com/ooda-loop/ooda/internal/state"
)

// initOptions are the flags of `ooda init`.
type initOptions struct {
	mission string
	level   int
	force   bool
	yes     bool
}

// adaptiveDoc is the note init writes beside the adaptive scoring it turns
// on.
const adaptiveDoc = "Adaptive scoring: learned from each domain's own cycles and pulled toward unmet goals (docs/scoring.md). \"enabled\": false gives the original OODA-loop scoring exactly."

func newInitCmd(g *globals) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init [--mission TEXT] [--level N] [--force] [--yes]",
		Short: "Create config.json and agent/state/ for a project",
		Long: `Create a valid config.json, the state skeleton under agent/state/evolve/,
and .gitignore entries for the cycle lock and the HALT file, in --project DIR
or else the current directory (init does not search upwards as the other
commands do). Refuses, without --force, to overwrite an existing config.json
or to create a project inside another one (an ooda config.json in a parent
directory, up to the repository root).

init recognises the project's stack from the files at its top (Go, Node with
npm, pnpm or yarn, Python, Rust, Java with Maven or Gradle, Ruby) and its test
command, and wires three domains to built-in skills: test_coverage (/tests,
running test_command), code_quality (/lint, the stack's linters) and backlog
(/backlog, the forge's open issues). It proposes goals measured by the test
command and the linters: "proposed" (to be switched to "active" by a person)
unless --yes, which makes them active.

The mission comes from --mission, else it is asked for on a terminal; without
a terminal, or with --yes, init never prompts and leaves it empty.

The config sets git.push to false: each cycle commits the state files it
wrote to the current branch and pushes nothing until you set it to true.
Its level (default 2) lets every active domain take part in scoring.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.mission, "mission", "", "one sentence: what this project is for (drives mission-aware scoring)")
	f.IntVar(&o.level, "level", initLevel, "progressive-complexity level 0..3 (0: the heaviest domain only, 1: the two heaviest, 2: every domain, 3: every domain and the implementation queue)")
	f.BoolVar(&o.force, "force", false, "overwrite an existing config.json, or create a project inside another one")
	f.BoolVar(&o.yes, "yes", false, "never prompt (non-interactive), and make the proposed goals active")
	return cmd
}

// initLevel is the level init writes by default: 2, the first at which
// every active domain is scored. At 0 and 1 only the one or two heaviest
// domains take part, so the domains a newcomer adds after the first would
// vanish from the score table without a word.
const initLevel = 2

// levelLine explains progressive-complexity levels in one line, in the
// output of init and in the __doc__ of the config it writes.
func levelLine(level int) string {
	what := map[int]string{0: "only the heaviest domain is scored", 1: "only the two heaviest domains are scored", 2: "every active domain is scored", 3: "every active domain is scored, and the implementation queue when implementation.enabled"}[level]
	return fmt.Sprintf("Level %d: %s (progressive_complexity.current_level; 0 scores the heaviest domain only, 1 the two heaviest, 2 all, 3 all plus the implementation queue).", level, what)
}

// pushDoc is the note init writes beside git.push.
const pushDoc = "Each cycle commits the state files it wrote to the current branch. Set push to true to also push that commit to the branch's upstream."

func runInit(g *globals, o initOptions) error {
	if o.level < 0 || o.level > 3 {
		return usageError(fmt.Errorf("--level must be 0, 1, 2 or 3, got %d", o.level))
	}
	// init creates the project where it is told or where it runs; it does
	// not search upwards as the other commands do: that would put the new
	// configuration over the enclosing project's.
	root, err := g.initRoot()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		why := "is not a directory"
		if errors.Is(err, fs.ErrNotExist) {
			why = "does not exist"
		} else if err != nil {
			why = "cannot be read: " + errReason(err)
		}
		return usageError(fmt.Errorf("the project directory %s %s; ooda init changed nothing (create it first, e.g. mkdir -p %s)", root, why, root))
	}
	cfgPath := filepath.Join(root, configName)
	if g.config != "" {
		if cfgPath, err = filepath.Abs(g.config); err != nil {
			return err
		}
	}
	if _, err := os.Stat(cfgPath); err == nil && !o.force {
		return usageError(fmt.Errorf("%s already exists; use --force to overwrite it", cfgPath))
	}
	if !o.force {
		outer, err := enclosingProject(root)
		if err != nil {
			return err
		}
		if outer != "" {
			return usageError(fmt.Errorf("%s is inside the ooda project %s (%s): every ooda command run here already works on that project; ooda init changed nothing (use --force to create a separate project here)", root, outer, filepath.Join(outer, configName)))
		}
	}
	st := state.New(root)
	evolve, err := filepath.Rel(root, st.EvolveDir)
	if err != nil {
		return err
	}
	// Checked before anything is written: a symlinked agent/ would
	// otherwise be refused by the config check below with a message about
	// safety.halt_file, a field the user never wrote.
	if err := insideProject(root, config.Default().Safety.HaltFile, evolve); err != nil {
		return usageError(err)
	}
	mission, asked := o.mission, false
	if mission == "" && !o.yes && isTerminal(g.stdin) {
		mission, asked = askMission(g), true
	}
	det := stack.Detect(root)
	plan := planProject(det, mission, o.yes)
	name := filepath.Base(root)
	doc := map[string]any{
		"schema_version":         config.Default().SchemaVersion,
		"project":                map[string]any{"name": name, "locale": "en", "timezone": "UTC"},
		"mission":                mission,
		"domains":                plan.domainsJSON(),
		"skills":                 plan.skillsJSON(),
		"progressive_complexity": map[string]any{"__doc__": levelLine(o.level), "current_level": o.level},
		"git":                    map[string]any{"__doc__": pushDoc, "push": false},
		"safety": map[string]any{
			"halt_file":                  config.Default().Safety.HaltFile,
			"min_cycle_interval_minutes": config.Default().Safety.MinCycleIntervalMin,
			// Exactly the skills wired: an empty list would allow every
			// skill, and any other skill (a chain's /dev-cycle, say)
			// stays blocked until a person adds it.
			"skill_allowlist": plan.allowlist(),
		},
		"cost":    map[string]any{"daily_limit_usd": config.Default().Cost.DailyLimitUSD, "warning_threshold_pct": config.Default().Cost.WarningThresholdPct},
		"scoring": map[string]any{"__doc__": adaptiveDoc, "adaptive": config.InitAdaptive()},
	}
	if len(plan.goals) > 0 {
		// The goals init proposes are invariants (the tests pass, the
		// linters find nothing) that a healthy project meets at once; a
		// met goal would otherwise idle the loop (3-E2), and an idle loop
		// runs no test that could find the next failure.
		doc["goal_completion_idle"] = false
	}
	if plan.testCommand != "" {
		doc["test_command"] = plan.testCommand
		doc["test_timeout_seconds"] = config.Default().TestTimeoutSeconds
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// The content is fixed, so what can fail here is the project: a file
	// in the way of the HALT file, say. The paths are checked against the
	// project, as every command does, wherever --config puts the file.
	if _, err := config.ParseProject(cfgPath, b, root); err != nil {
		return fmt.Errorf("the configuration init writes does not validate in this project: %w", err)
	}
	// .gitignore is read, and refused if need be, before anything is
	// written: a refusal leaves the project as it was.
	gitignore, added, ignoreExisted, err := planGitignore(root, []string{"agent/state/evolve/.lock", "agent/state/evolve/runs/", config.Default().Safety.HaltFile})
	if err != nil {
		return usageError(err)
	}
	// What was here before, for the note on a project made in a
	// subdirectory of a repository: what to remove to start over at the
	// repository's root.
	_, agentErr := os.Lstat(filepath.Join(root, "agent"))
	agentExisted := agentErr == nil
	// The write replaces whatever is at the name (a rename in its
	// directory), so a config.json that is a symlink is replaced, never
	// followed.
	if err := state.WriteFileAtomic(cfgPath, b, 0o644); err != nil {
		return err
	}
	if !st.Exists(state.StateFile) {
		if err := st.SaveState(state.State{SchemaVersion: "1.2.0"}); err != nil {
			return err
		}
	}
	// goals.json is the project's: one that exists (a --force run over
	// a project with a history) is never rewritten.
	goalsKept := len(plan.goals) > 0 && st.Exists(state.GoalsFile)
	if len(plan.goals) > 0 && !goalsKept {
		if err := st.SaveGoals(state.Goals{Goals: plan.goals}); err != nil {
			return err
		}
	}
	if added != nil {
		if err := state.WriteFileAtomic(filepath.Join(root, gitignoreName), gitignore, 0o644); err != nil {
			return err
		}
	}
	if added == nil {
		added = []string{}
	}
	if repo := repositoryRoot(root); repo != "" && repo != root {
		made := []string{cfgPath}
		if !agentExisted {
			made = append(made, filepath.Join(root, "agent")+string(filepath.Separator))
		}
		switch {
		case len(added) > 0 && !ignoreExisted:
			made = append(made, filepath.Join(root, gitignoreName))
		case len(added) > 0:
			made = append(made, "the lines added to "+filepath.Join(root, gitignoreName))
		}
		fmt.Fprintf(g.stderr, "Note: the project %s is a subdirectory of the git repository %s; ooda commands find it from anywhere below %s. To make the whole repository the project instead, remove %s and run ooda init in %s.\n", safetext.Args(root, repo, root, joinAnd(made), repo)...)
	}
	if mission == "" && !asked {
		fmt.Fprintln(g.stderr, "Note: no mission given, so mission-aware scoring is off. Give one with --mission \"one sentence: what this project is for\" (with --force over this config), or set \"mission\" in config.json.")
	}
	for _, n := range det.Notes {
		fmt.Fprintf(g.stderr, "Note: %s.\n", safetext.Text(n))
	}
	if g.json {
		return g.printJSON(initJSON(cfgPath, st.EvolveDir, added, o.level, mission, det, plan, goalsKept))
	}
	w := g.stdout
	printDetection(w, det)
	fmt.Fprintf(w, "Created %s (level %d) and %s.\n", cfgPath, o.level, st.EvolveDir)
	printPlan(w, plan, goalsKept, o.yes)
	if len(added) > 0 {
		fmt.Fprintf(w, "Added to .gitignore: %s\n", strings.Join(added, ", "))
	}
	fmt.Fprintln(w, levelLine(o.level))
	fmt.Fprintln(w, "Git: each cycle commits the state files it wrote to the current branch; pushing is off (git.push: false in config.json; set it to true to push to the branch's upstream).")
	fmt.Fprintln(w, "Next: run `ooda cycle --dry-run` to see what the first cycle would pick, then `ooda cycle` (the first real cycle only observes; the second runs a skill).")
	return nil
}

// gitignoreName is the file init adds its entries to, in the project root.
const gitignoreName = ".gitignore"

// gitignoreComment heads the entries init adds: it names each kind of
// entry, so that whoever reads .gitignore knows why the run logs, too,
// stay out of the history the cycles commit.
const gitignoreComment = "# ooda: the cycle lock, the skill run logs and the HALT switch are local, never committed"

// planGitignore returns the new content of .gitignore with the missing
// lines appended, the lines it adds (nil when none is missing), and
// whether .gitignore was there before. It
// reads .gitignore as ooda reads every project file: only a regular file,
// inside the project, of at most the default read limit, without
// blocking. /dev/zero behind a symlink would exhaust memory, a named pipe
// would hang init, and a symlink out of the project would copy another
// file's bytes into the project. A symlink is refused even inside the
// project: git does not read a .gitignore through a symlink, so entries
// written through one would protect nothing. The error names .gitignore
// and says how to repair it.
func planGitignore(root string, lines []string) (content []byte, added []string, existed bool, err error) {
	p := filepath.Join(root, gitignoreName)
	refuse := func(why, repair string) error {
		return fmt.Errorf("%s: %s; ooda init changed nothing (%s, and run init again)", p, why, repair)
	}
	const replace = "replace it with a regular file, or remove it"
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		link, _ := os.Readlink(p)
		return nil, nil, true, refuse(fmt.Sprintf("is a symlink to %s, and git does not read a .gitignore through a symlink", link), replace)
	}
	old, err := config.ReadProjectFile(root, gitignoreName, config.Default().Safety.MaxReadBytes())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		repair := replace
		if errors.Is(err, config.ErrTooLarge) {
			repair = "shorten it"
		}
		return nil, nil, true, refuse(strings.TrimPrefix(err.Error(), gitignoreName+": "), repair)
	}
	existed = err == nil
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range lines {
		if !have[l] && !have["/"+l] {
			added = append(added, l)
		}
	}
	if len(added) == 0 {
		return nil, nil, existed, nil
	}
	out := old
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, gitignoreComment+"\n"+strings.Join(added, "\n")+"\n"...)
	return out, added, existed, nil
}

// insideProject checks that none of the paths (relative to root) goes
// through a symlink that leads out of the project, or nowhere: ooda keeps
// its state and its HALT file inside the project and never follows a
// symlink out of it (docs/security.md). The error names the symlink and
// where it points.
func insideProject(root string, rels ...string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("project %s: %w", root, err)
	}
	for _, rel := range rels {
		p := root
		for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
			p = filepath.Join(p, part)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			link, _ := os.Readlink(p)
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("%s is a symlink to %s, which does not exist: ooda keeps %s inside the project and does not follow a symlink (replace it with a directory)", p, link, rel)
			}
			if !inside(target, realRoot) {
				return fmt.Errorf("%s is a symlink to %s, outside the project %s: ooda keeps %s inside the project and does not follow a symlink out of it (replace it with a directory)", p, target, root, rel)
			}
		}
	}
	return nil
}

// initDomain is one domain init wires to a built-in skill.
type initDomain struct {
	name      string
	skill     string // without the slash
	builtin   string
	weight    float64
	alignment float64
	// matched is the mission's word that raised the alignment, if any.
	matched string
	// minInterval is the domain's cooldown in hours (0: none).
	minInterval float64
	what        string
}

// initPlan is what init derives from the stack and the mission.
type initPlan struct {
	primary     *stack.Stack
	testCommand string
	domains     []initDomain
	goals       []state.Goal
}

// missionWords raise a domain's mission_alignment from its base to its
// high value when the mission contains one of them (as a word prefix,
// case-insensitively): a mission about green tests makes the tests
// domain fully on-mission, one about shipping features the backlog.
var missionWords = map[string][]string{
	"test_coverage": {"test", "green", "regression", "reliab", "correct", "bug", "stable", "stabil", "quality"},
	"code_quality":  {"lint", "clean", "quality", "maintain", "readab", "style", "tidy", "debt", "refactor"},
	"backlog":       {"feature", "roadmap", "backlog", "issue", "user", "ship", "deliver", "release", "customer"},
}

// planProject wires the domains: test_coverage (/tests) when a test
// command is known, code_quality (/lint) when the stack has a linter, and
// backlog (/backlog) always. Each runs a read-only built-in, so each is a
// fallback: a new project's confidence is low, and without a fallback
// domain the confidence gate would skip every cycle. Goals measure what
// the two first domains watch.
func planProject(det stack.Result, mission string, yes bool) initPlan {
	var p initPlan
	if s, ok := det.Primary(); ok {
		p.primary = &s
		p.testCommand = s.TestCommand
	}
	status := "proposed"
	if yes {
		status = "active"
	}
	one := 1.0
	if p.testCommand != "" {
		p.domains = append(p.domains, initDomain{name: "test_coverage", skill: "tests", builtin: "tests", weight: 2.0, alignment: 0.7, what: "runs `" + p.testCommand + "`"})
		p.goals = append(p.goals, state.Goal{ID: "G-tests-pass", Title: "The test suite passes (" + p.testCommand + ")", Status: status, Target: &one,
			MetricCommand: passFail(p.testCommand), RelatedDomains: []string{"test_coverage"}})
	}
	if p.primary != nil && len(p.primary.Linters) > 0 {
		var names, cmds []string
		for _, l := range p.primary.Linters {
			names = append(names, l.Name)
			cmds = append(cmds, l.Command)
		}
		p.domains = append(p.domains, initDomain{name: "code_quality", skill: "lint", builtin: "lint", weight: 1.0, alignment: 0.4, what: strings.Join(names, ", ")})
		verb := " find nothing"
		if len(names) == 1 {
			verb = " finds nothing"
		}
		p.goals = append(p.goals, state.Goal{ID: "G-lint-clean", Title: strings.Join(names, " and ") + verb, Status: status, Target: &one,
			MetricCommand: passFail(strings.Join(cmds, " && ")), RelatedDomains: []string{"code_quality"}})
	}
	p.domains = append(p.domains, initDomain{name: "backlog", skill: "backlog", builtin: "backlog", weight: 0.5, alignment: 0.5, minInterval: 12,
		what: "open issues from the forge, at most every 12 h"})
	lower := strings.ToLower(mission)
	for i := range p.domains {
		d := &p.domains[i]
		for _, w := range missionWords[d.name] {
			if regexp.MustCompile(`\b` + w).MatchString(lower) {
				d.matched = w
				d.alignment = map[string]float64{"test_coverage": 1.0, "code_quality": 0.8, "backlog": 0.8}[d.name]
				break
			}
		}
	}
	return p
}

// passFail turns a command into a metric command: 1 when it succeeds, 0
// when it fails, its own output discarded (only the last line counts).
func passFail(cmd string) string {
	return "if (" + cmd + ") >/dev/null 2>&1; then echo 1; else echo 0; fi"
}

// orderedObject marshals as a JSON object with its keys in the given
// order: the order of config.domains is the final tie-break.
type orderedObject struct {
	keys []string
	vals []any
}

// MarshalJSON writes the keys in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func (p initPlan) domainsJSON() orderedObject {
	var o orderedObject
	for _, d := range p.domains {
		v := orderedObject{keys: []string{"weight", "primary_skill", "fallback", "mission_alignment"}, vals: []any{d.weight, "/" + d.skill, true, d.alignment}}
		if d.minInterval > 0 {
			v.keys, v.vals = append(v.keys, "min_interval_hours"), append(v.vals, d.minInterval)
		}
		v.keys, v.vals = append(v.keys, "description"), append(v.vals, "Run by the built-in "+d.builtin+" skill: "+d.what+".")
		o.keys, o.vals = append(o.keys, d.name), append(o.vals, v)
	}
	return o
}

// skillsJSON names each wired skill's executor: the built-in would be
// found by its name anyway, but an explicit entry shows where to swap in
// a command of one's own.
func (p initPlan) skillsJSON() orderedObject {
	var o orderedObject
	for _, d := range p.domains {
		o.keys, o.vals = append(o.keys, "/"+d.skill), append(o.vals, map[string]string{"builtin": d.builtin})
	}
	return o
}

func (p initPlan) allowlist() []string {
	out := []string{}
	for _, d := range p.domains {
		out = append(out, "/"+d.skill)
	}
	return out
}

// stackLine describes a stack in one line: its files, its tests, its linters.
func stackLine(s stack.Stack) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", s.Name, strings.Join(s.Files, ", "))
	if s.Runner != "" && !strings.Contains(s.TestCommand, s.Runner) {
		fmt.Fprintf(&b, "; %s", s.Runner)
	}
	b.WriteString(")")
	if s.TestCommand != "" {
		fmt.Fprintf(&b, ", tests: %s", s.TestCommand)
	} else {
		b.WriteString(", no test setup recognised")
	}
	if len(s.Linters) > 0 {
		var names []string
		for _, l := range s.Linters {
			names = append(names, l.Name)
		}
		fmt.Fprintf(&b, ", linters: %s", strings.Join(names, ", "))
	}
	return b.String()
}

func printDetection(w io.Writer, det stack.Result) {
	s, ok := det.Primary()
	if !ok {
		fmt.Fprintln(w, "Stack: none recognised (no go.mod, package.json, pyproject.toml, setup.cfg, requirements*.txt, Cargo.toml, pom.xml, build.gradle or Gemfile at the top of the project), so no test command: set \"test_command\" in config.json and add a test_coverage domain (docs/init.md#no-recognised-stack).")
		return
	}
	fmt.Fprintf(w, "Stack: %s.\n", safetext.Text(stackLine(s)))
	if len(det.Stacks) > 1 {
		var others []string
		for _, o := range det.Stacks[1:] {
			others = append(others, stackLine(o))
		}
		fmt.Fprintf(w, "Also found: %s. ooda init wires the first it finds of Go, Rust, Java (Maven), Java (Gradle), Python, Ruby, Node; to test with another, change \"test_command\" in config.json.\n", safetext.Text(strings.Join(others, "; ")))
	}
}

func printPlan(w io.Writer, p initPlan, goalsKept, yes bool) {
	fmt.Fprintln(w, "Domains, each run by a built-in skill:")
	for _, d := range p.domains {
		why := ""
		if d.matched != "" {
			why = fmt.Sprintf(" (the mission says %q)", d.matched+"…")
		}
		fmt.Fprintf(w, "  %-14s /%-8s weight %.1f, mission_alignment %.1f%s: %s\n", d.name, d.skill, d.weight, d.alignment, why, safetext.Text(d.what))
	}
	fmt.Fprintln(w, "No health endpoints known: to watch a running service, add \"health_endpoints\" and a service_health domain run by /health (docs/init.md#health-checks).")
	switch {
	case len(p.goals) == 0:
	case goalsKept:
		fmt.Fprintln(w, "Goals: agent/state/evolve/goals.json exists and was left as it is; no goal proposed.")
	case yes:
		fmt.Fprintln(w, "Goals (active, measured every cycle):")
	default:
		fmt.Fprintln(w, "Goals (proposed: set \"status\" to \"active\" in agent/state/evolve/goals.json, or run init with --yes, to measure them every cycle):")
	}
	if !goalsKept {
		for _, g := range p.goals {
			fmt.Fprintf(w, "  %-13s %s\n", g.ID, safetext.Text(g.Title))
		}
	}
}

// initJSON is the --json output of init.
func initJSON(cfgPath, stateDir string, added []string, level int, mission string, det stack.Result, p initPlan, goalsKept bool) map[string]any {
	var primary any
	if p.primary != nil {
		primary = p.primary
	}
	others := []stack.Stack{}
	if len(det.Stacks) > 1 {
		others = det.Stacks[1:]
	}
	domains := []map[string]any{}
	for _, d := range p.domains {
		domains = append(domains, map[string]any{"name": d.name, "skill": "/" + d.skill, "builtin": d.builtin, "weight": d.weight, "mission_alignment": d.alignment})
	}
	goals := []map[string]any{}
	if !goalsKept {
		for _, g := range p.goals {
			goals = append(goals, map[string]any{"id": g.ID, "title": g.Title, "status": g.Status, "metric_command": g.MetricCommand})
		}
	}
	notes := det.Notes
	if notes == nil {
		notes = []string{}
	}
	return map[string]any{"config": cfgPath, "state_dir": stateDir, "gitignore_added": added, "level": level, "git_push": false,
		"mission": mission, "stack": primary, "also_found": others, "test_command": p.testCommand, "domains": domains,
		"goals": goals, "goals_kept": goalsKept, "notes": notes}
}

// maxMission bounds the mission read from the terminal.
const maxMission = 4096

// askMission asks for the mission on the terminal; an empty answer (or
// none) leaves it empty.
func askMission(g *globals) string {
	fmt.Fprint(g.stderr, "Mission: in one sentence, what is this project for? (Enter to skip) ")
	line, _ := bufio.NewReader(io.LimitReader(g.stdin, maxMission)).ReadString('\n')
	// Control characters (an escape sequence pasted by accident) have no
	// place in a sentence that is shown on every card.
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, line))
}

// joinAnd joins items as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
