package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The warnings a cycle prints: one per command skill whose program is
// missing or not executable, naming the file, the skill's command, the
// path looked for and what to do; none for a skill that can start, a
// built-in, or the agent and judge commands (which are not skills).
func TestSkillExecutableWarnings(t *testing.T) {
	bin := t.TempDir()
	writeProgram(t, filepath.Join(bin, "ooda-test-tool"), 0o755)
	t.Setenv("PATH", bin)
	root, path := project(t, `{"domains": {"d": {"primary_skill": "/ok"}},
	  "skills": {
	    "/ok":      {"command": ["./scripts/ok.sh"]},
	    "/inpath":  {"command": ["ooda-test-tool"]},
	    "/builtin": {"builtin": "noop"},
	    "/gone":    {"command": ["./scripts/missing.sh"]},
	    "/plain":   {"command": ["scripts/plain.sh"]},
	    "/dir":     {"command": ["./scripts"]},
	    "/nopath":  {"command": ["ooda-no-such-program"]}
	  },
	  "agent": {"command": ["ooda-no-such-agent", "{skill}"]},
	  "judge": {"command": ["./judge.sh"]}}`)
	writeProgram(t, filepath.Join(root, "scripts", "ok.sh"), 0o755)
	writeProgram(t, filepath.Join(root, "scripts", "plain.sh"), 0o644)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	ws := cfg.SkillExecutableWarnings(path, root)
	got := map[string]string{}
	for _, w := range ws {
		if w.File != path {
			t.Errorf("%v: file %q, want %q", w, w.File, path)
		}
		got[w.Path] = w.String()
	}
	const after = " (a cycle that runs the skill fails until then)"
	for p, want := range map[string]string{
		"/skills/~1gone/command/0": path + `: /skills/~1gone/command/0: skill /gone: "./scripts/missing.sh" does not exist (looked for ` +
			filepath.Join(root, "scripts", "missing.sh") + `; a relative command is taken relative to the project root): write it there, or correct the path` + after,
		"/skills/~1plain/command/0": path + `: /skills/~1plain/command/0: skill /plain: "scripts/plain.sh" is not executable: make it so with ` +
			"`chmod +x " + filepath.Join(root, "scripts", "plain.sh") + "`" + after,
		"/skills/~1dir/command/0":    path + `: /skills/~1dir/command/0: skill /dir: "./scripts" is a directory, not a program file: name the program file itself` + after,
		"/skills/~1nopath/command/0": path + `: /skills/~1nopath/command/0: skill /nopath: "ooda-no-such-program" is not found in ooda's PATH: install it, or name the program by its path (e.g. "./scripts/ooda-no-such-program", relative to the project root)` + after,
	} {
		if got[p] != want {
			t.Errorf("%s:\n got  %s\n want %s", p, got[p], want)
		}
	}
	if len(ws) != 4 {
		t.Errorf("want 4 warnings, got %d: %v", len(ws), ws)
	}
	for _, w := range ws {
		if strings.Contains(w.String(), "\n") {
			t.Errorf("more than one line: %q", w)
		}
	}

	// Fixed, no warning.
	writeProgram(t, filepath.Join(root, "scripts", "missing.sh"), 0o755)
	if err := os.Chmod(filepath.Join(root, "scripts", "plain.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.SkillExecutableWarnings(path, root) {
		if strings.Contains(w.Path, "gone") || strings.Contains(w.Path, "plain") {
			t.Errorf("fixed, still warned: %v", w)
		}
	}
}
