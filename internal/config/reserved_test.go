package config

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitProject makes a project that is a real git repository with one commit,
// so .git/HEAD, .git/config and .git/hooks exist as they do in a user's
// project, and returns the root and the path of its config.json.
func gitProject(t *testing.T) (root, path string) {
	t.Helper()
	root, path = project(t, "{}")
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	return root, path
}

// writeConfig replaces the project's config.json.
func writeConfig(t *testing.T, path, raw string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPathsIntoGitAreRefused(t *testing.T) {
	root, path := gitProject(t)
	head := filepath.Join(root, ".git", "HEAD")
	before, err := os.ReadFile(head)
	if err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "../.git/HEAD", filepath.Join(root, "agent", "head-link"))
	mustSymlink(t, "../.git", filepath.Join(root, "agent", "gitdir"))
	for _, tt := range []struct{ name, raw, at string }{
		// Every cycle would halt on HEAD, and `ooda resume` would delete it.
		{"halt_file .git/HEAD", `{"safety": {"halt_file": ".git/HEAD"}}`, "/safety/halt_file"},
		{"halt_file absolute .git/HEAD", `{"safety": {"halt_file": ` + quote(head) + `}}`, "/safety/halt_file"},
		{"halt_file .GIT, case folded", `{"safety": {"halt_file": ".GIT/HEAD"}}`, "/safety/halt_file"},
		{"halt_file through a symlink to HEAD", `{"safety": {"halt_file": "agent/head-link"}}`, "/safety/halt_file"},
		{"halt_file .git itself", `{"safety": {"halt_file": ".git"}}`, "/safety/halt_file"},
		{"halt_file in a nested .git", `{"safety": {"halt_file": "vendor/lib/.git/HEAD"}}`, "/safety/halt_file"},
		// The skill would be told to write a hook git then runs.
		{"state_file a git hook", `{"domains": {"d": {"primary_skill": "/a", "state_file": ".git/hooks/pre-commit"}}}`, "/domains/d/state_file"},
		{"state_file through a symlinked .git", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/gitdir/config"}}}`, "/domains/d/state_file"},
		{"active context .git/config", `{"active_context": {"path": ".git/config"}}`, "/active_context/path"},
		{"inline contract output .git/config", `{"skills": {"/s": {"builtin": "noop", "contract": {"output": {"files": [".git/config"]}}}}}`,
			"/skills/~1s/contract/output/files/0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeConfig(t, path, tt.raw)
			ce := loadErrAt(t, path, root)
			if !hasIssue(ce, tt.at, "inside a .git directory") {
				t.Errorf("want an issue at %s, got %v", tt.at, ce)
			}
		})
	}
	if after, err := os.ReadFile(head); err != nil || string(after) != string(before) {
		t.Errorf(".git/HEAD changed: %q, %v", after, err)
	}
	// A name merely containing "git" is an ordinary path.
	writeConfig(t, path, `{"safety": {"halt_file": "agent/.gitkeep-HALT"}, "domains": {"d": {"primary_skill": "/a", "state_file": "agent/state/git.json"}}}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("ordinary paths refused: %v", err)
	}
}

func TestPathsIntoOodasOwnStateAreRefused(t *testing.T) {
	root, path := project(t, "{}")
	evolve := filepath.Join(root, "agent", "state", "evolve")
	if err := os.MkdirAll(evolve, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".lock", "state.json", "cost_ledger.json"} {
		if err := os.WriteFile(filepath.Join(evolve, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, "state/evolve", filepath.Join(root, "agent", "ev"))
	for _, tt := range []struct{ name, raw, at string }{
		// The skill is handed OODA_STATE_FILE and writes it.
		{"state_file the lock", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/state/evolve/.lock"}}}`, "/domains/d/state_file"},
		{"state_file state.json", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/state/evolve/state.json"}}}`, "/domains/d/state_file"},
		{"state_file the cost ledger", `{"domains": {"d": {"primary_skill": "/a", "state_file": "./agent/state/evolve/cost_ledger.json"}}}`, "/domains/d/state_file"},
		{"state_file a new file there", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/state/evolve/d.json"}}}`, "/domains/d/state_file"},
		{"state_file case folded", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/State/EVOLVE/state.json"}}}`, "/domains/d/state_file"},
		{"state_file through a symlink", `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/ev/state.json"}}}`, "/domains/d/state_file"},
		// `ooda resume` would delete the file.
		{"halt_file the lock", `{"safety": {"halt_file": "agent/state/evolve/.lock"}}`, "/safety/halt_file"},
		{"active context the state", `{"active_context": {"path": "agent/state/evolve/state.json"}}`, "/active_context/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeConfig(t, path, tt.raw)
			ce := loadErrAt(t, path, root)
			if !hasIssue(ce, tt.at, "inside agent/state/evolve/") {
				t.Errorf("want an issue at %s, got %v", tt.at, ce)
			}
		})
	}
	// Only the evolve directory is ooda's: a domain's own directory, as the
	// original project's configs use it, is the domain's.
	writeConfig(t, path, `{"domains": {"service_health": {"primary_skill": "/a", "state_file": "agent/state/service_health/state.json"}, "e": {"primary_skill": "/a", "state_file": "agent/state/evolved.json"}}}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("domain state files refused: %v", err)
	}
	// A contract may declare ooda's files as its outputs (dev-cycle
	// declares action_queue.json): ooda only reads them.
	writeConfig(t, path, `{"skills": {"/dev-cycle": {"builtin": "noop", "contract": {"output": {"files": ["agent/state/evolve/action_queue.json", "config.json"]}}}}}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("contract outputs in agent/state/evolve refused: %v", err)
	}
}

func TestConfigFileItselfIsRefusedAsAPath(t *testing.T) {
	root, path := project(t, "{}")
	mustSymlink(t, "../config.json", filepath.Join(root, "agent", "cfg-link"))
	if err := os.Link(path, filepath.Join(root, "agent", "cfg-hardlink")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, raw, at string }{
		// `ooda resume` would delete config.json.
		{"halt_file config.json", `{"safety": {"halt_file": "config.json"}}`, "/safety/halt_file"},
		{"halt_file through a symlink", `{"safety": {"halt_file": "agent/cfg-link"}}`, "/safety/halt_file"},
		{"halt_file a hard link", `{"safety": {"halt_file": "agent/cfg-hardlink"}}`, "/safety/halt_file"},
		// The skill would overwrite the configuration that bounds it.
		{"state_file config.json", `{"domains": {"d": {"primary_skill": "/a", "state_file": "config.json"}}}`, "/domains/d/state_file"},
		{"active context config.json", `{"active_context": {"path": "config.json"}}`, "/active_context/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeConfig(t, path, tt.raw)
			ce := loadErrAt(t, path, root)
			if !hasIssue(ce, tt.at, "is the configuration file itself") {
				t.Errorf("want an issue at %s, got %v", tt.at, ce)
			}
		})
	}
	// --config elsewhere: the file of the same name in the project is not it.
	other := filepath.Join(t.TempDir(), "config.json")
	writeConfig(t, other, `{"safety": {"halt_file": "config.json"}}`)
	if _, err := LoadProject(other, root); err != nil {
		t.Errorf("a halt_file named like a config file elsewhere refused: %v", err)
	}
}

func TestHaltAndStateFilesMustBeRegularFiles(t *testing.T) {
	root, path := project(t, "{}")
	if err := os.MkdirAll(filepath.Join(root, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(root, "agent", "pipe")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "../ops", filepath.Join(root, "agent", "ops-link"))
	for _, tt := range []struct{ name, raw, at, want string }{
		// Every cycle would halt "(unreadable)"; halt and resume would fail.
		{"halt_file a directory", `{"safety": {"halt_file": "ops"}}`, "/safety/halt_file", "is a directory, not a regular file"},
		{"halt_file a symlinked directory", `{"safety": {"halt_file": "agent/ops-link"}}`, "/safety/halt_file", "is a directory, not a regular file"},
		{"halt_file a named pipe", `{"safety": {"halt_file": "agent/pipe"}}`, "/safety/halt_file", "is a named pipe, not a regular file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeConfig(t, path, tt.raw)
			ce := loadErrAt(t, path, root)
			if !hasIssue(ce, tt.at, tt.want) {
				t.Errorf("want %s: %q, got %v", tt.at, tt.want, ce)
			}
		})
	}
	// A state file is data: one that is a pipe is refused when a cycle
	// reads it (a warning and a gap), never turned into a configuration
	// error that would stop every later cycle.
	writeConfig(t, path, `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/pipe"}}}`)
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("a state_file that is a named pipe must load: %v", err)
	}
	// A HALT file that exists is a halted project, which must still load.
	halt := filepath.Join(root, "agent", "safety", "HALT")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(halt, []byte("stopped by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, path, `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/state/d.json"}}}`)
	if err := os.MkdirAll(filepath.Join(root, "agent", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "agent", "state", "d.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("existing regular HALT and state files refused: %v", err)
	}
}

func TestHaltFileSharedWithAnotherConfiguredFileIsRefused(t *testing.T) {
	for _, tt := range []struct{ name, raw, want string }{
		{"a state file", `{"domains": {"api": {"primary_skill": "/a", "state_file": "agent/state/api.json"}}, "safety": {"halt_file": "agent/state/api.json"}}`,
			"is also /domains/api/state_file"},
		{"a default state file", `{"domains": {"api": {"primary_skill": "/a"}}, "safety": {"halt_file": "./agent/state/api.json"}}`,
			"is also /domains/api/state_file"},
		{"the active context", `{"active_context": {"path": "ctx.json"}, "safety": {"halt_file": "ctx.json"}}`,
			"is also /active_context/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, "/safety/halt_file", tt.want) {
				t.Errorf("want /safety/halt_file: %q, got %v", tt.want, ce)
			}
		})
	}
}

func TestReservedDomainNamesAreRefused(t *testing.T) {
	// A domain named evolve would write lens.json and rotation_cursor.json
	// among ooda's own state; one named external would have its lens read
	// back as an external signal.
	for _, name := range []string{"evolve", "external", "Evolve", "EXTERNAL"} {
		raw := `{"domains": {` + quote(name) + `: {"weight": 1, "primary_skill": "/a"}}, "skills": {"/a": {"builtin": "noop"}}}`
		ce := loadErr(t, raw)
		if !hasIssue(ce, Pointer("domains", name), "is reserved") || !hasIssue(ce, Pointer("domains", name), "agent/state/") {
			t.Errorf("domain %q: %v", name, ce)
		}
	}
	for _, name := range []string{"evolved", "external-api", "evolve2"} {
		if err := ValidDomainName(name); err != nil {
			t.Errorf("ValidDomainName(%q) = %v", name, err)
		}
	}
	if got := ReservedDomainNames(); strings.Join(got, ",") != "evolve,external" {
		t.Errorf("ReservedDomainNames() = %v", got)
	}
}

func TestTinyLockTimeoutIsRefusedAndFloored(t *testing.T) {
	// 1e-300 minutes was a 0 ns lock timeout: every lock stale at once (two
	// runners) and no time limit on any skill.
	for _, v := range []string{"1e-300", "0.009", "0", "-1"} {
		ce := loadErr(t, `{"safety": {"lock_timeout_minutes": `+v+`}}`)
		if !hasIssue(ce, "/safety/lock_timeout_minutes", "must be >= 0.01") {
			t.Errorf("lock_timeout_minutes %s: %v", v, ce)
		}
	}
	root, path := project(t, `{"safety": {"lock_timeout_minutes": 0.01}}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatalf("the lower bound refused: %v", err)
	}
	if got := cfg.Safety.LockTimeout(); got != MinLockTimeout {
		t.Errorf("LockTimeout() of 0.01 minutes = %v, want %v", got, MinLockTimeout)
	}
	// A Config built in code is floored and capped the same way.
	for _, tc := range []struct {
		minutes float64
		want    time.Duration
	}{
		{0, time.Second}, {-5, time.Second}, {1e-300, time.Second}, {math.NaN(), time.Second}, {math.Inf(-1), time.Second},
		{0.02, 1200 * time.Millisecond}, {30, 30 * time.Minute}, {1e300, 7 * 24 * time.Hour}, {math.Inf(1), 7 * 24 * time.Hour},
	} {
		if got := (Safety{LockTimeoutMinutes: tc.minutes}).LockTimeout(); got != tc.want {
			t.Errorf("LockTimeout(%g minutes) = %v, want %v", tc.minutes, got, tc.want)
		}
	}
}

func TestTimeLimitsThatRoundToZeroAreRefused(t *testing.T) {
	for _, tt := range []struct{ name, raw, at, want string }{
		{"skill minutes", `{"skills": {"/s": {"builtin": "noop", "timeout_minutes": 1e-300}}}`, "/skills/~1s/timeout_minutes", "less than one nanosecond"},
		{"skill duration", `{"skills": {"/s": {"builtin": "noop", "timeout": "0.1ns"}}}`, "/skills/~1s/timeout", "less than one nanosecond"},
		{"agent duration", `{"agent": {"command": ["a"], "timeout": ".5ns"}}`, "/agent/timeout", "less than one nanosecond"},
		{"judge duration", `{"judge": {"timeout": "0.9ns"}}`, "/judge/timeout", "less than one nanosecond"},
		{"forge duration", `{"forge": {"timeout": "0.0001ns"}}`, "/forge/timeout", "less than one nanosecond"},
		{"cycle interval", `{"safety": {"min_cycle_interval_minutes": 1e-300}}`, "/safety/min_cycle_interval_minutes", "less than one nanosecond"},
		// 0 was no limit at all on the post-merge test command and health checks.
		{"test timeout zero", `{"test_timeout_seconds": 0}`, "/test_timeout_seconds", "must be >= 0.001"},
		{"test timeout tiny", `{"test_timeout_seconds": 1e-300}`, "/test_timeout_seconds", "must be >= 0.001"},
		{"health timeout zero", `{"health_check_timeout_seconds": 0}`, "/health_check_timeout_seconds", "must be >= 0.001"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, tt.at, tt.want) {
				t.Errorf("want %s: %q, got %v", tt.at, tt.want, ce)
			}
		})
	}
	// Zero means the default; a short limit is taken as written (it fails
	// the run, which is the safe direction).
	root, path := project(t, `{"skills": {"/a": {"builtin": "noop", "timeout": "0"}, "/b": {"builtin": "noop", "timeout": "1ns"},
		"/c": {"builtin": "noop", "timeout_minutes": 0}, "/d": {"builtin": "noop", "timeout_minutes": 1e-9}},
		"agent": {"command": ["a"], "timeout": "0s"}, "forge": {"timeout": "1ms"},
		"safety": {"min_cycle_interval_minutes": 0}, "test_timeout_seconds": 0.001}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	for name, want := range map[string]time.Duration{"/a": 0, "/b": time.Nanosecond, "/c": 0, "/d": 60} {
		if got, err := cfg.Skills[name].TimeoutDuration(); err != nil || got != want {
			t.Errorf("%s: TimeoutDuration() = %v, %v; want %v", name, got, err, want)
		}
	}
}

// hostileSkillNames are names that must never validate: options that a
// command line such as ["sort", "{skill_name}"] would obey, paths, control
// and bidirectional characters, and the edges of the length rule.
var hostileSkillNames = []string{
	"--output=/tmp/outside/pwned", "-o", "/-x", "//x", "../x", "/a/b", "a/b", `a\b`, "..", ".", "a..b", ".hidden", "_x",
	"", "/", " x", "x ", "x y", "a\x1b[2Jb", "a\u202eb", "a\nb", "a\x00b", "é", strings.Repeat("a", 65), "/" + strings.Repeat("a", 65),
}

func TestValidSkillName(t *testing.T) {
	for _, name := range hostileSkillNames {
		if err := ValidSkillName(name); err == nil || err.Error() != SkillNameRule {
			t.Errorf("ValidSkillName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"x", "/x", "/scan-health", "check-tests", "/dev-cycle", "v1.2", "A9", "9a", "a_b.c-d",
		strings.Repeat("a", 64), "/" + strings.Repeat("a", 64)} {
		if err := ValidSkillName(name); err != nil {
			t.Errorf("ValidSkillName(%q) = %v", name, err)
		}
	}
}

func TestSkillNamesInTheConfigMustBePlainNames(t *testing.T) {
	for _, name := range hostileSkillNames {
		q := quote(name)
		raw := `{"domains": {"d": {"weight": 1, "primary_skill": ` + q + `, "chain": ["/ok", ` + q + `]}},
			"implementation": {"primary_skill": ` + q + `},
			"active_context": {"refresh_skill": ` + q + `},
			"safety": {"skill_allowlist": ["/ok", ` + q + `]},
			"agent": {"command": ["sort", "{skill_name}"]},
			"skills": {` + q + `: {"command": ["true"]},
				"/ok": {"builtin": ` + q + `, "contract": {"chain_triggers": [{"target": ` + q + `, "condition": "cost_usd >= 0"}]}}}}`
		ce := validateErr(t, raw)
		at := []string{
			Pointer("skills", name),
			"/skills/~1ok/contract/chain_triggers/0/target",
			"/domains/d/chain/1",
			"/safety/skill_allowlist/1",
		}
		if name != "" {
			// An empty primary_skill, refresh_skill or builtin means none
			// (or is the schema's to refuse).
			at = append(at, "/domains/d/primary_skill", "/implementation/primary_skill", "/active_context/refresh_skill", "/skills/~1ok/builtin")
		}
		for _, p := range at {
			if !hasIssue(ce, p, SkillNameRule) {
				t.Errorf("skill name %q: no issue at %s: %v", name, p, ce)
			}
		}
		// Load refuses it the same way, naming the file.
		if ce := loadErr(t, raw); !hasIssue(ce, "/safety/skill_allowlist/1", SkillNameRule) {
			t.Errorf("skill name %q loaded: %v", name, ce)
		}
	}
	// Every skill name of the original project's configs passes.
	for _, path := range compatConfigs(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateSchema(path, raw); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
