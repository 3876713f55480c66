package contract

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

// skillFile writes skills/<skill>/<name> under root.
func skillFile(t *testing.T, root, skill, name, body string) string {
	t.Helper()
	p := filepath.Join(root, "skills", skill, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestContractThatIsANamedPipeIsRefusedWithoutBlocking(t *testing.T) {
	for _, name := range []string{"SKILL.md", "contract.yaml"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "skills", "scan", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			// No writer ever opens the pipe: a blocking open or read
			// would never return.
			_, err := Load(root, config.Default(), "/scan")
			if !errors.Is(err, config.ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("Load = %v, want a not-a-regular-file error naming %s", err, p)
			}
		})
	}
}

func TestHugeContractIsRefusedUnread(t *testing.T) {
	root := t.TempDir()
	p := skillFile(t, root, "scan", "SKILL.md", "---\nooda_phase: observe\n---\n")
	// Sparse, so the test writes almost nothing; the size alone is refused.
	if err := os.Truncate(p, config.DefaultMaxReadMiB<<20+1); err != nil {
		t.Fatal(err)
	}
	_, err := Load(root, config.Default(), "/scan")
	if !errors.Is(err, config.ErrTooLarge) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "safety.max_read_mib") {
		t.Errorf("Load = %v, want a too-large error naming %s", err, p)
	}

	// The limit is safety.max_read_mib.
	p = skillFile(t, root, "plan", "contract.yaml", "ooda_phase: strategize\n"+strings.Repeat("# padding\n", 120000))
	cfg := config.Default()
	cfg.Safety.MaxReadMiB = 1
	if _, err := Load(root, cfg, "/plan"); !errors.Is(err, config.ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Errorf("a 1.2 MiB contract under a 1 MiB limit: %v", err)
	}
	cfg.Safety.MaxReadMiB = 2
	if c, err := Load(root, cfg, "/plan"); err != nil || c.OODAPhase != "strategize" {
		t.Errorf("under a 2 MiB limit: %+v, %v", c, err)
	}
}

func TestContractSymlinkedOutOfTheProjectIsRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "contract.yaml")
	if err := os.WriteFile(secret, []byte("ooda_phase: execute\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "skills", "scan"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "skills", "scan", "contract.yaml")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(root, config.Default(), "/scan")
	if !errors.Is(err, config.ErrOutsideProject) {
		t.Errorf("Load = %+v, %v; want an outside-the-project error", c, err)
	}

	// A whole skill directory symlinked out is refused the same way.
	if err := os.Symlink(outside, filepath.Join(root, "skills", "ext")); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(root, config.Default(), "/ext"); !errors.Is(err, config.ErrOutsideProject) {
		t.Errorf("Load(/ext) = %+v, %v", c, err)
	}

	// A skill name cannot climb out of skills/ and the project either:
	// for the project outside/a/b, this name leads to outside/contract.yaml.
	// It is not a plain skill name, so it is refused before any file is read.
	if c, err := Load(filepath.Join(outside, "a", "b"), config.Default(), "/../../../contract.yaml/.."); err == nil || !strings.Contains(err.Error(), config.SkillNameRule) {
		t.Errorf("a climbing skill name loaded %+v, %v", c, err)
	}

	// A symlink inside the project is followed.
	skillFile(t, root, "shared", "contract.yaml", "ooda_phase: observe\n")
	if err := os.MkdirAll(filepath.Join(root, "skills", "alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/contract.yaml", filepath.Join(root, "skills", "alias", "contract.yaml")); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(root, config.Default(), "/alias"); err != nil || c.OODAPhase != "observe" {
		t.Errorf("Load(/alias) = %+v, %v", c, err)
	}
}

func TestContractOutputsOutsideTheProjectAreRefused(t *testing.T) {
	root := t.TempDir()
	p := skillFile(t, root, "scan", "contract.yaml", "output:\n  files: [agent/state/scan.json, ../../etc/passwd]\n")
	_, err := Load(root, config.Default(), "/scan")
	if !errors.Is(err, config.ErrOutsideProject) || !strings.Contains(err.Error(), p+": output.files[1]: ") {
		t.Errorf("contract.yaml: %v", err)
	}
	p = skillFile(t, root, "fm", "SKILL.md", "---\noutput:\n  files: [/etc/passwd]\n---\n")
	_, err = Load(root, config.Default(), "/fm")
	if !errors.Is(err, config.ErrOutsideProject) || !strings.Contains(err.Error(), p+": front matter: output.files[0]: ") {
		t.Errorf("SKILL.md: %v", err)
	}
	cfg := config.Default()
	cfg.Skills = map[string]config.SkillSpec{"/inline": {Builtin: "noop", Contract: []byte(`{"output": {"files": ["../x.json"]}}`)}}
	_, err = Load(root, cfg, "/inline")
	if !errors.Is(err, config.ErrOutsideProject) || !strings.Contains(err.Error(), "config skills./inline.contract: output.files[0]: ") {
		t.Errorf("inline: %v", err)
	}
	skillFile(t, root, "ok", "contract.yaml", "output:\n  files: [agent/state/ok.json, config.json]\n")
	if c, err := Load(root, config.Default(), "/ok"); err != nil || len(c.Output.Files) != 2 {
		t.Errorf("in-project outputs: %+v, %v", c, err)
	}
}

func TestContractCostMustBeFiniteAndBounded(t *testing.T) {
	for _, body := range []string{"cost_limit_usd: .inf\n", "safety:\n  cost_limit_usd: 1e308\n", "cost_limit_usd: -1\n", "cost_limit_usd: .nan\n"} {
		if c, err := Parse([]byte(body)); err == nil {
			t.Errorf("%q accepted: cost %g", body, c.Cost())
		}
	}
	if c, err := Parse([]byte("cost_limit_usd: 1e9\n")); err != nil || c.Cost() != 1e9 {
		t.Errorf("the bound itself: %v", err)
	}
}

func TestMissingContractFilesStillDefault(t *testing.T) {
	root := t.TempDir()
	c, err := Load(root, config.Default(), "/nothing")
	if err != nil || c.Source != "default" {
		t.Errorf("Load = %+v, %v", c, err)
	}
	if _, err := config.ReadProjectFile(root, "skills/nothing/SKILL.md", 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file must read as not existing: %v", err)
	}
}

func TestContractOutputsInsideGitAreRefused(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// .git/config may hold a credential; a chain condition must not read it.
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := skillFile(t, root, "scan", "contract.yaml", "output:\n  files: [agent/state/scan.json, .git/config]\n")
	_, err := Load(root, config.Default(), "/scan")
	if !errors.Is(err, config.ErrReservedPath) || !strings.Contains(err.Error(), p+": output.files[1]: ") || !strings.Contains(err.Error(), ".git") {
		t.Errorf("contract.yaml: %v", err)
	}
	// ooda's own files may be declared: outputs are only read.
	skillFile(t, root, "dev", "contract.yaml", "output:\n  files: [agent/state/evolve/action_queue.json]\n")
	if _, err := Load(root, config.Default(), "/dev"); err != nil {
		t.Errorf("an output in agent/state/evolve refused: %v", err)
	}
}
