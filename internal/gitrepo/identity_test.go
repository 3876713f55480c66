package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentityUnknown: with no identity (none in the environment or the
// configuration, and auto-detection off, so that the machine's host name
// cannot supply one), CheckIdentity and a state commit both fail with an
// error IdentityUnknown recognises; with one, CheckIdentity passes.
// Other errors are not taken for it.
func TestIdentityUnknown(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not a repository")
	}
	if err := r.CheckIdentity(ctx); err != nil {
		t.Fatalf("with GIT_AUTHOR_* and GIT_COMMITTER_* set: %v", err)
	}
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	git("config", "user.useConfigOnly", "true")
	err := r.CheckIdentity(ctx)
	if !IdentityUnknown(err) {
		t.Fatalf("no identity: CheckIdentity = %v, not recognised", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.CommitFiles(ctx, "evolve: cycle #1 -- x (futile)", []string{"a.txt"})
	if !IdentityUnknown(err) {
		t.Fatalf("no identity: the commit failed with %v, not recognised", err)
	}
	if strings.Contains(IdentityHelp, "\n") || !strings.Contains(IdentityHelp, "git config user.email") {
		t.Errorf("IdentityHelp is one line naming the fix: %q", IdentityHelp)
	}
	for _, other := range []error{nil, errors.New("identity unknown"), &Error{Args: []string{"commit"}, Code: 128, Output: "fatal: not a git repository"}} {
		if IdentityUnknown(other) {
			t.Errorf("IdentityUnknown(%v) = true", other)
		}
	}
}
