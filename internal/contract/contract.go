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
	"os"
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

// Validate checks every chain trigger: a target and a condition that parses.
func (c Contract) Validate() error {
	for i, t := range c.ChainTriggers {
		if strings.TrimSpace(t.Target) == "" {
			return fmt.Errorf("chain_triggers[%d]: missing target", i)
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

// Load resolves the contract of skill for the project at root.
func Load(root string, cfg *config.Config, skill string) (Contract, error) {
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
			c.Source = "config"
			return c, nil
		}
	}
	dir := filepath.Join(root, "skills", key)
	if b, err := os.ReadFile(filepath.Join(dir, "SKILL.md")); err == nil {
		if fm, ok := FrontMatter(b); ok {
			c, err := Parse(fm)
			if err != nil {
				return Contract{}, fmt.Errorf("%s: front matter: %w", filepath.Join(dir, "SKILL.md"), err)
			}
			c.Source = "SKILL.md"
			return c, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Contract{}, err
	}
	p := filepath.Join(dir, "contract.yaml")
	if b, err := os.ReadFile(p); err == nil {
		c, err := Parse(b)
		if err != nil {
			return Contract{}, fmt.Errorf("%s: %w", p, err)
		}
		c.Source = "contract.yaml"
		return c, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Contract{}, err
	}
	return Contract{Name: key, Source: "default"}, nil
}
