package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// setFixture is a valid configuration written by hand: keys out of the
// usual order, "__doc__" notes, an unknown top-level section, a tab-indented
// object and a compact one, so that a rewrite that reorders, reindents or
// drops anything shows.
const setFixture = `{
  "__doc__": "Written by hand; keep the notes.",
  "schema_version": "1.5.0",
  "safety": {
    "__doc__": "threshold first",
    "confidence_threshold": 0.6,
    "halt_file": "agent/safety/HALT"
  },
  "domains": {"api": {"weight": 2.0, "primary_skill": "/x"}},
  "team_notes": {	"owner": "ops",	"pager": [1, 2, 3] },
  "skills": {
	"/x": { "builtin": "noop" }
  },
  "season_modes": {
    "enabled": false,
    "modes": { "launch": { "weight_overrides": { "api": 3.0 } }, "quiet": {} }
  },
  "progressive_complexity": {},
  "project": { "name": "app" }
}
`

func setupSetProject(t *testing.T, content string) (dir, cfg string) {
	t.Helper()
	dir = t.TempDir()
	cfg = filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A set changes the value's text and nothing else: every other byte —
// key order, notes, the unknown section, tabs — is where it was.
func TestConfigSetChangesOnlyTheValue(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	code, stdout, stderr := run(t, dir, "config", "set", "safety.confidence_threshold", "0.75")
	if code != 0 {
		t.Fatalf("set: %d %s", code, stderr)
	}
	want := strings.Replace(setFixture, `"confidence_threshold": 0.6,`, `"confidence_threshold": 0.75,`, 1)
	if got := readFile(t, cfg); got != want {
		t.Fatalf("config.json after set:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(stdout, "  safety.confidence_threshold: 0.6 → 0.75\n") {
		t.Errorf("stdout %q does not show the change", stdout)
	}

	// A value inside the unknown section, written with tabs, and an
	// element of an array.
	code, _, stderr = run(t, dir, "config", "set", "team_notes.pager.1", "7")
	if code != 0 {
		t.Fatalf("set array element: %d %s", code, stderr)
	}
	want = strings.Replace(want, `[1, 2, 3]`, `[1, 7, 3]`, 1)
	if got := readFile(t, cfg); got != want {
		t.Fatalf("config.json after set:\n%s\nwant:\n%s", got, want)
	}
}

// A key not yet set is added after the last member of its object, with
// that member's indentation and separator; missing objects are created,
// laid out like the rest of the file.
func TestConfigSetInsertsInTheFilesLayout(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	if code, _, stderr := run(t, dir, "config", "set", "safety.max_prs_per_cycle", "2"); code != 0 {
		t.Fatalf("set: %d %s", code, stderr)
	}
	want := strings.Replace(setFixture, `"halt_file": "agent/safety/HALT"
  },`, `"halt_file": "agent/safety/HALT",
    "max_prs_per_cycle": 2
  },`, 1)
	if got := readFile(t, cfg); got != want {
		t.Fatalf("config.json:\n%s\nwant:\n%s", got, want)
	}
	// Into an empty object, and through a missing one.
	if code, _, stderr := run(t, dir, "config", "level", "1"); code != 0 {
		t.Fatalf("level: %d %s", code, stderr)
	}
	want = strings.Replace(want, `"progressive_complexity": {},`, `"progressive_complexity": {
    "current_level": 1
  },`, 1)
	if got := readFile(t, cfg); got != want {
		t.Fatalf("config.json:\n%s\nwant:\n%s", got, want)
	}
	if code, _, stderr := run(t, dir, "config", "set", "cost.daily_limit_usd", "5"); code != 0 {
		t.Fatalf("set: %d %s", code, stderr)
	}
	want = strings.Replace(want, `"project": { "name": "app" }
}`, `"project": { "name": "app" },
  "cost": {
    "daily_limit_usd": 5
  }
}`, 1)
	if got := readFile(t, cfg); got != want {
		t.Fatalf("config.json:\n%s\nwant:\n%s", got, want)
	}
}

// A file with CRLF line ends keeps them in what is inserted.
func TestConfigSetKeepsCRLF(t *testing.T) {
	crlf := strings.ReplaceAll(setFixture, "\n", "\r\n")
	dir, cfg := setupSetProject(t, crlf)
	if code, _, stderr := run(t, dir, "config", "set", "output", `{"cycle_card":false}`); code != 0 {
		t.Fatalf("set: %d %s", code, stderr)
	}
	got := readFile(t, cfg)
	if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Fatalf("a bare LF was inserted:\n%q", got)
	}
	if !strings.Contains(got, "\"output\": {\r\n    \"cycle_card\": false\r\n  }\r\n}") {
		t.Fatalf("config.json:\n%q", got)
	}
}

// An invalid result is refused, naming the field, and nothing is
// written: not the file, not a temporary file beside it.
func TestConfigSetRefusesAnInvalidResult(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	before := dirNames(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"set", "safety.confidence_threshold", "1.5"}, "/safety/confidence_threshold: must be <= 1, got 1.5"},
		{[]string{"set", "safety.confidence_threshold", "high"}, "/safety/confidence_threshold"},
		{[]string{"set", "safety.halt_file", ".git/HEAD"}, "/safety/halt_file"},
		{[]string{"set", "season_modes", `{"enabled":true,"current_mode":"lunch"}`}, `/season_modes/current_mode: mode "lunch" is not defined`},
		// A misspelt key validates, but ooda would ignore it.
		{[]string{"set", "safety.confidence_treshold", "0.5"}, `did you mean "confidence_threshold"?`},
		{[]string{"set", "domains.api", `{"primary_skill":"/x","wieght":1}`}, `not written: /domains/api/wieght: unknown key "wieght"`},
		{[]string{"level", "4"}, "is not a level"},
		{[]string{"auto-merge", "yes"}, "neither on nor off"},
		{[]string{"season", "lunch"}, `no mode "lunch" is defined (defined: launch, quiet, default); did you mean "launch"?`},
	} {
		code, _, stderr := run(t, dir, append([]string{"config"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, stderr, c.want)
		}
		if got := readFile(t, cfg); got != setFixture {
			t.Fatalf("%v changed config.json:\n%s", c.args, got)
		}
		if after := dirNames(t, dir); !slices.Equal(after, before) {
			t.Fatalf("%v left %v (before: %v)", c.args, after, before)
		}
	}
}

// The write replaces the file in one rename: no temporary file is left,
// the permissions are kept, and a symlinked config.json stays a link to
// the file that changed.
func TestConfigSetWritesAtomically(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	before := dirNames(t, dir)
	fi0, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, dir, "config", "auto-merge", "on"); code != 0 {
		t.Fatalf("auto-merge: %d %s", code, stderr)
	}
	if after := dirNames(t, dir); !slices.Equal(after, before) {
		t.Fatalf("left %v (before: %v)", after, before)
	}
	fi, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A new file renamed over the old one, not the old one rewritten in
	// place, where a cycle starting meanwhile could read half of it.
	if os.SameFile(fi0, fi) {
		t.Error("config.json was rewritten in place")
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 as before", fi.Mode().Perm())
	}
	if !strings.Contains(readFile(t, cfg), `"enable_auto_merge": true`) {
		t.Fatalf("config.json:\n%s", readFile(t, cfg))
	}

	// config.json as a link to a file kept elsewhere in the project.
	dir2 := t.TempDir()
	real := filepath.Join(dir2, "etc", "ooda.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte(setFixture), 0o644)
	link := filepath.Join(dir2, "config.json")
	if err := os.Symlink(filepath.Join("etc", "ooda.json"), link); err != nil {
		t.Skip("symlinks:", err)
	}
	if code, _, stderr := run(t, dir2, "config", "set", "project.name", "shop"); code != 0 {
		t.Fatalf("set through a link: %d %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("config.json is no longer a symlink: %v %v", fi, err)
	}
	if got := readFile(t, real); !strings.Contains(got, `"name": "shop"`) {
		t.Fatalf("the link's target was not updated:\n%s", got)
	}
	if names := dirNames(t, filepath.Join(dir2, "etc")); !slices.Equal(names, []string{"ooda.json"}) {
		t.Fatalf("etc/ holds %v", names)
	}
}

// Run from a subdirectory, get and set work on the project found
// upwards, as every other command does.
func TestConfigGetSetFromASubdirectory(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	sub := filepath.Join(dir, "src", "api")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	var out, errb bytes.Buffer
	if code := Main([]string{"config", "season", "launch"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("season: %d %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "(found from src/api)") {
		t.Errorf("stderr %q does not name the project", errb.String())
	}
	got := readFile(t, cfg)
	if !strings.Contains(got, `"enabled": true,`) || !strings.Contains(got, `"current_mode": "launch"`) {
		t.Fatalf("config.json:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(sub, "config.json")); err == nil {
		t.Fatal("a config.json was created in the subdirectory")
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"config", "get", "season_modes.current_mode"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("get: %d %s", code, errb.String())
	}
	if out.String() != "\"launch\"\n" {
		t.Errorf("get printed %q, want the JSON string", out.String())
	}
}

// get prints JSON; a key that is not set is exit 2 naming it (and its
// default); --json is one document.
func TestConfigGet(t *testing.T) {
	dir, _ := setupSetProject(t, setFixture)
	code, stdout, _ := run(t, dir, "config", "get", "season_modes.modes.launch")
	if code != 0 || stdout != "{\n  \"weight_overrides\": {\n    \"api\": 3.0\n  }\n}\n" {
		t.Errorf("get object: %d %q", code, stdout)
	}
	code, _, stderr := run(t, dir, "config", "get", "safety.max_chain_depth")
	if code != 2 || !strings.Contains(stderr, "safety.max_chain_depth is not set (its default is 3)") {
		t.Errorf("get unset: %d %q", code, stderr)
	}
	code, stdout, _ = run(t, dir, "--json", "config", "get", "/skills/~1x/builtin")
	var doc struct{ File, Key, Value string }
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Value != "noop" || doc.Key != "/skills/~1x/builtin" {
		t.Errorf("get --json: %d %q", code, stdout)
	}
	code, _, stderr = run(t, dir, "config", "get", "project.name.first")
	if code != 2 || !strings.Contains(stderr, `project.name is a string, not an object`) {
		t.Errorf("get through a string: %d %q", code, stderr)
	}
}

// Hostile keys: empty parts ("..", a leading or trailing dot, "//") and
// paths deeper than config.json may nest are refused before anything is
// read or written; a value that would nest too deep is refused by
// validation.
func TestConfigSetHostileKeys(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	deep := strings.Repeat("a.", 65) + "b"
	deep64 := strings.TrimSuffix(strings.Repeat("a.", 64), ".")
	for _, c := range []struct {
		key, value, want string
	}{
		{"safety..halt_file", "x", "has an empty part"},
		{"..", "x", "has an empty part"},
		{".safety", "x", "has an empty part"},
		{"safety.", "x", "has an empty part"},
		{"/safety//x", "1", "has an empty part"},
		{"", "1", "KEY is empty"},
		{deep, "1", "has 66 levels: config.json nests at most 64"},
		{deep64, "{}", "nest deeper than the limit of 64 levels"},
		{"safety.halt_file.x", "1", "safety.halt_file is a string, not an object"},
		{"team_notes.pager.9", "1", "array of 3 elements: there is no element 9"},
		{"team_notes.pager.-1", "1", `"-1" is not an index`},
	} {
		for _, cmd := range []string{"get", "set"} {
			args := []string{"config", cmd, c.key}
			if cmd == "set" {
				args = append(args, c.value)
			} else if c.value == "{}" {
				continue
			}
			code, _, stderr := run(t, dir, args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s %.40q: exit %d, stderr %.300q; want exit 2 with %q", cmd, c.key, code, stderr, c.want)
			}
			if len(stderr) > 2000 {
				t.Errorf("%s %.40q: a %d-byte message", cmd, c.key, len(stderr))
			}
		}
		if got := readFile(t, cfg); got != setFixture {
			t.Fatalf("%.40q changed config.json", c.key)
		}
	}
	// The deepest path config.json allows takes a scalar.
	if code, _, stderr := run(t, dir, "config", "set", deep64, "1"); code != 0 {
		t.Errorf("set at depth 64: %d %s", code, stderr)
	}
}

// set with the value already there writes nothing and says so.
func TestConfigSetUnchanged(t *testing.T) {
	dir, cfg := setupSetProject(t, setFixture)
	fi0, _ := os.Stat(cfg)
	code, stdout, _ := run(t, dir, "config", "set", "safety.confidence_threshold", "0.6")
	if code != 0 || !strings.Contains(stdout, "already set; nothing written") {
		t.Errorf("%d %q", code, stdout)
	}
	fi1, _ := os.Stat(cfg)
	if !os.SameFile(fi0, fi1) {
		t.Error("the file was replaced")
	}
	code, stdout, _ = run(t, dir, "--json", "config", "set", "project.name", "shop")
	var doc struct {
		Changed bool
		Changes []struct {
			Key      string
			Old, New json.RawMessage
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || !doc.Changed || len(doc.Changes) != 1 ||
		string(doc.Changes[0].Old) != `"app"` || string(doc.Changes[0].New) != `"shop"` {
		t.Errorf("--json: %d %q", code, stdout)
	}
}

// A config.json that is a symlink inside the project is written through
// (its target replaced, the link kept); one that leads out of the project
// — a link a merged change may plant — is not: ooda would otherwise
// rewrite whatever JSON file it points to.
func TestConfigSet_NeverWritesThroughALinkOutOfTheProject(t *testing.T) {
	const cfg = `{"domains": {"web": {"weight": 1, "primary_skill": "/scan-health"}}}`
	outside := filepath.Join(t.TempDir(), "package.json")
	if err := os.WriteFile(outside, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "config", "set", "mission", "hello")
	if code != 2 || !strings.Contains(stderr, "not written: it is a symlink to "+outside+", outside the project") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(outside); string(b) != cfg {
		t.Errorf("the file outside the project was changed:\n%s", b)
	}

	inner := t.TempDir()
	if err := os.MkdirAll(filepath.Join(inner, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "conf", "ooda.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("conf", "ooda.json"), filepath.Join(inner, "config.json")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, inner, "config", "set", "mission", "hello"); code != 0 {
		t.Fatalf("a link inside the project: exit %d\n%s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(inner, "conf", "ooda.json")); !strings.Contains(string(b), `"mission": "hello"`) {
		t.Errorf("the link's target was not written:\n%s", b)
	}
	if fi, err := os.Lstat(filepath.Join(inner, "config.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was not kept: %v", err)
	}
}
