// Package stack recognises what a project is built with — Go, Node,
// Python, Rust, Java (Maven or Gradle), Ruby — from the files at its root,
// and derives the command that runs its tests and the linters it has.
//
// Detection only looks: it runs nothing, reads only files at the project
// root (and a few well-known ones below it), each through the project's
// bounded reader, so a hostile manifest (a named pipe, /dev/zero behind a
// symlink, a symlink out of the project, a gigabyte of JSON) costs nothing
// and is reported as a note instead of failing.
package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/ooda-loop/ooda/internal/config"
)

// Stack is one build system found in the project.
type Stack struct {
	// ID is the stack's key: go, rust, maven, gradle, python, ruby, node.
	ID string `json:"id"`
	// Name is how people call it: "Go", "Java (Maven)", …
	Name string `json:"name"`
	// Files are the files (relative, slash-separated) that showed it.
	Files []string `json:"files"`
	// Tool is the package manager or build tool when it matters to the
	// commands: npm, pnpm, yarn, bun; uv, poetry; bundler; mvnw, gradlew.
	Tool string `json:"tool,omitempty"`
	// Runner is the test framework recognised: go test, jest, vitest,
	// mocha, pytest, unittest, cargo test, rspec, rake (none for Maven
	// and Gradle, whose build runs whatever framework it declares).
	Runner string `json:"runner,omitempty"`
	// TestCommand runs the whole test suite from the project root, as a
	// shell command line; empty when no test setup was recognised.
	TestCommand string `json:"test_command,omitempty"`
	// Linters are the linters and formatters the project uses.
	Linters []Linter `json:"linters,omitempty"`
}

// Linter is a linter or formatter and a shell command that succeeds when
// it finds nothing.
type Linter struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// Result is everything Detect found.
type Result struct {
	// Stacks are in precedence order (Order): the first is the primary.
	Stacks []Stack `json:"stacks"`
	// Notes say what could not be read, and why.
	Notes []string `json:"notes,omitempty"`
}

// Primary is the stack init wires: the first in Order.
func (r Result) Primary() (Stack, bool) {
	if len(r.Stacks) == 0 {
		return Stack{}, false
	}
	return r.Stacks[0], true
}

// Order is the precedence between stacks found together. Build files of
// compiled languages define how the project is built, and a package.json
// or a requirements.txt beside them is most often tooling (a docs site, a
// formatter, a script); Node, the most common helper stack, comes last.
var Order = []string{"go", "rust", "maven", "gradle", "python", "ruby", "node"}

// maxManifest bounds each file read: manifests are small; anything larger
// is not one a person wrote.
const maxManifest = 1 << 20

// Detect looks at the project root and returns the stacks found, in
// Order. It never fails: what it cannot read becomes a note.
func Detect(root string) Result {
	d := &detector{root: root}
	var r Result
	for _, id := range Order {
		var s *Stack
		switch id {
		case "go":
			s = d.golang()
		case "rust":
			s = d.rust()
		case "maven":
			s = d.maven()
		case "gradle":
			s = d.gradle()
		case "python":
			s = d.python()
		case "ruby":
			s = d.ruby()
		case "node":
			s = d.node()
		}
		if s != nil {
			r.Stacks = append(r.Stacks, *s)
		}
	}
	r.Notes = d.notes
	return r
}

type detector struct {
	root  string
	notes []string
}

// isFile reports whether rel names something that is not a directory
// (a symlink counts: whether it may be read is read's business).
func (d *detector) isFile(rel string) bool {
	fi, err := os.Lstat(filepath.Join(d.root, rel))
	return err == nil && !fi.IsDir()
}

// isDir reports whether rel is a directory (not through a symlink).
func (d *detector) isDir(rel string) bool {
	fi, err := os.Lstat(filepath.Join(d.root, rel))
	return err == nil && fi.IsDir()
}

// present returns those of names that exist as files.
func (d *detector) present(names ...string) []string {
	var out []string
	for _, n := range names {
		if d.isFile(n) {
			out = append(out, n)
		}
	}
	return out
}

// read returns the content of rel, or "" when it is missing or must not
// be read (then a note says why).
func (d *detector) read(rel string) string {
	b, err := config.ReadProjectFile(d.root, rel, maxManifest)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.notes = append(d.notes, fmt.Sprintf("%s not read: %s", rel, strings.TrimPrefix(err.Error(), rel+": ")))
		}
		return ""
	}
	return string(b)
}

func (d *detector) golang() *Stack {
	files := d.present("go.mod", "go.work")
	if len(files) == 0 {
		return nil
	}
	s := &Stack{ID: "go", Name: "Go", Files: files, Runner: "go test", TestCommand: "go test ./..."}
	// go vet and gofmt come with every Go toolchain, and they are what
	// the lint built-in runs for Go (a .golangci.* file is not: the lint
	// built-in does not run golangci-lint, so naming it here would promise
	// a check no cycle makes, and a goal whose command needs a program the
	// machine may not have).
	s.Linters = []Linter{{"go vet", "go vet ./..."}, {"gofmt", `test -z "$(gofmt -l .)"`}}
	return s
}

func (d *detector) rust() *Stack {
	if !d.isFile("Cargo.toml") {
		return nil
	}
	// clippy ships with rustup's default profile.
	return &Stack{ID: "rust", Name: "Rust", Files: []string{"Cargo.toml"}, Tool: "cargo", Runner: "cargo test", TestCommand: "cargo test",
		Linters: []Linter{{"cargo clippy", "cargo clippy --quiet -- -D warnings"}}}
}

func (d *detector) maven() *Stack {
	if !d.isFile("pom.xml") {
		return nil
	}
	s := &Stack{ID: "maven", Name: "Java (Maven)", Files: []string{"pom.xml"}, TestCommand: "mvn test"}
	// The wrapper pins the Maven version the project is built with.
	if d.isFile("mvnw") {
		s.Files, s.Tool, s.TestCommand = append(s.Files, "mvnw"), "mvnw", "./mvnw test"
	}
	return s
}

func (d *detector) gradle() *Stack {
	files := d.present("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
	if len(files) == 0 {
		return nil
	}
	s := &Stack{ID: "gradle", Name: "Java (Gradle)", Files: files, TestCommand: "gradle test"}
	if d.isFile("gradlew") {
		s.Files, s.Tool, s.TestCommand = append(s.Files, "gradlew"), "gradlew", "./gradlew test"
	}
	return s
}

// manifestWords are what detection looks for in the manifests' text.
type manifestWords struct {
	pytest, ruff, flake8, rspec, rubocop *regexp.Regexp
}

// words compiles the manifest words on first use: only `ooda init` detects
// a stack, and every other ooda process would pay for them at start.
var words = sync.OnceValue(func() *manifestWords {
	return &manifestWords{
		pytest:  regexp.MustCompile(`(?i)\bpytest\b`),
		ruff:    regexp.MustCompile(`(?i)\bruff\b`),
		flake8:  regexp.MustCompile(`(?i)\bflake8\b`),
		rspec:   regexp.MustCompile(`['"]rspec(-rails|-core)?['"]`),
		rubocop: regexp.MustCompile(`['"]rubocop['"]`),
	}
})

func (d *detector) python() *Stack {
	files := d.present("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", "Pipfile")
	reqs, _ := filepath.Glob(filepath.Join(d.root, "requirements*.txt"))
	sort.Strings(reqs)
	for _, r := range reqs {
		if rel := filepath.Base(r); d.isFile(rel) {
			files = append(files, rel)
		}
	}
	if len(files) == 0 {
		return nil
	}
	s := &Stack{ID: "python", Name: "Python", Files: files}
	var text strings.Builder
	for _, f := range files {
		if f != "setup.py" {
			text.WriteString(d.read(f))
			text.WriteByte('\n')
		}
	}
	all := text.String()
	run := "python3 -m "
	switch {
	case d.isFile("uv.lock"):
		s.Tool, run = "uv", "uv run python -m "
	case d.isFile("poetry.lock"):
		s.Tool, run = "poetry", "poetry run python -m "
	}
	// pytest when anything names it (a dependency, its configuration
	// section) or a conftest.py exists; unittest, which needs nothing
	// installed, otherwise.
	if d.isFile("pytest.ini") || d.isFile("conftest.py") || d.isFile("tests/conftest.py") || words().pytest.MatchString(all) {
		s.Runner, s.TestCommand = "pytest", run+"pytest"
	} else {
		s.Runner, s.TestCommand = "unittest", run+"unittest discover"
	}
	if words().ruff.MatchString(all) || d.isFile("ruff.toml") || d.isFile(".ruff.toml") {
		s.Linters = append(s.Linters, Linter{"ruff", run + "ruff check ."})
	}
	if words().flake8.MatchString(all) || d.isFile(".flake8") {
		s.Linters = append(s.Linters, Linter{"flake8", run + "flake8 ."})
	}
	return s
}

func (d *detector) ruby() *Stack {
	if !d.isFile("Gemfile") {
		return nil
	}
	s := &Stack{ID: "ruby", Name: "Ruby", Files: []string{"Gemfile"}, Tool: "bundler"}
	gemfile := d.read("Gemfile")
	switch {
	case d.isFile(".rspec") || d.isDir("spec") || words().rspec.MatchString(gemfile):
		s.Runner, s.TestCommand = "rspec", "bundle exec rspec"
	case d.isFile("Rakefile") || d.isDir("test"):
		s.Runner, s.TestCommand = "rake", "bundle exec rake test"
	}
	if d.isFile(".rubocop.yml") || words().rubocop.MatchString(gemfile) {
		s.Linters = append(s.Linters, Linter{"rubocop", "bundle exec rubocop"})
	}
	return s
}

// packageJSON is the part of package.json detection reads.
type packageJSON struct {
	Scripts         map[string]any `json:"scripts"`
	Dependencies    map[string]any `json:"dependencies"`
	DevDependencies map[string]any `json:"devDependencies"`
	PackageManager  any            `json:"packageManager"`
}

// nodeRunners are the test frameworks recognised, in the order tried
// when several are installed.
var nodeRunners = []string{"vitest", "jest", "mocha"}

func (d *detector) node() *Stack {
	if !d.isFile("package.json") {
		return nil
	}
	s := &Stack{ID: "node", Name: "Node", Files: []string{"package.json"}, Tool: "npm"}
	// The packageManager field (corepack) names the manager outright;
	// else the lockfile shows which one installed the dependencies.
	var pkg packageJSON
	if raw := d.read("package.json"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &pkg); err != nil {
			d.notes = append(d.notes, fmt.Sprintf("package.json not read: not valid JSON (%v)", err))
			pkg = packageJSON{}
		}
	}
	pm, _ := pkg.PackageManager.(string)
	pm, _, _ = strings.Cut(pm, "@")
	switch pm {
	case "npm", "pnpm", "yarn", "bun":
		s.Tool = pm
	default:
		for _, l := range []struct{ file, tool string }{
			{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"},
			{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
		} {
			if d.isFile(l.file) {
				s.Tool = l.tool
				s.Files = append(s.Files, l.file)
				break
			}
		}
	}
	script, _ := pkg.Scripts["test"].(string)
	// `npm init` writes a test script that only fails.
	if strings.Contains(script, "no test specified") {
		script = ""
	}
	for _, r := range nodeRunners {
		if regexp.MustCompile(`\b` + r + `\b`).MatchString(script) {
			s.Runner = r
			break
		}
	}
	if s.Runner == "" {
		for _, r := range nodeRunners {
			if _, ok := pkg.DevDependencies[r]; ok {
				s.Runner = r
				break
			}
			if _, ok := pkg.Dependencies[r]; ok {
				s.Runner = r
				break
			}
		}
	}
	switch {
	case script != "":
		s.TestCommand = map[string]string{"npm": "npm test", "pnpm": "pnpm test", "yarn": "yarn test", "bun": "bun run test"}[s.Tool]
	case s.Runner != "":
		// No test script: the framework itself, once (vitest watches
		// unless told to run).
		cmd := s.Runner
		if cmd == "vitest" {
			cmd = "vitest run"
		}
		s.TestCommand = map[string]string{"npm": "npx --no-install ", "pnpm": "pnpm exec ", "yarn": "yarn ", "bun": "bunx "}[s.Tool] + cmd
	}
	_, dev := pkg.DevDependencies["eslint"]
	_, dep := pkg.Dependencies["eslint"]
	if cfg := d.present("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
		".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"); len(cfg) > 0 || dev || dep {
		s.Linters = append(s.Linters, Linter{"eslint", map[string]string{"npm": "npx --no-install ", "pnpm": "pnpm exec ", "yarn": "yarn ", "bun": "bunx "}[s.Tool] + "eslint ."})
	}
	return s
}
