package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// project makes a project directory holding config.json with raw as its
// content, and returns the project root and the config's path.
func project(t *testing.T, raw string) (root, path string) {
	t.Helper()
	root = t.TempDir()
	path = filepath.Join(root, "config.json")
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// loadErr loads raw as a project's config.json and returns the *Error it
// must produce, checking that the error names the file.
func loadErr(t *testing.T, raw string) *Error {
	t.Helper()
	root, path := project(t, raw)
	return loadErrAt(t, path, root)
}

func loadErrAt(t *testing.T, path, root string) *Error {
	t.Helper()
	cfg, err := LoadProject(path, root)
	if err == nil {
		t.Fatalf("accepted %s: %+v", path, cfg)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not *Error: %v", err, err)
	}
	if ce.File != path || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("the error does not name the file %s: %v", path, err)
	}
	return ce
}

// hasIssue reports whether the error holds an issue at path whose reason
// contains want.
func hasIssue(ce *Error, path, want string) bool {
	issues := ce.Issues
	if len(issues) == 0 {
		issues = []Issue{{ce.Path, ce.Reason}}
	}
	for _, is := range issues {
		if is.Path == path && strings.Contains(is.Reason, want) {
			return true
		}
	}
	return false
}

func TestEscapingDomainNameIsRefused(t *testing.T) {
	// Keys after "domains" make sure the reported path is the domain's own.
	ce := loadErr(t, `{"domains": {"../../../escaped": {"weight": 1, "primary_skill": "/a"}},
		"forge": {"provider": "none"}, "safety": {"halt_file": "agent/safety/HALT"}, "skills": {"/a": {"builtin": "noop"}}}`)
	if len(ce.Issues) != 1 || ce.Path != "/domains/..~1..~1..~1escaped" || ce.Reason != DomainNameRule {
		t.Errorf("error = %v", ce)
	}
	// The file and the pointer, in the format every config error uses.
	if !strings.HasSuffix(ce.Error(), "config.json: /domains/..~1..~1..~1escaped: "+DomainNameRule) {
		t.Errorf("Error() = %q", ce.Error())
	}
	for _, name := range []string{"..", ".", "a..b", "a/b", `a\b`, "/abs", ".hidden", "-x", "_x", "", "x y", "é", strings.Repeat("a", 65), "a\x00b", "a\nb"} {
		raw := `{"domains": {` + quote(name) + `: {"weight": 1}}, "mission": "m"}`
		ce := validateErr(t, raw)
		if !hasIssue(ce, Pointer("domains", name), "a domain name must be") {
			t.Errorf("domain %q: %v", name, ce)
		}
	}
	// Every domain of the original project's configs is a plain name.
	for _, name := range []string{"api", "service_health", "test_coverage", "ux_evolution", "business_strategy", "a", "A9", "9a", "a.b", "a-b_c.d", "v1.2", strings.Repeat("a", 64)} {
		if err := ValidDomainName(name); err != nil {
			t.Errorf("ValidDomainName(%q) = %v", name, err)
		}
		if err := ValidateSchema("config.json", []byte(`{"domains": {`+quote(name)+`: {"primary_skill": "/a"}}}`)); err != nil {
			t.Errorf("domain %q refused: %v", name, err)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestConfiguredPathsOutsideTheProjectAreRefused(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name, raw, path string
	}{
		{"state_file climbing out", `{"domains": {"d": {"primary_skill": "/a", "state_file": "../../../../etc/passwd"}}}`, "/domains/d/state_file"},
		{"state_file ../../etc/passwd", `{"domains": {"d": {"primary_skill": "/a", "state_file": "../../etc/passwd"}}}`, "/domains/d/state_file"},
		{"state_file absolute outside", `{"domains": {"d": {"primary_skill": "/a", "state_file": "/etc/passwd"}}}`, "/domains/d/state_file"},
		{"state_file in a sibling directory", `{"domains": {"d": {"primary_skill": "/a", "state_file": ` + quote(filepath.Join(outside, "x.json")) + `}}}`, "/domains/d/state_file"},
		{"state_file the root itself", `{"domains": {"d": {"primary_skill": "/a", "state_file": "."}}}`, "/domains/d/state_file"},
		{"halt_file climbing out", `{"safety": {"halt_file": "../HALT"}}`, "/safety/halt_file"},
		{"halt_file absolute outside", `{"safety": {"halt_file": "/tmp/HALT"}}`, "/safety/halt_file"},
		{"active context outside", `{"active_context": {"path": "/etc/hosts"}}`, "/active_context/path"},
		{"inline contract output outside", `{"skills": {"/s": {"builtin": "noop", "contract": {"output": {"files": ["ok.json", "../../x.json"]}}}}}`,
			"/skills/~1s/contract/output/files/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, tt.path, "outside the project") && !hasIssue(ce, tt.path, "the project root itself") {
				t.Errorf("want an issue at %s, got %v", tt.path, ce)
			}
		})
	}
}

func TestSymlinkedPathsLeadingOutAreRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, path := project(t, "")
	mustSymlink(t, secret, filepath.Join(root, "agent", "state", "link.json"))
	mustSymlink(t, outside, filepath.Join(root, "agent", "outdir"))
	mustSymlink(t, filepath.Join(outside, "not-yet"), filepath.Join(root, "agent", "dangling.json"))
	mustSymlink(t, "loop-b", filepath.Join(root, "agent", "loop-a"))
	mustSymlink(t, "loop-a", filepath.Join(root, "agent", "loop-b"))
	mustSymlink(t, "../agent/state", filepath.Join(root, "agent", "inside"))

	for _, tt := range []struct{ stateFile, want string }{
		{"agent/state/link.json", "through a symlink"}, // a file symlinked out
		{"agent/outdir/new.json", "through a symlink"}, // a directory symlinked out, file not there yet
		// An absolute path is opened as written, so ".." after a symlink
		// climbs from the link's target, as the kernel reads it.
		{filepath.Join(root, "agent", "outdir") + "/../../x.json", "through a symlink"},
		{"agent/dangling.json", "through a symlink"}, // a dangling symlink: a write would create the target
		{"agent/loop-a", "too many levels of symbolic links"},
	} {
		raw := `{"domains": {"d": {"primary_skill": "/a", "state_file": ` + quote(tt.stateFile) + `}}}`
		if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		ce := loadErrAt(t, path, root)
		if !hasIssue(ce, "/domains/d/state_file", tt.want) {
			t.Errorf("state_file %s: want %q, got %v", tt.stateFile, tt.want, ce)
		}
	}

	// Symlinks that stay inside, and absolute paths inside, are fine; a
	// relative path is cleaned before it is joined to the root (as the
	// state store does), so its ".." never climbs from a link's target.
	raw := `{"domains": {"d": {"primary_skill": "/a", "state_file": "agent/inside/d.json"}, "e": {"primary_skill": "/a", "state_file": ` +
		quote(filepath.Join(root, "agent", "state", "e.json")) + `}, "f": {"primary_skill": "/a", "state_file": "agent/outdir/../../f.json"}}}`
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("in-project paths refused: %v", err)
	}
	// A project reached through a symlink is the same project.
	alias := filepath.Join(t.TempDir(), "alias")
	mustSymlink(t, root, alias)
	if _, err := LoadProject(filepath.Join(alias, "config.json"), alias); err != nil {
		t.Errorf("project behind a symlink: %v", err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestLoadChecksPathsAgainstTheGivenProjectRoot(t *testing.T) {
	// --config elsewhere, --project here: the project is what counts.
	root := t.TempDir()
	cfgDir := t.TempDir()
	path := filepath.Join(cfgDir, "config.json")
	raw := `{"domains": {"d": {"primary_skill": "/a", "state_file": ` + quote(filepath.Join(root, "agent", "state", "d.json")) + `}}}`
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProject(path, root); err != nil {
		t.Errorf("a state file inside --project refused: %v", err)
	}
	ce := loadErrAt(t, path, cfgDir)
	if !hasIssue(ce, "/domains/d/state_file", "outside the project") {
		t.Errorf("error = %v", ce)
	}
	// Load without a root takes the config's directory.
	if _, err := Load(path); err == nil {
		t.Error("Load accepted a state file outside the config's directory")
	}
}

func TestHugeAndNonFiniteNumbersAreRefused(t *testing.T) {
	tests := []struct{ name, raw, path, want string }{
		{"weight 1e308", `{"domains": {"d": {"primary_skill": "/a", "weight": 1e308}}}`, "/domains/d/weight", "must be <= 1000000, got 1e308"},
		{"interval 1e308", `{"safety": {"min_cycle_interval_minutes": 1e308}}`, "/safety/min_cycle_interval_minutes", "must be <= 525600"},
		{"lock timeout", `{"safety": {"lock_timeout_minutes": 20000}}`, "/safety/lock_timeout_minutes", "must be <= 10080"},
		{"cost cap", `{"cost": {"daily_limit_usd": 1e12}}`, "/cost/daily_limit_usd", "must be <= 1000000000"},
		{"count", `{"memory": {"working_memory_size": 10000000}}`, "/memory/working_memory_size", "must be <= 1000000"},
		{"negative multiplier", `{"scoring": {"implementation_formula": {"open_pr_penalty": -1e300}}}`, "/scoring/implementation_formula/open_pr_penalty", "must be >= -1000000"},
		{"season weight", `{"season_modes": {"modes": {"m": {"weight_overrides": {"d": 1e307}}}}}`, "/season_modes/modes/m/weight_overrides/d", "must be <= 1000000"},
		{"decay days", `{"memory": {"action_queue_decay_days": 1e6}}`, "/memory/action_queue_decay_days", "must be <= 36500"},
		{"skill minutes", `{"skills": {"s": {"builtin": "noop", "timeout_minutes": 1e9}}}`, "/skills/s/timeout_minutes", "must be <= 525600"},
		{"unknown key", `{"__doc__": 1e300}`, "/__doc__", "number out of range (at most 1e15 in magnitude), got 1e300"},
		{"reserved section", `{"leap": {"mega_leap": {"budget": -1e200}}}`, "/leap/mega_leap/budget", "number out of range"},
		{"beyond float64", `{"domains": {"d": {"primary_skill": "/a", "weight": 1e309}}}`, "/domains/d/weight", "number out of range, got 1e309"},
		// big.Rat would spend minutes expanding 10^99999999.
		{"underflow", `{"domains": {"d": {"primary_skill": "/a", "weight": 1e-99999999}}}`, "/domains/d/weight", "number out of range, got 1e-99999999"},
		{"absurdly long", `{"domains": {"d": {"primary_skill": "/a", "weight": 0.` + strings.Repeat("0", 200) + `1}}}`, "/domains/d/weight", "number out of range"},
		{"max_read_mib zero", `{"safety": {"max_read_mib": 0}}`, "/safety/max_read_mib", "must be > 0"},
		{"max_read_mib huge", `{"safety": {"max_read_mib": 4096}}`, "/safety/max_read_mib", "must be <= 1024"},
		{"agent timeout overflow", `{"agent": {"command": ["a"], "timeout": "9999999999999h"}}`, "/agent/timeout", "not a Go duration"},
		{"forge timeout overflow", `{"forge": {"timeout": "9999999999999h"}}`, "/forge/timeout", "not a Go duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, tt.path, tt.want) {
				t.Errorf("want %s: %q, got %v", tt.path, tt.want, ce)
			}
		})
	}
	// The bounds themselves are accepted.
	root, path := project(t, `{"domains": {"d": {"primary_skill": "/a", "weight": 1e6, "min_interval_hours": 1e6}},
		"safety": {"min_cycle_interval_minutes": 525600, "lock_timeout_minutes": 10080, "max_read_mib": 1024},
		"cost": {"daily_limit_usd": 1e9}, "memory": {"action_queue_decay_days": 36500},
		"quality_rubric": {"dimensions": [{"targets": [{"metric": "bytes", "op": "<", "value": 1e15}]}]}}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatalf("bounds refused: %v", err)
	}
	if cfg.Safety.MaxReadBytes() != 1024<<20 || cfg.Safety.LockTimeout().Hours() != 168 {
		t.Errorf("max_read_mib %d, lock timeout %v", cfg.Safety.MaxReadBytes(), cfg.Safety.LockTimeout())
	}
}

func TestMaxReadBytes(t *testing.T) {
	for _, tc := range []struct {
		mib  float64
		want int64
	}{{0, 16 << 20}, {-1, 16 << 20}, {math.NaN(), 16 << 20}, {1, 1 << 20}, {0.5, 1 << 19}, {1024, 1 << 30}, {1e300, 1 << 30}} {
		if got := (Safety{MaxReadMiB: tc.mib}).MaxReadBytes(); got != tc.want {
			t.Errorf("MaxReadBytes(%g) = %d, want %d", tc.mib, got, tc.want)
		}
	}
}

func TestDuplicateKeysAreRefusedAtAnyDepth(t *testing.T) {
	tests := []struct{ name, raw, path, want string }{
		{"top level", `{"mission": "a", "mission": "b"}`, "/mission", `key "mission" is defined twice`},
		{"nested", `{"safety": {"halt_file": "agent/safety/HALT", "max_prs_per_cycle": 1, "halt_file": "x"}}`, "/safety/halt_file", `key "halt_file" is defined twice`},
		{"deeper", `{"skills": {"s": {"builtin": "noop", "env": {"A": "1", "A": "2"}}}}`, "/skills/s/env/A", "defined twice"},
		{"inside an array", `{"health_endpoints": [{"url": "a"}, {"url": "b", "url": "c"}]}`, "/health_endpoints/1/url", "defined twice"},
		{"a domain", `{"domains": {"api": {"primary_skill": "/a"}, "api": {"primary_skill": "/a", "weight": 2}}}`, "/domains/api", `domain "api" is defined twice`},
		{"inside a domain", `{"domains": {"api": {"primary_skill": "/a", "weight": 1, "weight": 9}}}`, "/domains/api/weight", "defined twice"},
		{"escaped key", `{"skills": {"/s": {"builtin": "a"}, "\/s": {"builtin": "b"}}}`, "/skills/~1s", "defined twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, tt.path, tt.want) {
				t.Errorf("want %s: %q, got %v", tt.path, tt.want, ce)
			}
		})
	}
	// Equal keys in different objects are not duplicates.
	if err := ValidateSchema("config.json", []byte(`{"domains": {"a": {"primary_skill": "/a", "weight": 1}, "b": {"primary_skill": "/a", "weight": 1}}, "agent": {"env": {"weight": "1"}}}`)); err != nil {
		t.Errorf("keys repeated across objects refused: %v", err)
	}
}

func TestForgeRepoMustBeOwnerSlashName(t *testing.T) {
	for _, bad := range []string{"noslash", "a/b/c", "owner/", "/name", "-owner/name", "owner/..", "owner/.", "own er/name", "owner/na me",
		strings.Repeat("o", 40) + "/name", "https://github.com/o/n", "o/n\n"} {
		ce := loadErr(t, `{"forge": {"repo": `+quote(bad)+`}}`)
		if !hasIssue(ce, "/forge/repo", `must be "owner/name"`) {
			t.Errorf("repo %q: %v", bad, ce)
		}
	}
	for _, good := range []string{"", "acme/app", "octo-org/my.repo_2", "o/.github", "o/..x", "a_b/c", strings.Repeat("o", 39) + "/n"} {
		root, path := project(t, `{"forge": {"repo": `+quote(good)+`}}`)
		cfg, err := LoadProject(path, root)
		if err != nil {
			t.Errorf("repo %q refused: %v", good, err)
		} else if cfg.Forge.Repo != good {
			t.Errorf("repo = %q, want %q", cfg.Forge.Repo, good)
		}
	}
}

func TestEnvPolicyKeys(t *testing.T) {
	root, path := project(t, `{
		"skills": {"/dev-cycle": {"command": ["./dev.sh"], "env_passthrough": ["GITHUB_TOKEN", "GH_TOKEN"]},
		           "/all": {"command": ["./all.sh"], "inherit_env": true}},
		"agent": {"command": ["claude"], "env_passthrough": ["GH_TOKEN"]},
		"judge": {"command": ["./judge.sh"], "inherit_env": true}}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Skills["/dev-cycle"].EnvPassthrough; !reflect.DeepEqual(got, []string{"GITHUB_TOKEN", "GH_TOKEN"}) {
		t.Errorf("skills env_passthrough = %q", got)
	}
	if !cfg.Skills["/all"].InheritEnv || cfg.Skills["/dev-cycle"].InheritEnv {
		t.Error("skills inherit_env not decoded")
	}
	if !reflect.DeepEqual(cfg.Agent.EnvPassthrough, []string{"GH_TOKEN"}) || !cfg.Judge.InheritEnv || cfg.Agent.InheritEnv {
		t.Errorf("agent %+v, judge %+v", cfg.Agent.EnvPolicy, cfg.Judge.EnvPolicy)
	}
	for _, tt := range []struct{ raw, path, want string }{
		{`{"agent": {"env_passthrough": ["GITHUB_TOKEN=x"]}}`, "/agent/env_passthrough/0", "must be an environment variable name"},
		{`{"judge": {"env_passthrough": "GITHUB_TOKEN"}}`, "/judge/env_passthrough", "expected array"},
		{`{"skills": {"s": {"builtin": "noop", "inherit_env": "yes"}}}`, "/skills/s/inherit_env", "expected boolean"},
	} {
		if ce := validateErr(t, tt.raw); !hasIssue(ce, tt.path, tt.want) {
			t.Errorf("%s: %v", tt.raw, ce)
		}
	}
}

func TestCompatConfigsLoadInAProject(t *testing.T) {
	for _, path := range compatConfigs(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseProject(path, raw, t.TempDir()); err != nil {
			t.Errorf("compat config refused:\n%v", err)
		}
	}
}

func TestConfigFileThatIsNotARegularFile(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "config.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Without a writer, a blocking open would never return.
	ce := loadErrAt(t, fifo, root)
	if !strings.Contains(ce.Reason, "not a regular file (a named pipe)") {
		t.Errorf("error = %v", ce)
	}
	big := filepath.Join(root, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is what is refused, before anything is read.
	if err := f.Truncate(MaxConfigBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ce = loadErrAt(t, big, root)
	if !strings.Contains(ce.Reason, "larger than the read limit of 1 MiB") {
		t.Errorf("error = %v", ce)
	}
	ce = loadErrAt(t, root, root)
	if !strings.Contains(ce.Reason, "a directory") {
		t.Errorf("error = %v", ce)
	}
}

func TestReadProjectFile(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "a", "ok.txt"), "hello")
	write(filepath.Join(outside, "secret"), "s3cret")
	mustSymlink(t, "../a/ok.txt", filepath.Join(root, "b", "alias.txt"))
	mustSymlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "b", "out.txt"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{"a/ok.txt", "b/alias.txt", filepath.Join(root, "a", "ok.txt")} {
		if b, err := ReadProjectFile(root, p, 5); err != nil || string(b) != "hello" {
			t.Errorf("ReadProjectFile(%s) = %q, %v", p, b, err)
		}
	}
	for _, tc := range []struct {
		p    string
		want error
	}{
		{"b/out.txt", ErrOutsideProject},
		{"../x", ErrOutsideProject},
		{filepath.Join(outside, "secret"), ErrOutsideProject},
		{"fifo", ErrNotRegular},
		{"a", ErrNotRegular},
		{"a/missing", fs.ErrNotExist},
	} {
		b, err := ReadProjectFile(root, tc.p, 1<<20)
		if !errors.Is(err, tc.want) || b != nil {
			t.Errorf("ReadProjectFile(%s) = %q, %v; want %v", tc.p, b, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), tc.p) {
			t.Errorf("the error does not name %s: %v", tc.p, err)
		}
	}
	if _, err := ReadProjectFile(root, "a/ok.txt", 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 5-byte file under a 4-byte limit: %v", err)
	}
}

func TestResolveInProject(t *testing.T) {
	root := t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ p, want string }{
		{"agent/state/x.json", filepath.Join(real, "agent/state/x.json")},
		{"./a/../b", filepath.Join(real, "b")},
		{filepath.Join(root, "c"), filepath.Join(real, "c")},
	} {
		got, err := ResolveInProject(root, tc.p)
		if err != nil || got != tc.want {
			t.Errorf("ResolveInProject(%q) = %q, %v; want %q", tc.p, got, err, tc.want)
		}
	}
	for _, p := range []string{"", "..", "../x", "a/../../x", "/", "a\x00b", "."} {
		if got, err := ResolveInProject(root, p); err == nil {
			t.Errorf("ResolveInProject(%q) = %q, want an error", p, got)
		}
	}
}
