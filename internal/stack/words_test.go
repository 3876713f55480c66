package stack

import (
	"regexp"
	"testing"
)

// TestManifestWords pins what each manifest word matches, now that the
// patterns are compiled on first use rather than at start.
func TestManifestWords(t *testing.T) {
	w := words()
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		text string
		want bool
	}{
		{"pytest", w.pytest, "pytest==8", true},
		{"pytest", w.pytest, "[tool.PyTest.ini_options]", true},
		{"pytest", w.pytest, "pytest-cov", true},
		{"pytest", w.pytest, "pytestify", false},
		{"pytest", w.pytest, "my_pytest", false},
		{"pytest", w.pytest, "PYTE\u017fT", true}, // (?i) folds the long s, as Go's regexp does
		{"ruff", w.ruff, "[tool.ruff]", true},
		{"ruff", w.ruff, "gruff", false},
		{"flake8", w.flake8, "Flake8>=7", true},
		{"flake8", w.flake8, "flake8_plugin", false},
		{"rspec", w.rspec, `gem "rspec"`, true},
		{"rspec", w.rspec, `gem 'rspec-rails'`, true},
		{"rspec", w.rspec, `gem 'rspec-core'`, true},
		{"rspec", w.rspec, `gem 'rspec-mocks'`, false},
		{"rspec", w.rspec, `gem rspec`, false},
		{"rubocop", w.rubocop, `gem 'rubocop'`, true},
		{"rubocop", w.rubocop, `gem 'rubocop-rails'`, false},
	} {
		if got := c.re.MatchString(c.text); got != c.want {
			t.Errorf("%s matches %q: %v, want %v", c.name, c.text, got, c.want)
		}
	}
	if words() != w {
		t.Error("the manifest words are compiled again on a second use")
	}
}
