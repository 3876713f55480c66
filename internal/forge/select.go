package forge

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/proc"
)

// Select builds the project's forge from config.forge: "github", "git",
// "none", or "auto" — GitHub when forge.repo is set or the origin remote is
// on GitHub (or on the configured GitHub Enterprise host), else plain git
// when the project is a git repository, else none. A nil Forge with a nil
// error means none.
func Select(ctx context.Context, cfg *config.Config, root string) (Forge, error) {
	fc := cfg.Forge
	provider := fc.Provider
	if provider == "" {
		provider = "auto"
	}
	if provider == "none" {
		return nil, nil
	}
	// Each answer from git costs a process, so each is asked only when
	// the choice may depend on it (a plain-git project never needs its
	// origin's URL, a GitHub one never needs to know it is a working
	// tree), and the two run side by side when both may be needed. In the
	// common case the repository's files answer both, as git would
	// (inspectLocal), and git is not asked at all.
	var isRepo func() bool
	needOrigin := fc.Repo == "" && provider != "git"
	origin := ""
	if provider == "github" && fc.Repo != "" {
		// Neither question is asked.
		isRepo = func() bool { return false }
	} else if answer, local := inspectLocal(root, lookGit()); answer != localUnknown {
		isRepo = func() bool { return answer == localFound }
		if answer == localFound {
			origin = local.origin
		}
		needOrigin = false
	} else if provider == "auto" && fc.Repo == "" {
		done := make(chan bool, 1)
		go func() { done <- gitOutput(ctx, root, "rev-parse", "--is-inside-work-tree") == "true" }()
		isRepo = sync.OnceValue(func() bool { return <-done })
		// Not left running whatever Select returns.
		defer isRepo()
	} else {
		isRepo = func() bool { return gitOutput(ctx, root, "rev-parse", "--is-inside-work-tree") == "true" }
	}
	if needOrigin {
		origin = gitOutput(ctx, root, "remote", "get-url", "origin")
	}
	repo := fc.Repo
	onGitHub := false
	if repo == "" {
		if r, ok := RepoFromRemote(origin); ok && hostMatches(origin, fc.APIURL) {
			repo, onGitHub = r, true
		}
	}
	if provider == "auto" {
		switch {
		case repo != "" && (fc.Repo != "" || onGitHub):
			provider = "github"
		case isRepo():
			provider = "git"
		default:
			return nil, nil
		}
	} else if provider == "git" && !isRepo() {
		return nil, fmt.Errorf("forge git: %s is not a git repository", root)
	}
	switch provider {
	case "github":
		if repo == "" {
			if r, ok := RepoFromRemote(origin); ok {
				repo = r
			} else {
				return nil, fmt.Errorf("forge github: set forge.repo (owner/name); the origin remote %q is not a GitHub repository", origin)
			}
		}
		// Checked before a token is looked up, which may run `gh`.
		if _, _, ok := splitRepo(fc.Repo); fc.Repo != "" && !ok {
			return nil, fmt.Errorf("forge.repo: %q is not \"owner/name\"", fc.Repo)
		}
		token, err := TokenForHost(fc.APIURL, nil, nil)
		if err != nil {
			return nil, err
		}
		gh, err := NewGitHub(GitHubOptions{Repo: repo, BaseURL: fc.APIURL, Token: token, UserAgent: "ooda",
			MaxResponseBytes: cfg.Safety.MaxReadBytes()})
		if err != nil {
			// Not `return NewGitHub(…)`: a nil *GitHub in a Forge is a
			// non-nil interface, and every cycle would call through it.
			return nil, err
		}
		return gh, nil
	case "git":
		var prefixes []string
		seen := map[string]bool{}
		for _, d := range cfg.Domains {
			if p := d.BranchPrefix; p != "" && !seen[p] {
				seen[p] = true
				prefixes = append(prefixes, p)
			}
		}
		if p := cfg.Implementation.BranchPrefix; p != "" && !seen[p] {
			prefixes = append(prefixes, p)
		}
		if fc.DefaultBranch != "" {
			if err := gitrepo.CheckBranchName(fc.DefaultBranch); err != nil {
				return nil, fmt.Errorf("forge.default_branch: %w", err)
			}
		}
		g, err := NewGit(GitOptions{Dir: root, DefaultBranch: fc.DefaultBranch, BranchPrefixes: prefixes,
			MaxOutput: cfg.Safety.MaxReadBytes()})
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	return nil, fmt.Errorf("forge: unknown provider %q", provider)
}

// hostMatches reports whether a remote URL points at github.com, or at the
// host of a GitHub Enterprise API URL.
func hostMatches(remote, apiURL string) bool {
	host := remoteHost(remote)
	if host == "" {
		return false
	}
	if host == "github.com" || strings.HasSuffix(host, ".github.com") {
		return true
	}
	if u, err := url.Parse(apiURL); err == nil && u.Hostname() != "" && u.Hostname() != "api.github.com" {
		return strings.EqualFold(u.Hostname(), host)
	}
	return false
}

func remoteHost(remote string) string {
	if i := strings.Index(remote, "://"); i >= 0 {
		u, err := url.Parse(remote)
		if err != nil {
			return ""
		}
		return strings.ToLower(u.Hostname())
	}
	at := strings.LastIndexByte(remote, '@')
	rest := remote[at+1:]
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 {
		return ""
	}
	return strings.ToLower(rest[:colon])
}

func gitOutput(ctx context.Context, dir string, args ...string) string {
	out, err := runOutput(ctx, dir, append([]string{"git", "-C", dir}, args...), gitEnv(), 30*time.Second)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// maxSmallOutput bounds the output of the commands whose answer is one
// line (a remote's URL, a token).
const maxSmallOutput = 1 << 20

// maxStderr bounds the diagnostics kept from a command; only their start
// is ever quoted.
const maxStderr = 64 << 10

// runOutput runs argv through the process runner and returns its standard
// output (standard error is kept apart, so diagnostics never mix in). The
// commands it runs answer in one line, so more than maxSmallOutput is an
// error, not memory spent.
func runOutput(ctx context.Context, dir string, argv, env []string, timeout time.Duration) ([]byte, error) {
	stdout := &gitrepo.CappedBuffer{Max: maxSmallOutput}
	stderr := &gitrepo.CappedBuffer{Max: maxStderr}
	res := proc.Exec{}.Run(ctx, proc.Spec{Argv: argv, Dir: dir, Env: env, Timeout: timeout, Output: stdout, Stderr: stderr, KillGrace: time.Second, Light: true})
	switch {
	case res.StartErr != nil:
		return nil, res.StartErr
	case stdout.Exceeded():
		return nil, fmt.Errorf("%s: %w", argv[0], stdout.Err())
	case !res.OK():
		return stdout.Bytes(), fmt.Errorf("%s: exit %d: %s", argv[0], res.ExitCode, clip(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// lookGit is the git that `git` in PATH starts; "" when there is none.
func lookGit() string {
	bin, err := proc.LookPath("git")
	if err != nil {
		return ""
	}
	return bin
}
