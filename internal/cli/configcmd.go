package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
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
	cfg, err := config.Load(path)
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		return err
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
	fmt.Fprintf(g.stdout, "%s: valid (%d domains, level %d)\n", path, len(cfg.Domains), cfg.ProgressiveComplex.CurrentLevel)
	return nil
}
