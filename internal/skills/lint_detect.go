package skills

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
)

// lintTool is one linter or formatter the lint skill runs.
type lintTool struct {
	name string   // as shown: "go vet"
	key  string   // in metric names: "go_vet"
	argv []string // never a shell string
	// findingExits are the exit codes, besides 0, with which the tool says
	// "I found something"; any other code means it could not do its work.
	findingExits []int
	parse        func(out []byte, projectDir string) []lintFinding
	// unit names what one finding counts in the summary ("file" for
	// gofmt, whose findings are files); empty counts findings.
	unit string
	// impact and effort are the RICE values of fixing one file's findings.
	impact, effort float64
	// missing, when the output contains it, says the tool is not
	// installed after all (cargo without clippy).
	missing string
	// keep filters findings (gofmt's walk enters testdata and vendor,
	// which `go vet ./...` skips).
	keep func(f lintFinding) bool
	// document is set for a tool whose output is one JSON document, read
	// as far as it goes when cut, rather than line by line.
	document bool
}

// lintSkip is a tool the stack calls for that is not there.
type lintSkip struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// lintMarkers are the files that say which stacks a project has, in the
// order the tools run.
var lintMarkers = []string{"go.mod", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "package.json", "Cargo.toml", "Gemfile"}

// lintDetect returns the tools to run in dir, and those the project's stack
// calls for but that are not installed. The stack is read from the files at
// the project root; the tools from PATH (absolute entries only, as a
// command skill's program is found) and, for project-local installs, from
// node_modules/.bin and a virtual environment in .venv or venv.
func lintDetect(dir string) ([]lintTool, []lintSkip) {
	var tools []lintTool
	var skips []lintSkip
	has := func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	}
	if has("go.mod") {
		if lintLookPath("go") != "" {
			tools = append(tools, lintTool{
				name: "go vet", key: "go_vet", argv: []string{"go", "vet", "./..."},
				findingExits: []int{1}, parse: lintParseLines("go vet"), impact: 2, effort: 1,
			})
		} else {
			skips = append(skips, lintSkip{"go vet", "go is not in PATH"})
		}
		if lintLookPath("gofmt") != "" {
			tools = append(tools, lintTool{
				name: "gofmt", key: "gofmt", argv: []string{"gofmt", "-l", "."},
				findingExits: []int{2}, parse: lintParseGofmt, unit: "file", impact: 0.5, effort: 0.5,
				keep: lintGoPackagePath,
			})
		} else {
			skips = append(skips, lintSkip{"gofmt", "gofmt is not in PATH"})
		}
	}
	if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has("requirements.txt") {
		if p := lintFind(dir, "ruff", ".venv/bin", "venv/bin"); p != "" {
			tools = append(tools, lintTool{
				name: "ruff", key: "ruff", argv: []string{p, "check", "--output-format=concise", "--no-fix", "."},
				findingExits: []int{1}, parse: lintParseLines("ruff"), impact: 1, effort: 1,
			})
		} else if p := lintFind(dir, "flake8", ".venv/bin", "venv/bin"); p != "" {
			tools = append(tools, lintTool{
				name: "flake8", key: "flake8",
				// flake8 does not skip virtual environments by itself: one
				// .venv would bury the project's findings under its
				// dependencies'.
				argv:         []string{p, "--extend-exclude=.venv,venv,.direnv,node_modules,build,dist", "."},
				findingExits: []int{1}, parse: lintParseLines("flake8"), impact: 1, effort: 1,
			})
		} else {
			skips = append(skips, lintSkip{"ruff", "neither ruff nor flake8 is in PATH, .venv/bin or venv/bin"})
		}
	}
	if has("package.json") {
		bin := filepath.Join(dir, "node_modules", ".bin", "eslint")
		switch {
		case !lintExecutable(bin):
			skips = append(skips, lintSkip{"eslint", "node_modules/.bin/eslint is not installed (npm install)"})
		case !lintESLintConfigured(dir):
			skips = append(skips, lintSkip{"eslint", "no ESLint configuration (eslint.config.js, .eslintrc.*, or eslintConfig in package.json)"})
		default:
			tools = append(tools, lintTool{
				name: "eslint", key: "eslint", argv: []string{bin, "--format", "json", "."},
				findingExits: []int{1}, parse: lintParseESLint, impact: 1, effort: 1, document: true,
			})
		}
	}
	if has("Cargo.toml") {
		if lintLookPath("cargo") != "" {
			tools = append(tools, lintTool{
				name: "clippy", key: "clippy", argv: []string{"cargo", "clippy", "-q", "--message-format=short", "--color", "never"},
				findingExits: []int{101}, parse: lintParseLines("clippy"), impact: 2, effort: 1,
				missing: "no such command: `clippy`",
			})
		} else {
			skips = append(skips, lintSkip{"clippy", "cargo is not in PATH"})
		}
	}
	if has("Gemfile") || has(".rubocop.yml") {
		if p := lintFind(dir, "rubocop", "bin"); p != "" {
			tools = append(tools, lintTool{
				name: "rubocop", key: "rubocop", argv: []string{p, "--format", "emacs", "--no-color"},
				findingExits: []int{1}, parse: lintParseLines("rubocop"), impact: 1, effort: 1,
			})
		} else {
			skips = append(skips, lintSkip{"rubocop", "rubocop is not in PATH or bin/"})
		}
	}
	return tools, skips
}

// lintLookPath finds name in PATH, skipping relative entries: a linter is
// never picked up from whatever directory happens to be current.
func lintLookPath(name string) string {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, name); lintExecutable(p) {
			return p
		}
	}
	return ""
}

// lintFind is name from PATH, else from one of the project's own
// directories (given relative to dir).
func lintFind(dir, name string, local ...string) string {
	if lintLookPath(name) != "" {
		return name
	}
	for _, l := range local {
		if p := filepath.Join(dir, l, name); lintExecutable(p) {
			return p
		}
	}
	return ""
}

func lintExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// lintESLintConfigured reports whether the project configures ESLint:
// without a configuration ESLint 9 exits 2, which is no finding of the
// project's.
func lintESLintConfigured(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "eslint.config.") || strings.HasPrefix(n, ".eslintrc") {
			return true
		}
	}
	// Read as every project file is: inside the project (no symlink out
	// of it), a regular file (a named pipe cannot hang the run), bounded.
	b, err := config.ReadProjectFile(dir, filepath.Join(dir, "package.json"), 1<<20)
	return err == nil && bytes.Contains(b, []byte(`"eslintConfig"`))
}

// lintGoPackagePath is false for a path the go command ignores: under
// testdata or vendor, or a directory whose name starts with "." or "_".
func lintGoPackagePath(f lintFinding) bool {
	parts := strings.Split(f.File, "/")
	for _, p := range parts[:len(parts)-1] {
		if p == "testdata" || p == "vendor" || strings.HasPrefix(p, ".") || strings.HasPrefix(p, "_") {
			return false
		}
	}
	return true
}

// lintInstalledMissing reports whether a tool's output says it is not
// installed after all.
func lintInstalledMissing(t lintTool, out []byte) bool {
	return t.missing != "" && bytes.Contains(out, []byte(t.missing))
}
