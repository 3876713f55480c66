package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// NewPR is a pull request to open: the branch that holds the change (Head,
// already pushed where the forge can see it), the branch it is for (Base),
// and its text.
type NewPR struct {
	Head  string
	Base  string
	Title string
	Body  string
}

// Creator is implemented by the forges that can open a pull request (the
// built-in dev-cycle skill's last step). Both providers do: GitHub opens a
// draft over its REST API; for plain git the pushed or local branch under
// a branch prefix already is the pull request, and CreateDraft only
// confirms that the forge sees it as an open one.
type Creator interface {
	CreateDraft(ctx context.Context, p NewPR) (PR, error)
}

var (
	_ Creator = (*GitHub)(nil)
	_ Creator = (*Git)(nil)
)

// maxPRTitle and maxPRBody bound what is sent as a pull request's text:
// the text comes from the action queue, a file anyone may edit.
const (
	maxPRTitle = 200
	maxPRBody  = 60000
)

// CreateDraft opens a draft pull request with POST /repos/{owner}/{repo}/pulls.
// A repository that does not support drafts (GitHub answers 422 naming
// them) gets a ready pull request instead: the auto-merge gate still
// requires green tests and the size limits (docs/builtin-dev-cycle.md).
func (g *GitHub) CreateDraft(ctx context.Context, p NewPR) (PR, error) {
	if err := gitrepo.CheckBranchName(p.Head); err != nil {
		return PR{}, fmt.Errorf("github: new PR: head: %w", err)
	}
	if err := gitrepo.CheckBranchName(p.Base); err != nil {
		return PR{}, fmt.Errorf("github: new PR: base: %w", err)
	}
	title := clipRunes(commitLine(p.Title), maxPRTitle)
	if title == "" {
		title = p.Head
	}
	body := map[string]any{"title": title, "head": p.Head, "base": p.Base,
		"body": clipRunes(p.Body, maxPRBody), "draft": true}
	var res ghPull
	err := g.do(ctx, http.MethodPost, g.repoPath("pulls"), nil, body, &res)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(apiErr.Message), "draft") {
		body["draft"] = false
		res = ghPull{}
		err = g.do(ctx, http.MethodPost, g.repoPath("pulls"), nil, body, &res)
	}
	if err != nil {
		return PR{}, err
	}
	if res.Number <= 0 {
		return PR{}, fmt.Errorf("github: POST %s: the answer names no pull request number", g.repoPath("pulls"))
	}
	return res.pr(), nil
}

// CreateDraft finds the branch p.Head among the pull requests of the
// plain-git forge: a branch under a branch prefix is a pull request from
// the moment it exists, numbered BranchNumber(p.Head). It fails when the
// branch is not under a prefix, does not exist, or is not open (a branch
// with no commit of its own counts as merged).
func (g *Git) CreateDraft(ctx context.Context, p NewPR) (PR, error) {
	if err := gitrepo.CheckBranchName(p.Head); err != nil {
		return PR{}, fmt.Errorf("git forge: new PR: %w", err)
	}
	if !g.underPrefix(p.Head) {
		return PR{}, fmt.Errorf("git forge: branch %s is under none of the branch prefixes %v, so it is no pull request", p.Head, g.prefixes)
	}
	v, err := g.view(ctx)
	if err != nil {
		return PR{}, err
	}
	prs, err := g.classify(ctx, v)
	if err != nil {
		return PR{}, err
	}
	for _, pr := range prs {
		if pr.HeadRef != p.Head {
			continue
		}
		if pr.State != StateOpen {
			return PR{}, fmt.Errorf("git forge: branch %s is %s, not open", p.Head, pr.State)
		}
		return pr.PR, nil
	}
	return PR{}, fmt.Errorf("git forge: branch %s: %w", p.Head, ErrNotFound)
}

// clipRunes cuts s to at most n runes, "…" marking a cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
