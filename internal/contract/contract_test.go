package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

const contracts = "../../../shared/compat/ooda-loop/skill-contracts"

func TestCompatContractsLoadAsContractYAMLAndFrontMatter(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(contracts, "*.yaml"))
	if len(files) == 0 {
		t.Skip("compat skill contracts not available")
	}
	cfg := config.Default()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		for _, form := range []string{"contract.yaml", "SKILL.md"} {
			root := t.TempDir()
			body := string(b)
			if form == "SKILL.md" {
				body = "---\n" + body + "---\n\n# " + name + "\n\nThe skill's instructions.\n"
			}
			p := filepath.Join(root, "skills", name, form)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(body), 0o644)
			c, err := Load(root, cfg, "/"+name)
			if err != nil {
				t.Fatalf("%s as %s: %v", name, form, err)
			}
			if c.Source != form || c.Name != name || c.OODAPhase == "" {
				t.Errorf("%s as %s: %+v", name, form, c)
			}
		}
	}
}

func TestContractFieldsOfTheOriginalSkills(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(contracts, "check-tests.yaml"))
	if err != nil {
		t.Skip("compat skill contracts not available")
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.OODAPhase != "detect" || c.Cost() != 0.05 || len(c.ChainTriggers) != 1 ||
		c.ChainTriggers[0].Target != "dev-cycle" || c.ChainTriggers[0].Condition != "new_failures >= 1 OR coverage_drop > 5" ||
		len(c.Output.Files) != 1 || c.Output.Files[0] != "agent/state/test_coverage.json" {
		t.Errorf("check-tests contract = %+v", c)
	}
	b, _ = os.ReadFile(filepath.Join(contracts, "dev-cycle.yaml"))
	c, _ = Parse(b)
	if c.Safety.BranchPrefix != "auto/dev-cycle/" || c.Safety.ReadOnly == nil || *c.Safety.ReadOnly || c.Cost() != 0.10 {
		t.Errorf("dev-cycle contract = %+v", c)
	}
}

func TestContractResolutionOrder(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "skills", "scan"), 0o755)
	os.WriteFile(filepath.Join(root, "skills", "scan", "SKILL.md"), []byte("---\nooda_phase: observe\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(root, "skills", "scan", "contract.yaml"), []byte("ooda_phase: execute\n"), 0o644)
	cfg := config.Default()
	c, _ := Load(root, cfg, "/scan")
	if c.Source != "SKILL.md" || c.OODAPhase != "observe" {
		t.Errorf("SKILL.md front matter comes before contract.yaml: %+v", c)
	}
	cfg.Skills = map[string]config.SkillSpec{"/scan": {Command: []string{"x"}, Contract: []byte(`{"ooda_phase": "strategize", "cost_limit_usd": 0.3}`)}}
	c, _ = Load(root, cfg, "scan")
	if c.Source != "config" || c.OODAPhase != "strategize" || c.Cost() != 0.3 {
		t.Errorf("an inline contract comes first: %+v", c)
	}
	c, _ = Load(root, config.Default(), "/unknown")
	if c.Source != "default" || c.Cost() != DefaultCostUSD || c.OODAPhase != "" {
		t.Errorf("default contract = %+v", c)
	}
}

func TestFrontMatter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"---\na: 1\n---\nrest", "a: 1\n"},
		{"---\r\na: 1\n---  \nrest", "a: 1\n"},
		{"no front matter", ""},
		{"---\nunterminated\n", ""},
	} {
		got, _ := FrontMatter([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("FrontMatter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := Parse([]byte("chain_triggers: {not: [a list")); err == nil {
		t.Error("malformed YAML must be an error")
	}
}

// A built-in skill's own contract is the "built-in default" of SPEC-NOTES
// §3: it applies to a skill that runs the built-in (by its skills entry,
// or by its name when there is no entry), after the configuration's and
// the project's contracts, and never to a command of the same name.
func TestContractOfABuiltinSkill(t *testing.T) {
	zero := 0.0
	t.Cleanup(func() { delete(builtins, "probe-test-builtin") })
	RegisterBuiltin("probe-test-builtin", Contract{OODAPhase: "observe", CostLimitUSD: &zero,
		ChainTriggers: []ChainTrigger{{Target: "dev-cycle", Condition: "failing >= 1"}}}, true)
	root := t.TempDir()
	cfg := config.Default()
	c, err := Load(root, cfg, "/probe-test-builtin")
	if err != nil || c.Source != "builtin" || c.OODAPhase != "observe" || c.Cost() != 0 || len(c.ChainTriggers) != 1 {
		t.Fatalf("by name: %+v %v", c, err)
	}
	cfg.Skills = map[string]config.SkillSpec{"/health-check": {Builtin: "probe-test-builtin"}}
	if c, _ := Load(root, cfg, "health-check"); c.Source != "builtin" || c.Name != "probe-test-builtin" {
		t.Errorf("by skills entry: %+v", c)
	}
	cfg.Skills = map[string]config.SkillSpec{"/probe-test-builtin": {Command: []string{"./x"}}}
	if c, _ := Load(root, cfg, "probe-test-builtin"); c.Source != "default" {
		t.Errorf("a command of the same name has the built-in's contract: %+v", c)
	}
	os.MkdirAll(filepath.Join(root, "skills", "probe-test-builtin"), 0o755)
	os.WriteFile(filepath.Join(root, "skills", "probe-test-builtin", "contract.yaml"), []byte("ooda_phase: execute\n"), 0o644)
	if c, _ := Load(root, config.Default(), "probe-test-builtin"); c.Source != "contract.yaml" {
		t.Errorf("the project's contract comes before the built-in's: %+v", c)
	}
	defer func() {
		if recover() == nil {
			t.Error("a built-in registered twice did not panic")
		}
	}()
	RegisterBuiltin("probe-test-builtin", Contract{}, true)
}

// A built-in that runs only where a skills entry names it lends its
// contract to no skill of the same name.
func TestContractOfAWiredOnlyBuiltin(t *testing.T) {
	t.Cleanup(func() { delete(builtins, "probe-wired-builtin"); delete(wiredOnly, "probe-wired-builtin") })
	RegisterBuiltin("probe-wired-builtin", Contract{OODAPhase: "support"}, false)
	cfg := config.Default()
	if c, _ := Load(t.TempDir(), cfg, "probe-wired-builtin"); c.Source != "default" {
		t.Errorf("by name: %+v", c)
	}
	cfg.Skills = map[string]config.SkillSpec{"/implement": {Builtin: "probe-wired-builtin"}}
	if c, _ := Load(t.TempDir(), cfg, "implement"); c.Source != "builtin" || c.OODAPhase != "support" {
		t.Errorf("by skills entry: %+v", c)
	}
}
