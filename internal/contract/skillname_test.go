package contract

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
)

// runChainOf does what a cycle does after the skill ran: load its contract
// and run, through the real executor registry, every chain target whose
// condition holds (here every report says cost_usd 0). A contract that does
// not load runs no chain, as in the engine; the error is returned.
func runChainOf(t *testing.T, root string, cfg *config.Config, skill string) error {
	t.Helper()
	ct, err := Load(root, cfg, skill)
	if err != nil {
		return err
	}
	reg := act.NewRegistry()
	for _, tr := range ct.ChainTriggers {
		cond, err := ParseCondition(tr.Condition)
		if err != nil {
			t.Fatalf("a loaded contract holds a bad condition: %v", err)
		}
		if met, _ := cond.Eval(func(f string) (any, bool) { return 0.0, f == "cost_usd" }); !met {
			continue
		}
		exec, err := reg.Resolve(cfg, tr.Target)
		if err != nil {
			t.Fatalf("resolve %q: %v", tr.Target, err)
		}
		exec.Execute(context.Background(), act.Request{Skill: tr.Target, ProjectDir: root, Timeout: time.Minute, Env: map[string]string{}})
	}
	return nil
}

func TestChainTargetThatIsAnOptionNeverRuns(t *testing.T) {
	outside := t.TempDir()
	pwned := filepath.Join(outside, "pwned")
	// The agent template puts the skill name alone in argv, as a template
	// such as ["claude", "-p", "{skill}"] does.
	cfg := config.Default()
	cfg.Safety.SkillAllowlist = nil
	cfg.Agent.Command = []string{"sort", "{skill_name}"}
	target := "--output=" + pwned
	trigger := "chain_triggers:\n  - target: \"" + target + "\"\n    condition: \"cost_usd >= 0\"\n"

	for _, form := range []string{"SKILL.md", "contract.yaml", "config"} {
		t.Run(form, func(t *testing.T) {
			root := t.TempDir()
			cfg := *cfg
			var file string
			switch form {
			case "SKILL.md":
				file = skillFile(t, root, "x", form, "---\nooda_phase: observe\n"+trigger+"---\n# x\n")
			case "contract.yaml":
				file = skillFile(t, root, "x", form, "ooda_phase: observe\n"+trigger)
			case "config":
				file = "config skills./x.contract"
				cfg.Skills = map[string]config.SkillSpec{"/x": {Command: []string{"true"},
					Contract: []byte(`{"chain_triggers": [{"target": ` + jsonQuote(target) + `, "condition": "cost_usd >= 0"}]}`)}}
			}
			err := runChainOf(t, root, &cfg, "/x")
			if _, serr := os.Stat(pwned); !errors.Is(serr, fs.ErrNotExist) {
				os.Remove(pwned)
				t.Fatalf("the chain target ran as an option: %s was created (%v)", pwned, serr)
			}
			if err == nil {
				t.Fatal("a contract whose chain target is an option loaded")
			}
			for _, want := range []string{file, "chain_triggers[0].target", `"` + target + `"`, config.SkillNameRule} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}

	// The same contract with a plain target loads, and its target runs
	// through the template (sort reads /dev/null and prints nothing).
	root := t.TempDir()
	skillFile(t, root, "x", "SKILL.md", "---\nchain_triggers:\n  - target: dev-cycle\n    condition: \"cost_usd >= 0\"\n---\n")
	if err := runChainOf(t, root, cfg, "/x"); err != nil {
		t.Errorf("a plain chain target refused: %v", err)
	}
}

func TestChainTargetWithControlCharactersIsRefused(t *testing.T) {
	for _, target := range []string{"scan\x1b[2J", "scan\u202etxt.md", "../../x", "a b", "/a/b", ".hidden", strings.Repeat("s", 65)} {
		c := Contract{ChainTriggers: []ChainTrigger{{Target: "ok"}, {Target: target, Condition: "x >= 1"}}}
		c.ChainTriggers[0].Condition = "x >= 1"
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "chain_triggers[1].target: ") {
			t.Errorf("target %q: %v", target, err)
			continue
		}
		// The error quotes the name: no raw escape or bidirectional
		// character reaches a terminal through it.
		if strings.ContainsAny(err.Error(), "\x1b\u202e") {
			t.Errorf("target %q: the error carries it raw: %q", target, err)
		}
	}
}

func TestLoadRefusesASkillNameThatIsNotPlain(t *testing.T) {
	root := t.TempDir()
	// Even a contract file that exists under that name is not read.
	skillFile(t, root, "-x", "contract.yaml", "ooda_phase: execute\n")
	for _, name := range []string{"/-x", "--output=/tmp/x", "x\x1b", "/", " x"} {
		if c, err := Load(root, config.Default(), name); err == nil || !strings.Contains(err.Error(), config.SkillNameRule) {
			t.Errorf("Load(%q) = %+v, %v", name, c, err)
		}
	}
	// No name at all (a domain without a primary skill) is no contract.
	if c, err := Load(root, config.Default(), ""); err != nil || c.Source != "default" {
		t.Errorf("Load(\"\") = %+v, %v", c, err)
	}
}

// TestCompatSkillNamesArePlain keeps the original project's skills
// loadable: their names and chain targets pass the rule.
func TestCompatSkillNamesArePlain(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(contracts, "*.yaml"))
	if len(files) == 0 {
		t.Skip("compat skill contracts not available")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := config.ValidSkillName(c.Name); err != nil {
			t.Errorf("%s: name %q: %v", f, c.Name, err)
		}
		for _, tr := range c.ChainTriggers {
			if err := config.ValidSkillName(tr.Target); err != nil {
				t.Errorf("%s: target %q: %v", f, tr.Target, err)
			}
		}
	}
}

func jsonQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
