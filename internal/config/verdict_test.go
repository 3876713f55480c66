package config

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withVerdicts turns the remembered verdicts on for the test, in a cache
// directory of its own (never the real home), and returns the verdict
// file's path.
func withVerdicts(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv(NoCacheEnv, "")
	verdictsInTests = true
	t.Cleanup(func() { verdictsInTests = false })
	file := verdictFile()
	if file == "" || !strings.HasPrefix(file, home) {
		t.Fatalf("verdict file %q is not under the test's home %s", file, home)
	}
	return file
}

const (
	verdictValid = `{"domains": {"api": {"weight": 2, "primary_skill": "/a", "state_file": "agent/state/api.json"}}}`
	// verdictInvalid differs from verdictValid by one value the schema
	// refuses.
	verdictInvalid = `{"domains": {"api": {"weight": -2, "primary_skill": "/a", "state_file": "agent/state/api.json"}}}`
)

// plant writes a verdict file holding the header and keys, as an
// attacker with a file in the cache directory would.
func plant(t *testing.T, file string, keys ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	body := verdictHeader + "\n" + strings.Join(keys, "\n") + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestValidConfigIsRememberedAndLoadsTheSameFromTheCache(t *testing.T) {
	file := withVerdicts(t)
	root, path := project(t, verdictValid)
	fresh, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if !knownValid([]byte(verdictValid)) {
		t.Fatalf("a valid configuration was not remembered in %s", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := verdictHeader + "\n" + verdictKey([]byte(verdictValid)) + "\n"; string(b) != want {
		t.Fatalf("verdict file = %q, want %q", b, want)
	}
	cached, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if cached.Domains[0].Weight != fresh.Domains[0].Weight || cached.Domains[0].StateFile != fresh.Domains[0].StateFile {
		t.Fatalf("loaded from a remembered verdict: %+v, validated: %+v", cached.Domains[0], fresh.Domains[0])
	}
}

// A failure is never remembered, and a configuration changed by one value
// after it was found valid is validated again.
func TestInvalidConfigIsNeverRemembered(t *testing.T) {
	file := withVerdicts(t)
	root, path := project(t, verdictValid)
	if _, err := LoadProject(path, root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(verdictInvalid), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ce := loadErrAt(t, path, root)
		if !hasIssue(ce, "/domains/api/weight", "must be >= 0") {
			t.Fatalf("want the weight refused, got %v", ce)
		}
	}
	b, _ := os.ReadFile(file)
	if bytes.Contains(b, []byte(verdictKey([]byte(verdictInvalid)))) {
		t.Fatalf("the invalid configuration was remembered: %s", b)
	}
}

// The verdict is keyed by the schema and the binary too: a verdict found
// with another schema or another build does not stand.
func TestVerdictDependsOnSchemaAndBinary(t *testing.T) {
	withVerdicts(t)
	rememberValid([]byte(verdictValid))
	if !knownValid([]byte(verdictValid)) {
		t.Fatal("not remembered")
	}
	// The key holds the schema by its hash, generated with the key tree.
	if sum := fmt.Sprintf("%x", sha256.Sum256(schemaJSON)); schemaSum != sum {
		t.Fatalf("schemaSum %s, but schema.json hashes to %s: run go generate ./internal/config/", schemaSum, sum)
	}
	saved := verdictSchemaSum
	verdictSchemaSum = fmt.Sprintf("%x", sha256.Sum256(append(bytes.Clone(schemaJSON), ' ')))
	known := knownValid([]byte(verdictValid))
	verdictSchemaSum = saved
	if known {
		t.Error("a verdict found with another schema was taken")
	}
	savedID := binaryIdentity
	binaryIdentity = func() string { return "another build" }
	known = knownValid([]byte(verdictValid))
	binaryIdentity = savedID
	if known {
		t.Error("a verdict found by another build was taken")
	}
}

// `ooda config validate` validates whatever the cache says: an entry
// planted for an invalid configuration does not make it valid there.
func TestFreshLoadIgnoresAPlantedVerdict(t *testing.T) {
	file := withVerdicts(t)
	root, path := project(t, verdictInvalid)
	plant(t, file, verdictKey([]byte(verdictInvalid)))
	_, err := LoadProjectFresh(path, root)
	if err == nil || !strings.Contains(err.Error(), "/domains/api/weight") {
		t.Fatalf("LoadProjectFresh = %v, want the weight refused", err)
	}
}

// A verdict file larger than its bound, not a regular file, or not in the
// expected form is not read: the configuration is validated.
func TestUnreadableVerdictFileIsIgnored(t *testing.T) {
	file := withVerdicts(t)
	root, path := project(t, verdictInvalid)
	key := verdictKey([]byte(verdictInvalid))
	var many []string
	for range maxVerdictBytes / 64 {
		many = append(many, strings.Repeat("0", 64))
	}
	for name, setup := range map[string]func(){
		"oversized": func() { plant(t, file, append(many, key)...) },
		"symlink": func() {
			other := filepath.Join(t.TempDir(), "elsewhere")
			plant(t, other, key)
			mustSymlink(t, other, file)
		},
		"no header": func() { _ = os.WriteFile(file, []byte(key+"\n"), 0o600) },
		"bad line":  func() { plant(t, file, key, "not a hash") },
		"a fifo": func() {
			if err := syscall.Mkfifo(file, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"directory":  func() { _ = os.MkdirAll(filepath.Join(file, key), 0o700) },
		"upper case": func() { plant(t, file, strings.ToUpper(key)) },
	} {
		_ = os.RemoveAll(file)
		_ = os.MkdirAll(filepath.Dir(file), 0o700)
		setup()
		if cfg, err := LoadProject(path, root); err == nil {
			t.Errorf("%s verdict file: invalid configuration accepted: %+v", name, cfg)
		}
	}
}

// The checks that depend on the file system run every time: a state file
// that leads out of the project through a symlink made after the
// configuration was found valid is refused, verdict or not.
func TestRememberedVerdictStillChecksPaths(t *testing.T) {
	withVerdicts(t)
	root, path := project(t, verdictValid)
	if _, err := LoadProject(path, root); err != nil {
		t.Fatal(err)
	}
	if !knownValid([]byte(verdictValid)) {
		t.Fatal("not remembered")
	}
	mustSymlink(t, t.TempDir(), filepath.Join(root, "agent", "state"))
	ce := loadErrAt(t, path, root)
	if !hasIssue(ce, "/domains/api/state_file", "through a symlink") {
		t.Fatalf("want the state file refused, got %v", ce)
	}
}

// Unknown keys are warned about on every load, the ones spared the schema
// included.
func TestRememberedVerdictStillWarns(t *testing.T) {
	withVerdicts(t)
	raw := `{"domains": {"api": {"wieght": 2, "primary_skill": "/a"}}}`
	root, path := project(t, raw)
	for i := range 2 {
		cfg, err := LoadProject(path, root)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Warnings) != 1 || cfg.Warnings[0].Path != "/domains/api/wieght" {
			t.Fatalf("load %d: warnings %v", i, cfg.Warnings)
		}
		if i == 0 && !knownValid([]byte(raw)) {
			t.Fatal("not remembered")
		}
	}
}

func TestNoCacheEnvTurnsVerdictsOff(t *testing.T) {
	file := withVerdicts(t)
	t.Setenv(NoCacheEnv, "1")
	root, path := project(t, verdictInvalid)
	plant(t, file, verdictKey([]byte(verdictInvalid)))
	if _, err := LoadProject(path, root); err == nil {
		t.Fatal("a remembered verdict was used with " + NoCacheEnv + "=1")
	}
	_ = os.Remove(file)
	root, path = project(t, verdictValid)
	if _, err := LoadProject(path, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("verdict file written with %s=1: %v", NoCacheEnv, err)
	}
}

// The list is bounded: the oldest verdicts are forgotten first.
func TestVerdictsAreBounded(t *testing.T) {
	file := withVerdicts(t)
	first := []byte(`{"n": 0}`)
	rememberValid(first)
	for i := 1; i <= maxVerdicts; i++ {
		rememberValid([]byte(`{"n": ` + strings.Repeat("1", i) + `}`))
	}
	if knownValid(first) {
		t.Error("the oldest verdict was kept past the bound")
	}
	if n := len(readVerdicts(file)); n != maxVerdicts {
		t.Errorf("%d verdicts kept, want %d", n, maxVerdicts)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() > maxVerdictBytes {
		t.Errorf("verdict file %v, %v: larger than its read bound", fi, err)
	}
}

// BenchmarkVerdictKey is the key every process that loads a configuration
// works out to look up a remembered verdict.
func BenchmarkVerdictKey(b *testing.B) {
	raw := []byte(verdictValid)
	b.ReportAllocs()
	for b.Loop() {
		if verdictKey(raw) == "" {
			b.Fatal("no key")
		}
	}
}

// A test binary is recognised as one, as testing.Testing says, so that
// the other packages' tests never write verdicts into the real cache.
func TestInTestBinaryAgreesWithTesting(t *testing.T) {
	if got, want := inTestBinary(), testing.Testing(); got != want || !got {
		t.Fatalf("inTestBinary() = %v, testing.Testing() = %v", got, want)
	}
}
