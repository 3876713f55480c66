package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// initOptions are the flags of `ooda init`.
type initOptions struct {
	mission string
	level   int
	force   bool
	yes     bool
}

func newInitCmd(g *globals) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init [--mission TEXT] [--level N] [--force] [--yes]",
		Short: "Create config.json and agent/state/ for a project",
		Long: `Create a valid config.json (every other key takes its default), the state
skeleton under agent/state/evolve/, and .gitignore entries for the cycle lock
and the HALT file, in --project DIR or else the current directory (init does
not search upwards as the other commands do). Refuses, without --force, to
overwrite an existing config.json or to create a project inside another one
(an ooda config.json in a parent directory, up to the repository root).
Never prompts with --yes or without a terminal.

The config sets git.push to false: each cycle commits the state files it
wrote to the current branch and pushes nothing until you set it to true.
Its level (default 2) lets every active domain take part in scoring.

The new config has no domains yet: add them to config.json (see
docs/config.md), each with a primary_skill and, under "skills", how that
skill runs.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.mission, "mission", "", "one sentence: what this project is for (drives mission-aware scoring)")
	f.IntVar(&o.level, "level", initLevel, "progressive-complexity level 0..3 (0: the heaviest domain only, 1: the two heaviest, 2: every domain, 3: every domain and the implementation queue)")
	f.BoolVar(&o.force, "force", false, "overwrite an existing config.json, or create a project inside another one")
	f.BoolVar(&o.yes, "yes", false, "never prompt (non-interactive)")
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
	name := filepath.Base(root)
	doc := map[string]any{
		"schema_version":         config.Default().SchemaVersion,
		"project":                map[string]any{"name": name, "locale": "en", "timezone": "UTC"},
		"mission":                o.mission,
		"domains":                map[string]any{},
		"progressive_complexity": map[string]any{"__doc__": levelLine(o.level), "current_level": o.level},
		"git":                    map[string]any{"__doc__": pushDoc, "push": false},
		"safety": map[string]any{
			"halt_file":                  config.Default().Safety.HaltFile,
			"min_cycle_interval_minutes": config.Default().Safety.MinCycleIntervalMin,
			// An explicit allowlist: an empty one would allow every skill.
			"skill_allowlist": config.Default().Safety.SkillAllowlist,
		},
		"cost": map[string]any{"daily_limit_usd": config.Default().Cost.DailyLimitUSD, "warning_threshold_pct": config.Default().Cost.WarningThresholdPct},
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
	gitignore, added, err := planGitignore(root, []string{"agent/state/evolve/.lock", "agent/state/evolve/runs/", config.Default().Safety.HaltFile})
	if err != nil {
		return usageError(err)
	}
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
	if added != nil {
		if err := state.WriteFileAtomic(filepath.Join(root, gitignoreName), gitignore, 0o644); err != nil {
			return err
		}
	}
	if added == nil {
		added = []string{}
	}
	if repo := repositoryRoot(root); repo != "" && repo != root {
		fmt.Fprintf(g.stderr, "Note: the project %s is a subdirectory of the git repository %s; ooda commands find it from anywhere below %s. To make the whole repository the project instead, remove %s and run ooda init in %s.\n", root, repo, root, cfgPath, repo)
	}
	if g.json {
		return g.printJSON(map[string]any{"config": cfgPath, "state_dir": st.EvolveDir, "gitignore_added": added, "level": o.level, "git_push": false})
	}
	fmt.Fprintf(g.stdout, "Created %s (level %d) and %s.\n", cfgPath, o.level, st.EvolveDir)
	if len(added) > 0 {
		fmt.Fprintf(g.stdout, "Added to .gitignore: %s\n", strings.Join(added, ", "))
	}
	fmt.Fprintln(g.stdout, levelLine(o.level))
	fmt.Fprintln(g.stdout, "Git: each cycle commits the state files it wrote to the current branch; pushing is off (git.push: false in config.json; set it to true to push to the branch's upstream).")
	fmt.Fprintln(g.stdout, "Next: add domains and their skills to config.json, then run `ooda cycle --dry-run`.")
	return nil
}

// gitignoreName is the file init adds its entries to, in the project root.
const gitignoreName = ".gitignore"

// gitignoreComment heads the entries init adds: it names each kind of
// entry, so that whoever reads .gitignore knows why the run logs, too,
// stay out of the history the cycles commit.
const gitignoreComment = "# ooda: the cycle lock, the skill run logs and the HALT switch are local, never committed"

// planGitignore returns the new content of .gitignore with the missing
// lines appended, and the lines it adds (nil when none is missing). It
// reads .gitignore as ooda reads every project file: only a regular file,
// inside the project, of at most the default read limit, without
// blocking. /dev/zero behind a symlink would exhaust memory, a named pipe
// would hang init, and a symlink out of the project would copy another
// file's bytes into the project. A symlink is refused even inside the
// project: git does not read a .gitignore through a symlink, so entries
// written through one would protect nothing. The error names .gitignore
// and says how to repair it.
func planGitignore(root string, lines []string) ([]byte, []string, error) {
	p := filepath.Join(root, gitignoreName)
	refuse := func(why, repair string) error {
		return fmt.Errorf("%s: %s; ooda init changed nothing (%s, and run init again)", p, why, repair)
	}
	const replace = "replace it with a regular file, or remove it"
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		link, _ := os.Readlink(p)
		return nil, nil, refuse(fmt.Sprintf("is a symlink to %s, and git does not read a .gitignore through a symlink", link), replace)
	}
	old, err := config.ReadProjectFile(root, gitignoreName, config.Default().Safety.MaxReadBytes())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		repair := replace
		if errors.Is(err, config.ErrTooLarge) {
			repair = "shorten it"
		}
		return nil, nil, refuse(strings.TrimPrefix(err.Error(), gitignoreName+": "), repair)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var added []string
	for _, l := range lines {
		if !have[l] && !have["/"+l] {
			added = append(added, l)
		}
	}
	if len(added) == 0 {
		return nil, nil, nil
	}
	out := old
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, gitignoreComment+"\n"+strings.Join(added, "\n")+"\n"...)
	return out, added, nil
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
			if r, err := filepath.Rel(realRoot, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%s is a symlink to %s, outside the project %s: ooda keeps %s inside the project and does not follow a symlink out of it (replace it with a directory)", p, target, root, rel)
			}
		}
	}
	return nil
}
