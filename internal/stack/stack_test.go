package stack

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// project writes files (path → content) under a new directory.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDetectTestCommands(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   map[string]string
		id      string
		test    string
		linters string
	}{
		{"go", map[string]string{"go.mod": "module x\n"}, "go", "go test ./...", "go vet,gofmt"},
		{"go workspace with golangci (not run by the lint built-in)", map[string]string{"go.work": "go 1.22\n", ".golangci.yml": ""}, "go", "go test ./...", "go vet,gofmt"},
		{"npm jest from devDependencies, no script", map[string]string{"package.json": `{"devDependencies": {"jest": "1"}}`}, "node", "npx --no-install jest", ""},
		{"pnpm vitest, no script: run once", map[string]string{"package.json": `{"devDependencies": {"vitest": "1"}}`, "pnpm-lock.yaml": ""}, "node", "pnpm exec vitest run", ""},
		{"yarn script", map[string]string{"package.json": `{"scripts": {"test": "mocha"}}`, "yarn.lock": ""}, "node", "yarn test", ""},
		{"packageManager field beats the lockfile", map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0", "scripts": {"test": "jest"}}`, "package-lock.json": "{}"}, "node", "pnpm test", ""},
		{"npm placeholder script and no framework", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, "node", "", ""},
		{"eslint config file", map[string]string{"package.json": `{"scripts": {"test": "node --test"}}`, "eslint.config.js": ""}, "node", "npm test", "eslint"},
		{"pytest from requirements", map[string]string{"requirements-dev.txt": "pytest==8\n"}, "python", "python3 -m pytest", ""},
		{"pytest from conftest", map[string]string{"setup.py": "", "tests/conftest.py": ""}, "python", "python3 -m pytest", ""},
		{"unittest, uv", map[string]string{"pyproject.toml": "[project]\nname='x'\n[tool.ruff]\n", "uv.lock": ""}, "python", "uv run python -m unittest discover", "ruff"},
		{"poetry pytest flake8", map[string]string{"pyproject.toml": "[tool.poetry.group.dev.dependencies]\npytest = '*'\nflake8 = '*'\n", "poetry.lock": ""}, "python", "poetry run python -m pytest", "flake8"},
		{"setup.cfg tool:pytest", map[string]string{"setup.cfg": "[tool:pytest]\n"}, "python", "python3 -m pytest", ""},
		{"rust", map[string]string{"Cargo.toml": ""}, "rust", "cargo test", "cargo clippy"},
		{"maven wrapper", map[string]string{"pom.xml": "", "mvnw": ""}, "maven", "./mvnw test", ""},
		{"maven", map[string]string{"pom.xml": ""}, "maven", "mvn test", ""},
		{"gradle wrapper", map[string]string{"settings.gradle": "", "gradlew": ""}, "gradle", "./gradlew test", ""},
		{"gradle", map[string]string{"build.gradle.kts": ""}, "gradle", "gradle test", ""},
		{"ruby rspec dir", map[string]string{"Gemfile": "", "spec/a_spec.rb": ""}, "ruby", "bundle exec rspec", ""},
		{"ruby rake", map[string]string{"Gemfile": "gem 'rubocop'\n", "Rakefile": ""}, "ruby", "bundle exec rake test", "rubocop"},
		{"ruby, nothing to run", map[string]string{"Gemfile": ""}, "ruby", "", ""},
		{"go before node", map[string]string{"go.mod": "module x\n", "package.json": `{"scripts": {"test": "jest"}}`}, "go", "go test ./...", "go vet,gofmt"},
		{"python before node", map[string]string{"requirements.txt": "", "package.json": `{"scripts": {"test": "jest"}}`}, "python", "python3 -m unittest discover", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Detect(project(t, c.files))
			s, ok := r.Primary()
			if !ok {
				t.Fatalf("no stack found: %+v", r)
			}
			var names []string
			for _, l := range s.Linters {
				names = append(names, l.Name)
			}
			if s.ID != c.id || s.TestCommand != c.test || strings.Join(names, ",") != c.linters {
				t.Errorf("got %s %q linters %q, want %s %q linters %q", s.ID, s.TestCommand, strings.Join(names, ","), c.id, c.test, c.linters)
			}
			if len(r.Notes) > 0 {
				t.Errorf("notes: %v", r.Notes)
			}
		})
	}
}

func TestDetectNothing(t *testing.T) {
	r := Detect(project(t, map[string]string{"README.md": "hello", "src/main.c": ""}))
	if _, ok := r.Primary(); ok || len(r.Stacks) != 0 {
		t.Errorf("found %+v", r.Stacks)
	}
}

// The others are kept, in Order, after the primary.
func TestDetectSeveral(t *testing.T) {
	r := Detect(project(t, map[string]string{"Gemfile": "", "package.json": "{}", "Cargo.toml": "", "pom.xml": ""}))
	var ids []string
	for _, s := range r.Stacks {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, ","); got != "rust,maven,ruby,node" {
		t.Errorf("order %s", got)
	}
}

// A manifest that is a named pipe, a symlink out of the project or a file
// larger than the limit is not read: detection neither blocks nor reads
// another file's bytes, and a note says which file and why.
func TestDetectHostileManifests(t *testing.T) {
	dir := project(t, map[string]string{"Gemfile": ""})
	outside := project(t, map[string]string{"pyproject.toml": "pytest ruff"})
	if err := syscall.Mkfifo(filepath.Join(dir, "package.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "pyproject.toml"), filepath.Join(dir, "pyproject.toml")); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(" ", maxManifest) + `gem "rspec"`
	if err := os.WriteFile(filepath.Join(dir, "Gemfile"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Detect(dir)
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"package.json not read: not a regular file (a named pipe)", "pyproject.toml not read:", "Gemfile not read:"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	for _, s := range r.Stacks {
		switch {
		case s.ID == "python" && (s.Runner == "pytest" || len(s.Linters) > 0):
			t.Errorf("read through the symlink out of the project: %+v", s)
		case s.ID == "ruby" && s.Runner == "rspec":
			t.Errorf("read the oversized Gemfile: %+v", s)
		case s.ID == "node" && s.TestCommand != "":
			t.Errorf("read the pipe: %+v", s)
		}
	}
}
