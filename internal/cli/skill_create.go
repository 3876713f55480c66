package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/skills"
)

type skillCreateOpts struct {
	domain   string
	noConfig bool
}

func newSkillCreateCmd(g *globals) *cobra.Command {
	var o skillCreateOpts
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Scaffold a new command skill: skills/NAME/run.sh, its contract, and its config entry",
		Long: `Create a command skill that runs as it is and is yours to edit:

  skills/NAME/run.sh         executable shell script: counts the files that
                             mention TODO, writes the domain state file
                             ($OODA_STATE_FILE) and a report ($OODA_REPORT)
  skills/NAME/contract.yaml  its contract: phase observe, read-only, $0

and, in config.json, "skills": {"/NAME": {"command": ["./skills/NAME/run.sh"],
"timeout": "5m"}} plus "/NAME" in safety.skill_allowlist (without it the
skill is refused at run time). --domain DOMAIN also adds a new domain that
runs the skill; without it, wire the skill to a domain yourself
("primary_skill": "/NAME"). --no-config writes the two files only.

Nothing is ever overwritten: an existing skills/NAME, a config.skills entry
for NAME, a built-in skill of that name or an existing DOMAIN is refused
(exit 2). The configuration change is validated before anything is written;
config.json keeps its key order, unknown keys and "__doc__" notes.`,
		Args: exactArgs("ooda skill create NAME [--domain DOMAIN] [--no-config]", 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSkillCreate(g, args[0], o) },
	}
	cmd.Flags().StringVar(&o.domain, "domain", "", "also add a new domain DOMAIN whose primary skill is /NAME")
	cmd.Flags().BoolVar(&o.noConfig, "no-config", false, "write skills/NAME/ only; leave config.json as it is")
	return cmd
}

// skillCreateResult is the --json document of `ooda skill create`.
type skillCreateResult struct {
	Skill   string   `json:"skill"`
	Files   []string `json:"files"`
	Config  string   `json:"config,omitempty"`
	Changes []change `json:"changes"`
	Domain  string   `json:"domain,omitempty"`
}

func runSkillCreate(g *globals, name string, o skillCreateOpts) error {
	if err := config.ValidSkillName(name); err != nil {
		return usageError(fmt.Errorf("skill create: %q: %w", safetext.Text(shortKey(name)), err))
	}
	key := config.SkillKey(name)
	skill := "/" + key
	// A config.skills entry would take the built-in's place (executor
	// rule 1 beats rule 2): a silent change of what every domain running
	// the built-in does.
	if slices.Contains(skills.Registry().Names(), key) {
		return usageError(fmt.Errorf("skill create: %s is a built-in skill (docs/skills.md#built-in-skills); choose another name", skill))
	}
	if o.noConfig && o.domain != "" {
		return usageError(errors.New("skill create: --domain changes config.json; it cannot go with --no-config"))
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "skills", key)
	if _, err := os.Lstat(dir); err == nil {
		return usageError(fmt.Errorf("skill create: %s already exists; nothing written (edit it, or choose another name)", dir))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("skill create: %w", err)
	}
	// The skills directory itself must be the project's: a symlink out
	// of it would put the files elsewhere.
	if _, err := config.ResolveInProject(root, filepath.Join("skills", key)); err != nil {
		return usageError(fmt.Errorf("skill create: skills/%s: %w", key, err))
	}

	res := skillCreateResult{Skill: skill, Changes: []change{}}
	var draft *configDraft
	if !o.noConfig {
		if draft, err = g.loadDraft("skill create"); err != nil {
			return err
		}
		res.Config = draft.path
		if err := planSkillConfig(draft, key, o.domain); err != nil {
			return err
		}
		if _, err := draft.check(g); err != nil {
			return err
		}
	}

	files, err := writeSkillFiles(root, key)
	if err != nil {
		return err
	}
	res.Files = files
	if draft != nil {
		if err := draft.write(); err != nil {
			return err
		}
		res.Changes = append(res.Changes, draft.changes...)
		res.Domain = o.domain
	}
	if g.json {
		return g.printJSON(res)
	}
	w := g.stdout
	fmt.Fprintf(w, "Created skill %s:\n", skill)
	for _, f := range files {
		fmt.Fprintf(w, "  %s\n", safetext.Text(f))
	}
	if draft != nil {
		draft.printChanges(g)
	}
	fmt.Fprintln(w, "Next:")
	fmt.Fprintf(w, "  edit skills/%s/run.sh (try it by hand: ./skills/%s/run.sh prints what it would write)\n", key, key)
	switch {
	case o.noConfig:
		fmt.Fprintf(w, "  add \"skills\": {%q: {\"command\": [\"./skills/%s/run.sh\"]}} to config.json, and %q to safety.skill_allowlist\n", skill, key, skill)
		fmt.Fprintf(w, "  run it from a domain: \"primary_skill\": %q\n", skill)
	case o.domain == "":
		fmt.Fprintf(w, "  run it from a domain: \"primary_skill\": %q (or: ooda skill create NAME --domain DOMAIN)\n", skill)
	default:
		fmt.Fprintf(w, "  ooda doctor, then ooda cycle: domain %s runs %s when it wins a cycle\n", safetext.Text(o.domain), skill)
	}
	return nil
}

// planSkillConfig adds the skill's config.skills entry, its allowlist
// entry and, when domain is set, a new domain running it.
func planSkillConfig(d *configDraft, key, domain string) error {
	skill := "/" + key
	for _, n := range d.cfg.SkillNames() {
		if config.SkillKey(n) == key {
			return usageError(fmt.Errorf("skill create: %s: %s already has an entry (skills%s); nothing written", d.path, skill, config.Pointer(n)))
		}
	}
	entry := fmt.Sprintf(`{"command":["./skills/%s/run.sh"],"timeout":"5m"}`, key)
	if err := d.set(config.Pointer("skills", skill), []byte(entry)); err != nil {
		return err
	}
	if !d.cfg.Safety.Allowed(skill) {
		// The list as the configuration reads it: when the file does
		// not set one, that is the default list, which must be kept.
		list := append(slices.Clone(d.cfg.Safety.SkillAllowlist), skill)
		if err := d.set("safety.skill_allowlist", marshalNoHTML(list)); err != nil {
			return err
		}
	}
	if domain == "" {
		return nil
	}
	if err := config.ValidDomainName(domain); err != nil {
		return usageError(fmt.Errorf("skill create: --domain %q: %w", safetext.Text(shortKey(domain)), err))
	}
	if _, ok := d.cfg.Domains.Get(domain); ok {
		return usageError(fmt.Errorf("skill create: %s: domain %s already exists (domains%s); nothing written (set its primary_skill with: ooda config set %s %s)",
			d.path, safetext.Text(domain), config.Pointer(domain), memberKey("domains", domain, "primary_skill"), skill))
	}
	dom := fmt.Sprintf(`{"weight":1.0,"primary_skill":%s,"status":"active","mission_alignment":0.5}`, marshalNoHTML(skill))
	return d.set(config.Pointer("domains", domain), []byte(dom))
}

// writeSkillFiles writes skills/<key>/run.sh and contract.yaml, neither
// of which may exist, and returns their paths relative to root. The
// contract is checked with the loader that will read it.
func writeSkillFiles(root, key string) ([]string, error) {
	ct := []byte(skillContract(key))
	if c, err := contract.Parse(ct); err != nil {
		return nil, fmt.Errorf("skill create: scaffolded contract does not parse: %w", err)
	} else if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("skill create: scaffolded contract: %w", err)
	}
	// Everything is created through the project's root: a skills
	// directory that is (or becomes) a symlink out of the project is
	// refused, never followed.
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("skill create: %w", err)
	}
	defer r.Close()
	dir := filepath.Join("skills", key)
	if err := r.MkdirAll("skills", 0o755); err != nil {
		return nil, fmt.Errorf("skill create: %w", err)
	}
	// Mkdir, not MkdirAll: a directory created meanwhile is refused.
	if err := r.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("skill create: %w", err)
	}
	files := []struct {
		name string
		data []byte
		perm fs.FileMode
	}{
		{"run.sh", []byte(skillScript(key)), 0o755},
		{"contract.yaml", ct, 0o644},
	}
	var out []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		fh, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.perm)
		if err != nil {
			return out, fmt.Errorf("skill create: %w", err)
		}
		_, werr := fh.Write(f.data)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return out, fmt.Errorf("skill create: %s: %w", filepath.Join(root, p), werr)
		}
		// The umask may have taken the execute bit the script needs.
		if err := r.Chmod(p, f.perm); err != nil {
			return out, fmt.Errorf("skill create: %w", err)
		}
		out = append(out, filepath.ToSlash(filepath.Join("skills", key, f.name)))
	}
	return out, nil
}

// skillScript is the scaffolded run.sh: a working skill that measures one
// real thing, so the first cycle that runs it shows output, and that runs
// by hand too (without ooda's environment it prints what it would write).
func skillScript(key string) string {
	return strings.ReplaceAll(`#!/bin/sh
# /@NAME@: a command skill run by ooda (docs/skills.md).
# It runs from the project root with no shell around it. ooda sets:
#   OODA_STATE_FILE  the domain state file to write: what the skill saw
#   OODA_REPORT      where to write the report: what it found, in a line
#   OODA_NOW         the cycle's "now" (RFC 3339 UTC)
# Run by hand, it prints both documents instead of writing them.
set -eu

now=${OODA_NOW:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
state=${OODA_STATE_FILE:-/dev/stdout}
report=${OODA_REPORT:-/dev/stdout}

# 1. Measure something. Replace this with your own check: here, the
#    number of tracked files that mention TODO.
count=$(git grep -I -l -e 'TODO' -- . ':!agent' 2>/dev/null | wc -l | tr -d ' ')

# 2. The domain state file: last_run, metrics (numbers) and alerts.
#    A "warning" or "critical" alert raises the domain's priority.
alerts='[]'
if [ "$count" -gt 50 ]; then
  alerts='[{"severity": "warning", "id": "todo-files", "message": "'"$count"' files mention TODO"}]'
fi
cat > "$state" <<JSON
{ "last_run": "$now", "status": "ok", "alerts": $alerts, "metrics": { "todo_files": $count } }
JSON

# 3. The report (optional): a summary line; "actions" (with RICE fields)
#    go to the action queue. See docs/skills.md#the-report.
cat > "$report" <<JSON
{ "summary": "$count files mention TODO", "cost_usd": 0 }
JSON
`, "@NAME@", key)
}

// skillContract is the scaffolded contract.yaml.
func skillContract(key string) string {
	return strings.ReplaceAll(`# The contract of /@NAME@ (docs/skills.md#contracts).
name: @NAME@
description: Counts the files that mention TODO (edit run.sh to check something else).
# observe, detect, strategize, execute or support.
ooda_phase: observe
safety:
  read_only: true      # false for a skill that opens pull requests
  cost_limit_usd: 0    # what one run costs when its report gives no cost_usd
# Skills to run after this one, each when its condition holds on the
# state file's fields or the report's:
# chain_triggers:
#   - target: other-skill
#     condition: "todo_files > 100"
`, "@NAME@", key)
}
