package cli

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
)

func newSkillCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "List, create, enable and disable the project's skills",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List every skill with its executor, phase, contract and allowlist status",
		Long: `List every skill the project refers to — domains' primary skills, chain
targets, config.skills entries and the built-in skills — with how it runs
(its executor), its OODA phase, where its contract comes from, whether
safety.skill_allowlist lets it run, and its chain triggers. A contract that
does not load is a problem (exit 2); a chain that loops back on itself is
reported as a warning, since a skill never runs twice in one cycle.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSkillList(g) },
	})
	cmd.AddCommand(newSkillCreateCmd(g), newSkillToggleCmd(g, true), newSkillToggleCmd(g, false))
	return cmd
}

// skillRow is one line of `ooda skill list` (and its --json element).
type skillRow struct {
	Name       string   `json:"name"`
	Domains    []string `json:"domains"`
	Executor   string   `json:"executor"`
	Phase      string   `json:"phase"`
	Contract   string   `json:"contract"`
	Allowed    bool     `json:"allowed"`
	Chain      []string `json:"chain_triggers"`
	Problem    string   `json:"problem,omitempty"`
	CostUSD    float64  `json:"cost_usd"`
	ReadOnly   *bool    `json:"read_only,omitempty"`
	BranchPref string   `json:"branch_prefix,omitempty"`
}

func runSkillList(g *globals) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	reg := skills.Registry()
	names := map[string][]string{}
	add := func(skill, domain string) {
		k := "/" + config.SkillKey(skill)
		if _, ok := names[k]; !ok {
			names[k] = []string{}
		}
		if domain != "" {
			names[k] = append(names[k], domain)
		}
	}
	for _, d := range cfg.Domains {
		add(d.PrimarySkill, d.Name)
		for _, s := range d.Chain {
			add(s, "")
		}
	}
	if cfg.Implementation.Enabled {
		add(cfg.Implementation.PrimarySkill, "implementation")
	}
	for _, n := range cfg.SkillNames() {
		add(n, "")
	}
	for _, n := range reg.Names() {
		add(n, "")
	}
	contracts := map[string]contract.Contract{}
	var rows []skillRow
	problems := 0
	// Chain targets are skills too: follow them until no new name appears.
	for pending := sortedKeys(names); len(pending) > 0; pending = pendingNames(names, contracts) {
		for _, name := range pending {
			ct, cerr := contract.Load(root, cfg, name)
			contracts[name] = ct
			row := skillRow{Name: name, Domains: names[name], Allowed: cfg.Safety.Allowed(name), Chain: []string{}}
			if cerr != nil {
				row.Problem = "contract: " + cerr.Error()
				problems++
			} else {
				for _, t := range ct.ChainTriggers {
					row.Chain = append(row.Chain, "/"+config.SkillKey(t.Target)+" if "+t.Condition)
					add(t.Target, "")
				}
			}
			row.Phase, row.Contract, row.CostUSD = ct.OODAPhase, ct.Source, ct.Cost()
			row.ReadOnly, row.BranchPref = ct.Safety.ReadOnly, ct.Safety.BranchPrefix
			for _, d := range cfg.Domains {
				if "/"+config.SkillKey(d.PrimarySkill) == name && d.OODAPhase != "" {
					row.Phase = d.OODAPhase + " (config)"
				}
			}
			if ex, err := reg.Resolve(cfg, name); err != nil {
				row.Executor = "none: " + err.Error()
			} else {
				row.Executor = ex.Describe()
			}
			rows = append(rows, row)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	// A circular chain is reported, not fatal here: the original project's
	// own contracts (scan-health -> dev-cycle -> scan-health) form one, and
	// at run time a skill never runs twice in one cycle anyway.
	cycles := contract.ChainCycles(contracts)
	if g.json {
		if cycles == nil {
			cycles = [][]string{}
		}
		if err := g.printJSON(map[string]any{"skills": rows, "chain_cycles": cycles}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SKILL\tDOMAINS\tEXECUTOR\tPHASE\tCONTRACT\tALLOWED\tCHAIN")
		for _, r := range rows {
			allowed := "yes"
			if !r.Allowed {
				allowed = "NO"
			}
			// Names, phases and chain conditions come from contract files,
			// which pull requests change: escaped, a tab cannot shift a
			// column nor a newline add a row.
			cells := safetext.Args(r.Name, dash(strings.Join(r.Domains, ",")), r.Executor, dash(r.Phase), r.Contract, allowed, dash(strings.Join(r.Chain, "; ")))
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cells...)
		}
		tw.Flush()
		for _, r := range rows {
			if r.Problem != "" {
				fmt.Fprintf(g.stdout, "problem: %s: %s\n", safetext.Args(r.Name, r.Problem)...)
			}
		}
		for _, c := range cycles {
			fmt.Fprintf(g.stdout, "warning: circular chain %s (each skill still runs at most once per cycle)\n", safetext.Args(strings.Join(c, " -> "))...)
		}
	}
	if problems > 0 {
		return withCode(ExitUsage, nil)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func pendingNames(names map[string][]string, done map[string]contract.Contract) []string {
	var out []string
	for _, k := range sortedKeys(names) {
		if _, ok := done[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
