package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
)

func newSkillToggleCmd(g *globals, enable bool) *cobra.Command {
	verb, status := "disable", "disabled"
	if enable {
		verb, status = "enable", "active"
	}
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: fmt.Sprintf("Set a domain's status to %s (NAME: a domain, or a skill: every domain running it)", status),
		Long: fmt.Sprintf(`Set domains.NAME.status to %q in config.json.

NAME is a domain name; when no domain has that name (or NAME starts with
"/"), it is a skill name and every domain whose primary_skill is that
skill is changed, each named in the output. enable also sets a legacy
"enabled": false to true, and leaves a "degraded" domain as it is (it
runs already). disable keeps the domain's other keys, so enable brings it
back as it was.

The result is validated before it is written (an "available" domain
without a primary_skill cannot be enabled: set one first); config.json
keeps its key order, unknown keys and "__doc__" notes, and is replaced
atomically. --json prints {"file", "changed", "changes", "domains"}.`, status),
		Args: exactArgs("ooda skill "+verb+" NAME (a domain, or a skill such as /scan-health)", 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSkillToggle(g, args[0], enable) },
	}
}

// toggleTargets returns the domains NAME designates: the domain of that
// name, else (or for "/name") every domain whose primary skill is NAME;
// bySkill says which.
func toggleTargets(cfg *config.Config, name string) (domains []config.Domain, bySkill bool) {
	if !strings.HasPrefix(name, "/") {
		if d, ok := cfg.Domains.Get(name); ok {
			return []config.Domain{d}, false
		}
	}
	key := config.SkillKey(name)
	for _, d := range cfg.Domains {
		if d.PrimarySkill != "" && config.SkillKey(d.PrimarySkill) == key {
			domains = append(domains, d)
		}
	}
	return domains, true
}

func runSkillToggle(g *globals, name string, enable bool) error {
	verb := "disable"
	if enable {
		verb = "enable"
	}
	draft, err := g.loadDraft("skill " + verb)
	if err != nil {
		return err
	}
	targets, bySkill := toggleTargets(draft.cfg, name)
	if len(targets) == 0 {
		return usageError(unknownToggleTarget(draft, name))
	}
	var names []string
	var notes []string
	for _, d := range targets {
		names = append(names, d.Name)
		switch {
		case enable && d.EffectiveStatus() == "degraded":
			notes = append(notes, fmt.Sprintf("domain %s is degraded: it runs already; left as it is (ooda config set %s active to clear it)", safetext.Text(d.Name), memberKey("domains", d.Name, "status")))
		case enable:
			if err := draft.set(memberKey("domains", d.Name, "status"), []byte(`"active"`)); err != nil {
				return err
			}
			if !d.IsEnabled() {
				if err := draft.set(memberKey("domains", d.Name, "enabled"), []byte("true")); err != nil {
					return err
				}
			}
		default:
			if err := draft.set(memberKey("domains", d.Name, "status"), []byte(`"disabled"`)); err != nil {
				return err
			}
		}
	}
	cfg, err := draft.check(g)
	if err != nil {
		return err
	}
	if err := draft.write(); err != nil {
		return err
	}
	if enable {
		// A domain that wins a cycle with a skill the allowlist refuses
		// does nothing: say so now rather than at the next cycle.
		for _, d := range targets {
			if d.PrimarySkill != "" && !cfg.Safety.Allowed(d.PrimarySkill) {
				notes = append(notes, fmt.Sprintf("%s is not in safety.skill_allowlist: a cycle will refuse to run it; add it (ooda config get safety.skill_allowlist)", safetext.Text("/"+config.SkillKey(d.PrimarySkill))))
			}
		}
	}
	if g.json {
		changes := draft.changes
		if changes == nil {
			changes = []change{}
		}
		if err := g.printJSON(struct {
			File    string   `json:"file"`
			Changed bool     `json:"changed"`
			Changes []change `json:"changes"`
			Domains []string `json:"domains"`
		}{draft.path, len(changes) > 0, changes, names}); err != nil {
			return err
		}
	} else {
		if bySkill {
			fmt.Fprintf(g.stdout, "%s is the primary skill of %s: %s\n", safetext.Text("/"+config.SkillKey(name)), plural(len(names), "domain", "domains"), safetext.Text(strings.Join(names, ", ")))
		}
		if len(draft.changes) == 0 {
			fmt.Fprintf(g.stdout, "%s: already %sd; nothing written\n", draft.path, verb)
		} else {
			draft.printChanges(g)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(g.human(), "note: %s\n", n)
	}
	return nil
}

// unknownToggleTarget says that NAME is neither a domain nor a domain's
// skill, with the names that are, and the nearest one.
func unknownToggleTarget(d *configDraft, name string) error {
	var domains, skills []string
	for _, dm := range d.cfg.Domains {
		domains = append(domains, dm.Name)
		if dm.PrimarySkill != "" {
			skills = append(skills, "/"+config.SkillKey(dm.PrimarySkill))
		}
	}
	msg := fmt.Sprintf("%s: no domain named %q, and no domain runs the skill %s", d.path, safetext.Text(shortKey(name)), safetext.Text(shortKey("/"+config.SkillKey(name))))
	if len(domains) == 0 {
		return errors.New(msg + " (the configuration has no domains)")
	}
	msg += fmt.Sprintf(" (domains: %s)", safetext.Text(strings.Join(domains, ", ")))
	if s := config.Suggest(strings.TrimPrefix(name, "/"), domains); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", safetext.Text(s))
	} else if s := config.Suggest("/"+config.SkillKey(name), skills); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", safetext.Text(s))
	}
	return errors.New(msg)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
