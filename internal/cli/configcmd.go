package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/artifact"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/safetext"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect, change and validate config.json",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of config.json",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := g.stdout.Write(config.Schema())
			return err
		},
	}, newGetCmd(g), newSetCmd(g), newLevelCmd(g), newAutoMergeCmd(g), newSeasonCmd(g), newValidateCmd(g), newRollbackCmd(g))
	return cmd
}

func newValidateCmd(g *globals) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Validate config.json against the schema (exit 2 when invalid)",
		Long: `Validate the configuration (config.json, or --config PATH) against the
embedded JSON Schema and the rules a schema cannot express, load every
skill's contract, and check that every command it would run exists and is
executable. Every problem is reported with the file, the JSON path of the
offending value and the reason; the exit code is 2 when anything is wrong.

An unknown key inside a section (a misspelt "wieght" in a domain) is a
warning, with the nearest known key when one is close; --strict makes it an
error. Notes such as "__doc__" and unknown top-level sections are allowed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runValidate(g, strict) },
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown keys as errors (exit 2)")
	return cmd
}

// runValidate is `ooda config validate`; strict turns the configuration's
// warnings (unknown keys) into errors.
func runValidate(g *globals, strict bool) error {
	path, err := g.configPath()
	if err != nil {
		return err
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	// The project root, not the config file's directory, is what the
	// configured paths must stay inside (--config may point elsewhere).
	// Validating is the point here: no remembered verdict stands in for it.
	cfg, err := config.LoadProjectFresh(path, root)
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		return err
	}
	// The configuration's own warnings come first, whether it loaded or
	// not: a misspelt key often explains the error beside it.
	var keyWarnings []config.Warning
	switch {
	case cfg != nil:
		keyWarnings = cfg.Warnings
	case ce != nil:
		keyWarnings = ce.Warnings
	}
	// warnings go into --json as "<path>: <reason>"; lines are printed,
	// each naming the file.
	var warnings, lines []string
	if !strict {
		for _, w := range keyWarnings {
			warnings = append(warnings, w.Path+": "+w.Reason)
			lines = append(lines, w.String())
		}
	}
	// Contracts and programs are part of what a configuration runs: a
	// contract that does not load (bad YAML, a malformed chain condition,
	// a file outside the project) or a command that cannot start is
	// invalid here too.
	if err == nil {
		issues := cfg.ExecutableIssues(root)
		if strict {
			for _, w := range keyWarnings {
				issues = append(issues, config.Issue{Path: w.Path, Reason: w.Reason})
			}
		}
		contracts := map[string]contract.Contract{}
		tried := map[string]bool{}
		for _, name := range cfg.SkillNames() {
			tried[config.SkillKey(name)] = true
			ct, cerr := contract.Load(root, cfg, name)
			if cerr != nil {
				issues = append(issues, config.Issue{Path: config.Pointer("skills", name, "contract"), Reason: cerr.Error()})
				continue
			}
			contracts[name] = ct
		}
		for _, d := range cfg.Domains {
			if tried[config.SkillKey(d.PrimarySkill)] || d.PrimarySkill == "" {
				continue
			}
			tried[config.SkillKey(d.PrimarySkill)] = true
			ct, cerr := contract.Load(root, cfg, d.PrimarySkill)
			if cerr != nil {
				issues = append(issues, config.Issue{Path: config.Pointer("domains", d.Name, "primary_skill"), Reason: "contract of " + d.PrimarySkill + ": " + cerr.Error()})
				continue
			}
			contracts[d.PrimarySkill] = ct
		}
		// A rubric the cycle could not grade with is refused here, with
		// every problem's path, rather than found at its first grading.
		rubrics := []struct {
			ptr  string
			raw  []byte
			path string
		}{{config.Pointer("quality_rubric"), cfg.QualityRubric, "quality_rubric"}}
		for _, d := range cfg.Domains {
			rubrics = append(rubrics, struct {
				ptr  string
				raw  []byte
				path string
			}{config.Pointer("domains", d.Name, "quality_rubric"), d.QualityRubric, "domains." + d.Name + ".quality_rubric"})
		}
		for _, r := range rubrics {
			if _, perr := artifact.Parse(r.raw, r.path); perr != nil {
				for _, line := range strings.Split(perr.Error(), "\n") {
					ptr, reason := rubricIssue(r.ptr, r.path, line)
					issues = append(issues, config.Issue{Path: ptr, Reason: reason})
				}
			}
		}
		// A domain whose skill the allowlist refuses is valid, but every
		// cycle it wins is spent refusing it: said here, before it costs
		// one (ooda doctor says it too).
		for _, d := range cfg.Domains {
			if d.PrimarySkill == "" || !d.IsEnabled() || cfg.Safety.Allowed(d.PrimarySkill) {
				continue
			}
			ptr := config.Pointer("domains", d.Name, "primary_skill")
			reason := fmt.Sprintf("%s is not in safety.skill_allowlist, so a cycle that selects %s refuses to run it: add %q to the list", d.PrimarySkill, d.Name, d.PrimarySkill)
			warnings, lines = append(warnings, ptr+": "+reason), append(lines, path+": "+ptr+": "+reason)
		}
		for _, c := range contract.ChainCycles(contracts) {
			w := "circular chain " + strings.Join(c, " -> ") + " (each skill still runs at most once per cycle)"
			warnings, lines = append(warnings, w), append(lines, w)
		}
		if len(issues) > 0 {
			ce = config.NewError(path, issues)
			err = ce
		}
	} else if strict && ce != nil && len(keyWarnings) > 0 {
		issues := ce.Issues
		if len(issues) == 0 {
			issues = []config.Issue{{Path: ce.Path, Reason: ce.Reason}}
		}
		for _, w := range keyWarnings {
			issues = append(issues, config.Issue{Path: w.Path, Reason: w.Reason})
		}
		ce = config.NewError(path, issues)
		err = ce
	}
	if g.json {
		doc := map[string]any{"file": path, "valid": err == nil, "errors": []config.Issue{}}
		if ce != nil {
			issues := ce.Issues
			if len(issues) == 0 {
				issues = []config.Issue{{Path: ce.Path, Reason: ce.Reason}}
			}
			doc["errors"] = issues
		} else {
			doc["domains"] = len(cfg.Domains)
		}
		if warnings == nil {
			warnings = []string{}
		}
		doc["warnings"] = warnings
		if perr := g.printJSON(doc); perr != nil {
			return perr
		}
		if err != nil {
			return withCode(ExitUsage, nil)
		}
		return nil
	}
	for _, l := range lines {
		// A key is the file's text: it may hold control characters.
		fmt.Fprintf(g.stdout, "warning: %s\n", safetext.Text(l))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s: valid (%d domains, level %d)\n", path, len(cfg.Domains), cfg.ProgressiveComplex.CurrentLevel)
	return nil
}

// rubricIssue turns one of artifact.Parse's problems ("<path>: <reason>",
// the path dotted from the rubric's, e.g. "quality_rubric.dimensions[1].name")
// into the JSON pointer and reason every other configuration problem is
// reported with. A line of another shape stays whole, at the rubric.
func rubricIssue(ptr, path, line string) (string, string) {
	rest, ok := strings.CutPrefix(line, path)
	if !ok {
		return ptr, line
	}
	for {
		switch {
		case strings.HasPrefix(rest, ": "):
			return ptr, rest[2:]
		case strings.HasPrefix(rest, "."):
			end := strings.IndexAny(rest[1:], ".[:")
			if end < 0 {
				return ptr, line
			}
			ptr += "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(rest[1:1+end])
			rest = rest[1+end:]
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return ptr, line
			}
			ptr += "/" + rest[1:end]
			rest = rest[end+1:]
		default:
			return ptr, line
		}
	}
}
