package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// Branch names from the config reach git's argv: one that is an option,
// or that git would refuse, fails validation with its field named.
func TestBranchNamesMustBeGitBranchNames(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "config.json")
	for _, tt := range []struct{ raw, at string }{
		{`{"forge": {"provider": "git", "default_branch": "--output=/tmp/x"}}`, "/forge/default_branch"},
		{`{"forge": {"provider": "git", "default_branch": "a..b"}}`, "/forge/default_branch"},
		{`{"domains": {"d": {"primary_skill": "/a", "branch_prefix": "--output=/tmp/x/"}}}`, "/domains/d/branch_prefix"},
		{`{"domains": {"d": {"primary_skill": "/a", "branch_prefix": "auto scan/"}}}`, "/domains/d/branch_prefix"},
		{`{"implementation": {"branch_prefix": "-x/"}}`, "/implementation/branch_prefix"},
	} {
		writeConfig(t, path, tt.raw)
		ce := loadErrAt(t, path, root)
		if !hasIssue(ce, tt.at, "not usable as a git branch name") {
			t.Errorf("%s: want an issue at %s, got %v", tt.raw, tt.at, ce)
		}
	}
	for _, ok := range []string{
		`{"forge": {"provider": "git", "default_branch": "main"}, "domains": {"d": {"primary_skill": "/a", "branch_prefix": "auto/scan/"}}, "implementation": {"branch_prefix": "auto/impl"}}`,
	} {
		writeConfig(t, path, ok)
		if _, err := LoadProject(path, root); err != nil && strings.Contains(err.Error(), "branch") {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
