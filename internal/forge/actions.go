package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// Actions is implemented by forges that run workflows: GitHub Actions.
// The deploy skill starts a workflow through it and follows the run it
// started to its end.
type Actions interface {
	// DefaultBranch is the branch a dispatched workflow runs on.
	DefaultBranch(ctx context.Context) (string, error)
	// DispatchWorkflow starts workflow (a file name such as "deploy.yml",
	// or a numeric id) on ref with inputs.
	DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]json.RawMessage) error
	// WorkflowRuns lists the newest runs of workflow started by a
	// dispatch on branch, created at or after since (zero: any time).
	WorkflowRuns(ctx context.Context, workflow, branch string, since time.Time) ([]WorkflowRun, error)
	// WorkflowRun re-reads one run.
	WorkflowRun(ctx context.Context, id int64) (WorkflowRun, error)
}

var _ Actions = (*GitHub)(nil)

// Workflow run statuses and the conclusion of a successful run.
const (
	RunCompleted = "completed"
	RunSuccess   = "success"
)

// WorkflowRun is one run of a workflow as the deploy skill follows it.
// Every string comes from the server, so each is checked or bounded
// before it is kept: a value that does not fit is dropped to "".
type WorkflowRun struct {
	ID        int64  `json:"id"`
	RunNumber int    `json:"run_number"`
	Event     string `json:"event"`
	// Status is queued, in_progress, completed (or waiting, requested,
	// pending); Conclusion is set once completed: success, failure,
	// cancelled, timed_out, …
	Status     string    `json:"status"`
	Conclusion string    `json:"conclusion"`
	HeadBranch string    `json:"head_branch"`
	HTMLURL    string    `json:"html_url"`
	Created    time.Time `json:"created_at"`
	Updated    time.Time `json:"updated_at"`
}

// Done reports whether the run has finished, whatever its conclusion.
func (r WorkflowRun) Done() bool { return r.Status == RunCompleted }

// Succeeded reports whether the run finished successfully.
func (r WorkflowRun) Succeeded() bool { return r.Done() && r.Conclusion == RunSuccess }

// maxRunWord bounds a status, a conclusion or an event name: GitHub's are
// single short words.
const maxRunWord = 40

// maxRunURL bounds a run's web address.
const maxRunURL = 500

// clean keeps only what a run's fields can honestly hold: statuses and
// events as short lower-case words, a branch git accepts, an http(s)
// address without credentials. A hostile server's escape sequences or
// megabyte strings never reach the state file or the terminal.
func (r WorkflowRun) clean() WorkflowRun {
	word := func(s string) string {
		if len(s) > maxRunWord {
			return ""
		}
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c == '_' || c == '-') {
				return ""
			}
		}
		return s
	}
	r.Event, r.Status, r.Conclusion = word(r.Event), word(r.Status), word(r.Conclusion)
	if !gitrepo.ValidBranchName(r.HeadBranch) {
		r.HeadBranch = ""
	}
	r.HTMLURL = WebURL(r.HTMLURL)
	return r
}

// WebURL returns s when it is an http(s) address without user
// information, spaces or control characters and at most 500 bytes long,
// else "". It is for addresses a server hands back to be shown.
func WebURL(s string) string {
	if s == "" || len(s) > maxRunURL {
		return ""
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f || c > 0x7e {
			return ""
		}
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	return s
}

// WorkflowName checks a deploy_workflow value and returns the name the
// API takes: a workflow file name ("deploy.yml"; a path under
// .github/workflows/ is accepted and shortened to it) or a numeric id.
// Anything else is an error, so the value cannot reach another API path.
func WorkflowName(s string) (string, error) {
	name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "./"), ".github/workflows/")
	if name == "" {
		return "", fmt.Errorf("%q is empty: name the workflow file, e.g. \"deploy.yml\"", s)
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil && id > 0 {
		return name, nil
	}
	if len(name) > 255 || strings.HasPrefix(name, ".") ||
		!(strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")) {
		return "", fmt.Errorf("%q is not a workflow file name (such as \"deploy.yml\", in .github/workflows/) or a workflow id", s)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", fmt.Errorf("%q is not a workflow file name (such as \"deploy.yml\", in .github/workflows/) or a workflow id", s)
		}
	}
	return name, nil
}

// DefaultBranch reads the repository's default branch.
func (g *GitHub) DefaultBranch(ctx context.Context) (string, error) {
	var repo struct {
		DefaultBranch string `json:"default_branch"`
	}
	path := "/repos/" + g.owner + "/" + g.name
	if err := g.getJSON(ctx, path, nil, &repo); err != nil {
		return "", err
	}
	if err := gitrepo.CheckBranchName(repo.DefaultBranch); err != nil {
		return "", fmt.Errorf("github: GET %s: default_branch: %w", path, err)
	}
	return repo.DefaultBranch, nil
}

// DispatchWorkflow starts a workflow_dispatch run. GitHub answers 204
// without saying which run it started; WorkflowRuns finds it.
func (g *GitHub) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]json.RawMessage) error {
	wf, err := WorkflowName(workflow)
	if err != nil {
		return fmt.Errorf("github: workflow %w", err)
	}
	if err := gitrepo.CheckBranchName(ref); err != nil {
		return fmt.Errorf("github: dispatch ref: %w", err)
	}
	body := map[string]any{"ref": ref}
	if len(inputs) > 0 {
		body["inputs"] = inputs
	}
	return g.do(ctx, http.MethodPost, g.repoPath("actions", "workflows", url.PathEscape(wf), "dispatches"), nil, body, nil)
}

// maxRunsListed is how many of the newest runs one listing reads: the run
// a dispatch started is among the newest.
const maxRunsListed = 30

// WorkflowRuns lists the newest workflow_dispatch runs of workflow on
// branch, created at or after since.
func (g *GitHub) WorkflowRuns(ctx context.Context, workflow, branch string, since time.Time) ([]WorkflowRun, error) {
	wf, err := WorkflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("github: workflow %w", err)
	}
	q := url.Values{"event": {"workflow_dispatch"}, "per_page": {strconv.Itoa(maxRunsListed)}}
	if branch != "" {
		q.Set("branch", branch)
	}
	if !since.IsZero() {
		q.Set("created", ">="+since.UTC().Format(time.RFC3339))
	}
	var page struct {
		Runs []WorkflowRun `json:"workflow_runs"`
	}
	if err := g.getJSON(ctx, g.repoPath("actions", "workflows", url.PathEscape(wf), "runs"), q, &page); err != nil {
		return nil, err
	}
	if len(page.Runs) > maxRunsListed {
		page.Runs = page.Runs[:maxRunsListed]
	}
	out := make([]WorkflowRun, 0, len(page.Runs))
	for _, r := range page.Runs {
		if r.ID > 0 {
			out = append(out, r.clean())
		}
	}
	return out, nil
}

// WorkflowRun re-reads one run.
func (g *GitHub) WorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	if id <= 0 {
		return WorkflowRun{}, fmt.Errorf("github: workflow run %d: %w", id, ErrNotFound)
	}
	var r WorkflowRun
	path := g.repoPath("actions", "runs", strconv.FormatInt(id, 10))
	if err := g.getJSON(ctx, path, nil, &r); err != nil {
		return WorkflowRun{}, err
	}
	if r.ID != id {
		return WorkflowRun{}, fmt.Errorf("github: GET %s: the answer describes run %d", path, r.ID)
	}
	return r.clean(), nil
}

// IssueURL is the web address of an issue: on github.com for the public
// API, on the server's own host for GitHub Enterprise (whose API lives
// under /api/v3 of that host).
func (g *GitHub) IssueURL(number int) string {
	host := g.base.Host
	scheme := g.base.Scheme
	if strings.EqualFold(host, "api.github.com") {
		host = "github.com"
	}
	return scheme + "://" + host + "/" + g.owner + "/" + g.name + "/issues/" + strconv.Itoa(number)
}
