package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect and validate config.json",
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
	}, &cobra.Command{
		Use:   "validate",
		Short: "Validate config.json against the schema (exit 2 when invalid)",
		Long: `Validate the configuration (config.json, or --config PATH) against the
embedded JSON Schema and the rules a schema cannot express. Every problem is
reported with the file, the JSON path of the offending value and the reason;
the exit code is 2 when anything is wrong.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runValidate(g) },
	}, newRollbackCmd(g))
	return cmd
}

func runValidate(g *globals) error {
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
	cfg, err := config.LoadProject(path, root)
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		return err
	}
	// Contracts are part of what a configuration runs: one that does not
	// load (bad YAML, a malformed chain condition, a file outside the
	// project) is invalid here too.
	var warnings []string
	if err == nil {
		var issues []config.Issue
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
		for _, c := range contract.ChainCycles(contracts) {
			warnings = append(warnings, "circular chain "+strings.Join(c, " -> ")+" (each skill still runs at most once per cycle)")
		}
		if len(issues) > 0 {
			ce = &config.Error{File: path, Path: issues[0].Path, Reason: issues[0].Reason, Issues: issues}
			err = ce
		}
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
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stdout, "warning: %s\n", w)
	}
	fmt.Fprintf(g.stdout, "%s: valid (%d domains, level %d)\n", path, len(cfg.Domains), cfg.ProgressiveComplex.CurrentLevel)
	return nil
}
