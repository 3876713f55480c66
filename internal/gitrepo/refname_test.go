package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidSHA(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("a", 40), strings.Repeat("0123456789abcdef", 4), "0123456789ABCDEF0123456789abcdef01234567",
	} {
		if !ValidSHA(s) {
			t.Errorf("ValidSHA(%q) = false", s)
		}
	}
	for _, s := range []string{
		"", "--output=/tmp/x", "-o", "HEAD", "HEAD~1", "main", "abc1234", strings.Repeat("a", 39), strings.Repeat("a", 41),
		strings.Repeat("a", 63), strings.Repeat("a", 65), strings.Repeat("g", 40), strings.Repeat("a", 39) + "\n",
		" " + strings.Repeat("a", 39), strings.Repeat("a", 20) + ".." + strings.Repeat("a", 18),
	} {
		if ValidSHA(s) {
			t.Errorf("ValidSHA(%q) = true", s)
		}
	}
}

// branchCases are names with what CheckBranchName must say; every one is
// also put to git itself below.
var branchCases = []struct {
	name string
	ok   bool
}{
	{"main", true}, {"auto/fix/x-1", true}, {"a.b", true}, {"a-", true}, {"a/-b", true}, {"a@b", true},
	{"refs/heads/x", true}, {"é/ü", true}, {"auto/fix/--output=x", true},
	{"", false}, {"-x", false}, {"-", false}, {"--output=/tmp/x", false}, {"HEAD", false},
	{"a..b", false}, {"refs/../x", false}, {"x..lock", false},
	{".x", false}, {"a/.x", false}, {"x.lock", false}, {"a.lock/b", false}, {".lock", false}, {"x/.lock", false},
	{"/a", false}, {"a/", false}, {"a//b", false}, {"a.", false},
	{"a b", false}, {"a\tb", false}, {"a\nb", false}, {"a\x1b[31mb", false}, {"a\x7fb", false}, {"a\x00b", false},
	{"a~b", false}, {"a^b", false}, {"a:b", false}, {"a?b", false}, {"a*b", false}, {"a[b", false}, {`a\b`, false},
	{"a@{b", false}, {"@{-1}", false}, {"main@{1}", false},
	// Deliberately stricter than git: "@" is HEAD to every git command,
	// and names are kept in JSON, which holds only UTF-8.
	{"@", false}, {"a\x80b", false},
}

func TestCheckBranchName(t *testing.T) {
	for _, c := range branchCases {
		err := CheckBranchName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("CheckBranchName(%q) = %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "is not a branch name: ") {
			t.Errorf("CheckBranchName(%q) = %q, want the reason", c.name, err)
		}
		if ValidBranchName(c.name) != c.ok {
			t.Errorf("ValidBranchName(%q) != %v", c.name, c.ok)
		}
	}
}

// The in-process rules are git's: `git check-ref-format --branch` accepts
// exactly the same names, as themselves, except for the two deliberate
// differences.
func TestCheckBranchNameAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, c := range branchCases {
		if c.name == "@" || c.name == "a\x80b" || strings.ContainsRune(c.name, 0) {
			continue // stricter on purpose; a NUL cannot be an argument at all
		}
		cmd := exec.Command("git", "check-ref-format", "--branch", c.name)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		out, err := cmd.Output()
		gitOK := err == nil && strings.TrimSuffix(string(out), "\n") == c.name
		if gitOK != c.ok {
			t.Errorf("%q: git check-ref-format --branch accepts it: %v; CheckBranchName: %v", c.name, gitOK, c.ok)
		}
	}
}

func TestCheckRefName(t *testing.T) {
	for _, s := range []string{"refs/heads/main", "refs/remotes/origin/auto/x", "refs/ooda/closed/auto/x"} {
		if err := CheckRefName(s); err != nil {
			t.Errorf("CheckRefName(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"main", "", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/a b", "refs//x", "refs/heads/x\n"} {
		if err := CheckRefName(s); err == nil {
			t.Errorf("CheckRefName(%q) = nil", s)
		}
	}
}

// A checkpoint's commit is handed to git only once it is a full id of a
// commit in the repository: an option that would make git write a file is
// refused before git runs.
func TestResolveCommit(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	r, ok := Open(ctx, dir, nil)
	if !ok {
		t.Fatal("not a repository")
	}
	head := git("rev-parse", "HEAD")
	if got, err := r.ResolveCommit(ctx, head); err != nil || got != head {
		t.Errorf("ResolveCommit(HEAD's id) = %q, %v", got, err)
	}
	target := filepath.Join(t.TempDir(), "victim")
	for _, bad := range []string{"--output=" + target, "HEAD", head[:12], head + "..HEAD"} {
		if _, err := r.ResolveCommit(ctx, bad); err == nil || !strings.Contains(err.Error(), "is not a commit SHA") {
			t.Errorf("ResolveCommit(%q) = %v, want refused", bad, err)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("git wrote %s: %v", target, err)
	}
	blob := git("rev-parse", "HEAD:a.txt")
	missing := strings.Repeat("0", 40)
	for _, id := range []string{blob, missing} {
		if _, err := r.ResolveCommit(ctx, id); err == nil || !strings.Contains(err.Error(), "is not in the repository") {
			t.Errorf("ResolveCommit(%s) = %v, want not in the repository", id, err)
		}
	}
}

// A git command that prints more than MaxOutput fails with an error that
// names the limit, rather than collecting all of it.
func TestRunOutputIsCapped(t *testing.T) {
	dir, git := setup(t)
	ctx := context.Background()
	big := strings.Repeat("0123456789abcdef\n", 8<<10) // 136 KiB
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "big.txt")
	git("commit", "-q", "-m", "big")
	r, _ := Open(ctx, dir, nil)
	if out, err := r.Run(ctx, "show", "HEAD:big.txt"); err != nil || out != big {
		t.Fatalf("under the default limit: %d bytes, %v", len(out), err)
	}
	r.MaxOutput = 64 << 10
	out, err := r.Run(ctx, "show", "HEAD:big.txt")
	if !errors.Is(err, ErrOutputLimit) || !strings.Contains(err.Error(), "64 KiB") || out != "" {
		t.Fatalf("over the limit: %d bytes, %v", len(out), err)
	}
}

func TestCappedBuffer(t *testing.T) {
	c := &CappedBuffer{Max: 5}
	if n, err := c.Write([]byte("abc")); n != 3 || err != nil || c.Exceeded() {
		t.Fatalf("under: %d %v", n, err)
	}
	if n, err := c.Write([]byte("defg")); n != 4 || !errors.Is(err, ErrOutputLimit) || !c.Exceeded() || c.String() != "abcde" {
		t.Fatalf("over: %d %v %q", n, err, c.String())
	}
	if got := SizeText(16 << 20); got != "16 MiB" {
		t.Errorf("SizeText = %q", got)
	}
}
