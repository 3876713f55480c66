package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProgram writes an executable (or, with mode 0o644, a plain) file.
func writeProgram(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
		t.Fatal(err)
	}
}

// issueAt returns the reason of the issue at path, or "".
func issueAt(issues []Issue, path string) string {
	for _, is := range issues {
		if is.Path == path {
			return is.Reason
		}
	}
	return ""
}

func TestExecutableIssuesNameTheSkillAndThePath(t *testing.T) {
	bin := t.TempDir()
	writeProgram(t, filepath.Join(bin, "ooda-test-tool"), 0o755)
	writeProgram(t, filepath.Join(bin, "ooda-test-plain"), 0o644)
	other := t.TempDir()
	writeProgram(t, filepath.Join(other, "ooda-test-private"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"relative/dir")

	root, path := project(t, `{"domains": {"d": {"primary_skill": "/ok"}},
	  "skills": {
	    "/ok":      {"command": ["./scripts/ok.sh", "--fast"]},
	    "/abs":     {"command": [`+quote(filepath.Join(other, "ooda-test-private"))+`]},
	    "/inpath":  {"command": ["ooda-test-tool"]},
	    "/ownpath": {"command": ["ooda-test-private"], "env": {"PATH": `+quote(other)+`}},
	    "/builtin": {"builtin": "noop"},
	    "/gone":    {"command": ["./scripts/missing.sh"]},
	    "/plain":   {"command": ["scripts/plain.sh"]},
	    "/dir":     {"command": ["./scripts"]},
	    "/nopath":  {"command": ["ooda-no-such-program"]},
	    "/noexec":  {"command": ["ooda-test-plain"]},
	    "/relpath": {"command": ["ok.sh"]}
	  },
	  "agent": {"command": ["ooda-no-such-agent", "{skill}"]},
	  "judge": {"command": ["./judge.sh"]}}`)
	writeProgram(t, filepath.Join(root, "scripts", "ok.sh"), 0o755)
	writeProgram(t, filepath.Join(root, "scripts", "plain.sh"), 0o644)
	// A relative PATH entry is never searched, as when a skill starts.
	writeProgram(t, filepath.Join(root, "relative", "dir", "ok.sh"), 0o755)
	// Relative commands are the project root's, not the working directory's.
	cwd := t.TempDir()
	writeProgram(t, filepath.Join(cwd, "scripts", "missing.sh"), 0o755)
	t.Chdir(cwd)

	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	issues := cfg.ExecutableIssues(root)
	for p, want := range map[string]string{
		"/skills/~1gone/command/0":    `skill /gone: "./scripts/missing.sh" does not exist (looked for ` + filepath.Join(root, "scripts", "missing.sh"),
		"/skills/~1plain/command/0":   `skill /plain: "scripts/plain.sh" is not executable: make it so with ` + "`chmod +x " + filepath.Join(root, "scripts", "plain.sh") + "`",
		"/skills/~1dir/command/0":     `skill /dir: "./scripts" is a directory, not a program file`,
		"/skills/~1nopath/command/0":  `skill /nopath: "ooda-no-such-program" is not found in ooda's PATH`,
		"/skills/~1noexec/command/0":  `skill /noexec: "ooda-test-plain" is not executable (` + filepath.Join(bin, "ooda-test-plain") + `)`,
		"/skills/~1relpath/command/0": `skill /relpath: "ok.sh" is not found in ooda's PATH`,
		"/agent/command/0":            `the agent command (runs every skill without an executor of its own): "ooda-no-such-agent" is not found`,
		"/judge/command/0":            `the judge command: "./judge.sh" does not exist`,
	} {
		if got := issueAt(issues, p); !strings.HasPrefix(got, want) {
			t.Errorf("%s: got %q, want it to start with %q", p, got, want)
		}
	}
	if len(issues) != 8 {
		t.Errorf("want 8 issues, got %d: %v", len(issues), issues)
	}

	// The skill's own PATH decides for a bare name.
	t.Setenv("PATH", other)
	if got := issueAt(cfg.ExecutableIssues(root), "/skills/~1inpath/command/0"); !strings.Contains(got, "not found in ooda's PATH") {
		t.Errorf("a program that left ooda's PATH is not reported: %q", got)
	}
	cfg.Skills["/ownpath"] = SkillSpec{Command: []string{"ooda-test-private"}, Env: map[string]string{"PATH": bin}}
	if got := issueAt(cfg.ExecutableIssues(root), "/skills/~1ownpath/command/0"); !strings.Contains(got, "not found in the PATH its env sets") {
		t.Errorf("the skill's own PATH is not the one searched: %q", got)
	}
}

// Loading does not check programs: a program installed later must not
// stop every command from reading the configuration.
func TestLoadingDoesNotRequirePrograms(t *testing.T) {
	root, path := project(t, `{"domains": {"d": {"primary_skill": "/s"}}, "skills": {"/s": {"command": ["./missing.sh"]}}}`)
	cfg, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.ExecutableIssues(root)) != 1 {
		t.Fatal("the missing program is not reported by ExecutableIssues")
	}
}
