// Package contract loads a skill's contract: its OODA phase, chain
// triggers, cost limit and output files.
//
// A contract comes, in this order, from the "contract" object of the
// skill's config.skills entry, from the YAML front matter of
// skills/<name>/SKILL.md, or from skills/<name>/contract.yaml (the original
// project's format); a skill with none gets built-in defaults.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ooda-loop/ooda/internal/config"
)

// DefaultCostUSD is the per-skill cost estimate when nothing better is known (6-C5b).
const DefaultCostUSD = 0.02

// ChainTrigger is one entry of chain_triggers.
type ChainTrigger struct {
	Target    string `json:"target" yaml:"target"`
	Condition string `json:"condition" yaml:"condition"`
	Note      string `json:"note,omitempty" yaml:"note,omitempty"`
}

// Files lists the files a skill reads or writes.
type Files struct {
	Files []string `json:"files,omitempty" yaml:"files,omitempty"`
}

// Safety is the contract's safety block.
type Safety struct {
	HaltCheck    *bool    `json:"halt_check,omitempty" yaml:"halt_check,omitempty"`
	ReadOnly     *bool    `json:"read_only,omitempty" yaml:"read_only,omitempty"`
	CostLimitUSD *float64 `json:"cost_limit_usd,omitempty" yaml:"cost_limit_usd,omitempty"`
	BranchPrefix string   `json:"branch_prefix,omitempty" yaml:"branch_prefix,omitempty"`
}

// Contract is a skill's contract.
type Contract struct {
	Name          string         `json:"name,omitempty" yaml:"name,omitempty"`
	Description   string         `json:"description,omitempty" yaml:"description,omitempty"`
	OODAPhase     string         `json:"ooda_phase,omitempty" yaml:"ooda_phase,omitempty"`
	Version       string         `json:"version,omitempty" yaml:"version,omitempty"`
	Input         Files          `json:"input,omitempty" yaml:"input,omitempty"`
	Output        Files          `json:"output,omitempty" yaml:"output,omitempty"`
	Safety        Safety         `json:"safety,omitempty" yaml:"safety,omitempty"`
	Domains       []string       `json:"domains,omitempty" yaml:"domains,omitempty"`
	ChainTriggers []ChainTrigger `json:"chain_triggers,omitempty" yaml:"chain_triggers,omitempty"`
	// CostLimitUSD at the top level is accepted as well as under safety.
	CostLimitUSD *float64 `json:"cost_limit_usd,omitempty" yaml:"cost_limit_usd,omitempty"`
	// Source says where the contract came from: config, SKILL.md, contract.yaml or default.
	Source string `json:"-" yaml:"-"`
}

// Cost is the contract's cost estimate per run.
func (c Contract) Cost() float64 {
	if c.Safety.CostLimitUSD != nil {
		return *c.Safety.CostLimitUSD
	}
	if c.CostLimitUSD != nil {
		return *c.CostLimitUSD
	}
	return DefaultCostUSD
}

// Parse decodes a contract from YAML (a JSON document is valid YAML too).
// A malformed chain condition is rejected here, at load time, not left to
// fail when the chain would run.
func Parse(b []byte) (Contract, error) {
	var c Contract
	if err := yaml.Unmarshal(b, &c); err != nil {
		return Contract{}, err
	}
	return c, c.Validate()
}

// MaxCostUSD bounds a contract's cost limit, as config.json bounds its own
// amounts: a larger (or infinite) estimate would make the cost ledger's
// sums overflow.
const MaxCostUSD = 1e9

// Validate checks every chain trigger (a target that is a plain skill name,
// config.ValidSkillName, and a condition that parses) and the cost limit (a
// finite amount from 0 to MaxCostUSD). A target is run by name, through
// agent.command's {skill_name} too, so a target such as "--output=/x" must
// reject the contract, not reach a command line.
func (c Contract) Validate() error {
	for _, v := range []struct {
		field string
		value *float64
	}{{"cost_limit_usd", c.CostLimitUSD}, {"safety.cost_limit_usd", c.Safety.CostLimitUSD}} {
		if v.value != nil && !(*v.value >= 0 && *v.value <= MaxCostUSD) {
			return fmt.Errorf("%s: must be from 0 to %g, got %g", v.field, MaxCostUSD, *v.value)
		}
	}
	for i, t := range c.ChainTriggers {
		if strings.TrimSpace(t.Target) == "" {
			return fmt.Errorf("chain_triggers[%d]: missing target", i)
		}
		if err := config.ValidSkillName(t.Target); err != nil {
			// %q: the target may hold control or bidirectional characters.
			return fmt.Errorf("chain_triggers[%d].target: %q: %w", i, t.Target, err)
		}
		if _, err := ParseCondition(t.Condition); err != nil {
			return fmt.Errorf("chain_triggers[%d] (target %s): %w", i, t.Target, err)
		}
	}
	return nil
}

// FrontMatter extracts the YAML front matter of a SKILL.md ("---" lines).
func FrontMatter(md []byte) ([]byte, bool) {
	md = bytes.TrimLeft(md, "\ufeff")
	if !bytes.HasPrefix(md, []byte("---")) {
		return nil, false
	}
	rest := md[3:]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return nil, false
	}
	rest = rest[nl+1:]
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if bytes.Equal(bytes.TrimRight(line, " \r\t"), []byte("---")) {
			return rest[:off], true
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return nil, false
}

// Load resolves the contract of skill for the project at root. Contract
// files are read only when they are regular files inside the project (no
// symlink out of it, no named pipe or device) of at most
// safety.max_read_mib, and every output file a contract names must
// resolve inside the project: ooda reads those files after the skill ran.
//
// skill must be a plain skill name (config.ValidSkillName): it names the
// directory skills/<name>/ that is read. An empty name (a domain without a
// primary skill) has the default contract.
func Load(root string, cfg *config.Config, skill string) (Contract, error) {
	if skill == "" {
		return Contract{Source: "default"}, nil
	}
	if err := config.ValidSkillName(skill); err != nil {
		return Contract{}, fmt.Errorf("skill %q: %w", skill, err)
	}
	key := config.SkillKey(skill)
	for _, name := range cfg.SkillNames() {
		spec := cfg.Skills[name]
		if config.SkillKey(name) == key && len(spec.Contract) > 0 && string(spec.Contract) != "null" {
			var c Contract
			if err := json.Unmarshal(spec.Contract, &c); err != nil {
				return Contract{}, fmt.Errorf("config skills.%s.contract: %w", name, err)
			}
			if err := c.Validate(); err != nil {
				return Contract{}, fmt.Errorf("config skills.%s.contract: %w", name, err)
			}
			if err := c.checkOutputs(root); err != nil {
				return Contract{}, fmt.Errorf("config skills.%s.contract: %w", name, err)
			}
			c.Source = "config"
			return c, nil
		}
	}
	limit := cfg.Safety.MaxReadBytes()
	dir := filepath.Join(root, "skills", key)
	p := filepath.Join(dir, "SKILL.md")
	if b, err := readContractFile(root, p, limit); err == nil {
		if fm, ok := FrontMatter(b); ok {
			c, err := Parse(fm)
			if err == nil {
				err = c.checkOutputs(root)
			}
			if err != nil {
				return Contract{}, fmt.Errorf("%s: front matter: %w", p, err)
			}
			c.Source = "SKILL.md"
			return c, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Contract{}, err
	}
	p = filepath.Join(dir, "contract.yaml")
	if b, err := readContractFile(root, p, limit); err == nil {
		c, err := Parse(b)
		if err == nil {
			err = c.checkOutputs(root)
		}
		if err != nil {
			return Contract{}, fmt.Errorf("%s: %w", p, err)
		}
		c.Source = "contract.yaml"
		return c, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Contract{}, err
	}
	if c, ok := builtinContract(cfg, key); ok {
		return c, nil
	}
	return Contract{Name: key, Source: "default"}, nil
}

// builtins are the contracts of the skills built into ooda, by built-in
// name: the "built-in defaults" of a skill that has no contract of its
// own in the configuration or under skills/<name>/.
var builtins = map[string]Contract{}

// wiredOnly are the built-ins that run only where a skills entry names
// them, never by a skill of the same name (act.WiredOnly).
var wiredOnly = map[string]bool{}

// RegisterBuiltin records a built-in skill's contract. The built-in
// skills call it when the program starts; a name given twice, or a
// contract that does not validate, is a programming error. byName is
// false for a built-in that runs only where a skills entry names it.
func RegisterBuiltin(name string, c Contract, byName bool) {
	if _, dup := builtins[name]; dup {
		panic("contract: built-in " + name + " registered twice")
	}
	if err := c.Validate(); err != nil {
		panic("contract: built-in " + name + ": " + err.Error())
	}
	c.Name, c.Source = name, "builtin"
	builtins[name] = c
	if !byName {
		wiredOnly[name] = true
	}
}

// builtinContract is the contract of the built-in skill the skill key
// runs, if it runs one: the built-in its skills entry names, or, without
// an entry, the built-in of the same name (the executor order of
// SPEC-NOTES §3). A skills entry with a command runs no built-in.
func builtinContract(cfg *config.Config, key string) (Contract, bool) {
	name := key
	for _, n := range cfg.SkillNames() {
		if config.SkillKey(n) == key {
			spec := cfg.Skills[n]
			if spec.Builtin == "" {
				return Contract{}, false
			}
			c, ok := builtins[config.SkillKey(spec.Builtin)]
			return c, ok
		}
	}
	if wiredOnly[name] {
		return Contract{}, false
	}
	c, ok := builtins[name]
	return c, ok
}

// readContractFile reads a contract file through config.ReadProjectFile,
// so a skill name or a symlink cannot make ooda read outside the project,
// and a named pipe or a huge file cannot hang it or exhaust its memory.
func readContractFile(root, p string, limit int64) ([]byte, error) {
	b, err := config.ReadProjectFile(root, p, limit)
	if errors.Is(err, config.ErrTooLarge) {
		return nil, fmt.Errorf("%w (raise safety.max_read_mib to read it)", err)
	}
	return b, err
}

// checkOutputs refuses output files outside the project or inside a .git
// directory (config.ResolveOutputFile): ooda reads them after the skill
// ran, for chain conditions.
func (c Contract) checkOutputs(root string) error {
	for i, f := range c.Output.Files {
		if _, err := config.ResolveOutputFile(root, f); err != nil {
			return fmt.Errorf("output.files[%d]: %w", i, err)
		}
	}
	return nil
}
