// Package forge is the one interface through which ooda sees pull requests
// and issues (Step 1-B) and acts on them (the 4-C auto-merge): a GitHub REST
// provider, and a plain-git provider for projects without GitHub, where a
// pull request is a branch under a domain's branch_prefix.
//
// A forge that cannot be reached is never fatal to a cycle: Observe logs
// one warning and continues with empty data.
package forge

import (
	"context"
	"errors"
	"time"
)

// PR states.
const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed" // closed without being merged: rejected
)

// PR is a pull request as 1-B lists it.
type PR struct {
	Number   int       `json:"number"`
	Title    string    `json:"title"`
	HeadRef  string    `json:"head_ref"`
	State    string    `json:"state"`
	Draft    bool      `json:"draft"`
	Labels   []string  `json:"labels,omitempty"`
	Created  time.Time `json:"created_at,omitzero"`
	Merged   time.Time `json:"merged_at,omitzero"`
	Closed   time.Time `json:"closed_at,omitzero"`
	MergeSHA string    `json:"merge_commit_sha,omitempty"`
}

// Facts are the facts the auto-merge gate re-reads from the forge itself
// (4-C): it never trusts a skill's own account of its PR.
type Facts struct {
	Number  int    `json:"number"`
	State   string `json:"state"`
	Draft   bool   `json:"draft"`
	HeadRef string `json:"head_ref"`
	// HeadSHA is the commit the facts describe; MergeSquash merges only
	// that commit, so nothing pushed after the gate checked is merged.
	HeadSHA      string   `json:"head_sha"`
	Files        []string `json:"files"`
	ChangedFiles int      `json:"changed_files"`
	Additions    int      `json:"additions"`
	Deletions    int      `json:"deletions"`
}

// Issue is an open issue.
type Issue struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Labels []string `json:"labels,omitempty"`
}

// Status is the 1-B observation: open PRs, the most recently merged and
// closed PRs (5 each, newest first), and open issues.
type Status struct {
	Open   []PR    `json:"open"`
	Merged []PR    `json:"merged"`
	Closed []PR    `json:"closed"`
	Issues []Issue `json:"issues"`
}

// ErrSquashDisabled is returned by MergeSquash when the forge refuses a
// squash merge. The caller leaves the PR for a human and never falls back
// to a merge commit (that would break the one-parent revert of 4-C2).
var ErrSquashDisabled = errors.New("squash merge is not enabled on the repository")

// ErrHeadMoved is returned by MergeSquash when the PR's head is no longer
// the commit whose facts the gate checked.
var ErrHeadMoved = errors.New("the PR's head moved after its facts were read")

// ErrNotFound is returned for a PR the forge does not know.
var ErrNotFound = errors.New("not found")

// Forge is a source of pull requests and issues.
type Forge interface {
	// Name identifies the provider in logs ("github owner/repo", "git").
	Name() string
	// Status lists PRs and issues (1-B).
	Status(ctx context.Context) (Status, error)
	// Facts re-reads one PR's facts.
	Facts(ctx context.Context, number int) (Facts, error)
	// MergeSquash squash-merges a PR into the default branch. A non-empty
	// headSHA must still be the PR's head, else ErrHeadMoved.
	MergeSquash(ctx context.Context, number int, headSHA string) error
	// Reverted reports whether a merged PR's change was reverted on the
	// default branch since it was merged (the 2-B4 merge-and-hold check).
	Reverted(ctx context.Context, pr PR) (bool, error)
}

// Review is one review of a pull request.
type Review struct {
	ID    int64  `json:"id"`
	User  string `json:"user"`
	State string `json:"state"` // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED
	Body  string `json:"body"`
}

// Reviewer is implemented by forges that have pull-request reviews (the
// plain-git provider has none): 2-B2 summarises review feedback into memos.
type Reviewer interface {
	Reviews(ctx context.Context, number int) ([]Review, error)
}

// OpenLister is implemented by forges that can list the open PRs alone,
// more cheaply than a whole Status: what a cycle re-reads after its skill
// ran, to find a PR the skill opened without reporting it.
type OpenLister interface {
	OpenPRs(ctx context.Context) ([]PR, error)
}

var (
	_ OpenLister = (*GitHub)(nil)
	_ OpenLister = (*Git)(nil)
)
