package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ExecutableIssues reports every command the configuration would run whose
// program is missing or cannot be executed: each skill's command, the
// agent command and the judge command. The program is found as the engine
// finds it: a name with a "/" relative to the project root root (commands
// run there), a bare name in PATH — the command's own env PATH when it
// sets one, else ooda's — skipping relative PATH entries. Each issue's
// path is the command's first element (/skills/<name>/command/0).
//
// Loading does not check this: a program may be installed after the
// configuration is written, and a cycle reports a skill that cannot start
// as that skill's failure. `ooda config validate` does.
func (c *Config) ExecutableIssues(root string) []Issue {
	var issues []Issue
	check := func(argv []string, env map[string]string, what string, tokens ...string) {
		if len(argv) == 0 || argv[0] == "" {
			return
		}
		if reason, _ := executableProblem(argv[0], root, env); reason != "" {
			issues = append(issues, Issue{Path: pointer(append(tokens, "command", "0")), Reason: what + ": " + reason})
		}
	}
	for _, name := range c.SkillNames() {
		s := c.Skills[name]
		if s.Builtin != "" {
			continue
		}
		check(s.Command, s.Env, "skill /"+SkillKey(name), "skills", name)
	}
	check(c.Agent.Command, c.Agent.Env, "the agent command (runs every skill without an executor of its own)", "agent")
	check(c.Judge.Command, nil, "the judge command", "judge")
	return issues
}

// SkillExecutableWarnings are the command skills of ExecutableIssues, as
// the warnings a cycle prints before it starts, so that a missing script
// is known before its domain wins, not only then: one per skill, naming
// the skill, the command's JSON path in file, the path looked for and what
// to do. It makes stat calls only, in the project and the PATH
// directories: cheap enough for every cycle.
func (c *Config) SkillExecutableWarnings(file, root string) []Warning {
	var out []Warning
	for _, name := range c.SkillNames() {
		s := c.Skills[name]
		if s.Builtin != "" || len(s.Command) == 0 || s.Command[0] == "" {
			continue
		}
		reason, fix := executableProblem(s.Command[0], root, s.Env)
		if reason == "" {
			continue
		}
		if fix != "" {
			reason += ": " + fix
		}
		out = append(out, Warning{
			File: file, Path: pointer([]string{"skills", name, "command", "0"}),
			Reason: "skill /" + SkillKey(name) + ": " + reason + " (a cycle that runs the skill fails until then)",
		})
	}
	return out
}

// executableProblem says why prog cannot be run from root, or "" when it
// can; fix is what to do about it when the reason does not say so itself
// (`ooda config validate` shows the reason alone, a cycle's warning both).
func executableProblem(prog, root string, env map[string]string) (reason, fix string) {
	if strings.Contains(prog, "/") {
		p := prog
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("%q does not exist (looked for %s; a relative command is taken relative to the project root)", prog, p), "write it there, or correct the path"
		case err != nil:
			return fmt.Sprintf("%q cannot be checked: %v", prog, err), "make it readable, or correct the path"
		case !fi.Mode().IsRegular():
			return fmt.Sprintf("%q is %s, not a program file", prog, FileKind(fi.Mode())), "name the program file itself"
		case fi.Mode().Perm()&0o111 == 0:
			return fmt.Sprintf("%q is not executable: make it so with `chmod +x %s`", prog, p), ""
		}
		return "", ""
	}
	pathList, fromEnv := env["PATH"]
	if fromEnv {
		pathList = os.Expand(pathList, os.Getenv)
	} else {
		pathList = os.Getenv("PATH")
	}
	var notExec string
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, prog)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode().Perm()&0o111 != 0 {
			return "", ""
		}
		if notExec == "" {
			notExec = p
		}
	}
	where := "ooda's PATH"
	if fromEnv {
		where = "the PATH its env sets"
	}
	if notExec != "" {
		return fmt.Sprintf("%q is not executable (%s): make it so with `chmod +x %s`, or name the program by its path", prog, notExec, notExec), ""
	}
	return fmt.Sprintf("%q is not found in %s: install it, or name the program by its path (e.g. \"./scripts/%s\", relative to the project root)", prog, where, prog), ""
}
